"""xgboost_style's tree_method="hist" (rulegen.learn.ensembles.newton_hist): cuts and bins made once per
fit from the sample-weighted quantiles, node histograms by XGBoost's subtraction trick; the
compiled path (numba) and the numpy path give the same trees bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from rulegen.cli import main
from rulegen.errors import RulegenError
from rulegen.ir import evaluate, serialize
from rulegen.ir.nodes import Split
from rulegen.learn.ensembles import newton, newton_hist, xgb
from rulegen.learn.ensembles.xgb import XGBoostStyleClassifier, XGBoostStyleRegressor
from rulegen.learn.splits.builder import presort

pytest.importorskip("numba")

from kernelcheck import bits
from targetcheck import assert_targets_exact
from test_newton_hist import odd_data

pytestmark = pytest.mark.usefixtures("kernels_compiled")

FITS = [
    (XGBoostStyleRegressor, {"n_estimators": 8}, "regression", {}),
    (XGBoostStyleRegressor, {"n_estimators": 6, "max_bin": 7, "subsample": 0.6,
                             "colsample_bylevel": 0.6, "random_state": 2}, "regression", {}),
    (XGBoostStyleClassifier, {"n_estimators": 6, "reg_lambda": 0.0, "min_child_weight": 0.0,
                              "gamma": 0.3}, "binary", {}),
    (XGBoostStyleClassifier, {"n_estimators": 4, "max_depth": 4, "colsample_bytree": 0.7,
                              "random_state": 1}, "multiclass", {"categorical_features": [8]}),
    (XGBoostStyleRegressor, {"n_estimators": 5, "max_bin": 32, "max_depth": None},
     "regression", {"weights": True}),
]


def fit(cls, kw, kind, fit_kw, seed=11):
    X, y = odd_data(seed, inf=False)
    if kind != "regression":
        y = (y > 0).astype(int) if kind == "binary" else np.digitize(y, [-1.0, 1.0])
    fit_kw = dict(fit_kw)
    if fit_kw.pop("weights", False):  # zero weights too
        fit_kw["sample_weight"] = np.random.default_rng(0).integers(0, 3, len(y)).astype(float)
    return cls(tree_method="hist", **kw).fit(X, y, **fit_kw), X, y, fit_kw


@pytest.mark.parametrize("cls, kw, kind, fit_kw", FITS)
def test_trees_are_the_same_with_and_without_the_kernels(cls, kw, kind, fit_kw, numpy_only):
    compiled = fit(cls, kw, kind, fit_kw)[0].model_
    assert sum(len(t.nodes) for t in compiled.trees) > 10 * len(compiled.trees)
    numpy_only()
    plain = fit(cls, kw, kind, fit_kw)[0].model_
    assert len(plain.trees) == len(compiled.trees)
    trees = [serialize.model_to_dict(m)["trees"] for m in (compiled, plain)]
    for i, (a, b) in enumerate(zip(*trees)):
        assert a == b, f"tree {i}"
    assert serialize.dumps(plain) == serialize.dumps(compiled)


@pytest.mark.parametrize("case", [1, 3])
def test_hist_models_compile_exactly(case):
    """hist's float32 cuts, missing directions and categorical splits in the generated
    Python, C, SQLite and DuckDB, against the evaluator at and around every threshold."""
    cls, kw, kind, fit_kw = FITS[case]
    est, X, _, _ = fit(cls, kw, kind, fit_kw)
    assert_targets_exact(est.model_, X[:40], n_random=20)


@pytest.mark.parametrize("unit", [True, False])
def test_a_histogram_compiled_is_numpys(unit, monkeypatch, numpy_only):
    """Random rows, hessians and features (some left out), 64 bins: the compiled sums are,
    bit for bit, the numpy ones (those also in small blocks of features)."""
    rng = np.random.default_rng(int(unit))
    X, _ = odd_data(8)
    n = len(X)
    bins = newton_hist.fixed_bins(np.ascontiguousarray(X.astype(np.float32).T), np.ones(n),
                                  64, None)[0]
    g = rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, n)  # sums that round
    h = np.ones(n) if unit else rng.random(n)
    feats = np.array([0, 1, 2, 3, 5, 6, 8])
    row_sets = [np.sort(rng.choice(n, k, replace=False)) for k in (1, 50, n)]
    got = [newton_hist.histogram(bins, feats, rows, g, h, 65, unit) for rows in row_sets]
    numpy_only()
    monkeypatch.setattr(newton_hist, "_BLOCK", 2000)
    for a, rows in zip(got, row_sets):
        want = newton_hist.histogram(bins, feats, rows, g, h, 65, unit)
        assert np.array_equal(bits(a), bits(want))
        assert a[:, :, 2].sum() == len(rows) * len(feats)


@pytest.mark.parametrize("jit", [True, False])
def test_histograms_by_subtraction_and_from_rows(jit, monkeypatch, numpy_only):
    """Only the root's and the smaller children's histograms are summed from rows (at most
    half of their parent's); the bigger child's is the parent's minus its sibling's,
    exactly, which matches the histogram of its own rows up to rounding (the counts
    exactly)."""
    if not jit:
        numpy_only()
    built, checked, parent_rows = [], [], [None]
    histogram = newton_hist.histogram

    def counted(bins, feats, rows, *args):
        built.append(len(rows))
        return histogram(bins, feats, rows, *args)

    take = newton_hist.Siblings.take

    def watched(self, left, build):
        first = self.made is None and self.parent is not None
        parent, small_left, small_rows = self.parent, self.small_left, self.small_rows
        got = take(self, left, build)
        if first:
            big = got if left != small_left else self.made[0 if not small_left else 1]
            n_built = len(built)
            small = build(small_rows)
            own = build(np.setdiff1d(parent_rows[0], small_rows))
            del built[n_built:]  # (the checks' own sums)
            assert np.array_equal(bits(big), bits(parent - small))
            assert np.array_equal(big[:, :, 2], own[:, :, 2])
            assert np.allclose(big[:, :, :2], own[:, :, :2], rtol=0, atol=1e-9)
            checked.append(1)
        return got

    partition = newton.NewtonSplitFinder._partition

    def remember(self, node, best):
        parent_rows[0] = node.rows  # the next family made is this node's children
        return partition(self, node, best)

    monkeypatch.setattr(newton_hist, "histogram", counted)
    monkeypatch.setattr(newton_hist.Siblings, "take", watched)
    monkeypatch.setattr(newton.NewtonSplitFinder, "_partition", remember)
    X, y = odd_data(2, inf=False)
    n = len(X)
    est = XGBoostStyleRegressor(tree_method="hist", n_estimators=1, max_depth=1).fit(X, y)
    # a stump: the root's histogram from its rows, then nothing (its children are leaves)
    assert built == [n] and len(est.model_.trees[0].nodes) == 3
    built.clear()
    est = XGBoostStyleRegressor(tree_method="hist", n_estimators=1, max_depth=4).fit(X, y)
    splits = sum(isinstance(nd, Split) for nd in est.model_.trees[0].nodes)
    assert built[0] == n and all(b <= n // 2 for b in built[1:])
    assert len(checked) == len(built) - 1 >= 3 and len(built) <= splits
    assert sum(built) < 0.6 * n * 4  # approx sums every searched node: n per level


def test_cuts_and_bins_are_made_once_from_the_sample_weights(monkeypatch):
    calls = []
    fixed = xgb.fixed_bins

    def counted(*args):
        calls.append(1)
        return fixed(*args)

    monkeypatch.setattr(xgb, "fixed_bins", counted)
    X, y = odd_data(4, inf=False)
    w = np.random.default_rng(4).integers(0, 4, len(y)).astype(float)
    est = XGBoostStyleClassifier(tree_method="hist", n_estimators=5, max_bin=16,
                                 subsample=0.5, random_state=0).fit(X, y > 0, sample_weight=w)
    assert calls == [1]
    X32 = X.astype(np.float32)
    XT = np.ascontiguousarray(X32.T)
    cuts = fixed(XT, w, 16, lambda: presort(X32))[1]
    # a weight of k is the row k times over; zero: the row is not there (not the hessians)
    keep = np.repeat(np.arange(len(y)), w.astype(int))
    X2 = X32[keep]
    cuts2 = fixed(np.ascontiguousarray(X2.T), np.ones(len(keep)), 16, None)[1]
    assert all(np.array_equal(bits(a), bits(b)) for a, b in zip(cuts, cuts2))
    n_tests = 0
    for t in est.model_.trees:  # every numeric test is one of the fit's cuts, "x < cut"
        for nd in t.nodes:
            if isinstance(nd, Split) and np.isfinite(nd.test.threshold):
                assert nd.test.op == "<" and nd.test.dtype == "float32"
                assert np.float32(nd.test.threshold) in cuts[nd.test.feature]
                n_tests += 1
    assert n_tests > 20


@pytest.mark.parametrize("max_bin", [2, 16, 256, 70000])
def test_unit_weights_cut_as_weighted_quantiles_do(max_bin):
    """All weights 1.0: cuts from sorted values (no presort); equal weights 2.0: the weighted
    quantiles of quantile_bins. The same cuts (+0.0 for a zero) and the same bins."""
    X, _ = odd_data(7)
    X32 = X.astype(np.float32)
    XT = np.ascontiguousarray(X32.T)
    n = len(X)
    unit = newton_hist.fixed_bins(XT, np.ones(n), max_bin, None)
    twos = newton_hist.fixed_bins(XT, np.full(n, 2.0), max_bin, lambda: presort(X32))
    assert sum(len(c) for c in unit[1]) >= min(30, 6 * (max_bin - 1))
    for a, b in zip(unit[1], twos[1]):
        assert a.dtype == b.dtype == np.float32 and np.array_equal(bits(a), bits(b))
        assert not np.signbit(a[a == 0]).any()
    for got in (unit, twos):
        assert got[0].dtype == (np.uint16 if max_bin < 65536 else np.int32)
        assert got[0].flags.c_contiguous and got[0].shape == XT.shape
    assert np.array_equal(unit[0], twos[0])
    # bin(x) = the number of cuts <= x, NaN in the last slot
    f = 2
    want = np.where(np.isnan(XT[f]), max_bin, np.searchsorted(unit[1][f], XT[f], side="right"))
    assert np.array_equal(unit[0][f], want)


def test_hist_matches_approx_where_both_must():
    """With unit hessians (squared error, no weights) approx draws the same cuts as hist,
    and every root (no subtraction yet) is the same; later nodes may differ only by the
    subtracted sums' rounding, so the training loss stays close."""
    X, y = odd_data(6, inf=False)
    kw = {"n_estimators": 10, "max_bin": 32}
    a = XGBoostStyleRegressor(tree_method="approx", **kw).fit(X, y)
    h = XGBoostStyleRegressor(tree_method="hist", **kw).fit(X, y)
    for ta, th in zip(a.model_.trees, h.model_.trees):
        assert ta.nodes[0].test == th.nodes[0].test
    ra, rh = (np.mean((evaluate.predict_value(m.model_, X) - y) ** 2) for m in (a, h))
    assert abs(ra - rh) <= 0.02 * ra


def test_bad_tree_method_names_hist():
    X, y = odd_data(1, inf=False)
    with pytest.raises(RulegenError, match="'exact', 'approx' or 'hist'"):
        XGBoostStyleRegressor(tree_method="hists").fit(X, y)


def test_cli_fits_hist_and_refuses_a_bad_method(tmp_path, capsys):
    X, y = odd_data(3, n=200, inf=False)
    path = tmp_path / "d.csv"
    rows = ["a,b,c,y"] + [",".join("" if np.isnan(v) else repr(float(v)) for v in r)
                          for r in np.column_stack([X[:, :3], y])]
    path.write_text("\n".join(rows) + "\n")
    out = tmp_path / "m.json"
    base = ["fit", str(path), "--target", "y", "--algorithm", "xgboost_style",
            "--param", "n_estimators=3", "-o", str(out)]
    assert main([*base, "--param", "tree_method=hist"]) == 0
    model = serialize.loads(out.read_text())
    assert dict(model.provenance.params)["tree_method"] == "hist"
    capsys.readouterr()
    assert main([*base, "--param", "tree_method=hist2"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "tree_method" in err and "'hist'" in err
