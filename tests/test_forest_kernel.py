"""The random forest's compiled tree grower (rulegen/learn/compiled/cart_kernels.py) grows the numpy
split finder's trees node for node, and n_jobs changes nothing but the time."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from kernelcheck import counting

from rulegen.learn.compiled import cart_kernels
from rulegen.learn.ensembles import forest
from rulegen.learn.ensembles.forest import RandomForestClassifier, RandomForestRegressor


def data(seed, n, p, task, n_outputs=1):
    """Numeric columns with NaN, ties (rounded columns), a constant column, signed zeros
    and huge values, and a target that depends on a few of them."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[:, 0] = np.round(X[:, 0] * 2) / 2  # many ties
    X[:, 1] = rng.integers(0, 3, n)  # three values
    if p > 3:
        X[:, 2] = 1.5  # constant
        X[:, 3] = np.where(rng.random(n) < 0.5, 0.0, -0.0) + np.round(X[:, 3])
    if p > 4:
        X[:, 4] *= 1e30
    X[rng.random((n, p)) < 0.12] = np.nan
    X[:, -1] = rng.normal(size=n)  # one column without NaN
    score = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * 0.7 - X[:, -1]
    if task == "classification":
        y = np.digitize(score + 0.5 * rng.normal(size=n), [-0.5, 0.8])
    else:
        y = np.stack([score * 1000.0 + rng.normal(size=n) * (k + 1) for k in range(n_outputs)],
                     axis=1)
        y = y[:, 0] if n_outputs == 1 else y
    return X, y


CASES = [  # (task, estimator parameters, sample weights?)
    ("classification", {}, False),
    ("classification", {"max_features": 1}, True),
    ("classification", {"max_features": None, "min_samples_leaf": 3}, False),
    ("classification", {"max_depth": 3, "min_samples_split": 10}, True),
    ("classification", {"max_leaf_nodes": 7}, False),
    ("classification", {"max_leaf_nodes": 12, "max_features": 2}, True),
    ("classification", {"bootstrap": False, "max_features": 0.5}, False),
    ("classification", {"max_samples": 0.5, "min_impurity_decrease": 0.01}, True),
    ("classification", {"voting": "hard", "min_samples_leaf": 2}, False),
    ("regression", {}, False),
    ("regression", {"max_features": "sqrt"}, True),
    ("regression", {"max_depth": 4, "min_samples_leaf": 4}, False),
    ("regression", {"max_leaf_nodes": 9}, True),
    ("regression", {"bootstrap": False, "max_features": 2}, False),
    ("regression", {"min_impurity_decrease": 50.0}, True),
]


@pytest.fixture(autouse=True)
def _always_compiled(monkeypatch):
    """These forests are small: the kernel is asked for whatever their size."""
    monkeypatch.setattr(forest, "MIN_COMPILED_WORK", 0)


def fit_both(monkeypatch, cls, params, X, y, sw):
    """The same forest grown with the kernel and without; asserts the kernel ran."""
    calls = counting(monkeypatch)
    compiled = cls(**params).fit(X, y, sample_weight=sw)
    assert len(calls) == params["n_estimators"], "the compiled grower did not run"
    monkeypatch.setattr(cart_kernels, "USE", False)
    plain = cls(**params).fit(X, y, sample_weight=sw)
    monkeypatch.setattr(cart_kernels, "USE", True)
    assert len(calls) == params["n_estimators"]
    return compiled, plain


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("seed", [0, 1])
def test_same_trees_as_numpy(monkeypatch, case, seed):
    task, params, weighted = CASES[case]
    rng = np.random.default_rng(100 + seed)
    n, p = int(rng.integers(60, 220)), int(rng.integers(3, 8))
    n_out = 2 if task == "regression" and case % 2 == 0 and seed == 1 else 1
    X, y = data(seed * 31 + case, n, p, task, n_out)
    sw = None
    if weighted:
        sw = rng.choice([0.0, 0.5, 1.0, 2.25, 3.0], size=n)
    cls = RandomForestClassifier if task == "classification" else RandomForestRegressor
    if task == "classification" and case % 3 == 0:
        params = {**params, "criterion": "gini"}
    params = {"n_estimators": 4, "random_state": seed, **params}
    compiled, plain = fit_both(monkeypatch, cls, params, X, y, sw)
    assert compiled.model_.trees == plain.model_.trees  # every node's every field
    assert len(compiled.model_.trees[0].nodes) > 1


def test_fully_grown_on_more_rows(monkeypatch):
    """Bigger nodes: more tied proxies and several blocks' worth of rows."""
    X, y = data(7, 900, 6, "classification")
    params = {"n_estimators": 3, "random_state": 3}
    compiled, plain = fit_both(monkeypatch, RandomForestClassifier, params, X, y, None)
    assert compiled.model_.trees == plain.model_.trees
    Xr, yr = data(8, 700, 5, "regression")
    compiled, plain = fit_both(monkeypatch, RandomForestRegressor, params, Xr, yr, None)
    assert compiled.model_.trees == plain.model_.trees


