"""Compiled kernels for the learners' per-node loops, when numba is installed
(``pip install "rulegen[fast]"``). Histogram boosting: building and subtracting histograms
(:func:`build_histograms`, :func:`family_histograms`), the whole search of a batch of nodes
(:func:`search`: both numeric scans, the categorical scans, the choice between features) and
dividing a node's rows (:func:`divide`). Exact Newton boosting (xgboost_style): a node's
numeric scans (:func:`newton_numeric`) and the division of its sorted orders between a
split's children (:func:`split_sorted`); its histogram mode's kernels are in
:mod:`rulegen.learn.compiled.kernels_newton`, compiled with these.

On small data a node costs more in numpy calls than in arithmetic, and numpy's scan makes
~25 passes over every (node, feature, bin) cell; a compiled loop makes one. The kernels are
the numpy code of :mod:`rulegen.learn.splits.binning`, :mod:`rulegen.learn.splits.histogram_scan`,
:mod:`rulegen.learn.splits.histogram`, :mod:`rulegen.learn.ensembles.newton` and
:mod:`rulegen.learn.splits.builder` written out as loops with the same floating-point operations
in the same order (bins summed in row order, cumulative sums left to right, argmax's tie and
NaN rules), so a model is the same bit for bit with or without numba --
``tests/test_kernels.py`` holds them to that. numpy stays the reference.

``RULEGEN_JIT=0`` in the environment turns them off. Compiled code is cached next to this
file (numba's ``cache=True``; numba's user cache when that is read-only): the first fit after
installing compiles for ~15 s, later processes load the kernels in ~0.4 s.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

EPS = float(np.float32(1e-15))  # LightGBM's kEpsilon (a float): its scanned sides start at it
numba = None  # imported on first use: learners that never call enabled() never load it
ENABLED = None  # decided on the first enabled(): RULEGEN_JIT and whether numba imports
_KERNELS = []


def enabled() -> bool:
    """Whether fits use the compiled kernels. The first call imports numba (~0.2 s and
    ~60 MB) and swaps the module's kernels for numba's dispatchers."""
    global ENABLED
    if ENABLED is None:
        ENABLED = os.environ.get("RULEGEN_JIT", "1") != "0" and _load()
    return ENABLED


def _load() -> bool:
    global numba
    # an optional accelerator: everything works without it. numba refuses to import next
    # to a numpy it does not support, and to cache where no folder is writable (compiling
    # in every process would cost more than it saves): then numpy does the work.
    try:
        import numba as nb

        from rulegen.learn.compiled import (
            kernels_newton,  # noqa: F401 - registers its kernels
            lgbm_kernels,  # noqa: F401 - registers its kernels
        )

        # no fastmath: every operation rounds as numpy's does (no reassociation, no FMA);
        # error_model numpy: x / 0 is inf or nan, as in numpy, not ZeroDivisionError
        jit = nb.njit(cache=True, nogil=True, error_model="numpy")
        compiled = {fn.__name__: jit(fn) for fn in _KERNELS}
    except Exception:  # noqa: BLE001 - any failure means "no accelerator"
        return False
    numba = nb
    # kernels calling kernels find the dispatchers in their own module's names
    for module in {fn.__module__ for fn in _KERNELS}:
        names = sys.modules[module].__dict__
        names.update({k: v for k, v in compiled.items() if k in names})
    return True


def _jit(fn):
    """A kernel: plain Python until :func:`enabled` compiles it (only called then)."""
    _KERNELS.append(fn)
    return fn


@_jit
def build_histograms(codes, feats, off, rows, starts, g, h, out, with_h, with_counts):
    """``out`` (3, nodes, size), zeroed (or row 2 holding known counts when not
    ``with_counts``): node n's rows are ``rows[starts[n]:starts[n+1]]``. Every bin adds its
    rows in row order from 0.0, as ``np.bincount`` does."""
    for n in range(starts.size - 1):
        a, b = starts[n], starts[n + 1]
        for i in range(feats.size):
            f, o = feats[i], off[i]
            for k in range(a, b):
                r = rows[k]
                j = o + codes[f, r]
                out[0, n, j] += g[r]
                if with_h:
                    out[1, n, j] += h[r]
                if with_counts:
                    out[2, n, j] += 1.0


@_jit
def family_histograms(codes, feats, off, rows, starts, g, h, with_h, h_const, use_hc, parents,
                      out):
    """``HistogramSplitFinder._family_histograms``: ``out`` (3, 2P, size) gets the P
    smaller children's histograms from their rows (as :func:`build_histograms`), then the
    P larger ones as ``parents`` (3, P, size) minus them (rounding residue where a larger
    child has no row stays, as in LightGBM)."""
    P = starts.size - 1
    out[:, :P] = 0.0
    build_histograms(codes, feats, off, rows, starts, g, h, out, with_h, True)
    size = out.shape[2]
    for n in range(P):
        for j in range(size):
            if use_hc:
                out[1, n, j] = out[2, n, j] * h_const
            out[2, P + n, j] = parents[2, n, j] - out[2, n, j]
            out[0, P + n, j] = parents[0, n, j] - out[0, n, j]
            out[1, P + n, j] = parents[1, n, j] - out[1, n, j]


@_jit
def divide(codes, f, rows, table, hist, start):
    """A split's two children: ``rows`` (in order) where ``table[codes[f, row]]`` then the
    others, in one array (left is ``[:n_left]``), and the left side's g and h sums from
    the node's histogram ``hist`` (3, size), feature slots from ``start``: the goes-left
    bins added in bin order from 0.0 (``histogram._left_sums``)."""
    n_left = 0
    for k in range(rows.size):
        if table[codes[f, rows[k]]]:
            n_left += 1
    out = np.empty(rows.size, dtype=np.intp)
    a, b = 0, n_left
    for k in range(rows.size):
        r = rows[k]
        if table[codes[f, r]]:
            out[a] = r
            a += 1
        else:
            out[b] = r
            b += 1
    GL = 0.0
    HL = 0.0
    for j in range(table.size):
        if table[j]:
            GL += hist[0, start + j]
            HL += hist[1, start + j]
    return out, n_left, GL, HL


@_jit
def _count(hist, s, j, es, rs):
    """Slot j's row count at node s: LightGBM's estimate from the hessian where ``es``."""
    return np.floor(hist[1, s, j] * rs + 0.5) if es else hist[2, s, j]


@_jit
def _beats(v, best):
    # np.argmax's rule, in the order the candidates are met: a later one wins only when
    # strictly greater; NaN beats everything, the first NaN met stays
    return v > best or (math.isnan(v) and not math.isnan(best))


@_jit
def _gains(lg, lh, rg, rh, lam):
    """histogram_scan._leaf_gains: LightGBM's GetLeafGain of both sides, left then right."""
    return lg * lg / (lh + lam) + rg * rg / (rh + lam)


