"""CART surrogate splits (missing="surrogate", rpart's semantics): hand-checked agreements,
routing of training rows, the majority-rule floor, accuracy on held-out missing values,
and every surrogate model through every target."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from targetcheck import assert_targets_exact

from rulegen.errors import LearnerError
from rulegen.ir import evaluate
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Leaf,
    NumericTest,
    Split,
    Surrogate,
    Surrogates,
)
from rulegen.learn import CARTClassifier, CARTRegressor
from rulegen.learn.trees.pruning import _route


def tiny():
    """x0 decides y (7 rows left, 3 right); x1 agrees on 9 of 10 rows; x2 is x0 reversed
    but missing once (9 of 9); x3 cannot beat the majority rule (6 of 10 < 7); x4 is
    categorical and agrees on 8 of 10."""
    x0 = np.arange(10.0)
    y = (x0 >= 7).astype(int)
    x1 = np.array([0, 1, 2, 3, 4, 5, 7, 6, 8, 9.0])
    x2 = 9 - x0
    x2[0] = np.nan
    x3 = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1.0])
    x4 = np.array([0, 0, 1, 1, 0, 1, 2, 2, 2, 1.0])
    return np.column_stack([x0, x1, x2, x3, x4]), y


def test_agreements_by_hand():
    X, y = tiny()
    est = CARTClassifier(max_depth=1, missing="surrogate").fit(X, y, categorical_features=[4])
    root = est.model_.trees[0].nodes[0]
    assert root.test == NumericTest(0, "<=", 6.5, "float32")
    # x1 <= 5.5 sends rows 0-5 left and 6-9 right: only row 6 disagrees, 9/10.
    # x2 <= 2.5 (rows 7-9) goes right: all 9 rows with x2 present agree, 9/9.
    # Both send 9 rows the right way: rpart's default ranks by that count, so x1 (never
    # missing) comes first, then x2, feature order breaking the tie.
    # x4: code 0 -> 3 left; code 1 -> 3 left, 1 right; code 2 -> 1 left, 2 right: {2} goes
    # right, 3 + 3 + 2 = 8 of 10. x3's best is 6 of 10, below the majority rule's 7: dropped.
    assert root.missing == Surrogates((
        Surrogate(NumericTest(1, "<=", 5.5, "float32"), 0, 0.9),
        Surrogate(NumericTest(2, "<=", 2.5, "float32"), 1, 1.0),
        Surrogate(CategoricalTest(4, (2,)), 1, 0.8)), 0)
    top2 = CARTClassifier(max_depth=1, missing="surrogate", max_surrogates=2)
    assert top2.fit(X, y, categorical_features=[4]).model_.trees[0].nodes[0].missing == Surrogates(
        root.missing.surrogates[:2], 0)
    none = CARTClassifier(max_depth=1, missing="surrogate", max_surrogates=0)
    assert none.fit(X, y, categorical_features=[4]).model_.trees[0].nodes[0].missing == DefaultChild(0)
    # prediction: the first surrogate whose feature is present decides, else the default
    nan = math.nan
    rows = np.array([[nan, 7.0, 0.0, 0, 0], [nan, nan, 1.0, 0, 0], [nan, nan, nan, 0, 2],
                     [nan, nan, nan, 0, 9], [nan, nan, nan, 0, nan], [nan, 5.0, 1.0, 0, 2]])
    assert list(est.predict(rows)) == [1, 1, 1, 0, 0, 0]


def test_primary_split_scored_on_present_rows():
    """A feature missing on 2 of 20 rows that is perfect where present beats a complete
    feature that misroutes 2 rows: rpart's gain, scaled by the present share (18/20);
    missing on 10 of 20, it loses."""
    rng = np.random.default_rng(0)
    n = 20
    y = np.array([0] * 10 + [1] * 10)
    good = y + rng.uniform(-0.3, 0.3, n)
    good[[0, 19]] = np.nan
    fair = y + rng.uniform(-0.3, 0.3, n)
    fair[[3, 12]] = 1 - y[[3, 12]]
    X = np.column_stack([fair, good])
    est = CARTClassifier(max_depth=1, missing="surrogate").fit(X, y)
    root, left, right = est.model_.trees[0].nodes
    assert root.test.feature == 1
    # gain on present rows = 0.5 * 18/20 = 0.45 > fair's 0.5 - 20/20 * 0.18 = 0.32; the two
    # rows missing x1 follow the surrogate on x0, which sends rows 3 and 12 the wrong way
    # but rows 0 and 19 the right way
    assert root.missing.surrogates[0].test.feature == 0
    assert (left.distribution, right.distribution) == ((10.0, 0.0), (0.0, 10.0))
    # missing on half the rows, x1's scaled gain is 0.5 * 10/20 = 0.25 < 0.32: x0 wins
    # (unscaled, the perfect split of the present rows would still win)
    good[[1, 2, 4, 5, 14, 15, 16, 17]] = np.nan
    est.fit(np.column_stack([fair, good]), y)
    assert est.model_.trees[0].nodes[0].test.feature == 0


def node_rows(model, X):
    """Rows reaching each node, routed exactly as the evaluator routes them."""
    rows = {}
    for i, r, _ in _route(model.trees[0], model.features, np.asarray(X, dtype=float)):
        rows[i] = r
    return rows


def _holds(test, x):
    if isinstance(test, NumericTest):
        t = np.float32(test.threshold)
        x32 = x.astype(np.float32)
        return x32 <= t if test.op == "<=" else x32 < t
    return np.isin(x, test.categories)


def check_surrogate_tree(model, X, w=None):
    """Training rows are where the IR sends them (node samples), and every surrogate's
    recorded agreement is right and beats the majority rule on its rows."""
    X = np.asarray(X, dtype=float)
    w = np.ones(len(X)) if w is None else w
    rows = node_rows(model, X)
    checked = 0
    for i, nd in enumerate(model.trees[0].nodes):
        r = rows[i][w[rows[i]] > 0]
        assert math.isclose(nd.samples, w[r].sum(), rel_tol=1e-12), i
        if not (isinstance(nd, Split) and isinstance(nd.missing, Surrogates)):
            continue
        x = X[r, nd.test.feature]
        p = r[~np.isnan(x)]
        goes = np.where(_holds(nd.test, X[p, nd.test.feature]), 0, 1)
        default = nd.missing.default
        counts = []
        for sur in nd.missing.surrogates:
            xs = X[p, sur.test.feature]
            here = ~np.isnan(xs)
            sends = np.where(_holds(sur.test, xs[here]), sur.child_if_true, 1 - sur.child_if_true)
            ww = w[p[here]]
            agree = ww[sends == goes[here]].sum()
            majority = ww[goes[here] == default].sum()
            assert agree > majority, (i, sur)  # better than the majority rule
            assert math.isclose(sur.agreement, agree / ww.sum(), rel_tol=1e-12)
            counts.append(agree)
            checked += 1
        assert counts == sorted(counts, reverse=True)
    return checked


def test_training_with_missing_values_routes_rows_as_the_ir():
    X0, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(1)
    X = X0.copy()
    X[rng.random(X.shape) < 0.15] = np.nan
    w = rng.uniform(0.5, 2.0, len(y))
    est = CARTClassifier(random_state=0, missing="surrogate").fit(X, y, sample_weight=w)
    assert check_surrogate_tree(est.model_, X, w) > 20
    reg = CARTRegressor(random_state=0, missing="surrogate", max_depth=6).fit(X, X0[:, 0])
    assert check_surrogate_tree(reg.model_, X) > 10
    rnd = CARTClassifier(random_state=0, missing="surrogate", splitter="random").fit(X, y)
    assert check_surrogate_tree(rnd.model_, X) > 10


def test_no_missing_in_training_means_the_same_splits():
    """Without missing training values the search is missing="learned"'s; only the
    missing rules differ, and the default child is the one learned mode picks."""
    X, y = load_breast_cancer(return_X_y=True)
    sur = CARTClassifier(random_state=0, missing="surrogate").fit(X, y).model_.trees[0].nodes
    ref = CARTClassifier(random_state=0).fit(X, y).model_.trees[0].nodes
    assert len(sur) == len(ref)
    for a, b in zip(sur, ref):
        if isinstance(b, Leaf):
            assert a == b
        else:
            assert (a.test, a.children, a.samples, a.impurity) == (b.test, b.children, b.samples, b.impurity)
            default = a.missing.default if isinstance(a.missing, Surrogates) else a.missing.child
            assert default == b.missing.child


def test_surrogates_beat_the_majority_child_on_held_out_missing_values():
    """breast_cancer's features are strongly correlated (radius, perimeter, area...), so
    with 30% of the held-out cells missing, surrogates recover much of the accuracy that
    sending every missing value to the majority child loses."""
    X, y = load_breast_cancer(return_X_y=True)
    gains = []
    for split_seed in range(3):
        Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=split_seed)
        sur = CARTClassifier(random_state=0, missing="surrogate").fit(Xtr, ytr)
        maj = CARTClassifier(random_state=0).fit(Xtr, ytr)  # same tree, majority child
        assert np.array_equal(sur.predict(Xte), maj.predict(Xte))
        acc_s, acc_m = [], []
        for nan_seed in range(5):
            rng = np.random.default_rng(100 + nan_seed)
            Xn = Xte.copy()
            Xn[rng.random(Xn.shape) < 0.3] = np.nan
            acc_s.append(np.mean(sur.predict(Xn) == yte))
            acc_m.append(np.mean(maj.predict(Xn) == yte))
        assert np.mean(acc_s) > np.mean(acc_m) + 0.01, (split_seed, acc_s, acc_m)
        gains.append(np.mean(acc_s) - np.mean(acc_m))
    assert np.mean(gains) > 0.03


def categorical_data(seed=0, n=300):
    """A categorical feature that mirrors a numeric one (a surrogate for it and back)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    band = np.digitize(x, [-1.0, 0.0, 1.0]).astype(float)  # codes 0..3
    noisy = np.where(rng.random(n) < 0.1, rng.integers(0, 4, n), band).astype(float)
    other = rng.integers(0, 3, n).astype(float)
    y = (x + rng.normal(scale=0.3, size=n) > 0).astype(int)
    X = np.column_stack([x, noisy, other, x * 2 + rng.normal(scale=0.2, size=n)])
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def test_categorical_surrogates_and_every_target():
    X, y = categorical_data()
    est = CARTClassifier(random_state=0, missing="surrogate", max_depth=4)
    est.fit(X, y, categorical_features=[1, 2])
    model = est.model_
    kinds = {type(s.test) for nd in model.trees[0].nodes if isinstance(nd, Split)
             and isinstance(nd.missing, Surrogates) for s in nd.missing.surrogates}
    assert kinds == {NumericTest, CategoricalTest}
    assert check_surrogate_tree(model, X) > 5
    extra = np.array([[np.nan, 2.0, 1.0, np.nan], [np.nan, 7.0, 9.0, np.nan],
                      [np.nan, np.nan, np.nan, np.nan], [np.nan, np.nan, 0.0, 0.3],
                      [0.2, np.nan, np.nan, np.nan], [np.nan, 0.0, np.nan, -0.1]])
    assert_targets_exact(model, np.vstack([X[:40], extra]))


def test_surrogate_models_compile_exactly():
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(4)
    Xn = X.copy()
    Xn[rng.random(X.shape) < 0.1] = np.nan
    clf = CARTClassifier(random_state=0, missing="surrogate", max_depth=5).fit(Xn, y)
    rows = X[:40].copy()
    rows[rng.random(rows.shape) < 0.5] = np.nan  # often several surrogates deep
    assert_targets_exact(clf.model_, rows)
    reg = CARTRegressor(random_state=0, missing="surrogate", max_depth=4,
                                ccp_alpha=0.002).fit(Xn, y.astype(float))
    assert_targets_exact(reg.model_, rows)


def test_parameters_are_checked():
    X, y = tiny()
    with pytest.raises(LearnerError, match="missing"):
        CARTClassifier(missing="impute").fit(X, y)
    with pytest.raises(LearnerError, match="max_surrogates"):
        CARTClassifier(missing="surrogate", max_surrogates=-1).fit(X, y)
    model = CARTClassifier(max_depth=1, missing="surrogate").fit(X, y).model_
    assert dict(model.provenance.params)["missing"] == "surrogate"
    assert evaluate.predict(model, np.full((1, 5), np.nan))[0] == 0  # all missing: majority
