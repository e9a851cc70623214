"""xgboost_style's histogram mode (tree_method="approx") compiled (rulegen.learn.compiled.kernels_newton,
numba) against its numpy code: the same cuts, bins, node splits and models, bit for bit; bins
kept between trees only where the cuts did not change; leaves of the growing rows taken from
the builder agree with the evaluator's routing."""

from __future__ import annotations

import numpy as np
import pytest

from rulegen.ir import serialize
from rulegen.learn.compiled import kernels
from rulegen.learn.ensembles import newton, xgb
from rulegen.learn.ensembles.boosting import leaf_index
from rulegen.learn.ensembles.newton import NewtonSplitFinder, quantile_bins
from rulegen.learn.ensembles.xgb import XGBoostStyleClassifier, XGBoostStyleRegressor
from rulegen.learn.splits.builder import presort

pytest.importorskip("numba")

from kernelcheck import bits

pytestmark = pytest.mark.usefixtures("kernels_compiled")


def odd_data(seed, n=900, inf=True):
    """Ties, few distinct values, signed zeros, infinities (fit refuses them: the largest
    floats then), a constant column, a duplicated column (exact gain ties between features),
    missing values everywhere."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 9))
    X[:, 1] = np.round(X[:, 1] * 2)
    X[:, 2] = np.where(rng.random(n) < 0.4, 0.0, X[:, 2]) * np.where(rng.random(n) < 0.5, -1, 1)
    big = np.inf if inf else float(np.finfo(np.float32).max)
    X[rng.random(n) < 0.02, 3] = big
    X[rng.random(n) < 0.02, 3] = -big
    X[:, 4] = 1.5
    X[:, 8] = rng.integers(0, 6, n)
    X[rng.random((n, 9)) < 0.08] = np.nan
    X[:, 7] = X[:, 0]
    X[:, 5] = np.nan  # all missing
    y = (np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) + np.sin(np.nan_to_num(X[:, 8]))
         + rng.normal(size=n) * 0.3)
    return X, y


def hessians(rng, n, kind):
    if kind == "ones":
        return np.ones(n)
    if kind == "zero":
        return np.zeros(n)  # no mass: row-count quantiles
    if kind == "negative":  # the compiled pass refuses; numpy's binary search decides
        return rng.normal(size=n)
    h = rng.random(n) * rng.random(n)
    h[rng.random(n) < 0.1] = 0.0
    return h


@pytest.mark.parametrize("max_bin", [2, 5, 64, 256, 70000])
@pytest.mark.parametrize("kind", ["ones", "random", "zero", "negative"])
def test_quantile_bins_compiled_are_numpys(max_bin, kind, numpy_only):
    rng = np.random.default_rng(max_bin)
    X, _ = odd_data(max_bin % 7)
    XT = np.ascontiguousarray(X.astype(np.float32).T)
    order = presort(X.astype(np.float32))
    rows = np.sort(rng.choice(len(X), 700, replace=False))
    h = hessians(rng, len(X), kind)
    got = quantile_bins(XT, order, rows, h, max_bin)
    numpy_only()
    want = quantile_bins(XT, order, rows, h, max_bin)
    assert np.array_equal(got[0], want[0]) and got[0].dtype == want[0].dtype
    assert got[0].dtype == (np.uint16 if max_bin < 65536 else np.int32)
    for a, b in zip(got[1], want[1]):  # the cuts, signed zeros and all
        assert a.dtype == b.dtype == np.float32 and np.array_equal(bits(a), bits(b))
    assert sum(len(c) for c in want[1]) >= 6  # not vacuous


@pytest.mark.parametrize("jit", [True, False])
def test_bins_kept_from_the_last_tree_are_fresh_bins(jit, numpy_only):
    """quantile_bins(previous=...) rewrites only features whose cuts changed: the same bins
    and cuts as a fresh call, for the same, new and fewer rows and hessians."""
    if not jit:
        numpy_only()
    rng = np.random.default_rng(3)
    X, _ = odd_data(3)
    XT = np.ascontiguousarray(X.astype(np.float32).T)
    order = presort(X.astype(np.float32))
    n = len(X)
    prev = quantile_bins(XT, order, np.arange(n), np.ones(n), 16)
    for rows, h in [(np.arange(n), np.ones(n)), (np.arange(n), hessians(rng, n, "random")),
                    (np.sort(rng.choice(n, 200, replace=False)), np.ones(n)),
                    (np.arange(n), hessians(rng, n, "zero"))]:
        fresh = quantile_bins(XT, order, rows, h, 16)
        prev = quantile_bins(XT, order, rows, h, 16, prev)
        assert np.array_equal(prev[0], fresh[0])
        assert all(np.array_equal(bits(a), bits(b)) for a, b in zip(prev[1], fresh[1]))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("block", [1 << 18, 1500])
def test_a_node_gets_the_same_split_compiled_as_from_numpy(seed, block, monkeypatch, numpy_only):
    """Random nodes and hessians, lambda 0 or not: the compiled search chooses the same
    feature, cut and missing side with the same gain, and divides the rows alike. A small
    block makes numpy take the features a few at a time (the duplicated column in another
    block than its original): the compiled search follows its blocks' tie rules."""
    monkeypatch.setattr(newton, "_BLOCK", block)
    rng = np.random.default_rng(seed)
    X, _ = odd_data(seed)
    n = len(X)
    XT = np.ascontiguousarray(X.astype(np.float32).T)
    g = rng.normal(size=n) - 2.0 * np.nan_to_num(X[:, 0])  # the duplicated column's ties
    g[rng.random(n) < 0.1] = 0.0
    h = hessians(rng, n, "ones" if seed % 2 else "random")
    bins = quantile_bins(XT, presort(X.astype(np.float32)), np.arange(n), h, 8 << seed)
    cats = {8: 6} if seed == 3 else None
    kw = {"reg_lambda": float(seed % 2), "min_child_weight": [0.0, 1.0, 0.3, 5.0][seed],
          "features_at": lambda depth: np.arange(9), "bins": bins, "categorical": cats}
    found = 0
    for size in (30, 200, n):
        rows = np.sort(rng.choice(n, size, replace=False))
        finder = NewtonSplitFinder(XT, g, h, **kw)
        got = finder.find_split(finder.root(rows))
        with monkeypatch.context() as m:
            m.setattr(kernels, "ENABLED", False)
            finder = NewtonSplitFinder(XT, g, h, **kw)
            want = finder.find_split(finder.root(rows))
        assert (got is None) == (want is None)
        if got is None:
            continue
        found += 1
        assert got.test == want.test and got.missing == want.missing
        assert bits(got.improvement) == bits(want.improvement)
        for a, b in zip(got.children, want.children):
            assert np.array_equal(a.rows, b.rows) and a.state[1:] == b.state[1:]
    assert found >= 2


