"""XGBoost-style boosting: the note's formulas by hand, XGBoost parity, exact IR.

XGBoost computes gradients, leaf values and scores in float32; this learner in float64. With
the same splits the raw scores therefore agree to float32 precision (about 1e-7 relative).
XGBoost prunes with the gain *without* the note's 1/2 (checked below), so its gamma is twice
ours.
"""

from __future__ import annotations

import numpy as np
import pytest
import xgboost as xgb
from sklearn.datasets import load_breast_cancer, make_classification, make_friedman1
from sklearn.model_selection import train_test_split
from targetcheck import assert_targets_exact

from rulegen.errors import LearnerError
from rulegen.ir import evaluate, serialize
from rulegen.ir.nodes import CategoricalTest, Leaf, Split
from rulegen.learn.ensembles.newton import leaf_weight, quantile_bins, split_gain
from rulegen.learn.ensembles.xgb import XGBoostStyleClassifier, XGBoostStyleRegressor

ONE_TREE = {"n_estimators": 1, "learning_rate": 1.0, "base_score": 0.0}


def leaves(model, t=0):
    return [nd.value[0] for nd in model.trees[t].nodes if isinstance(nd, Leaf)]


def splits(model, t=0):
    return [nd for nd in model.trees[t].nodes if isinstance(nd, Split)]


def margin(ref, X):
    return ref.predict(X, output_margin=True)


