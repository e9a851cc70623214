"""The categorical split of one feature at one node, one candidate at a time: the plain
statement of LightGBM's rules that ``histogram_scan.best_categorical_rows`` computes for many
rows at once. Tests compare the two bit for bit, and this one against brute force."""

from __future__ import annotations

import numpy as np

from rulegen.learn.splits.histogram_scan import SplitParams


def admissible(CL, HL, CR, HR, min_count, min_hess):
    return (CL >= min_count) & (CR >= min_count) & (HL >= min_hess) & (HR >= min_hess)


def children_score(GL, HL, GR, HR, lam, guard):
    """GL^2/(HL+l) + GR^2/(HR+l); with ``guard`` a side with HL+l <= 0 counts 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        DL, DR = HL + lam, HR + lam
        if guard:
            return np.where(DL > 0, GL * GL / DL, 0.0) + np.where(DR > 0, GR * GR / DR, 0.0)
        s = GL * GL / DL
        s += GR * GR / DR
    return s


def _scan_cuts(cnt, hess, C, H, p: SplitParams) -> list:
    """How many of the sorted categories go to the set side at each candidate, as LightGBM's
    scan takes them: categories join one by one; a candidate needs both sides admissible
    (the scan stops once the other side is too small) and ``min_data_per_group`` rows joined
    since the previous candidate. A loop over categories, never rows."""
    min_count = max(1, p.min_child_samples)
    cuts, left_c, left_h, group = [], 0.0, 0.0, 0.0
    for t in range(len(cnt)):
        left_c, left_h, group = left_c + cnt[t], left_h + hess[t], group + cnt[t]
        if left_c < min_count or left_h < p.min_child_weight:
            continue
        right_c = C - left_c
        if right_c < min_count or right_c < p.min_data_per_group or H - left_h < p.min_child_weight:
            break
        if group < p.min_data_per_group:
            continue
        group = 0.0
        cuts.append(t + 1)
    return cuts


def best_categorical(hf, m, G, H, C, p: SplitParams):
    """The best split of one categorical feature from its histogram ``hf`` (3, width)
    (codes 0..m-1, missing last): (gain, sorted codes of the set side, missing_left), or
    None."""
    Gc, Hc, Cc = hf[0, :m], hf[1, :m], hf[2, :m]
    present = np.flatnonzero(Cc > 0)
    k = len(present)
    if k == 0 or (k == 1 and hf[2, -1] == 0):
        return None
    if m + 1 <= p.max_cat_to_onehot:  # LightGBM counts its NaN bin among the bins
        sets = [present[i:i + 1] for i in range(k)]
        SG, SH, SC = Gc[present], Hc[present], Cc[present]
        lam = p.reg_lambda
    else:
        # as LightGBM: categories with fewer than cat_smooth rows here are never in the set
        used = present[Cc[present] >= p.cat_smooth]
        key = Gc[used] / (Hc[used] + p.cat_smooth)
        order = used[np.lexsort((used, key))]
        n_scan = min(p.max_cat_threshold, (len(used) + 1) // 2)
        sets, sums = [], []
        for seq in (order[:n_scan], order[::-1][:n_scan]):  # lowest ratios first, then highest
            cum = np.cumsum(hf[:, seq], axis=1)
            cuts = _scan_cuts(Cc[seq], Hc[seq], C, H, p)
            sets += [seq[:t] for t in cuts]
            sums.append(cum[:, np.asarray(cuts, dtype=np.intp) - 1])
        SG, SH, SC = np.concatenate(sums, axis=1)
        lam = p.reg_lambda + p.cat_l2
    if not sets:
        return None
    min_count = max(1, p.min_child_samples)
    parent = G * G / (H + p.reg_lambda) if H + p.reg_lambda > 0 else 0.0
    # missing rows stay with the rest (child 1), as LightGBM's; the children's terms take
    # ``lam``, the parent's reg_lambda, as LightGBM
    v = children_score(SG, SH, G - SG, H - SH, lam, lam <= 0) - parent
    v = np.where(admissible(SC, SH, C - SC, H - SH, min_count, p.min_child_weight), v, -np.inf)
    i = int(v.argmax())  # the first best, in scan order
    return (float(v[i]), np.sort(sets[i]), False) if v[i] > -np.inf else None
