"""Impurity criteria as vectorised numpy, and a plain dict registry.

A criterion sees the training targets ``T`` and weights ``w`` of *all* rows and
is handed global row ids. Classification criteria take ``T`` as class codes
(shape (N,)), regression criteria as floats (shape (N, n_outputs)).

* :meth:`Criterion.stats` summarises one node: impurity, leaf value, total
  weight and (classification) weighted class counts.
* :meth:`Criterion.prefix_proxy` scores splits in bulk: given ``seqs`` of shape
  (q, n) -- q orderings of the same n rows, e.g. one per feature sorted by that
  feature -- it scores every split "first i rows left, the rest right",
  i = 1..n-1, at once. Split finders only order rows; criteria never see X.

The proxies follow scikit-learn's ``_criterion.pyx`` operation for operation
(same formulas, same association order), so that exact ties between candidate
splits are recognised as ties and break the same way.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class NodeStats(NamedTuple):
    impurity: float
    value: tuple  # the leaf value
    weight: float  # total weight of the rows
    distribution: tuple | None  # weighted class counts (classification)


class Criterion:
    """Interface shared by all criteria; see the module docstring for shapes."""

    name = ""
    task = ""

    def stats(self, T, w, idx) -> NodeStats:
        raise NotImplementedError

    def children_stats(self, T, w, left, right) -> tuple[NodeStats, NodeStats]:
        return self.stats(T, w, left), self.stats(T, w, right)

    def impurity(self, T, w, idx) -> float:
        return self.stats(T, w, idx).impurity

    def prefix_proxy(self, T, w, seqs):
        """(w_left, w_right, proxy), each (q, n-1): larger proxy = better split."""
        with np.errstate(divide="ignore", invalid="ignore"):
            wl, wr, proxy = self._prefix_proxy(T, w, seqs)
        return wl, wr, _never_best(proxy)

    def _prefix_proxy(self, T, w, seqs):
        raise NotImplementedError


def _never_best(proxy):
    """A side whose weight rounds to 0 (a right side of tiny weights, subtracted from a
    large total) scores NaN; as in scikit-learn's ``>`` comparisons, it never wins,
    where ``argmax`` would pick the first NaN."""
    nan = np.isnan(proxy)
    if nan.any():
        proxy[nan] = -np.inf
    return proxy


def _weights_prefix(ws):
    cw = np.cumsum(ws, axis=1)
    wl = cw[:, :-1]
    return cw, wl, cw[:, -1:] - wl


class _Classification(Criterion):
    task = "classification"

    def __init__(self, n_classes: int):
        self.n_classes = int(n_classes)

    def stats(self, T, w, idx) -> NodeStats:
        counts = np.bincount(T[idx], weights=w[idx], minlength=self.n_classes).tolist()
        total = sum(counts)  # consistent with the counts, so a pure node has impurity 0
        return NodeStats(self._impurity(counts, total), tuple(c / total for c in counts),
                         total, tuple(counts))

    def _prefix_proxy(self, T, w, seqs):
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

    def proxy_from_counts(self, left, total):
        """(w_left, w_right, proxy) of candidate splits given by the class weights on their
        left side, ``left`` (..., n_classes), and the node's, ``total`` (n_classes,): the
        same proxy as :meth:`prefix_proxy` without touching rows (categorical scans)."""
        wl = left.sum(axis=-1)
        wr = float(total.sum()) - wl
        acc_l = np.zeros_like(wl)
        acc_r = np.zeros_like(wl)
        with np.errstate(divide="ignore", invalid="ignore"):
            for c in range(self.n_classes):
                self._accumulate(acc_l, left[..., c], wl)
                self._accumulate(acc_r, total[c] - left[..., c], wr)
            imp_l, imp_r = self._finish(acc_l, wl), self._finish(acc_r, wr)
            proxy = -wr * imp_r - wl * imp_l
        return wl, wr, _never_best(proxy)


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


_LN2 = np.log(2.0)  # sklearn's entropy is in bits, computed as ln(p) / ln(2)


class Entropy(_Classification):
    name = "entropy"

    @staticmethod
    def _impurity(counts, total):
        ent = 0.0
        for c in counts:
            if c > 0.0:
                p = c / total
                ent -= p * (np.log(p) / _LN2)
        return float(ent)

    @staticmethod
    def _accumulate(acc, c, wsum):
        p = c / wsum
        pos = c > 0.0
        acc -= np.where(pos, p * (np.log(np.where(pos, p, 1.0)) / _LN2), 0.0)

    @staticmethod
    def _finish(acc, wsum):
        return acc


class _Regression(Criterion):
    task = "regression"

    def __init__(self, n_outputs: int = 1):
        self.n_outputs = int(n_outputs)


class SquaredError(_Regression):
    name = "squared_error"

    def stats(self, T, w, idx):
        # Two-pass variance: exactly 0 for a constant target. sklearn's one-pass
        # sq/W - mean^2 leaves rounding noise of either sign there, which decides
        # whether it splits a constant node; rulegen never does.
        ww = w[idx]
        wsum = float(ww.sum())
        Y = T[idx]
        mean = (ww @ Y) / wsum
        imp = float((ww @ (Y - mean) ** 2).sum()) / (wsum * self.n_outputs)
        return NodeStats(imp, tuple(mean.tolist()), wsum, None)

    def _prefix_proxy(self, T, w, seqs):
        ws = w[seqs]
        _, wl, wr = _weights_prefix(ws)
        if self.n_outputs == 1:
            # the loop below for one output, in place where it makes temporaries (a big
            # node's search then holds half as many (q, n) arrays): the same operations, so
            # the same bits (0.0 + x is x for the squares, which are never -0.0)
            cum = T[seqs, 0]
            cum *= ws
            del ws
            np.cumsum(cum, axis=1, out=cum)
            sl = cum[:, :-1]
            sr = cum[:, -1:] - sl
            proxy = sl * sl
            del cum, sl
            proxy /= wl
            sr *= sr
            sr /= wr
            proxy += sr
            return wl, wr, proxy
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


_DENSE = 1 << 21  # elements of (q, n, n) work arrays for the small-node path
_DENSE_MAX_N = 96  # measured crossover between the two paths


def prefix_abs_errors(y, w):
    """Weighted absolute error around the weighted median of every prefix y[..., :i],
    i = 1..n, and those medians. ``y`` and ``w`` have shape (n,) or (q, n).

    Small sequences use an O(n^2) broadcast (many at once); long ones the
    O(n log n) wavelet matrix of :func:`_prefix_abs_errors_long`. Neither loops
    over rows."""
    y2, w2 = np.atleast_2d(y), np.atleast_2d(w)
    q, n = y2.shape
    if n <= _DENSE_MAX_N:
        step = max(1, _DENSE // (n * n))
        out = [_prefix_abs_errors_dense(y2[i:i + step], w2[i:i + step]) for i in range(0, q, step)]
        ae, med = np.concatenate([o[0] for o in out]), np.concatenate([o[1] for o in out])
    else:
        out = [_prefix_abs_errors_long(y2[i], w2[i]) for i in range(q)]
        ae, med = np.array([o[0] for o in out]), np.array([o[1] for o in out])
    return (ae, med) if np.ndim(y) == 2 else (ae[0], med[0])


def _prefix_abs_errors_dense(y, w):
    """(q, n) sequences: prefix i is a mask over the ranks of y, so weights cumulated
    in rank order give every prefix's median at once."""
    _, n = y.shape
    order = np.argsort(y, axis=1, kind="stable")  # order[:, r]: position of rank r
    ys = np.take_along_axis(y, order, axis=1)
    ws = np.take_along_axis(w, order, axis=1)
    active = order[:, None, :] <= np.arange(n)[None, :, None]  # (q, prefix end, rank)
    cum = np.cumsum(np.where(active, ws[:, None, :], 0.0), axis=2)
    cumy = np.cumsum(np.where(active, (ws * ys)[:, None, :], 0.0), axis=2)
    cw, cwy = np.cumsum(w, axis=1), np.cumsum(w * y, axis=1)
    half = 0.5 * cw
    med_rank = np.argmax(cum > half[..., None], axis=2)  # (q, n)
    below = np.maximum(med_rank - 1, 0)[..., None]
    has_below = med_rank > 0
    wl = np.where(has_below, np.take_along_axis(cum, below, axis=2)[..., 0], 0.0)
    wyl = np.where(has_below, np.take_along_axis(cumy, below, axis=2)[..., 0], 0.0)
    median = np.take_along_axis(ys, med_rank, axis=1)
    exact = has_below & (wl == half)
    if exact.any():
        last = np.maximum.accumulate(np.where(active, np.arange(n), -1), axis=2)
        prev = np.take_along_axis(last, below, axis=2)[..., 0]
        mid = (np.take_along_axis(ys, np.maximum(prev, 0), axis=1) + median) / 2
        median = np.where(exact, mid, median)
    ae = ((cwy - wyl) - median * (cw - wl)) + (median * wl - wyl)
    return ae, median


