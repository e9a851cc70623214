"""CART grown by the forest's compiled grower (rulegen/learn/compiled/cart_kernels.py) is the tree the
numpy split finder grows, node for node, with the same node values, so pruning after growth
(ccp_alpha, its cross-validation) gives the same model too."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("numba")

from kernelcheck import counting

from rulegen.learn.compiled import cart_kernels
from rulegen.learn.ensembles import forest
from rulegen.learn.trees.cart import CARTClassifier, CARTRegressor


def data(seed, n, p, task, n_classes=3, n_outputs=1):
    """Numeric columns with NaN, ties, a constant column, signed zeros and huge values; a
    target of ``n_classes`` classes (quantiles of a score) or ``n_outputs`` outputs."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[:, 0] = np.round(X[:, 0] * 2) / 2  # many ties
    X[:, 1] = rng.integers(0, 3, n)
    if p > 3:
        X[:, 2] = -2.5  # constant
        X[:, 3] = np.where(rng.random(n) < 0.5, 0.0, -0.0) + np.round(X[:, 3])
    if p > 4:
        X[:, 4] *= 1e30
    X[rng.random((n, p)) < 0.1] = np.nan
    X[:, -1] = rng.normal(size=n)
    score = np.nan_to_num(X[:, 0]) + 0.7 * np.nan_to_num(X[:, 1]) - X[:, -1]
    score = score + 0.4 * rng.normal(size=n)
    if task == "classification":
        y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
        return X, y
    y = np.stack([score * 100.0 + rng.normal(size=n) * (k + 1) for k in range(n_outputs)], axis=1)
    return X, (y[:, 0] if n_outputs == 1 else y)


CASES = [  # (task, parameters, classes or outputs, weighted?)
    ("classification", {}, 3, False),
    ("classification", {"max_depth": 5}, 40, True),
    ("classification", {"max_depth": 6, "max_features": 2}, 200, False),
    ("classification", {"max_leaf_nodes": 9}, 25, True),
    ("classification", {"max_leaf_nodes": 20, "min_samples_leaf": 3}, 120, False),
    ("classification", {"min_samples_split": 12, "min_impurity_decrease": 0.002}, 7, True),
    ("classification", {"ccp_alpha": 0.004}, 30, True),
    ("classification", {"ccp_alpha": 0.01, "max_leaf_nodes": 15}, 5, False),
    ("classification", {"ccp_alpha": "cv", "cv_folds": 3, "max_depth": 6}, 10, False),
    ("classification", {"max_features": "sqrt", "min_samples_leaf": 2}, 2, False),
    ("regression", {}, 1, False),
    ("regression", {"max_depth": 4}, 3, True),
    ("regression", {"max_leaf_nodes": 11, "max_features": 0.5}, 1, True),
    ("regression", {"ccp_alpha": 5.0, "min_samples_leaf": 2}, 1, False),
    ("regression", {"ccp_alpha": "cv", "cv_folds": 3}, 2, True),
]


@pytest.fixture(autouse=True)
def _always_compiled(monkeypatch):
    """These trees are small: the kernel is asked for whatever their size."""
    monkeypatch.setattr(forest, "MIN_COMPILED_WORK", 0)


def fit_both(monkeypatch, cls, params, X, y, sw):
    """The same CART fitted with the kernel and without; asserts the kernel ran."""
    calls = counting(monkeypatch)
    compiled = cls(**params).fit(X, y, sample_weight=sw)
    assert calls, "the compiled grower did not run"
    n_calls = len(calls)
    monkeypatch.setattr(cart_kernels, "USE", False)
    plain = cls(**params).fit(X, y, sample_weight=sw)
    monkeypatch.setattr(cart_kernels, "USE", True)
    assert len(calls) == n_calls
    return compiled, plain


def assert_same(compiled, plain):
    assert compiled.model_ == plain.model_  # every node's every field, provenance too
    # node values as the builder hands them out (pruning reads them), to the bit
    assert compiled.node_values_ == plain.node_values_
    assert compiled.ccp_alpha_ == plain.ccp_alpha_
    if getattr(plain, "cv_results_", None) is not None:
        for f in dataclasses.fields(plain.cv_results_):  # the search, to the bit
            a, b = (np.asarray(getattr(r.cv_results_, f.name)) for r in (compiled, plain))
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), f.name


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("seed", [0, 1])
def test_same_trees_as_numpy(monkeypatch, case, seed):
    task, params, width, weighted = CASES[case]
    rng = np.random.default_rng(500 + 7 * case + seed)
    n = int(rng.integers(150, 600)) if width < 100 else 1500
    p = int(rng.integers(3, 8))
    X, y = data(seed * 37 + case, n, p, task, n_classes=width, n_outputs=width)
    sw = rng.choice([0.0, 0.5, 1.0, 2.25, 3.0], size=n) if weighted else None
    cls = CARTClassifier if task == "classification" else CARTRegressor
    compiled, plain = fit_both(monkeypatch, cls, {"random_state": seed, **params}, X, y, sw)
    assert_same(compiled, plain)
    assert len(compiled.model_.trees[0].nodes) > 1


