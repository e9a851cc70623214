"""One exception hierarchy for everything rulegen reports to a user.

The CLI maps every ``RulegenError`` to exit code 2 and prints ``str(error)``
as a single line; anything else is an internal error (exit code 1).
"""

from __future__ import annotations


class RulegenError(Exception):
    """Base class: bad input or an unsupported request, never a bug."""


class IRValidationError(RulegenError):
    """An IR (from JSON, a learner or an importer) breaks a rule of the format.

    ``path`` is a JSON-path-like location such as ``trees[3].nodes[17].threshold``.
    """

    def __init__(self, path: str, message: str):
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)


class ModelFormatError(RulegenError):
    """A model file could not be read or its format was not recognised."""


class DataError(RulegenError):
    """Input data (CSV, arrays) does not fit what was asked of it."""


class DSLSyntaxError(RulegenError):
    """A rules file does not parse; carries the position for the message."""

    def __init__(self, message: str, line: int = 0, column: int = 0, source: str = ""):
        self.line = line
        self.column = column
        self.source = source
        where = f"{source}:{line}:{column}: " if source else f"{line}:{column}: "
        super().__init__(where + message)


class UnsupportedFeatureError(RulegenError):
    """A target (or dialect) cannot express a construct of the model."""

    def __init__(self, target: str, feature: str, source: str = ""):
        self.target = target
        self.feature = feature
        where = f"{source}: " if source else ""
        super().__init__(f"{where}target {target!r} cannot express {feature}")

    def at(self, source: str) -> UnsupportedFeatureError:
        """The same error naming the file it came from."""
        return UnsupportedFeatureError(self.target, self.feature, source) if source else self


class LearnerError(RulegenError, ValueError):
    """A learner was given parameters or data it cannot fit. Also a ``ValueError``, as
    scikit-learn's tools expect of an estimator's input errors (``check_estimator``,
    ``GridSearchCV``'s error_score)."""


class LearnerTypeError(LearnerError, TypeError):
    """X holds a value that is not a number at all (a dict, a list): scikit-learn's
    convention is a ``TypeError`` there."""


class NotFittedError(LearnerError, AttributeError):
    """predict (or another method) before fit. With scikit-learn installed the error raised
    is also scikit-learn's ``NotFittedError`` (see ``rulegen.learn.base.not_fitted``)."""


class ImportNote(UserWarning):
    """Not an error: an importer's one-line note on what the IR reproduces only within a measured
    bound (warned with ``warnings.warn``; the CLI prints it as a ``note:`` line)."""
