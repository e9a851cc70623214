"""AdaBoost (SAMME): the weights by hand, the IR's vote against a direct numpy sum, scikit-learn,
and every target."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.model_selection import StratifiedKFold
from targetcheck import assert_targets_exact

from rulegen.errors import LearnerError
from rulegen.ir import evaluate, serialize
from rulegen.ir.nodes import CategoricalTest, Leaf, NumericTest, Split
from rulegen.learn.ensembles.adaboost import AdaBoostClassifier

# x = 0..5 with classes 0,0,0,1,1,2: every round's best stump (gini) is unique, see below
TINY_X = np.arange(6.0).reshape(-1, 1)
TINY_Y = np.array([0, 0, 0, 1, 1, 2])


def test_samme_weights_by_hand():
    """Round 1 (weights 1/6 each): x <= 2.5 leaves {0,0,0} | {1,1,2}, missing x=5:
    err = 1/6, alpha = log(5) + log(K-1) = log 10; x=5's weight grows 10x -> [1,1,1,1,1,10]/15.
    Round 2: x <= 4.5 leaves {0,0,0,1,1} (class 0) | {2}, missing x=3, x=4: err = 2/15,
    alpha = log(13/2) + log 2 = log 13; weights -> [1,1,1,13,13,10]/39.
    Round 3: x <= 4.5 again, now {0,0,0,1,1} votes class 1 (weight 26 vs 3): err = 3/39,
    alpha = log(12) + log 2 = log 24. The three votes then classify every row correctly."""
    ada = AdaBoostClassifier(n_estimators=3).fit(TINY_X, TINY_Y)
    assert ada.estimator_errors_ == pytest.approx([1 / 6, 2 / 15, 3 / 39], rel=1e-12)
    assert ada.estimator_weights_ == pytest.approx([math.log(10), math.log(13), math.log(24)],
                                                   rel=1e-12)
    roots = [t.nodes[0] for t in ada.model_.trees]
    assert [r.test.threshold for r in roots] == [2.5, 4.5, 4.5]
    votes = [[int(np.argmax(t.nodes[c].value)) for c in r.children]
             for t, r in zip(ada.model_.trees, roots)]
    assert votes == [[0, 1], [0, 2], [1, 2]]
    assert np.array_equal(ada.predict(TINY_X), TINY_Y)
    # after two rounds x=3 and x=4 are still outvoted: log 13 (class 0) > log 10 (class 1)
    two = AdaBoostClassifier(n_estimators=2).fit(TINY_X, TINY_Y)
    assert list(two.predict(TINY_X)) == [0, 0, 0, 0, 0, 2]


def test_learning_rate_scales_alpha_and_the_reweighting():
    ada = AdaBoostClassifier(n_estimators=2, learning_rate=0.5).fit(TINY_X, TINY_Y)
    a1 = 0.5 * math.log(10)
    # x=5 grows by exp(a1) = sqrt(10); round 2 still picks x <= 4.5, missing x=3 and x=4
    err2 = 2 / (5 + math.exp(a1))
    assert ada.estimator_weights_[0] == pytest.approx(a1, rel=1e-12)
    assert ada.estimator_errors_[1] == pytest.approx(err2, rel=1e-12)
    assert ada.estimator_weights_[1] == pytest.approx(
        0.5 * (math.log((1 - err2) / err2) + math.log(2)), rel=1e-12)


def test_early_stops_as_sklearn():
    # a perfect first stump: kept with weight 1, no further rounds
    X, y = np.arange(4.0).reshape(-1, 1), np.array([0, 0, 1, 1])
    ada = AdaBoostClassifier(10).fit(X, y)
    sk = ensemble.AdaBoostClassifier(n_estimators=10).fit(X, y)
    assert list(ada.estimator_weights_) == [1.0] == list(sk.estimator_weights_[:1])
    assert ada.n_estimators_ == 1 == len(sk.estimators_)
    # no split possible: round 1 errs on 1/3 (alpha = log 2), round 2 sees the classes
    # balanced up to rounding (err = 1/2 - 1 ulp, alpha ~ 2e-16), round 3's tree is no
    # better than guessing: dropped, and boosting stops -- as in scikit-learn
    X, y = np.zeros((3, 1)), np.array([0, 0, 1])
    ada = AdaBoostClassifier(10).fit(X, y)
    sk = ensemble.AdaBoostClassifier(n_estimators=10).fit(X, y)
    assert ada.n_estimators_ == 2 == len(sk.estimators_)
    assert np.array_equal(ada.estimator_weights_, sk.estimator_weights_[:2])
    assert ada.estimator_weights_[0] == pytest.approx(math.log(2))
    # a first tree no better than guessing cannot start the ensemble
    with pytest.raises(LearnerError, match="no better than guessing"):
        AdaBoostClassifier(5).fit(np.zeros((4, 1)), [0, 1, 0, 1])


@pytest.mark.parametrize("loader", [load_iris, load_breast_cancer])
def test_ir_vote_equals_direct_numpy_sum(loader):
    X, y = loader(return_X_y=True)
    ada = AdaBoostClassifier(30, random_state=0).fit(X, y)
    model = ada.model_
    assert model.aggregation == "vote" and model.provenance.algorithm == "adaboost"
    K = len(ada.classes_)
    D = np.zeros((len(X), K))
    for tree, alpha in zip(model.trees, ada.estimator_weights_):
        assert tree.weight == alpha and tree.output is None
        root = tree.nodes[0]
        t = root.test
        assert isinstance(t, NumericTest) and t.dtype == "float32"  # stumps
        x = X[:, t.feature].astype(np.float32)
        holds = x <= np.float32(t.threshold) if t.op == "<=" else x < np.float32(t.threshold)
        cls = [int(np.argmax(tree.nodes[c].value)) for c in root.children]
        assert all(isinstance(tree.nodes[c], Leaf) for c in root.children)
        h = np.where(holds, cls[0], cls[1])
        D[np.arange(len(X)), h] += alpha  # in round order, as the IR adds
    want = D[:, 1] - D[:, 0] if K == 2 else D  # two classes: scikit-learn's (n,) shape
    assert np.array_equal(ada.decision_function(X), want)
    assert np.array_equal(ada.predict(X), ada.classes_[np.argmax(D, axis=1)])
    total = 0.0
    for a in ada.estimator_weights_:
        total = total + a
    assert np.array_equal(ada.predict_proba(X), D / total)
    assert np.array_equal(evaluate.raw_scores(model, X), D / total)


def test_weights_equal_sklearn_on_iris():
    X, y = load_iris(return_X_y=True)
    ours = AdaBoostClassifier(10, random_state=0).fit(X, y)
    ref = ensemble.AdaBoostClassifier(n_estimators=10, random_state=0).fit(X, y)
    assert np.allclose(ours.estimator_weights_, ref.estimator_weights_, rtol=1e-12, atol=0)
    assert np.allclose(ours.estimator_errors_, ref.estimator_errors_, rtol=1e-12, atol=0)
    assert np.array_equal(ours.predict(X), ref.predict(X))


@pytest.mark.parametrize("loader", [load_breast_cancer, load_wine])
def test_accuracy_matches_sklearn(loader):
    X, y = loader(return_X_y=True)
    ours, ref = [], []
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        ours.append(np.mean(AdaBoostClassifier(50, random_state=0).fit(X[tr], y[tr]).predict(X[te]) == y[te]))
        sk = ensemble.AdaBoostClassifier(n_estimators=50, random_state=0).fit(X[tr], y[tr])
        ref.append(sk.score(X[te], y[te]))
    assert abs(np.mean(ours) - np.mean(ref)) <= 0.01, (np.mean(ours), np.mean(ref))


def test_progress_importances_and_parameters():
    X, y = load_iris(return_X_y=True)
    calls = []
    ada = AdaBoostClassifier(5, max_depth=2, random_state=0).fit(X, y, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(i, 5) for i in range(1, 6)]
    assert ada.feature_importances_.sum() == pytest.approx(1.0)
    assert np.argmax(ada.feature_importances_) == 2  # petal length
    assert ada.feature_importances_[2:].sum() > 0.6
    # stumps: each tree credits its one feature, weighted by its alpha
    stumps = AdaBoostClassifier(10, random_state=0).fit(X, y)
    want = np.zeros(4)
    for tree in stumps.model_.trees:
        want[tree.nodes[0].test.feature] += tree.weight
    assert np.allclose(stumps.feature_importances_, want / want.sum(), rtol=0, atol=1e-12)
    for bad in ({"n_estimators": 0}, {"learning_rate": 0.0}, {"max_depth": 0},
                {"criterion": "squared_error"}):
        with pytest.raises(LearnerError, match=next(iter(bad))):
            AdaBoostClassifier(**bad).fit(X, y)


def _mixed(n, n_classes, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [1.0, 2.0, 0.5, 1.0]
    X[:, 3] = rng.integers(0, 4, n)  # category codes
    score = X[:, 0] - 0.5 * X[:, 1] + np.where(np.isin(X[:, 3], [1, 3]), 1.0, -0.5)
    X[rng.random(X.shape) < 0.1] = np.nan
    edges = [0.0] if n_classes == 2 else [-0.7, 0.7]
    labels = np.array(["no", "yes"] if n_classes == 2 else ["lo", "mid", "hi"])
    return X, labels[np.digitize(score + 0.4 * rng.normal(size=n), edges)]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_compiles_exactly(n_classes):
    X, y = _mixed(200, n_classes, seed=n_classes)
    ada = AdaBoostClassifier(12, max_depth=2, random_state=0).fit(
        X, y, categorical_features=[3], categories={3: ["red", "green", "blue", "grey"]})
    assert ada.n_estimators_ == 12
    assert any(isinstance(nd, Split) and isinstance(nd.test, CategoricalTest)
               for t in ada.model_.trees for nd in t.nodes)
    assert_targets_exact(ada.model_, X[:40])
    assert serialize.loads(serialize.dumps(ada.model_)) == ada.model_
