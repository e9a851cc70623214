"""The split scans of histogram boosting: from a node's per-bin sums of gradients, hessians
and rows, the best cut of each feature (LightGBM's rules; :mod:`rulegen.learn.splits.histogram`
builds the histograms and owns the nodes).

Every scan works on many rows at once -- a row is one feature at one node -- so that a batch
of nodes costs one set of numpy operations rather than one per node and feature: on small
data numpy's per-call overhead, not arithmetic, is the cost. Gains are computed with the
same operations in the same order whatever the batch, so a batch changes no tree.

With G, H the node's sums and lambda ``reg_lambda``, a split into (GL, HL), (GR, HR) gains
``GL^2/(HL+l) + GR^2/(HR+l) - G^2/(H+l)`` -- LightGBM's scale, twice the bracket of
:func:`rulegen.learn.ensembles.newton.split_gain` -- and a leaf is worth ``-G/(H+l)``. A split must
gain more than ``min_split_gain``, each child must keep ``min_child_samples`` rows and a
hessian sum of ``min_child_weight``.

* **Numeric** (:func:`best_numeric`): LightGBM's FindBestThresholdSequentially with its
  floating-point operations in its order, so that near-ties (a pure node's splits gain
  rounding noise only, and LightGBM takes them) fall as in LightGBM: the missing-left scan
  from the top bin down, the missing-right scan (features with a NaN bin) from the bottom up,
  the kEpsilon terms of the hessians, the node's hessian + 2 kEpsilon, LightGBM's count
  estimates, its skip / stop rules and ties (the first candidate met). The compiled kernel
  (:func:`rulegen.learn.compiled.kernels.scan_numeric`) is the same loop, bit for bit.
* **Categorical** (:func:`best_categorical_rows`), codes 0..m-1 (LightGBM's rules, as
  documented and as measured):
  - m <= ``max_cat_to_onehot``: one present category against the rest;
  - otherwise the categories with at least ``cat_smooth`` rows at the node are sorted by
    ``G_c / (H_c + cat_smooth)`` (ties by code) and scanned from both ends, at most
    ``min(max_cat_threshold, (k+1)//2)`` of the k sorted categories from each: categories
    join the set one by one, and a candidate is taken when both sides are admissible, the
    other side keeps ``min_data_per_group`` rows and ``min_data_per_group`` rows joined since
    the previous candidate. The children's terms of the gain use ``lambda + cat_l2`` (the
    parent's term plain lambda), and so do the two children's leaf values.
  The set is child 0; missing values, categories not in the set (rare ones included) and
  unseen codes go to child 1 (LightGBM's "other" side). With cat_smooth = cat_l2 = lambda = 0
  and no count limits this finds the best of all subsets (Fisher's grouping theorem: the best
  two-group partition for sums of G^2/H is contiguous in G/H order; both ends together cover
  every cut of the order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rulegen.learn.compiled.kernels import EPS


@dataclass(frozen=True)
class SplitParams:
    reg_lambda: float = 0.0
    min_child_samples: int = 20
    min_child_weight: float = 1e-3
    min_split_gain: float = 0.0
    cat_smooth: float = 10.0
    cat_l2: float = 10.0
    max_cat_threshold: int = 32
    min_data_per_group: int = 100
    max_cat_to_onehot: int = 4


def _sides(LR, lam, min_count, min_hess, guard):
    """Both sides of many candidate cuts at once: ``LR`` (2 sides, 3 sums g/h/count, ...).
    Returns GL^2/(HL+l) + GR^2/(HR+l) -- the part of the gain that varies within a node --
    and whether both sides keep ``min_count`` rows and ``min_hess`` hessian. ``guard``:
    count a side with HL+l <= 0 as 0, as :func:`rulegen.learn.ensembles.newton.split_gain` does."""
    with np.errstate(divide="ignore", invalid="ignore"):
        D = LR[:, 1] + lam
        Q = LR[:, 0] * LR[:, 0]
        Q /= D
        if guard:
            Q = np.where(D > 0, Q, 0.0)
    ok = np.minimum(LR[0, 2], LR[1, 2]) >= min_count
    ok &= np.minimum(LR[0, 1], LR[1, 1]) >= min_hess
    return Q[0] + Q[1], ok




def _leaf_gains(LG, LH, RG, RH, lam):
    """LightGBM's GetLeafGain of both sides, added left then right."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return LG * LG / (LH + lam) + RG * RG / (RH + lam)


