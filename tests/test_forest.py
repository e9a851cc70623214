"""Random forests (Forest-RI and Forest-RC) against scikit-learn, against their own IR, and
compiled to every target."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.model_selection import KFold, StratifiedKFold
from targetcheck import assert_targets_exact

from rulegen.errors import LearnerError
from rulegen.ir import evaluate, serialize
from rulegen.ir.nodes import (
    CategoricalTest,
    Leaf,
    NumericTest,
    ObliqueTest,
    Split,
    Tree,
)
from rulegen.learn.ensembles import forest as forest_mod
from rulegen.learn.ensembles.forest import (
    RandomForestClassifier,
    RandomForestRegressor,
    resolve_max_features,
)
from rulegen.learn.ensembles.oblique import ObliqueSplitFinder, midpoint
from rulegen.learn.importance import permutation_importance, r2
from rulegen.learn.splits.builder import presort

# --- helpers ----------------------------------------------------------------------------


def leaf_ids(tree: Tree, features, X) -> np.ndarray:
    """The node id of the leaf each row reaches, routed by the evaluator."""
    nodes = tuple(Leaf((float(i),)) if isinstance(nd, Leaf) else nd for i, nd in enumerate(tree.nodes))
    return evaluate.tree_output(Tree(nodes), np.asarray(X, dtype=np.float64), features, 1)[:, 0].astype(int)


def mixed_data(n=240, seed=0, task="classification"):
    """Numeric columns (full float64 precision, some missing) and one categorical column."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)) * [1.0, 3.0, 0.5, 10.0, 1.0]
    X[:, 1] += 0.8 * X[:, 0]  # correlated inputs
    X[:, 4] = rng.integers(0, 5, n)  # category codes 0..4
    score = X[:, 0] + 0.3 * X[:, 1] - 0.1 * X[:, 3] + np.where(X[:, 4] >= 3, 1.5, 0.0)
    X[rng.random((n, 5)) < 0.08] = np.nan
    if task == "classification":
        y = np.digitize(score + 0.3 * rng.normal(size=n), [-0.5, 1.0])
    else:
        y = score + 0.2 * rng.normal(size=n)
    return X, y


def cv_score(make, X, y, classification, seeds=(0, 1, 2)):
    """Mean score over 5-fold cross-validations shuffled by each seed (one forest's score
    varies by about a point with its random generator, so one split is too noisy)."""
    scores = []
    for seed in seeds:
        split = (StratifiedKFold if classification else KFold)(5, shuffle=True, random_state=seed)
        for tr, te in split.split(X, y):
            pred = make(seed).fit(X[tr], y[tr]).predict(X[te])
            scores.append(np.mean(pred == y[te]) if classification else r2(y[te], pred))
    return float(np.mean(scores))


# --- against scikit-learn ---------------------------------------------------------------


@pytest.mark.parametrize("loader", [load_breast_cancer, load_iris])
def test_classifier_accuracy_matches_sklearn(loader):
    X, y = loader(return_X_y=True)
    ours = cv_score(lambda s: RandomForestClassifier(50, random_state=s), X, y, True)
    ref = cv_score(lambda s: ensemble.RandomForestClassifier(50, random_state=s), X, y, True)
    assert abs(ours - ref) <= 0.01, (ours, ref)


def test_regressor_r2_matches_sklearn():
    X, y = load_diabetes(return_X_y=True)
    kw = {"min_samples_leaf": 5, "max_features": 0.5}
    ours = cv_score(lambda s: RandomForestRegressor(50, random_state=s, **kw), X, y, False, (0,))
    ref = cv_score(lambda s: ensemble.RandomForestRegressor(50, random_state=s, **kw), X, y, False, (0,))
    assert abs(ours - ref) <= 0.015, (ours, ref)


