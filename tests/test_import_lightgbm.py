"""LightGBM importer: LightGBM's own predictions == evaluator == generated Python == C (== SQL),
bit for bit, on training rows, threshold probes (each threshold, one float64 step either side,
the float32 neighbours), NaN, zeros, tiny values and unseen categories."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from irfixtures import labels_for
from run_c import run_c
from run_python import run_python

from rulegen.codegen.registry import generate
from rulegen.errors import ModelFormatError, UnsupportedFeatureError
from rulegen.importers import lightgbm as lgbi
from rulegen.importers.lightgbm_tree import K_ZERO
from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import Leaf

import lightgbm as lgb  # noqa: E402
from run_sql import check_sql

FIXTURES = Path(__file__).parent / "fixtures" / "lightgbm"
QUIET = {"verbose": -1, "num_threads": 1, "seed": 0, "deterministic": True}
UP, DOWN = math.inf, -math.inf


# --- probes ---------------------------------------------------------------------------------


def _sections(text: str):
    """(split_feature, threshold, decision_type, cat_sets) per tree, parsed independently."""
    out, cur = [], None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key == "Tree":
            cur = {}
            out.append(cur)
        elif cur is not None and key in ("split_feature", "threshold", "decision_type",
                                         "cat_boundaries", "cat_threshold"):
            cur[key] = [float(v) for v in value.split()]
        if line == "end of trees":
            break
    return out


def _f32_neighbours(t: float) -> list[float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        f = np.float32(t)
    return [float(f), float(np.nextafter(f, np.float32(UP))), float(np.nextafter(f, np.float32(DOWN)))]


def probe_values(text: str, n_features: int, categorical=()) -> dict[int, set]:
    """Values worth trying for each feature: around every threshold / bitset code, and the
    special values (NaN, signed zeros, the zero band, infinities)."""
    special = [math.nan, 0.0, -0.0, 1e-40, -1e-40, 5e-324, UP, DOWN]
    for z in (K_ZERO, -K_ZERO, 1e-35, -1e-35):
        special += [z, math.nextafter(z, UP), math.nextafter(z, DOWN)]
    vals = {f: set(special) for f in range(n_features)}
    for sec in _sections(text):
        for node, (f, t, dt) in enumerate(zip(sec.get("split_feature", []), sec.get("threshold", []),
                                             sec.get("decision_type", []))):
            f = int(f)
            if int(dt) & 1:
                b, words = sec["cat_boundaries"], sec["cat_threshold"]
                lo, hi = int(b[int(t)]), int(b[int(t) + 1])
                codes = [32 * j + k for j, w in enumerate(words[lo:hi]) for k in range(32) if int(w) >> k & 1]
                vals[f].update(float(c) for c in codes)
                vals[f].update(float(c + 1) for c in codes)
            else:
                vals[f].update([t, math.nextafter(t, UP), math.nextafter(t, DOWN), *_f32_neighbours(t)])
    for f, (n_cat) in dict(categorical).items():
        vals[f] = {v for v in vals[f] if math.isnan(v) or (math.isfinite(v) and v == int(v))}
        vals[f].update([-1.0, -2.0, float(n_cat), float(n_cat + 7), 1e6, *map(float, range(n_cat))])
    return vals


def probe_rows(X: np.ndarray, text: str, categorical=(), seed: int = 0) -> np.ndarray:
    """Training rows, then one row per (feature, probe value) built on a training row, then rows
    with half their values missing."""
    rng = np.random.default_rng(seed)
    rows = [X]
    for f, values in probe_values(text, X.shape[1], categorical).items():
        for v in sorted(values, key=lambda v: (math.isnan(v), v)):
            r = X[rng.integers(len(X))].copy()
            r[f] = v
            rows.append(r[None, :])
    holes = X[rng.integers(len(X), size=40)].copy()
    holes[rng.random(holes.shape) < 0.5] = np.nan
    rows.append(holes)
    return np.vstack(rows)


# --- the comparison -------------------------------------------------------------------------


def _bits(a) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).view(np.uint64)


def assert_bits(got, want, what: str):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    bad = np.flatnonzero((_bits(got) != _bits(want)).reshape(len(got), -1).any(axis=1))
    assert not bad.size, (f"{what}: {bad.size} rows differ, first row {bad[0]}: "
                          f"{got[bad[0]]!r} != {want[bad[0]]!r}")


def check(booster, model, X, *, estimator=None, c=True, sql=(), raw_divisor=None):
    """Everything that must agree on rows X (category codes for categorical features)."""
    raw_lgb = booster.predict(X, raw_score=True).reshape(len(X), -1)
    if raw_divisor is not None:  # boosting=rf: LightGBM's raw score is the sum, not the mean
        raw_lgb = raw_lgb / raw_divisor
    raw = ev.raw_scores(model, X)
    assert_bits(raw, raw_lgb, "evaluator raw vs LightGBM raw")
    out = booster.predict(X).reshape(len(X), -1)
    if model.target.task == "classification":
        proba = ev.predict_proba(model, X)
        want = np.hstack([1 - out, out]) if out.shape[1] == 1 else out
        assert_bits(proba, want, "evaluator proba vs LightGBM predict")
        cls = ev.predict_class_index(model, X)
        assert np.array_equal(cls, np.argmax(want, axis=1))
        if estimator is not None:
            assert_bits(proba, estimator.predict_proba(X), "evaluator vs predict_proba")
            labels = np.asarray(model.target.classes, dtype=object)[cls]
            assert list(labels) == list(estimator.predict(X))
    else:
        proba, cls = ev.predict_value(model, X), None
        assert_bits(proba, out, "evaluator values vs LightGBM predict")
    py = run_python(model, labels_for(model, X))
    assert_bits(py.raw, raw, "python raw")
    assert_bits(py.outputs, proba, "python outputs")
    if cls is not None:
        assert np.array_equal(py.class_index, cls)
    if c:
        res = run_c(generate(model, "c", name="m"), "m", X)
        assert_bits(res["raw"], raw, "C raw")
        assert_bits(res["out"], proba, "C outputs")
        if cls is not None:
            assert np.array_equal(res["class"], cls)
    for dialect in sql:
        check_sql(model, X, dialect)


def decision_types(text: str) -> set[int]:
    return {int(d) for sec in _sections(text) for d in sec.get("decision_type", [])}


# --- trained models ---------------------------------------------------------------------------


def _data(n=500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 5, n)  # integer-valued: thresholds sit between ties
    return rng, X


def test_binary_with_nan_default_left_and_right():
    rng, X = _data()
    X[rng.random(500) < 0.25, 0] = np.nan
    X[rng.random(500) < 0.25, 1] = np.nan
    # NaN in feature 0 behaves like a high value, in feature 1 like a low one
    s = np.where(np.isnan(X[:, 0]), 2.0, X[:, 0]) + np.where(np.isnan(X[:, 1]), -2.0, X[:, 1]) + X[:, 3] / 3
    y = (s + rng.normal(size=500) * 0.3 > 0.5).astype(int)
    b = lgb.train({"objective": "binary", "num_leaves": 15, **QUIET}, lgb.Dataset(X, y), 40)
    text = b.model_to_string()
    assert {8, 10} <= decision_types(text)  # missing_type NaN, default right and default left
    model = lgbi.from_booster(b)
    assert model.link == "sigmoid" and model.target.classes == (0, 1) and model.base_score == (0.0,)
    check(b, model, probe_rows(X, text), sql=("sqlite", "duckdb", "postgres"))


def test_multiclass_classifier_with_labels_and_categorical():
    rng, X = _data(600, 1)
    X[:, 2] = rng.integers(0, 12, 600)
    X[rng.random(600) < 0.1, 2] = np.nan
    y = np.array(["ant", "bee", "cat", "dog"])[(np.isin(X[:, 2], [1, 4, 9]) * 2
                                                + (X[:, 0] > 0) + (X[:, 1] > 1)) % 4]
    est = lgb.LGBMClassifier(n_estimators=25, num_leaves=8, min_child_samples=5, min_data_per_group=5,
                             cat_smooth=1, **QUIET)
    est.fit(X, y, categorical_feature=[2])
    text = est.booster_.model_to_string()
    assert 1 in {d & 1 for d in decision_types(text)}  # categorical splits were made
    model = lgbi.from_booster(est)
    assert model.target.classes == ("ant", "bee", "cat", "dog") and model.link == "softmax"
    assert [t.output for t in model.trees[:8]] == [0, 1, 2, 3] * 2
    assert model.features[2].kind == "categorical"
    n_cat = len(model.features[2].categories)
    check(est.booster_, model, probe_rows(X, text, {2: n_cat}), estimator=est, sql=("sqlite", "duckdb", "postgres"))


def test_regression_saved_file_and_integer_features(tmp_path):
    rng, X = _data(seed=2)
    X[:, 0] = rng.integers(-3, 4, 500)
    y = X[:, 0] ** 2 + X[:, 3] + rng.normal(size=500) * 0.1
    b = lgb.train({"objective": "regression", "num_leaves": 12, **QUIET}, lgb.Dataset(X, y), 30)
    path = tmp_path / "model.txt"
    b.save_model(str(path))
    from_file = lgbi.load(path)
    assert from_file == lgbi.load(str(path)) == lgbi.load(path.read_text())
    assert from_file.trees == lgbi.from_booster(b).trees
    assert [f.name for f in from_file.features] == [f"Column_{i}" for i in range(4)]
    reloaded = lgb.Booster(model_file=str(path))
    check(reloaded, from_file, probe_rows(X, path.read_text()), sql=("sqlite", "duckdb", "postgres"))


def test_poisson_and_feature_names():
    rng, X = _data(seed=3)
    y = rng.poisson(np.exp(0.5 * X[:, 0] + 0.2 * X[:, 3]))
    ds = lgb.Dataset(X, y, feature_name=["age", "dose", "x_2", "visits"])
    b = lgb.train({"objective": "poisson", "num_leaves": 8, **QUIET}, ds, 30)
    model = lgbi.from_booster(b)
    assert model.link == "exp" and [f.name for f in model.features] == ["age", "dose", "x_2", "visits"]
    check(b, model, probe_rows(X, b.model_to_string()))


def test_zero_as_missing():
    rng, X = _data(1500, seed=4)
    X[rng.random((1500, 4)) < 0.3] = 0.0
    # zeros of feature 0 act like big values: LightGBM then sends "missing" right past a
    # positive threshold, whose left side is x < -kZeroThreshold or kZeroThreshold < x <= t
    y = np.where(X[:, 0] == 0, 3, np.where(X[:, 0] < 0.5, -1, 2)) + np.where(X[:, 1] == 0, -2, X[:, 1])
    b = lgb.train({"objective": "regression", "num_leaves": 20, "zero_as_missing": True, **QUIET},
                  lgb.Dataset(X, y + rng.normal(size=1500) * 0.1), 25)
    text = b.model_to_string()
    assert decision_types(text) <= {4, 6} and {4, 6} <= decision_types(text)
    mismatched = [t for sec in _sections(text) for t, d in zip(sec["threshold"], sec["decision_type"])
                  if (d == 4 and t > K_ZERO) or (d == 6 and t < -K_ZERO)]
    assert mismatched  # the case that needs copies of a subtree
    model = lgbi.from_booster(b)
    check(b, model, probe_rows(X, text))


def test_missing_type_none_sends_nan_where_zero_goes():
    rng, X = _data(seed=5)
    y = X[:, 0] - X[:, 1] + rng.normal(size=500) * 0.1
    b = lgb.train({"objective": "regression", "num_leaves": 10, **QUIET}, lgb.Dataset(X, y), 20)
    text = b.model_to_string()
    assert decision_types(text) <= {0, 2} and 2 in decision_types(text)  # missing_type None
    Xp = probe_rows(X, text)
    Xp[::3, :2] = np.nan
    check(b, lgbi.from_booster(b), Xp)


def test_categorical_codes_unseen_negative_and_nan():
    rng = np.random.default_rng(6)
    X = np.column_stack([rng.integers(0, 40, 800), rng.normal(size=800)]).astype(float)
    X[rng.random(800) < 0.05, 0] = np.nan
    y = (np.isin(X[:, 0], [0, 3, 7, 31, 32, 33, 38]) + (X[:, 1] > 0.3) + rng.random(800) * 0.4 > 0.9)
    params = {"objective": "binary", "num_leaves": 8, "min_data_per_group": 3, "cat_smooth": 1,
              "max_cat_to_onehot": 2, "cat_l2": 1, **QUIET}
    b = lgb.train(params, lgb.Dataset(X, y.astype(int), categorical_feature=[0]), 30)
    text = b.model_to_string()
    model = lgbi.from_booster(b)
    n_cat = len(model.features[0].categories)
    assert n_cat >= 34  # codes past one 32-bit word of the bitset
    Xp = probe_rows(X, text, {0: n_cat})
    check(b, model, Xp, sql=("sqlite", "duckdb", "postgres"))
    # categorical="numeric" is exact for *every* float, truncation included; the categorical
    # IR treats a non-integer as an unseen category (right) where LightGBM truncates it
    numeric = lgbi.from_booster(b, categorical="numeric")
    odd = np.array([[v, 0.0] for v in (-1.5, -1.0, -0.5, 0.5, 2.5, 3.25, 31.9, 32.5, 1e-40, 39.999,
                                       1e10, 3e9, UP, DOWN)])
    check(b, numeric, np.vstack([Xp, odd]), c=False)
    lgb_raw = b.predict(np.array([[3.5, 0.0], [3.0, 0.0]]), raw_score=True)
    assert lgb_raw[0] == lgb_raw[1]  # LightGBM: int(3.5) == 3
    assert ev.raw_scores(model, np.array([[3.5, 0.0]]))[0, 0] == \
        ev.raw_scores(model, np.array([[-1.0, 0.0]]))[0, 0]  # IR: 3.5 is unseen, like -1


def test_rf_average_output_and_early_stopping():
    _, X = _data(seed=7)
    y = (X[:, 0] + X[:, 3] > 2).astype(int)
    b = lgb.train({"objective": "binary", "boosting": "rf", "bagging_fraction": 0.6, "bagging_freq": 1,
                   "num_leaves": 6, **QUIET}, lgb.Dataset(X, y), 7)
    model = lgbi.from_booster(b)
    assert model.aggregation == "mean"
    check(b, model, probe_rows(X, b.model_to_string()), raw_divisor=7)
    valid = lgb.Dataset(X[:100], y[:100])
    b2 = lgb.train({"objective": "binary", "num_leaves": 6, "learning_rate": 0.5, **QUIET},
                   lgb.Dataset(X[100:], y[100:]), 200, valid_sets=[valid],
                   callbacks=[lgb.early_stopping(3, verbose=False)], keep_training_booster=True)
    assert b2.best_iteration < b2.current_iteration()
    m2 = lgbi.from_booster(b2)
    assert len(m2.trees) == b2.best_iteration
    check(b2, m2, X, c=False)


# --- hand-written models: every missing type, default direction and zero-band threshold --------


def _tree_text(i, nodes, leaves, cat_sets=()):
    col = lambda k: " ".join(repr(n[k]) for n in nodes)
    lines = [f"Tree={i}", f"num_leaves={len(leaves)}", f"num_cat={len(cat_sets)}",
             f"split_feature={col(0)}", f"threshold={col(1)}", f"decision_type={col(2)}",
             f"left_child={col(3)}", f"right_child={col(4)}",
             "leaf_value=" + " ".join(repr(v) for v in leaves)]
    if cat_sets:
        bounds, words = [0], []
        for s in cat_sets:
            w = [0] * (max(s, default=0) // 32 + 1)
            for k in s:
                w[k // 32] |= 1 << (k % 32)
            words += w
            bounds.append(len(words))
        lines += ["cat_boundaries=" + " ".join(map(str, bounds)),
                  "cat_threshold=" + " ".join(map(str, words))]
    return "\n".join(lines + ["is_linear=0", "shrinkage=1", ""])


def _model_text(trees, n_features=1, infos=None):
    head = ["tree", "version=v4", "num_class=1", "num_tree_per_iteration=1", "label_index=0",
            f"max_feature_idx={n_features - 1}", "objective=regression",
            "feature_names=" + " ".join(f"f{i}" for i in range(n_features)),
            "feature_infos=" + " ".join(infos or ["[-1:1]"] * n_features), ""]
    return "\n".join(head) + "\n" + "\n".join(trees) + "\nend of trees\n"


BAND = [-2.5, -K_ZERO, math.nextafter(-K_ZERO, 0), -1e-36, 0.0, 1e-36, K_ZERO,
        math.nextafter(K_ZERO, 1), 3.0]


def test_every_missing_type_and_zero_band_threshold():
    """One stump per (threshold, missing type, default direction); leaf 2**-i identifies the
    path of every stump in the raw sum. Thresholds inside the zero band matter because LightGBM
    turns every |x| <= kZeroThreshold into 0.0 before the trees see it."""
    trees, i = [], 0
    for t in BAND:
        for missing_type in (0, 1, 2):
            for default_left in (0, 2):
                trees.append(_tree_text(i, [(0, t, 4 * missing_type + default_left, -1, -2)],
                                        [2.0 ** -i, 0.0]))
                i += 1
    text = _model_text(trees)
    b = lgb.Booster(model_str=text)
    model = lgbi.loads(text)
    X = np.array(sorted(probe_values(text, 1)[0], key=lambda v: (math.isnan(v), v)))[:, None]
    check(b, model, X, sql=("sqlite", "duckdb", "postgres"))


def test_nested_zero_missing_splits_copy_and_prune():
    """Zero-missing splits with the default away from zero, nested on one feature: each needs
    a copy of a subtree per piece of its left side (pruned of the splits decided there)."""
    nodes = [(0, 2.0, 4, 1, 2), (1, 0.0, 4, 3, -2), (0, -1.0, 6, -3, -4),
             (0, -0.25, 4, 4, -5), (1, 0.1, 8, -1, -6)]
    leaves = [2.0 ** -k for k in range(6)]
    text = _model_text([_tree_text(0, nodes, leaves)], n_features=2)
    model = lgbi.loads(text)
    values = [n.value for n in model.trees[0].nodes if isinstance(n, Leaf)]
    assert len(values) > len(set(values))  # copies were needed
    b = lgb.Booster(model_str=text)
    probes = probe_values(text, 2)
    X = np.array([(u, v) for u in probes[0] for v in probes[1]])
    check(b, model, X)
    with pytest.raises(UnsupportedFeatureError, match="max_nodes"):
        lgbi.loads(text, max_nodes=5)


def test_categorical_bitsets_by_hand():
    sets = [(0, 3, 31, 32, 40), (1, 2), (0,), (5,), (63, 64, 65), ()]
    trees = [_tree_text(i, [(0, float(i), 1 if i % 2 else 9, -1, -2)], [2.0 ** -i, 0.0],
                        cat_sets=sets[:i + 1]) for i in range(len(sets))]
    trees.append(_tree_text(len(sets), [], [0.25]))  # a one-leaf tree, as LightGBM writes it
    text = _model_text(trees, infos=["0:1:2:3:5:31:32:40:63:64:65"])
    b = lgb.Booster(model_str=text)
    codes = [-3.0, -1.0, -0.0, *map(float, range(70)), 1000.0, 2.0 ** 31, math.nan]
    model = lgbi.loads(text)
    assert model.features[0].categories == tuple(range(66))
    check(b, model, np.array(codes)[:, None], sql=("sqlite", "duckdb", "postgres"))
    odd = [-1.5, -0.5, 1e-40, 0.5, 0.999, 2.99, 31.5, 40.5, 64.9, 3e9, 1e300, UP, DOWN]
    check(b, lgbi.loads(text, categorical="numeric"), np.array(codes + odd)[:, None])


def test_stored_fixture_multiclass_categorical():
    """A small model saved by LightGBM 4.7 (tests/fixtures/lightgbm/multiclass_cat.txt)."""
    path = FIXTURES / "multiclass_cat.txt"
    model = lgbi.load(path)
    b = lgb.Booster(model_file=str(path))
    assert model.target.classes == (0, 1, 2) and model.features[1].kind == "categorical"
    rng = np.random.default_rng(8)
    X = np.column_stack([rng.normal(size=200), rng.integers(-1, 9, 200)]).astype(float)
    X[::7, 0] = np.nan
    check(b, model, np.vstack([X, probe_rows(X, path.read_text(), {1: len(model.features[1].categories)})]))


# --- what is refused ---------------------------------------------------------------------------


def _small(objective="regression", **params):
    rng, X = _data(200, seed=9)
    y = (X[:, 0] > 0).astype(int) if objective in ("binary", "cross_entropy_lambda") else X[:, 0]
    if objective.startswith("multiclass"):
        y = rng.integers(0, 3, 200)
        params["num_class"] = 3
    return lgb.train({"objective": objective, "num_leaves": 4, **QUIET, **params}, lgb.Dataset(X, y), 3)


@pytest.mark.parametrize("objective, params, message", [
    ("binary", {"sigmoid": 2.0}, "sigmoid"),
    ("regression", {"linear_tree": True}, "linear trees"),
    ("regression", {"reg_sqrt": True}, "sqrt"),
    ("cross_entropy_lambda", {}, "cross_entropy_lambda"),
    ("multiclass", {"boosting": "rf", "bagging_fraction": 0.5, "bagging_freq": 1}, "random forests"),
])
def test_unsupported(objective, params, message):
    with pytest.raises(UnsupportedFeatureError, match=message):
        lgbi.from_booster(_small(objective, **params))


def test_multiclassova_is_supported():
    b = _small("multiclassova")
    model = lgbi.from_booster(b)
    assert model.link == "sigmoid" and model.n_raw == 3
    check(b, model, _data(200, seed=9)[1])


@pytest.fixture(scope="module")
def good_text() -> str:
    return _small().model_to_string()


def _line_of(text: str, prefix: str, nth: int = 0) -> int:
    return [i for i, l in enumerate(text.splitlines(), 1) if l.startswith(prefix)][nth]


def test_malformed_truncated(good_text):
    cut = good_text[:good_text.index("Tree=1")]
    with pytest.raises(ModelFormatError, match=rf"line {len(cut.splitlines())}: .*truncated"):
        lgbi.loads(cut)
    mid = good_text[:good_text.index("leaf_value", good_text.index("Tree=2"))] + "\nend of trees\n"
    with pytest.raises(ModelFormatError, match=r"line \d+: Tree=2 has no 'leaf_value=' line"):
        lgbi.loads(mid)


def test_malformed_bad_number_names_the_line(good_text, tmp_path):
    line = _line_of(good_text, "threshold=", 1)
    lines = good_text.splitlines()
    lines[line - 1] = lines[line - 1].replace(" ", " 0.5x ", 1)
    path = tmp_path / "bad.txt"
    path.write_text("\n".join(lines))
    with pytest.raises(ModelFormatError, match=rf"bad.txt: line {line}: threshold: '0.5x' is not a number"):
        lgbi.load(path)


@pytest.mark.parametrize("edit, message", [
    (lambda t: t[:t.index("Tree=0")] + "end of trees\n", r"line \d+: the model has no 'Tree=' sections"),
    (lambda t: "model\n" + t, r"line 1: not a LightGBM text model"),
    (lambda t: t.replace("Tree=1", "Tree=7"), r"line \d+: expected 'Tree=1'"),
    (lambda t: t.replace("decision_type=2", "decision_type=14", 1), r"decision_type\[0\]: 14"),
    (lambda t: t.replace("left_child=", "left_child=5", 1), r"left_child\[0\]"),
    (lambda t: t.replace("max_feature_idx=3", "max_feature_idx=x"), r"max_feature_idx: 'x'"),
    (lambda t: t.replace("num_leaves=4", "num_leaves=5", 1), r"expected 4 values for 5 leaves"),
    (lambda t: t.replace("objective=regression", "objective=multiclass num_class:3"),
     r"line \d+: objective 'multiclass num_class:3' does not fit"),
])
def test_malformed_structure(good_text, edit, message):
    with pytest.raises(ModelFormatError, match=message):
        lgbi.loads(edit(good_text))


def test_not_a_booster():
    with pytest.raises(TypeError):
        lgbi.from_booster(object())
    with pytest.raises(ModelFormatError, match="cannot read"):
        lgbi.load("/nonexistent/model.txt")


# --- models trained on pandas DataFrames ------------------------------------------------------


def _pandas_frame(n: int, seed: int):
    import pandas as pd

    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "relation": pd.Categorical(rng.choice(["wife", "husband", "own-child", "unmarried"], n)),
        "num": rng.standard_normal(n),
        "grade": pd.Categorical(rng.choice([3, 1, 2], n)),
    })
    df.loc[rng.random(n) < 0.05, "num"] = np.nan
    df.loc[rng.random(n) < 0.05, "relation"] = np.nan
    y = ((df["relation"] == "wife") + df["num"].fillna(0) + (df["grade"] == 2)
         + rng.standard_normal(n) * 0.3 > 0.8).astype(int)
    return df, y


def _codes(df) -> np.ndarray:
    """The frame as LightGBM feeds it to the trees: category codes, NaN for missing."""
    cols = [df[c].cat.codes.to_numpy(float) if df[c].dtype == "category" else df[c].to_numpy(float)
            for c in df.columns]
    X = np.column_stack(cols)
    for j, c in enumerate(df.columns):
        if df[c].dtype == "category":
            X[X[:, j] < 0, j] = np.nan
    return X


def test_pandas_category_columns_labels_in_labels_out(tmp_path):
    """A model trained on pandas 'category' columns: the importer reads the pandas_categorical
    line, so categories are the labels; LightGBM on the DataFrame == evaluator == every target,
    and `rulegen predict` on a CSV of the text values gives LightGBM's probabilities."""
    import pandas as pd

    from rulegen.cli import main

    df, y = _pandas_frame(2000, 11)
    est = lgb.LGBMClassifier(n_estimators=20, num_leaves=8, min_child_samples=5, **QUIET).fit(df, y)
    path = tmp_path / "lgb.txt"
    est.booster_.save_model(str(path))
    model = lgbi.load(path)
    assert model.features[0].categories == ("husband", "own-child", "unmarried", "wife")
    assert model.features[2].categories == (1, 2, 3)
    X = _codes(df)
    assert_bits(ev.predict_proba(model, X), est.predict_proba(df), "evaluator vs predict_proba(DataFrame)")
    check(est.booster_, model, X, sql=("sqlite", "duckdb", "postgres"))
    # new rows as text, with a missing value and a category never seen in training
    new = pd.DataFrame({"relation": ["wife", "parnets", None, "husband", "own-child"],
                        "num": [0.5, 1.0, np.nan, -2.0, 0.25], "grade": [2, 3, 1, 3, 2]})
    csv_path = tmp_path / "new.csv"
    new.to_csv(csv_path, index=False)
    out = tmp_path / "pred.csv"
    assert main(["predict", str(path), str(csv_path), "-o", str(out)]) == 0
    got = pd.read_csv(out)
    frame = new.assign(relation=pd.Categorical(new["relation"]), grade=pd.Categorical(new["grade"]))
    want = est.predict_proba(frame)[:, 1]
    assert_bits(got["prob_1"].to_numpy(), want, "rulegen predict on text vs LightGBM on the DataFrame")