def _admitted(near, far, reverse):
    """LightGBM's loop over candidates: skip one whose scanned side is short (``near``),
    stop at the first one met, not skipped, whose other side is short (``far``)."""
    stop = ~near & far
    if reverse:
        stop = np.logical_or.accumulate(stop[:, ::-1], axis=1)[:, ::-1]
    else:
        stop = np.logical_or.accumulate(stop, axis=1)
    return ~near & ~stop


def _first_best(v, ok, reverse):
    """Per row, the first candidate in scan order with the strictly greatest value among
    ``ok`` ones (LightGBM's ``current_gain > best_gain``): (value, index), -inf if none."""
    v = np.where(ok, v, -np.inf)
    if reverse:
        pos = (v.shape[1] - 1) - v[:, ::-1].argmax(axis=1)
    else:
        pos = v.argmax(axis=1)
    return v[np.arange(len(v)), pos], pos


def best_numeric(hist, n_bins, G, H, C, p: SplitParams, kind):
    """LightGBM's numeric scans (FindBestThresholdSequentially), with its arithmetic, per row
    of ``hist`` (3, r, width) -- a feature at a node: value bins, zero padding, the missing
    bin last; the count row holds LightGBM's per-bin counts (its estimates, see
    :meth:`BatchSearch._estimate`). ``G``, ``H``, ``C`` (r,): the node's sums as LightGBM
    has them (the scans see ``H + 2 kEpsilon``, as LightGBM's); ``kind`` (r,): 0 no NaN
    bin, 1 a NaN bin, 2 a NaN bin and LightGBM's histogram leaves bin 0 out (its most
    frequent bin).

    The missing-left scan (every feature) adds bins from the top value bin down to a right
    side starting at (0, kEpsilon, 0), the left side being the node's sums less it; the
    missing-right scan (NaN bin, two value bins or more) adds bins from the bottom to a left
    side starting at (0, kEpsilon, 0), or with ``kind`` 2 at the node's sums less every bin
    but bin 0 (hessian less kEpsilon first). A side short of ``min_child_samples`` counts or
    ``min_child_weight`` hessian is skipped, a candidate must gain more than the parent's
    ``G^2/(H+l)`` plus ``min_split_gain``, ties go to the first candidate met (the highest
    bin, the lowest), and the second scan wins only if better than the first's gain plus
    that shift, rounded as LightGBM rounds it. A NaN bin with one value bin: "values left,
    NaN right" only. Returns (gain: best minus the shift, -inf where none; bin b; missing
    left; the left side's g, h (with kEpsilon) and count)."""
    r = hist.shape[1]
    top = int(np.max(n_bins))
    nb = np.asarray(n_bins)[:, None]
    kind = np.asarray(kind)
    G, H, C = (np.asarray(a, dtype=np.float64).reshape(r, 1) for a in (G, H, C))
    H = H + 2 * EPS  # LightGBM's FindBestThreshold scans with the node's hessian + 2 kEpsilon
    lam, mdl, mhs = p.reg_lambda, max(1, p.min_child_samples), p.min_child_weight
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        shift = G * G / (H + lam) + p.min_split_gain
    g, h, c = hist[0, :, :top], hist[1, :, :top], hist[2, :, :top]
    j = np.arange(top)
    # missing left: right side = bins b+1 .. top-1 added from the top (zero padding adds 0.0)
    RG = np.zeros((r, top))
    RH = np.full((r, top), EPS)
    RC = np.zeros((r, top))
    if top > 1:
        rev = np.empty((3, r, top - 1))
        rev[0], rev[1], rev[2] = g[:, :0:-1], h[:, :0:-1], c[:, :0:-1]
        rev[1, :, 0] += EPS
        acc = np.cumsum(rev, axis=2)[:, :, ::-1]  # [b] = bins b+1.. from the top
        RG[:, :-1], RH[:, :-1], RC[:, :-1] = acc
    LG, LH, LC = G - RG, H - RH, C - RC
    ok = _admitted((RC < mdl) | (RH < mhs), (LC < mdl) | (LH < mhs), True) & (j <= nb - 2)
    v = _leaf_gains(LG, LH, RG, RH, lam)
    ok &= v > shift
    best, pos = _first_best(v, ok, reverse=True)
    rows = np.arange(r)
    out_lg, out_lh, out_lc = LG[rows, pos], LH[rows, pos], LC[rows, pos]
    left = np.ones(r, dtype=bool)
    gain = best - shift[:, 0]
    # a NaN bin and one value bin: the NaN bin is the right side, default right
    one = (kind > 0) & (nb[:, 0] == 1)
    if one.any():
        mg, mh, mc = hist[0, one, -1], hist[1, one, -1], hist[2, one, -1]
        rg, rh, rc = 0.0 + mg, EPS + mh, mc
        lg, lh, lc = G[one, 0] - rg, H[one, 0] - rh, C[one, 0] - rc
        v1 = _leaf_gains(lg, lh, rg, rh, lam)
        good = (rc >= mdl) & (rh >= mhs) & (lc >= mdl) & (lh >= mhs) & (v1 > shift[one, 0])
        gain[one] = np.where(good, v1 - shift[one, 0], -np.inf)
        pos[one], left[one] = 0, False
        out_lg[one], out_lh[one], out_lc[one] = lg, lh, lc
    fwd = np.flatnonzero((kind > 0) & (nb[:, 0] >= 2))
    if fwd.size:
        k2 = kind[fwd] == 2
        gf, hf, cf = g[fwd], h[fwd], c[fwd]
        Gf, Hf, Cf = G[fwd], H[fwd], C[fwd]
        mg, mh, mc = (hist[k, fwd, -1:] for k in range(3))
        start = np.zeros((3, fwd.size, 1))
        start[1] = EPS
        if k2.any():
            # LightGBM's bin 0 is the node less every other bin, subtracted one by one
            sub = np.concatenate([np.stack([Gf, Hf, Cf])[:, k2],
                                  -np.stack([gf, hf, cf])[:, k2, 1:],
                                  -np.stack([mg, mh, mc])[:, k2]], axis=2)
            sub = np.concatenate([sub[:, :, :1], np.zeros((3, int(k2.sum()), 1)), sub[:, :, 1:]],
                                 axis=2)
            sub[1, :, 1] = -EPS  # the hessian: H - kEpsilon first
            start[:, k2] = np.cumsum(sub, axis=2)[:, :, -1:]
        seq = np.stack([gf, hf, cf])
        seq = np.where(k2[None, :, None] & (j == 0), 0.0, seq)  # bin 0: in the start already
        seq[:, :, :1] += start
        LGf, LHf, LCf = np.cumsum(seq, axis=2)
        RGf, RHf, RCf = Gf - LGf, Hf - LHf, Cf - LCf
        okf = _admitted((LCf < mdl) | (LHf < mhs), (RCf < mdl) | (RHf < mhs), False)
        okf &= j <= nb[fwd] - 1
        vf = _leaf_gains(LGf, LHf, RGf, RHf, lam)
        okf &= vf > shift[fwd]
        bf, pf = _first_best(vf, okf, reverse=False)
        better = bf > gain[fwd] + shift[fwd, 0]
        sel = fwd[better]
        rf = np.arange(fwd.size)[better]
        gain[sel] = bf[better] - shift[sel, 0]
        pos[sel], left[sel] = pf[better], False
        out_lg[sel], out_lh[sel] = LGf[rf, pf[better]], LHf[rf, pf[better]]
        out_lc[sel] = LCf[rf, pf[better]]
    return gain, pos, left, out_lg, out_lh, out_lc


