"""CHAID's statistics: the tests, Kass's Bonferroni multipliers and the merging of a
predictor's categories (Kass 1980, with the steps as SPSS documents them).

A *category* is one value of a predictor at a node (a code, a bin of a numeric
feature, or "missing"); its *stats* summarise the target over its rows:

* classification (:class:`CountTables`): weighted class counts, shape (k,);
* regression (:class:`MeanTables`): ``(weight, mean, M2)`` where M2 is the weighted
  sum of squared deviations from the mean, combined exactly (no sum-of-squares
  cancellation) when categories merge.

Weights are frequency weights: a row of weight 2 counts as two rows, in the
statistics and in the degrees of freedom of the F test.

:func:`merge_categories` runs the merging for one predictor:

1. **Merge** (alpha-merge): while more than two groups remain, find the allowed pair
   (any pair for a free predictor, neighbours for a monotonic one) that differs least
   -- the largest p-value of the test on that pair alone -- and merge it if that
   p-value exceeds ``alpha_merge``. Optionally (``alpha_resplit``) a merged group of
   three or more categories is split again in two where the two parts differ most,
   if that p-value is at most ``alpha_resplit``; a partition already visited is never
   re-entered, so the loop ends.
2. **Float** (monotonic predictors with missing values): the merging runs on the
   present values only; then "missing" either joins the group it differs least from
   or stays alone, whichever gives the smaller p-value of the whole table.
3. **Small groups**: while some group weighs less than ``min_child_size``, the
   lightest one joins the allowed group it differs least from.
4. **Adjust**: the p-value of the final table times the Bonferroni multiplier for
   c categories reduced to r groups (monotonic, free or floating), capped at 1.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special, stats

from rulegen.learn.trees.chaid_pairs import PairSearch, group_stats, pair_p_distinct

_EXHAUSTIVE = 12  # a free group of up to this many categories is re-split by trying every way


# --- tests ------------------------------------------------------------------------------


def chi_square(T, likelihood_ratio=False) -> tuple[np.ndarray, np.ndarray]:
    """(statistic, degrees of freedom) of each contingency table in ``T`` (n, rows, classes).
    Empty rows and columns do not count; Pearson's X^2, or the likelihood ratio G^2."""
    T = np.asarray(T, dtype=np.float64)
    R = T.sum(axis=2, keepdims=True)
    C = T.sum(axis=1, keepdims=True)
    N = R.sum(axis=1, keepdims=True)
    E = np.divide(R * C, N, out=np.zeros_like(T), where=N > 0)
    if likelihood_ratio:
        ratio = np.divide(T, E, out=np.ones_like(T), where=(T > 0) & (E > 0))
        stat = 2.0 * (T * np.log(ratio)).sum(axis=(1, 2))
    else:
        stat = np.divide((T - E) ** 2, E, out=np.zeros_like(T), where=E > 0).sum(axis=(1, 2))
    df = ((R[:, :, 0] > 0).sum(axis=1) - 1) * ((C[:, 0, :] > 0).sum(axis=1) - 1)
    return np.maximum(stat, 0.0), np.maximum(df, 0)


def f_test(T) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(F, df1, df2) of one-way ANOVA for each stack of groups in ``T`` (n, groups, 3)
    holding (weight, mean, M2). F is +inf when the groups differ and are each constant."""
    T = np.asarray(T, dtype=np.float64)
    w, m, M2 = T[..., 0], T[..., 1], T[..., 2]
    W = w.sum(axis=1)
    r = (w > 0).sum(axis=1)
    grand = np.divide((w * m).sum(axis=1), W, out=np.zeros_like(W), where=W > 0)
    ssb = (w * (m - grand[:, None]) ** 2).sum(axis=1)
    # the grand mean is rounded; a between-group sum this small is that rounding, not a signal
    scale = np.where(w > 0, np.abs(m), 0.0).max(axis=1)
    ssb = np.where(ssb <= W * (8 * np.finfo(float).eps * scale) ** 2, 0.0, ssb)
    ssw = M2.sum(axis=1)
    df1, df2 = (r - 1).astype(np.float64), W - r
    ok = (df1 > 0) & (df2 > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        F = np.where(ssw > 0, (ssb / df1) / (ssw / df2), np.where(ssb > 0, np.inf, 0.0))
    return np.where(ok, F, 0.0), np.where(ok, df1, 0.0), np.where(ok, df2, 0.0)


def _survival(sf, logsf, log, ok, stat, *df):
    """P(X >= stat) (or its log) where ``ok``, else 1 (log 0): nothing to test. ``sf`` is a
    scipy.special ufunc taking (df..., x) -- scipy.stats costs 100x more per call --; the
    log falls back to scipy.stats' ``logsf`` (x, df...) where the p-value underflows."""
    out = np.zeros(len(stat)) if log else np.ones(len(stat))
    if not ok.any():
        return out
    args = [d[ok] for d in df]
    p = sf(*args, stat[ok])
    if not log:
        out[ok] = p
        return out
    with np.errstate(divide="ignore"):
        lp = np.log(p)
    tiny = p < 1e-300
    if tiny.any():
        lp[tiny] = logsf(stat[ok][tiny], *(a[tiny] for a in args))
    out[ok] = lp
    return out


