"""xgboost_style's n_jobs (issue 20): chunks of features on threads for the compiled
per-feature kernels. The model must be the same, byte for byte, whatever n_jobs is."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from rulegen.cli import main
from rulegen.errors import LearnerError
from rulegen.ir.serialize import dumps
from rulegen.learn import threads
from rulegen.learn.ensembles.xgb import XGBoostStyleClassifier, XGBoostStyleRegressor

pytest.importorskip("numba")  # the threads run the compiled kernels (numpy: one thread)
pytestmark = pytest.mark.usefixtures("kernels_compiled")


@pytest.fixture
def every_node_threaded(monkeypatch):
    """Every node's work cut into chunks however small (the size threshold off), and a
    list of how many chunks each piece of work took: the tests' small data would otherwise
    run on one thread."""
    monkeypatch.setattr(threads, "MIN_CELLS", 1)
    seen = []
    run = threads.FeatureThreads.run

    def counted(self, work, q, cells):
        seen.append(len(self.chunks(q, cells)))
        return run(self, work, q, cells)

    monkeypatch.setattr(threads.FeatureThreads, "run", counted)
    return seen


def _case(seed):
    """A random data set and parameters: NaN, weights, a categorical feature, column and
    row sampling, two or more classes or a regression, any tree method."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(60, 400)), int(rng.integers(1, 9))
    X = rng.normal(size=(n, p))
    if rng.random() < 0.5:
        X = np.round(X, 1)  # ties
    if rng.random() < 0.6:
        X[rng.random((n, p)) < rng.uniform(0.02, 0.4)] = np.nan
    fit = {}
    if p > 1 and rng.random() < 0.4:
        X[:, 1] = np.where(np.isnan(X[:, 1]), np.nan, rng.integers(0, 5, n))
        fit["categorical_features"] = [1]
    if rng.random() < 0.5:
        fit["sample_weight"] = rng.exponential(size=n) * (rng.random(n) > 0.1)
    kw = {"n_estimators": int(rng.integers(1, 5)), "max_depth": int(rng.integers(1, 6)),
          "tree_method": str(rng.choice(["hist", "approx", "exact"])),
          "max_bin": int(rng.choice([2, 5, 16, 256])), "random_state": seed,
          "reg_lambda": float(rng.choice([0.0, 1.0])),
          "min_child_weight": float(rng.choice([0.0, 1.0, 5.0]))}
    if rng.random() < 0.5:
        kw.update(colsample_bytree=float(rng.uniform(0.3, 1)),
                  colsample_bylevel=float(rng.uniform(0.3, 1)),
                  subsample=float(rng.uniform(0.5, 1)))
    z = np.nan_to_num(X[:, 0]) + 0.3 * rng.normal(size=n)
    kind = rng.integers(3)
    if kind == 0:
        return XGBoostStyleRegressor, kw, X, z, fit
    y = (z > 0).astype(int) if kind == 1 else np.digitize(z, [-0.5, 0.5])
    return XGBoostStyleClassifier, kw, X, y, fit


@pytest.mark.parametrize("start", range(0, 60, 12))
def test_same_model_whatever_n_jobs(every_node_threaded, start):
    cut = 0
    for seed in range(start, start + 12):
        cls, kw, X, y, fit = _case(seed)
        ref = dumps(cls(**kw).fit(X, y, **fit).model_)
        del every_node_threaded[:]
        for n_jobs in (2, 3, -1):
            got = dumps(cls(**kw, n_jobs=n_jobs).fit(X, y, **fit).model_)
            assert got == ref, (seed, kw, n_jobs)
        cut += max(every_node_threaded, default=1) > 1  # (one feature per node: no cut)
    assert cut >= 8  # the work really was cut, in most cases


