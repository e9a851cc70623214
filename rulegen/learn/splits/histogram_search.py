"""The best split of every node of a batch, from the nodes' histograms: LightGBM's scans
in numpy (:mod:`rulegen.learn.splits.histogram_scan`) or compiled (:mod:`rulegen.learn.compiled.kernels`),
then the choice between features. Both give the same splits, bit for bit."""

from __future__ import annotations

import numpy as np

from rulegen.learn.compiled import kernels
from rulegen.learn.splits.binning import Layout
from rulegen.learn.splits.histogram_scan import (
    SplitParams,
    best_categorical_rows,
    best_numeric,
)


class BatchSearch:
    """The search of one tree's nodes (local features, their bins, ``layout``).

    ``numpy`` and ``compiled`` take the batch's histograms (3, nodes, layout.size), the
    nodes' sums G, H and row counts C, whether their counts are LightGBM's estimates (and
    rows per unit of hessian), which features each may use, and ``gains`` (nodes, features)
    to fill; they return (node, (feature, gain, cut bin or category set, missing_left, ...))
    for the nodes whose best split gains more than ``min_split_gain``."""

    def __init__(self, layout: Layout, params: SplitParams, n_bins, is_cat, has_nan, h_const):
        self.layout, self.p, self.n_bins, self.is_cat = layout, params, n_bins, is_cat
        self.has_nan, self.h_const = has_nan, h_const

    def compiled(self, hist, G, H, C, estimated, ratio, usable, gains):
        """:meth:`numpy` in one compiled call (:mod:`rulegen.learn.compiled.kernels`): the same
        splits, bit for bit."""
        S, p, lay = len(G), self.p, self.layout
        lam, mcw = p.reg_lambda, p.min_child_weight
        best_f = np.empty(S, dtype=np.intp)
        best_gain = np.empty(S)
        best_pos = np.empty(S, dtype=np.intp)
        best_left = np.empty(S, dtype=bool)
        best_sums = np.empty((S, 3))
        sets = np.zeros((S, lay.cat.size, max(1, p.max_cat_threshold)), dtype=np.intp)
        sizes = np.zeros((S, lay.cat.size), dtype=np.intp)
        kernels.search(hist, lay.off, self.n_bins, lay.num, lay.cat, usable, G, H, C,
                       estimated, ratio, self.has_nan, lam, max(1, p.min_child_samples), mcw,
                       p.min_split_gain, p.cat_smooth, p.cat_l2, p.max_cat_threshold,
                       p.min_data_per_group, p.max_cat_to_onehot, gains, best_f, best_gain,
                       best_pos, best_left, best_sums, sets, sizes)
        out = []
        for s in np.flatnonzero(best_f >= 0).tolist():
            i = int(best_f[s])
            if self.is_cat[i]:
                a = int(lay.cat_position[i])
                out.append((s, (i, float(best_gain[s]), sets[s, a, :sizes[s, a]], False)))
            else:
                out.append((s, (i, float(best_gain[s]), int(best_pos[s]), bool(best_left[s]),
                                *best_sums[s].tolist())))
        return out

    def numpy(self, hist, G, H, C, estimated, ratio, usable, gains):
        """The numpy scans of every node and feature (:mod:`rulegen.learn.splits.histogram_scan`)
        and each node's choice: (node, (feature, gain, cut bin or set, missing_left)) for
        the nodes with a split gaining more than ``min_split_gain``. Fills ``gains``."""
        S, q = len(G), len(self.n_bins)
        cands = [[] for _ in range(S)]  # per node: (gain, local feature, how, missing_left)
        lay = self.layout
        num = lay.num
        if num.size:
            pos_all = np.zeros((S, q), dtype=np.intp)
            left_all = np.zeros((S, q), dtype=bool)
            sums_all = np.zeros((3, S, q))
            for F, index in lay.numeric_blocks(S):
                k = F.size
                sub = hist[:, :, index].reshape(3, S * k, -1)
                self._estimate(sub, np.repeat(estimated, k), np.repeat(ratio, k))
                vals, pos, left, *sums = best_numeric(
                    sub, np.tile(self.n_bins[F], S), np.repeat(G, k), np.repeat(H, k),
                    np.repeat(C, k), self.p, np.tile(self.has_nan[F], S))
                gains[:, F] = vals.reshape(S, k)
                pos_all[:, F] = pos.reshape(S, k)
                left_all[:, F] = left.reshape(S, k)
                sums_all[:, :, F] = np.reshape(sums, (3, S, k))
            vals = gains[:, num]
            vals[~usable[:, num]] = -np.inf
            gains[:, num] = vals
            top = vals.max(axis=1)
            # as LightGBM: the greatest gain, ties to the lowest feature index
            first = num[np.argmax(vals, axis=1)]
            for s in np.flatnonzero(top > -np.inf):
                i = int(first[s])
                cands[s].append((float(gains[s, i]), i, int(pos_all[s, i]), bool(left_all[s, i]),
                                 *sums_all[:, s, i].tolist()))
        if lay.cat.size:
            ns, fs = np.nonzero(usable[:, lay.cat])  # (node, feature) rows, node-major
            sub = hist[:, ns[:, None], lay.cat_index[fs]]
            fs = lay.cat[fs]
            self._estimate(sub, estimated[ns], ratio[ns])
            vals, sets = best_categorical_rows(sub, self.n_bins[fs], G[ns], H[ns], C[ns], self.p)
            vals = vals - self.p.min_split_gain  # on the numeric scans' scale
            gains[ns, fs] = vals
            for j in np.flatnonzero(vals > -np.inf):
                cands[ns[j]].append((float(vals[j]), int(fs[j]), sets[j], False))
        out = []
        for s, found in enumerate(cands):
            if not found:
                continue
            top = max(c[0] for c in found)
            best = min((c for c in found if c[0] == top), key=lambda c: c[1])
            if best[0] > 0.0:
                out.append((s, best[1:2] + best[:1] + best[2:]))
        return out

    @staticmethod
    def _estimate(sub, estimated, ratio) -> None:
        """As LightGBM: with varying hessians a bin's row count is estimated from its
        hessian (the node's rows per unit of hessian, rounded half up). ``sub`` (3, rows,
        bins) is a copy, changed in place; ``estimated``, ``ratio`` (C/H) per row."""
        if estimated.all():
            np.floor(sub[1] * ratio[:, None] + 0.5, out=sub[2])
        elif estimated.any():
            e = np.flatnonzero(estimated)
            sub[2, e] = np.floor(sub[1, e] * ratio[e, None] + 0.5)
