"""C4.5's split search: gain ratio over the candidates whose gain reaches the average.

Every quantity follows C4.5 release 8 as Weka's J48 implements it (see
docs/learners/c45.md for the list). Counts are weighted and may be fractional:
a row whose tested value is missing travels down every branch with its weight
multiplied by the branch's share of the known weight there.

Entropies are kept in "weighted bits" (``sum n log2 n`` terms) as C4.5 does, and
every comparison uses C4.5's tolerances (``SMALL`` = 1e-6, attribute filter 1e-3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SMALL = 1e-6  # C4.5's "equal within" tolerance for weights, gains and ratios
VALUE_GAP = 1e-5  # two sorted values are distinct only if they differ by more than this
AVERAGE_SLACK = 1e-3  # a candidate's gain may fall this far below the average gain
MAX_MIN_SPLIT = 25.0  # cap on the minimum branch weight of a numeric split
_LN2 = math.log(2.0)


def log_f(a) -> np.ndarray:
    """``a * log2(a)`` element-wise, and 0 for weights below 1e-6 (C4.5 ignores slivers)."""
    a = np.asarray(a, dtype=np.float64)
    safe = np.where(a < SMALL, 1.0, a)
    return np.where(a < SMALL, 0.0, safe * np.log(safe) / _LN2)


def info_gain(bags: np.ndarray, total: float) -> np.ndarray:
    """Gain of splitting ``total`` weight into ``bags`` (..., branches, classes) of known rows.

    The gain is measured on the known rows and scaled by their share of the node
    (the known fraction rho), so an attribute that is often missing gains less.
    """
    bags = np.asarray(bags, dtype=np.float64)
    per_bag = bags.sum(axis=-1)
    known = per_bag.sum(axis=-1)
    per_class = bags.sum(axis=-2)
    old = log_f(known) - log_f(per_class).sum(axis=-1)
    new = (log_f(per_bag) - log_f(bags).sum(axis=-1)).sum(axis=-1)
    numerator = (1.0 - (total - known) / total) * (old - new)
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = numerator / known
    return np.where(np.abs(numerator) < SMALL, 0.0, gain)


def gain_ratio(gain: float, per_bag: np.ndarray, total: float) -> float:
    """Gain over the split information; the missing rows count as one more branch."""
    known = float(per_bag.sum())
    if known - 0.0 <= SMALL:
        return 0.0
    split = -float(log_f(per_bag).sum()) - float(log_f(total - known)) + float(log_f(total))
    if abs(split) < SMALL:
        return 0.0
    return gain / (split / total)


def first_best(g: np.ndarray) -> int:
    """Index C4.5's scan keeps: a candidate replaces the kept one only if its gain is higher
    by more than SMALL, starting from a kept gain of 0; -1 if none is kept.

    The kept gain always lies within SMALL below the running maximum, so every
    position that beats the running maximum by more than SMALL is a replacement;
    after the last of those only near-ties remain, scanned one by one.
    """
    if g.size == 0:
        return -1
    before = np.maximum.accumulate(np.concatenate(([0.0], g[:-1])))
    sure = np.flatnonzero(g - before > SMALL)
    best = int(sure[-1]) if sure.size else -1
    kept = float(g[best]) if best >= 0 else 0.0
    for k in best + 1 + np.flatnonzero(g[best + 1:] - kept > SMALL):
        if g[k] - kept > SMALL:
            best, kept = int(k), float(g[k])
    return best


@dataclass
class Candidate:
    feature: int
    gain: float  # after the MDL correction for numeric splits
    ratio: float
    bags: np.ndarray  # (branches, classes) weighted counts of the known rows
    threshold: float | None = None  # numeric: the midpoint, later moved to a training value


def class_totals(y: np.ndarray, w: np.ndarray, n_classes: int) -> np.ndarray:
    return np.bincount(y, weights=w, minlength=n_classes)[:n_classes]


def nominal_candidate(j, x, y, w, total, n_values, n_classes, min_instances) -> Candidate | None:
    """One branch per category; needs two branches with at least ``min_instances`` weight."""
    known = ~np.isnan(x)
    codes = x[known].astype(np.intp)
    bags = np.bincount(codes * n_classes + y[known], weights=w[known],
                       minlength=n_values * n_classes).reshape(n_values, n_classes)
    per_bag = bags.sum(axis=1)
    if np.count_nonzero(per_bag - min_instances > -SMALL) < 2:
        return None
    gain = float(info_gain(bags, total))
    return Candidate(j, gain, gain_ratio(gain, per_bag, total), bags)


def numeric_candidate(j, x, y, w, total, n_classes, min_instances, mdl) -> Candidate | None:
    """Best binary cut ``x <= t`` by gain, then the MDL charge ``log2(cuts) / total``
    for having chosen among the ``cuts`` admissible positions."""
    known = ~np.isnan(x)
    n_known = int(np.count_nonzero(known))
    order = np.argsort(x[known], kind="stable")
    v, yk, wk = x[known][order], y[known][order], w[known][order]
    w_known = float(wk.sum())
    # each side must hold a tenth of the average class weight, at least min_instances, at most 25
    min_split = 0.1 * w_known / n_classes
    if min_split - min_instances < SMALL:
        min_split = float(min_instances)
    elif min_split - MAX_MIN_SPLIT > SMALL:
        min_split = MAX_MIN_SPLIT
    if 2.0 * min_split - n_known > SMALL:  # C4.5 compares the row count here, not the weight
        return None
    onehot = np.zeros((n_known, n_classes))
    onehot[np.arange(n_known), yk] = wk
    cum = np.cumsum(onehot, axis=0)[:-1]  # class weights left of each cut
    w_left = np.cumsum(wk)[:-1]
    w_right = w_known - w_left
    ok = ((v[:-1] + VALUE_GAP < v[1:]) & (w_left - min_split > -SMALL)
          & (w_right - min_split > -SMALL))
    cuts = np.flatnonzero(ok)
    if cuts.size == 0:
        return None
    left = cum[cuts]
    bags = np.stack([left, cum[-1] + onehot[-1] - left], axis=1)
    gains = info_gain(bags, total)
    k = first_best(gains)
    if k < 0:
        return None
    gain = float(gains[k]) - (math.log2(cuts.size) / total if mdl else 0.0)
    if gain < SMALL:
        return None
    i = int(cuts[k])  # rows 0..i go left
    mid = (v[i + 1] + v[i]) / 2.0
    if mid == v[i + 1]:  # no double between the two values: cut at the lower one
        mid = v[i]
    best = bags[k]
    return Candidate(j, gain, gain_ratio(gain, best.sum(axis=1), total), best, float(mid))


def select_split(X, y, w, rows, n_classes, nominal, min_instances, mdl, multi_valued):
    """The split C4.5 makes at a node with ``rows`` (weights ``w``), or None for a leaf.

    ``nominal`` maps a column to its number of categories; other columns are numeric.
    ``multi_valued[j]`` says whether column j counts towards the average gain.
    """
    total = float(w.sum())
    yr = y[rows]
    per_class = class_totals(yr, w, n_classes)
    if 2.0 * min_instances - total > SMALL or abs(total - per_class.max()) < SMALL:
        return None
    found = []
    for j in range(X.shape[1]):
        x = X[rows, j]
        if j in nominal:
            cand = nominal_candidate(j, x, yr, w, total, nominal[j], n_classes, min_instances)
        else:
            cand = numeric_candidate(j, x, yr, w, total, n_classes, min_instances, mdl)
        if cand is not None:
            found.append(cand)
    counted = [c.gain for c in found if multi_valued[c.feature]]
    if not counted:
        return None
    average = sum(counted) / len(counted)
    best, best_ratio = None, 0.0
    for c in found:  # feature order: the first of near-equal ratios wins
        if c.gain >= average - AVERAGE_SLACK and c.ratio - best_ratio > SMALL:
            best, best_ratio = c, c.ratio
    return best


def branch_shares(per_bag: np.ndarray) -> np.ndarray:
    """Each branch's share of the known weight: the fraction a missing row sends there."""
    known = float(per_bag.sum())
    if abs(known) < SMALL:
        return np.full(len(per_bag), 1.0 / len(per_bag))
    return per_bag / known


def route(x: np.ndarray, branch: np.ndarray, shares: np.ndarray, rows, w):
    """Rows and weights of every branch: known rows by ``branch`` (their branch index, any
    value where ``x`` is missing), missing rows to each branch with a share above SMALL."""
    missing = np.isnan(x)
    out = []
    for i, share in enumerate(shares):
        mine = ~missing & (branch == i)
        if share > SMALL:
            mine = mine | missing
            out.append((rows[mine], np.where(missing[mine], w[mine] * share, w[mine])))
        else:
            out.append((rows[mine], w[mine]))
    return out


def split_distribution(x, branch, y, w, n_branches, n_classes):
    """(branches, classes) weights of the rows as a split sees them: known rows in their
    branch, each missing row spread over the branches by the known shares."""
    missing = np.isnan(x)
    known = ~missing
    bags = np.bincount(branch[known] * n_classes + y[known], weights=w[known],
                       minlength=n_branches * n_classes).reshape(n_branches, n_classes)
    shares = branch_shares(bags.sum(axis=1))
    unknown = class_totals(y[missing], w[missing], n_classes)
    return bags + shares[:, None] * unknown[None, :], shares
