"""The one jinja2 environment every target renders with.

Templates ship inside the wheel as ``rulegen/templates``; in a source checkout
they live at the top-level ``templates/`` folder (the product card fixes that
layout), so the loader falls back to it when the package copy is absent.
"""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2


def _loader() -> jinja2.BaseLoader:
    try:
        return jinja2.PackageLoader("rulegen", "templates")
    except ValueError:  # not installed from a wheel: use the checkout's folder
        here = Path(__file__).resolve().parents[2] / "templates"
        return jinja2.FileSystemLoader(str(here))


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    # No autoescape: escaping is per target and lives in rulegen/codegen/literals.py.
    return jinja2.Environment(
        loader=_loader(),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(template: str, context: dict) -> str:
    return environment().get_template(template).render(**context)