@pytest.fixture(scope="module")
def with_missing():
    """Regression data with missing values that carry signal (missing x0 means y + 3)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = 2 * X[:, 0] + X[:, 1] + rng.normal(size=300)
    X[rng.random(X.shape) < 0.15] = np.nan
    y = y + np.where(np.isnan(X[:, 0]), 3.0, 0.0)
    return X, y


# --- the note's formulas ------------------------------------------------------------------


def test_leaf_weight_and_gain_formulas():
    assert leaf_weight(-3.0, 2.0, 1.0) == 1.0
    assert leaf_weight(4.0, 3.0, 1.0) == -1.0
    assert leaf_weight(5.0, 0.0, 0.0) == 0.0  # H + lambda = 0: no information
    # GL=-3, HL=2, GR=3, HR=2, lambda=1: 1/2 [9/3 + 9/3 - 0/5] = 3
    assert split_gain(-3.0, 2.0, 3.0, 2.0, 1.0) == 3.0
    assert split_gain(-3.0, 2.0, 3.0, 2.0, 1.0, gamma=0.5) == 2.5
    assert split_gain(-2.0, 1.0, 6.0, 3.0, 0.0) == pytest.approx(0.5 * (4 + 12 - 16 / 4))


def test_one_split_by_hand_and_gamma_prunes_it():
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    y = np.array([2.0, 1.0, -1.0, -2.0])  # g = f - y = -y, h = 1
    est = XGBoostStyleRegressor(max_depth=1, **ONE_TREE).fit(X, y)
    (root,) = splits(est.model_)
    assert (root.test.op, root.test.threshold) in (("<=", 2.5), ("<", 2.5))
    assert leaves(est.model_) == [1.0, -1.0]  # -G/(H+l) = 3/3 and -3/3
    # the split's gain is exactly 3: gamma below keeps it, above prunes it
    assert len(splits(XGBoostStyleRegressor(max_depth=1, gamma=2.99, **ONE_TREE).fit(X, y).model_)) == 1
    pruned = XGBoostStyleRegressor(max_depth=1, gamma=3.01, **ONE_TREE).fit(X, y).model_
    assert splits(pruned) == [] and leaves(pruned) == [0.0]
    # learning rate scales the stored leaves
    est = XGBoostStyleRegressor(max_depth=1, n_estimators=1, learning_rate=0.3, base_score=0.0)
    assert leaves(est.fit(X, y).model_) == [0.3 * 1.0, 0.3 * -1.0]


def test_min_child_weight_blocks_the_best_split():
    X = np.arange(1.0, 6.0)[:, None]
    y = np.array([4.0, -1.0, -1.0, -1.0, -1.0])  # g = -y
    # 1|4: 1/2 [16/2 + 16/5] = 5.6 beats 2|3: 1/2 [9/3 + 9/4] = 2.625, but HL = 1
    free = XGBoostStyleRegressor(max_depth=1, min_child_weight=1.0, **ONE_TREE).fit(X, y)
    assert splits(free.model_)[0].test.threshold == pytest.approx(1.5)
    blocked = XGBoostStyleRegressor(max_depth=1, min_child_weight=1.5, **ONE_TREE).fit(X, y)
    assert splits(blocked.model_)[0].test.threshold == pytest.approx(2.5)
    assert leaves(blocked.model_) == [1.0, -0.75]  # G = -4+1 over H = 2; G = 3 over H = 3
    none = XGBoostStyleRegressor(max_depth=1, min_child_weight=2.5, **ONE_TREE).fit(X, y)
    assert splits(none.model_) == []


def test_gamma_pruning_is_bottom_up():
    X = np.arange(1.0, 5.0)[:, None]
    y = np.array([1.0, -1.0, -1.0, 1.0])  # g = [-1, 1, 1, -1]
    # root: 1|3 gains 1/2 [1/2 + 1/4 - 0] = 0.375; its right child {2,3,4} (G=1, H=3) splits
    # {2,3}|{4}: 1/2 [4/3 + 1/2 - 1/4] = 0.7916...
    full = XGBoostStyleRegressor(max_depth=2, **ONE_TREE).fit(X, y).model_
    assert len(splits(full)) == 2
    # gamma 0.5: the root's own gain is negative, but its child's is not: XGBoost keeps both
    kept = XGBoostStyleRegressor(max_depth=2, gamma=0.5, **ONE_TREE).fit(X, y).model_
    assert len(splits(kept)) == 2
    # gamma 0.8 prunes the child, which leaves the root with two leaves and a negative gain
    gone = XGBoostStyleRegressor(max_depth=2, gamma=0.8, **ONE_TREE).fit(X, y).model_
    assert splits(gone) == [] and leaves(gone) == [0.0]


def test_missing_values_learn_their_direction(with_missing):
    X, y = with_missing
    est = XGBoostStyleRegressor(max_depth=1, **ONE_TREE).fit(X, y)
    (root,) = splits(est.model_)
    assert root.test.feature == 0
    # missing x0 has high y: it joins the high side (x0 > t, child 1)
    assert root.missing.child == 1
    # all present rows left, missing right, when only missingness matters
    Xm = np.array([[1.0], [2.0], [np.nan], [3.0], [np.nan]])
    ym = np.array([0.0, 0.0, 5.0, 0.0, 5.0])
    (root,) = splits(XGBoostStyleRegressor(max_depth=1, **ONE_TREE).fit(Xm, ym).model_)
    assert root.test.threshold in (np.inf, -np.inf)
    assert evaluate.raw_scores(XGBoostStyleRegressor(max_depth=1, **ONE_TREE).fit(Xm, ym).model_,
                               [[np.nan], [7.0]])[:, 0].tolist() == [10 / 3, 0.0]


# --- against XGBoost -----------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 3])
def test_one_round_matches_xgboost_exact(with_missing, depth):
    X, y = with_missing
    ours = XGBoostStyleRegressor(n_estimators=1, max_depth=depth).fit(X, y)
    ref = xgb.XGBRegressor(n_estimators=1, max_depth=depth, tree_method="exact", n_jobs=1).fit(X, y)
    assert ours.model_.base_score[0] == pytest.approx(float(np.mean(y)), rel=1e-15)
    assert np.abs(evaluate.raw_scores(ours.model_, X)[:, 0] - margin(ref, X)).max() < 1e-6
    if depth == 1:
        (root,) = splits(ours.model_)
        dump = ref.get_booster().get_dump(with_stats=True)[0]
        assert dump.startswith(f"0:[f{root.test.feature}<")
        assert f"missing={1 + root.missing.child}" in dump
        got = [float(t.split("=")[1].split(",")[0]) for t in dump.split("leaf")[1:]]
        assert leaves(ours.model_) == pytest.approx(got, rel=1e-6)
    yb = (y > 1).astype(int)
    ours = XGBoostStyleClassifier(n_estimators=1, max_depth=depth).fit(X, yb)
    ref = xgb.XGBClassifier(n_estimators=1, max_depth=depth, tree_method="exact", n_jobs=1).fit(X, yb)
    assert np.abs(evaluate.raw_scores(ours.model_, X)[:, 0] - margin(ref, X)).max() < 1e-6


def test_multiclass_rounds_match_xgboost():
    X, y = make_classification(n_samples=400, n_features=6, n_informative=4, n_classes=3,
                               random_state=0)
    ours = XGBoostStyleClassifier(n_estimators=5, max_depth=1).fit(X, y)
    ref = xgb.XGBClassifier(n_estimators=5, max_depth=1, tree_method="exact", n_jobs=1).fit(X, y)
    # base_score is XGBoost 3's symmetric log-prior; softmax hessian 2 p (1 - p); trained
    # without missing values, both send them left
    Xq = X.copy()
    Xq[::3, :3] = np.nan
    for rows in (X, Xq):
        assert np.abs(evaluate.raw_scores(ours.model_, rows) - margin(ref, rows)).max() < 1e-6
    assert [t.output for t in ours.model_.trees[:6]] == [0, 1, 2, 0, 1, 2]


def test_xgboost_gamma_is_twice_the_notes():
    X, y = make_friedman1(n_samples=300, random_state=2)
    for gamma in (2.0, 20.0):
        ours = XGBoostStyleRegressor(n_estimators=3, max_depth=4, gamma=gamma).fit(X, y)
        ref = xgb.XGBRegressor(n_estimators=3, max_depth=4, gamma=2 * gamma,
                               tree_method="exact", n_jobs=1).fit(X, y)
        n_ref = sum(d.count("leaf=") for d in ref.get_booster().get_dump())
        assert sum(len(leaves(ours.model_, t)) for t in range(3)) == n_ref
        assert np.abs(evaluate.raw_scores(ours.model_, X)[:, 0] - margin(ref, X)).max() < 1e-5


def test_min_child_weight_matches_xgboost():
    X, y = load_breast_cancer(return_X_y=True)
    ours = XGBoostStyleClassifier(n_estimators=3, max_depth=4, min_child_weight=5).fit(X, y)
    ref = xgb.XGBClassifier(n_estimators=3, max_depth=4, min_child_weight=5,
                            tree_method="exact", n_jobs=1).fit(X, y)
    assert np.abs(evaluate.raw_scores(ours.model_, X)[:, 0] - margin(ref, X)).max() < 1e-5


def test_accuracy_and_rmse_close_to_xgboost():
    X, y = make_friedman1(n_samples=800, random_state=0)
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    kw = {"n_estimators": 60, "max_depth": 4, "learning_rate": 0.3, "reg_lambda": 1.0}
    ours = XGBoostStyleRegressor(**kw).fit(Xtr, ytr)
    ref = xgb.XGBRegressor(tree_method="exact", n_jobs=1, **kw).fit(Xtr, ytr)
    r_ours = np.sqrt(np.mean((ours.predict(Xte) - yte) ** 2))
    r_ref = np.sqrt(np.mean((ref.predict(Xte) - yte) ** 2))
    assert r_ours <= 1.03 * r_ref
    for X, y in (load_breast_cancer(return_X_y=True),
                 make_classification(n_samples=600, n_features=8, n_informative=5, n_classes=3,
                                     random_state=0)):
        Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
        ours = XGBoostStyleClassifier(**kw).fit(Xtr, ytr)
        ref = xgb.XGBClassifier(tree_method="exact", n_jobs=1, **kw).fit(Xtr, ytr)
        assert (ours.predict(Xte) == yte).mean() >= (ref.predict(Xte) == yte).mean() - 0.01


# --- candidates from weighted quantiles -------------------------------------------------------


def test_quantile_bins_balance_the_hessian():
    rng = np.random.default_rng(0)
    x = rng.normal(size=1000).astype(np.float32)
    h = np.where(x > 0, 3.0, 1.0)  # the positive half weighs three times as much
    XT = x[None, :]
    bins, cuts, _ = quantile_bins(XT, np.argsort(XT, axis=1), np.arange(1000), h, 8)
    bins = bins[0]
    assert (bins <= 7).all() and np.array_equal(bins, np.searchsorted(cuts[0], x, side="right"))
    mass = np.bincount(bins, weights=h)
    assert len(mass) == 8
    assert np.all(np.abs(mass - h.sum() / 8) <= 3.0)  # within one row's hessian
    assert (np.diff(bins[np.argsort(x)].astype(np.int64)) >= 0).all()
    assert np.bincount(bins)[-1] < np.bincount(bins)[0]  # heavier rows: narrower bins


def test_approx_uses_only_quantile_cuts_and_splits_as_exact_with_enough_bins():
    X, y = make_friedman1(n_samples=300, random_state=0)
    exact = XGBoostStyleRegressor(n_estimators=5, max_depth=3).fit(X, y)
    fine = XGBoostStyleRegressor(n_estimators=5, max_depth=3, tree_method="approx",
                                   max_bin=1000).fit(X, y)
    # one bin per distinct value: the same partitions, so the same training scores, but cut
    # as XGBoost's histograms do, "x < next training value", where exact cuts at midpoints
    assert np.array_equal(evaluate.raw_scores(fine.model_, X), evaluate.raw_scores(exact.model_, X))
    X32 = X.astype(np.float32)
    for t in range(len(fine.model_.trees)):
        for nd in splits(fine.model_, t):
            assert nd.test.op == "<" and np.float32(nd.test.threshold) in X32[:, nd.test.feature]
    coarse = XGBoostStyleRegressor(n_estimators=1, max_depth=3, tree_method="approx",
                                     max_bin=4, learning_rate=1.0).fit(X, y)
    root = splits(coarse.model_)[0]
    # h = 1: the root's cut sits at a quartile of its feature
    q = np.mean(X[:, root.test.feature].astype(np.float32) < root.test.threshold)
    assert min(abs(q - 0.25), abs(q - 0.5), abs(q - 0.75)) < 0.01
    # XGBoost's streaming sketch cuts elsewhere; one data set's RMSE moves by +-10% with the
    # cuts, so compare the mean over six data sets
    kw = {"n_estimators": 50, "max_depth": 3, "learning_rate": 0.2, "max_bin": 32}
    r = np.zeros(2)
    for seed in range(6):
        Xtr, Xte, ytr, yte = train_test_split(*make_friedman1(n_samples=1000, random_state=seed),
                                              random_state=0)
        ours = XGBoostStyleRegressor(tree_method="approx", **kw).fit(Xtr, ytr)
        ref = xgb.XGBRegressor(tree_method="approx", n_jobs=1, **kw).fit(Xtr, ytr)
        r += [np.sqrt(np.mean((m.predict(Xte) - yte) ** 2)) for m in (ours, ref)]
    assert r[0] <= 1.03 * r[1], r / 6


# --- sampling, early stopping -------------------------------------------------------------------


def test_column_sampling_per_tree_and_level_is_seeded():
    X, y = make_friedman1(n_samples=300, n_features=8, random_state=0)
    est = XGBoostStyleRegressor(n_estimators=10, max_depth=3, colsample_bytree=0.25,
                                  random_state=3).fit(X, y)
    for t in est.model_.trees:
        assert len({nd.test.feature for nd in t.nodes if isinstance(nd, Split)}) <= 2
    lvl = XGBoostStyleRegressor(n_estimators=10, max_depth=3, colsample_bylevel=0.125,
                                  random_state=3).fit(X, y)
    for t in lvl.model_.trees:  # one feature per level: the root's level uses one feature
        depth = {0: 0}
        by_level = {}
        for i, nd in enumerate(t.nodes):
            if isinstance(nd, Split):
                by_level.setdefault(depth[i], set()).add(nd.test.feature)
                for c in nd.children:
                    depth[c] = depth[i] + 1
        assert all(len(f) == 1 for f in by_level.values())
    again = XGBoostStyleRegressor(n_estimators=10, max_depth=3, colsample_bylevel=0.125,
                                    random_state=3).fit(X, y)
    assert serialize.dumps(again.model_) == serialize.dumps(lvl.model_)
    sub = [XGBoostStyleRegressor(n_estimators=4, subsample=0.5, random_state=s).fit(X, y)
           for s in (1, 1, 2)]
    assert serialize.dumps(sub[0].model_) == serialize.dumps(sub[1].model_)
    assert serialize.dumps(sub[0].model_) != serialize.dumps(sub[2].model_)
    assert sub[0].model_.trees[0].nodes[0].samples == 150.0


def test_early_stopping_keeps_the_best_round():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + rng.normal(size=300)
    calls = []
    est = XGBoostStyleRegressor(n_estimators=300, early_stopping_rounds=4, random_state=0)
    est.fit(X, y, progress=lambda d, t: calls.append(d))
    fitted = len(est.validation_score_)
    assert fitted < 300 and calls == list(range(1, fitted + 1))
    best = est.best_iteration_
    assert fitted == best + 1 + 4
    assert est.validation_score_[best] == min(est.validation_score_)
    assert est.n_estimators_ == best + 1 == len(est.model_.trees)


def test_integer_weights_act_as_repeated_rows(with_missing):
    X, y = with_missing
    w = np.arange(len(X)) % 3
    rep = np.repeat(np.arange(len(X)), w)
    for cls, target in ((XGBoostStyleRegressor, y), (XGBoostStyleClassifier, y > 1)):
        weighted = cls(n_estimators=3, max_depth=3).fit(X, target, sample_weight=w)
        repeated = cls(n_estimators=3, max_depth=3).fit(X[rep], target[rep])
        a, b = (evaluate.raw_scores(m.model_, X) for m in (weighted, repeated))
        assert np.allclose(a, b, rtol=0, atol=1e-9)


# --- the IR is the model --------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass", "approx"])
def test_compiles_exactly_with_missing_and_categories(kind):
    rng = np.random.default_rng(5)
    n = 240
    X = rng.normal(size=(n, 4))
    X[:, 2] = rng.integers(0, 6, n)
    effect = np.array([2.0, -1.0, 0.0, 1.0, -2.0, 0.5])
    y = X[:, 0] + effect[X[:, 2].astype(int)] + 0.3 * rng.normal(size=n)
    X[rng.random((n, 4)) < 0.1] = np.nan
    kw = {"n_estimators": 8, "max_depth": 3, "subsample": 0.9, "colsample_bylevel": 0.9,
          "random_state": 0}
    if kind in ("binary", "multiclass"):
        labels = (y > 0).astype(int) if kind == "binary" else np.digitize(y, [-0.5, 1.0])
        est = XGBoostStyleClassifier(**kw).fit(X, labels, categorical_features=[2])
    else:
        method = "approx" if kind == "approx" else "exact"
        est = XGBoostStyleRegressor(tree_method=method, max_bin=16, **kw)
        est.fit(X, y, categorical_features=[2])
    model = est.model_
    assert model.provenance.algorithm == "xgboost_style"
    cats = [nd for t in model.trees for nd in t.nodes
            if isinstance(nd, Split) and isinstance(nd.test, CategoricalTest)]
    assert cats and all(nd.unseen is not None and nd.test.categories for nd in cats)
    raw = evaluate.raw_scores(model, X)
    T = (y[:, None] if kind in ("regression", "approx") else
         np.eye(3)[labels] if kind == "multiclass" else labels[:, None].astype(float))
    assert est.loss_.value(T, raw, np.ones(n)) == est.train_score_[-1]
    assert_targets_exact(model, X[:40], n_random=20)


def test_bad_parameters_are_one_clear_error():
    X, y = make_friedman1(n_samples=50, random_state=0)
    for kw in ({"tree_method": "gpu_hist"}, {"reg_lambda": -1}, {"colsample_bytree": 0},
               {"max_bin": 1}, {"learning_rate": 0}):
        with pytest.raises(LearnerError):
            XGBoostStyleRegressor(**kw).fit(X, y)
    with pytest.raises(LearnerError, match="probability"):
        XGBoostStyleClassifier(base_score=2.0).fit(X, y > 14)


@pytest.mark.parametrize("method", ["exact", "approx", "hist"])
def test_leaves_of_the_growing_rows_are_the_evaluators(method, monkeypatch):
    """Every tree's training rows take the leaf where the finder divided them, the others
    (out of the subsample, zero weight) the evaluator's: the same leaves as the evaluator
    routing every row (NaN, a categorical feature, weights, three classes)."""
    from rulegen.learn.ensembles import xgb as xgb_module

    seen = []
    leaves = xgb_module._leaves

    def checked(tree, finder, X32, features):
        got = leaves(tree, finder, X32, features)
        seen.append(sum(r is not None for r in finder.node_rows))
        assert np.array_equal(got, xgb_module.leaf_index(tree, X32, features))
        return got

    monkeypatch.setattr(xgb_module, "_leaves", checked)
    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(400, 5)), 1)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, 2] = np.where(np.isnan(X[:, 2]), np.nan, rng.integers(0, 6, 400))
    y = np.digitize(np.nan_to_num(X[:, 0]) + 0.3 * rng.normal(size=400), [-0.4, 0.4])
    w = rng.exponential(size=400) * (rng.random(400) > 0.1)
    XGBoostStyleClassifier(n_estimators=4, max_depth=4, tree_method=method, subsample=0.7,
                           max_bin=16, random_state=0).fit(
        X, y, sample_weight=w, categorical_features=[2])
    assert len(seen) == 12 and min(seen) > 1  # leaves from the finder, in every tree
