"""Second-order (Newton) trees: XGBoost's split finding on gradients and hessians.

With G, H the sums of the (weighted) gradients and hessians of a node's rows, the note's
regularised objective (lambda ``reg_lambda``, gamma per leaf) gives

* leaf weight ``w* = -G / (H + lambda)``  (:func:`leaf_weight`);
* split gain ``1/2 [GL^2/(HL+l) + GR^2/(HR+l) - (GL+GR)^2/(HL+HR+l)] - gamma``
  (:func:`split_gain`).

:class:`NewtonSplitFinder` plugs into the shared :class:`~rulegen.learn.splits.builder.TreeBuilder`.
For every node and every allowed feature it scores all "first i rows left" splits of the rows
sorted by that feature at once (prefix sums of g and h over a presorted order, filtered down
the tree, never re-sorted), in two passes for missing values: missing rows right, then
missing rows left (the better wins, right on ties: XGBoost's learned default direction).
"All present rows on one side, missing on the other" is a candidate too (threshold +-inf).
A child must keep a hessian sum of at least ``min_child_weight``; a split must improve the
bracket by more than 1e-6 (XGBoost's kRtEps). The best feature wins; ties go to the lowest
feature index. Growing ignores gamma: :func:`~rulegen.learn.ensembles.newton_prune.finish_tree` then
prunes bottom-up every split
whose children are leaves and whose gain (with gamma) is negative, as XGBoost's pruner does.

Thresholds are midpoints ``a/2 + b/2`` of adjacent distinct float32 training values, tested
as ``float32(x) <= t`` (:func:`~rulegen.learn.splits.builder.float32_test`), so rows split exactly as
in training. XGBoost writes ``x < t`` with a float32 midpoint; the two agree on every training
value. A node that saw no missing value of the chosen feature sends missing values left
(XGBoost's default direction on a dense column).

Histogram search (tree_method="approx"): :func:`quantile_bins` cuts every feature at
hessian-weighted quantiles of the rows growing the tree (exact quantiles, not XGBoost's
streaming sketch; re-drawn every tree); a node sums g and h per bin (one ``bincount``) and
scores only the boundaries between bins, in both missing directions. Its tests are the cut
values themselves, ``float32(x) < cut`` (a cut is a float32 training value), as XGBoost's
histogram methods write them.

Categorical features: the categories present at the node are ordered by G/(H+lambda) and
scanned like a numeric feature (XGBoost's partition-based categorical split; exact for
lambda = 0 by Fisher's grouping argument, a heuristic otherwise). Categories not seen at the
node go to the child with the larger hessian sum, codes outside the feature's list too
(``Split.unseen``).
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    NumericTest,
)
from rulegen.learn.compiled import kernels, kernels_newton
from rulegen.learn.ensembles import newton_hist
from rulegen.learn.splits.builder import (
    NodeWork,
    Partition,
    float32_test,
    presorted_subset,
    split_presorted,
)
from rulegen.learn.threads import SERIAL

MIN_BRACKET = 1e-6  # XGBoost's kRtEps: smaller improvements are not splits
_BLOCK = 1 << 18  # elements per (features x rows) work array: ~10 float64 ones live at once


def leaf_weight(G, H, reg_lambda):
    """-G / (H + lambda); 0 where H + lambda is 0 (nothing to learn there)."""
    G, D = np.asarray(G, dtype=np.float64), np.asarray(H, dtype=np.float64) + reg_lambda
    return np.where(D > 0, -G / np.where(D > 0, D, 1.0), 0.0)


def _score(G, H, reg_lambda):
    """G^2 / (H + lambda), 0 where H + lambda <= 0 (hessians are >= 0, so only at lambda 0)."""
    D = np.add(H, reg_lambda)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.multiply(G, G) / D
    if reg_lambda > 0:
        return s
    return np.where(D > 0, s, 0.0)


def split_gain(GL, HL, GR, HR, reg_lambda, gamma=0.0):
    """The note's gain of splitting a node into (GL, HL) and (GR, HR)."""
    bracket = (_score(GL, HL, reg_lambda) + _score(GR, HR, reg_lambda)
               - _score(np.add(GL, GR), np.add(HL, HR), reg_lambda))
    return 0.5 * bracket - gamma