@_jit
def _fits(lc, lh, rc, rh, min_count, mcw):
    return rc >= min_count and rh >= mcw and lc >= min_count and lh >= mcw


@_jit
def scan_numeric(hist, off, n_bins, num, usable, G, H, C, est, ratio, kind, lam, min_count,
                 mcw, min_split_gain, gains, pos, left, sums):
    """:func:`rulegen.learn.splits.histogram_scan.best_numeric` for the numeric features ``num``
    (local indices) of every node of ``hist`` (3, nodes, size): fills ``gains``, ``pos``,
    ``left`` (nodes, features) and ``sums`` (3, nodes, features: the winner's left g, h and
    count) at those features where ``usable`` (-inf elsewhere). ``est`` / ``ratio`` per
    node: counts are LightGBM's hessian estimates, ``floor(h * ratio + 0.5)``; ``kind`` per
    feature: 0 no NaN bin, 1 a NaN bin, 2 and LightGBM leaves bin 0 out of its histogram."""
    for s in range(hist.shape[1]):
        Gs, Cs, es, rs = G[s], C[s], est[s], ratio[s]
        Hs = H[s] + 2 * EPS
        shift = Gs * Gs / (Hs + lam) + min_split_gain
        for a in range(num.size):
            i = num[a]
            if not usable[s, i]:
                gains[s, i] = -np.inf
                continue
            o, nb, kd = off[i], n_bins[i], kind[i]
            best, bj, bl, blg, blh, blc = -np.inf, 0, True, 0.0, 0.0, 0.0
            if kd > 0 and nb == 1:
                # the NaN bin is the right side, default right
                rg = 0.0 + hist[0, s, o + 1]
                rh = EPS + hist[1, s, o + 1]
                rc = _count(hist, s, o + 1, es, rs)
                lg, lh, lc = Gs - rg, Hs - rh, Cs - rc
                v = _gains(lg, lh, rg, rh, lam)
                bl = False
                if _fits(lc, lh, rc, rh, min_count, mcw) and v > shift:
                    best, blg, blh, blc = v, lg, lh, lc
            else:
                # missing left: the right side from the top value bin down, from kEpsilon
                rg, rh, rc = 0.0, EPS, 0.0
                for t in range(nb - 1, 0, -1):
                    rg += hist[0, s, o + t]
                    rh += hist[1, s, o + t]
                    rc += _count(hist, s, o + t, es, rs)
                    lg, lh, lc = Gs - rg, Hs - rh, Cs - rc
                    if rc < min_count or rh < mcw:
                        continue
                    if lc < min_count or lh < mcw:
                        break
                    v = _gains(lg, lh, rg, rh, lam)
                    if v > shift and v > best:
                        best, bj, blg, blh, blc = v, t - 1, lg, lh, lc
                if kd > 0 and nb >= 2:
                    # missing right: the left side from the bottom (kind 2: from the node
                    # less every bin but bin 0, the hessian less kEpsilon first)
                    lg, lh, lc = 0.0, EPS, 0.0
                    if kd == 2:
                        lg, lh, lc = Gs, Hs - EPS, Cs
                        for t in range(1, nb + 1):  # the value bins, then the NaN bin
                            lg -= hist[0, s, o + t]
                            lh -= hist[1, s, o + t]
                            lc -= _count(hist, s, o + t, es, rs)
                        lg, lh, lc = 0.0 + lg, 0.0 + lh, 0.0 + lc
                    b2, j2, lg2, lh2, lc2 = -np.inf, 0, 0.0, 0.0, 0.0
                    for t in range(nb):
                        if t > 0 or kd == 1:
                            lg += hist[0, s, o + t]
                            lh += hist[1, s, o + t]
                            lc += _count(hist, s, o + t, es, rs)
                        rg, rh, rc = Gs - lg, Hs - lh, Cs - lc
                        if lc < min_count or lh < mcw:
                            continue
                        if rc < min_count or rh < mcw:
                            break
                        v = _gains(lg, lh, rg, rh, lam)
                        if v > shift and v > b2:
                            b2, j2, lg2, lh2, lc2 = v, t, lg, lh, lc
                    if b2 > (best - shift) + shift:
                        best, bj, bl, blg, blh, blc = b2, j2, False, lg2, lh2, lc2
            gains[s, i] = best - shift
            pos[s, i] = bj
            left[s, i] = bl
            sums[0, s, i], sums[1, s, i], sums[2, s, i] = blg, blh, blc


