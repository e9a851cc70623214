"""A whole lightgbm_style tree in one compiled call, when numba is installed (loaded with
:mod:`rulegen.learn.compiled.kernels`, same rules: ``RULEGEN_JIT=0`` turns it off).

On small data a LightGBM-style tree costs far more in Python per node (the builder, the
finder's states and batches) than in arithmetic: ~100 us per split taken, where LightGBM
spends ~17. :func:`grow_tree` is :class:`~rulegen.learn.splits.histogram.HistogramSplitFinder`
under the best-first :class:`~rulegen.learn.splits.builder.TreeBuilder` written out as one loop,
calling the search kernel that finder calls (:func:`kernels.search`) on the same
histograms (:func:`_lgb_histogram` adds what :func:`kernels.build_histograms` adds, in the
same order), so the tree is the same to the bit (``tests/test_lgbm_kernel.py`` compares
them tree for tree):

* node ids in the builder's order (the root, then a taken split's two children); the leaf
  split next is the one of greatest gain, ties to the lower split feature, then the lower
  LightGBM leaf index (a left child keeps its leaf's index, the right one takes the next),
  then the lower node id: the builder's heap order; growth stops at ``num_leaves``;
* a node is searched when the builder would search it (depth below ``max_depth``, at
  least ``max(2, 2 min_child_samples)`` rows; but not the two children of the split that
  takes the last leaf, whose splits can never be taken); the smaller child's histogram (by rows, the
  right one on a tie) is built from its rows, the larger one's is the parent's minus it,
  LightGBM's FixHistogram on both; a feature whose gain at a node is not > 0 is not
  searched below it;
* the children's sums and leaf outputs as the finder's (LightGBM's SplitInfo: the scan's
  left side with its kEpsilon, the right side by subtraction; categorical: the bins' sums);
* rows divided stably, so every histogram adds its rows in the finder's order.

The tree's arrays come back flat; :meth:`TreeGrower.to_tree` makes the builder's IR nodes.

numba's cache checks a kernel's own file only: these kernels compile
:mod:`rulegen.learn.compiled.kernels`'s search into themselves, so after editing that module delete
``__pycache__/lgbm_kernels.*.nb?`` (or touch this file), or the old search runs on.
"""

from __future__ import annotations

import numpy as np

from rulegen.ir.nodes import Tree
from rulegen.learn.compiled import kernels, lgbm_ir
from rulegen.learn.compiled.kernels import EPS, _jit, search_into
from rulegen.learn.splits.binning import Layout

USE = True  # the tests' switch: False grows every tree with the finder and the builder
POOL_LIMIT = 1 << 26  # bytes of histograms kept for open leaves; above: the builder's path


