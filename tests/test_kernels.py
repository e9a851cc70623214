"""The compiled kernels (rulegen.learn.compiled.kernels, numba) against the numpy code they replace:
histogram boosting's splits, histograms and row divisions, the exact Newton split search of
xgboost_style and the division of presorted orders -- the same results and models, bit for
bit.

The test extra installs numba, so CI runs both paths; without numba these tests cannot run
(and conftest fails a skip under CI)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from rulegen.ir import serialize
from rulegen.learn.compiled import kernels
from rulegen.learn.ensembles.forest import RandomForestClassifier
from rulegen.learn.ensembles.gbdt import GradientBoostingRegressor
from rulegen.learn.ensembles.lgbm import LightGBMStyleClassifier, LightGBMStyleRegressor
from rulegen.learn.ensembles.newton import NewtonSplitFinder
from rulegen.learn.ensembles.xgb import XGBoostStyleClassifier, XGBoostStyleRegressor
from rulegen.learn.splits import binning
from rulegen.learn.splits.binning import Layout, bin_features, build_histograms
from rulegen.learn.splits.builder import presort, split_presorted
from rulegen.learn.splits.histogram import HistogramSplitFinder, _left_sums
from rulegen.learn.splits.histogram_scan import SplitParams

pytest.importorskip("numba")

from kernelcheck import bits

pytestmark = pytest.mark.usefixtures("kernels_compiled")


def mixed_data(seed, n=700, n_cat=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[:, 1] = np.round(X[:, 1] * 2)  # few distinct values: runs of empty bins at nodes
    X[:, 3] = rng.integers(0, n_cat, n)  # many categories: the sorted scan
    X[:, 4] = rng.integers(0, 3, n)  # few: one category against the rest
    X[rng.random((n, 6)) < 0.08] = np.nan
    y = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) + np.sin(np.nan_to_num(X[:, 3])) + rng.normal(size=n)
    return X, y


# --- the search of a batch of nodes ----------------------------------------------------------

PARAMS = [
    SplitParams(),
    SplitParams(min_child_samples=1, min_child_weight=0.0, reg_lambda=0.0, cat_smooth=0.0,
                cat_l2=0.0, min_data_per_group=0, max_cat_threshold=64),
    SplitParams(min_child_samples=5, min_child_weight=0.5, reg_lambda=3.0, cat_smooth=2.0,
                min_data_per_group=7, max_cat_threshold=3, max_cat_to_onehot=8),
    SplitParams(min_child_samples=15, min_split_gain=0.5, max_cat_to_onehot=64),
    # categories of a few rows each against min_data_per_group: the rule's running count
    # (reset at each candidate) decides which cuts are candidates
    SplitParams(min_child_samples=2, cat_smooth=1.0, min_data_per_group=25,
                max_cat_threshold=32),
]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", range(len(PARAMS)))
def test_a_batch_gets_the_same_splits_and_gains_compiled_as_from_numpy(seed, k):
    """Random nodes (subsets of rows) of random data, varying hessians (LightGBM's
    estimated counts) or constant ones, some features unusable: the compiled search and the
    numpy scans choose the same feature, gain, cut or set and missing side, bit for bit."""
    rng = np.random.default_rng(100 * k + seed)
    X, _ = mixed_data(seed)
    n = len(X)
    bins = bin_features(X.astype(np.float32), {3: 40, 4: 3}, max_bin=int(rng.choice([8, 64])))
    g = rng.normal(size=n)
    # tiny hessians: LightGBM's estimated counts round bins to none (not with k = 2's
    # min_child_weight, which would then refuse every split)
    h = np.ones(n) if seed % 2 else rng.random(n) * (1e-3 if seed % 4 == 0 and k != 2 else 1.0)
    feats = np.arange(X.shape[1])
    finder = HistogramSplitFinder(bins, feats, g, h, np.ones(n), PARAMS[k])
    nodes = [np.sort(rng.choice(n, rng.integers(30, n), replace=False)) for _ in range(9)]
    hist = build_histograms(bins.codes, feats, nodes, g, h, finder.layout, finder.h_const)
    S = len(nodes)
    G = np.array([g[r].sum() for r in nodes])
    H = np.array([h[r].sum() for r in nodes])
    C = np.array([float(len(r)) for r in nodes])
    estimated = np.zeros(S, dtype=bool) if finder.h_const is not None else H > 0
    ratio = np.divide(C, H, out=np.zeros(S), where=estimated)
    usable = rng.random((S, len(feats))) < 0.85
    g1, g2 = (np.full((S, len(feats)), -np.inf) for _ in range(2))
    want = finder.search.numpy(hist, G, H, C, estimated, ratio, usable, g1)
    got = finder.search.compiled(hist, G, H, C, estimated, ratio, usable, g2)
    assert np.array_equal(bits(g1), bits(g2))
    assert [s for s, _ in got] == [s for s, _ in want]
    assert len(want) >= 3  # the case is not vacuous
    for (_, a), (_, b) in zip(want, got):
        assert a[0] == b[0] and bits(a[1]) == bits(b[1]) and a[3] == b[3]
        assert np.array_equal(np.asarray(a[2]), np.asarray(b[2]))


# --- histograms and row division -------------------------------------------------------------


def test_histograms_are_numpys_bincounts_bit_for_bit(numpy_only):
    rng = np.random.default_rng(7)
    n_bins = np.array([16, 3, 9, 300])
    codes = (rng.random((4, 900)) * (n_bins[:, None] + 1)).astype(np.uint16)
    g, h = rng.normal(size=900), rng.random(900)
    layout = Layout(n_bins, np.zeros(4, dtype=bool))
    rows = [np.sort(rng.choice(900, m, replace=False)) for m in (5, 200, 900)]
    for h_const in (None, 0.25):
        hh = np.full(900, 0.25) if h_const else h
        counts = build_histograms(codes, np.arange(4), rows, g, hh, layout, h_const)[2]
        compiled = [build_histograms(codes, np.arange(4), rows, g, hh, layout, h_const),
                    build_histograms(codes, np.arange(4), rows, g, hh, layout, h_const, counts)]
        numpy_only()
        for small in (0, 1 << 30):  # numpy's two ways: one bincount per feature, or one
            binning.SMALL_BLOCK, old = small, binning.SMALL_BLOCK
            try:
                want = build_histograms(codes, np.arange(4), rows, g, hh, layout, h_const)
            finally:
                binning.SMALL_BLOCK = old
            for got in compiled:
                assert np.array_equal(bits(got), bits(want))
        kernels.ENABLED = True  # (the fixture restores it)


def test_a_split_divides_rows_in_order_and_sums_its_left_bins_from_zero():
    rng = np.random.default_rng(8)
    codes = rng.integers(0, 11, size=(2, 500)).astype(np.uint8)
    rows = np.sort(rng.choice(500, 321, replace=False))
    hist = rng.normal(size=(3, 30))
    hist[0, 5] = -0.0
    for table in (np.arange(11) <= 4, rng.random(11) < 0.5, np.zeros(11, dtype=bool),
                  np.eye(11, dtype=bool)[5]):
        out, n_left, GL, HL = kernels.divide(codes, 1, rows, table, hist, 3)
        left = table[codes[1, rows]]
        assert np.array_equal(out[:n_left], rows[left])
        assert np.array_equal(out[n_left:], rows[~left])
        want = _left_sums(hist[:2, 3:14], table)
        assert bits(GL) == bits(want[0]) and bits(HL) == bits(want[1])


# --- whole models --------------------------------------------------------------------------

FITS = [
    ("regression", {}),
    ("regression", {"reg_lambda": 2.0, "min_child_samples": 3, "max_bin": 16}),
    ("binary", {}),
    ("binary", {"min_child_weight": 0.0, "cat_smooth": 0.0, "min_data_per_group": 0}),
    ("multiclass", {"num_leaves": 8}),
    ("regression", {"subsample": 0.7, "colsample_bytree": 0.6,
                    "random_state": 3}),
    ("weighted", {"max_cat_to_onehot": 50}),
]


@pytest.mark.parametrize("kind, kw", FITS)
def test_models_are_the_same_with_and_without_the_kernels(kind, kw, numpy_only):
    X, y = mixed_data(11, n=900)
    fit = {"categorical_features": [3, 4]}
    if kind in ("regression", "weighted"):
        est = LightGBMStyleRegressor(n_estimators=12, **kw)
        if kind == "weighted":
            fit["sample_weight"] = np.random.default_rng(1).random(len(y)) * 3
    else:
        est = LightGBMStyleClassifier(n_estimators=12, **kw)
        y = (y > 0).astype(int) if kind == "binary" else np.digitize(y, [-1.0, 1.0])
    compiled = serialize.dumps(est.fit(X, y, **fit).model_)
    numpy_only()
    assert serialize.dumps(est.fit(X, y, **fit).model_) == compiled
    assert len(compiled) > 5000  # real trees


def test_odd_data_gets_the_same_model_with_and_without_the_kernels(numpy_only):
    """Codes past uint8 (300 categories), a column with no value at all, one that never
    varies, a single row per category, zero weights, a tiny set."""
    rng = np.random.default_rng(4)
    n = 1200
    X = np.column_stack([rng.integers(0, 300, n), np.full(n, np.nan), np.full(n, 2.5),
                         rng.normal(size=n), rng.integers(0, n, n)]).astype(float)
    X[rng.random(n) < 0.2, 3] = np.nan
    y = (np.sin(X[:, 0]) + np.nan_to_num(X[:, 3]) > 0).astype(int)
    w = np.where(rng.random(n) < 0.1, 0.0, 1.0)
    fits = [(LightGBMStyleClassifier(n_estimators=8, min_child_samples=3, max_bin=400,
                                     cat_smooth=1.0, min_data_per_group=2, cat_l2=1.0),
             X, y, {"categorical_features": [0, 4], "sample_weight": w}),
            (LightGBMStyleRegressor(n_estimators=5, min_child_samples=1),
             X[:7], np.arange(7.0), {})]
    compiled = [serialize.dumps(est.fit(Xf, yf, **kw).model_) for est, Xf, yf, kw in fits]
    numpy_only()
    for (est, Xf, yf, kw), want in zip(fits, compiled):
        assert serialize.dumps(est.fit(Xf, yf, **kw).model_) == want


# --- exact Newton splits (xgboost_style) and presorted orders (CART, forests, boosting) ------


@pytest.mark.parametrize("seed", range(12))
def test_a_node_gets_the_same_newton_split_compiled_as_from_numpy(seed):
    """Random nodes with missing values, ties in x, constant and all-missing features,
    lambda 0 (the guarded score) or not, min_child_weight binding or not."""
    rng = np.random.default_rng(seed)
    n, p = 400, 6
    X = np.round(rng.normal(size=(n, p)) * (4 if seed % 2 else 40)) / 4  # many ties
    X[rng.random((n, p)) < 0.15] = np.nan
    X[:, 4] = 1.0
    X[:, 5] = np.nan if seed % 3 == 0 else X[:, 5]
    XT = np.ascontiguousarray(X.astype(np.float32).T)
    g, h = rng.normal(size=n), rng.random(n) * (0.05 if seed % 4 == 0 else 1.0)
    if seed >= 4:  # whole numbers: gains tie exactly, so the tie rules decide
        g, h = rng.integers(-2, 3, n).astype(float), np.ones(n)
    order = presort(XT.T)
    lam, mcw = (0.0, 0.0) if seed % 2 else (1.0, 0.5)
    finder = NewtonSplitFinder(XT, g, h, reg_lambda=lam, min_child_weight=mcw,
                               features_at=lambda d: np.arange(p), order=order)
    found = 0
    for _ in range(6):
        rows = np.sort(rng.choice(n, rng.integers(2, n), replace=False))
        S, G, H = finder.root(rows).state
        F = np.sort(rng.choice(p, rng.integers(1, p + 1), replace=False))
        got = finder._best_numeric_compiled(S, F, G, H)
        kernels.ENABLED = False
        try:
            want = finder._best_numeric(S, F, G, H)
        finally:
            kernels.ENABLED = True
        assert (got is None) == (want is None)
        if want is not None:
            found += 1
            assert bits(got[0]) == bits(want[0]) and got[1:] == want[1:]
    assert found


def test_missing_alone_ties_as_in_numpy():
    """The best split sets the missing rows apart: pass 1's "every present row left" and
    "missing alone on the left" divide the rows alike (and a zero-hessian lowest row makes
    the first cut of pass 2 the same partition too); the kernel keeps numpy's choice."""
    x = np.r_[np.arange(15.0), [np.nan] * 5].astype(np.float32)
    g = np.r_[0.0, np.tile([1.0, -1.0], 7), [10.0] * 5]
    h = np.r_[0.0, np.ones(19)]
    XT = x[None, :]
    finder = NewtonSplitFinder(XT, g, h, reg_lambda=1.0, min_child_weight=0.0,
                               features_at=lambda d: np.arange(1), order=presort(XT.T))
    S, G, H = finder.root(np.arange(20)).state
    got = finder._best_numeric_compiled(S, np.arange(1), G, H)
    kernels.ENABLED = False
    try:
        want = finder._best_numeric(S, np.arange(1), G, H)
    finally:
        kernels.ENABLED = True
    assert bits(got[0]) == bits(want[0]) and got[1:] == want[1:]


