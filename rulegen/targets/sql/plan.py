"""Steps of the SQL query: each a SELECT over the previous one that adds a few columns.

A step carries forward exactly the columns later steps still read (a backward liveness
pass), so nothing depends on ``SELECT *`` and internal names never reach the output.

Why steps at all: the engines cap expression depth (the sum over 1,000 trees cannot be one
expression), a deep tree advances a node id step by step, and softmax and the class choice
read each score several times. Where the engine copies a step's expressions into every
reference (SQLite's flattener, PostgreSQL's subquery pull-up) a step whose column is read
would otherwise be computed several times over, or that ends a run of accumulation steps,
gets the dialect's fence; every other step is left for the engine to inline, which lets it
skip columns the caller never selects. The choice weighs the work a fence saves (each
column's cost, in tree nodes a row visits, times the extra evaluations) against what the
fence costs the engine (``dialect.fence_cost``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rulegen.codegen.literals import sql_comment, sql_identifier


@dataclass
class Col:
    name: str  # unquoted
    expr: str
    refs: frozenset  # unquoted names of columns of earlier steps it reads
    note: str = ""  # plain text, rendered as a comment
    cost: float = 1.0  # work per row, in tree nodes visited, not counting the columns it reads


@dataclass
class Step:
    title: str
    cols: list[Col] = field(default_factory=list)
    fence: bool = False  # fence it even when no column is read twice


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
    fence: str  # "" or the dialect's fence


def render_steps(steps: list[Step], outputs: list[Output], originals: list[str], prefix: str,
                 comments: bool, fence: str, fence_cost=None, quote=sql_identifier,
                 fence_wrap: str = "") -> tuple[list[RenderedStep], list[str]]:
    """Prune dead columns and steps, choose the fences, and lay out each step's SELECT list.

    ``originals`` are the table columns step 0 may pass through without defining them;
    ``fence_cost(n)`` is what fencing a step of n columns costs, in the unit of Col.cost;
    ``quote`` is the engine's identifier quoting. An engine whose fence is an expression
    rather than a clause gives ``fence_wrap``, a format string each column of a fenced step
    is put into. Returns the steps and the final SELECT items."""
    q = quote
    pos = {n: i for i, n in enumerate(originals)}
    for step in steps:
        for c in step.cols:
            pos.setdefault(c.name, len(pos))
    need = set().union(*(o.refs for o in outputs)) if outputs else set()
    keep: list[tuple[Step, list[str], list[Col]]] = []
    for step in reversed(steps):
        live = [c for c in step.cols if c.name in need]
        through = need - {c.name for c in step.cols}
        if not live:
            continue  # nothing of this step is read later: skip it entirely
        keep.append((step, sorted(through, key=pos.__getitem__), live))
        need = through.union(*(c.refs for c in live))
    keep.reverse()
    if need - set(originals):
        raise AssertionError(f"columns read but never defined: {sorted(need - set(originals))}")
    # the work of a column with everything it reads inlined (an upper bound)
    total: dict[str, float] = {}
    for _, _, live in keep:
        for c in live:
            total[c.name] = c.cost + sum(_uses(q(r), c) * total.get(r, 0.0) for r in c.refs)
    # evaluations per row of each column, given the fences chosen below it
    evals: dict[str, float] = {}
    for o in outputs:
        for r in o.refs:
            evals[r] = evals.get(r, 0.0) + _uses(q(r), o)
    rendered = []
    for i in reversed(range(len(keep))):
        step, through, live = keep[i]
        saved = sum((evals.get(c.name, 1.0) - 1.0) * total[c.name] for c in live)
        fenced = bool(fence or fence_wrap) and (step.fence or saved > fence_cost(len(through) + len(live)))
        times = {c.name: (1.0 if fenced else evals.get(c.name, 1.0)) for c in live}
        if fenced:  # it reads each column it passes through once
            for n in through:
                evals[n] = 1.0
        for c in live:  # a later step may reuse a name (a0 := a0 / n): start its count afresh
            evals.pop(c.name, None)
        for c in live:
            for r in c.refs:
                evals[r] = evals.get(r, 0.0) + _uses(q(r), c) * times[c.name]
        items = [q(n) for n in through]
        for c in live:
            text = f"{fence_wrap.format(c.expr) if fenced and fence_wrap else c.expr} AS {q(c.name)}"
            if comments and c.note:
                text = f"/* {sql_comment(c.note)} */\n    {text}"
            items.append(text)
        rendered.append(RenderedStep(q(f"{prefix}s{i}"), sql_comment(step.title) if comments else "",
                                     items, fence if fenced else ""))
    rendered.reverse()
    finals = [f"{o.expr} AS {q(o.alias)}" if o.expr != q(o.alias) else o.expr for o in outputs]
    return rendered, finals


def _uses(quoted: str, reader) -> int:
    """How many times ``reader``'s expression names the column (a label that happens to
    contain the quoted name only overcounts, which can only add a fence)."""
    return max(1, reader.expr.count(quoted))