def best_categorical_rows(hist, m, G, H, C, p) -> tuple[np.ndarray, list]:
    """The best categorical split of every row of ``hist`` (3, r, width) -- a feature at a
    node: the sums of g, h and the row count of codes 0..m[i]-1 and, in the LAST column, of
    the missing values; columns between m[i] and width-1 are zero. ``m``: (r,) category
    counts; ``G``, ``H``, ``C``: (r,) the sums of the node each row belongs to.

    Returns (gain, sets): gain (r,), -inf where no split is allowed; sets: per row None or
    the sorted codes of the set side (child 0). ``tests/categorical_oracle.py`` states the
    same rules one candidate at a time; the two agree bit for bit."""
    hist = np.asarray(hist, dtype=np.float64)
    m = np.asarray(m, dtype=np.intp).reshape(-1)
    G, H, C = (np.asarray(a, dtype=np.float64).reshape(-1) for a in (G, H, C))
    r = m.shape[0]
    gain = np.full(r, -np.inf)
    sets = [None] * r
    if r == 0:
        return gain, sets
    top = min(int(m.max()), hist.shape[2] - 1)  # columns past every row's codes: empty
    present = (hist[2, :, :top] > 0) & (np.arange(top) < m[:, None])
    k = present.sum(axis=1)
    # the scalar version's early None: no category, or one category and no missing rows
    live = (k > 0) & ~((k == 1) & (hist[2, :, -1] == 0))
    onehot = m + 1 <= p.max_cat_to_onehot  # LightGBM counts its NaN bin among the bins
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        den = H + p.reg_lambda
        parent = np.where(den > 0, G * G / den, 0.0)
        for rows, fn in ((np.flatnonzero(live & onehot), _onehot),
                         (np.flatnonzero(live & ~onehot), _sorted)):
            if rows.size:
                fn(hist, rows, m, present, G, H, C, parent, p, gain, sets)
    return gain, sets


