"""CART on categorical features: subset splits, missing and unseen categories, and the CLI
through every target."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from targetcheck import assert_targets_exact

import rulegen
from rulegen.cli import main
from rulegen.errors import LearnerError
from rulegen.ir import evaluate
from rulegen.ir.nodes import CategoricalTest, DefaultChild, Split
from rulegen.learn import CARTClassifier, CARTRegressor
from rulegen.learn.splits.criteria import Gini, SquaredError
from rulegen.modelio import load_model


def _brute_force(crit, T, w, codes, m):
    """Smallest weighted child impurity over every subset split of the m categories."""
    rows = np.arange(len(codes))
    best = math.inf
    for k in range(1, m):
        for subset in itertools.combinations(range(1, m), k - 1):
            left = np.isin(codes, (0,) + subset)
            if left.all() or not left.any():
                continue
            sl, sr = crit.stats(T, w, rows[left]), crit.stats(T, w, rows[~left])
            best = min(best, sl.weight * sl.impurity + sr.weight * sr.impurity)
    return best


def _root_children_cost(crit, T, w, model, X):
    root = model.trees[0].nodes[0]
    assert isinstance(root, Split) and isinstance(root.test, CategoricalTest)
    left = np.isin(X[:, root.test.feature], root.test.categories)
    rows = np.arange(len(X))
    sl, sr = crit.stats(T, w, rows[left]), crit.stats(T, w, rows[~left])
    return sl.weight * sl.impurity + sr.weight * sr.impurity


@pytest.mark.parametrize("m", [3, 5, 6])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_subset_is_optimal(m, seed):
    rng = np.random.default_rng(seed)
    n = 400
    c = rng.integers(0, m, n)
    p = rng.random(m)  # a different class-1 rate per category
    y = (rng.random(n) < p[c]).astype(np.int64)
    noise = rng.normal(size=n)  # a useless numeric feature beside it
    X = np.column_stack([noise, c.astype(float)])
    w = rng.uniform(0.5, 2.0, n)
    model = CARTClassifier(max_depth=1).fit(X, y, sample_weight=w,
                                                    categorical_features=[1]).model_
    crit = Gini(2)
    got = _root_children_cost(crit, y, w, model, X)  # asserts the root is categorical
    assert got == pytest.approx(_brute_force(crit, y, w, c, m), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_regression_subset_is_optimal(seed):
    rng = np.random.default_rng(seed)
    m, n = 6, 300
    c = rng.integers(0, m, n)
    y = rng.normal(size=m)[c] * 3 + rng.normal(size=n)
    X = c.astype(float)[:, None]
    model = CARTRegressor(max_depth=1).fit(X, y, categorical_features=[0]).model_
    crit = SquaredError(1)
    T, w = y[:, None], np.ones(n)
    got = _root_children_cost(crit, T, w, model, X)
    assert got == pytest.approx(_brute_force(crit, T, w, c, m), rel=1e-12, abs=1e-9)


def test_categorical_feature_in_the_ir():
    X = np.array([[0.0], [1.0], [2.0], [0.0], [1.0], [2.0]])
    y = [0, 1, 0, 0, 1, 0]
    model = CARTClassifier().fit(X, y, feature_names=["colour"],
                                         categorical_features=["colour"],
                                         categories={"colour": ("blue", "green", "red")}).model_
    assert model.features[0].kind == "categorical"
    assert model.features[0].categories == ("blue", "green", "red")
    root = model.trees[0].nodes[0]
    assert isinstance(root.test, CategoricalTest)
    left = set(root.test.categories)
    assert left in ({1}, {0, 2})
    assert (evaluate.predict_class_index(model, X) == y).all()


def test_three_classes():
    rng = np.random.default_rng(5)
    n, m = 600, 6
    c = rng.integers(0, m, n)
    cls_of = np.array([0, 1, 2, 0, 1, 2])
    y = np.where(rng.random(n) < 0.85, cls_of[c], rng.integers(0, 3, n))
    X = np.column_stack([rng.normal(size=n), c.astype(float)])
    clf = CARTClassifier(max_depth=3).fit(X, y, categorical_features=[1])
    rulegen.validate(clf.model_)
    assert (clf.predict(X) == y).mean() > 0.8
    assert any(isinstance(nd, Split) and isinstance(nd.test, CategoricalTest)
               for nd in clf.model_.trees[0].nodes)


def test_missing_and_unseen_at_prediction():
    rng = np.random.default_rng(7)
    n = 300
    c = rng.integers(0, 4, n).astype(float)
    y = (c >= 2).astype(int)
    c[rng.random(n) < 0.1] = np.nan
    X = c[:, None]
    model = CARTClassifier(max_depth=1).fit(X, y, categorical_features=[0],
                                                    categories={0: tuple("abcdef")}).model_
    root = model.trees[0].nodes[0]
    assert isinstance(root.test, CategoricalTest) and isinstance(root.missing, DefaultChild)
    sizes = [model.trees[0].nodes[ch].samples for ch in root.children]
    bigger = 0 if sizes[0] > sizes[1] else 1
    assert root.unseen == bigger
    # codes 4 and 5 are listed but never seen in training; 99 and -1 are outside the list
    probe = np.array([[4.0], [5.0], [99.0], [-1.0], [np.nan]])
    proba = evaluate.predict_proba(model, probe)
    big = model.trees[0].nodes[root.children[bigger]]
    for i in range(4):
        assert tuple(proba[i]) == pytest.approx(big.value)
    miss = model.trees[0].nodes[root.children[root.missing.child]]
    assert tuple(proba[4]) == pytest.approx(miss.value)


def test_no_missing_at_node_sends_missing_to_the_bigger_child():
    c = np.array([0, 0, 0, 0, 1, 1, 2, 2], dtype=float)
    y = [0, 0, 0, 0, 1, 1, 1, 1]
    model = CARTClassifier(max_depth=1).fit(c[:, None], y, categorical_features=[0]).model_
    root = model.trees[0].nodes[0]
    assert set(root.test.categories) == {0}  # the bigger side; ties go right
    assert root.missing == DefaultChild(1) and root.unseen == 1


def test_bad_codes_are_refused():
    with pytest.raises(LearnerError, match="not a category code"):
        CARTClassifier().fit([[0.5], [1.0]], [0, 1], categorical_features=[0])
    with pytest.raises(LearnerError, match="only 2 categories"):
        CARTClassifier().fit([[0.0], [2.0]], [0, 1], categorical_features=[0],
                                     categories={0: ("a", "b")})
    with pytest.raises(LearnerError, match="feature name"):
        CARTClassifier().fit([[0.0], [1.0]], [0, 1], categorical_features=["nope"])


# --- end to end: CSV -> rulegen fit -> every target ---------------------------------------------


def _csv(tmp_path, task):
    rng = np.random.default_rng(11)
    colours = ["red", "green", "blue", "black", "white"]
    lines = ["size,colour,grade,y"]
    for i in range(200):
        col = colours[rng.integers(0, 5)]
        size = rng.normal()
        grade = int(rng.integers(1, 4))
        score = {"red": 2.0, "green": -1.0, "blue": 1.5, "black": 0.0, "white": -2.0}[col]
        score += size + (grade == 2)
        cells = [f"{size:.3f}", col, str(grade)]
        if i % 13 == 0:
            cells[1] = ""
        if i % 17 == 0:
            cells[0] = ""
        if task == "classification":
            target = "hi" if score + rng.normal() * 0.3 > 0.5 else "lo"
        else:
            target = f"{score + rng.normal() * 0.1:.4f}"
        lines.append(",".join(cells + [target]))
    path = tmp_path / f"{task}.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_cli_fit_to_every_target(tmp_path, capsys, task):
    data = _csv(tmp_path, task)
    out = tmp_path / "m.json"
    code = main(["fit", str(data), "--target", "y", "--categorical", "grade",
                 "--param", "max_depth=4", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    model = load_model(out)
    kinds = {f.name: (f.kind, f.categories) for f in model.features}
    assert kinds["size"] == ("numeric", ())
    assert kinds["colour"] == ("categorical", ("black", "blue", "green", "red", "white"))
    assert kinds["grade"] == ("categorical", (1, 2, 3))
    assert any(isinstance(nd, Split) and isinstance(nd.test, CategoricalTest)
               for nd in model.trees[0].nodes)
    # training-like rows, plus missing, listed and unseen codes for each categorical feature
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(size=60), rng.integers(0, 5, 60).astype(float),
                         rng.integers(0, 3, 60).astype(float)])
    extra = np.array([[0.1, np.nan, 0.0], [0.2, 7.0, 1.0], [np.nan, 2.0, 9.0],
                      [-1.0, 3.0, np.nan], [0.0, -1.0, -1.0]])
    X = np.vstack([X, extra])
    assert_targets_exact(model, X)  # adds rows on and around every threshold, far unseen codes