def test_oob_score_close_to_sklearn_and_recomputable():
    X, y = load_breast_cancer(return_X_y=True)
    rf = RandomForestClassifier(60, max_depth=6, oob_score=True, random_state=1).fit(X, y)
    sk = ensemble.RandomForestClassifier(60, max_depth=6, oob_score=True, random_state=1).fit(X, y)
    assert abs(rf.oob_score_ - sk.oob_score_) <= 0.015, (rf.oob_score_, sk.oob_score_)
    # recompute the OOB decision from the IR trees and the regenerated bootstrap counts
    total, count = np.zeros((len(X), 2)), np.zeros(len(X))
    for i, tree in enumerate(rf.model_.trees):
        counts = rf.sample_counts(i)
        assert counts.sum() == len(X)
        root = tree.nodes[0]
        assert root.samples == counts.sum()  # multiplicities are the weights
        out = counts == 0
        total[out] += evaluate.tree_output(tree, X[out], rf.model_.features, 2)
        count[out] += 1
    assert np.allclose(rf.oob_decision_function_, total / count[:, None], rtol=0, atol=1e-12)
    assert rf.oob_score_ == np.mean(np.argmax(total, axis=1) == y)


def test_regression_oob_score():
    X, y = load_diabetes(return_X_y=True)
    kw = {"min_samples_leaf": 5, "max_features": 0.5, "oob_score": True, "random_state": 0}
    rf = RandomForestRegressor(60, **kw).fit(X, y)
    sk = ensemble.RandomForestRegressor(60, **kw).fit(X, y)
    assert abs(rf.oob_score_ - sk.oob_score_) <= 0.03, (rf.oob_score_, sk.oob_score_)
    assert rf.oob_prediction_.shape == (len(X),)


def test_impurity_importances_match_sklearn():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 6))
    y = (X[:, 0] + 0.4 * X[:, 1] + 0.2 * rng.normal(size=600) > 0).astype(int)
    ours = RandomForestClassifier(60, random_state=0).fit(X, y).feature_importances_
    ref = ensemble.RandomForestClassifier(60, random_state=0).fit(X, y).feature_importances_
    assert ours.sum() == pytest.approx(1.0)
    assert np.argmax(ours) == 0 and np.argsort(ours)[-2] == 1
    assert np.abs(ours - ref).max() < 0.03, (ours, ref)


def test_permutation_importance():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(int)
    rf = RandomForestClassifier(20, max_depth=2, max_features=None, random_state=0).fit(X, y)
    used = {nd.test.feature for t in rf.model_.trees for nd in t.nodes if isinstance(nd, Split)}
    res = permutation_importance(rf, X, y, n_repeats=4, random_state=0)
    assert res.importances.shape == (4, 4)
    assert res.importances_mean[0] > 0.3
    for j in set(range(4)) - used:  # a column no split reads cannot change a prediction
        assert np.all(res.importances[j] == 0.0)
    again = permutation_importance(rf, X, y, n_repeats=4, random_state=0)
    assert np.array_equal(again.importances, res.importances)
    Xr, yr = load_diabetes(return_X_y=True)
    reg = RandomForestRegressor(10, max_depth=3, random_state=0).fit(Xr, yr)
    pi = permutation_importance(reg, Xr, yr, n_repeats=2, random_state=0)
    assert np.argmax(pi.importances_mean) in (2, 8)  # bmi or s5, as every model of this data finds


# --- the IR form ------------------------------------------------------------------------


def test_soft_and_hard_voting_ir():
    X, y = load_iris(return_X_y=True)
    soft = RandomForestClassifier(15, max_depth=3, random_state=3).fit(X, y)
    hard = RandomForestClassifier(15, max_depth=3, random_state=3, voting="hard").fit(X, y)
    assert soft.model_.aggregation == "mean" and hard.model_.aggregation == "vote"
    assert soft.model_.provenance.algorithm == "random_forest"
    outs = np.stack([evaluate.tree_output(t, X, soft.model_.features, 3) for t in soft.model_.trees])
    assert np.allclose(soft.predict_proba(X), outs.mean(axis=0), rtol=0, atol=1e-15)
    # same seed, same trees: hard voting counts each tree's most probable class
    votes = np.zeros((len(X), 3))
    for o in outs:
        votes[np.arange(len(X)), np.argmax(o, axis=1)] += 1
    assert np.array_equal(hard.predict_proba(X), votes / 15)
    assert np.array_equal(hard.predict(X), soft.classes_[np.argmax(votes, axis=1)])
    for tree in hard.model_.trees:
        assert tree.output is None and tree.weight == 1.0


