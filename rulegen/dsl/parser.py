"""Reading rules files: the lark parser, loaded once, and the one entry point.

The grammar ships in the wheel as ``rulegen/grammar/rules.lark``; in a source checkout it
is the top-level ``grammar/rules.lark`` (as templates are, see rulegen/codegen/jinja.py).
The parser is LALR with lark's contextual lexer; the transformer runs inside the parse
(lark calls it at each reduction, from its own stack), so no parse tree is built and no
Python recursion grows with the depth of a tree. Each thread gets its own parser, since
the transformer holds the state of one parse.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from pathlib import Path

from lark import Lark
from lark.exceptions import UnexpectedInput

from rulegen.dsl import errors as _errors
from rulegen.dsl.build import ParseInfo, build
from rulegen.dsl.transform import RulesTransformer
from rulegen.errors import DSLSyntaxError, IRValidationError
from rulegen.ir.nodes import Model
from rulegen.ir.validate import validate

GRAMMAR = "rules.lark"

# Keywords the parser accepts where a name could also stand (a test's start, a surrogate):
# a feature called one of these is quoted, `inf`. Every other keyword is free as a name,
# because lark's contextual lexer only tries the terminals the parser can accept at that
# point; tests/test_dsl.py proves both halves for every keyword of the grammar.
RESERVED = frozenset({"inf", "not"})


def _open(**options) -> Lark:
    try:
        return Lark.open_from_package("rulegen", GRAMMAR, ("grammar",), **options)
    except OSError:  # a source checkout: the grammar sits at the top of the repository
        path = Path(__file__).resolve().parents[2] / "grammar" / GRAMMAR
        return Lark.open(str(path), **options)


class _Parser(threading.local):
    """A parser and its transformer, built on first use in each thread."""

    lark: Lark | None = None
    transformer: RulesTransformer | None = None
    comments: list

    def get(self) -> tuple[Lark, RulesTransformer, list]:
        if self.lark is None:
            self.comments = []
            self.transformer = RulesTransformer()
            self.lark = _open(parser="lalr", lexer="contextual", maybe_placeholders=True,
                              transformer=self.transformer,
                              lexer_callbacks={"COMMENT": lambda tok: self.comments.append(tok)})
        return self.lark, self.transformer, self.comments


_PARSER = _Parser()


@functools.lru_cache(maxsize=1)
def tree_parser() -> Lark:
    """A parser that builds lark's parse tree (with positions): for tools and for the test
    that every grammar rule is used. ``parse`` does not need it."""
    return _open(parser="lalr", lexer="contextual", maybe_placeholders=True,
                 propagate_positions=True)


def grammar_text() -> str:
    try:
        import pkgutil

        data = pkgutil.get_data("rulegen", f"grammar/{GRAMMAR}")
        if data is not None:
            return data.decode("utf-8")
    except OSError:
        pass
    return (Path(__file__).resolve().parents[2] / "grammar" / GRAMMAR).read_text("utf-8")


@dataclass
class Problem:
    """Something wrong with a rules file, with where it is."""

    kind: str  # "syntax" (the grammar), "meaning" (names, structure) or "ir" (validation)
    message: str
    line: int
    column: int


def _text(text: str) -> str:
    """The text to parse: a byte-order mark (a UTF-8 file saved by some editors) dropped."""
    return text[1:] if text.startswith("\ufeff") else text


def analyse(text: str) -> tuple[Model | None, ParseInfo | None, list[Problem]]:
    """Parse and validate: (model, positions, problems). With problems, model is None."""
    text = _text(text)
    lark, tf, comments = _PARSER.get()
    tf.__init__()
    comments.clear()
    try:
        lark.parse(text)
    except UnexpectedInput as e:
        message, line, column = _errors.describe(e, text, lark.parse)
        return None, None, [Problem("syntax", message, line, column)]
    model, info = build(tf, list(comments), text)
    if tf.errors:
        problems = [Problem("meaning", m, line, col) for m, line, col in tf.errors]
        problems.sort(key=lambda p: (p.line, p.column))
        return None, info, problems
    try:
        validate(model)
    except IRValidationError as e:
        line, column = info.locate(e.path)
        message = f"{e.message} ({e.path})"
        if info.default_base_score and e.path.endswith(".value"):
            message += (f"; without a base_score line the model has {model.n_raw} raw "
                        "output(s) (one per class): write e.g. 'base_score [0]' for one")
        return None, info, [Problem("ir", message, line, column)]
    return model, info, []


def raise_problem(p: Problem, text: str, source: str):
    """Raise a problem as the error the rest of rulegen expects: the first line is the
    whole message (the CLI prints only that); the source line and a caret follow."""
    ctx = _errors.context(text, p.line, p.column)
    if p.kind == "ir":
        where = f"{source}:{p.line}:{p.column}" if source else f"{p.line}:{p.column}"
        err = IRValidationError(where, p.message + ("\n" + ctx if ctx else ""))
    else:
        err = DSLSyntaxError(p.message + ("\n" + ctx if ctx else ""), p.line, p.column, source)
    err.line, err.column, err.plain = p.line, p.column, p.message
    raise err


def parse(text: str, source: str = "") -> Model:
    """The validated model a rules text describes; ``source`` (a file name) prefixes error
    messages. Raises DSLSyntaxError (the text, its names) or IRValidationError (what the
    model says), both with ``line`` and ``column``."""
    model, _, problems = analyse(text)
    if problems:
        raise_problem(problems[0], _text(text), source)
    return model