@pytest.mark.parametrize("params", [
    {"criterion": "entropy"},
    {"criterion": "absolute_error"},
    {"min_weight_fraction_leaf": 0.05},
    {"splitter": "random"},
    {"split": "oblique"},
])
def test_uncovered_cases_use_numpy(monkeypatch, params):
    """What the kernel does not cover is grown by the numpy finder."""
    regression = params.get("criterion") == "absolute_error"
    X, y = data(3, 80, 4, "regression" if regression else "classification")
    X = np.nan_to_num(X) if "split" in params else X
    calls = counting(monkeypatch)
    cls = RandomForestRegressor if regression else RandomForestClassifier
    cls(n_estimators=2, random_state=0, **params).fit(X, y)
    assert calls == []


def test_categorical_columns_use_numpy(monkeypatch):
    X, y = data(4, 80, 4, "classification")
    X[:, 1] = np.nan_to_num(X[:, 1])
    calls = counting(monkeypatch)
    RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y, categorical_features=[1])
    assert calls == []


@pytest.mark.filterwarnings("ignore:.*out-of-bag")
@pytest.mark.parametrize("use_kernel", [True, False])
def test_n_jobs_changes_nothing(monkeypatch, use_kernel):
    """Every tree from its own seed: the same model (serialized) for any n_jobs, OOB and
    progress in tree order."""
    from rulegen.ir import serialize

    monkeypatch.setattr(cart_kernels, "USE", use_kernel)
    X, y = data(5, 150, 5, "classification")
    models = []
    for n_jobs in (None, 1, 2, 3, -1):
        seen = []
        est = RandomForestClassifier(n_estimators=7, random_state=1, oob_score=True,
                                     n_jobs=n_jobs)
        est.fit(X, y, progress=lambda done, total: seen.append(done))
        assert seen == list(range(1, 8))
        models.append((serialize.dumps(est.model_), est.oob_decision_function_.tobytes()))
    assert all(m == models[0] for m in models)
    Xr, yr = data(6, 120, 4, "regression")
    a = RandomForestRegressor(n_estimators=5, random_state=2, max_leaf_nodes=10).fit(Xr, yr)
    b = RandomForestRegressor(n_estimators=5, random_state=2, max_leaf_nodes=10,
                              n_jobs=2).fit(Xr, yr)
    assert a.model_ == b.model_


@pytest.mark.parametrize("n_jobs", [0, 1.5, "2", True])
def test_bad_n_jobs(n_jobs):
    from rulegen.errors import LearnerError

    with pytest.raises(LearnerError, match="n_jobs"):
        RandomForestClassifier(n_estimators=2, n_jobs=n_jobs).fit([[0.0], [1.0]], [0, 1])


def test_n_jobs_threads():
    assert forest._threads(None) == 1
    assert forest._threads(3) == 3
    cores = __import__("os").cpu_count() or 1
    assert forest._threads(-1) == cores
    assert forest._threads(-2) == max(1, cores - 1)


def test_float32_digits_from_str_as_scientific():
    """float32_test reads a float32's shortest digits from str() (cheaper) unless an old
    print mode is set; both must count the same digits."""
    from rulegen.learn.splits.builder import _f32_digits, float32_test

    rng = np.random.default_rng(0)
    v = (rng.standard_normal(4000) * 10.0 ** rng.integers(-45, 39, 4000)).astype(np.float32)
    edge = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-38, 3.4028235e38, 1e16, 1e-4, 1e-5, 123456.7,
                     1200000.0, np.inf, -np.inf, np.nan], dtype=np.float32)
    for x in np.concatenate([v, edge]):
        assert _f32_digits(x, False) == _f32_digits(x, True), x
    mids = [float(a) / 2 + float(b) / 2 for a, b in zip(v[:300], v[1:301])]
    plain = [float32_test(0, t) for t in mids]
    with np.printoptions(legacy="1.13"):
        assert [float32_test(0, t) for t in mids] == plain
    assert float32_test(0, 1.9 / 2 + 3.0 / 2).threshold == float(np.float32(2.45))


def test_n_jobs_from_the_command_line(tmp_path, capsys):
    """`rulegen fit --param n_jobs=...`: the same model file; a bad value is one line, exit 2."""
    from pathlib import Path

    from rulegen.cli import main

    data = Path(__file__).parent / "data" / "penguins.csv"
    base = ["fit", str(data), "--target", "species", "--algorithm", "random_forest",
            "--param", "n_estimators=6", "--param", "random_state=0"]
    files = []
    for jobs in ("1", "2"):
        out = tmp_path / f"m{jobs}.json"
        assert main([*base, "--param", f"n_jobs={jobs}", "-o", str(out)]) == 0
        files.append(out.read_text())
    assert files[0] == files[1]
    capsys.readouterr()
    for bad in ("0", "two"):
        assert main([*base, "--param", f"n_jobs={bad}", "-o", str(tmp_path / "bad.json")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "n_jobs" in err and "Traceback" not in err


def test_kernel_constants_are_the_builders():
    """The kernel keeps its own copies (numba's cache would not see a change in builder.py)."""
    from rulegen.learn.splits import builder

    assert cart_kernels._BLOCK == builder.NumericSplitFinder._block
    assert cart_kernels._EPS == builder.EPSILON
    assert builder.FEATURE_THRESHOLD == np.float32(1e-7)  # written as a literal in the kernel