def quantile_bins(XT, order, rows, h, max_bin: int, previous=None, XS=None):
    """Histogram bins from hessian-weighted quantiles of the rows growing a tree.

    ``order`` (p, N) holds every row sorted by each feature (NaN last). For each feature the
    growing rows' values are cut where their cumulative hessian crosses k/max_bin of the
    total (k = 1..max_bin-1; zero total hessian: plain row-count quantiles); the cuts are
    data values. Returns ``(bins, cuts, max_bin)``: ``bins`` (p, N) (a transposed (N, p)
    array of uint16, int32 above 65535 bins) with ``bin(x)`` =
    the number of cuts <= x (so ``bin(x) <= k`` iff ``x < cuts[k]``) and ``max_bin`` for NaN,
    ``cuts`` one sorted float32 array per feature. ``previous``, this function's result for
    the last tree on the same ``XT``, is updated in place: a feature whose cuts did not
    change keeps its bins (the same bins, without a pass over its rows). ``XS`` (p, N):
    ``XT``'s values in ``order`` (:func:`sorted_values`), for the compiled passes."""
    p, N = XT.shape
    inbag = np.zeros(N, dtype=bool)
    inbag[rows] = True
    if kernels.enabled() and XS is None:
        XS = sorted_values(XT, order)
    cuts = _quantile_cuts(XT, XS, order, inbag, len(rows) == N, h, max_bin)
    if previous is not None and previous[2] == max_bin:
        bins, old = previous[0], previous[1]
        redo = [f for f in range(p) if not np.array_equal(old[f], cuts[f])]
    else:
        # stored row by row: the compiled search reads a row's bins of every feature at
        # once; 2 bytes each where they fit (fewer cache lines per row)
        kind = np.uint16 if max_bin <= np.iinfo(np.uint16).max else np.int32
        bins, redo = np.full((N, p), max_bin, dtype=kind).T, list(range(p))
    if redo and kernels.enabled():
        starts = np.cumsum([0] + [len(cuts[f]) for f in redo])
        flat = np.concatenate([cuts[f] for f in redo]) if redo else np.zeros(0, np.float32)
        kernels_newton.assign_bins(XS, order, np.asarray(redo, dtype=np.intp),
                                   flat.astype(XT.dtype), starts, max_bin, bins)
        return bins, cuts, max_bin
    for f in redo:
        present = ~np.isnan(XT[f])
        bins[f] = max_bin
        bins[f, present] = np.searchsorted(cuts[f], XT[f, present], side="right")
    return bins, cuts, max_bin


def sorted_values(XT, order):
    """Every feature's values in its sorted order: (p, N), once per fit."""
    return np.take_along_axis(XT, order, axis=1)


def _quantile_cuts(XT, XS, order, inbag, all_in, h, max_bin):
    """:func:`quantile_bins`'s cuts, one sorted float32 array per feature."""
    p = XT.shape[0]
    if kernels.enabled():
        cand = np.empty((p, max_bin - 1), dtype=XT.dtype)
        lowest, present = np.zeros(p, dtype=XT.dtype), np.zeros(p, dtype=np.intp)
        # (a negative hessian makes the cumulative sums unsorted: numpy decides there)
        if kernels_newton.quantile_candidates(XS, order, inbag, all_in, h, max_bin, cand,
                                              lowest, present):
            out = []
            for f in range(p):
                c = np.unique(cand[f]) if present[f] else np.zeros(0, dtype=np.float32)
                out.append(c[c > lowest[f]])
            return out
    cuts = []
    for f in range(p):  # features, not samples
        rs = order[f][inbag[order[f]]]
        vals = XT[f, rs]
        keep = ~np.isnan(vals)
        rs, vals = rs[keep], vals[keep]
        c = np.zeros(0, dtype=np.float32)
        if len(rs):
            cum = np.cumsum(h[rs])
            if not cum[-1] > 0:
                cum = np.arange(1.0, len(rs) + 1)
            levels = cum[-1] * np.arange(1, max_bin) / max_bin
            c = np.unique(vals[np.minimum(np.searchsorted(cum, levels), len(rs) - 1)])
            c = c[c > vals[0]]  # a cut at the minimum separates nothing
        cuts.append(c)
    return cuts


