"""Impurity criteria as vectorised numpy, and a plain dict registry.

A criterion sees the training targets ``T`` and weights ``w`` for *all* rows and
is handed global row ids. Classification criteria take ``T`` as class codes
(shape (N,)), regression criteria as floats (shape (N, n_outputs)).

The central operation is :meth:`Criterion.prefix_proxy`: given ``seqs`` of shape
(q, n) -- q orderings of the same n rows, e.g. one per feature, sorted by that
feature -- it scores every split "first i rows left, the rest right" for
i = 1..n-1 at once. Split finders only order rows; criteria never see features.

The formulas follow scikit-learn's ``_criterion.pyx`` operation for operation
(same proxies, same association order), so that exact ties between candidate
splits are recognised as ties and break the same way.
"""

from __future__ import annotations

import numpy as np


class Criterion:
    """Interface shared by all criteria; see the module docstring for shapes."""

    name = ""
    task = ""

    def impurity(self, T, w, idx) -> float:
        raise NotImplementedError

    def children_impurity(self, T, w, left, right) -> tuple[float, float]:
        return self.impurity(T, w, left), self.impurity(T, w, right)

    def prefix_proxy(self, T, w, seqs):
        """(w_left, w_right, proxy), each (q, n-1): larger proxy = better split."""
        raise NotImplementedError

    def leaf_value(self, T, w, idx) -> tuple[float, ...]:
        raise NotImplementedError

    def distribution(self, T, w, idx):
        return None


def _weights_prefix(ws):
    cw = np.cumsum(ws, axis=1)
    wl = cw[:, :-1]
    return cw, wl, cw[:, -1:] - wl


class _Classification(Criterion):
    task = "classification"

    def __init__(self, n_classes: int):
        self.n_classes = int(n_classes)

    def counts(self, T, w, idx) -> np.ndarray:
        return np.bincount(T[idx], weights=w[idx], minlength=self.n_classes).astype(np.float64)

    def impurity(self, T, w, idx) -> float:
        counts = self.counts(T, w, idx)
        return self._impurity(counts, float(w[idx].sum()))

    def leaf_value(self, T, w, idx):
        counts = self.counts(T, w, idx)
        total = float(w[idx].sum())
        return tuple(float(c / total) for c in counts)

    def distribution(self, T, w, idx):
        return tuple(float(c) for c in self.counts(T, w, idx))

    def prefix_proxy(self, T, w, seqs):
        ws = w[seqs]
        labels = T[seqs]
        _, wl, wr = _weights_prefix(ws)
        acc_l = np.zeros_like(wl)
        acc_r = np.zeros_like(wl)
        # One pass per class keeps memory at O(q*n) and sums classes in
        # sklearn's order (class 0 first).
        for c in range(self.n_classes):
            cum = np.cumsum(np.where(labels == c, ws, 0.0), axis=1)
            cl = cum[:, :-1]
            cr = cum[:, -1:] - cl
            self._accumulate(acc_l, cl, wl)
            self._accumulate(acc_r, cr, wr)
        imp_l, imp_r = self._finish(acc_l, wl), self._finish(acc_r, wr)
        # sklearn's default proxy: -(w_R * impurity_R) - (w_L * impurity_L)
        return wl, wr, -wr * imp_r - wl * imp_l


class Gini(_Classification):
    name = "gini"

    @staticmethod
    def _impurity(counts, total):
        sq = 0.0
        for c in counts:
            sq += c * c
        return 1.0 - sq / (total * total)

    @staticmethod
    def _accumulate(acc, c, wsum):
        acc += c * c

    @staticmethod
    def _finish(acc, wsum):
        return 1.0 - acc / (wsum * wsum)