def _prefix_abs_errors_long(y, w):
    """One sequence in O(n log n) numpy work.

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
    """Costs O(n^2) per sequence for small nodes, O(n log n) for large ones."""

    name = "absolute_error"

    def stats(self, T, w, idx):
        ww = w[idx]
        total, medians = 0.0, []
        for k in range(self.n_outputs):
            yk = T[idx, k]
            m = weighted_median(yk, ww)
            medians.append(float(m))
            total += float(np.sum(ww * np.abs(yk - m)))
        wsum = float(ww.sum())
        return NodeStats(total / (wsum * self.n_outputs), tuple(medians), wsum, None)

    def _prefix_proxy(self, T, w, seqs):
        ws = w[seqs]
        _, wl, wr = _weights_prefix(ws)
        ae_l = np.zeros_like(wl)
        ae_r = np.zeros_like(wl)
        for k in range(self.n_outputs):
            yk = T[seqs, k]
            ae_l += prefix_abs_errors(yk, ws)[0][:, :-1]
            ae_r += prefix_abs_errors(yk[:, ::-1], ws[:, ::-1])[0][:, :-1][:, ::-1]
        imp_l = ae_l / (wl * self.n_outputs)
        imp_r = ae_r / (wr * self.n_outputs)
        return wl, wr, -wr * imp_r - wl * imp_l


CLASSIFICATION_CRITERIA = {"gini": Gini, "entropy": Entropy, "log_loss": Entropy}
REGRESSION_CRITERIA = {"squared_error": SquaredError, "absolute_error": AbsoluteError}
CRITERIA = {**CLASSIFICATION_CRITERIA, **REGRESSION_CRITERIA}