class NewtonSplitFinder:
    """Split finder over gradients ``g`` and hessians ``h`` (weighted, per global row).

    ``XT`` is (p, N) float32; ``features_at(depth)`` gives the sorted feature ids a node at
    that depth may use (column subsampling); ``categorical`` maps a column to its number of
    categories. Exact search needs ``order`` (p, N), every row sorted by each feature (NaN
    last); histogram search (approx) needs ``bins = quantile_bins(...)`` instead. Node
    state: (rows sorted per feature or None, G, H).
    """

    def __init__(self, XT, g, h, *, reg_lambda, min_child_weight, features_at, order=None,
                 bins=None, categorical=None, subtract=False, leaf_depth=None, pool=SERIAL):
        self.XT, self.order, self.g, self.h = XT, order, g, h
        self.lam, self.mcw = float(reg_lambda), float(min_child_weight)
        self.features_at = features_at
        self.pool = pool  # threads for the compiled per-feature kernels (n_jobs)
        self.bins, self.cuts, max_bin = bins if bins is not None else (None, None, 0)
        self.slots = max_bin + 1  # histogram slots per feature; the last one is "missing"
        self.categorical = dict(categorical or {})
        self.is_cat = np.zeros(XT.shape[0], dtype=bool)
        self.is_cat[list(self.categorical)] = True
        self._mask = np.zeros(XT.shape[1], dtype=bool)
        self.node_rows = []
        self._divided = False  # whether the node being searched was divided
        self.unit_h = None  # whether every h is 1.0 (asked once, by the compiled search)
        # hist: node histograms of every numeric feature, by subtraction (newton_hist)
        self.subtract = bool(subtract)
        self.hist_feats = np.flatnonzero(~self.is_cat)
        self.hist_row = np.cumsum(~self.is_cat) - 1  # feature -> its row in a histogram
        # hist: children at this depth are never searched (max_depth): no sums, no histograms
        self.leaf_depth = leaf_depth if self.subtract else None
        if self.subtract:  # (hist asks now: its nodes' hessian sums are then row counts)
            self.unit_h = bool(np.all(h == 1.0))
            self._ones = np.ones(XT.shape[1]) if self.unit_h else None  # their h[rows]

    def root(self, rows) -> NodeWork:
        rows = np.asarray(rows, dtype=np.intp)
        S = None if self.bins is not None else presorted_subset(self.order, self._mask, rows)
        node = self._node(rows, S)
        if self.subtract:
            node.state += ([newton_hist.Siblings(None, rows, rows), True, None],)
        return node

    def _node(self, rows, S, sums=True) -> NodeWork:
        if not sums:  # a leaf-to-be: finish_tree sums its rows (the value here is provisional)
            return NodeWork(rows, rows[:0], state=(S, math.nan, math.nan))
        if self.unit_h and self.subtract:  # numpy's sum of n ones is n, exactly
            return NodeWork(rows, self._ones[:len(rows)],
                            state=(S, float(self.g[rows].sum()), float(len(rows))))
        hr = self.h[rows]
        G, H = float(self.g[rows].sum()), float(hr.sum())
        return NodeWork(rows, hr, state=(S, G, H))

    def summarize(self, node: NodeWork):
        # the builder summarizes every node once, in id order, after searching it:
        # node_rows[i] are node i's rows if it was not divided (a leaf)
        self.node_rows.append(None if self._divided else node.rows)
        self._divided = False
        _, G, H, *_ = node.state  # provisional: finish_tree sets the final values
        D = H + self.lam  # leaf_weight's arithmetic on one node
        return (-G / D if D > 0 else 0.0,), float(len(node.rows)), None

    # -- search -------------------------------------------------------------------

    def find_split(self, node: NodeWork) -> Partition | None:
        S, G, H, *_ = node.state
        n = len(node.rows)
        if n < 2:
            return None
        feats = np.asarray(self.features_at(node.depth), dtype=np.intp)
        numeric, cats = feats[~self.is_cat[feats]], feats[self.is_cat[feats]]
        best = None
        step = max(1, _BLOCK // n)
        if self.subtract and len(numeric):
            best = self._best_from_histogram(self._histogram(node), numeric, G, H, step)
            numeric = numeric[:0]
        elif self.bins is not None and kernels.enabled() and len(numeric):
            best = self._best_binned_compiled(node.rows, numeric, G, H, step)
            numeric = numeric[:0]
        for start in range(0, len(numeric), step):
            block = numeric[start:start + step]
            if self.bins is None:
                found = self._best_numeric(S, block, G, H)
            else:
                found = self._best_binned(node.rows, block, G, H)
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        for f in cats:
            found = self._best_categorical(node.rows, int(f), G, H)
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        if best is None or not best[0] > MIN_BRACKET:
            return None
        return self._partition(node, best)

    def _admissible(self, HL, HR):
        return (HL >= self.mcw) & (HR >= self.mcw)

    def _best_numeric(self, S, F, G, H):
        if kernels.enabled():
            return self._best_numeric_compiled(S, F, G, H)
        SF = S[F].astype(np.intp)  # gathers by int32 ids are ~2x slower
        q, n = SF.shape
        V = self.XT[F[:, None], SF]
        nn = (~np.isnan(V)).sum(axis=1)  # present rows come first
        nm = n - nn
        cg, ch = np.cumsum(self.g[SF], axis=1), np.cumsum(self.h[SF], axis=1)
        r = np.arange(q)
        last = np.maximum(nn - 1, 0)
        Gm = np.where(nm > 0, G - np.where(nn > 0, cg[r, last], 0.0), 0.0)
        Hm = np.where(nm > 0, H - np.where(nn > 0, ch[r, last], 0.0), 0.0)
        boundary = np.zeros((q, n), dtype=bool)
        boundary[:, :-1] = V[:, 1:] > V[:, :-1]  # NaN compares false
        base = _score(G, H, self.lam)
        # pass 1, missing right; column nn-1 is "every present row left"
        ok1 = boundary  # (in place: pass 2 clears that column again)
        ok1[r, last] |= (nm > 0) & (nn > 0)
        HR = H - ch
        v1 = _score(cg, ch, self.lam)
        v1 += _score(G - cg, HR, self.lam)
        np.putmask(v1, ~(ok1 & self._admissible(ch, HR)), -np.inf)
        p1 = v1.argmax(axis=1)
        val, pos, how = v1[r, p1] - base, p1, np.zeros(q, dtype=np.intp)  # how 0: pass 1
        miss = np.flatnonzero(nm > 0)
        if miss.size:
            # pass 2, missing left (only features with missing rows here); and "missing alone
            # on the left" (how 2). Pass 1 wins ties.
            GL, HL = cg[miss] + Gm[miss, None], ch[miss] + Hm[miss, None]
            HR = H - HL
            v2 = _score(GL, HL, self.lam)
            v2 += _score(G - GL, HR, self.lam)
            ok2 = boundary[miss]
            ok2[np.arange(miss.size), last[miss]] = False  # pass 1's "all present left" column
            np.putmask(v2, ~(ok2 & self._admissible(HL, HR)), -np.inf)
            p2 = v2.argmax(axis=1)
            b2 = v2[np.arange(miss.size), p2] - base
            gm, hm = Gm[miss], Hm[miss]
            b0 = _score(gm, hm, self.lam) + _score(G - gm, H - hm, self.lam) - base
            b0 = np.where((nn[miss] > 0) & self._admissible(hm, H - hm), b0, -np.inf)
            use0 = b0 > b2
            b2 = np.where(use0, b0, b2)
            better = b2 > val[miss]
            sel = miss[better]
            val[sel], pos[sel] = b2[better], p2[better]
            how[sel] = np.where(use0[better], 2, 1)
        return self._choose(S, F, val, pos, how, nn)

    def _best_numeric_compiled(self, S, F, G, H):
        """:meth:`_best_numeric` with its scans compiled (:mod:`rulegen.learn.compiled.kernels`):
        the same split, bit for bit."""
        q = len(F)
        val, pos = np.empty(q), np.empty(q, dtype=np.intp)
        how, nn = np.empty(q, dtype=np.intp), np.empty(q, dtype=np.intp)
        G, H = float(G), float(H)
        # per feature independent: chunks of features on the pool's threads
        self.pool.run(lambda a, b: kernels.newton_numeric(
            S, F[a:b], self.XT, self.g, self.h, G, H, self.lam, self.mcw, val[a:b], pos[a:b],
            how[a:b], nn[a:b]), q, q * S.shape[1])
        return self._choose(S, F, val, pos, how, nn)

    def _choose(self, S, F, val, pos, how, nn):
        """The best of the features' scans (gain ``val``, position ``pos`` in the sorted
        rows, ``how`` 0/1/2 as pass 1 / pass 2 / missing alone, present rows ``nn``) as
        (bracket, feature, (op, threshold), missing_left), or None."""
        i = int(val.argmax())  # first maximum: the lowest feature index
        if val[i] == -np.inf:
            return None
        f, k = int(F[i]), int(pos[i])
        if how[i] == 2:
            return float(val[i]), f, ("<=", -math.inf), True
        if how[i] == 0 and k == nn[i] - 1:
            return float(val[i]), f, ("<=", math.inf), False
        mid = float(self.XT[f, S[f, k]]) / 2.0 + float(self.XT[f, S[f, k + 1]]) / 2.0
        return float(val[i]), f, ("<=", mid), bool(how[i] == 1)

    def _best_binned(self, rows, F, G, H):
        """Histogram search: per feature, sums of g, h and counts in each bin (slot max_bin
        holds missing rows), then every "bins <= k left" split in both missing directions."""
        q, slots = len(F), self.slots
        idx = (self.bins[F[:, None], rows[None, :]] + (np.arange(q) * slots)[:, None]).ravel()
        hist = [np.bincount(idx, weights=np.tile(x, q), minlength=q * slots).reshape(q, slots)
                for x in (self.g[rows], self.h[rows])]
        cnt = np.bincount(idx, minlength=q * slots).reshape(q, slots)
        return self._scan_binned(F, *hist, cnt, G, H)

    def _scan_binned(self, F, Gb, Hb, cnt, G, H):
        """:meth:`_best_binned`'s choice from the features' histograms (q, slots) of g, h
        and row counts."""
        q = len(F)
        Gm, Hm, nm = Gb[:, -1], Hb[:, -1], cnt[:, -1]
        cg, ch, cc = (np.cumsum(a[:, :-1], axis=1) for a in (Gb, Hb, cnt))
        nn = cc[:, -1]
        base = _score(G, H, self.lam)
        # a boundary after bin k: bin k holds rows and some present row lies above it
        ok = (cnt[:, :-1] > 0) & (cc < nn[:, None])
        best = (-np.inf, None)
        for missing_left in (False, True):
            GL = cg + (Gm[:, None] if missing_left else 0.0)
            HL = ch + (Hm[:, None] if missing_left else 0.0)
            v = _score(GL, HL, self.lam) + _score(G - GL, H - HL, self.lam) - base
            valid = ok & self._admissible(HL, H - HL)
            if missing_left:
                valid &= (nm > 0)[:, None]
            v = np.where(valid, v, -np.inf)
            k = v.argmax(axis=1)
            vk = v[np.arange(q), k]
            i = int(vk.argmax())
            if vk[i] > best[0]:
                best = (float(vk[i]), (i, int(k[i]), missing_left))
        # missingness alone: every present row on one side, the missing rows on the other
        alone = _score(Gm, Hm, self.lam) + _score(G - Gm, H - Hm, self.lam) - base
        alone = np.where((nm > 0) & (nn > 0) & self._admissible(Hm, H - Hm), alone, -np.inf)
        i = int(alone.argmax())
        if alone[i] > best[0]:
            return float(alone[i]), int(F[i]), ("<=", math.inf), False
        if best[1] is None:
            return None
        i, k, missing_left = best[1]
        f = int(F[i])
        return best[0], f, ("<", float(self.cuts[f][k])), missing_left

    def _best_binned_compiled(self, rows, F, G, H, step):
        """:meth:`_best_binned` over blocks of ``step`` features, compiled
        (:mod:`rulegen.learn.compiled.kernels_newton`): the same split, bit for bit."""
        if self.unit_h is None:  # squared error, unit weights: the hessian sums are counts
            self.unit_h = bool(np.all(self.h == 1.0))
        q, BT = len(F), self.bins.T
        if len(self.pool.chunks(q, q * len(rows))) == 1:
            found = kernels_newton.newton_binned(
                BT, F, rows, self.g, self.h, self.unit_h, float(G), float(H), self.lam,
                self.mcw, self.slots, step)
            return self._binned_choice(F, *found)
        # newton_binned's two steps, the histogram's features in chunks on the pool's threads
        hist = np.zeros((q, self.slots, 3))
        self.pool.run(lambda a, b: kernels_newton.newton_histogram(
            BT, F[a:b], rows, self.g, self.h, self.unit_h, hist[a:b]), q, q * len(rows))
        return self._binned_choice(F, *newton_hist.scan(hist, G, H, self.lam, self.mcw, step,
                                                        self.pool))

    def _binned_choice(self, F, val, i, k, how, nm):
        """The compiled search's answer (``newton_scan``'s) as a split."""
        if i < 0:
            return None
        f = int(F[i])
        # with how the rows divide: the last bin on the left, whether any row is missing
        if how == 2:
            return float(val), f, ("<=", math.inf), False, (self.slots - 2, nm > 0)
        return float(val), f, ("<", float(self.cuts[f][k])), bool(how), (k, nm > 0)

    def _histogram(self, node):
        """hist: the node's histogram of every numeric feature, made once (by subtraction
        from its parent's unless it is the smaller child or the root)."""
        box = node.state[3]  # [siblings, is left child, histogram once made]
        if box[2] is None:
            if self.unit_h is None:
                self.unit_h = bool(np.all(self.h == 1.0))
            box[2] = box[0].take(box[1], lambda rows: newton_hist.histogram(
                self.bins, self.hist_feats, rows, self.g, self.h, self.slots, self.unit_h,
                self.pool))
            box[0] = None
        return box[2]

    def _best_from_histogram(self, hist, F, G, H, step):
        """The best numeric split of ``F`` from the node's histogram, in blocks of ``step``
        features as :meth:`find_split` takes them (compiled: ``newton_scan``)."""
        sub = hist if len(F) == len(hist) else hist[self.hist_row[F]]  # (all: no copy)
        if kernels.enabled():
            return self._binned_choice(F, *newton_hist.scan(sub, G, H, self.lam, self.mcw,
                                                            step, self.pool))
        best = None
        for a in range(0, len(F), step):
            b = sub[a:a + step]
            found = self._scan_binned(F[a:a + step], b[:, :, 0], b[:, :, 1], b[:, :, 2], G, H)
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        return best

    def _best_categorical(self, rows, f, G, H):
        x = self.XT[f, rows]
        miss = np.isnan(x)
        m = self.categorical[f]
        codes = x[~miss].astype(np.intp)
        gr, hr = self.g[rows], self.h[rows]
        Gc = np.bincount(codes, weights=gr[~miss], minlength=m)
        Hc = np.bincount(codes, weights=hr[~miss], minlength=m)
        present = np.flatnonzero(np.bincount(codes, minlength=m))
        has_miss = bool(miss.any())
        if len(present) < 2 and not (len(present) == 1 and has_miss):
            return None
        Gm, Hm = float(gr[miss].sum()), float(hr[miss].sum())
        ratio = Gc[present] / np.maximum(Hc[present] + self.lam, 1e-300)
        order = present[np.lexsort((present, ratio))]
        cg, ch = np.cumsum(Gc[order]), np.cumsum(Hc[order])
        base = _score(G, H, self.lam)
        best = None
        # (categories on the left in order, missing left?) for k = 1..len; k = len only with
        # missing rows on the other side
        m_p = len(order)
        for missing_left in ((False, True) if has_miss else (False,)):
            ks = np.arange(0 if missing_left else 1, m_p if missing_left else m_p + has_miss)
            if ks.size == 0:
                continue
            GL = np.where(ks > 0, cg[np.maximum(ks - 1, 0)], 0.0) + (Gm if missing_left else 0.0)
            HL = np.where(ks > 0, ch[np.maximum(ks - 1, 0)], 0.0) + (Hm if missing_left else 0.0)
            gain = _score(GL, HL, self.lam) + _score(G - GL, H - HL, self.lam) - base
            gain = np.where(self._admissible(HL, H - HL), gain, -np.inf)
            j = int(gain.argmax())
            if gain[j] > -np.inf and (best is None or gain[j] > best[0]):
                best = (float(gain[j]), f, ("categorical", order[:int(ks[j])], present),
                        missing_left)
        return best

    # -- applying ---------------------------------------------------------------------

    def _divide(self, rows, best):
        """(left rows, right rows, whether a row misses the feature), rows kept in order."""
        _, f, how, missing_left, *binned = best
        if binned:  # from the compiled search: bin <= k iff x < cuts[k], NaN in the last slot
            last_left, has_nan = binned[0]
            table = np.arange(self.slots) <= last_left
            table[-1] = missing_left
            both, n_left = kernels_newton.newton_divide(self.bins, f, rows, table)
            return both[:n_left], both[n_left:], has_nan
        x = self.XT[f, rows]
        nan = np.isnan(x)
        if how[0] == "categorical":
            in_set = np.zeros(self.categorical[f], dtype=bool)
            in_set[how[1]] = True
            left = np.where(nan, missing_left, in_set[np.where(nan, 0, x).astype(np.intp)])
        else:
            op, t = how
            xv = x.astype(np.float64)
            left = np.where(nan, missing_left, xv <= t if op == "<=" else xv < t)
        return rows[left], rows[~left], bool(nan.any())

    def _split_sorted(self, S, rows_l, n_right):
        """``split_presorted``; compiled with threads, a chunk of features on each."""
        p, n = S.shape
        if not kernels.enabled() or len(self.pool.chunks(p, p * n)) == 1:
            return split_presorted(S, self._mask, rows_l, n_right, kernels.enabled())
        S_l = np.empty((p, len(rows_l)), dtype=S.dtype)
        S_r = np.empty((p, n_right), dtype=S.dtype)
        self._mask[rows_l] = True
        try:
            self.pool.run(lambda a, b: kernels.split_sorted(S[a:b], self._mask, S_l[a:b],
                                                            S_r[a:b]), p, p * n)
        finally:
            self._mask[rows_l] = False
        return S_l, S_r

    def _partition(self, node, best) -> Partition:
        bracket, f, how, missing_left, *_ = best
        unseen = None
        rows_l, rows_r, has_nan = self._divide(node.rows, best)
        self._divided = True
        S = node.state[0]
        if S is None:
            sums = not (self.leaf_depth is not None and node.depth + 1 >= self.leaf_depth
                        and how[0] != "categorical")
            children = [self._node(rows_l, None, sums), self._node(rows_r, None, sums)]
            if self.subtract and sums:  # the children's histograms, when first searched
                family = newton_hist.Siblings(self._histogram(node), rows_l, rows_r)
                for child, left in zip(children, (True, False)):
                    child.state += ([family, left, None],)
        else:
            S_l, S_r = self._split_sorted(S, rows_l, len(rows_r))
            children = [self._node(rows_l, S_l), self._node(rows_r, S_r)]
        bigger_left = children[0].state[2] >= children[1].state[2]  # the hessian sums
        if not has_nan:
            missing_left = True  # XGBoost's default on a column with no missing values
        if how[0] == "categorical":
            _, codes_left, present = how
            in_set = np.zeros(self.categorical[f], dtype=bool)
            in_set[codes_left] = True
            absent = np.ones(self.categorical[f], dtype=bool)
            absent[present] = False
            if bigger_left:
                in_set |= absent
            unseen = 0 if bigger_left else 1
            if not in_set.any():  # keep the set side non-empty: swap the children
                in_set = ~in_set
                children.reverse()
                missing_left, unseen = not missing_left, 1 - unseen
            test = CategoricalTest(f, tuple(int(c) for c in np.flatnonzero(in_set)))
        elif how[0] == "<=":
            test = float32_test(f, how[1])
        else:  # a histogram cut: a float32 data value, "x < cut" exactly as in training
            test = NumericTest(f, "<", how[1], "float32")
        return Partition(test, DefaultChild(0 if missing_left else 1), children, 0.5 * bracket,
                         unseen=unseen)