class Entropy(_Classification):
    name = "entropy"

    @staticmethod
    def _impurity(counts, total):
        ent = 0.0
        for c in counts:
            if c > 0.0:
                p = c / total
                ent -= p * np.log(p)
        return float(ent)

    @staticmethod
    def _accumulate(acc, c, wsum):
        p = c / wsum
        pos = c > 0.0
        acc -= np.where(pos, p * np.log(np.where(pos, p, 1.0)), 0.0)

    @staticmethod
    def _finish(acc, wsum):
        return acc


class _Regression(Criterion):
    task = "regression"

    def __init__(self, n_outputs: int = 1):
        self.n_outputs = int(n_outputs)


class SquaredError(_Regression):
    name = "squared_error"

    def _sums(self, T, w, idx):
        wy = w[idx, None] * T[idx]
        sq = float((wy * T[idx]).sum())
        return wy.sum(axis=0), sq, float(w[idx].sum())

    @staticmethod
    def _from_sums(s, sq, wsum, n_outputs):
        imp = sq / wsum
        for k in range(len(s)):
            imp -= (s[k] / wsum) ** 2.0
        return imp / n_outputs

    def impurity(self, T, w, idx):
        s, sq, wsum = self._sums(T, w, idx)
        return self._from_sums(s, sq, wsum, self.n_outputs)

    def children_impurity(self, T, w, left, right):
        # sklearn derives the right child as total minus left
        s_l, sq_l, w_l = self._sums(T, w, left)
        s_r, sq_r, w_r = self._sums(T, w, right)
        s_t, sq_t, w_t = s_l + s_r, sq_l + sq_r, w_l + w_r
        return (self._from_sums(s_l, sq_l, w_l, self.n_outputs),
                self._from_sums(s_t - s_l, sq_t - sq_l, w_t - w_l, self.n_outputs))

    def leaf_value(self, T, w, idx):
        s, _, wsum = self._sums(T, w, idx)
        return tuple(float(v / wsum) for v in s)

    def prefix_proxy(self, T, w, seqs):
        ws = w[seqs]
        _, wl, wr = _weights_prefix(ws)
        pl = np.zeros_like(wl)
        pr = np.zeros_like(wl)
        for k in range(self.n_outputs):
            cum = np.cumsum(ws * T[seqs, k], axis=1)
            sl = cum[:, :-1]
            sr = cum[:, -1:] - sl
            pl += sl * sl
            pr += sr * sr
        # sklearn's MSE proxy: sum_L^2 / w_L + sum_R^2 / w_R
        return wl, wr, pl / wl + pr / wr


def weighted_median(y, w) -> float:
    """sklearn's weighted median: the smallest y whose cumulative weight exceeds half
    the total; if some cumulative weight equals half exactly, the midpoint of that y
    and the next one."""
    order = np.argsort(y, kind="stable")
    ys, cw = y[order], np.cumsum(w[order])
    half = 0.5 * cw[-1]
    r = int(np.searchsorted(cw, half, side="right"))
    if r > 0 and cw[r - 1] == half:
        return (ys[r - 1] + ys[r]) / 2
    return float(ys[r])


