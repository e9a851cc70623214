"""Memory of the presorted learners (forests, gradient boosting, XGBoost-style): presorted
row orders are int32, and a fit's peak stays a small multiple of the data, not of
(features x rows) float64 work arrays or of float64 copies of X."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from rulegen.learn.ensembles.forest import RandomForestRegressor
from rulegen.learn.ensembles.gbdt import GradientBoostingRegressor
from rulegen.learn.ensembles.newton import NewtonSplitFinder
from rulegen.learn.ensembles.xgb import XGBoostStyleRegressor
from rulegen.learn.splits.builder import (
    GrowthLimits,
    NumericSplitFinder,
    TreeBuilder,
    presort,
    presorted_subset,
)
from rulegen.learn.splits.criteria import Gini, SquaredError


def _data(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).astype(np.float32)
    X[rng.random((n, p)) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2 + rng.normal(scale=0.5, size=n)
    return X, y


def test_presorted_orders_are_int32_down_the_tree():
    X, y = _data(500, 4)
    order = presort(X)
    assert order.dtype == np.int32
    assert np.array_equal(order, np.argsort(X.T, axis=1, kind="stable"))
    T = (y > 1).astype(np.intp)
    w = np.ones(len(y))
    for given in (order, None):  # filtered from presort's orders, or sorted by the root
        finder = NumericSplitFinder(X, T, w, Gini(2))
        root = finder.root(np.arange(0, 500, 2), given)
        assert root.state[0].dtype == np.int32
        part = finder.find_split(root)
        assert part is not None
        for child in part.children:
            assert child.state[0].dtype == np.int32
            assert child.state[0].shape == (4, len(child.rows))


def test_newton_root_shares_the_presorted_orders():
    X, y = _data(400, 3)
    XT = np.ascontiguousarray(X.T)
    order = presort(X)
    g, h = y - y.mean(), np.ones(len(y))
    finder = NewtonSplitFinder(XT, g, h, reg_lambda=1.0, min_child_weight=1.0,
                               features_at=lambda depth: np.arange(3), order=order)
    assert finder.root(np.arange(400)).state[0] is order  # every row: no copy
    sub = finder.root(np.arange(0, 400, 3)).state[0]
    assert sub.dtype == np.int32 and sub.shape == (3, 134)
    part = finder.find_split(finder.root(np.arange(400)))
    assert all(c.state[0].dtype == np.int32 for c in part.children)


def _fit_peak(est, X, y) -> int:
    """Bytes allocated at the peak of ``est.fit(X, y)`` above what was allocated before."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        est.fit(X, y)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        if started:
            tracemalloc.stop()


@pytest.mark.parametrize("est, bound", [
    (RandomForestRegressor(n_estimators=2, max_depth=4, random_state=0), 16),
    # 7.4x: its trees divide presort's orders in place (11.1x when each node's orders
    # were copies)
    (GradientBoostingRegressor(n_estimators=2, max_depth=3, random_state=0), 10),
    (XGBoostStyleRegressor(n_estimators=2, max_depth=3, random_state=0), 16),
], ids=["forest", "gbdt", "xgb"])
def test_fit_peak_is_a_few_copies_of_the_data(est, bound):
    # X as float32 is 6 MB. The fit holds a transposed copy, the int32 orders, the root's
    # filtered orders, a few per-row arrays and work arrays of NumericSplitFinder._block
    # elements: about 10x X here. Blocks of (features x rows) float64 temporaries, or
    # float64 copies of X, took it to 30-45x.
    X, y = _data(150_000, 10)
    # first a fit as large as makes the forest use its compiled grower: on a fresh checkout
    # numba compiles it then (about 180 MB of Python objects, once), which is not the fit's
    est.fit(X[:20_000], y[:20_000])
    peak = _fit_peak(est, X, y)
    assert peak < bound * X.nbytes, f"fit peak {peak / 2**20:.0f} MB for {X.nbytes / 2**20:.0f} MB of X"
    assert est.model_.trees  # (the fit really ran)


def test_regression_root_presorted_by_finder_matches_presort():
    X, y = _data(300, 5)
    w = np.ones(len(y))
    rows = np.arange(1, 300, 2)
    a = NumericSplitFinder(X, y[:, None], w, SquaredError(1)).root(rows, presort(X))
    b = NumericSplitFinder(X, y[:, None], w, SquaredError(1)).root(rows)
    assert np.array_equal(a.state[0], b.state[0]) and a.state[0].dtype == b.state[0].dtype


