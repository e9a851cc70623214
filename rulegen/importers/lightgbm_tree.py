"""LightGBM tree -> IR tree, reproducing LightGBM's prediction exactly for every float64 input.

What LightGBM 4.x does with one dense float64 row (``c_api.cpp`` RowPairFunctionFromDenseMatric,
``tree.h`` NumericalDecision / CategoricalDecision):

* every value with ``|x| <= kZeroThreshold`` becomes ``0.0`` before any tree sees it
  (``kZeroThreshold = 1e-35f``, a float literal: the double ``float32(1e-35)``), NaN is kept;
* numeric split: NaN becomes 0.0 unless missing_type is NaN; then missing_type Zero sends
  zeros (``|x| <= kZeroThreshold``) and missing_type NaN sends NaN the default way; everything
  else goes left iff ``x <= threshold``;
* categorical split: NaN goes right, ``int(x)`` (truncation) < 0 goes right, otherwise left iff
  bit ``int(x)`` is set in the node's bitset (categories past the bitset go right).

So every split sends a *set* of floats (a union of closed float64 intervals) and possibly NaN
left. :func:`compile_tree` turns each split into IR ``NumericTest`` splits on interval boundaries.
It keeps, per feature, the set of values that can still reach the IR node it is building; a split
that is decided on that set disappears, and a split whose left set is not a half-line (e.g.
missing_type Zero with default right and a threshold above zero: left is
``x < -kZeroThreshold or kZeroThreshold < x <= t``) becomes a chain of ``NumericTest`` splits
with a pruned copy of a subtree per piece. In ``"category"`` mode categorical splits become a
``CategoricalTest`` instead (exact for integer codes; see ``lightgbm.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rulegen.errors import UnsupportedFeatureError
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Leaf,
    NumericTest,
    Split,
    Tree,
)

K_ZERO = float(np.float32(1e-35))  # LightGBM kZeroThreshold = 1e-35f, widened to double
INF = math.inf
MISSING_NONE, MISSING_ZERO, MISSING_NAN = 0, 1, 2
FULL = ((-INF, INF),)

Intervals = tuple[tuple[float, float], ...]  # sorted, disjoint, closed float64 intervals


def _up(x: float) -> float:
    return math.nextafter(x, INF) + 0.0


def _down(x: float) -> float:
    return math.nextafter(x, -INF) + 0.0


def union(a: Intervals, b: Intervals) -> Intervals:
    out: list[list[float]] = []
    for lo, hi in sorted(a + b):
        if out and lo <= _up(out[-1][1]):
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


def intersect(a: Intervals, b: Intervals) -> Intervals:
    out = []
    for lo1, hi1 in a:
        for lo2, hi2 in b:
            lo, hi = max(lo1, lo2), min(hi1, hi2)
            if lo <= hi:
                out.append((lo, hi))
    return tuple(sorted(out))


def complement(a: Intervals) -> Intervals:
    out, start = [], -INF
    for lo, hi in a:
        if lo > start:
            out.append((start, _down(lo)))
        if hi == INF:
            return tuple(out)
        start = _up(hi)
    out.append((start, INF))
    return tuple(out)


def numeric_left(threshold: float, missing_type: int, default_left: bool) -> tuple[Intervals, bool]:
    """(floats that go left, whether NaN goes left) for a LightGBM numeric split."""
    t = threshold + 0.0
    band = ((-K_ZERO, K_ZERO),)
    zero_left = default_left if missing_type == MISSING_ZERO else 0.0 <= t
    nan_left = default_left if missing_type != MISSING_NONE else 0.0 <= t
    below = intersect(((-INF, t),), complement(band))
    return union(below, band if zero_left else ()), nan_left


def categorical_left(codes) -> tuple[Intervals, bool]:
    """(floats that go left, NaN goes left) for a LightGBM categorical split on bitset ``codes``:
    ``int(x) == k`` holds on (-1, 1) for k = 0 and on [k, k + 1) above."""
    pieces = tuple((_up(-1.0) if k == 0 else float(k), _down(float(k + 1))) for k in codes)
    return union(pieces, ()), False


@dataclass(frozen=True)
class LgbTree:
    """One parsed ``Tree=`` section (node ids as LightGBM writes them: leaves are ``~leaf``)."""

    split_feature: tuple[int, ...]
    threshold: tuple[float, ...]
    decision_type: tuple[int, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    leaf_value: tuple[float, ...]
    cat_sets: tuple[tuple[int, ...], ...]  # categories (set bits) of each categorical bitset
    leaf_count: tuple[int, ...] | None = None
    internal_count: tuple[int, ...] | None = None


def _runs(dom: Intervals, left: Intervals) -> list[tuple[bool, Intervals]]:
    """The reachable values cut into maximal runs of consecutive pieces going the same way."""
    pieces = [(iv, True) for iv in intersect(dom, left)]
    pieces += [(iv, False) for iv in intersect(dom, complement(left))]
    runs: list[tuple[bool, Intervals]] = []
    for iv, side in sorted(pieces):
        if runs and runs[-1][0] == side:
            runs[-1] = (side, runs[-1][1] + (iv,))
        else:
            runs.append((side, (iv,)))
    return runs


def _boundary(hi: float, next_lo: float) -> tuple[str, float]:
    """A test that splits values <= hi from values >= next_lo (nothing reachable in between):
    ``x <= hi``, or ``x < next_lo`` when that number is shorter to write."""
    if len(repr(next_lo)) < len(repr(hi)):
        return "<", next_lo
    return "<=", hi


def compile_tree(t: LgbTree, output: int | None, categorical_codes: dict[int, tuple],
                 max_nodes: int) -> Tree:
    """IR tree for ``t``. ``categorical_codes`` names the features kept categorical
    (``CategoricalTest`` on their codes); every other split is compiled to numeric tests."""
    if not t.split_feature:
        return Tree(nodes=(Leaf((t.leaf_value[0],), samples=_count(t.leaf_count, 0)),), output=output)
    nodes: list = []
    # work item: (parent IR id or -1, child position, LightGBM node, {feature: (Intervals, nan)})
    stack: list[tuple[int, int, int, dict]] = [(-1, 0, 0, {})]
    pending: dict[int, list] = {}
    while stack:
        parent, pos, node, dom = stack.pop()
        while True:  # skip splits that are decided on the reachable values
            if node < 0:
                break
            f = t.split_feature[node]
            dtype = t.decision_type[node]
            if dtype & 1 and f in categorical_codes:
                break
            if dtype & 1:
                left, nan_left = categorical_left(t.cat_sets[int(t.threshold[node])])
            else:
                left, nan_left = numeric_left(t.threshold[node], (dtype >> 2) & 3, bool(dtype & 2))
            reals, nan = dom.get(f, (FULL, True))
            runs = _runs(reals, left)
            sides = {side for side, _ in runs} | ({nan_left} if nan else set())
            if len(sides) == 2:
                break
            node = t.left[node] if sides == {True} else t.right[node]
        me = len(nodes)
        if me >= max_nodes:
            raise UnsupportedFeatureError(
                "rulegen IR", f"this LightGBM tree exactly (it needs more than {max_nodes} IR nodes; "
                "raise max_nodes)")
        if parent >= 0:
            pending[parent][pos] = me
        if node < 0:
            nodes.append(Leaf((t.leaf_value[~node],), samples=_count(t.leaf_count, ~node)))
            continue
        samples = _count(t.internal_count, node)
        if dtype & 1 and f in categorical_codes:
            nodes.append(("split", CategoricalTest(f, t.cat_sets[int(t.threshold[node])]),
                          DefaultChild(1), 1, samples))
            pending[me] = [None, None]
            stack.append((me, 1, t.right[node], dom))
            stack.append((me, 0, t.left[node], dom))
            continue
        # first boundary: runs[0] on one side of the test, the rest (and maybe NaN) on the other
        side0, run0 = runs[0]  # (reals cannot be empty here: NaN alone goes one way)
        rest = tuple(iv for _, r in runs[1:] for iv in r)
        op, thr = _boundary(run0[-1][1], rest[0][0]) if rest else ("<=", INF)
        nan_first = nan and nan_left == side0
        dom0 = {**dom, f: (run0, nan_first)}
        dom1 = {**dom, f: (rest, nan and not nan_first)}
        nodes.append(("split", NumericTest(f, op, thr), DefaultChild(0 if nan_left == side0 else 1),
                      None, samples))
        pending[me] = [None, None]
        # the second child is this same LightGBM split on what is left (it may need more cuts)
        stack.append((me, 1, node if len(runs) > 2 else (t.left[node] if not side0 else t.right[node]),
                      dom1))
        stack.append((me, 0, t.left[node] if side0 else t.right[node], dom0))
    out = []
    for i, nd in enumerate(nodes):
        if isinstance(nd, Leaf):
            out.append(nd)
        else:
            _, test, missing, unseen, samples = nd
            out.append(Split(test, tuple(pending[i]), missing, unseen=unseen, samples=samples))
    return Tree(nodes=tuple(out), output=output)


def _count(counts, i) -> float | None:
    return float(counts[i]) if counts is not None and i < len(counts) else None