def _onehot(hist, rows, m, present, G, H, C, parent, p, gain, sets):
    """One present category against the rest; candidates in code order, so argmax's first
    best is the scalar version's."""
    top = int(m[rows].max())
    LR = np.empty((2, 3, rows.size, top))
    LR[0] = hist[:, rows, :top]
    np.subtract(np.stack([G[rows], H[rows], C[rows]])[:, :, None], LR[0], out=LR[1])
    lam = p.reg_lambda
    v, ok = _sides(LR, lam, max(1, p.min_child_samples), p.min_child_weight, lam <= 0)
    v -= parent[rows, None]
    v = np.where(ok & present[rows, :top], v, -np.inf)
    j = v.argmax(axis=1)
    best = v[np.arange(rows.size), j]
    win = best > -np.inf  # NaN (as in the scalar version) is no split either
    gain[rows[win]] = best[win]
    codes = j[win, None].astype(np.intp)
    for a, i in enumerate(rows[win].tolist()):
        sets[i] = codes[a]


_FEW = 16  # rows below which the group rule runs on Python floats


def _cuts_few(group, cnt, ok, mdpg) -> list:
    """The group rule for a few rows: ``group`` the count before the first position,
    ``cnt`` / ``ok`` (positions x rows) lists; returns the cut flags (positions x rows)."""
    out = []
    for c_row, ok_row in zip(cnt, ok):
        flags = []
        for r, (c, o) in enumerate(zip(c_row, ok_row)):
            g = group[r] + c
            cut = o and g >= mdpg
            group[r] = 0.0 if cut else g
            flags.append(cut)
        out.append(flags)
    return out


