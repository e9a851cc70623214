"""Steps of the SQL query: each a SELECT over the previous one that adds a few columns.

The query is a chain ``base -> [obliques] -> per batch of trees: prep steps, accumulate ->
aggregate -> link -> probabilities -> final SELECT``. A step carries forward exactly the
columns later steps still read (computed by a backward liveness pass), so nothing depends
on ``SELECT *`` and internal names never reach the output.

Why steps at all: SQLite and DuckDB cap expression depth at 1000, so the sum over 1,000
trees cannot be one expression; softmax and the class choice read each score several times.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rulegen.codegen.literals import sql_comment, sql_identifier


@dataclass
class Col:
    name: str  # unquoted
    expr: str
    refs: frozenset  # unquoted names of columns of the previous step it reads
    note: str = ""  # plain text, rendered as a comment


@dataclass
class Step:
    title: str
    cols: list[Col] = field(default_factory=list)


@dataclass
class Output:
    alias: str  # unquoted output column name
    expr: str
    refs: frozenset


@dataclass
class RenderedStep:
    name: str  # quoted CTE name
    title: str
    items: list[str]  # "expr AS name" (or a bare passthrough name) with comment lines


def q(name: str) -> str:
    return sql_identifier(name)


def render_steps(steps: list[Step], outputs: list[Output], originals: list[str], prefix: str,
                 comments: bool) -> tuple[list[RenderedStep], list[str]]:
    """Prune dead columns and steps, then lay out each step's SELECT list.

    ``originals`` are the table columns step 0 may pass through without defining them.
    Returns the steps and the final SELECT items."""
    pos = {n: i for i, n in enumerate(originals)}
    for step in steps:
        for c in step.cols:
            pos.setdefault(c.name, len(pos))
    need = set().union(*(o.refs for o in outputs)) if outputs else set()
    keep: list[tuple[Step, list[str], list[Col]]] = []
    for step in reversed(steps):
        live = [c for c in step.cols if c.name in need]
        defined = {c.name for c in step.cols}
        through = need - defined
        if not live:
            continue  # nothing of this step is read later: skip it entirely
        keep.append((step, sorted(through, key=pos.__getitem__), live))
        need = through.union(*(c.refs for c in live))
    keep.reverse()
    if need - set(originals):
        raise AssertionError(f"columns read but never defined: {sorted(need - set(originals))}")
    rendered = []
    for i, (step, through, live) in enumerate(keep):
        items = [q(n) for n in through]
        for c in live:
            text = f"{c.expr} AS {q(c.name)}"
            if comments and c.note:
                text = f"/* {sql_comment(c.note)} */\n{text}"
            items.append(text)
        rendered.append(RenderedStep(q(f"{prefix}s{i}"), sql_comment(step.title) if comments else "",
                                     items))
    finals = [f"{o.expr} AS {q(o.alias)}" if o.expr != q(o.alias) else o.expr for o in outputs]
    return rendered, finals