def test_bootstrap_options_and_determinism():
    X, y = load_iris(return_X_y=True)
    a = RandomForestClassifier(5, max_samples=0.5, random_state=7).fit(X, y)
    b = RandomForestClassifier(5, max_samples=0.5, random_state=7).fit(X, y)
    assert a.model_ == b.model_
    for i, tree in enumerate(a.model_.trees):
        assert a.sample_counts(i).sum() == 75 == tree.nodes[0].samples
    c = RandomForestClassifier(3, bootstrap=False, max_features=None, random_state=0).fit(X, y)
    assert all(t.nodes[0].samples == 150 for t in c.model_.trees)
    d = RandomForestClassifier(4, splitter="random", bootstrap=False, random_state=0).fit(X, y)
    assert len({t.nodes for t in d.model_.trees}) == 4  # extremely randomised trees differ
    # sample weights multiply the bootstrap counts; rows of weight 0 reach no node
    w = np.where(np.arange(150) % 5 == 0, 0.0, 1.5)
    e = RandomForestClassifier(4, max_depth=2, random_state=1).fit(X, y, sample_weight=w)
    e.set_params(bootstrap=False, max_samples=None)  # later changes do not alter the fitted seeds
    for i, tree in enumerate(e.model_.trees):
        counts = e.sample_counts(i)
        assert tree.nodes[0].samples == pytest.approx((counts * w).sum(), rel=1e-12)
        reached = leaf_ids(tree, e.model_.features, X)
        leaf_weight = np.bincount(reached, weights=counts * w, minlength=len(tree.nodes))
        for node_id, node in enumerate(tree.nodes):
            if isinstance(node, Leaf):
                assert node.samples == pytest.approx(leaf_weight[node_id], rel=1e-12)


def test_shared_presort_gives_the_finders_own_root():
    # forests and boosting sort X once (builder.presort) and filter it per tree
    X, y = mixed_data(seed=2)
    X[:, 2] = np.round(X[:, 2], 1)  # ties
    X32 = X.astype(np.float32)
    X32[::7, 1] = np.nan
    est = RandomForestClassifier()
    spec = forest_mod.tree_spec(est, len(X), X.shape[1], forest_mod.CLASSIFICATION_CRITERIA, 3)
    rng = np.random.default_rng(0)
    order = None
    for w in (np.ones(len(X)), np.bincount(rng.integers(0, len(X), len(X)), minlength=len(X))):
        finder = forest_mod.NumericSplitFinder(X32, y, w.astype(float), spec.criterion)
        order = presort(X32) if order is None else order
        rows = np.flatnonzero(w > 0)
        mine, theirs = finder.root(rows, order), finder.root(rows)
        assert np.array_equal(mine.state[0], theirs.state[0])
        assert mine.state[1] == theirs.state[1] and np.array_equal(mine.rows, theirs.rows)
        assert np.array_equal(mine.weights, theirs.weights) and mine.impurity == theirs.impurity


def test_max_features_rules():
    assert resolve_max_features("log2+1", 30) == 5  # int(log2 30) + 1, Breiman's Forest-RI
    assert resolve_max_features("log2+1", 2) == 2
    assert resolve_max_features("sqrt", 30) == 5
    assert resolve_max_features("log2", 30) == 4
    assert resolve_max_features(0.5, 30) == 15
    assert resolve_max_features(100, 30) == 30
    assert resolve_max_features(None, 30) == 30


def test_categorical_features_and_progress():
    X, y = mixed_data()
    calls = []
    rf = RandomForestClassifier(6, max_depth=4, random_state=0).fit(
        X, y, categorical_features=[4], categories={4: ["a", "b", "c", "d", "e"]},
        progress=lambda done, total: calls.append((done, total)))
    assert calls == [(i, 6) for i in range(1, 7)]
    assert rf.model_.features[4].categories == ("a", "b", "c", "d", "e")
    tests = [nd.test for t in rf.model_.trees for nd in t.nodes if isinstance(nd, Split)]
    assert any(isinstance(t, CategoricalTest) and t.feature == 4 for t in tests)
    assert all(isinstance(t, (CategoricalTest, NumericTest)) for t in tests)


