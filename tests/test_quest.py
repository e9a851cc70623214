"""QUEST: its statistics against scipy and hand-worked cases, the learner's trees, exact
compilation to every target, and the selection-bias simulation (small and seeded)."""

from __future__ import annotations

import importlib.util
import inspect
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from targetcheck import assert_targets_exact

from rulegen.data import categorical_column, is_numeric, numeric_column, read_csv
from rulegen.errors import LearnerError
from rulegen.ir import evaluate, serialize
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Leaf,
    NumericTest,
    Split,
    Surrogates,
)
from rulegen.learn.trees.quest import QUESTClassifier, QuestSplitFinder
from rulegen.learn.trees.quest_split import (
    anova_pvalues,
    chi2_pvalue,
    contingency,
    crimcoord,
    levene_pvalues,
    qda_split,
    select_variable,
    split_point,
    superclasses,
)

ROOT = Path(__file__).resolve().parents[1]


def nodes_of(est):
    return est.model_.trees[0].nodes


def check_training_routing(est, X, y):
    """The IR sends the training rows exactly where the learner sent them: for each leaf
    value, the rows the evaluator gives that value have the class counts of those leaves."""
    proba = evaluate.predict_proba(est.model_, np.asarray(X, dtype=np.float64))
    codes = np.searchsorted(est.classes_, y)
    want: dict[tuple, np.ndarray] = {}
    for nd in nodes_of(est):
        if isinstance(nd, Leaf):
            want[nd.value] = want.get(nd.value, 0) + np.array(nd.distribution)
    seen = 0
    for value, dist in want.items():
        hit = (proba == np.array(value)).all(axis=1)
        assert np.array_equal(np.bincount(codes[hit], minlength=len(value)), dist)
        seen += int(hit.sum())
    assert seen == len(X)


def mixed_data(rng, n, n_classes):
    """Numeric + categorical features with missing values; the class depends on both."""
    y = rng.integers(0, n_classes, n)
    num = rng.normal(size=n) + 1.5 * y
    noise = rng.normal(size=n)
    copy = num + rng.normal(size=n) * 0.3  # a good surrogate for num
    cat = (rng.integers(0, 2, n) + 2 * (y % 3)).astype(float)  # 6 codes, pairs per class
    flip = rng.random(n) < 0.4
    cat[flip] = rng.integers(0, 6, flip.sum())
    colour = rng.integers(0, 4, n).astype(float)
    X = np.column_stack([num, cat, noise, copy, colour])
    X[rng.random(n) < 0.15, 0] = np.nan
    X[rng.random(n) < 0.1, 1] = np.nan
    X[rng.random(n) < 0.05, 3] = np.nan
    return X, y


# --- the tests that pick a variable ----------------------------------------------------


def test_anova_and_levene_match_scipy():
    rng = np.random.default_rng(1)
    n, k = 240, 3
    y = rng.integers(0, k, n)
    V = rng.normal(size=(4, n)) * np.array([[1.0], [10.0], [1e5], [1.0]])
    V += np.array([[0.0], [5.0], [1e9], [0.0]])  # a huge offset must not cost digits
    V[0, y == 1] += 0.6
    V[3] *= 1 + 2 * (y == 2)
    V[2, rng.random(n) < 0.2] = np.nan
    p_f, p_l = anova_pvalues(V, y, k), levene_pvalues(V, y, k)
    for i in range(4):
        ok = ~np.isnan(V[i])
        groups = [V[i][ok & (y == c)] for c in range(k)]
        assert p_f[i] == pytest.approx(stats.f_oneway(*groups).pvalue, rel=1e-9, abs=0)
        assert p_l[i] == pytest.approx(stats.levene(*groups, center="mean").pvalue, rel=1e-7, abs=0)


