"""Gradient boosting (first order) and the losses: formulas, scikit-learn parity, exact IR.

scikit-learn grows the same CART trees (squared error on the negative gradient), so with
no subsampling and no tied candidate splits the two ensembles are the same model: raw scores
agree to rounding. Ties are common when gradients take few values (the first rounds of
classification, the absolute error's +-1), and scikit-learn breaks them by its own random
feature order, so those comparisons are by accuracy / RMSE.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.datasets import load_breast_cancer, make_classification, make_friedman1
from sklearn.model_selection import train_test_split
from sklearn.utils.stats import _weighted_percentile
from targetcheck import assert_targets_exact

from rulegen.errors import LearnerError
from rulegen.ir import evaluate, serialize
from rulegen.ir.nodes import CategoricalTest, Split
from rulegen.learn.ensembles.boosting import validation_split
from rulegen.learn.ensembles.gbdt import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
)
from rulegen.learn.ensembles.losses import (
    AbsoluteError,
    BinaryLogLoss,
    Huber,
    SoftmaxLoss,
    SquaredError,
    make_loss,
    weighted_percentile,
)


def rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


def sk_raw(ref, X):
    return ref._raw_predict(np.asarray(X, dtype=np.float32))


@pytest.fixture(scope="module")
def friedman():
    X, y = make_friedman1(n_samples=600, random_state=0)
    return train_test_split(X, y, test_size=0.5, random_state=0)


@pytest.fixture(scope="module")
def mixed():
    """Numeric columns with missing values and a categorical column (codes 0..4)."""
    rng = np.random.default_rng(3)
    n = 240
    X = rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 5, n)
    effect = np.array([0.0, 2.0, -1.0, 1.5, -2.0])
    y = X[:, 0] + np.abs(X[:, 1]) + effect[X[:, 3].astype(int)] + 0.3 * rng.normal(size=n)
    X[rng.random((n, 4)) < 0.1] = np.nan
    return X, y


# --- losses -----------------------------------------------------------------------------


def _fd(fn, F, eps=1e-6):
    """Central differences of fn (per-row values) with respect to every column of F."""
    out = np.zeros_like(F)
    for k in range(F.shape[1]):
        d = np.zeros_like(F)
        d[:, k] = eps
        out[:, k] = (fn(F + d) - fn(F - d)) / (2 * eps)
    return out


@pytest.mark.parametrize("loss, Y", [
    (SquaredError(), np.array([[0.5], [-1.0], [2.0]])),
    (BinaryLogLoss(), np.array([[0.0], [1.0], [1.0]])),
    (SoftmaxLoss(3), np.eye(3)[[0, 2, 1]]),
])
def test_gradient_and_hessian_match_finite_differences(loss, Y):
    F = np.array([[0.3, -0.7, 1.1], [-2.0, 0.4, 0.0], [1.5, 1.0, -0.5]])[:, :Y.shape[1]]
    g, h = loss.gradient_hessian(Y, F)
    assert np.allclose(g, _fd(lambda A: loss.pointwise(Y, A), F), atol=1e-7)
    # diagonal hessian: the derivative of each gradient column along its own column
    dg = np.column_stack([_fd(lambda A, k=k: loss.gradient_hessian(Y, A)[0][:, k], F)[:, k]
                          for k in range(F.shape[1])])
    assert np.allclose(h, dg, atol=1e-6)


def test_softmax_hessian_scale_is_xgboosts_factor_two():
    Y, F = np.eye(3)[[1]], np.array([[0.2, -0.1, 0.4]])
    g1, h1 = SoftmaxLoss(3).gradient_hessian(Y, F)
    g2, h2 = SoftmaxLoss(3, hessian_scale=2.0).gradient_hessian(Y, F)
    assert np.array_equal(g1, g2) and np.array_equal(h2, 2 * h1)


def test_huber_and_absolute_gradients():
    y = np.array([[0.0], [0.0], [0.0], [0.0]])
    F = np.array([[-3.0], [-0.5], [0.25], [4.0]])
    hub = Huber(alpha=0.5)
    hub.begin_round(y, F, np.ones(4))
    # |r| = 3, 0.5, 0.25, 4: the 0.5-quantile (inverted CDF) is 0.5
    assert hub.delta == 0.5
    g, h = hub.gradient_hessian(y, F)
    assert g[:, 0].tolist() == [-0.5, -0.5, 0.25, 0.5]
    assert h[:, 0].tolist() == [0.0, 1.0, 1.0, 0.0]
    assert hub.pointwise(y, F).tolist() == [0.5 * (3 - 0.25), 0.125, 0.03125, 0.5 * (4 - 0.25)]
    assert np.allclose(g, _fd(lambda A: hub.pointwise(y, A), F))
    g, h = AbsoluteError().gradient_hessian(y, F)
    assert g[:, 0].tolist() == [-1.0, -1.0, 1.0, 1.0] and (h == 1).all()


def test_initial_scores():
    w = np.array([1.0, 1.0, 2.0, 0.5])
    y = np.array([[1.0], [3.0], [2.0], [10.0]])
    assert SquaredError().init_score(y, w)[0] == pytest.approx((1 + 3 + 4 + 5) / 4.5)
    assert AbsoluteError().init_score(y, np.ones(4))[0] == 2.5  # numpy's median
    assert AbsoluteError().init_score(y, w)[0] == 2.0  # weighted: inverted CDF
    yb = np.array([[1.0], [0.0], [0.0], [0.0]])
    assert BinaryLogLoss().init_score(yb, np.ones(4))[0] == pytest.approx(np.log(1 / 3))
    Y = np.eye(3)[[0, 0, 1, 2, 2, 2]]
    base = SoftmaxLoss(3).init_score(Y, np.ones(6))
    assert base.sum() == pytest.approx(0.0)
    assert np.allclose(SoftmaxLoss.probabilities(base[None, :])[0], [2 / 6, 1 / 6, 3 / 6])


def test_line_search_values_by_hand():
    # two leaves: rows 0-2 in leaf 0, rows 3-4 in leaf 1; raw scores 0
    leaf = np.array([0, 0, 0, 1, 1])
    w = np.array([1.0, 1.0, 2.0, 1.0, 1.0])
    f = np.zeros(5)
    y = np.array([1.0, 2.0, 4.0, -1.0, 3.0])
    g = f - y
    ls = SquaredError().line_search(y, f, g, np.ones(5), w, leaf, 2)
    assert ls.tolist() == [(1 + 2 + 8) / 4, 1.0]
    ls = AbsoluteError().line_search(y, f, g, np.ones(5), w, leaf, 2)
    assert ls.tolist() == [2.0, -1.0]  # leaf 0: weights 1,1,2 reach half at y=2; leaf 1: lower
    hub = Huber()
    hub.delta = 1.0
    ls = hub.line_search(y, f, g, np.ones(5), w, leaf, 2)
    # leaf 0: median 2, deviations -1, 0, +2 clipped to -1, 0, 1 -> mean (w) (-1 + 0 + 2) / 4
    assert ls.tolist() == [2.0 + 0.25, -1.0 + (0 + 1) / 2]
    yb = np.array([1.0, 0.0, 1.0, 0.0, 0.0])
    fb = np.array([0.0, 0.0, 0.0, 1.0, -1.0])
    gb, hb = BinaryLogLoss().gradient_hessian(yb[:, None], fb[:, None])
    ls = BinaryLogLoss().line_search(yb, fb, gb[:, 0], hb[:, 0], w, leaf, 2)
    p = 1 / (1 + np.exp(-fb))
    want0 = (0.5 - 0.5 + 2 * 0.5) / (4 * 0.25)
    want1 = -(p[3] + p[4]) / (p[3] * (1 - p[3]) + p[4] * (1 - p[4]))
    assert ls == pytest.approx([want0, want1], rel=1e-15)
    # softmax: (K-1)/K times the same Newton step, for class k's column
    Y = np.eye(3)[[0, 1, 2, 0, 0]]
    F = np.zeros((5, 3))
    G, Hs = SoftmaxLoss(3).gradient_hessian(Y, F)
    ls = SoftmaxLoss(3).line_search(Y[:, 0], F[:, 0], G[:, 0], Hs[:, 0], w, leaf, 2)
    num0 = (2 / 3) - (1 / 3) - 2 * (1 / 3)
    assert ls == pytest.approx([2 / 3 * num0 / (4 * 2 / 9), 2 / 3 * (4 / 3) / (2 * 2 / 9)])


def test_weighted_percentile_matches_scikit_learn():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(1, 30))
        v = rng.integers(0, 6, n).astype(float)  # ties on purpose
        w = rng.integers(1, 4, n).astype(float)
        q = float(rng.choice([0.0, 0.1, 0.5, 0.9, 1.0]))
        groups = rng.integers(0, 3, n)
        got = weighted_percentile(v, w, q, groups, 4)
        for gi in range(4):
            m = groups == gi
            want = _weighted_percentile(v[m], w[m], 100 * q) if m.any() else 0.0
            assert got[gi] == want


def test_make_loss_names():
    assert isinstance(make_loss("log_loss", 2), BinaryLogLoss)
    assert isinstance(make_loss("log_loss", 4), SoftmaxLoss)
    assert make_loss("huber", alpha=0.8).alpha == 0.8
    with pytest.raises(ValueError):
        make_loss("hinge")


# --- against scikit-learn -------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 3])
def test_squared_loss_is_scikit_learns_model(friedman, depth):
    Xtr, Xte, ytr, _ = friedman
    # min_samples_leaf: in nodes of 2-3 rows several features cut off the same row (an exact
    # tie, broken at random by scikit-learn) and then disagree on unseen rows
    ours = GradientBoostingRegressor(max_depth=depth, min_samples_leaf=5,
                                     random_state=0).fit(Xtr, ytr)
    ref = ensemble.GradientBoostingRegressor(max_depth=depth, min_samples_leaf=5,
                                             random_state=0).fit(Xtr, ytr)
    for X in (Xtr, Xte):
        raw = evaluate.raw_scores(ours.model_, X)[:, 0]
        assert np.abs(raw - sk_raw(ref, X)[:, 0]).max() < 1e-12 * np.abs(raw).max()
    assert ours.model_.base_score[0] == ref.init_.constant_[0, 0]
    assert all(t.weight == 0.1 for t in ours.model_.trees)


def test_log_loss_with_stumps_is_scikit_learns_model():
    X, y = load_breast_cancer(return_X_y=True)
    ours = GradientBoostingClassifier(max_depth=1, n_estimators=50, random_state=0).fit(X, y)
    ref = ensemble.GradientBoostingClassifier(max_depth=1, n_estimators=50).fit(X, y)
    raw = evaluate.raw_scores(ours.model_, X)[:, 0]
    assert np.abs(raw - sk_raw(ref, X)[:, 0]).max() < 1e-12 * np.abs(raw).max()
    assert ours.model_.link == "sigmoid"
    Xm, ym = make_classification(n_samples=300, n_features=6, n_informative=4, n_classes=3,
                                 random_state=0)
    ours = GradientBoostingClassifier(max_depth=1, n_estimators=30, random_state=0).fit(Xm, ym)
    ref = ensemble.GradientBoostingClassifier(max_depth=1, n_estimators=30).fit(Xm, ym)
    raw = evaluate.raw_scores(ours.model_, Xm)
    assert np.abs(raw - sk_raw(ref, Xm)).max() < 1e-12 * np.abs(raw).max()
    assert ours.model_.link == "softmax" and [t.output for t in ours.model_.trees[:3]] == [0, 1, 2]


@pytest.mark.parametrize("loss", ["squared_error", "absolute_error", "huber"])
def test_regression_rmse_within_three_percent_of_scikit_learn(friedman, loss):
    Xtr, Xte, ytr, yte = friedman
    ours = GradientBoostingRegressor(loss=loss, random_state=0).fit(Xtr, ytr)
    ref = ensemble.GradientBoostingRegressor(loss=loss, random_state=0).fit(Xtr, ytr)
    assert rmse(ours.predict(Xte), yte) <= 1.03 * rmse(ref.predict(Xte), yte)
    # the first round has no tie here: the same initial score, tree and line search (later
    # rounds of the absolute error, whose gradients are +-1, tie often)
    ours = GradientBoostingRegressor(loss=loss, n_estimators=1, random_state=0).fit(Xtr, ytr)
    ref = ensemble.GradientBoostingRegressor(loss=loss, n_estimators=1).fit(Xtr, ytr)
    assert np.abs(evaluate.raw_scores(ours.model_, Xte)[:, 0] - sk_raw(ref, Xte)[:, 0]).max() < 1e-9


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classification_accuracy_within_one_point_of_scikit_learn(n_classes):
    X, y = make_classification(n_samples=800, n_features=8, n_informative=5,
                               n_classes=n_classes, random_state=1)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, random_state=0)
    ours = GradientBoostingClassifier(n_estimators=60, random_state=0).fit(Xtr, ytr)
    ref = ensemble.GradientBoostingClassifier(n_estimators=60, random_state=0).fit(Xtr, ytr)
    ours_acc, ref_acc = (ours.predict(Xte) == yte).mean(), (ref.predict(Xte) == yte).mean()
    assert ours_acc >= ref_acc - 0.01, (ours_acc, ref_acc)


# --- the IR is the model ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["squared_error", "absolute_error", "huber", "binary", "multiclass"])
def test_every_loss_compiles_exactly_with_missing_and_categories(mixed, kind):
    X, y = mixed
    kw = {"n_estimators": 12, "max_depth": 3, "subsample": 0.8, "random_state": 0}
    if kind in ("binary", "multiclass"):
        labels = (y > 1).astype(int) if kind == "binary" else np.digitize(y, [0.5, 2.0])
        est = GradientBoostingClassifier(**kw)
        est.fit(X, np.array(["lo", "mid", "hi"])[labels], categorical_features=[3])
        assert np.allclose(est.predict_proba(X).sum(axis=1), 1.0)
    else:
        est = GradientBoostingRegressor(loss=kind, **kw).fit(X, y, categorical_features=[3])
    model = est.model_
    assert model.provenance.algorithm == "gradient_boosting"
    assert any(isinstance(nd, Split) and isinstance(nd.test, CategoricalTest)
               for t in model.trees for nd in t.nodes)
    # the training loss the loop tracked is the loss of the IR's own raw scores, bit for bit
    raw = evaluate.raw_scores(model, X)
    if kind in ("binary", "multiclass"):
        codes = np.searchsorted(est.classes_, np.array(["lo", "mid", "hi"])[labels])
        T = np.eye(len(est.classes_))[codes][:, 1:] if kind == "binary" else np.eye(3)[codes]
    else:
        T = y[:, None]
    assert est.loss_.value(T, raw, np.ones(len(X))) == est.train_score_[-1]
    assert_targets_exact(model, X[:40], n_random=20)


def test_thousand_tree_model_compiles_exactly(mixed):
    X, y = mixed
    est = GradientBoostingRegressor(n_estimators=1000, max_depth=1, learning_rate=0.05).fit(X, y)
    assert len(est.model_.trees) == 1000
    assert_targets_exact(est.model_, X[:20], n_random=10)


# --- subsampling, early stopping, progress ------------------------------------------------


def test_subsampling_is_seeded_and_uses_the_given_share(friedman):
    Xtr, _, ytr, _ = friedman
    a = GradientBoostingRegressor(n_estimators=5, subsample=0.5, random_state=7).fit(Xtr, ytr)
    b = GradientBoostingRegressor(n_estimators=5, subsample=0.5, random_state=7).fit(Xtr, ytr)
    c = GradientBoostingRegressor(n_estimators=5, subsample=0.5, random_state=8).fit(Xtr, ytr)
    assert serialize.dumps(a.model_) == serialize.dumps(b.model_)
    assert serialize.dumps(a.model_) != serialize.dumps(c.model_)
    assert {t.nodes[0].samples for t in a.model_.trees} == {float(len(Xtr) // 2)}


def test_early_stopping_stops_and_reports_progress():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + rng.normal(size=300)  # mostly noise: the validation loss turns quickly
    calls = []
    est = GradientBoostingRegressor(n_estimators=500, learning_rate=0.5, n_iter_no_change=5,
                                    random_state=0)
    est.fit(X, y, progress=lambda done, total: calls.append((done, total)))
    assert est.n_estimators_ < 500
    assert len(est.model_.trees) == est.n_estimators_ == len(est.validation_score_)
    best = est.best_iteration_
    assert est.n_estimators_ == best + 1 + 5  # five rounds without beating the best
    assert min(est.validation_score_[best + 1:]) > est.validation_score_[best] - 1e-4
    assert calls == [(i, 500) for i in range(1, est.n_estimators_ + 1)]
    # without n_iter_no_change every round runs, and nothing is printed
    est = GradientBoostingRegressor(n_estimators=7).fit(X, y)
    assert est.n_estimators_ == 7 and est.best_iteration_ is None


def test_integer_weights_act_as_repeated_rows(friedman):
    Xtr, Xte, ytr, _ = friedman
    X, y = Xtr[:120], ytr[:120]
    w = np.arange(120) % 3  # 0, 1 or 2 copies
    # (shallow trees: in small nodes, features that cut off the same row tie, and rounding of
    # the two sums decides the tie differently)
    weighted = GradientBoostingRegressor(n_estimators=5, max_depth=2, random_state=0).fit(X, y, sample_weight=w)
    rep = np.repeat(np.arange(120), w)
    repeated = GradientBoostingRegressor(n_estimators=5, max_depth=2, random_state=0).fit(X[rep], y[rep])
    a, b = (evaluate.raw_scores(m.model_, Xte) for m in (weighted, repeated))
    assert np.allclose(a, b, rtol=0, atol=1e-9)
    Xc, yc = X, (y > np.median(y)).astype(int)
    weighted = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0).fit(Xc, yc, sample_weight=w)
    repeated = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0).fit(Xc[rep], yc[rep])
    a, b = (evaluate.raw_scores(m.model_, Xte) for m in (weighted, repeated))
    assert np.allclose(a, b, rtol=0, atol=1e-9)


def test_validation_split_is_stratified_and_keeps_every_class():
    rng = np.random.default_rng(0)
    classes = np.array([0] * 50 + [1] * 30 + [2] * 1)
    train, val = validation_split(rng, len(classes), 0.2, classes)
    assert np.bincount(classes[val], minlength=3).tolist() == [10, 6, 0]
    assert sorted(np.concatenate([train, val]).tolist()) == list(range(81))


def test_bad_parameters_are_one_clear_error(friedman):
    Xtr, _, ytr, _ = friedman
    for est in (GradientBoostingRegressor(loss="log_loss"), GradientBoostingRegressor(subsample=0),
                GradientBoostingRegressor(learning_rate=-1), GradientBoostingRegressor(alpha=1.5),
                GradientBoostingClassifier(loss="squared_error")):
        with pytest.raises(LearnerError):
            est.fit(Xtr, ytr if isinstance(est, GradientBoostingRegressor) else ytr > 0.5)
