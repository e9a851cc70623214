"""What makes rulegen's estimators scikit-learn citizens without scikit-learn being needed:
tags (built only when a scikit-learn tool asks for them), scikit-learn's NotFittedError
class and DataConversionWarning when it is installed, its wording where its checks match
messages, and deprecated names served by a module ``__getattr__``.
"""

from __future__ import annotations

import functools
import importlib
import warnings

from rulegen.errors import LearnerError, NotFittedError


def estimator_tags(est):
    from sklearn.utils import InputTags, Tags, TargetTags
    return Tags(estimator_type=None, target_tags=TargetTags(required=True),
                input_tags=InputTags(allow_nan=True))


def classifier_tags(tags):
    from sklearn.utils import ClassifierTags
    tags.estimator_type = "classifier"
    tags.classifier_tags = ClassifierTags()
    return tags


def regressor_tags(tags, multi_output: bool):
    from sklearn.utils import RegressorTags
    tags.estimator_type = "regressor"
    tags.regressor_tags = RegressorTags()
    tags.target_tags.multi_output = multi_output
    return tags


@functools.cache
def _not_fitted_class() -> type:
    try:
        from sklearn.exceptions import NotFittedError as theirs
    except ImportError:
        return NotFittedError
    # scikit-learn's tools and checks catch their own class; rulegen's callers catch theirs
    return type("NotFittedError", (NotFittedError, theirs), {"__module__": __name__})


def not_fitted(est) -> NotFittedError:
    return _not_fitted_class()(f"this {type(est).__name__} is not fitted yet; call fit(X, y) first")


def check_not_sparse(X) -> None:
    if hasattr(X, "toarray") and hasattr(X, "nnz"):  # scipy.sparse, without importing it
        raise LearnerError("sparse input is not supported: pass a dense array "
                           "(X.toarray(); missing values as NaN)")


def check_y_given(est, y) -> None:
    if y is None:  # scikit-learn's words, which its checks match
        raise LearnerError(f"{type(est).__name__} requires y to be passed, but the target y is None")


def deprecated_names(module: str, renamed: dict):
    """A module ``__getattr__`` serving old class names (``renamed``: old -> new) with a
    DeprecationWarning: one public name per learner, the command line's, and old code runs."""

    def __getattr__(name):
        if name not in renamed:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{name} is deprecated: use {renamed[name]} (the same class)",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(module), renamed[name])
    return __getattr__


def column_vector_warning() -> None:
    """scikit-learn's DataConversionWarning for y of shape (n, 1) where (n,) is expected
    (a UserWarning without scikit-learn)."""
    try:
        from sklearn.exceptions import DataConversionWarning as category
    except ImportError:
        category = UserWarning
    warnings.warn("A column-vector y was passed when a 1d array was expected; y is read as "
                  "y.ravel()", category, stacklevel=4)
