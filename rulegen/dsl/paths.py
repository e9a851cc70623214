"""What a path through a tree says about each feature: the algebra behind ``check``
(unreachable branches, redundant tests) and the flat view (one rule per leaf).

A path state maps a feature to what the rows that reach a node can hold there:

- numeric: a closed float64 interval ``[lo, hi]`` of present values (float32 tests are
  first turned into the exact float64 test they equal, ``codegen.lower.float64_bound``;
  a strict bound becomes a closed one through ``math.nextafter``, so "empty" is exact);
- categorical: the set of codes still possible, and whether unseen categories are;
- both: whether the value can be missing here ("no", "maybe" or "yes").

A branch is reachable when present values can take it, or missing values can and the
split sends missing rows there (a default child; surrogates, which may go either way;
or every child with a non-zero blend weight). Oblique tests constrain nothing.
Everything walks with an explicit stack.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from rulegen.codegen.lower import float64_bound
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    IntervalTest,
    Model,
    MultiwayTest,
    NumericTest,
    Split,
    Surrogates,
    Tree,
)

INF = math.inf


class FState:
    """What the rows on a path can hold in one feature (immutable: change makes a copy)."""

    __slots__ = ("lo", "hi", "lo_why", "hi_why", "cats", "unseen", "missing")

    def __init__(self, lo=-INF, hi=INF, lo_why=None, hi_why=None, cats=None, unseen=True,
                 missing="maybe"):
        self.lo, self.hi, self.lo_why, self.hi_why = lo, hi, lo_why, hi_why
        self.cats, self.unseen, self.missing = cats, unseen, missing

    def copy(self, **kw) -> FState:
        s = FState(self.lo, self.hi, self.lo_why, self.hi_why, self.cats, self.unseen,
                   self.missing)
        for k, v in kw.items():
            setattr(s, k, v)
        return s


_FREE = FState()


def _upper(op: str, b: float) -> float | None:
    """The largest float with ``x op b`` (None: no float)."""
    if op == "<=":
        return b
    return None if b == -INF else math.nextafter(b, -INF)


def _lower(op: str, b: float) -> float | None:
    """The smallest float with ``not (x op b)`` (None: no float)."""
    if op == "<":
        return b
    return None if b == INF else math.nextafter(b, INF)


def missing_children(split: Split) -> set[int]:
    """The children a missing value can reach."""
    m = split.missing
    if isinstance(m, DefaultChild):
        return {m.child}
    if isinstance(m, Surrogates):
        return set(range(len(split.children))) if m.surrogates else {m.default}
    return {i for i, w in enumerate(m.weights) if w != 0}


def _codes(model: Model, f: int, s: FState) -> frozenset:
    return s.cats if s.cats is not None else frozenset(range(len(model.features[f].categories)))


def outcomes(model: Model, split: Split, state: dict) -> tuple[list, int | None]:
    """For each child, the path state there, or None if no row can get there; and the
    feature the test reads (None for oblique tests)."""
    t = split.test
    n = len(split.children)
    if not isinstance(t, (NumericTest, CategoricalTest, IntervalTest, MultiwayTest)):
        return [dict(state) for _ in range(n)], None
    f = t.feature
    s = state.get(f, _FREE)
    to_missing = missing_children(split) if s.missing != "no" else set()
    out = []
    for i in range(n):
        present = _present(model, split, i, s) if s.missing != "yes" else None
        if present is None and i not in to_missing:
            out.append(None)
            continue
        if present is None:
            new = s.copy(missing="yes")
        else:
            new = present.copy(missing="maybe" if i in to_missing else "no")
        child = dict(state)
        child[f] = new
        out.append(child)
    return out, f


def _present(model: Model, split: Split, i: int, s: FState) -> FState | None:
    """The state of present values that take child ``i``, or None if there are none."""
    t = split.test
    if isinstance(t, NumericTest):
        if i == 0:
            return _narrow(s, _bound(t.op, t.threshold, t.dtype, False), None)
        return _narrow(s, None, _bound(t.op, t.threshold, t.dtype, True))
    if isinstance(t, IntervalTest):
        upper = _bound(t.op, t.bounds[i], t.dtype, False) if i < len(t.bounds) else None
        lower = _bound(t.op, t.bounds[i - 1], t.dtype, True) if i > 0 else None
        return _narrow(s, upper, lower)
    allowed = _codes(model, t.feature, s)
    if isinstance(t, CategoricalTest):
        inset = frozenset(t.categories)
        codes = allowed & inset if i == 0 else allowed - inset
        takes_unseen = (split.unseen == 0) if i == 0 else (split.unseen in (None, 1))
    else:
        codes = allowed & frozenset(t.groups[i])
        takes_unseen = split.unseen == i
        if takes_unseen:  # listed codes no group holds go where unseen ones go
            held = frozenset(c for g in t.groups for c in g)
            codes |= allowed - held
    unseen = s.unseen and takes_unseen
    if not codes and not unseen:
        return None
    return s.copy(cats=frozenset(codes), unseen=unseen)


def _bound(op: str, t: float, dtype: str, negated: bool) -> tuple:
    """(float64 op, float64 bound, shown) for ``x op t`` in ``dtype``, or for its negation;
    ``shown`` is (op as a person reads it, t, dtype)."""
    op64, b64 = float64_bound(op, t, dtype)
    shown = ({"<": ">=", "<=": ">"}[op] if negated else op, t, dtype)
    return op64, b64, shown


def _narrow(s: FState, upper, lower) -> FState | None:
    """``s`` with present values also below ``upper`` and not below ``lower``."""
    lo, hi, lo_why, hi_why = s.lo, s.hi, s.lo_why, s.hi_why
    if upper is not None:
        u = _upper(upper[0], upper[1])
        if u is None:
            return None
        if u < hi:
            hi, hi_why = u, upper[2]
    if lower is not None:
        v = _lower(lower[0], lower[1])
        if v is None:
            return None
        if v > lo:
            lo, lo_why = v, lower[2]
    if lo > hi:
        return None
    return s.copy(lo=lo, hi=hi, lo_why=lo_why, hi_why=hi_why)


def steps(path) -> list[tuple[int, int]]:
    """The (split id, child index) steps of a path from ``explore``, root first."""
    out = []
    while path is not None:
        out.append((path[0], path[1]))
        path = path[2]
    return out[::-1]


def explore(model: Model, tree: Tree) -> Iterator[tuple]:
    """Walk the reachable part of a tree, depth first, children in order:
    ``("split", node id, state, [child state or None], feature)`` for a split and
    ``("leaf", node id, state, path)`` for a leaf, where ``steps(path)`` lists the
    ``(split id, child index)`` steps from the root. Unreachable subtrees are skipped."""
    stack: list = [(0, {}, None)]
    while stack:
        nid, state, path = stack.pop()
        node = tree.nodes[nid]
        if not isinstance(node, Split):
            yield ("leaf", nid, state, path)
            continue
        kids, f = outcomes(model, node, state)
        yield ("split", nid, state, kids, f)
        for i in reversed(range(len(kids))):
            if kids[i] is not None:
                stack.append((node.children[i], kids[i], (nid, i, path)))
