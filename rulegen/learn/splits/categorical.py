"""CART's binary subset splits on categorical features.

:class:`CartSplitFinder` extends :class:`~rulegen.learn.splits.builder.NumericSplitFinder`:
numeric features are searched exactly as before; each categorical feature (its
column of X holds category *codes*, NaN for missing) gets the best split of the
form ``code in S`` found as follows.

* **Ordering.** The categories present at the node are put in an order and the
  ordered list is scanned like a numeric feature: every split "the first k
  categories left, the rest right" is scored by the criterion's proxy.
  - Two classes, or regression with one output: order by the weighted class-1
    fraction / weighted mean of y. By Breiman's theorem (CART, 1984, thm 4.5;
    it holds for gini, entropy and squared error) the best of these m-1 splits
    is the best of all 2^(m-1)-1 subsets.
  - More classes (or several regression outputs): no such theorem. We score the
    ordering by the first principal component of the weighted class-probability
    (mean) vectors of the categories (Coppersmith, Hong & Hosking 1999), and in
    addition one ordering per class by that class's probability (one-vs-rest),
    and keep the best split over all these k+1 orderings. This is a heuristic:
    it may miss the optimal subset, but is never worse than any one-vs-rest split.
  - For absolute_error the mean ordering is used too (a heuristic there).
* **Missing values** as the numeric finder: every candidate is tried with the
  missing rows left and right (plus "every present category left, missing
  right"), the better is kept, right first on ties. If the node saw no missing
  value on the feature, missing goes to the child with more training rows
  (ties right).
* **Unseen categories.** Categories of the feature absent from the node's
  training rows, and codes outside the feature's list, go to the child with more
  training rows (ties right): the absent ones by putting them in (or leaving them
  out of) the test's set, the others by ``Split.unseen``.

The random splitter uses the same ordered scan for categorical features (it does
not draw a random subset). The best categorical split of the node competes with
the best numeric one by impurity improvement; numeric wins ties.
"""

from __future__ import annotations

import numpy as np

from rulegen.ir.nodes import CategoricalTest, DefaultChild
from rulegen.learn.splits.builder import NodeWork, NumericSplitFinder, Partition


