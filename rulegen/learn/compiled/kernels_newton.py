"""Compiled kernels of xgboost_style's histogram mode (tree_method="approx"), loaded with
the others by :func:`rulegen.learn.compiled.kernels.enabled` (same rules: numba, ``RULEGEN_JIT``,
numba's cache). They are :func:`rulegen.learn.ensembles.newton.quantile_bins` and
``NewtonSplitFinder._best_binned`` written as loops with the same floating-point operations
in the same order (cumulative sums left to right, bins summed in row order from 0.0,
argmax's first-maximum and NaN rules, the numpy code's blocks of features), so a model is
the same bit for bit with or without numba (``tests/test_newton_hist.py``).
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.learn.compiled.kernels import _beats, _jit, _term


@_jit
def quantile_candidates(XS, order, inbag, all_in, h, max_bin, cand, lowest, present):
    """Per feature f, ``quantile_bins``'s picked values before ``np.unique``:
    ``cand[f, k-1]`` is the in-bag present value where the cumulative hessian (in sorted
    order) first reaches ``k/max_bin`` of the total (row counts when the total is not
    > 0), ``lowest[f]`` the smallest value, ``present[f]`` how many there are (0: no cut).
    ``XS[f]`` are feature f's values in the sorted order ``order[f]`` (NaN last); with
    ``all_in`` every row is in the bag. Returns False when some cumulative hessian
    decreases (a negative hessian): there numpy's binary search decides, and the caller
    uses it."""
    p, N = XS.shape
    cum = np.empty(N)
    vals = np.empty(N, dtype=XS.dtype)
    for f in range(p):
        n = 0
        c = 0.0
        for j in range(N):
            r = order[f, j]
            if not all_in and not inbag[r]:
                continue
            x = XS[f, j]
            if math.isnan(x):  # NaN sorts last: the rest are missing too
                break
            nxt = c + h[r] if n else h[r]  # np.cumsum: the first sum is the first value
            if n and nxt < c:
                return False
            c = nxt
            cum[n] = c
            vals[n] = x
            n += 1
        present[f] = n
        if n == 0:
            continue
        lowest[f] = vals[0]
        counts = not cum[n - 1] > 0
        total = float(n) if counts else cum[n - 1]
        i = 0
        for k in range(1, max_bin):
            level = total * k / max_bin
            # first position whose cumulative sum reaches the level (searchsorted, left)
            while i < n and (i + 1.0 if counts else cum[i]) < level:
                i += 1
            cand[f, k - 1] = vals[min(i, n - 1)]
    return True


@_jit
def assign_bins(XS, order, feats, cuts, starts, max_bin, bins):
    """``bins[f, r]`` = the number of cuts <= x (``max_bin`` for NaN) for the features
    ``feats``, feature ``feats[a]``'s sorted cuts being ``cuts[starts[a]:starts[a+1]]``: one
    walk of the values in sorted order (``XS``, as above)."""
    for a in range(feats.size):
        f = feats[a]
        lo, hi = starts[a], starts[a + 1]
        j = lo
        for t in range(order.shape[1]):
            r = order[f, t]
            x = XS[f, t]
            if math.isnan(x):
                bins[f, r] = max_bin
                continue
            while j < hi and cuts[j] <= x:
                j += 1
            bins[f, r] = j - lo


@_jit
def _newton_score(G, H, lam):
    return _term(G, H, lam, not lam > 0)


@_jit
def newton_binned(BT, F, rows, g, h, unit_h, G, H, lam, mcw, slots, step):
    """``NewtonSplitFinder.find_split``'s numeric search of a node in histogram mode
    (approx): :func:`newton_histogram` of the node's rows, then :func:`newton_scan`."""
    hist = np.zeros((F.size, slots, 3))
    newton_histogram(BT, F, rows, g, h, unit_h, hist)
    return newton_scan(hist, G, H, lam, mcw, step)


