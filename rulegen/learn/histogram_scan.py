"""The split scans of histogram boosting: from a node's per-bin sums of gradients, hessians
and rows, the best cut of each feature (LightGBM's rules; :mod:`rulegen.learn.histogram`
builds the histograms and owns the nodes).

Every scan works on many rows at once -- a row is one feature at one node -- so that a batch
of nodes costs one set of numpy operations rather than one per node and feature: on small
data numpy's per-call overhead, not arithmetic, is the cost. Gains are computed with the
same operations in the same order whatever the batch, so a batch changes no tree.

With G, H the node's sums and lambda ``reg_lambda``, a split into (GL, HL), (GR, HR) gains
``GL^2/(HL+l) + GR^2/(HR+l) - G^2/(H+l)`` -- LightGBM's scale, twice the bracket of
:func:`rulegen.learn.newton.split_gain` -- and a leaf is worth ``-G/(H+l)``. A split must
gain more than ``min_split_gain``, each child must keep ``min_child_samples`` rows and a
hessian sum of ``min_child_weight``.

* **Numeric** (:func:`best_numeric`): "bins <= b left" for every b, from cumulative sums
  over the bins, tried with the missing bin left and right (the learned default direction);
  with missing rows present, "every value left, missing right" too (threshold +inf). Ties go
  as in LightGBM's two scans: missing left wins, and among bins giving the same partition
  (bins empty at the node) the highest b with missing left (or no missing rows), the lowest
  with missing right.
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

TIE = 1e-10  # relative: gains this close are equal (rounding differs between features)


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
    count a side with HL+l <= 0 as 0, as :func:`rulegen.learn.newton.split_gain` does."""
    with np.errstate(divide="ignore", invalid="ignore"):
        D = LR[:, 1] + lam
        Q = LR[:, 0] * LR[:, 0]
        Q /= D
        if guard:
            Q = np.where(D > 0, Q, 0.0)
    ok = np.minimum(LR[0, 2], LR[1, 2]) >= min_count
    ok &= np.minimum(LR[0, 1], LR[1, 1]) >= min_hess
    return Q[0] + Q[1], ok


def best_numeric(hist, n_bins, G, H, C, p: SplitParams, h_const=None, estimated=False,
                 has_missing=None, has_nan=None):
    """Per row of ``hist`` (3, r, width) -- a feature at a node -- (gain, bin b,
    missing_left); gain -inf where no split is allowed. b == n_bins - 1 means every value
    left, missing right. ``G``, ``H``, ``C``: the node's sums, scalars or one per row;
    ``estimated``: counts are LightGBM's hessian estimates (scalar or per row).
    ``h_const``: the hessian row is the count row times it. ``has_missing`` (r,): the
    node has rows missing the feature -- from the exact counts: an estimate rounds a few
    missing rows of small hessian to none (default: the count row's missing bin).
    ``has_nan`` (r,): the feature has missing values somewhere in the data; LightGBM then
    scans with missing right too at every node, which with estimated counts can admit a
    cut the missing-left scan does not (the two estimate the sides from opposite ends)."""
    q = hist.shape[1]
    top = int(np.max(n_bins))  # bins past every feature's last value bin are never cut
    if h_const is None:
        cum = np.cumsum(hist[:, :, :top], axis=2)  # "bins <= b" sums, missing aside
    else:
        cum = np.empty((3, q, top))
        np.cumsum(hist[::2, :, :top], axis=2, out=cum[::2])
        np.multiply(cum[2], h_const, out=cum[1])
    tot = np.empty((3, q, 1))  # the node's sums, per row
    tot[0, :, 0], tot[1, :, 0], tot[2, :, 0] = G, H, C
    j = np.arange(top)
    nb = np.asarray(n_bins)[:, None]
    min_count = max(1, p.min_child_samples)
    lam, mcw = p.reg_lambda, p.min_child_weight
    guard = lam <= 0 and mcw <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        D = tot[1, :, 0] + lam
        base = np.where(D > 0, tot[0, :, 0] * tot[0, :, 0] / D, 0.0)  # the parent's term
    # missing left (with no missing rows: either side); ties: the highest b, as LightGBM's
    # reverse scan, which also wins ties against the missing-right pass below
    LR = np.empty((2, 3, q, top))
    np.add(cum, hist[:, :, -1:], out=LR[0])
    np.subtract(tot, LR[0], out=LR[1])
    est = np.asarray(estimated)
    if est.any():
        # LightGBM scans this pass from the top bin down: the right side's count is the
        # sum of its bins' estimates and the left side gets the rest
        CRe = cum[2, :, -1:] - cum[2]
        if est.all():
            LR[1, 2], LR[0, 2] = CRe, tot[2] - CRe
        else:
            e = est.reshape(-1, 1)
            LR[1, 2], LR[0, 2] = np.where(e, CRe, LR[1, 2]), np.where(e, tot[2] - CRe, LR[0, 2])
    v, ok = _sides(LR, lam, min_count, mcw, guard)
    ok &= j < nb - 1
    v = np.where(ok, v, -np.inf)  # (faster than masked assignment)
    pos = (top - 1) - v[:, ::-1].argmax(axis=1)
    r = np.arange(q)
    best = v[r, pos]
    present = (hist[2, :, -1] > 0) if has_missing is None else np.array(has_missing, dtype=bool)
    second = present
    if has_nan is not None and est.any():
        second = present | (np.asarray(has_nan, dtype=bool) & est.reshape(-1))
    left = np.ones(q, dtype=bool)  # the missing-left pass's default, as LightGBM's
    miss = np.flatnonzero(second)
    if miss.size:
        # missing right; j = nb-1 is "every value left" (only where rows miss the feature:
        # elsewhere it would leave the right side empty); ties: the lowest b
        LR = np.empty((2, 3, miss.size, top))
        LR[0] = cum[:, miss]
        if has_nan is not None and est.any():
            # LightGBM's histogram without bin 0 (has_nan 2): this scan starts from the
            # node's count less every other bin's estimate, the missing bin's included
            sub = (np.asarray(has_nan)[miss] == 2) & est.reshape(-1)[miss]
            if sub.any():
                rest = cum[2, miss[sub], -1:] - cum[2, miss[sub]] + hist[2, miss[sub], -1:]
                LR[0, 2, sub] = tot[2, miss[sub]] - rest
        np.subtract(tot[:, miss], LR[0], out=LR[1])
        v1, ok1 = _sides(LR, lam, min_count, mcw, guard)
        ok1 &= j <= nb[miss] - 1 - ~present[miss, None]
        v1 = np.where(ok1, v1, -np.inf)
        b1 = v1.argmax(axis=1)
        val1 = v1[np.arange(miss.size), b1]
        better = val1 > best[miss]
        sel = miss[better]
        best[sel], pos[sel], left[sel] = val1[better], b1[better], False
    return best - base, pos, left


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
    onehot = m <= p.max_cat_to_onehot
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
