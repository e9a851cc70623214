"""The single table of targets: adding a target is one line here."""

from __future__ import annotations

from rulegen.errors import RulegenError
from rulegen.ir.nodes import Model
from rulegen.ir.validate import validate
from rulegen.targets.base import Target
from rulegen.targets.c.target import CTarget
from rulegen.targets.java.target import JavaTarget
from rulegen.targets.javascript import JavaScriptTarget
from rulegen.targets.go.target import GoTarget
from rulegen.targets.python.target import PythonTarget
from rulegen.targets.rust.target import RustTarget
from rulegen.targets.sql import SqlTarget

TARGETS: dict[str, type[Target]] = {
    "python": PythonTarget,
    "c": CTarget,
    "sql": SqlTarget,
    "java": JavaTarget,
    "javascript": JavaScriptTarget,
    "rust": RustTarget,
    "go": GoTarget,
}


def get_target(name: str) -> Target:
    try:
        return TARGETS[name]()
    except KeyError:
        raise RulegenError(
            f"unknown target {name!r}; choose one of: {', '.join(sorted(TARGETS))}"
        ) from None


def generate(model: Model, target: str, *, name: str = "model", **options) -> dict[str, str]:
    """Generate code for ``model``: {relative file name: text}."""
    validate(model)
    return get_target(target).generate(model, name=name, **options)