def test_chi2_matches_scipy_without_continuity_correction():
    rng = np.random.default_rng(2)
    for m, k in [(2, 2), (5, 3), (20, 2)]:
        y = rng.integers(0, k, 300)
        codes = rng.integers(0, m, 300)
        some = (y == 1) & (rng.random(300) < 0.2)
        codes[some] = np.minimum(codes[some], m // 2)  # some dependence
        table = contingency(codes.astype(float), y, m + 2, k)  # two empty code rows
        assert table.shape == (m + 2, k) and table[m:].sum() == 0
        ref = stats.chi2_contingency(table[:m], correction=False)
        assert 1e-8 < ref.pvalue < 0.9  # a p-value that tells df apart
        assert chi2_pvalue(table) == pytest.approx(ref.pvalue, rel=1e-9, abs=0)


def test_untestable_variables_are_nan():
    y = np.array([0, 0, 1, 1, 1])
    V = np.array([[3.0, 3.0, 3.0, 3.0, 3.0],  # constant
                  [1.0, 2.0, np.nan, np.nan, np.nan],  # one class present
                  [1.0, 2.0, 3.0, 4.0, 5.0]])
    p = anova_pvalues(V, y, 2)
    assert np.isnan(p[0]) and np.isnan(p[1]) and 0 < p[2] < 1
    # one row per class: no degrees of freedom within classes
    assert np.isnan(anova_pvalues(np.array([[1.0, 2.0]]), np.array([0, 1]), 2)[0])
    assert math.isnan(chi2_pvalue(np.array([[3.0, 4.0], [0.0, 0.0]])))


def test_selection_rule():
    lev = np.array([0.001, np.nan, 0.5])
    # first stage significant at alpha / K
    assert select_variable(np.array([0.2, 0.01, 0.3]), lambda: 1 / 0, 2, 0.05) == (1, "first")
    # not significant (0.03 > 0.05/3): Levene at alpha / (K + K1) = 0.05 / 5 = 0.01
    assert select_variable(np.array([0.03, 0.2, 0.3]), lambda: lev, 2, 0.05) == (0, "levene")
    lev2 = np.array([0.5, np.nan, 0.011])  # 0.011 > 0.01: back to the first-stage winner
    assert select_variable(np.array([0.9, 0.2, 0.3]), lambda: lev2, 2, 0.05) == (1, "fallback")
    assert select_variable(np.array([np.nan, np.nan]), lambda: lev, 1, 0.05) is None


def test_levene_step_picks_a_variance_difference():
    rng = np.random.default_rng(3)
    n = 400
    y = np.repeat([0, 1], n // 2)
    spread = rng.normal(size=n) * np.where(y == 0, 1.0, 4.0)
    spread -= np.where(y == 0, spread[y == 0].mean(), spread[y == 1].mean())  # equal means
    X = np.column_stack([rng.normal(size=n), spread, rng.integers(0, 3, n)])
    finder = QuestSplitFinder(X, y, 2, {2: 3}, 0.05, 1, 0)
    rows = np.arange(n)
    assert np.nanmin(finder.pvalues(rows)) > 0.05 / 3  # no mean difference anywhere
    assert finder.levene(rows)[1] < 1e-10
    assert finder.select(rows) == (1, "levene")
    est = QUESTClassifier(max_depth=1).fit(X, y, categorical_features=[2])
    root = nodes_of(est)[0]
    assert root.test.feature == 1
    # equal means and priors: the QDA roots are +-sqrt(va vb log(vb/va) / (vb - va))
    va, vb = spread[y == 0].var(ddof=1), spread[y == 1].var(ddof=1)
    half = math.sqrt(va * vb * math.log(vb / va) / (vb - va))
    assert abs(root.test.threshold) == pytest.approx(half, rel=1e-9)


# --- the split point -----------------------------------------------------------------


def test_qda_equal_variances():
    assert qda_split(0.0, 4.0, 0.5, 10.0, 4.0, 0.5) == 5.0  # equal priors: the midpoint
    assert qda_split(-3.0, 2.0, 0.5, 1.0, 2.0, 0.5) == -1.0
    # unequal priors move the point away from the more likely class
    d = qda_split(0.0, 4.0, 0.8, 10.0, 4.0, 0.2)
    assert d == pytest.approx(5.0 + 4.0 * math.log(4.0) / 10.0, rel=1e-15)
    assert 0.8 * stats.norm.pdf(d, 0, 2) == pytest.approx(0.2 * stats.norm.pdf(d, 10, 2), rel=1e-12)


def test_qda_unequal_variances_takes_the_root_near_mean_a():
    # N(0, 1) against N(3, 2^2), equal priors: 3x^2 + 6x - (9 + 4 log 4) = 0
    roots = np.roots([3.0, 6.0, -(9.0 + 4.0 * math.log(4.0))])
    near = roots[np.argmin(np.abs(roots))]
    for args in [(0.0, 1.0, 0.5, 3.0, 4.0, 0.5), (3.0, 4.0, 0.5, 0.0, 1.0, 0.5)]:
        d = qda_split(*args)
        assert d == pytest.approx(near, rel=1e-12)
        assert 0 < d < 3  # between the means; the other root (about -3.42) is not it
        assert stats.norm.pdf(d, 0, 1) == pytest.approx(stats.norm.pdf(d, 3, 2), rel=1e-10)
    # far from the origin, centring keeps the digits
    assert qda_split(1e8, 1.0, 0.5, 1e8 + 3, 4.0, 0.5) == pytest.approx(1e8 + near, abs=1e-7)


def test_qda_without_a_real_root_uses_the_midpoint():
    ma, va, pa, mb, vb, pb = 0.0, 1.0, 0.001, 0.1, 1.2, 0.999  # B's density wins everywhere
    a, b = va - vb, -2 * mb * va
    c = mb * mb * va + va * vb * math.log(pa * pa * vb / (pb * pb * va))
    assert b * b - 4 * a * c < 0
    assert qda_split(ma, va, pa, mb, vb, pb) == 0.05


def test_split_point_with_a_constant_superclass():
    # the limit of the QDA root: beside the constant value, toward the other superclass,
    # placed midway to the next data value
    assert split_point(np.array([1.0, 1.0, 1.0]), np.array([2.0, 3.0, 5.0])) == 1.5
    assert split_point(np.array([1.0, 2.0, 3.0]), np.array([6.0, 6.0])) == 4.5
    assert split_point(np.array([6.0, 6.0]), np.array([1.0, 3.0])) == 4.5
    assert split_point(np.array([2.0, 2.0]), np.array([4.0])) == 3.0
    assert math.isnan(split_point(np.array([2.0]), np.array([2.0, 2.0])))


def test_learned_threshold_is_the_qda_root_of_the_sample():
    rng = np.random.default_rng(4)
    xa, xb = rng.normal(0, 1, 300), rng.normal(3, 2, 200)
    X = np.r_[xa, xb].reshape(-1, 1)
    y = np.r_[np.zeros(300, int), np.ones(200, int)]
    est = QUESTClassifier(max_depth=1).fit(X, y)
    root = nodes_of(est)[0]
    d = qda_split(xa.mean(), xa.var(ddof=1), 0.6, xb.mean(), xb.var(ddof=1), 0.4)
    assert root.test == NumericTest(0, "<=", d, "float64")
    left = X[:, 0] <= d
    assert nodes_of(est)[root.children[0]].distribution == (float((left & (y == 0)).sum()),
                                                           float((left & (y == 1)).sum()))


def test_superclasses():
    assert superclasses(np.array([0.0, 0.2, 5.0, 5.3, 9.0]), np.ones(5)).tolist() == \
        [True, True, False, False, False]
    assert superclasses(np.array([7.0, 1.0, 2.0]), np.ones(3)).tolist() == [False, True, True]
    # all means equal: the largest class alone is superclass A
    assert superclasses(np.array([1.0, 1.0, 1.0]), np.array([5, 9, 9])).tolist() == \
        [False, True, False]


def test_more_than_two_classes_split_between_superclasses():
    rng = np.random.default_rng(5)
    centre = np.array([0.0, 0.5, 10.0, 10.5])
    y = np.repeat(np.arange(4), 60)
    X = (centre[y] + rng.normal(size=len(y))).reshape(-1, 1)
    est = QUESTClassifier(max_depth=1).fit(X, y)
    nodes = nodes_of(est)
    left, right = (nodes[c].distribution for c in nodes[0].children)
    assert left[2] == left[3] == 0 and right[0] == right[1] == 0
    assert 4.0 < nodes[0].test.threshold < 6.5


# --- categorical variables -------------------------------------------------------------


def test_crimcoord_puts_alike_categories_together():
    # categories 0 and 2 lean to class 0, 1 and 3 to class 1
    table = np.array([[30.0, 5.0], [4.0, 28.0], [25.0, 6.0], [7.0, 33.0]])
    xi = crimcoord(table)
    assert max(xi[0], xi[2]) < min(xi[1], xi[3]) or max(xi[1], xi[3]) < min(xi[0], xi[2])
    # two classes: the coordinate orders categories by their class-1 share
    share = table[:, 1] / table.sum(axis=1)
    order = np.argsort(xi)
    assert (order == np.argsort(share)).all() or (order[::-1] == np.argsort(share)).all()
    assert np.all(crimcoord(np.array([[5.0, 5.0], [2.0, 2.0]])) == 0)  # nothing to tell apart


@pytest.mark.parametrize("n_classes", [2, 3])
def test_categorical_split_is_a_category_subset(n_classes):
    rng = np.random.default_rng(6)
    n = 600
    y = rng.integers(0, n_classes, n)
    code = 2 * y + rng.integers(0, 2, n)  # codes 2c and 2c+1 belong to class c
    flip = rng.random(n) < 0.1
    code[flip] = rng.integers(0, 2 * n_classes, flip.sum())
    X = np.column_stack([code.astype(float), rng.normal(size=n)])
    labels = [f"c{i}" for i in range(2 * n_classes)] + ["never"]
    est = QUESTClassifier(max_depth=1).fit(X, y, feature_names=["code", "noise"],
                                           categorical_features=["code"], categories={0: labels})
    root = nodes_of(est)[0]
    assert isinstance(root.test, CategoricalTest) and root.test.feature == 0
    members = set(root.test.categories)
    for c in range(n_classes):  # each class's pair of codes stays together
        assert len(members & {2 * c, 2 * c + 1}) in (0, 2)
    sizes = [nodes_of(est)[c].samples for c in root.children]
    bigger = int(sizes[1] >= sizes[0])
    # the absent category and unseen codes go to the larger child
    assert (2 * n_classes in members) == (bigger == 0) and root.unseen == bigger
    check_training_routing(est, X, y)


# --- missing values, unseen categories, exactness ------------------------------------------


def test_missing_values_follow_surrogates():
    rng = np.random.default_rng(7)
    n = 500
    y = rng.integers(0, 2, n)
    num = rng.normal(size=n) + 2.0 * y
    X = np.column_stack([num, rng.integers(0, 6, n), rng.normal(size=n),
                         num + rng.normal(size=n), rng.integers(0, 4, n)])
    X[rng.random(n) < 0.15, 0] = np.nan
    X[rng.random(n) < 0.05, 3] = np.nan
    est = QUESTClassifier(max_depth=3).fit(X, y, categorical_features=[1, 4])
    root = nodes_of(est)[0]
    assert root.test.feature == 0
    assert isinstance(root.missing, Surrogates)
    first = root.missing.surrogates[0]
    assert first.test.feature == 3 and first.agreement > 0.7  # the noisy copy of x0
    agreements = [s.agreement for s in root.missing.surrogates]
    assert all(0.5 < a <= 1 for a in agreements)
    check_training_routing(est, X, y)  # rows missing x0 went where the surrogates send them
    # without surrogates: the larger child
    plain = QUESTClassifier(max_depth=3, max_surrogates=0).fit(X, y, categorical_features=[1, 4])
    r = nodes_of(plain)[0]
    sizes = [nodes_of(plain)[c].samples for c in r.children]
    assert isinstance(r.missing, DefaultChild)
    check_training_routing(plain, X, y)
    present = ~np.isnan(X[:, 0])
    n_left_present = int((X[present, 0] <= r.test.threshold).sum())
    assert r.missing.child == (0 if 2 * n_left_present > present.sum() else 1)
    assert sum(sizes) == len(X)


@pytest.mark.parametrize("n_classes", [2, 4])
def test_every_target_is_exact(n_classes):
    rng = np.random.default_rng(10 + n_classes)
    X, y = mixed_data(rng, 300, n_classes)
    labels = np.array(["low", "mid", "high", "top"])[y]
    est = QUESTClassifier(max_depth=6, min_samples_leaf=3).fit(
        X, labels, feature_names=["num", "cat", "noise", "copy", "colour"],
        categorical_features=["cat", "colour"],
        categories={"cat": ["a", "b", "c", "d", "e", "f", "g"], "colour": ["r", "g", "b", "w"]})
    nodes = nodes_of(est)
    splits = [nd for nd in nodes if isinstance(nd, Split)]
    assert len(splits) >= 3
    assert any(isinstance(nd.test, CategoricalTest) for nd in splits)
    assert any(isinstance(nd.missing, Surrogates) for nd in splits)
    assert est.model_.provenance.algorithm == "quest"
    assert serialize.loads(serialize.dumps(est.model_)) == est.model_
    check_training_routing(est, X, labels)
    assert_targets_exact(est.model_, X[:80], n_random=30)


def test_nodes_record_support_and_gini_for_pruning():
    rng = np.random.default_rng(8)
    X, y = mixed_data(rng, 300, 3)
    est = QUESTClassifier(min_samples_leaf=5).fit(X, y, categorical_features=[1, 4])
    nodes = nodes_of(est)
    assert est.get_depth() >= 2
    for nd in nodes:
        dist = np.array(nd.distribution)
        assert nd.samples == dist.sum()
        assert nd.impurity == pytest.approx(1 - ((dist / dist.sum()) ** 2).sum(), abs=1e-12)
        if isinstance(nd, Split):
            assert nd.samples == sum(nodes[c].samples for c in nd.children)
        else:
            assert nd.samples >= 5
    assert QUESTClassifier(max_depth=2).fit(X, y, categorical_features=[1, 4]).get_depth() <= 2


def test_min_samples_leaf_moves_the_cut_as_few_rows_as_needed():
    rng = np.random.default_rng(12)
    x = np.r_[np.sort(rng.normal(size=100)), 10.0, 10.0, 10.0]
    y = np.r_[np.zeros(100, int), np.ones(3, int)]
    X = x.reshape(-1, 1)
    free = nodes_of(QUESTClassifier(max_depth=1).fit(X, y))[0]
    assert free.test.threshold == x[99] / 2 + 5.0  # beside the constant class, midway
    est = QUESTClassifier(max_depth=1, min_samples_leaf=5).fit(X, y)
    root = nodes_of(est)[0]
    assert root.test.threshold == x[97] / 2 + x[98] / 2
    assert [nodes_of(est)[c].samples for c in root.children] == [98.0, 5.0]


def test_a_variable_without_an_admissible_split_is_passed_over():
    rng = np.random.default_rng(13)
    y = np.r_[np.zeros(30, int), np.ones(29, int), 2]
    lone = (y == 2).astype(float)  # one category, one row: a tiny chi-square p-value
    x = rng.normal(size=60) + 1.2 * (y == 1)
    X = np.column_stack([lone, x])
    finder = QuestSplitFinder(X, y, 3, {0: 2}, 0.05, 2, 0)
    assert finder.select(np.arange(60))[0] == 0
    assert nodes_of(QUESTClassifier(max_depth=1).fit(X, y, categorical_features=[0]))[0].test \
        == CategoricalTest(0, (0,))
    root = nodes_of(QUESTClassifier(max_depth=1, min_samples_leaf=2).fit(
        X, y, categorical_features=[0]))[0]
    assert root.test.feature == 1


def test_labor_fixture_splits():
    table = read_csv(ROOT / "tests" / "data" / "labor.csv")
    cols, cats = [], []
    y = None
    for j, name in enumerate(table.columns):
        if name == "class":
            y = np.asarray(categorical_column(table, j)[1])
        elif is_numeric(table, j):
            cols.append(numeric_column(table, j))
        else:
            cats.append(len(cols))
            cols.append(categorical_column(table, j)[1])
    X = np.column_stack(cols)
    assert np.isnan(X).any() and cats
    est = QUESTClassifier().fit(X, y, categorical_features=cats)
    assert len(nodes_of(est)) > 1
    check_training_routing(est, X, y)


# --- depth, parameters ------------------------------------------------------------------


def test_deep_tree_without_recursion():
    # one indicator feature per class-1 row: each split peels one row off, a chain
    P = 300
    X = np.vstack([np.eye(P), np.zeros((3, P))])
    y = np.r_[np.ones(P, int), np.zeros(3, int)]
    limit = sys.getrecursionlimit()
    # anything recursing once per level would need about 300 more frames than this
    sys.setrecursionlimit(len(inspect.stack()) + 150)
    try:
        est = QUESTClassifier(max_surrogates=0).fit(X, y)
        text = serialize.dumps(est.model_)
        pred = est.predict(X)
    finally:
        sys.setrecursionlimit(limit)
    assert est.get_depth() == P
    assert np.array_equal(pred, y)
    assert serialize.loads(text) == est.model_


@pytest.mark.parametrize("params", [
    {"alpha": 0}, {"alpha": 1.0}, {"alpha": "0.05"}, {"alpha": math.nan}, {"max_depth": 0},
    {"max_depth": 2.5}, {"min_samples_split": 1}, {"min_samples_leaf": 0},
    {"max_surrogates": -1}, {"max_surrogates": True},
])
def test_bad_parameters(params):
    with pytest.raises(LearnerError, match=next(iter(params))):
        QUESTClassifier(**params).fit(np.arange(6.0).reshape(-1, 1), [0, 1] * 3)


def test_estimator_api():
    est = QUESTClassifier(alpha=0.01)
    assert est.get_params() == {"alpha": 0.01, "max_depth": None, "min_samples_split": 2,
                                "min_samples_leaf": 1, "max_surrogates": 5, "ccp_alpha": 0.0,
                                "cv_folds": 10, "one_se_rule": False, "random_state": None}
    assert est.set_params(max_depth=3) is est and est.max_depth == 3
    with pytest.raises(LearnerError, match="no parameter"):
        est.set_params(criterion="gini")
    with pytest.raises(TypeError, match="sample_weight"):  # no such parameter: rows are counted
        est.fit([[0.0], [1.0]], [0, 1], sample_weight=[1, 1])
    with pytest.raises(LearnerError, match="not a category code"):
        est.fit([[0.0], [3.0000001]], [0, 1], categorical_features=[0])
    with pytest.raises(LearnerError, match="not fitted"):
        QUESTClassifier().predict([[0.0]])
    X = np.r_[np.zeros(10), np.ones(10)].reshape(-1, 1)
    y = np.array(["no"] * 10 + ["yes"] * 10)
    est.fit(X, y)
    assert list(est.predict([[0.0], [1.0], [np.nan]])) == ["no", "yes", "yes"]
    assert est.predict_proba([[0.0]]).tolist() == [[1.0, 0.0]]
    pure = QUESTClassifier().fit(X, ["a"] * 20)
    assert len(nodes_of(pure)) == 1


# --- the bias simulation -----------------------------------------------------------------


def test_selection_is_unbiased_where_exhaustive_search_is_not():
    path = ROOT / "benchmarks" / "quest_bias.py"
    spec = importlib.util.spec_from_file_location("quest_bias", path)
    bias = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bias)
    reps = 200
    counts = bias.simulate(reps, n=300, seed=11)
    quest, cart = counts["quest"], counts["cart"]
    assert sum(quest.values()) == sum(cart.values()) == reps
    # unbiased: about half each (the bound is 4.2 standard errors wide)
    assert 0.35 < quest.get("cat20", 0) / reps < 0.65
    # exhaustive search: the 20-level feature nearly always
    assert cart.get("cat20", 0) / reps > 0.8


def test_cost_complexity_pruning_as_cart():
    from rulegen.learn.trees import pruning

    rng = np.random.default_rng(5)
    n = 400
    X = rng.normal(size=(n, 4))
    y = ((X[:, 0] > 0) ^ (rng.random(n) < 0.2)).astype(int)  # one real split, 20% noise
    full = QUESTClassifier().fit(X, y)
    cv = QUESTClassifier(ccp_alpha="cv", one_se_rule=True, random_state=0).fit(X, y)
    again = QUESTClassifier(ccp_alpha="cv", one_se_rule=True, random_state=0).fit(X, y)
    assert cv.model_ == again.model_ and cv.ccp_alpha_ > 0.0
    assert cv.get_n_leaves() < full.get_n_leaves()
    # the pruned tree is the full tree pruned at the chosen alpha
    want = pruning.prune(full.model_, cv.ccp_alpha_, full.node_values_)
    assert want.trees == cv.model_.trees
    root = cv.model_.trees[0].nodes[0]
    assert root.test.feature == 0
    fixed = QUESTClassifier(ccp_alpha=cv.ccp_alpha_).fit(X, y)
    assert fixed.model_.trees == cv.model_.trees
    assert_targets_exact(cv.model_, X[:50])
    with pytest.raises(LearnerError, match="ccp_alpha"):
        QUESTClassifier(ccp_alpha=-1.0).fit(X, y)
