"""The rules language: decision-tree models as if / else rules a person can read and edit.

    from rulegen.dsl import parse, dumps, check
    model = parse(text, source="model.rules")   # -> validated rulegen.ir.nodes.Model
    text = dumps(model)                           # canonical rules text
    flat = dumps(model, flat=True)                # one rule per leaf, for reading only
    for d in check(text, "model.rules"): print(d)

``docs/rules-language.md`` teaches the language; ``grammar/rules.lark`` is its grammar.
"""

from __future__ import annotations

from rulegen.dsl.check import Diagnostic, check
from rulegen.dsl.parser import parse
from rulegen.ir.nodes import Model


def looks_like_rules(text: str) -> bool:
    """Whether ``text`` is a rules file: its first line that is neither blank nor a
    comment starts with ``rulegen rules`` (for detecting a model file's format)."""
    for line in text.lstrip("\ufeff").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line.startswith("rulegen rules")
    return False


def dumps(model: Model, *, flat: bool = False) -> str:
    """The canonical rules text of ``model``; with ``flat=True`` the flat view (one
    ``IF ... THEN ...`` rule per leaf), which is for reading and is not parsed back."""
    if flat:
        from rulegen.dsl.printer import flat_dumps

        return flat_dumps(model)
    from rulegen.dsl.printer import dumps as _dumps

    return _dumps(model)


__all__ = ["Diagnostic", "check", "dumps", "looks_like_rules", "parse"]