def test_presorted_orders_divide_in_order():
    rng = np.random.default_rng(9)
    S = np.argsort(rng.normal(size=(5, 300)), axis=1, kind="stable").astype(np.int32)
    rows_l = np.sort(rng.choice(300, 120, replace=False))
    mask = np.zeros(300, dtype=bool)
    got = split_presorted(S, mask, rows_l, 180, compiled=True)
    assert not mask.any()
    want = split_presorted(S, mask, rows_l, 180)
    assert not mask.any()
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and np.array_equal(a, b)


OTHER_FITS = [
    (XGBoostStyleRegressor, {"n_estimators": 10, "colsample_bylevel": 0.7,
                               "random_state": 1}, "regression"),
    (XGBoostStyleClassifier, {"n_estimators": 6, "reg_lambda": 0.0,
                                "min_child_weight": 0.0}, "binary"),
    (XGBoostStyleClassifier, {"n_estimators": 4, "max_depth": 4}, "multiclass"),
    (RandomForestClassifier, {"n_estimators": 5, "random_state": 2}, "binary"),
    (GradientBoostingRegressor, {"n_estimators": 8, "random_state": 0}, "regression"),
]


@pytest.mark.parametrize("cls, kw, kind", OTHER_FITS)
def test_other_ensembles_are_the_same_with_and_without_the_kernels(cls, kw, kind, numpy_only):
    X, y = mixed_data(12, n=600)
    if kind != "regression":
        y = (y > 0).astype(int) if kind == "binary" else np.digitize(y, [-1.0, 1.0])
    if cls is GradientBoostingRegressor:
        X = np.nan_to_num(X)  # scikit-learn's semantics: no missing values
    compiled = serialize.dumps(cls(**kw).fit(X, y).model_)
    numpy_only()
    assert serialize.dumps(cls(**kw).fit(X, y).model_) == compiled


def test_learners_without_kernels_never_load_numba():
    """numba costs ~0.2 s and ~60 MB to import: a CART tree or a forest must not pay it."""
    code = ("import sys, numpy as np\n"
            "from rulegen.learn.trees.cart import CARTClassifier\n"
            "from rulegen.learn.ensembles.forest import RandomForestRegressor\n"
            "X = np.random.default_rng(0).normal(size=(80, 3))\n"
            "CARTClassifier().fit(X, X[:, 0] > 0)\n"
            "RandomForestRegressor(n_estimators=3).fit(X, X[:, 1])\n"
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


def test_rulegen_jit_0_turns_the_kernels_off():
    code = "from rulegen.learn.compiled import kernels; print(kernels.enabled())"
    env = {**os.environ, "RULEGEN_JIT": "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
    env["RULEGEN_JIT"] = "1"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "True"
