"""ID3: the notes' loan table and Quinlan's weather table, epsilon, one use of a feature per
path, missing and unseen routing, every target, a deep tree without recursion, bad input."""

from __future__ import annotations

import csv
import inspect
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from targetcheck import assert_targets_exact

from rulegen.errors import LearnerError
from rulegen.ir import evaluate
from rulegen.ir.nodes import DefaultChild, Leaf, MultiwayTest, Split
from rulegen.learn.trees.id3 import ID3Classifier

DATA = Path(__file__).resolve().parent / "data" / "id3"


def read_table(name):
    """(codes X, labels y, feature names, {column: labels}) of a categorical CSV; the labels
    of a column are its distinct cells, sorted (codes index them)."""
    with open(DATA / name, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    cols = list(zip(*body))
    labels = {j: tuple(sorted(set(cols[j]))) for j in range(len(header) - 1)}
    X = np.array([[labels[j].index(v) for j, v in enumerate(r[:-1])] for r in body], dtype=float)
    return X, np.array(cols[-1]), header[:-1], labels


def fit_table(name, **params):
    X, y, names, labels = read_table(name)
    est = ID3Classifier(**params).fit(X, y, feature_names=names, categorical_features=names,
                                      categories=labels)
    return est, X, y


def entropy(labels):
    _, counts = np.unique(labels, return_counts=True)
    p = counts / counts.sum()
    return -sum(q * math.log2(q) for q in p)


def gain(x, y):
    """Information gain written out as in the notes: H(D) - sum |D_v|/|D| H(D_v)."""
    return entropy(y) - sum((x == v).mean() * entropy(y[x == v]) for v in np.unique(x))


def child_by_label(model, nid, label):
    """The node a row whose tested feature has ``label`` reaches from split ``nid``."""
    node = model.trees[0].nodes[nid]
    code = model.features[node.test.feature].categories.index(label)
    (i,) = [i for i, g in enumerate(node.test.groups) if code in g]
    return node.children[i]


def feature_name(model, nid):
    return model.features[model.trees[0].nodes[nid].test.feature].name


# --- the textbook cases -------------------------------------------------------------------


def test_loan_table_from_the_notes():
    est, X, y = fit_table("loan.csv")
    m = est.model_
    nodes = m.trees[0].nodes
    # the notes' numbers: g(D, A) for age, has_job, has_house, credit at the root
    root = est.splits_[0]
    assert root["name"] == "has_house"
    assert root["gain"] == pytest.approx(0.420, abs=5e-4)
    for j, name in enumerate(["age", "has_job", "has_house", "credit"]):
        assert root["gains"][name] == pytest.approx(gain(X[:, j], y), abs=1e-12)
    assert [round(root["gains"][k], 3) for k in ("age", "has_job", "has_house", "credit")] == \
        [0.083, 0.324, 0.420, 0.363]
    no_house = child_by_label(m, 0, "0")
    assert feature_name(m, no_house) == "has_job"
    assert est.splits_[no_house]["gain"] == pytest.approx(0.918, abs=5e-4)
    sub = X[:, 2] == 0
    assert est.splits_[no_house]["gain"] == pytest.approx(gain(X[sub, 1], y[sub]), abs=1e-12)
    house = nodes[child_by_label(m, 0, "1")]
    assert isinstance(house, Leaf) and house.samples == 6 and house.value == (0.0, 1.0)
    assert len(nodes) == 5 and set(est.splits_) == {0, no_house}
    assert list(est.predict(X)) == list(y)  # the table is consistent; ID3 fits it exactly


def test_weather_gives_the_textbook_tree():
    est, X, y = fit_table("weather.nominal.csv")
    m = est.model_
    nodes = m.trees[0].nodes
    assert feature_name(m, 0) == "outlook"
    overcast = nodes[child_by_label(m, 0, "overcast")]
    assert isinstance(overcast, Leaf) and overcast.distribution == (0.0, 4.0)
    sunny, rainy = child_by_label(m, 0, "sunny"), child_by_label(m, 0, "rainy")
    assert feature_name(m, sunny) == "humidity" and feature_name(m, rainy) == "windy"
    leaf = {(s, v): nodes[child_by_label(m, s, v)] for s, v in
            [(sunny, "high"), (sunny, "normal"), (rainy, "FALSE"), (rainy, "TRUE")]}
    assert all(isinstance(v, Leaf) for v in leaf.values())
    assert leaf[sunny, "high"].distribution == (3.0, 0.0)  # classes ("no", "yes")
    assert leaf[sunny, "normal"].distribution == (0.0, 2.0)
    assert leaf[rainy, "FALSE"].distribution == (0.0, 3.0)
    assert leaf[rainy, "TRUE"].distribution == (2.0, 0.0)
    assert len(nodes) == 8
    assert est.splits_[0]["gain"] == pytest.approx(0.2467, abs=1e-4)  # Quinlan's 0.246 bits
    assert list(est.predict(X)) == list(y)
    assert m.provenance.algorithm == "id3" and dict(m.provenance.params)["epsilon"] == 0.0


def test_epsilon_stops_splitting():
    est, _, _ = fit_table("loan.csv", epsilon=0.43)  # the root's best gain is 0.41997
    assert len(est.model_.trees[0].nodes) == 1
    leaf = est.model_.trees[0].nodes[0]
    assert leaf.value == (0.4, 0.6) and leaf.samples == 15 and leaf.distribution == (6.0, 9.0)
    est, _, _ = fit_table("loan.csv", epsilon=0.41)
    assert len(est.splits_) == 2  # 0.420 and 0.918 both pass
    # a zero gain is below any positive epsilon: XOR gains nothing at the root
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3, dtype=float)
    y = (X[:, 0] != X[:, 1]).astype(int)
    assert len(ID3Classifier(epsilon=1e-9).fit(X, y, categorical_features=[0, 1])
               .model_.trees[0].nodes) == 1
    # with epsilon 0 (the default), "gain < epsilon" never holds: ID3 splits and solves XOR
    est = ID3Classifier().fit(X, y, categorical_features=[0, 1])
    assert est.splits_[0]["gain"] == 0.0 and list(est.predict(X)) == list(y)