def test_pandas_categorical_that_cannot_be_matched_is_refused(tmp_path):
    """An int column named in categorical_feature beside a pandas category column: the file
    no longer says which list belongs to which feature, so the import stops, naming the line."""
    df, y = _pandas_frame(600, 12)
    df["code"] = np.random.default_rng(1).integers(0, 5, len(df))
    est = lgb.LGBMClassifier(n_estimators=5, num_leaves=4, min_child_samples=5, **QUIET)
    est.fit(df.drop(columns="grade"), y, categorical_feature=["relation", "code"])
    text = est.booster_.model_to_string()
    assert 'pandas_categorical:[["husband"' in text
    with pytest.raises(ModelFormatError, match=r"line \d+: pandas_categorical lists 1 category "
                                                r"columns but the model has 2 categorical features"):
        lgbi.loads(text)


def test_unsupported_objective_names_the_file(tmp_path):
    rng, X = _data(200, 3)
    b = lgb.train({"objective": "binary", "sigmoid": 2.0, "num_leaves": 4, **QUIET},
                  lgb.Dataset(X, (X[:, 0] > 0).astype(int)), 3)
    path = tmp_path / "s2.txt"
    b.save_model(str(path))
    with pytest.raises(UnsupportedFeatureError, match=rf"^{path}: target 'rulegen IR' cannot express"):
        lgbi.load(path)
