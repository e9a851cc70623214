"""The compiled regression statistics of the forest's grower (rulegen/learn/compiled/numpy_sums.py,
cart_kernels.squared_stats) sum as numpy does, to the bit: numpy's pairwise sum written out,
numpy's own BLAS ddot called by address; and where they are not used (object mode) the
trees are the same."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("numba")

from kernelcheck import bits, counting

from rulegen.learn.compiled import cart_kernels, numpy_sums
from rulegen.learn.ensembles import forest
from rulegen.learn.ensembles.forest import RandomForestRegressor
from rulegen.learn.splits.criteria import SquaredError


@pytest.fixture(autouse=True)
def _loaded(monkeypatch):
    monkeypatch.setattr(forest, "MIN_COMPILED_WORK", 0)
    assert cart_kernels.load() is not None


def numpy_blas():
    """numpy's ddot as the grower found it; on Linux (numpy's wheels bundle OpenBLAS) it
    must have been found and have passed the load-time check."""
    found = cart_kernels.numpy_blas()
    if found[0] == 0:
        assert not sys.platform.startswith("linux"), "numpy's cblas_ddot was not found or failed"
        pytest.skip("numpy's BLAS ddot not found here: the grower uses object mode")
    return found


def vectors(seed):
    rng = np.random.default_rng(seed)
    for n in [*range(1, 300), 1_023, 1_024, 1_025, 8_192, 8_193, 12_345, 65_537]:
        x = rng.normal(size=n) * 10.0 ** rng.integers(-6, 7, n)
        y = rng.normal(size=n) * 10.0 ** rng.integers(-6, 7, n)
        yield x, y


def test_sum_and_dot_are_numpys():
    blas, int64 = numpy_blas()
    for x, y in vectors(1):
        n = x.size
        w = np.abs(x)
        assert bits(numpy_sums.pairwise_sum(x, 0, n)) == bits(x.sum()), n
        assert bits(numpy_sums.pairwise_sum(w, 0, n)) == bits(w.sum()), n
        # at an offset, as the kernel sums the front of a scratch buffer
        z = np.concatenate([[1e300, -3.0], w, [7.0]])
        assert bits(numpy_sums.pairwise_sum(z, 2, n)) == bits(w.sum()), n
        assert bits(numpy_sums.dot(blas, int64, x, y, n)) == bits(x @ y.reshape(-1, 1)), n


def test_squared_stats_are_the_criterions():
    """A node's impurity, weight and mean: SquaredError.stats's bits."""
    blas, int64 = numpy_blas()
    rng = np.random.default_rng(2)
    crit = SquaredError(1)
    for n in [*range(1, 140), 1000, 4097, 15_000]:
        N = n + 50
        T = (rng.normal(size=(N, 1)) * 1e4).round(2)
        w = rng.choice([0.5, 1.0, 2.0, 3.0, 1.7], size=N)
        rows = rng.permutation(N)[:n].astype(np.int32)
        scratch = np.empty((2, N))
        imp, weight, mean = cart_kernels.squared_stats(T, w, rows, 0, n, blas, int64,
                                                       scratch[0], scratch[1])
        st = crit.stats(T, w, rows)
        assert bits([imp, weight, mean]).tolist() == bits(
            [st.impurity, st.weight, st.value[0]]).tolist(), n


def fit_pair(monkeypatch, X, y, **params):
    calls = counting(monkeypatch)
    a = RandomForestRegressor(**params).fit(X, y)
    assert calls, "the compiled grower did not run"
    monkeypatch.setattr(cart_kernels, "USE", False)
    b = RandomForestRegressor(**params).fit(X, y)
    monkeypatch.setattr(cart_kernels, "USE", True)
    return a.model_, b.model_


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_big_nodes_same_trees(monkeypatch, n_jobs):
    """Nodes of over 10,000 rows, where OpenBLAS may split a dot product between threads:
    the compiled path calls the same function, so the trees are numpy's -- also with trees
    grown on two threads, whose compiled statistics may call BLAS at the same time."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(14_000, 3))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) * 1e3 + rng.normal(size=len(X)) * 37.0
    a, b = fit_pair(monkeypatch, X, y, n_estimators=4, max_depth=3, random_state=0,
                    n_jobs=n_jobs)
    assert a.trees == b.trees


def test_object_mode_same_trees(monkeypatch):
    """Without numpy's ddot (another BLAS, or the check failed) the node statistics come
    from numpy through object mode: still the same trees."""
    monkeypatch.setattr(cart_kernels, "BLAS", (0, False))
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] * 10 + rng.normal(size=300)
    a, b = fit_pair(monkeypatch, X, y, n_estimators=3, random_state=1)
    assert a.trees == b.trees


def test_a_wrong_function_is_refused():
    """The load-time check: a dot product summed in another order does not pass."""
    blas, int64 = numpy_blas()

    def seq_dot(addr, i64, x, y, n):
        total = 0.0
        for k in range(n):
            total += x[k] * y[k]
        return total

    assert numpy_sums.agrees(numpy_sums.pairwise_sum, numpy_sums.dot, blas, int64)
    assert not numpy_sums.agrees(numpy_sums.pairwise_sum, seq_dot, blas, int64)
    assert not numpy_sums.agrees(lambda a, lo, n: float(np.sum(a[lo:lo + n][::-1])),
                                 numpy_sums.dot, blas, int64)