def _paths(model):
    """Features tested on the path to each node, by a loop over ids (parents first)."""
    nodes = model.trees[0].nodes
    path = [()] * len(nodes)
    for i, nd in enumerate(nodes):
        if isinstance(nd, Split):
            for c in nd.children:
                path[c] = path[i] + (nd.test.feature,)
    return path


def test_a_feature_never_repeats_on_a_path():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, (400, 6)).astype(float)
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.integers(0, 2, 400)) % 3
    est = ID3Classifier().fit(X, y, categorical_features=list(range(6)))
    paths = _paths(est.model_)
    assert max(map(len, paths)) == 6  # noisy labels: some path uses every feature
    for p in paths:
        assert len(set(p)) == len(p)
    # a node whose features are all used up is a leaf, even if impure
    leaves = [nd for nd, p in zip(est.model_.trees[0].nodes, paths) if len(p) == 6]
    assert any(sum(v > 0 for v in nd.value) > 1 for nd in leaves)


def test_leaves_are_weighted_frequencies_and_predict_the_majority():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, (300, 3)).astype(float)
    y = rng.choice(["a", "b", "c"], 300)
    w = rng.uniform(0.2, 3.0, 300)
    est = ID3Classifier(max_depth=2).fit(X, y, sample_weight=w, categorical_features=[0, 1, 2])
    nodes = est.model_.trees[0].nodes
    assert est.get_depth() == 2
    for nd in nodes:
        assert nd.samples == pytest.approx(sum(nd.distribution))
        if isinstance(nd, Leaf):
            assert nd.value == pytest.approx(tuple(d / nd.samples for d in nd.distribution))
    # the root's distribution is the weighted class totals
    assert nodes[0].distribution == pytest.approx(
        tuple(w[y == c].sum() for c in ("a", "b", "c")))
    proba = est.predict_proba(X)
    assert np.array_equal(est.predict(X), np.array(["a", "b", "c"])[proba.argmax(axis=1)])
    # weights as duplicated rows: the same tree
    reps = rng.integers(1, 4, 300)
    a = ID3Classifier().fit(X, y, sample_weight=reps, categorical_features=[0, 1, 2]).model_
    b = ID3Classifier().fit(np.repeat(X, reps, axis=0), np.repeat(y, reps),
                            categorical_features=[0, 1, 2]).model_
    assert a.trees == b.trees


def test_missing_gets_its_own_branch_and_unseen_goes_to_the_largest_child():
    # feature 0 decides; its missing rows are all class 1; code 2 is rare
    X = np.array([[0]] * 10 + [[1]] * 6 + [[2]] * 2 + [[np.nan]] * 4, dtype=float)
    y = np.array([0] * 10 + [1] * 6 + [0] * 2 + [1] * 4)
    est = ID3Classifier().fit(X, y, categorical_features=[0], categories={0: ("a", "b", "c", "d")})
    root = est.model_.trees[0].nodes[0]
    assert root.test == MultiwayTest(0, ((0,), (1,), (2,), ()))
    assert root.missing == DefaultChild(3)  # the empty group: only missing values reach it
    assert root.unseen == 0  # the heaviest child holding categories (10 rows)
    nodes = est.model_.trees[0].nodes
    assert nodes[root.children[3]].distribution == (0.0, 4.0)
    probe = np.array([[np.nan], [3.0], [7.0], [-1.0], [2.0]])  # "d" was never seen; 7, -1 unknown
    assert list(est.predict(probe)) == [1, 0, 0, 0, 0]
    assert np.array_equal(est.predict_proba(probe)[1], np.array(nodes[root.children[0]].value))
    # no missing seen: a missing value goes to the heaviest child
    keep = ~np.isnan(X[:, 0])
    est = ID3Classifier().fit(X[keep], y[keep], categorical_features=[0])
    root = est.model_.trees[0].nodes[0]
    assert len(root.test.groups) == 3 and root.missing == DefaultChild(0)