@pytest.mark.parametrize("params, message", [
    ({"n_estimators": 0}, "n_estimators"),
    ({"max_features": "cube"}, "max_features"),
    ({"voting": "loud"}, "voting"),
    ({"split": "diagonal"}, "split"),
    ({"bootstrap": False, "oob_score": True}, "bootstrap"),
    ({"max_samples": 1000}, "max_samples"),
    ({"split": "oblique", "splitter": "random"}, "splitter"),
    ({"split": "oblique", "n_combined": 0}, "n_combined"),
    ({"criterion": "squared_error"}, "criterion"),
])
def test_bad_parameters(params, message):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(LearnerError, match=message):
        RandomForestClassifier(**params).fit(X, y)
    with pytest.raises(LearnerError, match="progress"):
        RandomForestClassifier(2).fit(X, y, progress=3)


# --- Forest-RC --------------------------------------------------------------------------


def test_midpoint_is_strictly_between():
    a = 1.0 + 2.0**-52
    b = np.nextafter(a, 2.0)
    assert a / 2 + b / 2 == b  # rounding lifts the plain midpoint onto b
    assert midpoint(a, b) == a
    assert midpoint(1.0, 3.0) == 2.0


def _fit_recording_rows(monkeypatch, X, y, **params):
    """Fit a forest, recording for every tree the training rows the learner put in each node."""
    grown = []  # per tree: rows of every node, in node-id order
    real_summarize = ObliqueSplitFinder.summarize
    real_grow = forest_mod.TreeGrower.grow

    def summarize(node):
        grown[-1].append(np.array(node.rows))
        return real_summarize(node)

    def grow(self, w, rng):
        grown.append([])
        return real_grow(self, w, rng)

    monkeypatch.setattr(ObliqueSplitFinder, "summarize", staticmethod(summarize))
    monkeypatch.setattr(forest_mod.TreeGrower, "grow", grow)
    cats = params.pop("categorical_features", None)
    rf = RandomForestClassifier(split="oblique", **params).fit(X, y, categorical_features=cats)
    return rf, grown


def _assert_ir_routes_as_learner(rf, grown, X) -> int:
    """Every in-bag row reaches, through the IR, the leaf the learner put it in; returns the
    number of oblique splits seen."""
    model, n_oblique = rf.model_, 0
    for i, tree in enumerate(model.trees):
        rows_of = grown[i]
        assert len(rows_of) == len(tree.nodes)
        inbag = np.flatnonzero(rf.sample_counts(i) > 0)
        reached = leaf_ids(tree, model.features, X[inbag])
        for node_id, node in enumerate(tree.nodes):
            if isinstance(node, Leaf):
                assert np.array_equal(np.sort(inbag[reached == node_id]), np.sort(rows_of[node_id]))
            elif isinstance(node.test, ObliqueTest):
                n_oblique += 1
    return n_oblique


def test_oblique_ir_routes_training_rows_as_the_learner(monkeypatch):
    X, y = mixed_data(seed=4)
    rf, grown = _fit_recording_rows(monkeypatch, X, y, n_estimators=8, n_combined=3,
                                    categorical_features=[4], random_state=0)
    assert _assert_ir_routes_as_learner(rf, grown, X) > 20
    for tree in rf.model_.trees:
        for nd in tree.nodes:
            if isinstance(nd, Split) and isinstance(nd.test, ObliqueTest):
                assert nd.test.op == "<=" and len(nd.test.features) == 3
                assert 4 not in nd.test.features  # categorical: subset splits only
    assert np.mean(rf.predict(X) == y) > 0.95


def test_oblique_routing_is_exact_at_the_last_bit(monkeypatch):
    """Inputs a few ulps apart: the combined sums differ only in their last bits, so any
    change of summation order, precision or rounding between learner and IR misroutes rows."""
    rng = np.random.default_rng(11)
    k = rng.integers(0, 64, (300, 4))
    X = 1.0 + k * 2.0**-52
    y = (k[:, 0] - k[:, 1] + k[:, 2] + rng.integers(-8, 9, 300) > 31).astype(int)
    rf, grown = _fit_recording_rows(monkeypatch, X, y, n_estimators=6, n_combined=3,
                                    random_state=0)
    assert _assert_ir_routes_as_learner(rf, grown, X) > 100
    assert np.mean(rf.predict(X) == y) > 0.9