def prefix_abs_errors(y, w):
    """Weighted absolute error around the weighted median of every prefix y[:i],
    i = 1..n, in O(n log n) numpy work and no loop over rows.

    All prefixes are answered together by a wavelet matrix over the ranks of y:
    ceil(log2 n) levels, each a stable partition by one bit of the rank plus
    prefix sums of w and w*y. A query descends once per level, keeping the weight
    and weighted sum of the ranks below the median it is narrowing down.
    """
    n = len(y)
    order = np.argsort(y, kind="stable")
    ranks = np.empty(n, dtype=np.intp)
    ranks[order] = np.arange(n)
    ys = y[order]
    wy = w * y
    cw, cwy = np.cumsum(w), np.cumsum(wy)
    half = 0.5 * cw
    s = np.zeros(n, dtype=np.intp)
    e = np.arange(1, n + 1)
    h = half.copy()
    wl = np.zeros(n)
    wyl = np.zeros(n)
    below = np.zeros(n, dtype=np.intp)
    rank = np.zeros(n, dtype=np.intp)
    perm = np.arange(n)
    levels = []
    for b in reversed(range(max(1, (n - 1).bit_length()))):
        zero = ((ranks[perm] >> b) & 1) == 0
        z = np.concatenate(([0], np.cumsum(zero)))
        wz_c = np.concatenate(([0.0], np.cumsum(np.where(zero, w[perm], 0.0))))
        wyz_c = np.concatenate(([0.0], np.cumsum(np.where(zero, wy[perm], 0.0))))
        nz = z[-1]
        zs, ze = z[s], z[e]
        wz = wz_c[e] - wz_c[s]
        right = ~(wz > h)  # median lies among the ranks with this bit set
        h = np.where(right, h - wz, h)
        wl += np.where(right, wz, 0.0)
        wyl += np.where(right, wyz_c[e] - wyz_c[s], 0.0)
        below += np.where(right, ze - zs, 0)
        rank |= right.astype(np.intp) << b
        s, e = np.where(right, nz + s - zs, zs), np.where(right, nz + e - ze, ze)
        levels.append((b, z, nz))
        perm = np.concatenate((perm[zero], perm[~zero]))
    median = ys[rank]
    exact = np.flatnonzero((wl == half) & (below > 0))
    if exact.size:
        # Cumulative weight hits half exactly: average with the previous rank,
        # found by a second descent for the (below-1)-th smallest rank.
        k = below[exact] - 1
        s2 = np.zeros(exact.size, dtype=np.intp)
        e2 = exact + 1
        prev = np.zeros(exact.size, dtype=np.intp)
        for b, z, nz in levels:
            zs, ze = z[s2], z[e2]
            right = ~(k < ze - zs)
            k = np.where(right, k - (ze - zs), k)
            prev |= right.astype(np.intp) << b
            s2, e2 = np.where(right, nz + s2 - zs, zs), np.where(right, nz + e2 - ze, ze)
        median = median.copy()
        median[exact] = (ys[prev] + ys[rank[exact]]) / 2
    ae = ((cwy - wyl) - median * (cw - wl)) + (median * wl - wyl)
    return ae, median


class AbsoluteError(_Regression):
    """Costs O(n log n) per sequence (see prefix_abs_errors), one sequence at a time."""

    name = "absolute_error"

    def _abs_error(self, T, w, idx):
        ww = w[idx]
        total = 0.0
        for k in range(self.n_outputs):
            yk = T[idx, k]
            m = weighted_median(yk, ww)
            total += float(np.sum(ww * np.abs(yk - m)))
        return total, float(ww.sum())

    def impurity(self, T, w, idx):
        ae, wsum = self._abs_error(T, w, idx)
        return ae / (wsum * self.n_outputs)

    def leaf_value(self, T, w, idx):
        return tuple(float(weighted_median(T[idx, k], w[idx])) for k in range(self.n_outputs))

    def prefix_proxy(self, T, w, seqs):
        ws = w[seqs]
        _, wl, wr = _weights_prefix(ws)
        ae_l = np.zeros_like(wl)
        ae_r = np.zeros_like(wl)
        for r in range(seqs.shape[0]):
            for k in range(self.n_outputs):
                yk = T[seqs[r], k]
                ae_l[r] += prefix_abs_errors(yk, ws[r])[0][:-1]
                ae_r[r] += prefix_abs_errors(yk[::-1], ws[r, ::-1])[0][:-1][::-1]
        imp_l = ae_l / (wl * self.n_outputs)
        imp_r = ae_r / (wr * self.n_outputs)
        return wl, wr, -wr * imp_r - wl * imp_l


CLASSIFICATION_CRITERIA = {"gini": Gini, "entropy": Entropy, "log_loss": Entropy}
REGRESSION_CRITERIA = {"squared_error": SquaredError, "absolute_error": AbsoluteError}
CRITERIA = {**CLASSIFICATION_CRITERIA, **REGRESSION_CRITERIA}