@_jit
def _lgb_histogram(codes, feats, off, rows, ident, g, h, use_hc, h_const, out, s, counts, known,
                   gg, hh, acc):
    """Node ``s`` of ``out`` (3, nodes, size): the histogram of ``rows``, every bin adding
    its rows' g, h and 1 in row order from 0.0 (:func:`kernels.build_histograms`'s sums,
    and with ``use_hc`` the hessian row ``count * h_const`` as ``family_histograms``'s).
    The rows' g and h are gathered once into ``gg``, ``hh`` (LightGBM's ordered gradients;
    with ``ident`` the rows are 0..n-1: their codes read in place) and a bin's three sums
    sit side by side in ``acc`` (size, 3). With ``known``, ``counts`` (size,) are the rows' counts
    already (the root's, every round the same), else they are counted."""
    m = rows.size
    if ident:  # (a class's g and h are columns: strided, read once)
        gg[:m] = g
        if not use_hc:
            hh[:m] = h
    else:
        for k in range(m):
            gg[k] = g[rows[k]]
        if not use_hc:
            for k in range(m):
                hh[k] = h[rows[k]]
    size = out.shape[2]
    acc[:size] = 0.0
    for i in range(feats.size):
        cf, o = codes[feats[i]], off[i]
        if ident:  # the same loops, row k's code in place
            if use_hc and known:
                for k in range(m):
                    acc[o + cf[k], 0] += gg[k]
            elif use_hc:
                for k in range(m):
                    j = o + cf[k]
                    acc[j, 0] += gg[k]
                    acc[j, 2] += 1.0
            elif known:
                for k in range(m):
                    j = o + cf[k]
                    acc[j, 0] += gg[k]
                    acc[j, 1] += hh[k]
            else:
                for k in range(m):
                    j = o + cf[k]
                    acc[j, 0] += gg[k]
                    acc[j, 1] += hh[k]
                    acc[j, 2] += 1.0
        elif use_hc and known:
            for k in range(m):
                acc[o + cf[rows[k]], 0] += gg[k]
        elif use_hc:
            for k in range(m):
                j = o + cf[rows[k]]
                acc[j, 0] += gg[k]
                acc[j, 2] += 1.0
        elif known:
            for k in range(m):
                j = o + cf[rows[k]]
                acc[j, 0] += gg[k]
                acc[j, 1] += hh[k]
        else:
            for k in range(m):
                j = o + cf[rows[k]]
                acc[j, 0] += gg[k]
                acc[j, 1] += hh[k]
                acc[j, 2] += 1.0
    for j in range(size):
        c = counts[j] if known else acc[j, 2]
        out[0, s, j] = acc[j, 0]
        out[1, s, j] = c * h_const if use_hc else acc[j, 1]
        out[2, s, j] = c


@_jit
def _lgb_fix(hist, s, G, H, off, n_bins, fixed_i, fixed_b):
    """LightGBM's FixHistogram on node ``s`` of ``hist`` (3, nodes, size): a feature's most
    frequent bin gets the node's g and h less its other bins, in bin order (the finder's
    ``_fix``: a cumulative sum from the node's sums)."""
    for k in range(fixed_i.size):
        i, b = fixed_i[k], fixed_b[k]
        o = off[i]
        for r in range(2):
            acc = G if r == 0 else H
            for j in range(n_bins[i] + 1):
                if j != b:
                    acc = acc + (-hist[r, s, o + j])
            hist[r, s, o + b] = acc


@_jit
def _lgb_search(hist, ids, S, nG, nH, seg, usable, off, n_bins, num, cat, cat_pos, is_cat,
                kind, zero_bin, many, fp, ip, s_f, s_gain, s_sums, s_cut, s_l2, s_usable, table,
                wf, wb, use, gains, best_f, best_pos, best_sums, sets, sizes, pos, left, sums):
    """``HistogramSplitFinder._search`` (compiled) of the nodes ``ids[:S]``, whose
    histograms are ``hist[:, :S]``: each node's best split into the ``s_*`` arrays and its
    goes-left ``table`` (bins, missing last); ``s_f`` -1 where none. The rest are the
    search's work arrays, made once per tree: ``wf`` (5, 2) floats, ``wb`` (2, 2) flags,
    then :func:`kernels.search_into`'s, for two nodes."""
    lam, mcw, msg, cat_smooth, cat_l2 = fp[0], fp[1], fp[2], fp[3], fp[4]
    min_count, mct, mdpg, max_onehot = ip[0], ip[1], ip[2], ip[3]
    q = off.size
    G, H, C, ratio, best_gain = wf[0], wf[1], wf[2], wf[3], wf[4]
    est, best_left = wb[0], wb[1]
    need = 2 * min_count
    for s in range(S):
        n = ids[s]
        G[s], H[s] = nG[n], nH[n]
        C[s] = float(seg[n, 1] - seg[n, 0])
        est[s] = ip[7] == 0 and H[s] > 0  # varying hessians: LightGBM's count estimates
        ratio[s] = C[s] / (H[s] + 2 * EPS) if est[s] else 0.0
        for j in range(q):
            use[s, j] = usable[n, j] and C[s] >= need
            gains[s, j] = -np.inf
        sizes[s, :] = 0
    search_into(hist, off, n_bins, num, cat, use, G, H, C, est, ratio, kind, lam, min_count,
                mcw, msg, cat_smooth, cat_l2, mct, mdpg, max_onehot, gains, best_f, best_gain,
                best_pos, best_left, best_sums, sets, sizes, pos, left, sums)
    for s in range(S):
        n = ids[s]
        i = best_f[s]
        s_f[n] = i
        if i < 0:
            continue
        s_gain[n] = best_gain[s]
        for j in range(q):
            s_usable[n, j] = gains[s, j] > 0.0
        nb = n_bins[i]
        table[n, :] = False
        if is_cat[i]:
            a = cat_pos[i]
            for t in range(sizes[s, a]):
                table[n, sets[s, a, t]] = True
            s_l2[n] = lam + cat_l2 if many[i] else lam
        else:
            pos = best_pos[s]
            s_cut[n] = pos
            for j in range(nb):
                table[n, j] = j <= pos
            # as LightGBM: a feature without a NaN bin reads NaN as 0
            table[n, nb] = best_left[s] if kind[i] > 0 else zero_bin[i] <= pos
            s_sums[n, 0], s_sums[n, 1] = best_sums[s, 0], best_sums[s, 1]
            s_l2[n] = lam