@_jit
def newton_histogram(BT, F, rows, g, h, unit_h, hist):
    """Adds to ``hist`` (q, slots, 3), zeroed, the g, h and row count of every bin of
    every feature of ``F`` (slot ``slots-1``: missing rows): one pass over the rows, each
    bin summed in row order from 0.0 as ``np.bincount``. ``BT`` (N, p) holds the bins row
    by row (``quantile_bins``'s array transposed). With ``unit_h``, every h being 1.0, the
    hessian sums are the counts (adding ones from 0.0 is exact)."""
    q = F.size
    for t in range(rows.size):
        r = rows[t]
        gr, hr = g[r], h[r]
        for i in range(q):
            j = BT[r, F[i]]
            hist[i, j, 0] += gr
            if not unit_h:
                hist[i, j, 1] += hr
            hist[i, j, 2] += 1.0
    if unit_h:
        hist[:, :, 1] = hist[:, :, 2]


@_jit
def newton_histogram_columns(codes, F, rows, g, h, unit_h, hist):
    """:func:`newton_histogram` from bins stored feature by feature (``codes`` (p, N)
    contiguous, hist's): the rows' g and h gathered once, then
    :func:`newton_histogram_gathered`. Every bin still adds its rows in row order from 0.0:
    the same sums, bit for bit."""
    n = rows.size
    gr = np.empty(n)
    hr = np.empty(n)
    for t in range(n):
        gr[t] = g[rows[t]]
        hr[t] = h[rows[t]]
    newton_histogram_gathered(codes, F, rows, gr, hr, unit_h, hist)


@_jit
def newton_histogram_gathered(codes, F, rows, gr, hr, unit_h, hist):
    """The histograms of :func:`newton_histogram_columns` from the g and h of ``rows``
    (``gr[t]``, ``hr[t]`` of row ``rows[t]``): one feature at a time, so its slots stay in
    the nearest cache."""
    n = rows.size
    for i in range(F.size):
        f = F[i]
        hi = hist[i]
        for t in range(n):
            j = codes[f, rows[t]]
            hi[j, 0] += gr[t]
            if not unit_h:
                hi[j, 1] += hr[t]
            hi[j, 2] += 1.0
    if unit_h:
        hist[:, :, 1] = hist[:, :, 2]


@_jit
def newton_scan(hist, G, H, lam, mcw, step):
    """The best split of a node from its histogram ``hist`` (q, slots, 3), one row per
    candidate feature: :func:`newton_scan_features` of every feature, then
    :func:`newton_scan_choice`. Returns (gain, feature row or -1, k, how, missing rows of
    that feature): how 0 missing right, 1 missing left, 2 missing alone."""
    q = hist.shape[0]
    kv, kk, av = np.empty((2, q)), np.empty((2, q), dtype=np.intp), np.empty(q)
    newton_scan_features(hist, G, H, lam, mcw, kv, kk, av)
    return newton_scan_choice(hist, kv, kk, av, step)


