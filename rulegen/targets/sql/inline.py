"""The expressions-only form for engines whose subqueries cannot read the enclosing row from a
WITH step or a derived table (MariaDB: "Unknown column"): each output is one expression, every
step column it reads replaced by its definition, in parentheses.

A column read several times is written several times (softmax reads every score twice, a
deep tree's node-id search reads its column once per arm), so the text can grow much faster
than the query, and the sum over trees becomes one chain the engine's parser recurses
through. Past ``MAX_CHARS`` characters or the dialect's ``max_inline_trees`` the fragment is
refused and the full query advised (MariaDB's default stack, measured: 400 float64 or 200
float32 trees of depth 6 inlined run, 600 and 300 fail with "Thread stack overrun"; a chain
of 151 levels, past one CASE, inlines to 4 MB, 300 levels to 45 MB).
Names are replaced only where they are quoted identifiers: a label or a comment that spells
one is left alone.
"""

from __future__ import annotations

import re

from rulegen.errors import UnsupportedFeatureError
from rulegen.targets.sql.dialects.base import Dialect
from rulegen.targets.sql.plan import Output, Step

MAX_CHARS = 4 << 20  # a few outputs still fit in the default max_allowed_packet (16 MiB)


def inline(steps: list[Step], output: Output, d: Dialect, n_trees: int) -> str:
    """``output.expr`` with every step column it reads (directly or not) written in place."""
    if n_trees > d.max_inline_trees:
        _refuse(output, d, f"{n_trees} trees summed in one expression (at most "
                           f"{d.max_inline_trees} stay within its parser's stack)")
    need = set(output.refs)
    live_steps: list[list] = []
    for step in reversed(steps):
        live = [c for c in step.cols if c.name in need]
        if live:
            live_steps.append(live)
            need = (need - {c.name for c in live}).union(*(c.refs for c in live))
    live_steps.reverse()
    q = d.quote("x")[0]
    token = re.compile(r"'(?:[^']|'')*'|/\*.*?\*/|" + re.escape(q) + "(?:[^" + re.escape(q) + "]|"
                       + re.escape(q * 2) + ")*" + re.escape(q), re.S)
    defs: dict[str, str] = {}  # name -> parenthesised text

    def one(m):
        t = m.group(0)
        if t[0] != q:
            return t  # a string or a comment
        return defs.get(t[1:-1].replace(q * 2, q), t)  # else a column of the table

    for live in live_steps:
        new = {}
        for c in live:
            text = token.sub(one, c.expr)
            if len(text) > MAX_CHARS:
                _refuse(output, d, f"more than {MAX_CHARS:,} characters")
            new[c.name] = f"({text})"
        defs.update(new)
    text = token.sub(one, output.expr)
    if len(text) > MAX_CHARS:
        _refuse(output, d, f"{len(text):,} characters")
    return text


def _refuse(output: Output, d: Dialect, why: str):
    raise UnsupportedFeatureError(
        "sql", f"the output {output.alias!r} as one expression in {d.title}, whose subqueries "
               f"cannot read the outer row from a WITH step, so the fragment inlines every step: "
               f"{why}; use the full query (with a key in passthrough) and join it to your table")