@_jit
def grow_tree(codes, feats, off, n_bins, num, cat, cat_pos, is_cat, kind, zero_bin, many,
              fixed_i, fixed_b, size, g, h, rows_in, fp, ip, root_counts, kids, loc, cut,
              table, value, seg, perm, out, fwork, iwork):
    """One tree. ``fp``: lambda, min_child_weight, min_split_gain, cat_smooth, cat_l2,
    learning rate; ``ip``: max(1, min_child_samples), max_cat_threshold,
    min_data_per_group, max_cat_to_onehot, num_leaves, max_depth (-1: none), max(2, 2
    min_child_samples), (unused), whether ``root_counts`` (size,) holds the root's row
    counts (else they are written there).
    Fills per node: ``kids`` (-1: leaf), ``loc`` (the split's local feature), ``cut`` (a
    numeric split's last bin on the left), ``table``, ``value`` (leaf value), ``seg`` (its
    rows are ``perm[seg[n, 0]:seg[n, 1]]``); ``out``: every training row's leaf value (rows
    not in ``rows_in`` routed by the bins). ``fwork`` (at least :func:`work_sizes`'
    floats) and ``iwork`` (its ints) hold the histograms and buffers, allocated once per
    fit (fresh pages every tree cost page faults). Returns the node count."""
    scale = fp[5]
    num_leaves, max_depth, min_split = ip[4], ip[5], ip[6]
    # the finder's h_const: every row's hessian the same (squared error: its histogram is
    # the count's multiple), and the root's sums in row order, as LightGBM adds them
    n = g.size
    use_hc = n > 0
    h_const = h[0] if n > 0 else 0.0
    for r in range(n):
        if h[r] != h_const:
            use_hc = False
            break
    if not use_hc:
        h_const = 0.0
    fp[6] = h_const
    ip[7] = use_hc
    m = rows_in.size
    G0 = g[rows_in[0]] if m > 0 else 0.0
    H0 = h[rows_in[0]] if m > 0 else 0.0
    for k in range(1, m):
        G0 += g[rows_in[k]]
        H0 += h[rows_in[k]]
    q = feats.size
    M = 2 * num_leaves - 1
    nG = np.empty(M)
    nH = np.empty(M)
    depth = np.zeros(M, dtype=np.intp)
    leaf_of = np.zeros(M, dtype=np.intp)
    usable = np.ones((M, q), dtype=np.bool_)
    s_f = np.full(M, -1, dtype=np.intp)
    s_gain = np.empty(M)
    s_sums = np.empty((M, 2))
    s_cut = np.zeros(M, dtype=np.intp)
    s_l2 = np.empty(M)
    s_usable = np.zeros((M, q), dtype=np.bool_)
    slot = np.full(M, -1, dtype=np.intp)
    ps = 3 * (num_leaves + 1) * size
    pool = fwork[:ps].reshape((3, num_leaves + 1, size))
    pair = fwork[ps:ps + 6 * size].reshape((3, 2, size))
    one = fwork[ps + 6 * size:ps + 9 * size].reshape((3, 1, size))
    acc = fwork[ps + 9 * size:ps + 12 * size].reshape((size, 3))
    gg = fwork[ps + 12 * size:ps + 12 * size + m]
    hh = fwork[ps + 12 * size + m:ps + 12 * size + 2 * m]
    buf = iwork[:m]
    free = list(range(num_leaves, -1, -1))
    ids = np.empty(2, dtype=np.intp)
    # the search's work arrays (_lgb_search), for two nodes
    wf = np.empty((5, 2))
    wb = np.empty((2, 2), dtype=np.bool_)
    use = np.empty((2, q), dtype=np.bool_)
    gains = np.empty((2, q))
    best_f = np.empty(2, dtype=np.intp)
    best_pos = np.empty(2, dtype=np.intp)
    best_sums = np.empty((2, 3))
    sets = np.zeros((2, cat.size, max(1, ip[1])), dtype=np.intp)
    sizes = np.zeros((2, cat.size), dtype=np.intp)
    pos = np.zeros((2, q), dtype=np.intp)
    left = np.zeros((2, q), dtype=np.bool_)
    sums = np.zeros((3, 2, q))
    perm[:] = rows_in
    kids[:, :] = -1
    seg[0, 0], seg[0, 1] = 0, m
    nG[0], nH[0] = G0, H0
    value[0] = 0.0  # LightGBM: a tree that never splits outputs 0
    if (max_depth < 0 or max_depth > 0) and m >= min_split:
        _lgb_histogram(codes, feats, off, perm, m == n, g, h, use_hc, h_const, one, 0,
                       root_counts, ip[8] != 0, gg, hh, acc)
        if ip[8] == 0:
            root_counts[:] = one[2, 0]
        _lgb_fix(one, 0, G0, H0, off, n_bins, fixed_i, fixed_b)
        ids[0] = 0
        _lgb_search(one, ids, 1, nG, nH, seg, usable, off, n_bins, num, cat, cat_pos, is_cat,
                    kind, zero_bin, many, fp, ip, s_f, s_gain, s_sums, s_cut, s_l2, s_usable,
                    table, wf, wb, use, gains, best_f, best_pos, best_sums, sets, sizes, pos,
                    left, sums)
        if s_f[0] >= 0:
            slot[0] = free.pop()
            pool[:, slot[0]] = one[:, 0]
    n_nodes, leaves = 1, 1
    while leaves < num_leaves:
        # the builder's heap: greatest gain, then lower feature, leaf index, node id
        nid = -1
        for n in range(n_nodes):
            if kids[n, 0] >= 0 or s_f[n] < 0:
                continue
            if nid < 0 or s_gain[n] > s_gain[nid]:
                nid = n
            elif s_gain[n] == s_gain[nid]:
                fn, fb = feats[s_f[n]], feats[s_f[nid]]
                if fn < fb or (fn == fb and leaf_of[n] < leaf_of[nid]):
                    nid = n
        if nid < 0:
            break
        i = s_f[nid]
        f, o, nb = feats[i], off[i], n_bins[i]
        a, b = seg[nid, 0], seg[nid, 1]
        nl = 0
        for k in range(a, b):  # stable: left rows in order, then the right ones
            r = perm[k]
            if table[nid, codes[f, r]]:
                perm[a + nl] = r
                nl += 1
            else:
                buf[k - a - nl] = r
        perm[a + nl:b] = buf[:b - a - nl]
        ps = slot[nid]
        G, H, l2 = nG[nid], nH[nid], s_l2[nid]
        L, R = n_nodes, n_nodes + 1
        kids[nid, 0], kids[nid, 1] = L, R
        loc[nid] = i
        cut[nid] = s_cut[nid]
        if is_cat[i]:
            GL = 0.0
            HL = 0.0
            for j in range(nb + 1):
                if table[nid, j]:
                    GL += pool[0, ps, o + j]
                    HL += pool[1, ps, o + j]
            nG[L], nH[L], nG[R], nH[R] = GL, HL, G - GL, H - HL
            for c in (L, R):
                D = nH[c] + l2
                value[c] = scale * (-nG[c] / D if D > 0 else 0.0)
        else:
            LG, LH = s_sums[nid, 0], s_sums[nid, 1]
            Hs = H + 2 * EPS
            nG[L], nH[L] = LG, LH - EPS
            nG[R], nH[R] = G - LG, Hs - LH - EPS
            value[L] = scale * (-LG / (LH + l2))
            value[R] = scale * (-(G - LG) / ((Hs - LH) + l2))
        seg[L, 0], seg[L, 1], seg[R, 0], seg[R, 1] = a, a + nl, a + nl, b
        leaves += 1
        leaf_of[L], leaf_of[R] = leaf_of[nid], leaves - 1
        d = depth[nid] + 1
        for c in (L, R):
            depth[c] = d
            usable[c, :] = s_usable[nid, :]
        n_nodes += 2
        # (with the last leaf taken no split of theirs can be: the builder searches them,
        # but what it finds changes nothing)
        if (leaves < num_leaves and (max_depth < 0 or d < max_depth)
                and max(nl, b - a - nl) >= min_split):
            # as the finder: the smaller child built (the right one unless the left has
            # strictly fewer rows), the larger the parent's minus it
            small, large = (L, R) if nl < b - a - nl else (R, L)
            _lgb_histogram(codes, feats, off, perm[seg[small, 0]:seg[small, 1]], False, g, h,
                           use_hc, h_const, pair, 0, root_counts, False, gg, hh, acc)
            for j in range(size):  # family_histograms's subtraction
                pair[2, 1, j] = pool[2, ps, j] - pair[2, 0, j]
                pair[0, 1, j] = pool[0, ps, j] - pair[0, 0, j]
                pair[1, 1, j] = pool[1, ps, j] - pair[1, 0, j]
            _lgb_fix(pair, 0, nG[small], nH[small], off, n_bins, fixed_i, fixed_b)
            for k in range(fixed_i.size):
                j = off[fixed_i[k]] + fixed_b[k]
                for r in range(2):
                    pair[r, 1, j] = pool[r, ps, j] - pair[r, 0, j]
            ids[0], ids[1] = small, large
            _lgb_search(pair, ids, 2, nG, nH, seg, usable, off, n_bins, num, cat, cat_pos,
                        is_cat, kind, zero_bin, many, fp, ip, s_f, s_gain, s_sums, s_cut,
                        s_l2, s_usable, table, wf, wb, use, gains, best_f, best_pos, best_sums,
                        sets, sizes, pos, left, sums)
            for t in range(2):
                c = ids[t]
                if seg[c, 1] - seg[c, 0] < min_split:
                    s_f[c] = -1  # the builder does not search it
                if s_f[c] >= 0:
                    slot[c] = free.pop()
                    pool[:, slot[c]] = pair[:, t]
        free.append(ps)
    for n in range(n_nodes):
        if kids[n, 0] < 0:
            for k in range(seg[n, 0], seg[n, 1]):
                out[perm[k]] = value[n]
    if m < out.size:  # rows that did not grow the tree: routed by the bins
        grew = np.zeros(out.size, dtype=np.bool_)
        for k in range(m):
            grew[perm[k]] = True
        for r in range(out.size):
            if grew[r]:
                continue
            n = 0
            while kids[n, 0] >= 0:
                n = kids[n, 0] if table[n, codes[feats[loc[n]], r]] else kids[n, 1]
            out[r] = value[n]
    return n_nodes