def test_200_classes_fully_grown(monkeypatch):
    """Many classes and big nodes (the root is several of the kernel's blocks of rows)."""
    X, y = data(11, 1800, 6, "classification", n_classes=200)
    compiled, plain = fit_both(monkeypatch, CARTClassifier, {"random_state": 4}, X, y, None)
    assert_same(compiled, plain)
    assert len(compiled.model_.trees[0].nodes) > 600


def test_pruned_later_the_same(monkeypatch):
    """``pruning.prune(est, alpha)`` after the fit reads node_values_: the same either way."""
    from rulegen.learn.trees import pruning

    X, y = data(12, 400, 5, "classification", n_classes=12)
    compiled, plain = fit_both(monkeypatch, CARTClassifier, {"random_state": 1}, X, y, None)
    path = plain.cost_complexity_pruning_path(X, y)
    for alpha in path.ccp_alphas[1:-1:3]:
        assert pruning.prune(compiled, alpha) == pruning.prune(plain, alpha)


@pytest.mark.parametrize("params", [
    {"criterion": "entropy"},
    {"criterion": "absolute_error"},
    {"min_weight_fraction_leaf": 0.05},
    {"splitter": "random"},
    {"missing": "surrogate"},
])
def test_uncovered_cases_use_numpy(monkeypatch, params):
    regression = params.get("criterion") == "absolute_error"
    X, y = data(3, 120, 4, "regression" if regression else "classification")
    calls = counting(monkeypatch)
    (CARTRegressor if regression else CARTClassifier)(random_state=0, **params).fit(X, y)
    assert calls == []


def test_categorical_columns_use_numpy(monkeypatch):
    X, y = data(4, 120, 4, "classification")
    X[:, 1] = np.nan_to_num(X[:, 1])
    calls = counting(monkeypatch)
    CARTClassifier(random_state=0).fit(X, y, categorical_features=[1])
    assert calls == []


def test_small_trees_do_not_load_numba(monkeypatch):
    """Below the forest's MIN_COMPILED_WORK (rows, for one tree) the numpy finder grows it."""
    monkeypatch.undo()
    assert forest.MIN_COMPILED_WORK > 1000
    X, y = data(5, 1000, 4, "classification")
    calls = counting(monkeypatch)
    CARTClassifier(random_state=0).fit(X, y)
    assert calls == []
    monkeypatch.setattr(forest, "MIN_COMPILED_WORK", 1000)
    CARTClassifier(random_state=0).fit(X, y)
    assert calls == [1]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("seed", range(16))
def test_adversarial_values(monkeypatch, seed):
    """Signed zeros, subnormals, values a float step apart, huge and tiny scales, NaN, weights
    from 0 to 1e10, up to 60 classes: the same trees and node values."""
    rng = np.random.default_rng(900 + seed)
    n, p = int(rng.integers(20, 300)), int(rng.integers(1, 6))
    X = rng.normal(size=(n, p)) * 10.0 ** rng.integers(-40, 36, size=p)
    specials = np.array([0.0, -0.0, 1e-45, -1e-45, 3.4e38, np.nan, 1e-7, 1.00000001,
                         float(np.nextafter(np.float32(1.0), np.float32(2.0)))])
    X = np.where(rng.random((n, p)) < 0.2, rng.choice(specials, size=(n, p)), X)
    sw = rng.choice([0.0, 1e-30, 0.5, 1.0, 7.0, 1e10], size=n) if seed % 2 else None
    params = {"random_state": seed, "min_samples_leaf": int(rng.integers(1, 4)),
              "max_features": int(rng.integers(1, p + 1)),
              "max_leaf_nodes": int(rng.integers(2, 30)) if seed % 3 == 0 else None,
              "max_depth": int(rng.integers(1, 8)) if seed % 4 == 1 else None}
    y = rng.integers(0, int(rng.integers(2, 60)), n)
    yr = rng.normal(size=n) * 10.0 ** rng.integers(-5, 5)
    for cls, target in ((CARTClassifier, y), (CARTRegressor, yr)):
        compiled, plain = fit_both(monkeypatch, cls, params, X, target, sw)
        assert_same(compiled, plain)