@dataclass
class TestResult:
    statistic: float
    df: tuple  # (df,) for chi-square, (df1, df2) for F
    p_value: float
    log_p: float


class CountTables:
    """Classification: group stats are weighted class counts; Pearson or likelihood ratio."""

    def __init__(self, likelihood_ratio: bool = False):
        self.likelihood_ratio = likelihood_ratio

    @staticmethod
    def combine(cat, M):
        return np.asarray(M, dtype=np.float64) @ cat

    @staticmethod
    def weight(G):
        return np.asarray(G).sum(axis=-1)

    def _stat(self, T):
        stat, df = chi_square(T, self.likelihood_ratio)
        return stat, (df,)

    @staticmethod
    def _sf(stat, df, log=False):
        (d,) = df
        return _survival(special.chdtrc, stats.chi2.logsf, log, d > 0, stat, d)

    def pair_p(self, A, B) -> np.ndarray:
        """p-value of the test on each pair of groups (rows of A and B)."""
        stat, df = self._stat(np.stack([A, B], axis=1))
        return self._sf(stat, df)

    def table(self, G) -> TestResult:
        stat, df = self._stat(np.asarray(G)[None])
        return TestResult(float(stat[0]), tuple(float(d[0]) for d in df),
                          float(self._sf(stat, df)[0]), float(self._sf(stat, df, log=True)[0]))

    @staticmethod
    def order_key(cat):
        """A one-number summary per category (for re-splitting large free groups)."""
        top = np.argmax(cat.sum(axis=0))
        return cat[:, top] / cat.sum(axis=1)


