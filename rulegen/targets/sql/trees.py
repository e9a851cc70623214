"""Trees as SQL expressions: one nested CASE per tree and output, text O(nodes), a row's
work O(depth).

A tree no deeper than the dialect's ``max_case_depth`` is one expression whose leaves are
the values (a CASE per split, :mod:`rulegen.targets.sql.routing` says which child takes
which rows). A deeper tree advances a node id through steps instead: the first step walks
``max_case_depth`` levels from the root and yields the id of the node it stopped at; each
later step finds that node with a binary search over the ids it can be (``CASE WHEN n <
k``...) and walks on, and a last lookup turns leaf ids into values. So no expression nests
deeper than the engine allows (SQLite's parser stops near 18 levels): a depth-2,500 chain
is about 500 steps in SQLite and a dozen in DuckDB or PostgreSQL, its text linear in its
nodes. Everything is built with explicit stacks; the searches recurse only to their own
depth, which the nesting bound keeps small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rulegen.codegen.lower import split_tests
from rulegen.ir.nodes import Leaf, ObliqueTest, Split, Tree
from rulegen.targets.sql.dialects import Dialect
from rulegen.targets.sql.plan import Col
from rulegen.targets.sql.routing import Route, Router, oblique_key

MAX_INDENT = 12  # indentation stops growing here, so deep text stays linear in size


@dataclass
class TreeSQL:
    """What a tree gives the query: columns to compute first (one list per step, only for
    deep trees) and, per requested output, an expression and the columns it reads."""

    phases: list[list[Col]]
    exprs: list[tuple[str, frozenset]]
    cost: float  # tree nodes a row visits for one expression (plan.py weighs fences with it)


class TreeWriter:
    def __init__(self, router: Router, dialect: Dialect, inputs: list[str], obliques: dict[tuple, str]):
        """``inputs[f]``: unquoted column of feature f; ``obliques``: oblique_key -> unquoted
        column holding that test's 0 / 1 / NULL."""
        self.router, self.d, self.inputs, self.obliques = router, dialect, inputs, obliques
        self.nodes_written = 0

    # --- one tree ---------------------------------------------------------------------------

    def tree(self, tree: Tree, leaf_texts: list, name) -> TreeSQL:
        """``leaf_texts[k](leaf id)`` is output k's SQL at that leaf; ``name(s)`` makes an
        internal column name for the node-id steps of a deep tree."""
        routes = [self.router.route(n) if isinstance(n, Split) else None for n in tree.nodes]
        self.nodes_written += len(tree.nodes)
        refs = self._refs(tree)
        limit = self.d.max_case_depth
        depths = _depths(tree)
        leaves = [i for i, node in enumerate(tree.nodes) if isinstance(node, Leaf)]
        walk = sum(depths[i] for i in leaves) / len(leaves)
        if max(depths) <= limit:
            return TreeSQL([], [(self.expression(tree, routes, 0, text, indent=2, uniform=True), refs)
                                for text in leaf_texts], walk)
        phases, n_col = self._segments(tree, routes, name, refs, walk)
        exprs = [(search(self.d.quote(n_col), leaves, text, None, limit), frozenset({n_col})) for text in leaf_texts]
        return TreeSQL(phases, exprs, max(1.0, math.log2(len(leaves))))

    def _refs(self, tree: Tree) -> frozenset:
        return frozenset(self.obliques[oblique_key(t)] if isinstance(t, ObliqueTest)
                         else self.inputs[t.feature] for t in split_tests(tree))

    def _segments(self, tree: Tree, routes, name, refs, walk: float) -> tuple[list[list[Col]], str]:
        """Node-id steps: the first walks ``max_case_depth`` levels, each later one finds
        its start with a search of depth ``<= max_case_depth - walk``."""
        limit = self.d.max_case_depth
        walk = max(1, (limit - 1) // 2)
        frontier: list[int] = []

        def stop(node_id: int) -> str:
            frontier.append(node_id)
            return str(node_id)

        phases = [[Col(name("n0"), self.expression(tree, routes, 0, str, limit, stop, indent=2), refs,
                       "node reached", min(walk, limit))]]
        while frontier:
            starts, frontier = sorted(frontier), []
            prev = phases[-1][0].name

            def walk_from(node_id: int) -> str:
                return self.expression(tree, routes, node_id, str, walk, stop, indent=4)

            expr = search(self.d.quote(prev), starts, walk_from, self.d.quote(prev), limit - walk)
            phases.append([Col(name(f"n{len(phases)}"), expr, refs | {prev}, "node reached", limit)])
        return phases, phases[-1][0].name

    # --- the nested CASE ---------------------------------------------------------------------

    def expression(self, tree: Tree, routes: list[Route | None], root: int, leaf_text,
                   levels: int | None = None, cut_text=None, indent: int = 0,
                   uniform: bool = False) -> str:
        """Nested CASE for the subtree at ``root``. With ``levels``, a split that would open
        CASE number ``levels + 1`` is replaced by ``cut_text(node id)``; with ``uniform``, a
        subtree whose leaves all give the same text is that text (one pass over the tree:
        only for whole trees)."""

        same = _uniform(tree, leaf_text) if uniform else None

        def settle(node_id: int) -> tuple[int, Route | None]:
            # a split whose every present value goes the missing way is no split at all
            route = routes[node_id]
            while route is not None and not route.arms:
                node_id = tree.nodes[node_id].children[route.default]
                route = routes[node_id]
            return node_id, route

        def terminal(node_id: int, level: int) -> str | None:
            if same and same[node_id] is not None:  # every leaf below says the same: no test
                return same[node_id]
            node_id, route = settle(node_id)
            if route is None:
                return leaf_text(node_id)
            if levels is not None and level >= levels:
                return cut_text(node_id)
            return None

        out: list[str] = []
        stack: list = [(root, 0, indent)]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                out.append(item)
                continue
            node_id, level, ind = item
            text = terminal(node_id, level)
            if text is not None:
                out.append(text)
                continue
            node_id, route = settle(node_id)
            children = tree.nodes[node_id].children
            kids = [children[c] for _, c in route.arms] + [children[route.default]]
            ends = [terminal(k, level + 1) for k in kids]
            if all(e is not None for e in ends):  # the last split on every path: one line
                whens = " ".join(f"WHEN {c} THEN {e}" for (c, _), e in zip(route.arms, ends))
                out.append(f"CASE {whens} ELSE {ends[-1]} END")
                continue
            pad = "\n" + "  " * min(ind + 1, MAX_INDENT)
            parts: list = []
            for (cond, _), kid, end in zip(route.arms, kids, ends):
                if end is not None:
                    parts += [f"{pad}WHEN {cond} THEN ", end]
                elif self.d.parenthesize_then:
                    parts += [f"{pad}WHEN {cond} THEN (", (kid, level + 1, ind + 1), ")"]
                else:
                    parts += [f"{pad}WHEN {cond} THEN ", (kid, level + 1, ind + 1)]
            parts += [f"{pad}ELSE ", ends[-1] if ends[-1] is not None else (kids[-1], level + 1, ind + 1),
                      " END"]
            out.append("CASE")
            stack.extend(reversed(parts))
        return "".join(out)


def _uniform(tree: Tree, leaf_text) -> list[str | None]:
    """For each node, the text every leaf under it gives, or None where they differ (a
    reverse pass over ids: children come after parents)."""
    out: list[str | None] = [None] * len(tree.nodes)
    for node_id in range(len(tree.nodes) - 1, -1, -1):
        node = tree.nodes[node_id]
        if isinstance(node, Leaf):
            out[node_id] = leaf_text(node_id)
        else:
            texts = {out[c] for c in node.children}
            out[node_id] = texts.pop() if len(texts) == 1 else None
    return out


def _depths(tree: Tree) -> list[int]:
    d = [0] * len(tree.nodes)
    for node_id, node in enumerate(tree.nodes):  # children have larger ids than parents
        if isinstance(node, Split):
            for child in node.children:
                d[child] = d[node_id] + 1
    return d


def search(col: str, keys: list[int], item, fallback: str | None, levels: int) -> str:
    """A CASE over the integer column ``col`` giving ``item(k)`` where ``col = k`` for each k
    of the sorted ``keys``; other values give ``fallback`` (None: ``col`` is always a key).
    Binary while it fits in ``levels`` nested CASEs, wider otherwise."""
    fan = 2
    while _levels(len(keys), fan) + (fallback is not None) > levels and fan < len(keys):
        fan *= 2
    return _search(col, keys, item, fallback, fan)


def _levels(n: int, fan: int) -> int:
    levels = 0
    while n > 1:
        n = -(-n // fan)
        levels += 1
    return levels


def _search(col: str, keys: list[int], item, fallback: str | None, fan: int) -> str:
    if not keys:
        return fallback
    if len(keys) == 1:
        if fallback is None:
            return item(keys[0])
        return f"CASE WHEN {col} = {keys[0]} THEN {item(keys[0])} ELSE {fallback} END"
    size = -(-len(keys) // fan)
    groups = [keys[i:i + size] for i in range(0, len(keys), size)]
    arms = [f"WHEN {col} < {g[-1] + 1} THEN {_search(col, g, item, fallback, fan)}" for g in groups[:-1]]
    return f"CASE {' '.join(arms)} ELSE {_search(col, groups[-1], item, fallback, fan)} END"