def _sorted(hist, rows, m, present, G, H, C, parent, p, gain, sets):
    """Categories with >= cat_smooth rows sorted by G/(H+cat_smooth), scanned from both
    ends; candidates laid out (row, direction, position) so that the flattened order is the
    scalar version's [forward cuts..., reverse cuts...]."""
    n = rows.size
    top = int(m[rows].max())
    hs = hist[:, rows, :top]
    used = present[rows, :top] & (hs[2] >= p.cat_smooth)
    key = hs[0] / (hs[1] + p.cat_smooth)
    # lexsort is stable: primary "unused last", then the key, ties by code (the column
    # order) -- as the scalar lexsort((used, key)); NaN keys sort last in both
    order = np.lexsort((key, ~used), axis=-1)
    k_used = used.sum(axis=1)
    n_scan = np.minimum(p.max_cat_threshold, (k_used + 1) // 2)
    T = int(n_scan.max())
    if T <= 0:
        return
    t = np.arange(T)
    # the reversed sorted order: positions k_used-1, k_used-2, ... (clipped past n_scan,
    # where nothing is a candidate)
    back = np.maximum(k_used[:, None] - 1 - t, 0)
    ri = np.arange(n)[:, None]
    seq = np.concatenate([order[:, :T], order[ri, back]], axis=1)  # (n, 2T): both directions
    vals = hs[:, ri, seq].reshape(3, n, 2, T)
    LR = np.empty((2, 3, n, 2, T))
    np.cumsum(vals, axis=3, out=LR[0])  # sequential along each sequence, as the scalar
    np.subtract(np.stack([G[rows], H[rows], C[rows]])[:, :, None, None], LR[0], out=LR[1])
    cH, cC = LR[0, 1], LR[0, 2]
    min_count, mcw, mdpg = max(1, p.min_child_samples), p.min_child_weight, p.min_data_per_group
    # _scan_cuts: a position is skipped while the set side is too small; the scan stops at
    # the first position (not skipped) where the other side is too small
    scanned = (t < n_scan[:, None])[:, None, :]
    skip = (cC < min_count) | (cH < mcw)
    right_c = LR[1, 2]
    stop = ~skip & scanned & ((right_c < min_count) | (right_c < mdpg) | (LR[1, 1] < mcw))
    ok = scanned & ~skip & ~np.logical_or.accumulate(stop, axis=2)
    if mdpg <= 0:
        cut = ok  # the group rule never binds: a group's count is >= 0
    else:
        # where every candidate category holds min_data_per_group rows itself, the rule
        # holds at every candidate (a group's count is at least its last category's)
        cut = ok.copy()
        hard = np.flatnonzero(~np.all((vals[2] >= mdpg) | ~ok, axis=2).ravel())
        if hard.size:
            # elsewhere the rule is sequential (a cut resets the count), from the first
            # position any row may cut; before it nothing resets, so the count there is the
            # cumulative sum (the same additions in the same order as the scalar version's)
            okt = ok.reshape(2 * n, T)[hard].T.copy()  # (T, rows): a position's flags together
            part = np.zeros(okt.shape, dtype=bool)
            pos = np.flatnonzero(okt.any(axis=1))
            if pos.size:
                cnt = vals[2].reshape(2 * n, T)[hard].T.copy()
                a, b = int(pos[0]), int(pos[-1]) + 1
                group = cC.reshape(2 * n, T)[hard, a - 1] if a else np.zeros(hard.size)
                if hard.size <= _FEW:  # plain floats: numpy's call overhead dominates
                    part[a:b] = _cuts_few(group.tolist(), cnt[a:b].tolist(),
                                          okt[a:b].tolist(), mdpg)
                else:  # a loop over positions, vectorised over rows and directions
                    for s in range(a, b):
                        np.add(group, cnt[s], out=group)
                        np.greater_equal(group, mdpg, out=part[s])
                        np.logical_and(part[s], okt[s], out=part[s])
                        np.copyto(group, 0.0, where=part[s])
            cut.reshape(2 * n, T)[hard] = part.T
    lam = p.reg_lambda + p.cat_l2
    v, adm = _sides(LR, lam, min_count, mcw, lam <= 0)
    v -= parent[rows, None, None]
    v = np.where(cut & adm, v, -np.inf).reshape(n, 2 * T)
    j = v.argmax(axis=1)
    best = v[np.arange(n), j]
    win = np.flatnonzero(best > -np.inf)
    gain[rows[win]] = best[win]
    if not win.size:
        return
    # the winners' sets, sorted in one call: codes past the cut pushed to the end (each set
    # is a view of one small array)
    jw = j[win]
    t_cut = jw % T
    codes = seq.reshape(n, 2, T)[win, jw // T]
    codes = np.where(t < t_cut[:, None] + 1, codes, top)
    codes.sort(axis=1)
    for a, (i, size) in enumerate(zip(rows[win].tolist(), (t_cut + 1).tolist())):
        sets[i] = codes[a, :size]