class MeanTables(CountTables):
    """Regression: group stats are (weight, mean, M2); the F test."""

    def __init__(self):
        super().__init__(False)

    @staticmethod
    def combine(cat, M):
        M = np.asarray(M, dtype=np.float64)
        w, m, M2 = cat[:, 0], cat[:, 1], cat[:, 2]
        wg = M @ w
        mg = np.divide(M @ (w * m), wg, out=np.zeros_like(wg), where=wg > 0)
        M2g = M @ M2 + ((M * w) * (m[None, :] - mg[:, None]) ** 2).sum(axis=1)
        return np.stack([wg, mg, M2g], axis=1)

    @staticmethod
    def weight(G):
        return np.asarray(G)[..., 0]

    def _stat(self, T):
        F, df1, df2 = f_test(T)
        return F, (df1, df2)

    def pair_p(self, A, B) -> np.ndarray:
        """:func:`f_test` on each pair, written out for two groups (a sum over the pair is
        a + b, as numpy reduces two terms): the merge step tests millions of pairs."""
        A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
        wa, ma, wb, mb = A[:, 0], A[:, 1], B[:, 0], B[:, 1]
        W = wa + wb
        r = (wa > 0).astype(np.intp) + (wb > 0)
        grand = np.divide(wa * ma + wb * mb, W, out=np.zeros_like(W), where=W > 0)
        ssb = wa * (ma - grand) ** 2 + wb * (mb - grand) ** 2
        scale = np.maximum(np.where(wa > 0, np.abs(ma), 0.0), np.where(wb > 0, np.abs(mb), 0.0))
        ssb = np.where(ssb <= W * (8 * np.finfo(float).eps * scale) ** 2, 0.0, ssb)
        ssw = A[:, 2] + B[:, 2]
        df1, df2 = (r - 1).astype(np.float64), W - r
        ok = (df1 > 0) & (df2 > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            F = np.where(ssw > 0, (ssb / df1) / (ssw / df2), np.where(ssb > 0, np.inf, 0.0))
        return self._sf(np.where(ok, F, 0.0), (np.where(ok, df1, 0.0), np.where(ok, df2, 0.0)))

    @staticmethod
    def _sf(stat, df, log=False):
        d1, d2 = df
        return _survival(special.fdtrc, stats.f.logsf, log, d1 > 0, stat, d1, d2)

    @staticmethod
    def order_key(cat):
        return cat[:, 1]


# --- Bonferroni multipliers (Kass 1980) ------------------------------------------------------


@functools.lru_cache(maxsize=256)
def stirling2(c: int, r: int) -> int:
    """Ways to partition c items into r non-empty unordered groups."""
    # the sum costs r powers of c-digit numbers (seconds for thousands of categories); the
    # ends that merging without a merge (alpha_merge = 1) or down to two groups reach are known
    if 1 <= r <= c:
        if r == c or r == 1:
            return 1
        if r == c - 1:
            return math.comb(c, 2)
        if r == 2:
            return 2 ** (c - 1) - 1
    return sum((-1) ** i * math.comb(r, i) * (r - i) ** c for i in range(r + 1)) // math.factorial(r)


def bonferroni(c: int, r: int, kind: str) -> int:
    """Kass's multiplier for c categories reduced to r groups: "monotonic" (ordered,
    only neighbours merge), "free" (any merge) or "floating" (ordered, plus one category
    -- missing -- that may join any group or stay alone; c counts it)."""
    if not 1 <= r <= c:
        raise ValueError(f"cannot reduce {c} categories to {r} groups")
    if kind == "monotonic":
        return math.comb(c - 1, r - 1)
    if kind == "free":
        return stirling2(c, r)
    if kind == "floating":
        if r == 1:
            return 1
        return math.comb(c - 2, r - 2) + r * math.comb(c - 2, r - 1)
    raise ValueError(f"unknown predictor kind {kind!r}")


# --- merging ------------------------------------------------------------------------------------


@dataclass
class Merged:
    """The outcome for one predictor. ``groups`` hold positions into the categories given,
    each sorted, ordered by their first position (so a missing-only group comes last)."""

    groups: list[list[int]]
    kind: str
    statistic: float = 0.0
    df: tuple = ()
    p_value: float = 1.0
    log_p: float = 0.0
    multiplier: int = 1
    adjusted_p: float = 1.0
    log_adjusted_p: float = 0.0
    merges: list[tuple[list[int], list[int], float]] = field(default_factory=list)


class _Merger:
    def __init__(self, cat, tables, ordered, float_cat):
        self.cat, self.tables, self.ordered, self.float_cat = cat, tables, ordered, float_cat

    def stats(self, groups):
        return group_stats(self.tables, self.cat, groups)

    def partners(self, groups, i):
        """Groups that group i may merge with."""
        alone = self.float_cat is not None and groups[-1] == [self.float_cat]
        if not self.ordered or (alone and i == len(groups) - 1):
            return [j for j in range(len(groups)) if j != i]
        last = len(groups) - (2 if alone else 1)  # the last group of present values
        out = [j for j in (i - 1, i + 1) if 0 <= j <= last]
        return out + ([len(groups) - 1] if alone else [])

    def best_binary(self, members):
        """(p, part A, part B) of the most significant split of a group in two."""
        m = len(members)
        if self.ordered:
            masks = np.tri(m - 1, m, dtype=bool)  # first k members, k = 1..m-1
        elif m <= _EXHAUSTIVE:
            bits = np.arange(1, 2 ** (m - 1))  # member 0 stays in B: each split once
            masks = ((bits[:, None] >> np.arange(m - 1)) & 1).astype(bool)
            masks = np.concatenate([np.zeros((len(bits), 1), dtype=bool), masks], axis=1)
        else:
            order = np.argsort(self.tables.order_key(self.cat[members]), kind="stable")
            masks = np.zeros((m - 1, m), dtype=bool)
            for k in range(1, m):
                masks[k - 1, order[:k]] = True
        sub = self.cat[members]
        p = self.tables.pair_p(self.tables.combine(sub, masks), self.tables.combine(sub, ~masks))
        k = int(np.argmin(p))
        arr = np.asarray(members)
        return float(p[k]), sorted(arr[masks[k]].tolist()), sorted(arr[~masks[k]].tolist())


def _whole(cat) -> bool:
    """Whether every sum of the counts in ``cat`` is exact: whole numbers below 2**53."""
    return bool(np.all(np.floor(cat) == cat)) and float(cat.sum()) < 2.0 ** 53


def _alpha_merge(mg, groups, alpha_merge, alpha_resplit, max_resplits, merges):
    """Step 1 on ``groups`` (in order of first member); returns the groups it ends with.
    Each group sits at its first member (its slot) in ``by_slot``."""
    c = len(mg.cat)
    if len(groups) <= 2:
        return groups
    by_slot = {g[0]: g for g in groups}
    search = PairSearch(mg.tables, mg.ordered, c, list(by_slot), mg.stats(groups))
    # a re-split may not re-enter a partition already visited. The number of groups never
    # grows, so only partitions of the current count r (and the r - 1 ones visited on the
    # way) can recur; a partition is known by each category's slot, as bytes.
    label = np.full(c, -1, dtype=np.int32)
    for g in groups:
        label[g] = g[0]
    seen = {len(groups): {label.tobytes()}} if alpha_resplit is not None else None
    resplits = 0
    while len(by_slot) > 2:
        i, j, p = search.best()  # the table's row-major argmax: the first pair on ties
        if p <= alpha_merge:
            break
        r = len(by_slot)
        gi, gj = by_slot[i], by_slot.pop(j)
        merged = by_slot[i] = sorted(gi + gj)
        merges.append((gi, gj, p))
        split = None
        if seen is not None:
            label[gj] = i
            seen.setdefault(r - 1, set()).add(label.tobytes())
            if len(merged) >= 3 and resplits < max_resplits:
                ps, A, B = mg.best_binary(merged)
                split = label.copy()
                split[A], split[B] = A[0], B[0]
                if ps > alpha_resplit or split.tobytes() in seen.get(r, ()):
                    split = None
        if split is None:
            search.merge(i, j, mg.stats([merged])[0])
            if seen is not None:
                seen.pop(r, None)
            continue
        label = split
        seen[r].add(label.tobytes())
        resplits += 1
        del by_slot[i]
        by_slot[A[0]], by_slot[B[0]] = A, B
        slots = sorted(by_slot)
        search.reset(slots, mg.stats([by_slot[s] for s in slots]))
    return [by_slot[s] for s in sorted(by_slot)]


def merge_categories(cat, tables, *, ordered: bool, missing_last: bool, alpha_merge: float,
                     alpha_resplit: float | None = None, min_child_size: float = 0.0,
                     bonferroni_adjust: bool = True) -> Merged:
    """Merge the c categories whose stats are the rows of ``cat`` (all of positive weight,
    in their natural order for an ordered predictor); ``missing_last`` says the last one is
    "missing" (floating for an ordered predictor, an ordinary category for a free one)."""
    cat = np.asarray(cat, dtype=np.float64)
    c = len(cat)
    float_cat = c - 1 if (ordered and missing_last) else None
    kind = "free" if not ordered else ("floating" if float_cat is not None else "monotonic")
    mg = _Merger(cat, tables, ordered, float_cat)
    groups = [[i] for i in range(c) if i != float_cat]
    merges: list = []
    # 1. merge the least different allowed pair while it is not significant (chaid_pairs
    # finds it); a merged group of three or more may be re-split
    groups = _alpha_merge(mg, groups, alpha_merge, alpha_resplit, 10 * c, merges)
    # 2. the floating category: join the most similar group, or stay alone
    if float_cat is not None:
        alone = groups + [[float_cat]]
        if groups:
            G = mg.stats(groups)
            p = tables.pair_p(np.repeat(cat[[float_cat]], len(groups), axis=0), G)
            j = int(np.argmax(p))
            joined = [sorted(g + [float_cat]) if i == j else g for i, g in enumerate(groups)]
            log_alone = tables.table(mg.stats(alone)).log_p
            log_joined = tables.table(mg.stats(joined)).log_p if len(joined) > 1 else 0.0
            if log_joined <= log_alone:
                merges.append(([float_cat], groups[j], float(p[j])))
                groups = joined
            else:
                groups = alone
        else:
            groups = alone
    # 3. groups lighter than min_child_size join their most similar allowed partner. With
    # whole counts every order of addition gives the same sums, so only the merged group's
    # stats are recomputed; otherwise all of them, as a block's sums depend on its rows
    exact = not isinstance(tables, MeanTables) and _whole(cat)
    G = mg.stats(groups) if len(groups) > 1 else None
    while len(groups) > 1:
        wts = tables.weight(G)
        small = np.flatnonzero(wts < min_child_size)
        if small.size == 0:
            break
        i = int(small[np.argmin(wts[small])])
        cand = mg.partners(groups, i)
        p = pair_p_distinct(tables, G[i], G[cand])
        j = cand[int(np.argmax(p))]
        merges.append((groups[i], groups[j], float(np.max(p))))
        merged = sorted(groups[i] + groups[j])
        rest = [k for k in range(len(groups)) if k not in (i, j)]
        groups = [groups[k] for k in rest] + [merged]
        order = sorted(range(len(groups)), key=lambda k: (groups[k] == [float_cat], groups[k][0]))
        groups = [groups[k] for k in order]
        G = np.concatenate([G[rest], mg.stats([merged])])[order] if exact else mg.stats(groups)
    out = Merged(groups=groups, kind=kind, merges=merges)
    if len(groups) < 2:
        return out
    res = tables.table(mg.stats(groups))
    B = bonferroni(c, len(groups), kind) if bonferroni_adjust else 1
    out.statistic, out.df, out.p_value, out.log_p = res.statistic, res.df, res.p_value, res.log_p
    out.multiplier = B
    out.log_adjusted_p = min(0.0, res.log_p + math.log(B))
    # Kass's multipliers outgrow a float quickly (free: Stirling numbers); logs do not
    huge = B.bit_length() > 1000
    out.adjusted_p = math.exp(out.log_adjusted_p) if huge else min(1.0, res.p_value * B)
    return out