@_jit
def softmax_gradients(e, cls, w32, scale, g, h):
    """:meth:`LgbSoftmaxLoss.gradient_hessian <rulegen.learn.ensembles.lgbm_losses.LgbSoftmaxLoss>`
    after its exp, in two passes where numpy makes ten: ``e`` (n, K) the rows' exps
    (Fortran order), ``cls`` each row's class, ``w32`` the float32 weights (empty: all 1).
    The same operations in the same order: each row's exps added class by class, p = e /
    sum, g = p - 1 for the row's class and p for the others, h = (scale p) (1 - p), both
    times the weight, rounded to float32; into ``g``, ``h`` (n, K). ``g`` may be ``e``
    itself: each exp is read once, before its gradient is written there."""
    n, K = e.shape
    total = e[:, 0].copy()
    for k in range(1, K):
        for r in range(n):
            total[r] += e[r, k]
    weighted = w32.size > 0
    for k in range(K):
        for r in range(n):
            p = e[r, k] / total[r]
            gv = p - 1.0 if cls[r] == k else p
            hv = scale * p * (1.0 - p)
            if weighted:
                gv = gv * w32[r]
                hv = hv * w32[r]
            g[r, k] = np.float64(np.float32(gv))
            h[r, k] = np.float64(np.float32(hv))


