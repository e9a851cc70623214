"""xgboost_style's ``tree_method="hist"``: XGBoost's histogram method.

Unlike ``approx`` (cuts re-drawn from every tree's rows and hessians, every node's histogram
summed from its rows), ``hist``

* cuts every feature once per fit, before the first tree (:func:`fixed_bins`), at the
  quantiles of the training rows weighted by their *sample weights* -- XGBoost's ``hist``
  sketches with the sample weights (no hessian is passed to its sketch; ``approx`` passes
  the hessian times the weight) -- and bins the rows once; every tree reuses the bins;
* builds a node's histogram from its rows only for the root and for the child with fewer
  rows (ties: the left one); its sibling's is the parent's minus it (XGBoost's subtraction
  trick, :class:`Siblings`). A subtracted bin sum rounds differently from the same rows
  summed, so ``hist`` may choose other splits than ``approx`` on the same cuts would; row
  counts stay exact (whole numbers), so which bins are empty is never in doubt.

The numpy path (:func:`histogram` without numba) and the compiled one
(:func:`rulegen.learn.compiled.kernels_newton.newton_histogram`) add every bin's rows in row order
from 0.0 and subtract element by element: the same histograms, bit for bit, hence the same
trees (``tests/test_xgb_hist.py``).
"""

from __future__ import annotations

import numpy as np

from rulegen.learn.compiled import kernels, kernels_newton
from rulegen.learn.threads import SERIAL

_BLOCK = 1 << 18  # elements per (features x rows) work array of the numpy path


def fixed_bins(XT, w, max_bin: int, presort):
    """The bins of every row, once per fit, as :func:`~rulegen.learn.ensembles.newton.quantile_bins`
    cuts them from every row of positive weight with the quantiles weighted by ``w``:
    ``(bins, cuts, max_bin)``, ``bins`` a contiguous (p, N) array (feature by feature: the
    histograms and divisions read one feature's bins of many rows). A cut of zero is +0.0. ``presort()`` gives the rows
    sorted by every feature (:func:`rulegen.learn.splits.builder.presort`); asked only when the
    weights are not all 1.0 (else sorting the values is enough, and much faster)."""
    from rulegen.learn.ensembles.newton import (
        quantile_bins,  # (newton imports this module)
    )

    p, N = XT.shape
    kind = np.uint16 if max_bin <= np.iinfo(np.uint16).max else np.int32
    if not np.all(w == 1.0):
        bins, cuts, _ = quantile_bins(XT, presort(), np.flatnonzero(w > 0), w, max_bin)
        cuts = [c + np.float32(0.0) for c in cuts]  # -0.0 + 0.0 is +0.0; the bins stay
        return np.ascontiguousarray(bins), cuts, max_bin
    cuts, by_feature = [], np.empty((p, N), dtype=kind)
    for f in range(p):  # quantile_bins' arithmetic with every hessian 1.0
        x = XT[f]
        v = np.sort(x)  # NaN last
        n = N - int(np.isnan(v).sum())
        c = np.zeros(0, dtype=XT.dtype)
        if n:
            cum = np.arange(1.0, n + 1)
            levels = cum[-1] * np.arange(1, max_bin) / max_bin
            c = np.unique(v[np.minimum(np.searchsorted(cum, levels), n - 1)])
            c = c[c > v[0]] + np.float32(0.0)
        cuts.append(c)
        if kernels.enabled():
            kernels_newton.bin_values(x, c, max_bin, by_feature[f])
        else:
            by_feature[f] = np.searchsorted(c, x, side="right")
            by_feature[f, np.isnan(x)] = max_bin
    return by_feature, cuts, max_bin


def histogram(bins, feats, rows, g, h, slots, unit_h, pool=SERIAL):
    """(len(feats), slots, 3): the g, h and row count of every bin of each of ``feats``
    over ``rows`` (slot ``slots-1``: missing values), each bin summed in row order from
    0.0. ``unit_h``: every h is 1.0 (the compiled path then copies the counts). Compiled,
    chunks of features go to ``pool``'s threads (:class:`~rulegen.learn.threads.FeatureThreads`):
    each feature's bins are summed as by one thread."""
    q, n = len(feats), len(rows)
    out = np.zeros((q, slots, 3))
    if kernels.enabled():
        if len(pool.chunks(q, q * n)) == 1:
            kernels_newton.newton_histogram_columns(bins, feats, rows, g, h, unit_h, out)
            return out
        gr, hr = g[rows], h[rows]  # once, not per thread
        pool.run(lambda a, b: kernels_newton.newton_histogram_gathered(
            bins, feats[a:b], rows, gr, hr, unit_h, out[a:b]), q, q * n)
        return out
    gr, hr = g[rows], h[rows]
    step = max(1, _BLOCK // max(n, 1))
    for a in range(0, q, step):
        F = feats[a:a + step]
        size = len(F) * slots
        idx = (bins[F[:, None], rows[None, :]] + (np.arange(len(F)) * slots)[:, None]).ravel()
        for c, x in enumerate((gr, hr)):
            out[a:a + len(F), :, c] = np.bincount(idx, weights=np.tile(x, len(F)),
                                                  minlength=size).reshape(len(F), slots)
        out[a:a + len(F), :, 2] = np.bincount(idx, minlength=size).reshape(len(F), slots)
    return out


def scan(hist, G, H, lam, mcw, step, pool=SERIAL):
    """The compiled ``newton_scan`` of a node's histogram ``hist`` (q, slots, 3). With
    threads, each feature's own best on ``pool``'s threads (a chunk of features each), then
    the choice between them in feature order: the same answer."""
    q, G, H = len(hist), float(G), float(H)
    cells = q * hist.shape[1] * 4  # a scanned slot costs about four added to a histogram
    if len(pool.chunks(q, cells)) == 1:
        return kernels_newton.newton_scan(hist, G, H, lam, mcw, step)
    kv, kk, av = np.empty((2, q)), np.empty((2, q), dtype=np.intp), np.empty(q)
    pool.run(lambda a, b: kernels_newton.newton_scan_features(
        hist[a:b], G, H, lam, mcw, kv[:, a:b], kk[:, a:b], av[a:b]), q, cells)
    return kernels_newton.newton_scan_choice(hist, kv, kk, av, step)


class Siblings:
    """The histograms of a split's two children, made when the first of them is searched:
    the smaller child's (fewer rows; the left on ties) from its rows, the other's as the
    parent's minus it. The root is a family of one (no parent: its histogram from its
    rows). Each child takes its histogram once; the family then lets go of it."""

    __slots__ = ("made", "parent", "small_left", "small_rows")

    def __init__(self, parent, rows_left, rows_right):
        self.parent = parent
        self.small_left = len(rows_left) <= len(rows_right)
        self.small_rows = rows_left if self.small_left else rows_right
        self.made = None

    def take(self, left: bool, build):
        """Child ``left``'s histogram; ``build(rows)`` sums a histogram from rows."""
        if self.made is None:
            small = build(self.small_rows)
            big = None if self.parent is None else np.subtract(self.parent, small)
            self.made = [small, big] if self.small_left else [big, small]
            self.parent = self.small_rows = None
        i = 0 if left else 1
        out, self.made[i] = self.made[i], None
        return out