def test_chunked_scan_and_split_of_many_features(every_node_threaded):
    """Wider data than the random cases: every kernel cut into chunks of several features
    (histograms, scans, the exact search's sorted orders)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 23))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.nan_to_num(X[:, 3]) - np.nan_to_num(X[:, 7]) + rng.normal(size=300)
    for method in ("hist", "approx", "exact"):
        kw = {"n_estimators": 3, "max_depth": 4, "tree_method": method, "max_bin": 32,
              "colsample_bylevel": 0.8, "random_state": 1}
        ref = dumps(XGBoostStyleRegressor(**kw).fit(X, y).model_)
        for n_jobs in (2, 5):
            assert dumps(XGBoostStyleRegressor(**kw, n_jobs=n_jobs).fit(X, y).model_) == ref


def test_real_threshold_threads_big_nodes():
    """Without the test's threshold: a node of enough rows x features is cut, small ones
    are not."""
    pool = threads.FeatureThreads(2)
    assert pool.chunks(20, 20 * 100) == [(0, 20)]
    assert pool.chunks(20, 20 * 80_000) == [(0, 10), (10, 20)]
    assert threads.FeatureThreads(4).chunks(3, 10**9) == [(0, 1), (1, 2), (2, 3)]
    assert threads.FeatureThreads(3).chunks(10, 10**9) == [(0, 3), (3, 6), (6, 10)]


def test_numpy_path_takes_n_jobs_and_gives_the_same_model(numpy_only, every_node_threaded):
    cls, kw, X, y, fit = _case(3)
    compiled = dumps(cls(**kw).fit(X, y, **fit).model_)
    numpy_only()
    del every_node_threaded[:]
    for n_jobs in (1, 2, -1):
        assert dumps(cls(**kw, n_jobs=n_jobs).fit(X, y, **fit).model_) == compiled
    assert max(every_node_threaded, default=1) == 1  # numpy: one thread


def test_n_jobs_is_not_part_of_the_model():
    X = np.arange(40.0).reshape(20, 2)
    y = X[:, 0] % 3
    a = XGBoostStyleRegressor(n_estimators=2, n_jobs=2).fit(X, y)
    assert a.get_params()["n_jobs"] == 2
    assert "n_jobs" not in dict(a.model_.provenance.params)
    b = XGBoostStyleRegressor(n_estimators=2).fit(X, y)
    assert dumps(a.model_) == dumps(b.model_)


def test_n_jobs_meaning():
    assert threads.threads(None) == 1
    assert threads.threads(3) == 3
    cores = os.cpu_count() or 1
    assert threads.threads(-1) == cores
    assert threads.threads(-2) == max(1, cores - 1)
    assert threads.threads(-1000) == 1


@pytest.mark.parametrize("n_jobs", [0, 1.5, "2", True])
def test_bad_n_jobs(n_jobs):
    with pytest.raises(LearnerError, match="n_jobs"):
        XGBoostStyleClassifier(n_estimators=2, n_jobs=n_jobs).fit([[0.0], [1.0]], [0, 1])


def test_an_error_in_a_thread_is_raised():
    def work(a, b):
        if a > 0:
            raise ValueError(f"chunk {a}")

    with pytest.raises(ValueError, match="chunk 5"):
        threads.FeatureThreads(2).run(work, 10, 10**9)


def test_a_chunk_no_thread_starts_is_done_by_the_caller():
    """A busy machine: the pool's thread never gets to the chunk; the caller does it and
    returns without waiting for that thread."""
    gate = threading.Event()
    busy = threads._executor(1).submit(gate.wait)  # the pool's one thread held
    done = []

    def work(a, b):
        done.append((a, b, threading.current_thread().name))

    caller = threading.Thread(target=threads.FeatureThreads(2).run, args=(work, 10, 10**9))
    try:
        caller.start()
        caller.join(10)
        assert not caller.is_alive()
        assert sorted(d[:2] for d in done) == [(0, 5), (5, 10)]
        assert {d[2] for d in done} == {caller.name}
    finally:
        gate.set()
        busy.result()


def test_cli_n_jobs(tmp_path, capsys):
    rng = np.random.default_rng(0)
    data = tmp_path / "d.csv"
    X = rng.normal(size=(200, 3))
    rows = "".join(f"{a},{b},{c},{a + b * b:.6f}\n" for a, b, c in X)
    data.write_text("a,b,c,y\n" + rows)
    outs = []
    for n_jobs in ("1", "2"):
        out = tmp_path / f"m{n_jobs}.json"
        code = main(["fit", str(data), "--target", "y", "--algorithm", "xgboost_style",
                     "--param", "n_estimators=3", "--param", "tree_method=hist",
                     "--param", f"n_jobs={n_jobs}", "-o", str(out)])
        assert code == 0, capsys.readouterr().err
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    capsys.readouterr()
    code = main(["fit", str(data), "--target", "y", "--algorithm", "xgboost_style",
                 "--param", "n_jobs=0", "-o", str(tmp_path / "bad.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "n_jobs" in err and "Traceback" not in err