def _tree_pair(X, T, w, rows, criterion, *, max_depth=None, max_leaf_nodes=None, msl=1):
    """The tree grown from ``presort``'s orders as they were, and grown dividing a copy
    of them in place; with the copy after restore() and before it."""
    order = presort(X)
    limits = GrowthLimits(max_depth=max_depth, min_samples_leaf=msl,
                          min_samples_split=2 * msl, max_leaf_nodes=max_leaf_nodes)
    trees, work = [], None
    for in_place in (False, True):
        rng = np.random.default_rng(5)
        finder = NumericSplitFinder(X, T, w, criterion, max_features=3, min_samples_leaf=msl,
                                    rng=rng, in_place=in_place, leaf_depth=max_depth)
        S = order
        if in_place:
            S = order.copy() if len(rows) == len(X) else presorted_subset(
                order, np.zeros(len(X), dtype=bool), rows)
            work = S
        trees.append(TreeBuilder(finder, finder.summarize, limits).build(finder.root(rows, S)))
        if in_place:
            divided = work.copy()
            finder.restore()
    return trees, order, divided, work


@pytest.mark.parametrize("max_depth, max_leaf_nodes, msl", [(3, None, 1), (None, 12, 3),
                                                            (5, None, 4)])
def test_in_place_division_grows_the_same_tree_and_restores_the_orders(max_depth,
                                                                       max_leaf_nodes, msl):
    X, y = _data(3000, 6, seed=2)
    X[:, 5] = np.round(X[:, 5])  # ties
    w = np.ones(len(y))
    w[::7] = 3.0
    for rows in (np.arange(len(y)), np.flatnonzero(np.arange(len(y)) % 3 > 0)):
        (plain, in_place), order, divided, work = _tree_pair(
            X, y[:, None], w, rows, SquaredError(1), max_depth=max_depth,
            max_leaf_nodes=max_leaf_nodes, msl=msl)
        assert len(plain.nodes) > 7
        assert in_place == plain  # node for node, thresholds, values, impurities
        assert not np.array_equal(divided, order if len(rows) == len(y) else work)
        if len(rows) == len(y):
            assert np.array_equal(work, order)  # restore() gave presort's orders back


def test_gradient_boosting_in_place_is_the_same_model(monkeypatch):
    # gradient boosting divides one array of orders in place, tree after tree, restoring it
    # in between; the models are those of the finder that copies (byte-equal IR JSON)
    from rulegen.ir import evaluate
    from rulegen.ir.serialize import dumps
    from rulegen.learn.ensembles import gbdt

    X, y = _data(2000, 5, seed=4)
    w = np.random.default_rng(1).integers(0, 3, len(y)).astype(float)
    cases = [(GradientBoostingRegressor(n_estimators=6, random_state=0), y, None),
             (GradientBoostingRegressor(loss="huber", n_estimators=5, max_leaf_nodes=6,
                                        random_state=0), y, w),
             (gbdt.GradientBoostingClassifier(n_estimators=4, max_depth=4, random_state=0),
              np.digitize(y, [-0.5, 1.0, 2.5]), None)]

    class Copying(NumericSplitFinder):
        def __init__(self, *args, **kwargs):
            assert kwargs["in_place"]  # (the case under test)
            super().__init__(*args, **{**kwargs, "in_place": False})

    for est, target, weights in cases:
        with monkeypatch.context() as m:
            m.setattr(gbdt, "IN_PLACE_MIN", 0)  # (this small X is otherwise copied)
            ours = dumps(est.fit(X, target, sample_weight=weights).model_)
        with monkeypatch.context() as m:
            m.setattr(gbdt, "IN_PLACE_MIN", 0)
            m.setattr(gbdt, "NumericSplitFinder", Copying)
            copied = dumps(est.fit(X, target, sample_weight=weights).model_)
        assert ours == copied
        if weights is None and isinstance(est, GradientBoostingRegressor):
            # every row trained, so each row's leaf came from the builder, not the IR: the
            # loop's training loss is still that of the IR's own raw scores, bit for bit
            raw = evaluate.raw_scores(est.model_, X)
            assert est.loss_.value(target[:, None], raw, np.ones(len(X))) == est.train_score_[-1]