@_jit
def newton_scan_features(hist, G, H, lam, mcw, kv, kk, av):
    """Each feature's own best of a node's histogram ``hist`` (q, slots, 3), as
    ``_scan_binned`` scores them: ``kv[ml, i]``, ``kk[ml, i]`` the best gain and bin of "bins
    <= k left" with missing right (ml 0) and left (ml 1), ``av[i]`` missing alone. One
    feature's numbers depend on its row of ``hist`` only (rows may be done apart)."""
    q, slots = hist.shape[0], hist.shape[1]
    m = slots - 1
    base = _newton_score(G, H, lam)
    for i in range(q):
        hb = hist[i]
        nn = 0.0
        for k in range(m):
            nn += hb[k, 2]
        Gm, Hm, nm = hb[m, 0], hb[m, 1], hb[m, 2]
        for ml in range(2):
            bv, bk = -np.inf, 0
            cg = ch = cc = 0.0
            # missing left without missing rows: every k is -inf (k = 0 kept), no scan
            for k in range(m if ml == 0 or nm > 0 else 0):
                if k == 0:
                    cg, ch, cc = hb[0, 0], hb[0, 1], hb[0, 2]
                else:
                    cg, ch, cc = cg + hb[k, 0], ch + hb[k, 1], cc + hb[k, 2]
                GL = cg + (Gm if ml else 0.0)
                HL = ch + (Hm if ml else 0.0)
                v = -np.inf
                if (hb[k, 2] > 0 and cc < nn and HL >= mcw and H - HL >= mcw
                        and (ml == 0 or nm > 0)):
                    v = _newton_score(GL, HL, lam) + _newton_score(G - GL, H - HL, lam) - base
                if k == 0 or _beats(v, bv):
                    bv, bk = v, k
            kv[ml, i], kk[ml, i] = bv, bk
        # missingness alone: every present row on one side, the missing rows on the other
        v = -np.inf
        if nm > 0 and nn > 0 and Hm >= mcw and H - Hm >= mcw:
            v = _newton_score(Gm, Hm, lam) + _newton_score(G - Gm, H - Hm, lam) - base
        av[i] = v


@_jit
def newton_scan_choice(hist, kv, kk, av, step):
    """:func:`newton_scan`'s choice between the features' own bests, in feature order: in
    blocks of ``step`` as numpy takes them (a later block wins only when strictly better),
    each block as ``_scan_binned`` (missing right, then missing left, then missing alone;
    first maximum within each)."""
    q, m = hist.shape[0], hist.shape[1] - 1
    best_v, best_i, best_k, best_how = -np.inf, -1, 0, 0
    for start in range(0, q, step):
        stop = min(start + step, q)
        blk_v, blk_i, blk_k, blk_how = -np.inf, -1, 0, 0
        for ml in range(2):
            fv, fi, fk = -np.inf, -1, 0
            for i in range(start, stop):
                if i == start or _beats(kv[ml, i], fv):
                    fv, fi, fk = kv[ml, i], i, kk[ml, i]
            if fv > blk_v:
                blk_v, blk_i, blk_k, blk_how = fv, fi, fk, ml
        a_v, a_i = -np.inf, -1
        for i in range(start, stop):
            if i == start or _beats(av[i], a_v):
                a_v, a_i = av[i], i
        if a_v > blk_v:
            blk_v, blk_i, blk_k, blk_how = a_v, a_i, 0, 2
        if blk_i >= 0 and (best_i < 0 or blk_v > best_v):
            best_v, best_i, best_k, best_how = blk_v, blk_i, blk_k, blk_how
    nm = hist[best_i, m, 2] if best_i >= 0 else 0.0
    return best_v, best_i, best_k, best_how, nm


@_jit
def newton_divide(codes, f, rows, table):
    """A split's two children: ``rows`` where ``table[codes[f, row]]`` (left), then the
    others, each in the order of ``rows``, in one array (left is ``[:n_left]``), and
    ``n_left``. One pass without branches (a row's side is a coin flip to the CPU): every
    row is written to both sides, the side it belongs to keeps it."""
    n = rows.size
    out = np.empty(n, dtype=np.intp)
    right = np.empty(n, dtype=np.intp)
    a = 0
    for k in range(n):
        r = rows[k]
        out[a] = r
        right[k - a] = r
        a += table[codes[f, r]]
    out[a:] = right[:n - a]
    return out, a


@_jit
def bin_values(x, cuts, max_bin, out):
    """``out[i]`` = the number of ``cuts`` (sorted) <= ``x[i]`` (``np.searchsorted(cuts, x,
    side="right")``), ``max_bin`` where ``x[i]`` is NaN."""
    m = cuts.size
    for i in range(x.size):
        v = x[i]
        if math.isnan(v):
            out[i] = max_bin
            continue
        lo, hi = 0, m
        while lo < hi:
            mid = (lo + hi) >> 1
            if cuts[mid] <= v:
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo
