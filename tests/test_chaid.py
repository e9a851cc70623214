"""CHAID: the tests against scipy, merging order, Kass's multipliers against enumeration, the
floating missing category, F-test regression, stopping rules, every target, bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from targetcheck import assert_targets_exact

from rulegen.errors import LearnerError
from rulegen.ir.nodes import DefaultChild, IntervalTest, Leaf, MultiwayTest, Split
from rulegen.learn.trees.chaid import CHAIDClassifier, CHAIDRegressor, quantile_cuts
from rulegen.learn.trees.chaid_merge import (
    CountTables,
    MeanTables,
    bonferroni,
    chi_square,
    f_test,
    merge_categories,
)

# --- helpers ---------------------------------------------------------------------------------


def route(split: Split, X) -> np.ndarray:
    """Child position of every row at ``split``, written out from docs/IR.md."""
    x = np.asarray(X, dtype=np.float64)[:, split.test.feature]
    nan = np.isnan(x)
    test = split.test
    if isinstance(test, IntervalTest):
        xs = x.astype(np.float32)
        child = np.searchsorted(np.asarray(test.bounds, dtype=np.float32), xs, side="left")
    else:
        child = np.full(len(x), split.unseen)
        for i, g in enumerate(test.groups):
            child[np.isin(x, g)] = i
    child[nan] = split.missing.child
    return child


def table_of(child, y, r, k):
    T = np.zeros((r, k))
    np.add.at(T, (child, y), 1.0)
    return T


def mean_stats(y, codes, c):
    """(weight, mean, M2) per category, computed directly."""
    out = np.zeros((c, 3))
    for i in range(c):
        v = y[codes == i]
        out[i] = len(v), v.mean(), ((v - v.mean()) ** 2).sum()
    return out


def mixed_data(seed, n=600):
    """A categorical predictor (5 codes) and two numeric ones, missing cells in each; the
    class depends on the categorical one, on the sign of x1 and on x1 being missing."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 5, n).astype(float)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    c[rng.random(n) < 0.1] = np.nan
    x1[rng.random(n) < 0.15] = np.nan
    x2[rng.random(n) < 0.05] = np.nan
    effect = np.array([-1.0, -1.0, 0.5, 1.5, 1.5])[np.nan_to_num(c, nan=2).astype(int)]
    logit = effect + np.where(np.isnan(x1), -2.0, np.sign(np.nan_to_num(x1)))
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return np.column_stack([c, x1, x2]), y, logit, rng


# --- the statistics ---------------------------------------------------------------------------


def test_pearson_and_likelihood_ratio_by_hand_and_against_scipy():
    # by hand: rows (20, 20), columns (30, 10), N 40 -> E = [[15, 5], [15, 5]]
    T = np.array([[10.0, 10.0], [20.0, 0.0]])
    stat, df = chi_square(T[None])
    assert stat[0] == pytest.approx(25 / 15 + 25 / 5 + 25 / 15 + 25 / 5) and df[0] == 1
    res = CountTables().table(T)
    assert res.p_value == pytest.approx(stats.chi2.sf(40 / 3, 1), rel=1e-12)
    assert res.p_value == pytest.approx(2.607e-4, rel=1e-3)
    assert res.log_p == pytest.approx(math.log(res.p_value), rel=1e-12)
    for T in (np.array([[10.0, 20.0], [30.0, 5.0]]),
              np.array([[12.0, 5.0, 9.0], [3.0, 14.0, 8.0], [7.0, 7.0, 20.0]])):
        chi2, p, dof, _ = stats.chi2_contingency(T, correction=False)
        res = CountTables().table(T)
        assert res.df == (dof,)
        assert (res.statistic, res.p_value) == pytest.approx((chi2, p), rel=1e-12)
        g2, p2, _, _ = stats.chi2_contingency(T, correction=False, lambda_="log-likelihood")
        res = CountTables(likelihood_ratio=True).table(T)
        assert (res.statistic, res.p_value) == pytest.approx((g2, p2), rel=1e-12)
    # an empty class column does not count toward the degrees of freedom
    T = np.array([[5.0, 0.0, 3.0], [2.0, 0.0, 7.0], [4.0, 0.0, 4.0]])
    chi2, p, dof, _ = stats.chi2_contingency(T[:, [0, 2]], correction=False)
    res = CountTables().table(T)
    assert res.df == (2.0,) and res.p_value == pytest.approx(p, rel=1e-12)
    # one class only: nothing to test
    assert CountTables().table(np.array([[4.0, 0.0], [6.0, 0.0]])).p_value == 1.0


def test_f_test_against_scipy():
    rng = np.random.default_rng(0)
    groups = [rng.normal(mu, 1.0, size) for mu, size in [(0.0, 12), (0.4, 20), (1.1, 9)]]
    y = np.concatenate(groups)
    codes = np.repeat(np.arange(3), [len(g) for g in groups])
    res = MeanTables().table(mean_stats(y, codes, 3))
    F, p = stats.f_oneway(*groups)
    assert (res.statistic, res.p_value) == pytest.approx((F, p), rel=1e-10)
    assert res.df == (2.0, len(y) - 3.0)
    # merging stats is exact: pooled groups equal the stats of the pooled data
    merged = MeanTables.combine(mean_stats(y, codes, 3), np.array([[1, 0, 1], [0, 1, 0]]))
    pooled = np.where(codes == 2, 0, codes)
    assert merged == pytest.approx(mean_stats(y, pooled, 2), rel=1e-12)
    # constant groups: infinitely significant if they differ, not at all if they do not
    F, _, _ = f_test(np.array([[[3, 1.0, 0.0], [4, 2.0, 0.0]]]))
    assert F[0] == math.inf
    assert MeanTables().table(np.array([[3, 0.1, 0.0], [4, 0.1, 0.0]])).p_value == 1.0


# --- Bonferroni multipliers ---------------------------------------------------------------------


