"""Forest-RC's oblique splits: random linear combinations of a few numeric inputs.

At each node :class:`ObliqueSplitFinder` draws ``n_combinations`` candidates; each is
``n_combined`` distinct numeric features (among those not constant at the node) with
coefficients ``u / scale[f]``, ``u`` uniform in [-1, 1) and ``scale`` the feature's
standard deviation (or 1, see :func:`input_scale`), so every input gets a comparable
share whatever its unit. Each candidate is searched like a numeric feature: the rows
are sorted by the combined value and every boundary between distinct values is scored
by the criterion.

**Exactness.** The combined value is computed on the float64 inputs exactly as the IR
defines an ``ObliqueTest``: ``s = 0.0; s = s + w[i] * x[f[i]]`` in order, in float64.
The threshold ``t`` is the float64 midpoint ``a/2 + b/2`` of the adjacent distinct
values ``a < b`` (or ``a`` when rounding lifts the midpoint to ``b``), so ``s <= t``
holds for ``a`` and fails for ``b``; training rows are routed with that same
comparison, hence the IR sends every training row where the learner did.

**Missing values.** A combination is missing when any of its inputs is. Each
candidate is tried with the missing rows sent left and right (and "every present row
left, missing right", threshold +inf); if the node saw no missing combination, missing
goes to the child with more training rows (ties right), as CART does.

**Categorical features** take no part in combinations. They compete as ordinary CART
subset splits: ``max_features`` of them (at most) are drawn per node and searched by
:class:`rulegen.learn.splits.categorical.CartSplitFinder`; the better improvement wins
(oblique on ties).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from rulegen.ir.nodes import DefaultChild, ObliqueTest
from rulegen.learn.splits.builder import NodeWork, NumericSplitFinder, Partition
from rulegen.learn.splits.categorical import CartSplitFinder


def input_scale(X64: np.ndarray, w: np.ndarray, cat_labels) -> np.ndarray:
    """Per-feature divisor for the random coefficients: the weighted standard deviation of
    the present values (1 for categorical, constant or empty columns)."""
    scale = np.ones(X64.shape[1])
    for j in range(X64.shape[1]):
        if j in cat_labels:
            continue
        x = X64[:, j]
        ok = ~np.isnan(x) & (w > 0)
        if ok.sum() < 2:
            continue
        mean = np.average(x[ok], weights=w[ok])
        sd = math.sqrt(np.average((x[ok] - mean) ** 2, weights=w[ok]))
        if math.isfinite(sd) and sd > 0:
            scale[j] = sd
    return scale


def midpoint(a: float, b: float) -> float:
    """A float64 t with a <= t < b, halfway when rounding allows."""
    t = a / 2.0 + b / 2.0
    return t if a <= t < b else a


class ObliqueSplitFinder(NumericSplitFinder):
    """Oblique splits over the numeric features (plus CART subset splits over the
    categorical ones); the builder protocol of :mod:`rulegen.learn.splits.builder`.

    ``X64T`` is the float64 input, transposed (features x rows). ``categorical`` maps
    the categorical columns to their number of categories."""

    def __init__(self, X32, T, w, criterion, *, X64T, scale, n_combined, n_combinations,
                 categorical=None, splitter="best", max_features=None, min_samples_leaf=1,
                 min_weight_leaf=0.0, rng=None):
        # the base keeps weights, criterion, leaf limits and _split_rows; its presorted
        # orders are not needed (combinations are sorted per node)
        super().__init__(X32, T, w, criterion, splitter="random", max_features=max_features,
                         min_samples_leaf=min_samples_leaf, min_weight_leaf=min_weight_leaf,
                         rng=rng)
        categorical = dict(categorical or {})
        p = X64T.shape[0]
        self.numeric = np.array([j for j in range(p) if j not in categorical], dtype=np.intp)
        self.X64T, self.scale = X64T, np.asarray(scale, dtype=np.float64)
        self.n_combined, self.n_combinations = int(n_combined), int(n_combinations)
        self.cat_columns = np.array(sorted(categorical), dtype=np.intp)
        self.cat_finder = None
        if categorical:
            # a finder over the categorical columns alone; its feature numbers are local
            self.cat_finder = CartSplitFinder(
                X32[:, self.cat_columns], T, w, criterion,
                categorical={k: categorical[int(j)] for k, j in enumerate(self.cat_columns)},
                splitter="random", max_features=min(self.max_features, len(self.cat_columns)),
                min_samples_leaf=min_samples_leaf, min_weight_leaf=min_weight_leaf, rng=self.rng)

    def find_split(self, node: NodeWork) -> Partition | None:
        best = self._best_oblique(node) if self.numeric.size else None
        if self.cat_finder is not None:
            part = self.cat_finder.find_split(node)
            if part is not None and (best is None or part.improvement > best.improvement):
                part.test = replace(part.test, feature=int(self.cat_columns[part.test.feature]))
                best = part
        return best

    # -- candidates --------------------------------------------------------------------

    def _draw(self, Xn: np.ndarray, n: int):
        """(features, coefficients), each (F, L): F combinations of L numeric inputs that
        vary at the node (indices into ``self.numeric``)."""
        nm = np.isnan(Xn).sum(axis=1)
        lo, hi = np.fmin.reduce(Xn, axis=1), np.fmax.reduce(Xn, axis=1)
        usable = np.flatnonzero((hi > lo) | ((nm > 0) & (nm < n)))
        if usable.size == 0:
            return None, None
        L = min(self.n_combined, usable.size)
        F = self.n_combinations
        pick = np.argsort(self.rng.random((F, usable.size)), axis=1)[:, :L]
        feats = usable[pick]
        u = self.rng.uniform(-1.0, 1.0, (F, L))
        return feats, u / self.scale[self.numeric[feats]]

    def _best_oblique(self, node: NodeWork) -> Partition | None:
        rows = node.rows
        n = len(rows)
        Xn = self.X64T[self.numeric][:, rows]
        feats, coef = self._draw(Xn, n)
        if feats is None:
            return None
        F, L = feats.shape
        V = np.zeros((F, n))
        for i in range(L):  # the IR's order: ((0.0 + w0*x0) + w1*x1) + ...
            V = V + coef[:, i, None] * Xn[feats[:, i]]
        found = self._search(V, rows)
        if found is None:
            return None
        r, threshold, missing_left = found
        v = V[r]
        left = np.where(np.isnan(v), missing_left, v <= threshold)
        if not np.isnan(v).any():
            n_left = int(left.sum())
            missing_left = n_left > n - n_left
        children, improvement = self._split_rows(node, left)
        test = ObliqueTest(tuple(int(self.numeric[f]) for f in feats[r]),
                           tuple(float(c) for c in coef[r]), "<=", threshold)
        return Partition(test, DefaultChild(0 if missing_left else 1), children, improvement)

    def _search(self, V: np.ndarray, rows: np.ndarray):
        """Best (candidate, threshold, missing_left) over the rows of V, or None."""
        n = V.shape[1]
        order = np.argsort(V, axis=1, kind="stable")  # NaN (missing) sorts last
        Vs = np.take_along_axis(V, order, axis=1)
        S = rows[order]
        nm = np.isnan(V).sum(axis=1)
        nn = n - nm
        boundary = Vs[:, 1:] > Vs[:, :-1]
        val, pos, left_pass = self._two_pass(S, boundary, nm, nn)
        r = int(val.argmax())
        if val[r] == -np.inf:
            return None
        n_left = int(pos[r]) + 1
        if left_pass[r]:
            k = n_left - int(nm[r])
            return r, midpoint(float(Vs[r, k - 1]), float(Vs[r, k])), True
        if n_left == nn[r]:
            return r, math.inf, False
        return r, midpoint(float(Vs[r, n_left - 1]), float(Vs[r, n_left])), False