def test_gain_counts_missing_as_a_value():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 2, 60).astype(float)
    y = rng.integers(0, 2, 60)
    x[y == 1] = np.where(rng.random((y == 1).sum()) < 0.5, np.nan, x[y == 1])
    est = ID3Classifier(max_depth=1).fit(x[:, None], y, categorical_features=[0])
    as_value = np.where(np.isnan(x), -1, x)
    assert est.splits_[0]["gain"] == pytest.approx(gain(as_value, y), abs=1e-12)


def test_every_target_agrees_with_the_evaluator():
    rng = np.random.default_rng(11)
    n = 300
    X = np.column_stack([rng.integers(0, 4, n), rng.integers(0, 3, n), rng.integers(0, 2, n),
                         rng.integers(0, 5, n)]).astype(float)
    X[rng.random(X.shape) < 0.12] = np.nan
    y = np.where(np.isnan(X[:, 0]), 2, (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1])) % 3)
    y = np.where(rng.random(n) < 0.1, rng.integers(0, 3, n), y).astype(int)
    cats = {0: ("north", "east", "south", "west"), 1: ("lo", "mid", "hi"), 2: (0, 1),
            3: ("a", "b", "c", "d", "e")}
    est = ID3Classifier().fit(X, np.array(["x", "y", "z"])[y], feature_names=["dir", "lvl", "flag", "k"],
                              categorical_features=[0, 1, 2, 3], categories=cats)
    m = est.model_
    assert est.get_depth() >= 3
    assert any(isinstance(nd, Split) and () in nd.test.groups for nd in m.trees[0].nodes)
    assert_targets_exact(m, X)


def _frame_depth():
    return len(inspect.stack(0))


def test_deep_tree_without_recursion():
    k = 250  # row i has only feature i set; the last row (class 1) has none: each split peels one row
    X = np.zeros((k + 1, k))
    X[np.arange(k), np.arange(k)] = 1
    y = np.r_[np.zeros(k, dtype=int), 1]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_frame_depth() + 120)  # far less than the tree's depth
    try:
        est = ID3Classifier().fit(X, y, categorical_features=list(range(k)))
        pred = est.predict(X)
    finally:
        sys.setrecursionlimit(limit)
    assert est.get_depth() == k
    assert np.array_equal(pred, y)
    assert [est.splits_[i]["feature"] for i in sorted(est.splits_)][:3] == [0, 1, 2]
    nodes = est.model_.trees[0].nodes
    assert np.array_equal(evaluate.predict_class_index(est.model_, X), y) and len(nodes) == 2 * k + 1


def test_numeric_features_are_refused_with_a_way_out():
    X = np.array([[0, 1.5], [1, 2.5], [0, 3.5], [1, 0.5]])
    with pytest.raises(LearnerError, match=r"'height' \(column 1\) is numeric") as err:
        ID3Classifier().fit(X, [0, 1, 0, 1], feature_names=["kind", "height"],
                            categorical_features=["kind"])
    msg = str(err.value)
    assert "categorical_features" in msg and "--categorical" in msg and "--ignore" in msg
    assert "c45" in msg and "cart" in msg
    # undeclared, a column of whole numbers >= 0 can only be codes; the others are refused
    with pytest.raises(LearnerError, match=r"but 'x1' \(column 1\) is numeric"):
        ID3Classifier().fit(X, [0, 1, 0, 1])
    with pytest.raises(LearnerError, match="'x0' .*'x1' .*are numeric"):
        ID3Classifier().fit(X, [0, 1, 0, 1], categorical_features=[])
    est = ID3Classifier().fit(X[:, :1], [0, 1, 0, 1])
    assert est.model_.features[0].kind == "categorical" and list(est.predict(X[:, :1])) == [0, 1, 0, 1]


@pytest.mark.parametrize("params,word", [
    ({"epsilon": -0.1}, "epsilon"), ({"epsilon": math.inf}, "epsilon"), ({"epsilon": "0"}, "epsilon"),
    ({"max_depth": 0}, "max_depth"), ({"max_depth": 1.5}, "max_depth"), ({"max_depth": True}, "max_depth"),
    ({"min_samples_split": 1}, "min_samples_split"), ({"min_samples_split": 2.0}, "min_samples_split"),
])
def test_bad_parameters(params, word):
    X = np.array([[0.0], [1.0]])
    with pytest.raises(LearnerError, match=f"{word}=.* is invalid: expected"):
        ID3Classifier(**params).fit(X, [0, 1], categorical_features=[0])


def test_params_and_bad_data():
    est = ID3Classifier(epsilon=0.1)
    assert est.get_params() == {"epsilon": 0.1, "max_depth": None, "min_samples_split": 2}
    assert repr(est) == "ID3Classifier(epsilon=0.1)"
    assert est.set_params(max_depth=3) is est and est.max_depth == 3
    with pytest.raises(LearnerError, match="no parameter 'depth'"):
        est.set_params(depth=3)
    with pytest.raises(LearnerError, match="not a category code"):
        ID3Classifier().fit(np.array([[0.5], [1.0]]), [0, 1], categorical_features=[0])
    with pytest.raises(LearnerError, match="not fitted"):
        ID3Classifier().predict(np.zeros((1, 1)))