def set_partitions(items):
    """Every partition of ``items`` into non-empty blocks (small inputs only)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in set_partitions(rest):
        yield [[first]] + part
        for i in range(len(part)):
            yield part[:i] + [[first] + part[i]] + part[i + 1:]


def contiguous(block):
    return max(block) - min(block) + 1 == len(block)


@pytest.mark.parametrize("c", range(2, 8))
def test_bonferroni_multipliers_count_the_allowed_groupings(c):
    parts = list(set_partitions(list(range(c))))
    for r in range(1, c + 1):
        of_r = [p for p in parts if len(p) == r]
        # free: any grouping; Kass's sum formula too
        assert bonferroni(c, r, "free") == len(of_r)
        kass = sum((-1) ** i * (r - i) ** c / (math.factorial(i) * math.factorial(r - i))
                   for i in range(r))
        assert bonferroni(c, r, "free") == pytest.approx(kass)
        # monotonic: every group a run of neighbours
        assert bonferroni(c, r, "monotonic") == sum(all(map(contiguous, p)) for p in of_r)
        assert bonferroni(c, r, "monotonic") == math.comb(c - 1, r - 1)
        # floating: the last category may join any group or stay alone; the rest are ordered
        flo = c - 1
        allowed = sum(all(contiguous([v for v in b if v != flo]) for b in p if b != [flo])
                      for p in of_r)
        if r >= 2:
            assert bonferroni(c, r, "floating") == allowed
            assert bonferroni(c, r, "floating") == math.comb(c - 2, r - 2) + r * math.comb(c - 2, r - 1)
    assert bonferroni(4, 2, "floating") == 5 and bonferroni(5, 3, "free") == 25
    with pytest.raises(ValueError):
        bonferroni(3, 4, "free")


# --- merging ----------------------------------------------------------------------------------------


def pair_p(a, b):
    return stats.chi2_contingency(np.array([a, b]), correction=False)[1]


def test_merging_takes_the_two_most_similar_categories_first():
    cat = np.array([[40, 10], [25, 25], [10, 40], [24, 26], [39, 11]], dtype=float)
    res = merge_categories(cat, CountTables(), ordered=False, missing_last=False, alpha_merge=0.05)
    ps = {(i, j): pair_p(cat[i], cat[j]) for i, j in itertools.combinations(range(5), 2)}
    first = max(ps, key=ps.get)
    assert first == (1, 3)  # 25:25 and 24:26, the closest pair of all
    a, b, p = res.merges[0]
    assert (a, b) == ([1], [3]) and p == pytest.approx(ps[first], rel=1e-12)
    assert res.merges[1][:2] == ([0], [4])  # 40:10 and 39:11 next
    assert res.groups == [[0, 4], [1, 3], [2]]
    # every merge was not significant; what remains is pairwise significant
    assert all(p > 0.05 for _, _, p in res.merges)
    G = [cat[g].sum(axis=0) for g in res.groups]
    assert all(pair_p(G[i], G[j]) <= 0.05 for i, j in itertools.combinations(range(3), 2))
    assert res.multiplier == bonferroni(5, 3, "free")
    assert res.adjusted_p == pytest.approx(min(1.0, res.p_value * res.multiplier))
    # monotonic: 0 and 4 are not neighbours, so they can never merge
    res = merge_categories(cat, CountTables(), ordered=True, missing_last=False, alpha_merge=0.05)
    assert res.groups == [[0], [1], [2], [3], [4]] and res.kind == "monotonic"
    assert res.multiplier == 1
    # alpha_merge = 1 never merges
    res = merge_categories(cat, CountTables(), ordered=False, missing_last=False, alpha_merge=1.0)
    assert res.groups == [[0], [1], [2], [3], [4]] and res.multiplier == 1


def reference_merge(cat, ordered, alpha):
    """Step 1 of the merging written plainly: every allowed pair tested afresh each round."""
    groups = [[i] for i in range(len(cat))]
    while len(groups) > 2:
        best = None
        for i, j in itertools.combinations(range(len(groups)), 2):
            if ordered and j != i + 1:
                continue
            p = pair_p(cat[groups[i]].sum(axis=0), cat[groups[j]].sum(axis=0))
            if best is None or p > best[0]:
                best = (p, i, j)
        if best[0] <= alpha:
            break
        _, i, j = best
        groups[i] = sorted(groups[i] + groups[j])
        del groups[j]
    return groups


@pytest.mark.parametrize("ordered", [False, True])
def test_merging_matches_a_plain_reference(ordered):
    rng = np.random.default_rng(1 + ordered)
    for _ in range(40):
        c = int(rng.integers(3, 9))
        cat = rng.integers(1, 60, (c, 3)).astype(float)
        res = merge_categories(cat, CountTables(), ordered=ordered, missing_last=False,
                               alpha_merge=0.05)
        assert res.groups == reference_merge(cat, ordered, 0.05)


def test_merging_stops_at_two_groups_and_small_groups_join_their_nearest():
    cat = np.array([[30, 30], [31, 29], [29, 31]], dtype=float)
    res = merge_categories(cat, CountTables(), ordered=True, missing_last=False, alpha_merge=0.05)
    assert len(res.groups) == 2 and res.p_value > 0.5  # merging stops at two (SPSS)
    cat = np.array([[50, 5], [3, 1], [5, 50], [40, 4]], dtype=float)
    res = merge_categories(cat, CountTables(), ordered=True, missing_last=False,
                           alpha_merge=1.0, min_child_size=10)  # alpha_merge 1: no merging
    # [3, 1] weighs 4 < 10 and sits between 50:5 and 5:50: it joins the one it resembles
    assert res.groups == [[0, 1], [2], [3]]
    assert res.merges == [([1], [0], pytest.approx(pair_p(cat[1], cat[0]), rel=1e-12))]
    assert pair_p(cat[1], cat[0]) > pair_p(cat[1], cat[2])


def test_resplitting_a_merged_group():
    cat = np.array([[7, 30], [15, 34], [22, 31], [29, 8], [15, 34]], dtype=float)
    plain = merge_categories(cat, CountTables(), ordered=True, missing_last=False, alpha_merge=0.05)
    assert plain.groups == [[0, 1, 2], [3], [4]]
    again = merge_categories(cat, CountTables(), ordered=True, missing_last=False,
                             alpha_merge=0.05, alpha_resplit=0.05)
    # {0, 1, 2} is cut where its two parts differ most, which is significant
    cuts = {k: pair_p(cat[:k].sum(axis=0), cat[k:3].sum(axis=0)) for k in (1, 2)}
    assert min(cuts, key=cuts.get) == 2 and cuts[2] <= 0.05
    assert again.groups == [[0, 1], [2], [3], [4]]


def test_floating_missing_category():
    # bins 0..3 then "missing": missing looks like bin 0 -> it joins bin 0's group
    cat = np.array([[40, 10], [38, 12], [10, 40], [12, 38], [20, 5]], dtype=float)
    res = merge_categories(cat, CountTables(), ordered=True, missing_last=True, alpha_merge=0.05)
    assert res.groups == [[0, 1, 4], [2, 3]] and res.kind == "floating"
    assert res.multiplier == bonferroni(5, 2, "floating") == 1 + 2 * 3
    # missing unlike every group -> alone, after the present values
    cat[4] = [25, 25]
    res = merge_categories(cat, CountTables(), ordered=True, missing_last=True, alpha_merge=0.05)
    assert res.groups == [[0, 1], [2, 3], [4]]
    alone = CountTables().table(np.array([cat[[0, 1]].sum(0), cat[[2, 3]].sum(0), cat[4]])).log_p
    best = max(range(2), key=lambda j: pair_p(cat[4], cat[[[0, 1], [2, 3]][j]].sum(0)))
    joined = [[0, 1, 4], [2, 3]] if best == 0 else [[0, 1], [2, 3, 4]]
    joined_p = CountTables().table(np.array([cat[g].sum(0) for g in joined])).log_p
    assert alone < joined_p  # the smaller p-value decides


# --- fitted trees -------------------------------------------------------------------------------------


def test_split_statistics_are_those_of_the_final_table():
    X, y, _, _ = mixed_data(0)
    est = CHAIDClassifier().fit(X, y, categorical_features=[0])
    m = est.model_
    nodes = m.trees[0].nodes
    assert len(est.splits_) >= 3 and est.get_depth() <= 3
    seen_kinds = set()
    rows = {0: np.arange(len(X))}
    for nid, node in enumerate(nodes):
        if isinstance(node, Leaf):
            continue
        info = est.splits_[nid]
        sub = rows[nid]
        child = route(node, X[sub])
        for i, c in enumerate(node.children):
            rows[c] = sub[child == i]
        T = table_of(child, y[sub], len(node.children), 2)
        chi2, p, _, _ = stats.chi2_contingency(T, correction=False)
        assert (info["statistic"], info["p_value"]) == pytest.approx((chi2, p), rel=1e-9)
        x = X[sub, node.test.feature]
        nan = bool(np.isnan(x).any())
        if isinstance(node.test, MultiwayTest):
            c, kind = len(np.unique(x[~np.isnan(x)])) + nan, "free"
        else:
            c = len(np.unique(np.searchsorted(est_cuts(est, X, node.test.feature),
                                              x[~np.isnan(x)].astype(np.float32)))) + nan
            kind = "floating" if nan else "monotonic"
        seen_kinds.add(kind)
        assert info["multiplier"] == bonferroni(c, len(node.children), kind)
        assert info["adjusted_p_value"] == pytest.approx(min(1.0, p * info["multiplier"]), rel=1e-9)
        assert info["adjusted_p_value"] <= 0.05
        assert all(nodes[k].samples >= 7 for k in node.children)  # min_child_size
    assert {"free", "floating"} <= seen_kinds


def est_cuts(est, X, f):
    return quantile_cuts(X[:, f].astype(np.float32), np.ones(len(X)), est.max_bins)


def test_likelihood_ratio_criterion():
    X, y, _, _ = mixed_data(1)
    est = CHAIDClassifier(criterion="likelihood_ratio", max_depth=1).fit(X, y, categorical_features=[0])
    root = est.model_.trees[0].nodes[0]
    T = table_of(route(root, X), y, len(root.children), 2)
    g2, p, _, _ = stats.chi2_contingency(T, correction=False, lambda_="log-likelihood")
    assert (est.splits_[0]["statistic"], est.splits_[0]["p_value"]) == pytest.approx((g2, p), rel=1e-9)


def test_missing_float_alone_routes_nan_to_its_own_child():
    rng = np.random.default_rng(4)
    n = 400
    x = rng.integers(0, 10, n).astype(float)  # ten values: the bins fall on them
    y = (x >= 5).astype(int)
    x[:60] = np.nan
    y[:60] = rng.integers(0, 2, 60)  # missing: half and half, unlike both sides
    est = CHAIDClassifier(max_depth=1, max_bins=20).fit(x[:, None], y)  # 20: a bin per value
    root = est.model_.trees[0].nodes[0]
    assert root.test.bounds == (4.0, math.inf)
    assert root.missing == DefaultChild(len(root.children) - 1)
    assert len(root.children) == 3 and root.unseen is None
    nan_leaf = est.model_.trees[0].nodes[root.children[-1]]
    assert nan_leaf.samples == 60
    assert np.array_equal(est.predict_proba([[np.nan]])[0], np.array(nan_leaf.value))
    # no present value reaches the missing-only child, not even the largest ones
    assert not np.isin(route(root, np.array([[1e30], [np.inf], [10.0]])), [2]).any()
    assert est.splits_[0]["multiplier"] == bonferroni(len(quantile_cuts(
        x.astype(np.float32), np.ones(n), 20)) + 2, 3, "floating") == 9 + 3 * 36


def test_missing_float_joins_its_most_similar_group():
    rng = np.random.default_rng(5)
    n = 400
    x = rng.integers(0, 10, n).astype(float)
    y = (x >= 5).astype(int)
    x[y == 1] = np.where(rng.random((y == 1).sum()) < 0.15, np.nan, x[y == 1])  # all class 1
    est = CHAIDClassifier(max_depth=1, max_bins=20).fit(x[:, None], y)
    root = est.model_.trees[0].nodes[0]
    assert root.test.bounds == (4.0,)
    assert root.missing == DefaultChild(1)  # the high group, all class 1 as well
    assert route(root, np.array([[np.nan]]))[0] == 1
    # categorical: missing is an ordinary (free) category, here merged with code 2
    c = rng.integers(0, 3, n).astype(float)
    y = (rng.random(n) < np.array([0.1, 0.5, 0.9])[c.astype(int)]).astype(int)
    c[(c == 2) & (rng.random(n) < 0.3)] = np.nan
    est = CHAIDClassifier(max_depth=1).fit(c[:, None], y, categorical_features=[0])
    root = est.model_.trees[0].nodes[0]
    assert root.test == MultiwayTest(0, ((0,), (1,), (2,)))
    # four categories (three codes and missing) in three groups
    assert root.missing == DefaultChild(2) and est.splits_[0]["multiplier"] == 6


def test_f_test_regression():
    rng = np.random.default_rng(6)
    n = 300
    c = rng.integers(0, 4, n)
    y = np.array([0.0, 0.1, 3.0, 3.1])[c] + rng.normal(0, 1, n)
    est = CHAIDRegressor(max_depth=1).fit(c[:, None].astype(float), y, categorical_features=[0])
    root = est.model_.trees[0].nodes[0]
    assert root.test.groups == ((0, 1), (2, 3))
    F, p = stats.f_oneway(y[c <= 1], y[c >= 2])
    info = est.splits_[0]
    assert (info["statistic"], info["p_value"]) == pytest.approx((F, p), rel=1e-9)
    assert info["df"] == (1.0, n - 2.0) and info["multiplier"] == bonferroni(4, 2, "free") == 7
    leaves = [est.model_.trees[0].nodes[k] for k in root.children]
    assert leaves[0].value[0] == pytest.approx(y[c <= 1].mean(), rel=1e-12)
    assert leaves[1].value[0] == pytest.approx(y[c >= 2].mean(), rel=1e-12)
    assert est.predict(np.array([[3.0], [np.nan], [9.0]])) == pytest.approx(
        [y[c >= 2].mean(), leaves[root.missing.child].value[0], leaves[root.unseen].value[0]])


def test_no_significant_predictor_gives_one_leaf():
    # every category has exactly the same class mix: chi-square 0, p-value 1
    X = np.repeat(np.arange(4.0), 30)[:, None]
    y = np.tile([0, 1, 1], 40)
    est = CHAIDClassifier().fit(X, y, categorical_features=[0])
    (leaf,) = est.model_.trees[0].nodes
    assert (leaf.value, leaf.samples, leaf.distribution) == ((1 / 3, 2 / 3), 120.0, (40.0, 80.0))
    # noise: nothing passes alpha_split once adjusted
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.integers(0, 6, 300), rng.normal(size=300)])
    y = rng.integers(0, 2, 300)
    est = CHAIDClassifier().fit(X, y, categorical_features=[0])
    assert len(est.model_.trees[0].nodes) == 1 and est.splits_ == {}
    reg = CHAIDRegressor().fit(X, rng.normal(size=300), categorical_features=[0])
    assert len(reg.model_.trees[0].nodes) == 1
    # the same noise splits once every bar is removed (so the test above could fail)
    loose = CHAIDClassifier(alpha_split=1.0, bonferroni=False, max_depth=1).fit(
        X, y, categorical_features=[0])
    assert len(loose.model_.trees[0].nodes) > 1


def test_stopping_rules():
    X, y, _, _ = mixed_data(2, n=800)
    for md, mp, mc in [(1, 20, 7), (2, 300, 7), (4, 20, 60)]:
        est = CHAIDClassifier(max_depth=md, min_parent_size=mp, min_child_size=mc).fit(
            X, y, categorical_features=[0])
        nodes = est.model_.trees[0].nodes
        assert est.get_depth() <= md
        for nd in nodes:
            if isinstance(nd, Split):
                assert nd.samples >= mp
                assert all(nodes[k].samples >= mc for k in nd.children)
    unlimited = CHAIDClassifier(max_depth=None).fit(X, y, categorical_features=[0])
    assert unlimited.get_depth() >= 3


def test_weights_count_as_repeated_rows():
    X, y, _, rng = mixed_data(3, n=300)
    reps = rng.integers(1, 4, len(y))
    a = CHAIDClassifier().fit(X, y, sample_weight=reps, categorical_features=[0])
    b = CHAIDClassifier().fit(np.repeat(X, reps, axis=0), np.repeat(y, reps),
                              categorical_features=[0])
    assert a.model_.trees == b.model_.trees and len(a.model_.trees[0].nodes) > 1
    # zero weight: the row takes no part at all
    w = np.ones(len(y))
    w[:50] = 0
    a = CHAIDClassifier().fit(X, y, sample_weight=w, categorical_features=[0])
    b = CHAIDClassifier().fit(X[50:], y[50:], categorical_features=[0])
    assert a.model_.trees == b.model_.trees


def test_quantile_cuts():
    x = np.arange(1, 101, dtype=np.float32)
    assert quantile_cuts(x, np.ones(100), 10).tolist() == list(range(10, 100, 10))
    assert quantile_cuts(x, np.ones(100), 4).tolist() == [25, 50, 75]
    # ties and missing: cuts are training values, distinct, below the maximum
    x = np.array([1, 1, 1, 1, 1, 1, 2, 3, np.nan, np.nan], dtype=np.float32)
    assert quantile_cuts(x, np.ones(10), 10).tolist() == [1, 2]
    assert quantile_cuts(np.full(5, 7, np.float32), np.ones(5), 10).size == 0
    # weights act as repeats
    x = np.array([1, 2, 3, 4], dtype=np.float32)
    assert quantile_cuts(x, np.array([3.0, 1, 1, 5]), 2).tolist() == \
        quantile_cuts(np.repeat(x, [3, 1, 1, 5]), np.ones(10), 2).tolist() == [3]


def test_every_target_agrees_with_the_evaluator():
    X, y, logit, rng = mixed_data(8)
    cats = {0: ("red", "green", "blue", "cyan", "gray")}
    labels = np.array(["no", "yes"])[y]
    clf = CHAIDClassifier(max_depth=3, alpha_resplit=0.05).fit(
        X, labels, feature_names=["colour", "size", "age"], categorical_features=[0],
        categories=cats)
    m = clf.model_
    tests = [type(nd.test) for nd in m.trees[0].nodes if isinstance(nd, Split)]
    assert IntervalTest in tests and MultiwayTest in tests
    assert m.provenance.algorithm == "chaid"
    assert_targets_exact(m, X)
    reg = CHAIDRegressor(max_depth=3).fit(X, logit + rng.normal(0, 0.5, len(y)),
                                          feature_names=["colour", "size", "age"],
                                          categorical_features=[0], categories=cats)
    assert len(reg.splits_) >= 2
    assert_targets_exact(reg.model_, X)


@pytest.mark.parametrize("params,word", [
    ({"criterion": "gini"}, "criterion"), ({"alpha_merge": 0}, "alpha_merge"),
    ({"alpha_merge": 1.5}, "alpha_merge"), ({"alpha_split": -0.1}, "alpha_split"),
    ({"alpha_split": "0.05"}, "alpha_split"), ({"alpha_resplit": 0.1}, "alpha_resplit"),
    ({"bonferroni": 1}, "bonferroni"), ({"max_depth": 0}, "max_depth"),
    ({"max_depth": 2.0}, "max_depth"), ({"min_parent_size": -1}, "min_parent_size"),
    ({"min_child_size": math.nan}, "min_child_size"), ({"max_bins": 1}, "max_bins"),
    ({"max_bins": 10.0}, "max_bins"),
])
def test_bad_parameters(params, word):
    X, y, _, _ = mixed_data(0, n=50)
    with pytest.raises(LearnerError, match=f"{word}=.* is invalid: expected"):
        CHAIDClassifier(**params).fit(X, y, categorical_features=[0])


def test_params_and_bad_data():
    est = CHAIDClassifier(alpha_split=0.01)
    assert est.get_params()["alpha_split"] == 0.01 and est.get_params()["max_depth"] == 3
    assert repr(est) == "CHAIDClassifier(alpha_split=0.01)"
    assert "criterion" not in CHAIDRegressor().get_params()
    with pytest.raises(LearnerError, match="no parameter 'criterion'"):
        CHAIDRegressor().set_params(criterion="pearson")
    X = np.arange(40.0).reshape(-1, 2)
    with pytest.raises(LearnerError, match="one output"):
        CHAIDRegressor().fit(X, np.zeros((20, 2)))
    with pytest.raises(LearnerError, match="continuous"):
        CHAIDClassifier().fit(X, np.linspace(0, 1, 20))
    with pytest.raises(LearnerError, match="not fitted"):
        CHAIDRegressor().predict(X)