@_jit
def _term(G, H, lam, guard):
    """One side's G^2/(H+l) of a gain; with ``guard``, 0 where H+l <= 0 (numpy's
    ``np.where(D > 0, G*G/D, 0)``: the division is made either way)."""
    D = H + lam
    q = G * G / D
    if guard and not D > 0:
        return 0.0
    return q


@_jit
def _parent_term(G, H, lam):
    """The node's G^2/(H+l) of the gain (0 where H+l <= 0)."""
    return _term(G, H, lam, True)


@_jit
def _admissible(lc, lh, rc, rh, min_count, mcw):
    return lc >= min_count and rc >= min_count and lh >= mcw and rh >= mcw


@_jit
def _score(lg, lh, rg, rh, lam, guard):
    """GL^2/(HL+l) + GR^2/(HR+l); with ``guard`` a side with HL+l <= 0 counts 0
    (histogram_scan's ``_sides``)."""
    return _term(lg, lh, lam, guard) + _term(rg, rh, lam, guard)


@_jit
def _stable_sort(items, key, n):
    """``items[:n]`` reordered by ``key[:n]`` (kept alongside) as ``np.argsort(key,
    kind="stable")`` orders them: ascending, ties in their order, NaN last. An insertion
    sort in place: a feature's categories are few, and numpy's sort allocates per call."""
    for t in range(1, n):
        it, k = items[t], key[t]
        u = t
        # move left past every earlier key that k sorts before (NaN sorts after numbers)
        while u > 0 and (k < key[u - 1] or (math.isnan(key[u - 1]) and not math.isnan(k))):
            items[u], key[u] = items[u - 1], key[u - 1]
            u -= 1
        items[u], key[u] = it, k