def test_oblique_root_split_by_hand():
    """The chosen combination, recomputed in numpy in the IR's order, splits the rows the
    way the learner's children hold them, and its threshold is a midpoint of adjacent sums."""
    X, y = mixed_data(seed=5)
    X = X[:, :4]
    rf = RandomForestClassifier(1, split="oblique", bootstrap=False, max_depth=1,
                                n_combinations=6, random_state=2).fit(X, y)
    root = rf.model_.trees[0].nodes[0]
    t = root.test
    assert isinstance(t, ObliqueTest)
    s = np.zeros(len(X))
    for f, w in zip(t.features, t.weights):
        s = s + w * X[:, f]
    present = np.sort(s[~np.isnan(s)])
    below, above = present[present <= t.threshold], present[present > t.threshold]
    assert t.threshold == midpoint(below[-1], above[0])
    left = np.where(np.isnan(s), root.missing.child == 0, s <= t.threshold)
    left_leaf, right_leaf = (rf.model_.trees[0].nodes[c] for c in root.children)
    assert left_leaf.samples == left.sum() and right_leaf.samples == (~left).sum()
    assert np.array_equal(left_leaf.distribution, np.bincount(y[left], minlength=3))


def test_oblique_accuracy_like_forest_ri_on_correlated_inputs():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(1400, 2))
    X = z @ rng.normal(size=(2, 8)) + 0.3 * rng.normal(size=(1400, 8))  # 8 correlated inputs
    y = (z[:, 0] - 0.5 * z[:, 1] > 0).astype(int)
    acc = {}
    for split in ("axis", "oblique"):
        rf = RandomForestClassifier(40, split=split, random_state=0).fit(X[:400], y[:400])
        acc[split] = np.mean(rf.predict(X[400:]) == y[400:])
    assert acc["axis"] > 0.9
    assert acc["oblique"] >= acc["axis"] - 0.02, acc


def test_oblique_regression_and_importances():
    X, y = load_diabetes(return_X_y=True)
    rf = RandomForestRegressor(20, split="oblique", min_samples_leaf=5, random_state=0).fit(X, y)
    assert all(isinstance(nd.test, ObliqueTest) for t in rf.model_.trees for nd in t.nodes
               if isinstance(nd, Split))
    imp = rf.feature_importances_
    assert imp.sum() == pytest.approx(1.0) and (imp > 0).all()
    assert np.argmax(imp) in (2, 8)
    assert r2(y, rf.predict(X)) > 0.6


# --- every target -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["soft", "hard", "regression", "oblique"])
def test_compiles_exactly(kind):
    task = "regression" if kind == "regression" else "classification"
    X, y = mixed_data(n=160, seed=1, task=task)
    kw = {"n_estimators": 6, "max_depth": 4, "random_state": 0}
    if kind == "regression":
        est = RandomForestRegressor(max_features=0.6, **kw)
    else:
        est = RandomForestClassifier(voting="hard" if kind == "hard" else "soft",
                                     split="oblique" if kind == "oblique" else "axis", **kw)
    est.fit(X, y, categorical_features=[4], categories={4: ["lo", "mid", "high", "top", "max"]})
    splits = [nd for t in est.model_.trees for nd in t.nodes if isinstance(nd, Split)]
    kinds = {type(nd.test) for nd in splits}
    assert kinds == {CategoricalTest, ObliqueTest if kind == "oblique" else NumericTest}
    assert {nd.missing.child for nd in splits} == {0, 1}  # missing rows go both ways
    assert_targets_exact(est.model_, X[:40])
    assert serialize.loads(serialize.dumps(est.model_)) == est.model_


def test_oblique_forest_on_categorical_features_only():
    X, y = mixed_data(seed=6)
    X = X[:, [4]]
    rf = RandomForestClassifier(3, split="oblique", random_state=0).fit(X, y, categorical_features=[0])
    tests = [nd.test for t in rf.model_.trees for nd in t.nodes if isinstance(nd, Split)]
    assert tests and all(isinstance(t, CategoricalTest) for t in tests)


@pytest.mark.slow
def test_thousand_tree_forest_compiles_exactly():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 8, (300, 4)).astype(float)  # few distinct thresholds: few probe rows
    y = X[:, 0] + 0.5 * X[:, 1] * (X[:, 2] > 3) + rng.normal(size=300)
    X[rng.random(X.shape) < 0.05] = np.nan
    rf = RandomForestRegressor(1000, max_depth=3, max_features="sqrt", random_state=0).fit(X, y)
    assert len(rf.model_.trees) == 1000
    assert_targets_exact(rf.model_, X[:30], n_random=20)
