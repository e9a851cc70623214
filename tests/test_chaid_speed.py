"""CHAID's merge step without the (r, r) table of pairs (issue 20): the same groups, merges
and p-values, bit for bit, as the table-based algorithm kept here as the reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rulegen.learn.trees import chaid_pairs
from rulegen.learn.trees.chaid import CHAIDClassifier
from rulegen.learn.trees.chaid_merge import (
    CountTables,
    MeanTables,
    Merged,
    bonferroni,
    merge_categories,
    stirling2,
)
from rulegen.learn.trees.chaid_pairs import group_stats

# --- the reference: the merge step with the full table (before issue 20) -----------------------


def _stats(tables, cat, groups):
    M = np.zeros((len(groups), len(cat)))
    for i, g in enumerate(groups):
        M[i, g] = 1.0
    return tables.combine(cat, M)


def _pair_table(tables, cat, groups, ordered):
    r = len(groups)
    G = _stats(tables, cat, groups)
    I, J = (np.arange(r - 1), np.arange(1, r)) if ordered else np.triu_indices(r, 1)
    P = np.full((r, r), -1.0)
    P[I, J] = tables.pair_p(G[I], G[J])
    return G, P


def _renew(tables, G, P, i, ordered):
    r = len(G)
    others = np.array([i - 1, i + 1]) if ordered else np.arange(r)
    others = others[(others >= 0) & (others < r) & (others != i)]
    P[i, :] = -1.0
    P[:, i] = -1.0
    if others.size:
        p = tables.pair_p(np.repeat(G[[i]], len(others), axis=0), G[others])
        P[np.minimum(others, i), np.maximum(others, i)] = p


def _key(groups):
    return frozenset(frozenset(g) for g in groups)


def reference(cat, tables, *, ordered, missing_last, alpha_merge, alpha_resplit=None,
              min_child_size=0.0):
    """The merging as it was: argmax over the whole table, np.delete per merge."""
    from rulegen.learn.trees.chaid_merge import _Merger

    cat = np.asarray(cat, dtype=np.float64)
    c = len(cat)
    float_cat = c - 1 if (ordered and missing_last) else None
    kind = "free" if not ordered else ("floating" if float_cat is not None else "monotonic")
    mg = _Merger(cat, tables, ordered, float_cat)
    stats = lambda groups: _stats(tables, cat, groups)
    groups = [[i] for i in range(c) if i != float_cat]
    merges, seen, resplits = [], {_key(groups)}, 0
    G, P = _pair_table(tables, cat, groups, ordered)
    while len(groups) > 2:
        i, j = divmod(int(np.argmax(P)), len(groups))
        if P[i, j] <= alpha_merge:
            break
        merged = sorted(groups[i] + groups[j])
        merges.append((groups[i], groups[j], float(P[i, j])))
        rest = [g for k, g in enumerate(groups) if k not in (i, j)]
        groups = sorted(rest + [merged], key=lambda g: g[0])
        seen.add(_key(groups))
        split = None
        if alpha_resplit is not None and len(merged) >= 3 and resplits < 10 * c:
            ps, A, B = mg.best_binary(merged)
            split = sorted([g for g in groups if g != merged] + [A, B], key=lambda g: g[0])
            if ps > alpha_resplit or _key(split) in seen:
                split = None
        if split is not None:
            groups = split
            seen.add(_key(groups))
            resplits += 1
            G, P = _pair_table(tables, cat, groups, ordered)
        else:
            G = np.delete(G, j, axis=0)
            G[i] = stats([merged])[0]
            P = np.delete(np.delete(P, j, axis=0), j, axis=1)
            _renew(tables, G, P, i, ordered)
    if float_cat is not None:
        alone = groups + [[float_cat]]
        if groups:
            G = stats(groups)
            p = tables.pair_p(np.repeat(cat[[float_cat]], len(groups), axis=0), G)
            j = int(np.argmax(p))
            joined = [sorted(g + [float_cat]) if i == j else g for i, g in enumerate(groups)]
            log_alone = tables.table(stats(alone)).log_p
            log_joined = tables.table(stats(joined)).log_p if len(joined) > 1 else 0.0
            if log_joined <= log_alone:
                merges.append(([float_cat], groups[j], float(p[j])))
                groups = joined
            else:
                groups = alone
        else:
            groups = alone
    while len(groups) > 1:
        wts = tables.weight(stats(groups))
        small = np.flatnonzero(wts < min_child_size)
        if small.size == 0:
            break
        i = int(small[np.argmin(wts[small])])
        cand = mg.partners(groups, i)
        G = stats(groups)
        p = tables.pair_p(np.repeat(G[[i]], len(cand), axis=0), G[cand])
        j = cand[int(np.argmax(p))]
        merges.append((groups[i], groups[j], float(np.max(p))))
        merged = sorted(groups[i] + groups[j])
        groups = [g for k, g in enumerate(groups) if k not in (i, j)] + [merged]
        groups.sort(key=lambda g: (g == [float_cat], g[0]))
    out = Merged(groups=groups, kind=kind, merges=merges)
    if len(groups) < 2:
        return out
    res = tables.table(stats(groups))
    B = bonferroni(c, len(groups), kind)
    out.statistic, out.df, out.p_value, out.log_p = res.statistic, res.df, res.p_value, res.log_p
    out.multiplier = B
    out.log_adjusted_p = min(0.0, res.log_p + math.log(B))
    huge = B.bit_length() > 1000
    out.adjusted_p = math.exp(out.log_adjusted_p) if huge else min(1.0, res.p_value * B)
    return out


# --- helpers -------------------------------------------------------------------------------------


def bits(x):
    return np.asarray(x, dtype=np.float64).tobytes()


def assert_same(new: Merged, old: Merged):
    assert new.groups == old.groups
    assert [(a, b) for a, b, _ in new.merges] == [(a, b) for a, b, _ in old.merges]
    assert bits([p for *_, p in new.merges]) == bits([p for *_, p in old.merges])
    assert (new.kind, new.multiplier, new.df) == (old.kind, old.multiplier, old.df)
    assert bits([new.statistic, new.p_value, new.log_p, new.adjusted_p, new.log_adjusted_p]) == \
        bits([old.statistic, old.p_value, old.log_p, old.adjusted_p, old.log_adjusted_p])


def random_table(rng, c, regression):
    """Category stats from a few rows each (1-2 rows mostly: p = 1 ties everywhere), some
    categories alike, weights whole or fractional."""
    n = rng.integers(1, 4, c) * rng.choice([1, 1, 3])
    frac = rng.random() < 0.3
    level = rng.choice([0.0, 0.5, 2.0], c)
    if regression:
        out = np.zeros((c, 3))
        for i in range(c):
            y = level[i] + (np.round(rng.normal(size=n[i])) if rng.random() < 0.5
                            else rng.normal(size=n[i]))
            w = rng.random(n[i]) + 0.5 if frac else np.ones(n[i])
            m = (w * y).sum() / w.sum()
            out[i] = w.sum(), m, (w * (y - m) ** 2).sum()
        return out, MeanTables()
    k = int(rng.integers(2, 4))
    out = np.zeros((c, k))
    for i in range(c):
        prob = np.exp(level[i] * np.arange(k))
        ys = rng.choice(k, n[i], p=prob / prob.sum())
        w = rng.random(n[i]) + 0.5 if frac else np.ones(n[i])
        np.add.at(out[i], ys, w)
    return out, CountTables(likelihood_ratio=bool(rng.random() < 0.3))


# --- tests -------------------------------------------------------------------------------------


def test_same_merges_as_the_table_on_random_tables():
    rng = np.random.default_rng(20)
    kinds, resplit_runs = set(), 0
    for case in range(300):
        regression = bool(case % 2)
        cat, tables = random_table(rng, int(rng.integers(3, 30)), regression)
        ordered = bool(rng.random() < 0.4)
        am = float(rng.choice([0.05, 0.3, 0.8]))
        kw = {"ordered": ordered, "missing_last": bool(rng.random() < 0.5), "alpha_merge": am,
              "alpha_resplit": [None, am, am / 3][case % 3],
              "min_child_size": float(rng.choice([0.0, 3.0, 8.0]))}
        new = merge_categories(cat, tables, **kw)
        old = reference(cat, tables, **kw)
        assert_same(new, old)
        kinds.add((new.kind, regression))
        resplit_runs += len(new.merges) > len(cat) - len(new.groups)  # a re-split undid a merge
    assert len(kinds) == 6 and resplit_runs >= 5


def test_same_merges_on_larger_tables_with_heavy_ties():
    rng = np.random.default_rng(21)
    for case, (c, regression, ordered) in enumerate(
            [(400, False, False), (300, True, False), (400, False, True), (250, True, True)]):
        cat, tables = random_table(rng, c, regression)
        kw = {"ordered": ordered, "missing_last": case % 2 == 0, "alpha_merge": 0.05,
              "alpha_resplit": 0.05 if case < 2 else None, "min_child_size": 5.0}
        assert_same(merge_categories(cat, tables, **kw), reference(cat, tables, **kw))


class CoarseTables(CountTables):
    """p-values from a handful of levels, by the pair's order, sometimes NaN: ties at every
    level, for the tie-breaks (first row, then first column; NaN counts as the largest)."""

    def __init__(self, nan):
        super().__init__()
        self.nan = nan

    def pair_p(self, A, B):
        a, b = np.asarray(A).sum(axis=1), np.asarray(B).sum(axis=1)
        p = ((3 * a + 7 * b) % 5) / 5.0
        return np.where((a + b) % 11 == 0, np.nan, p) if self.nan else p


@pytest.mark.parametrize("nan", [False, True])
def test_ties_at_every_level_break_as_the_table_does(nan):
    rng = np.random.default_rng(26)
    for case in range(150):
        c = int(rng.integers(3, 40))
        cat = rng.integers(0, 4, (c, 2)).astype(float)
        cat[cat.sum(axis=1) == 0, 0] = 1.0
        kw = {"ordered": case % 4 == 0, "missing_last": case % 3 == 0,
              "alpha_merge": float(rng.choice([0.1, 0.3, 0.5])),
              "alpha_resplit": [None, 0.1][case % 2], "min_child_size": float(case % 5)}
        tables = CoarseTables(nan)
        assert_same(merge_categories(cat, tables, **kw), reference(cat, tables, **kw))


def test_many_light_groups_join_as_with_the_table():
    """No merging at all (alpha_merge = 1): the small-group step does every merge, with stats
    updated one group at a time for whole counts and recomputed otherwise."""
    rng = np.random.default_rng(27)
    for case in range(8):
        cat, tables = random_table(rng, int(rng.integers(60, 160)), regression=case % 4 == 3)
        kw = {"ordered": case % 2 == 1, "missing_last": case % 3 != 0, "alpha_merge": 1.0,
              "min_child_size": float(rng.choice([4.0, 9.0, 25.0]))}
        new = merge_categories(cat, tables, **kw)
        assert_same(new, reference(cat, tables, **kw))
        assert len(new.merges) > 10


def test_pair_p_does_not_depend_on_the_batch():
    rng = np.random.default_rng(22)
    for regression in (False, True):
        A, tables = random_table(rng, 2000, regression)
        B = A[rng.permutation(len(A))]
        whole = tables.pair_p(A, B)
        for size in (1, 2, 3, 7, 64, 1999):
            parts = [tables.pair_p(A[s:s + size], B[s:s + size]) for s in range(0, len(A), size)]
            assert bits(np.concatenate(parts)) == bits(whole)


def test_group_stats_in_row_blocks_are_the_whole_matrix_sums():
    # fractional sums of many terms: the order of additions shows in the bits
    rng = np.random.default_rng(23)
    c = 3000
    label = rng.integers(0, 700, c)
    groups = [np.flatnonzero(label == g).tolist() for g in np.unique(label)]
    for cat, tables in ((rng.random((c, 3)) * 2.7, CountTables()),
                        (np.stack([rng.random(c) * 3, rng.normal(size=c), rng.random(c)], 1),
                         MeanTables())):
        whole = _stats(tables, cat, groups)
        for budget in (1, 64 * c, 200 * c):
            assert bits(group_stats(tables, cat, groups, budget)) == bits(whole)
        assert bits(group_stats(tables, cat, groups)) == bits(whole)


def test_small_row_blocks_through_merging(monkeypatch):
    monkeypatch.setattr(chaid_pairs, "_BUDGET", 1)  # blocks of 64 rows from the start
    rng = np.random.default_rng(24)
    for regression in (False, True):
        cat, tables = random_table(rng, 200, regression)
        kw = {"ordered": False, "missing_last": True, "alpha_merge": 0.3, "alpha_resplit": 0.1,
              "min_child_size": 4.0}
        assert_same(merge_categories(cat, tables, **kw), reference(cat, tables, **kw))


def test_many_levels_fit():
    """A 300-level predictor on 3,000 rows: the root's merging is the reference's."""
    rng = np.random.default_rng(25)
    x = rng.integers(0, 300, 3000).astype(float)
    x[rng.random(3000) < 0.05] = np.nan
    y = ((np.nan_to_num(x, nan=1) % 3 == 0) ^ (rng.random(3000) < 0.1)).astype(int)
    est = CHAIDClassifier(max_depth=1).fit(x[:, None], y, categorical_features=[0])
    assert len(est.splits_[0]["groups"]) >= 2
    codes = np.where(np.isnan(x), 300, np.nan_to_num(x)).astype(int)
    cat = np.zeros((301, 2))
    np.add.at(cat, (codes, y), 1.0)
    present = np.flatnonzero(cat.sum(axis=1) > 0)
    kw = {"ordered": False, "missing_last": True, "alpha_merge": 0.05, "min_child_size": 7.0}
    new = merge_categories(cat[present], CountTables(), **kw)
    assert_same(new, reference(cat[present], CountTables(), **kw))
    assert [[int(present[i]) for i in g] for g in new.groups] == est.splits_[0]["groups"]


def test_stirling_numbers_at_the_ends_are_the_sum():
    def plain(c, r):
        return sum((-1) ** i * math.comb(r, i) * (r - i) ** c
                   for i in range(r + 1)) // math.factorial(r)

    for c in range(40):
        for r in range(c + 3):
            assert stirling2(c, r) == plain(c, r)
    for c, r in ((300, 300), (300, 299), (300, 2), (300, 1), (300, 3)):
        assert stirling2(c, r) == plain(c, r)