_NONE_F, _NONE_I = np.zeros(0), np.zeros(0, dtype=np.intp)  # a slot before its first tree


def work_sizes(num_leaves: int, size: int, m: int) -> tuple[int, int]:
    """(floats, ints) :func:`grow_tree`'s ``fwork`` and ``iwork`` need."""
    return 3 * (num_leaves + 1) * size + 12 * size + 2 * m, m


def available() -> bool:
    """Whether lightgbm_style grows its trees here (numba loaded, ``USE``)."""
    return USE and kernels.enabled()


class TreeGrower:
    """What :func:`grow_tree` reads of one fit's bins and parameters; a tree grows through
    :meth:`start`, :meth:`run` and :meth:`finish`. ``params``:
    :class:`~rulegen.learn.splits.histogram_scan.SplitParams`."""

    def __init__(self, bins, params, num_leaves: int, max_depth, scale: float, w):
        self.bins, self.num_leaves = bins, int(num_leaves)
        self.fp = np.array([params.reg_lambda, params.min_child_weight, params.min_split_gain,
                            params.cat_smooth, params.cat_l2, float(scale), 0.0])
        mcs = int(params.min_child_samples)
        self.ip = np.array([max(1, mcs), params.max_cat_threshold, params.min_data_per_group,
                            params.max_cat_to_onehot, self.num_leaves,
                            -1 if max_depth is None else int(max_depth), max(2, 2 * mcs), 0, 0],
                           dtype=np.intp)
        self.max_onehot = int(params.max_cat_to_onehot)
        self.w = w
        self.unit_weights = bool(np.all(w == 1.0))
        self._every = None  # the context of trees that use every feature
        # a fit's tests, shared by its trees: (feature << 32) | cut -> NumericTest,
        # (feature, goes-left bins as bytes) -> CategoricalTest
        self.tests = {}
        self.root_counts = None
        # grow_tree's buffers, kept for the fit: slot -> (floats, ints), one slot a thread
        self.work = {}
        # id(nodes) -> (nodes, 1, split features) of the trees whose arrays to_tree checked
        # for everything validate's per-node check would (validate's ``plain``)
        self.plain = {}

    def _context(self, feats) -> tuple:
        bins = self.bins
        is_cat = bins.is_categorical[feats]
        n_bins = bins.n_bins[feats].astype(np.intp)
        lay = Layout(n_bins, is_cat)
        # as HistogramSplitFinder: 0 no NaN bin, 1 a NaN bin, 2 and LightGBM's histograms
        # leave bin 0 out; FixHistogram on the features whose most frequent bin is not 0
        kind = bins.has_missing[feats].astype(np.int8)
        fixed = np.zeros(0, dtype=np.intp)
        if bins.most_freq is not None:
            most_freq = bins.most_freq[feats]
            kind += (kind > 0) & (most_freq == 0)
            fixed = np.flatnonzero(most_freq > 0)
        fixed_b = bins.most_freq[feats][fixed].astype(np.intp) if fixed.size else fixed
        zero_bin = np.array([0 if c else int(np.searchsorted(bins.edges[f], 0.0))
                             for f, c in zip(feats.tolist(), is_cat.tolist())], dtype=np.intp)
        many = is_cat & (n_bins + 1 > self.max_onehot)
        arrays = (np.ascontiguousarray(feats, dtype=np.intp), lay.off, n_bins, lay.num, lay.cat,
                  lay.cat_position.astype(np.intp), is_cat, kind, zero_bin, many,
                  fixed.astype(np.intp), fixed_b)
        width = int(n_bins.max(initial=0)) + 1
        pool = 3 * 8 * (self.num_leaves + 1) * lay.size
        return arrays, lay.size, width, pool

    def context(self, feats):
        if len(feats) == len(self.bins.n_bins):
            if self._every is None:
                self._every = self._context(np.asarray(feats, dtype=np.intp))
            return self._every
        return self._context(np.asarray(feats, dtype=np.intp))

    def start(self, ctx, rows, g, h) -> list:
        """One tree's arguments and output arrays: a tree grows in three steps, ``start``,
        :meth:`run` (several trees may run at once on threads, each in its own ``slot``) and
        :meth:`finish`, which gives the IR tree and every training row's leaf value, as the
        builder and :meth:`HistogramSplitFinder.leaf_values` give them."""
        arrays, size, width, _ = ctx
        n, m = len(g), len(rows)
        if not self.unit_weights and m > 1 and not np.all(rows[1:] > rows[:-1]):
            raise ValueError("the rows of a tree must ascend")  # (to_tree's support)
        fp, ip = self.fp.copy(), self.ip.copy()
        # the root's row counts are the same every round when it holds every row and the
        # tree every feature: counted once per fit
        every = m == n and ctx is self._every
        counts = self.root_counts if every and self.root_counts is not None else None
        ip[8] = counts is not None
        if counts is None:
            counts = np.full(size, np.nan)  # (stays NaN if the root is not searched)
        M = 2 * self.num_leaves - 1
        outputs = (np.empty((M, 2), dtype=np.intp), np.zeros(M, dtype=np.intp),  # kids, loc
                   np.zeros(M, dtype=np.intp), np.zeros((M, width), dtype=np.bool_),  # cut, table
                   np.zeros(M), np.zeros((M, 2), dtype=np.intp),  # value, seg
                   np.empty(m, dtype=np.intp), np.empty(n))  # perm, out
        return [arrays, size, g, h, np.asarray(rows, dtype=np.intp), fp, ip, counts, every,
                outputs, 0]

    def run(self, job, slot: int) -> None:
        """:func:`grow_tree` on ``job`` (:meth:`start`) with the work buffers of ``slot``:
        compiled without the interpreter lock, so trees in different slots grow at once."""
        arrays, size, g, h, rows, fp, ip, counts, _, outputs, _ = job
        nf, ni = work_sizes(self.num_leaves, size, len(rows))
        fwork, iwork = self.work.get(slot, (_NONE_F, _NONE_I))
        if fwork.size < nf or iwork.size < ni:
            fwork, iwork = np.empty(nf), np.empty(ni, dtype=np.intp)
            self.work[slot] = (fwork, iwork)
        job[-1] = grow_tree(self.bins.codes, *arrays, size, g, h, rows, fp, ip, counts,
                            *outputs, fwork, iwork)

    def finish(self, job) -> tuple[Tree, np.ndarray]:
        """(the IR tree, every training row's leaf value) of a :meth:`run` job."""
        arrays, counts, every, outputs, count = job[0], job[7], job[8], job[9], job[10]
        if every and not np.isnan(counts[0]):
            self.root_counts = counts
        kids, loc, cut, table, value, seg, perm, out = outputs
        return self.to_tree(arrays, count, kids, loc, cut, table, value, seg, perm), out

    def to_tree(self, arrays, count, kids, loc, cut, table, value, seg, perm) -> Tree:
        """The builder's IR nodes from :func:`grow_tree`'s arrays
        (:func:`lgbm_ir.tree_from_arrays`)."""
        return lgbm_ir.tree_from_arrays(self, arrays, count, kids, loc, cut, table, value,
                                        seg, perm)