@_jit
def scan_categorical(hist, off, n_bins, cat, usable, G, H, C, est, ratio, lam, min_count,
                     mcw, cat_smooth, cat_l2, max_cat_threshold, mdpg, max_onehot, gains,
                     sets, sizes):
    """:func:`rulegen.learn.splits.histogram_scan.best_categorical_rows` for the categorical
    features ``cat`` (local indices) of every node where ``usable``: fills ``gains`` (nodes,
    features; -inf stays where no split) and, per (node, position in ``cat``), the set
    side's sorted codes ``sets[s, a, :sizes[s, a]]``."""
    width = int(n_bins.max()) if n_bins.size else 0
    cnt = np.empty(width)
    used = np.empty(width, dtype=np.intp)
    key = np.empty(width)
    lam2 = lam + cat_l2
    for s in range(hist.shape[1]):
        Gs, Hs, Cs, es, rs = G[s], H[s], C[s], est[s], ratio[s]
        parent = _parent_term(Gs, Hs, lam)
        for a in range(cat.size):
            i = cat[a]
            if not usable[s, i]:
                continue
            o, m = off[i], n_bins[i]
            k = 0
            for c in range(m):
                cnt[c] = _count(hist, s, o + c, es, rs)
                if cnt[c] > 0:
                    k += 1
            if k == 0 or (k == 1 and _count(hist, s, o + m, es, rs) == 0):
                continue
            best, first, b_t, b_dir = -np.inf, True, 0, 0
            if m + 1 <= max_onehot:  # one category against the rest (LightGBM counts its NaN bin)
                for c in range(m):
                    v = -np.inf
                    if cnt[c] > 0:
                        lg, lh = hist[0, s, o + c], hist[1, s, o + c]
                        if _admissible(cnt[c], lh, Cs - cnt[c], Hs - lh, min_count, mcw):
                            v = _score(lg, lh, Gs - lg, Hs - lh, lam, lam <= 0) - parent
                    if first or _beats(v, best):
                        best, b_t, first = v, c, False
                if best > -np.inf:
                    gains[s, i] = best
                    sets[s, a, 0] = b_t
                    sizes[s, a] = 1
                continue
            # categories with >= cat_smooth rows, by G/(H+cat_smooth), ties by code
            n_used = 0
            for c in range(m):
                if cnt[c] > 0 and cnt[c] >= cat_smooth:
                    used[n_used] = c
                    key[n_used] = hist[0, s, o + c] / (hist[1, s, o + c] + cat_smooth)
                    n_used += 1
            _stable_sort(used, key, n_used)  # used[:n_used]: the order of the scans
            order = used
            n_scan = min(max_cat_threshold, (n_used + 1) // 2)
            for d in range(2):  # lowest ratios first, then highest
                cg = ch = cc = group = 0.0
                stopped = False
                for t in range(n_scan):
                    c = order[t] if d == 0 else order[n_used - 1 - t]
                    xg, xh, xc = hist[0, s, o + c], hist[1, s, o + c], cnt[c]
                    if t == 0:
                        cg, ch, cc = xg, xh, xc
                    else:
                        cg, ch, cc = cg + xg, ch + xh, cc + xc
                    group = group + xc
                    rc, rh = Cs - cc, Hs - ch
                    skip = cc < min_count or ch < mcw
                    if not skip and (rc < min_count or rc < mdpg or rh < mcw):
                        stopped = True  # the scan stops here
                    ok = not skip and not stopped
                    cut = ok
                    if mdpg > 0:
                        cut = ok and group >= mdpg
                        if cut:
                            group = 0.0
                    v = -np.inf
                    if cut and _admissible(cc, ch, rc, rh, min_count, mcw):
                        v = _score(cg, ch, Gs - cg, rh, lam2, lam2 <= 0) - parent
                    if first or _beats(v, best):
                        best, b_t, b_dir, first = v, t, d, False
            if best > -np.inf:
                gains[s, i] = best
                size = b_t + 1
                first = 0 if b_dir == 0 else n_used - size
                for t in range(size):  # the set's codes, ascending (insertion: few)
                    c = order[first + t]
                    u = t
                    while u > 0 and sets[s, a, u - 1] > c:
                        sets[s, a, u] = sets[s, a, u - 1]
                        u -= 1
                    sets[s, a, u] = c
                sizes[s, a] = size


@_jit
def search(hist, off, n_bins, num, cat, usable, G, H, C, est, ratio, kind, lam, min_count,
           mcw, min_split_gain, cat_smooth, cat_l2, max_cat_threshold, mdpg, max_onehot, gains,
           best_f, best_gain, best_pos, best_left, best_sums, sets, sizes):
    """Every node's best split, as ``BatchSearch.numpy`` chooses it: the highest gain
    (LightGBM's: less the parent's and ``min_split_gain``) over the numeric winner (the
    first greatest, as np.argmax) and the categorical candidates, ties to the lowest
    feature index; ``best_f`` -1 where none gains more than 0. ``gains`` (nodes, features)
    -inf-filled in; ``best_sums`` (nodes, 3): a numeric winner's left g, h, count."""
    pos = np.zeros(gains.shape, dtype=np.intp)
    left = np.zeros(gains.shape, dtype=np.bool_)
    sums = np.zeros((3,) + gains.shape)
    search_into(hist, off, n_bins, num, cat, usable, G, H, C, est, ratio, kind, lam, min_count,
                mcw, min_split_gain, cat_smooth, cat_l2, max_cat_threshold, mdpg, max_onehot,
                gains, best_f, best_gain, best_pos, best_left, best_sums, sets, sizes, pos, left,
                sums)


@_jit
def search_into(hist, off, n_bins, num, cat, usable, G, H, C, est, ratio, kind, lam, min_count,
                mcw, min_split_gain, cat_smooth, cat_l2, max_cat_threshold, mdpg, max_onehot,
                gains, best_f, best_gain, best_pos, best_left, best_sums, sets, sizes, pos, left,
                sums):
    """:func:`search` with its scans' work arrays given (``pos``, ``left`` like ``gains``,
    ``sums`` (3,) + its shape): a caller searching node after node allocates them once."""
    S = hist.shape[1]
    scan_numeric(hist, off, n_bins, num, usable, G, H, C, est, ratio, kind, lam, min_count,
                 mcw, min_split_gain, gains, pos, left, sums)
    scan_categorical(hist, off, n_bins, cat, usable, G, H, C, est, ratio, lam, min_count,
                     mcw, cat_smooth, cat_l2, max_cat_threshold, mdpg, max_onehot, gains,
                     sets, sizes)
    for a in range(cat.size):
        for s in range(S):
            gains[s, cat[a]] -= min_split_gain  # on the numeric scans' scale
    for s in range(S):
        best_f[s] = -1
        win, top = -1, -np.inf
        for a in range(num.size):
            if gains[s, num[a]] > top:
                win, top = num[a], gains[s, num[a]]
        for a in range(cat.size):
            i = cat[a]
            if sizes[s, a] and (gains[s, i] > top or (gains[s, i] == top and i < win)):
                win, top = i, gains[s, i]
        if win >= 0 and top > 0.0:
            best_f[s] = win
            best_gain[s] = top
            best_pos[s] = pos[s, win]
            best_left[s] = left[s, win]
            best_sums[s, 0], best_sums[s, 1] = sums[0, s, win], sums[1, s, win]
            best_sums[s, 2] = sums[2, s, win]


# --- exact (presorted) Newton splits: xgboost_style ------------------------------------


@_jit
def _newton_score(G, H, lam):
    """newton._score: G^2/(H+l); 0 where H+l <= 0, which only lambda 0 allows."""
    return _term(G, H, lam, not lam > 0)


@_jit
def newton_numeric(S, F, XT, g, h, G, H, lam, mcw, val, pos, how, nn_out):
    """``NewtonSplitFinder._best_numeric``'s scans for the features ``F`` of a node whose
    rows are ``S`` (p, n) sorted by each feature (missing last): per feature the best gain
    ``val`` (bracket minus the parent's term), its position ``pos``, ``how`` (0: missing
    right, 1: missing left, 2: missing alone on the left) and the present-row count."""
    n = S.shape[1]
    cg = np.empty(n)
    ch = np.empty(n)
    base = _newton_score(G, H, lam)
    for a in range(F.size):
        f = F[a]
        nn = 0
        for j in range(n):
            r = S[f, j]
            if j == 0:
                cg[0], ch[0] = g[r], h[r]
            else:
                cg[j], ch[j] = cg[j - 1] + g[r], ch[j - 1] + h[r]
            if not math.isnan(XT[f, r]):
                nn += 1
        nm = n - nn
        last = max(nn - 1, 0)
        Gm = Hm = 0.0
        if nm > 0:
            Gm = G - (cg[last] if nn > 0 else 0.0)
            Hm = H - (ch[last] if nn > 0 else 0.0)
        # pass 1, missing right; position nn-1 is "every present row left"
        best, bp, first = -np.inf, 0, True
        for j in range(n):
            ok = j < n - 1 and XT[f, S[f, j + 1]] > XT[f, S[f, j]]
            if j == last and nm > 0 and nn > 0:
                ok = True
            v = -np.inf
            HR = H - ch[j]
            if ok and ch[j] >= mcw and HR >= mcw:
                v = _newton_score(cg[j], ch[j], lam) + _newton_score(G - cg[j], HR, lam)
            if first or _beats(v, best):
                best, bp, first = v, j, False
        val[a], pos[a], how[a], nn_out[a] = best - base, bp, 0, nn
        if nm == 0:
            continue
        # pass 2, missing left; then "missing alone on the left"; pass 1 wins ties
        b2, p2, first = -np.inf, 0, True
        for j in range(n):
            ok = j < n - 1 and j != last and XT[f, S[f, j + 1]] > XT[f, S[f, j]]
            GL, HL = cg[j] + Gm, ch[j] + Hm
            HR = H - HL
            v = -np.inf
            if ok and HL >= mcw and HR >= mcw:
                v = _newton_score(GL, HL, lam) + _newton_score(G - GL, HR, lam)
            if first or _beats(v, b2):
                b2, p2, first = v, j, False
        b2 = b2 - base
        b0 = -np.inf
        if nn > 0 and Hm >= mcw and H - Hm >= mcw:
            b0 = _newton_score(Gm, Hm, lam) + _newton_score(G - Gm, H - Hm, lam) - base
        use0 = b0 > b2
        if use0:
            b2 = b0
        if b2 > val[a]:
            val[a], pos[a], how[a] = b2, p2, 2 if use0 else 1


@_jit
def split_sorted(S, left, S_l, S_r):
    """Each row of ``S`` (rows sorted by a feature) divided in order: the rows where
    ``left[row]`` into ``S_l``, the others into ``S_r`` (the children's sorted orders)."""
    for f in range(S.shape[0]):
        a = b = 0
        for j in range(S.shape[1]):
            r = S[f, j]
            if left[r]:
                S_l[f, a] = r
                a += 1
            else:
                S_r[f, b] = r
                b += 1