class CartSplitFinder(NumericSplitFinder):
    """Numeric and categorical binary splits. ``categorical`` maps a column index to
    its number of categories (codes 0..n-1)."""

    def __init__(self, X32, T, w, criterion, *, categorical: dict[int, int], **kwargs):
        super().__init__(X32, T, w, criterion, **kwargs)
        self.categorical = dict(categorical)
        self._is_cat = np.zeros(self.XT.shape[0], dtype=bool)
        self._is_cat[list(self.categorical)] = True
        self._drawn = np.zeros(0, dtype=np.intp)

    def _visit(self, lo, hi, nm, n) -> np.ndarray:
        feats = super()._visit(lo, hi, nm, n)
        self._drawn = feats[self._is_cat[feats]]
        return feats[~self._is_cat[feats]]

    def find_split(self, node: NodeWork) -> Partition | None:
        best = super().find_split(node)  # also sets self._drawn
        drawn, self._drawn = self._drawn, np.zeros(0, dtype=np.intp)
        found = None
        for f in drawn:
            cand = self._best_categorical(node, int(f))
            if cand is not None and (found is None or cand[0] > found[0]):
                found = cand
        if found is None:
            return best
        _, feature, codes_left, missing_left, seen = found
        part = self._categorical_partition(node, feature, codes_left, missing_left, seen)
        if best is None or part.improvement > best.improvement:
            return part
        return best

    # -- search ------------------------------------------------------------------

    def _orderings(self, rows, codes, present):
        """Category orderings to scan (each an array of the present codes)."""
        w = self.w[rows]
        cw = np.bincount(codes, weights=w)[present]
        crit = self.criterion
        if crit.task == "classification":
            k = crit.n_classes
            M = np.zeros((len(present), k))
            pos = np.searchsorted(present, codes)
            np.add.at(M, (pos, self.T[rows]), w)
            M /= cw[:, None]
            if k == 2:
                return [present[np.lexsort((present, M[:, 1]))]]
        else:
            Y = self.T[rows]
            pos = np.searchsorted(present, codes)
            M = np.zeros((len(present), Y.shape[1]))
            np.add.at(M, pos, w[:, None] * Y)
            M /= cw[:, None]
            if Y.shape[1] == 1:
                return [present[np.lexsort((present, M[:, 0]))]]
        orders = []
        centred = M - (cw @ M) / cw.sum()
        cov = (centred * cw[:, None]).T @ centred
        _, vecs = np.linalg.eigh(cov)
        pc = centred @ vecs[:, -1]
        orders.append(present[np.lexsort((present, pc))])
        for c in range(M.shape[1]):
            orders.append(present[np.lexsort((present, M[:, c]))])
        return orders

    def _best_categorical(self, node, f):
        rows = node.rows
        n = len(rows)
        x = self.XT[f, rows]
        miss = np.isnan(x)
        prow, mrow = rows[~miss], rows[miss]
        codes = x[~miss].astype(np.intp)
        present = np.unique(codes)
        m, nm = len(present), int(miss.sum())
        if m < 1 or (m == 1 and nm == 0):
            return None
        # Candidates: every ordering, with the missing rows right then left. Classification
        # scores them from per-category class weights (O(m * classes) each, whatever the
        # rows); regression scans the row sequences, all in one (q, n) batch.
        counts = self.criterion.task == "classification"
        if counts:
            k = self.criterion.n_classes
            pos = np.searchsorted(present, codes)
            C = np.zeros((m, k))
            np.add.at(C, (pos, self.T[prow]), self.w[prow])
            Cm = np.bincount(self.T[mrow], weights=self.w[mrow], minlength=k)
            total = C.sum(axis=0) + Cm
        seqs, lefts, cands = [], [], []
        for order in self._orderings(prow, codes, present):
            rank = np.empty(self.categorical[f], dtype=np.intp)
            rank[order] = np.arange(m)
            r = rank[codes]
            if counts:
                L = np.cumsum(C[np.searchsorted(present, order)], axis=0)  # first k categories
            else:
                seq_p = prow[np.argsort(r, kind="stable")]
            ends = np.cumsum(np.bincount(r, minlength=m))  # present rows in the first k
            for missing_left in (False, True):
                if missing_left and nm == 0:
                    continue
                if missing_left:
                    ks = np.arange(1, m)  # k categories join the missing rows on the left
                    n_left = nm + ends[:-1]
                else:
                    ks = np.arange(1, m + 1 if nm > 0 else m)
                    n_left = ends[ks - 1]
                if counts:
                    lefts.append(L[ks - 1] + Cm if missing_left else L[ks - 1])
                else:
                    seqs.append(np.concatenate([mrow, seq_p] if missing_left else [seq_p, mrow]))
                cands.append((order, missing_left, ks, n_left))
        if counts:  # one criterion call for all candidates, then cut back per candidate
            wl, wr, proxy = self.criterion.proxy_from_counts(np.concatenate(lefts), total)
            cuts = np.cumsum([len(left) for left in lefts])[:-1]
            scored = zip(np.split(wl, cuts), np.split(wr, cuts), np.split(proxy, cuts))
        else:
            wl, wr, proxy = self.criterion.prefix_proxy(self.T, self.w, np.stack(seqs))
            scored = [(wl[i, c], wr[i, c], proxy[i, c]) for i, c in
                      enumerate(n_left - 1 for _, _, _, n_left in cands)]
        best = None
        for (order, missing_left, ks, n_left), (wl_i, wr_i, proxy_i) in zip(cands, scored):
            if len(ks) == 0:
                continue
            ok = self._leaf_ok(n, n_left, wl_i, wr_i)
            val = np.where(ok, proxy_i, -np.inf)
            j = int(val.argmax())
            if val[j] == -np.inf:
                continue
            if best is None or val[j] > best[0]:
                best = (float(val[j]), f, order[:int(ks[j])], missing_left, present)
        return best

    # -- applying ------------------------------------------------------------------

    def _categorical_partition(self, node, feature, codes_left, missing_left, seen):
        rows = node.rows
        x = self.XT[feature, rows]
        nan = np.isnan(x)
        in_set = np.zeros(self.categorical[feature], dtype=bool)
        in_set[codes_left] = True
        left = np.where(nan, missing_left, in_set[np.where(nan, 0, x).astype(np.intp)])
        n_left = int(left.sum())
        bigger = 0 if n_left > len(rows) - n_left else 1
        if not nan.any():
            missing_left = bigger == 0
        absent = np.ones(self.categorical[feature], dtype=bool)
        absent[seen] = False
        if bigger == 0:
            in_set |= absent
        test = CategoricalTest(feature, tuple(int(c) for c in np.flatnonzero(in_set)))
        children, improvement = self._split_rows(node, left)
        return Partition(test, DefaultChild(0 if missing_left else 1), children, improvement,
                         unseen=bigger)
