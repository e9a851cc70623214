"""A compiled grower for a whole CART tree on numeric data, used by the random forest
when numba is installed (``rulegen[fast]``; ``RULEGEN_JIT=0`` turns it off as it does
:mod:`rulegen.learn.compiled.kernels`).

A fully grown forest tree has hundreds of small nodes, and the numpy split finder of
:mod:`rulegen.learn.splits.builder` pays ~0.15 ms of calls for each; this grows the tree in one
compiled call. It is :class:`~rulegen.learn.splits.builder.NumericSplitFinder` with
``splitter="best"`` under :class:`~rulegen.learn.splits.builder.TreeBuilder`, written out as loops
with the same floating-point operations in the same order, so the IR tree is the same to
the bit (``tests/test_forest_kernel.py``):

* node ids in the builder's order (pre-order depth first; creation order best first, the
  heap's order among equal improvements: the lower id);
* the same stop rules, checked before a node is searched, and one ``rng.permutation`` per
  searched node (numba's Generator draws numpy's stream);
* criteria summed as ``criteria.py`` sums them: class weights in row order from 0.0,
  cumulative sums left to right, the proxies' operations in the same association; the
  first maximum wins, a NaN proxy never does (criteria.py masks it), blocks of features compared
  strictly as ``best_numeric`` does;
* a node's rows and each feature's sorted rows divided stably, as the numpy filter does.

Covered: the criteria ``gini`` and ``squared_error`` (multi-output too). A regression
node's statistics (``SquaredError.stats``: numpy's pairwise sum and BLAS dot products) are
computed by :mod:`rulegen.learn.compiled.numpy_sums` with numpy's own summation orders (its sum
written out, its BLAS ddot called by address), checked against numpy on the first
regression fit (:func:`numpy_blas`); with several outputs, or where that check fails, they
are asked of the numpy criterion itself through numba's object mode (~30 us a node).
Either way they are numpy's bits. Anything else
(entropy: numpy's vectorised log need not round as the C library's does; absolute
error; ``min_weight_fraction_leaf`` > 0, whose stop rule takes numpy's pairwise sum;
random splitter; categorical or oblique splits) is grown by the numpy finder.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from rulegen.learn.compiled import kernels, numpy_sums

# load() replaces these with their compiled dispatchers, which the kernels then call
from rulegen.learn.compiled.numpy_sums import dot, pairwise_sum

GINI, SQUARED = 0, 1
_EPS = float(np.finfo(np.float64).eps)  # builder.EPSILON
_BLOCK = 1 << 18  # NumericSplitFinder._block: features are compared block by block

_grow = None  # the compiled grower after load(); False: none
# id -> the numpy criterion that object mode asks for a regression node's stats (by id: a
# kernel cannot hold a Python object, and forests fitted at once on threads each have theirs)
_CRITERIA = weakref.WeakValueDictionary()


def register(criterion) -> int:
    """The key that :func:`grow` takes for ``criterion``."""
    _CRITERIA[id(criterion)] = criterion
    return id(criterion)


_KERNELS = []
numba = None
USE = True
BLAS = None  # numpy_blas()'s answer once asked: (address, 64-bit ints?); address 0: object mode


def _jit(fn):
    """A kernel: plain Python until :func:`load` compiles it."""
    _KERNELS.append(fn)
    return fn


def load():
    """The compiled grower, or None without numba (or with ``RULEGEN_JIT=0``, or ``USE``
    False: the tests' switch to compare with the numpy finder)."""
    global _grow, numba
    if not USE:
        return None
    if _grow is None:
        _grow = False
        if kernels.enabled():
            try:
                numba = kernels.numba
                sums = numpy_sums.__dict__
                sums["ddot64"], sums["ddot32"] = numpy_sums.intrinsics(numba)
                # (split_stats holds the GIL in its object-mode block only; marked nogil it
                # would only warn so, since its callers release the GIL anyway)
                compiled = {fn.__name__: numba.njit(cache=True, nogil=fn.__name__ != "split_stats",
                                                    error_model="numpy")(fn)
                            for fn in (*_KERNELS, *numpy_sums.KERNELS)}
            except Exception:  # noqa: BLE001 - any failure means "no accelerator"
                return None
            # kernels calling kernels find the dispatchers in their module's names
            globals().update(compiled)
            sums.update({fn.__name__: compiled[fn.__name__] for fn in numpy_sums.KERNELS})
            _grow = compiled["grow"]
    return _grow or None


def numpy_blas() -> tuple[int, bool]:
    """For :func:`grow` (after :func:`load`), asked once, by regression only: numpy's
    cblas_ddot for :func:`squared_stats` if the compiled sums give numpy's bits on the
    probes, else (0, False): object mode."""
    global BLAS
    if BLAS is None:
        found = None
        try:
            found = numpy_sums.dot_address()
            if found and not numpy_sums.agrees(numpy_sums.pairwise_sum, numpy_sums.dot, *found):
                found = None
        except Exception:  # noqa: BLE001 - any failure means "ask numpy"
            found = None
        BLAS = found or (0, False)
    return BLAS


def _regression_stats(key, T, w, rows, n_left, imp, weight, value):
    """Object mode: the numpy criterion's own arithmetic (its BLAS dot products) for the
    rows ``rows[:n_left]`` and ``rows[n_left:]`` (all of them when n_left is 0)."""
    parts = (rows[:n_left], rows[n_left:]) if n_left else (rows,)
    for i, idx in enumerate(parts):
        st = _CRITERIA[key].stats(T, w, idx)
        imp[i], weight[i] = st.impurity, st.weight
        value[i] = st.value


@_jit
def class_stats(T, w, rows, a, b, counts):
    counts[:] = 0.0
    for k in range(a, b):
        r = rows[k]
        counts[T[r]] += w[r]
    total = 0.0
    sq = 0.0
    for c in range(counts.size):
        total += counts[c]
    for c in range(counts.size):
        sq += counts[c] * counts[c]
    return 1.0 - sq / (total * total), total


@_jit
def squared_stats(T2, w, rows, a, b, blas, int64, ww, yy):
    """``SquaredError.stats`` of one output for the rows ``rows[a:b]``: (impurity, weight,
    mean), summed as numpy sums them (``ww``, ``yy``: scratch of at least b - a)."""
    n = b - a
    for k in range(n):
        r = rows[a + k]
        ww[k] = w[r]
        yy[k] = T2[r, 0]
    wsum = pairwise_sum(ww, 0, n)  # ww.sum()
    mean = dot(blas, int64, ww, yy, n) / wsum  # (ww @ Y) / wsum
    for k in range(n):
        d = yy[k] - mean
        yy[k] = d * d  # (Y - mean) ** 2
    return dot(blas, int64, ww, yy, n) / wsum, wsum, mean


@_jit
def split_stats(crit, key, T, T2, w, rows, n_left, imp, weight, value, blas, int64, scratch):
    """Stats of the rows ``rows[:n_left]`` (slot 0) and ``rows[n_left:]`` (slot 1), or of
    all of them (slot 0) when n_left is 0: impurity, support and class weights or mean."""
    if crit == GINI:
        if n_left == 0:
            imp[0], weight[0] = class_stats(T, w, rows, 0, rows.size, value[0])
        else:
            imp[0], weight[0] = class_stats(T, w, rows, 0, n_left, value[0])
            imp[1], weight[1] = class_stats(T, w, rows, n_left, rows.size, value[1])
        return
    if blas != 0 and T2.shape[1] == 1:
        if n_left == 0:
            imp[0], weight[0], value[0, 0] = squared_stats(T2, w, rows, 0, rows.size, blas,
                                                           int64, scratch[0], scratch[1])
        else:
            imp[0], weight[0], value[0, 0] = squared_stats(T2, w, rows, 0, n_left, blas, int64,
                                                           scratch[0], scratch[1])
            imp[1], weight[1], value[1, 0] = squared_stats(T2, w, rows, n_left, rows.size, blas,
                                                           int64, scratch[0], scratch[1])
        return
    with numba.objmode():
        _regression_stats(key, T2, w, rows, n_left, imp, weight, value)


@_jit
def proxy(crit, al, ar, wl, wr):
    if crit == GINI:
        return -wr * (1.0 - ar / (wr * wr)) - wl * (1.0 - al / (wl * wl))
    return al / wl + ar / wr


@_jit
def scan(crit, S, f, a, b, start, n_first, T, T2, w, XT, nm, nn, msl, mwl, tot, run, cls, rot):
    """One pass of ``_two_pass`` over the sequence S[f, a:b] rotated by ``start``
    (``rot``: pass 2, missing rows first). Returns (best proxy, its position).
    ``cls``: scratch of K entries."""
    n = b - a
    K = tot.size
    # totals first: cumsum's last element, summed in the same order
    wt = 0.0
    tot[:] = 0.0
    for k in range(n):
        r = S[f, a + k + start if k + start < n else a + k + start - n]
        wr_ = w[r]
        wt += wr_
        if crit == GINI:
            tot[T[r]] += wr_
        else:
            for o in range(K):
                tot[o] += wr_ * T2[r, o]
    # the terms of the proxies' sums, in order. Gini: the node's classes only. A class
    # without rows adds 0.0 * 0.0 to both sums (of squares, so >= +0.0) at every position,
    # and x + 0.0 is x: leaving it out changes no bit, and deep nodes hold few of 200
    m = 0
    for c in range(K):
        if crit != GINI or tot[c] != 0.0:
            cls[m] = c
            m += 1
    best = -np.inf
    pos = 0
    wl = 0.0
    run[:] = 0.0
    for i in range(1, n):
        kk = i - 1 + start
        r = S[f, a + kk if kk < n else a + kk - n]
        wr_ = w[r]
        wl += wr_
        if crit == GINI:
            run[T[r]] += wr_
        else:
            for o in range(K):
                run[o] += wr_ * T2[r, o]
        if rot:
            j = i - n_first
            if j < 1 or j > nn - 1:
                continue
            kb = j - 1
        else:
            kb = i - 1
        v0 = XT[f, S[f, a + kb]]
        v1 = XT[f, S[f, a + kb + 1]]
        ok = v1 > v0 + np.float32(1e-7)  # float32, as builder.FEATURE_THRESHOLD
        if not rot and i == nn and nm > 0:
            ok = True
        if not ok:
            continue
        wr = wt - wl
        if not (i >= msl and n - i >= msl and wl >= mwl and wr >= mwl):
            continue
        # gini: squared class weights; squared error: squared output sums
        al = 0.0
        ar = 0.0
        for k in range(m):
            c = cls[k]
            cl = run[c]
            cr = tot[c] - cl
            al += cl * cl
            ar += cr * cr
        p = proxy(crit, al, ar, wl, wr)
        if p > best:  # first maximum; a NaN (a side of vanishing weight) never wins
            best, pos = p, i - 1
    return best, pos


@_jit
def search(crit, S, a, b, rows, T, T2, w, XT, has_nan, max_features, msl, mwl, rng, tot, run,
           cls, nm, const):
    """``NumericSplitFinder.find_split`` for the node S[:, a:b]: (found, feature,
    threshold, missing_left)."""
    p = S.shape[0]
    n = b - a
    for f in range(p):
        c = 0
        if has_nan[f]:  # missing rows are last in the sorted order
            k = b - 1
            while k >= a and np.isnan(XT[f, S[f, k]]):
                c += 1
                k -= 1
        nm[f] = c
        last = max(n - c - 1, 0)
        lo = XT[f, S[f, a]]
        hi = XT[f, S[f, a + last]]
        const[f] = c == n or (c == 0 and hi <= lo + np.float32(1e-7))
    perm = rng.permutation(p)
    first = -1
    for k in range(p):
        if not const[perm[k]]:
            first = k
            break
    if first < 0:
        return False, 0, 0.0, False
    stop = max(max_features, first + 1)
    feats = np.empty(stop, dtype=np.int64)
    nf = 0
    for k in range(stop):
        if not const[perm[k]]:
            feats[nf] = perm[k]
            nf += 1
    step = max(1, _BLOCK // n)
    found = False
    g_val, g_f, g_pos, g_left = 0.0, 0, 0, False
    # blocks of `step` visited features, as best_numeric cuts them: the first maximum in
    # a block (argmax), then a strictly better block
    for s0 in range(0, nf, step):
        bk_val, bk_f, bk_pos, bk_left = -np.inf, 0, 0, False
        for k in range(s0, min(s0 + step, nf)):
            f = feats[k]
            fnm = nm[f]
            fnn = n - fnm
            val, pos = scan(crit, S, f, a, b, 0, 0, T, T2, w, XT, fnm, fnn, msl, mwl,
                            tot, run, cls, False)
            left = False
            if fnm > 0:
                val2, pos2 = scan(crit, S, f, a, b, fnn, fnm, T, T2, w, XT, fnm, fnn, msl,
                                  mwl, tot, run, cls, True)
                if val2 > val:
                    val, pos, left = val2, pos2, True
            if k == s0 or val > bk_val:
                bk_val, bk_f, bk_pos, bk_left = val, f, pos, left
        if bk_val != -np.inf and (not found or bk_val > g_val):
            g_val, g_f, g_pos, g_left, found = bk_val, bk_f, bk_pos, bk_left, True
    if not found:
        return False, 0, 0.0, False
    f = g_f
    fnm = nm[f]
    fnn = n - fnm
    n_left = g_pos + 1
    if g_left:
        k = n_left - fnm
        thr = float(XT[f, S[f, a + k - 1]]) / 2.0 + float(XT[f, S[f, a + k]]) / 2.0
        miss_left = True
    elif n_left == fnn:
        thr, miss_left = math.inf, False
    else:
        thr = (float(XT[f, S[f, a + n_left - 1]]) / 2.0
               + float(XT[f, S[f, a + n_left]]) / 2.0)
        miss_left = False
    if fnm == 0:
        miss_left = n_left > n - n_left
    return True, f, thr, miss_left


@_jit
def divide(S, rows, S2, rows2, a, b, goes_left):
    """Stable partition of the node's rows and of every feature's sorted rows, from
    ``S``/``rows`` into the same positions of ``S2``/``rows2`` (the children's depth's
    buffers, so nothing is copied back); returns the left count."""
    n_left = 0
    for k in range(a, b):
        if goes_left[rows[k]]:
            n_left += 1
    for f in range(-1, S.shape[0]):
        src = rows if f < 0 else S[f]
        dst = rows2 if f < 0 else S2[f]
        i, j = a, a + n_left
        for k in range(a, b):
            r = src[k]
            if goes_left[r]:
                dst[i] = r
                i += 1
            else:
                dst[j] = r
                j += 1
    return n_left


@_jit
def grow(crit, key, XT, T, T2, w, order, n_out, max_features, msl, mwl, max_depth, min_split,
         min_decrease, max_leaves, total_weight, blas, int64, rng):
    """The whole tree. Returns per node: feature (-1 leaf), threshold, missing left,
    left and right child ids, class weights or mean, support, impurity; and the count."""
    p, N = XT.shape
    has_nan = np.zeros(p, dtype=np.bool_)
    for f in range(p):
        for r in range(N):
            if np.isnan(XT[f, r]):
                has_nan[f] = True
                break
    keep = w > 0
    m = int(keep.sum())
    # a node at depth d holds its rows, and every feature's rows sorted, at its positions
    # [a, b) of buffer d % 2; a split writes its children's into the other buffer
    Rb = np.empty((2, m), dtype=np.int32)
    Sb = np.empty((2, p, m), dtype=np.int32)
    Rb[0] = np.flatnonzero(keep)
    for f in range(p):
        j = 0
        for k in range(N):
            r = order[f, k]
            if keep[r]:
                Sb[0, f, j] = r
                j += 1
    # nodes at most: per-node arrays of 200 class weights would otherwise be allocated (and
    # zeroed) for 2m + 1 nodes even when max_depth or max_leaf_nodes allows a few hundred
    cap = 2 * m + 1
    if max_depth >= 0 and max_depth < 40:
        cap = min(cap, 2 ** (max_depth + 1) - 1)
    if max_leaves > 0:
        cap = min(cap, 2 * max_leaves - 1)
    feat = np.full(cap, -1, dtype=np.int64)
    thr = np.zeros(cap)
    mleft = np.zeros(cap, dtype=np.bool_)
    kids = np.full((cap, 2), -1, dtype=np.int64)
    vals = np.zeros((cap, n_out))
    wsum = np.zeros(cap)
    imps = np.zeros(cap)
    improvement = np.zeros(cap)
    seg = np.zeros((cap, 2), dtype=np.int64)  # a split's children's segments: a, mid, b
    mids = np.zeros(cap, dtype=np.int64)
    goes_left = np.zeros(N, dtype=np.bool_)
    tot = np.zeros(n_out)
    run = np.zeros(n_out)
    cls = np.zeros(n_out, dtype=np.int64)
    # a split's children's stats (slot 0 left, 1 right), read when they open
    ch_imp = np.zeros((cap, 2))
    ch_w = np.zeros((cap, 2))
    ch_val = np.zeros((cap, 2, n_out))
    nm = np.zeros(p, dtype=np.int64)
    const = np.zeros(p, dtype=np.bool_)
    scratch = np.empty((2, m if crit != GINI and blas != 0 else 0))  # squared_stats' buffers
    # pending nodes: (a, b, depth, parent, slot)
    stack = np.zeros((cap, 5), dtype=np.int64)
    top = 0
    stack[0, 0], stack[0, 1] = 0, m
    stack[0, 3] = -1
    top = 1
    count = 0
    best_first = max_leaves > 0
    open_ids = np.zeros(cap, dtype=np.int64)  # best first: split candidates waiting
    n_open = 0
    depth_of = np.zeros(cap, dtype=np.int64)
    leaves = 1
    while True:
        if top > 0:
            top -= 1
            a, b, depth, parent, slot = (stack[top, 0], stack[top, 1], stack[top, 2],
                                         stack[top, 3], stack[top, 4])
        elif best_first and n_open > 0:
            # heapq order of (-improvement, id): the largest improvement, then lowest id
            bi = 0
            for t in range(1, n_open):
                u, v = open_ids[t], open_ids[bi]
                if improvement[u] > improvement[v] or (
                        improvement[u] == improvement[v] and u < v):
                    bi = t
            nid = open_ids[bi]
            open_ids[bi] = open_ids[n_open - 1]
            n_open -= 1
            if leaves + 1 > max_leaves:
                feat[nid] = -1
                continue
            leaves += 1
            # open the children now, left first (ids in creation order)
            stack[0, 0], stack[0, 1] = mids[nid], seg[nid, 1]
            stack[0, 2], stack[0, 3], stack[0, 4] = depth_of[nid] + 1, nid, 1
            stack[1, 0], stack[1, 1] = seg[nid, 0], mids[nid]
            stack[1, 2], stack[1, 3], stack[1, 4] = depth_of[nid] + 1, nid, 0
            top = 2
            continue
        else:
            break
        nid = count
        count += 1
        if parent >= 0:
            kids[parent, slot] = nid
        depth_of[nid] = depth
        n = b - a
        rows, S = Rb[depth % 2], Sb[depth % 2]
        if parent < 0:
            split_stats(crit, key, T, T2, w, rows[a:b], 0, ch_imp[0], ch_w[0], ch_val[0], blas,
                        int64, scratch)
            imp, ws = ch_imp[0, 0], ch_w[0, 0]
            vals[nid] = ch_val[0, 0]
        else:  # computed by the parent's split
            imp, ws = ch_imp[parent, slot], ch_w[parent, slot]
            vals[nid] = ch_val[parent, slot]
        wsum[nid], imps[nid] = ws, imp
        if ((max_depth >= 0 and depth >= max_depth) or n < min_split or n < 2 * msl
                or imp <= _EPS):
            continue
        ok, f, t, ml = search(crit, S, a, b, rows, T, T2, w, XT, has_nan, max_features, msl,
                              mwl, rng, tot, run, cls, nm, const)
        if not ok:
            continue
        for k in range(a, b):
            r = rows[k]
            x = XT[f, r]
            goes_left[r] = ml if np.isnan(x) else float(x) <= t
        # the children's rows (left then right, each in order) and sorted rows, then their
        # stats for the improvement (_split_rows)
        nxt = (depth + 1) % 2
        n_left = divide(S, rows, Sb[nxt], Rb[nxt], a, b, goes_left)
        for k in range(a, b):
            goes_left[rows[k]] = False
        split_stats(crit, key, T, T2, w, Rb[nxt, a:b], n_left, ch_imp[nid], ch_w[nid],
                    ch_val[nid], blas, int64, scratch)
        il, wl, ir = ch_imp[nid, 0], ch_w[nid, 0], ch_imp[nid, 1]
        wr = ws - wl
        imv = (ws / total_weight) * (imp - (wr / ws * ir) - (wl / ws * il))
        if imv + _EPS < min_decrease:
            continue
        feat[nid], thr[nid], mleft[nid], improvement[nid] = f, t, ml, imv
        if best_first:
            seg[nid, 0], mids[nid], seg[nid, 1] = a, a + n_left, b
            open_ids[n_open] = nid
            n_open += 1
        else:
            # right pushed first: the left child is opened (and numbered) first
            stack[top, 0], stack[top, 1] = a + n_left, b
            stack[top, 2], stack[top, 3], stack[top, 4] = depth + 1, nid, 1
            stack[top + 1, 0], stack[top + 1, 1] = a, a + n_left
            stack[top + 1, 2], stack[top + 1, 3], stack[top + 1, 4] = depth + 1, nid, 0
            top += 2
    for u in range(count):
        if feat[u] < 0:
            kids[u, 0] = kids[u, 1] = -1
    return feat, thr, mleft, kids, vals, wsum, imps, count