FITS = [
    (XGBoostStyleRegressor, {"n_estimators": 8}, "regression", {}),
    (XGBoostStyleRegressor, {"n_estimators": 6, "max_bin": 7, "subsample": 0.6,
                             "colsample_bylevel": 0.6, "random_state": 2}, "regression", {}),
    (XGBoostStyleClassifier, {"n_estimators": 6, "reg_lambda": 0.0, "min_child_weight": 0.0,
                              "gamma": 0.3}, "binary", {}),
    (XGBoostStyleClassifier, {"n_estimators": 4, "max_depth": 4}, "multiclass",
     {"categorical_features": [8]}),
    (XGBoostStyleRegressor, {"n_estimators": 5, "max_bin": 32}, "regression", {"weights": True}),
]


@pytest.mark.parametrize("cls, kw, kind, fit_kw", FITS)
def test_models_are_the_same_with_and_without_the_kernels(cls, kw, kind, fit_kw, numpy_only):
    X, y = odd_data(11, inf=False)
    if kind != "regression":
        y = (y > 0).astype(int) if kind == "binary" else np.digitize(y, [-1.0, 1.0])
    fit_kw = dict(fit_kw)
    if fit_kw.pop("weights", False):
        fit_kw["sample_weight"] = np.random.default_rng(0).integers(0, 3, len(y)).astype(float)
    est = cls(tree_method="approx", **kw).fit(X, y, **fit_kw)
    assert sum(len(t.nodes) for t in est.model_.trees) > 10 * len(est.model_.trees)
    compiled = serialize.dumps(est.model_)
    numpy_only()
    assert serialize.dumps(cls(tree_method="approx", **kw).fit(X, y, **fit_kw).model_) == compiled


@pytest.mark.parametrize("jit", [True, False])
def test_leaves_from_the_builder_are_the_evaluators(jit, monkeypatch, numpy_only):
    """The rows that grew a tree take their leaf from the finder's division, the others from
    the evaluator: every row's leaf is the one the IR's tests route it to."""
    if not jit:
        numpy_only()
    seen = []
    leaves = xgb._leaves

    def checked(tree, finder, X32, features):
        got = leaves(tree, finder, X32, features)
        assert np.array_equal(got, leaf_index(tree, X32, features))
        # the finder keeps the rows of its leaves only: at most every row once
        assert sum(len(r) for r in finder.node_rows if r is not None) <= len(X32)
        seen.append(len(tree.nodes))
        return got

    monkeypatch.setattr(xgb, "_leaves", checked)
    X, y = odd_data(5, inf=False)
    w = np.random.default_rng(1).integers(0, 2, len(y)).astype(float)  # zero weights too
    XGBoostStyleClassifier(tree_method="approx", n_estimators=3, subsample=0.7, max_bin=16,
                           random_state=0).fit(X, y > 0, sample_weight=w,
                                               categorical_features=[8])
    assert len(seen) == 3 and max(seen) > 9
