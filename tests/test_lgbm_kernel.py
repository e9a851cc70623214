"""lightgbm_style's compiled tree grower (rulegen/learn/compiled/lgbm_kernels.py) grows the trees of
the histogram split finder under the best-first builder, tree for tree and bit for bit:
the IR JSON byte for byte, and the booster's training scores."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from kernelcheck import bits, counting

from rulegen.ir import serialize
from rulegen.learn.compiled import lgbm_kernels
from rulegen.learn.ensembles.lgbm import LightGBMStyleClassifier, LightGBMStyleRegressor

pytestmark = pytest.mark.usefixtures("kernels_compiled")


def data(seed, n, task):
    """Numeric columns with NaN, ties, a zero-heavy column (LightGBM's most frequent bin
    away from bin 0), small integers (pure nodes, equal gains), a column of one value,
    and two categorical columns (few and many categories, NaN)."""
    rng = np.random.default_rng(seed)
    X = np.empty((n, 8))
    X[:, 0] = np.round(rng.normal(size=n) * 2) / 2
    X[:, 1] = rng.integers(-2, 3, n)
    X[:, 2] = np.where(rng.random(n) < 0.75, 0.0, rng.normal(size=n) * 10)
    X[:, 3] = rng.normal(size=n) * 1e3 - 5e3
    X[:, 4] = 7.0
    X[:, 5] = rng.normal(size=n)
    X[:, 6] = rng.integers(0, 3, n)  # categorical, one-vs-rest by default
    X[:, 7] = rng.integers(0, 12, n)  # categorical, sorted scans
    X[rng.random((n, 8)) < 0.08] = np.nan
    X[:, 5] = np.where(rng.random(n) < 0.5, X[:, 5], rng.normal(size=n))  # no NaN
    s = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * 0.5 - np.nan_to_num(X[:, 5])
         + np.isin(X[:, 7], [1, 4, 5, 9]))
    if task == "regression":
        return X, np.round(s * 3 + rng.normal(size=n) * 0.3)  # ties in y too
    if task == "binary":
        return X, (s + rng.normal(size=n) > 0.3).astype(int)
    return X, np.digitize(s + 0.5 * rng.normal(size=n), [-0.5, 0.8])


CASES = [  # (task, parameters, categorical columns, sample weights)
    ("regression", {}, [6, 7], False),
    ("binary", {}, [6, 7], False),
    ("multiclass", {}, [6, 7], False),
    ("regression", {"min_child_samples": 1, "num_leaves": 40}, [], False),
    ("binary", {"min_child_samples": 0, "max_bin": 7}, [7], False),
    ("multiclass", {"max_depth": 3, "reg_lambda": 1.0}, [6, 7], True),
    ("regression", {"num_leaves": 5, "min_split_gain": 2.0}, [7], True),
    ("binary", {"min_child_weight": 2.0, "learning_rate": 0.3, "min_data_in_bin": 1}, [], True),
    ("regression", {"subsample": 0.6, "colsample_bytree": 0.5}, [6, 7], False),
    ("multiclass", {"colsample_bytree": 0.7, "min_child_samples": 3}, [7], False),
    ("binary", {"max_cat_to_onehot": 16, "min_child_samples": 2}, [6, 7], False),
    ("regression", {"cat_smooth": 0.0, "cat_l2": 0.0, "min_data_per_group": 1,
                    "max_cat_threshold": 2, "min_child_samples": 4}, [6, 7], True),
    ("binary", {"early_stopping_rounds": 3, "num_leaves": 63, "min_child_samples": 5}, [], False),
    ("regression", {"max_depth": 1, "num_leaves": 2}, [6], False),
]


def fit(task, params, cats, weighted, seed):
    X, y = data(seed, 300 + 53 * seed, task)
    w = None
    if weighted:
        w = np.random.default_rng(seed).uniform(0.2, 3.0, len(y))
        w[::11] = 0.0  # rows that take no part, routed by the bins afterwards
    cls = LightGBMStyleRegressor if task == "regression" else LightGBMStyleClassifier
    est = cls(n_estimators=12, random_state=seed, **params)
    return est.fit(X, y, sample_weight=w, categorical_features=cats or None)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_compiled_trees_are_the_builders(case, monkeypatch):
    task, params, cats, weighted = CASES[case]
    grown = counting(monkeypatch, lgbm_kernels.TreeGrower, "run")
    fast = fit(task, params, cats, weighted, case)
    monkeypatch.setattr(lgbm_kernels, "USE", False)
    slow = fit(task, params, cats, weighted, case)
    a, b = fast.model_, slow.model_
    assert len(grown) >= len(a.trees) == len(b.trees) > 0
    for k, (ta, tb) in enumerate(zip(a.trees, b.trees)):
        assert ta == tb, f"tree {k}"
    assert serialize.dumps(a) == serialize.dumps(b)
    if slow.train_raw_ is not None:
        assert np.array_equal(bits(fast.train_raw_), bits(slow.train_raw_))
    assert fast.n_estimators_ == slow.n_estimators_


def test_equal_gains_between_leaves_go_as_the_builder_takes_them(monkeypatch):
    """Two halves of the data that mirror each other (the same rows shifted by 10 in every
    column, flipped labels): the root splits them apart, and in the first round its two
    children hold gradients of opposite signs on bins of the same shape, so every split of
    one has the same gain as its mirror in the other, to the bit: the lower LightGBM leaf
    index goes first, and the node ids follow."""
    rng = np.random.default_rng(1)
    X0 = rng.integers(1, 6, (150, 3)).astype(float)
    y0 = (rng.random(150) < 0.85).astype(int)  # noise: the halves' split gains most
    X = np.vstack([X0, X0 + 10])
    y = np.concatenate([y0, 1 - y0])  # half positive: base score 0, gradients +-0.5
    models = []
    for use in (True, False):
        monkeypatch.setattr(lgbm_kernels, "USE", use)
        est = LightGBMStyleClassifier(n_estimators=2, num_leaves=6, min_child_samples=3)
        models.append(est.fit(X, y).model_)
    nodes = models[0].trees[0].nodes
    t1, t2 = nodes[1].test, nodes[2].test  # the mirrored best splits, both taken
    assert t1.feature == t2.feature and round(t2.threshold - t1.threshold, 9) == 10
    assert serialize.dumps(models[0]) == serialize.dumps(models[1])


def test_the_grower_grows_every_tree_and_stops_as_lightgbm(monkeypatch):
    """Every tree of a fit comes from the compiled grower; a fit where no tree can split
    after the first round stops there, as with the builder."""
    grown = counting(monkeypatch, lgbm_kernels.TreeGrower, "run")
    X, y = data(0, 400, "multiclass")
    est = LightGBMStyleClassifier(n_estimators=7).fit(X, y)
    assert len(grown) == len(est.model_.trees) == 21
    grown.clear()
    X = np.arange(30.0)[:, None]
    est = LightGBMStyleRegressor(n_estimators=5, min_child_samples=20).fit(X, X[:, 0])
    assert est.n_estimators_ == 1 and len(est.model_.trees[0].nodes) == 1
    assert len(grown) == 2  # the second round's tree is dropped


def test_histograms_past_the_pool_limit_go_through_the_finder(monkeypatch):
    """A fit whose open leaves' histograms would pass POOL_LIMIT is grown by the finder
    and the builder: the same model, and the compiled grower never runs."""
    grown = []
    run = lgbm_kernels.TreeGrower.run
    monkeypatch.setattr(lgbm_kernels.TreeGrower, "run",
                        lambda self, *a: grown.append(1) or run(self, *a))
    X, y = data(3, 300, "binary")
    fast = LightGBMStyleClassifier(n_estimators=4).fit(X, y, categorical_features=[7])
    assert len(grown) == 4
    monkeypatch.setattr(lgbm_kernels, "POOL_LIMIT", 0)
    slow = LightGBMStyleClassifier(n_estimators=4).fit(X, y, categorical_features=[7])
    assert len(grown) == 4
    assert serialize.dumps(fast.model_) == serialize.dumps(slow.model_)


@pytest.mark.parametrize("K", [3, 9])
@pytest.mark.parametrize("weighted", [False, True])
def test_softmax_gradients_compiled_are_the_formulas(K, weighted, monkeypatch):
    """The softmax gradients (lgbm_losses, compiled by lgbm_kernels.softmax_gradients or in
    numpy) are LightGBM's formulas as written out plainly, to the bit: p from the exps added
    class by class, g = p - 1 or p, h = K/(K-1) p (1 - p), weighted, rounded to float32."""
    from rulegen.learn.ensembles import lgbm_losses

    rng = np.random.default_rng(K)
    n = 500
    F = rng.normal(size=(n, K)) * 4
    F[::7, 1] = 60.0  # probabilities of exactly 1 and 0
    F[::11] = 0.0
    Y = (rng.integers(0, K, n)[:, None] == np.arange(K)).astype(float)
    w = rng.uniform(0.1, 3.0, n) if weighted else np.ones(n)
    e = np.exp(F - F.max(axis=1, keepdims=True))
    total = e[:, 0].copy()
    for k in range(1, K):
        total += e[:, k]
    p = e / total[:, None]
    g, h = np.where(Y > 0.5, p - 1.0, p), K / (K - 1.0) * p * (1.0 - p)
    if weighted:
        w32 = w.astype(np.float32).astype(np.float64)[:, None]
        g, h = g * w32, h * w32
    want = [a.astype(np.float32).astype(np.float64) for a in (g, h)]
    for compiled in (True, False):
        monkeypatch.setattr(lgbm_losses.kernels, "enabled", lambda c=compiled: c)
        loss = lgbm_losses.LgbSoftmaxLoss(K)
        loss.begin_round(Y, F, w)
        got = loss.gradient_hessian(Y, F)
        for a, b in zip(got, want):
            assert np.array_equal(bits(a), bits(b)), compiled


def test_numeric_trees_skip_validates_per_node_check(monkeypatch):
    """The grower's trees with numeric splits alone and finite leaves go to validate as
    ``plain`` (checked in bulk from its arrays); a tree with a categorical split does not.
    The model is the builder's either way."""
    from rulegen.ir import validate as validate_module
    from rulegen.learn import base

    seen = []

    def spy(model, plain=None):
        seen.append(dict(plain or {}))
        return validate_module.validate(model, plain)

    monkeypatch.setattr(base, "validate", spy)
    X, y = data(4, 400, "multiclass")
    est = LightGBMStyleClassifier(n_estimators=3).fit(X, y)
    assert sorted(seen[-1]) == list(range(len(est.model_.trees)))
    assert all(w == 1 and f for w, f in seen[-1].values())
    est = LightGBMStyleClassifier(n_estimators=3).fit(X, y, categorical_features=[7])
    cat = [i for i, t in enumerate(est.model_.trees)
           if any(getattr(nd, "test", None).__class__.__name__ == "CategoricalTest"
                  for nd in t.nodes)]
    assert cat and not set(cat) & set(seen[-1])
    assert set(seen[-1]) == set(range(len(est.model_.trees))) - set(cat)
    fast = est.model_
    monkeypatch.setattr(lgbm_kernels, "USE", False)
    slow = LightGBMStyleClassifier(n_estimators=3).fit(X, y, categorical_features=[7]).model_
    assert seen[-1] == {} and serialize.dumps(fast) == serialize.dumps(slow)


def test_categories_sorted_as_numpys_stable_argsort():
    """The categorical scans order a feature's categories with kernels._stable_sort (in
    place, compiled): numpy's stable argsort's order, ties by code, -0 equal to 0, NaN last."""
    from rulegen.learn.compiled import kernels

    rng = np.random.default_rng(0)
    for trial in range(400):
        n = int(rng.integers(0, 40))
        if trial % 2:
            key = rng.choice([0.0, -0.0, 1.0, -2.5, np.nan, np.inf, -np.inf, 0.5], n)
        else:
            key = rng.normal(size=n)
        items = np.sort(rng.choice(300, n, replace=False)).astype(np.intp)
        want = items[np.argsort(key, kind="stable")]
        got, k = items.copy(), key.copy()
        kernels._stable_sort(got, k, n)
        assert np.array_equal(got, want), key


def test_greedy_bins_compiled_are_the_python_loop(monkeypatch):
    """binning.greedy_bounds's loop over bins (LightGBM's GreedyFindBin with many distinct
    values, binning.greedy_cuts) compiled gives the bounds it gives as plain Python, as it
    runs without numba: spread counts, values holding a bin's share or more of the rows
    (bins of their own), every value big (the mean becomes 0/0)."""
    from rulegen.learn.compiled import kernels
    from rulegen.learn.splits import binning

    rng = np.random.default_rng(2)
    cases = []
    for trial in range(60):
        d = int(rng.integers(260, 3000))
        counts = rng.integers(1, 6, d)
        if trial % 3 == 1:
            counts[rng.choice(d, 12, replace=False)] = rng.integers(50, 400, 12)
        if trial % 3 == 2:
            counts = rng.integers(1, 3, d) * 1000  # every value a bin's share: no rest
        u = np.cumsum(rng.uniform(0.01, 2.0, d)) - 50.0
        cases.append((u, counts, int(rng.choice([255, 63, 16])), int(rng.choice([0, 1, 3, 20]))))
    assert kernels.enabled()
    compiled = [binning.greedy_bounds(u, c, mb, int(c.sum()), mdb) for u, c, mb, mdb in cases]
    for name in ("greedy_cuts", "_reach_bin", "_ratio"):  # as before numba swaps them in
        monkeypatch.setattr(binning, name, getattr(binning, name).py_func)
    plain = [binning.greedy_bounds(u, c, mb, int(c.sum()), mdb) for u, c, mb, mdb in cases]
    for a, b in zip(compiled, plain):
        assert np.array_equal(np.array(a), np.array(b))


@pytest.mark.parametrize("a", [0.0, -0.0, 3.0, -3.0, np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("b", [0.0, -0.0, 2.0, -np.inf])
def test_ratio_divides_as_cpp_compiled_or_not(a, b):
    from rulegen.learn.splits import binning

    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.float64(a) / np.float64(b)
    for ratio in (binning._ratio, binning._ratio.py_func):
        got = ratio(a, b)
        assert np.array_equal(np.float64(got), want, equal_nan=True), (ratio, a, b)
        assert np.signbit(got) == np.signbit(want) or np.isnan(want)
