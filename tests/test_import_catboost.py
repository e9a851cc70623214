"""CatBoost importer: CatBoost's own raw values (``prediction_type="RawFormulaVal"``) ==
evaluator == generated Python == C == SQL, bit for bit, on training rows and probes (every
border, float64 and float32 steps either side, the float64 midpoints where float32 rounding
flips, NaN, +-inf, signed zeros, huge values), for each nan_mode, one-hot categories (text and
integers, unseen ones), symmetric and non-symmetric trees."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from irfixtures import probe_rows
from targetcheck import assert_targets_exact

from rulegen.errors import ModelFormatError, UnsupportedFeatureError
from rulegen.importers import catboost as cbi
from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import CategoricalTest, DefaultChild, Leaf, NumericTest, Split

catboost = pytest.importorskip("catboost")

QUIET = {"thread_count": 1, "random_seed": 0, "allow_writing_files": False, "verbose": 0}


def _bits(a) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).view(np.uint64)


def assert_bits(got, want, what: str):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    bad = np.flatnonzero((_bits(got) != _bits(want)).reshape(len(got), -1).any(axis=1))
    assert not bad.size, (f"{what}: {bad.size} rows differ, first row {bad[0]}: "
                          f"{got[bad[0]]!r} != {want[bad[0]]!r}")


def _numeric_data(seed=0, n=300):
    """Four features: NaN in features 0 and 2 only (so 1 and 3 have has_nans false)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[rng.random(n) < 0.15, 0] = np.nan
    X[rng.random(n) < 0.10, 2] = np.nan
    y = X[:, 1] + np.nan_to_num(X[:, 0], nan=2.0) + np.nan_to_num(X[:, 2], nan=-1.5) + 0.3 * X[:, 3]
    return X, y


def _rows(model, X, seed=0):
    """Training rows, the probes at every border, rows with half their values missing."""
    rng = np.random.default_rng(seed)
    holes = X[rng.integers(len(X), size=40)].copy()
    holes[rng.random(holes.shape) < 0.5] = np.nan
    return np.vstack([X, probe_rows(model, n_random=20), holes])


def _raw(cb_model, X):
    n = X.num_row() if isinstance(X, catboost.Pool) else len(X)
    return cb_model.predict(X, prediction_type="RawFormulaVal").reshape(n, -1)


def check(cb_model, model, X, *, proba_tolerance=0.0):
    """CatBoost == evaluator on X (numeric features only), then every target == evaluator."""
    raw = ev.raw_scores(model, X)
    assert_bits(raw, _raw(cb_model, X), "evaluator raw vs CatBoost RawFormulaVal")
    if model.target.task == "classification":
        proba = ev.predict_proba(model, X)
        want = cb_model.predict_proba(X)
        if proba_tolerance:
            assert np.max(np.abs(proba - want)) <= proba_tolerance
        else:
            assert_bits(proba, want, "evaluator proba vs CatBoost predict_proba")
        labels = np.asarray(model.target.classes, dtype=object)[ev.predict_class_index(model, X)]
        assert list(labels) == list(cb_model.predict(X).ravel())
    else:
        assert_bits(ev.predict_value(model, X)[:, 0], cb_model.predict(X), "evaluator vs predict")
    assert_targets_exact(model, X[:400], n_random=10)


# --- numeric models, each nan_mode --------------------------------------------------------


@pytest.mark.parametrize("nan_mode", ["Min", "Max", "Forbidden"])
def test_regression_each_nan_mode(nan_mode):
    X, y = _numeric_data()
    Xt = np.nan_to_num(X) if nan_mode == "Forbidden" else X
    m = catboost.CatBoostRegressor(iterations=30, depth=4, nan_mode=nan_mode, **QUIET).fit(Xt, y)
    model = cbi.from_catboost(m)
    assert model.link == "identity" and model.target.task == "regression"
    # the NaN route of each split, as the feature's treatment says
    doc = json.loads(_json(m))
    treatment = {f["flat_feature_index"]: (f["has_nans"], f["nan_value_treatment"])
                 for f in doc["features_info"]["float_features"]}
    for tree in model.trees:
        for node in tree.nodes:
            if isinstance(node, Split):
                has_nans, how = treatment[node.test.feature]
                assert node.test.dtype == "float32" and node.test.op == "<="
                assert node.missing == DefaultChild(1 if has_nans and how == "AsTrue" else 0)
    if nan_mode == "Max":
        assert treatment[0] == (True, "AsTrue") and treatment[1] == (False, "AsIs")
    check(m, model, _rows(model, X))


def _json(m, pool=None) -> str:
    import os
    import tempfile

    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        m.save_model(tmp, format="json", pool=pool)
        return open(tmp, encoding="utf-8").read()
    finally:
        os.unlink(tmp)


def test_nan_treatment_applies_only_to_features_with_nans(tmp_path):
    """CatBoost replaces NaN by +-inf only where has_nans is true: with has_nans false, an
    AsTrue feature still sends NaN the "false" way. CatBoost never writes that pair itself,
    so the file is edited and CatBoost loads it back to answer."""
    X, y = _numeric_data(9)
    m = catboost.CatBoostRegressor(iterations=20, depth=4, nan_mode="Max", **QUIET).fit(X, y)
    doc = json.loads(_json(m))
    f0 = doc["features_info"]["float_features"][0]
    assert f0["has_nans"] is True and f0["nan_value_treatment"] == "AsTrue"
    # CatBoost's JSON reader rounds some 17-digit decimals one ulp off (see the next test):
    # leaf values with short decimals read back exactly in any reader
    for tree in doc["oblivious_trees"]:
        tree["leaf_values"] = [round(v * 1024) / 1024 for v in tree["leaf_values"]]
    doc["scale_and_bias"][1] = [round(b * 1024) / 1024 for b in doc["scale_and_bias"][1]]
    answers = []
    for has_nans in (True, False):
        f0["has_nans"] = has_nans
        path = tmp_path / f"edited_{has_nans}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        edited = catboost.CatBoostRegressor()
        edited.load_model(str(path), format="json")
        model = cbi.load(path)
        rows = _rows(model, X)
        answers.append(_raw(edited, rows))
        assert_bits(ev.raw_scores(model, rows), answers[-1], f"has_nans {has_nans}")
    assert not np.array_equal(*answers)


def test_catboost_reads_its_own_json_inexactly(tmp_path):
    """What docs/IMPORTERS.md says: CatBoost 1.2's JSON reader reads some leaf values one ulp
    off, so a model CatBoost loads from JSON can differ from the model that wrote it. The IR
    reads every decimal correctly rounded and matches the model that wrote the file."""
    X, y = _numeric_data(9)
    m = catboost.CatBoostRegressor(iterations=20, depth=4, nan_mode="Max", **QUIET).fit(X, y)
    path = tmp_path / "m.json"
    m.save_model(str(path), format="json")
    reloaded = catboost.CatBoostRegressor()
    reloaded.load_model(str(path), format="json")
    model = cbi.load(path)
    assert_bits(ev.raw_scores(model, X), _raw(m, X), "IR vs the model that wrote the file")
    assert not np.array_equal(_raw(reloaded, X), _raw(m, X))


def test_float64_rows_are_rounded_to_float32_first():
    """A float64 value between a border and the next float32 goes by its float32 rounding:
    on the tie (the midpoint) it rounds to the even neighbour."""
    X, y = _numeric_data(1)
    m = catboost.CatBoostRegressor(iterations=5, depth=3, **QUIET).fit(X, y)
    model = cbi.from_catboost(m)
    rows = []
    for tree in model.trees:
        for node in tree.nodes:
            if isinstance(node, Split):
                t = np.float32(node.test.threshold)
                up = float(np.nextafter(t, np.float32(np.inf)))
                mid = (float(t) + up) / 2
                for v in (float(t), up, mid, math.nextafter(mid, -math.inf), math.nextafter(mid, math.inf)):
                    r = X[0].copy()
                    r[node.test.feature] = v
                    rows.append(r)
    rows = np.array(rows)
    assert_bits(ev.raw_scores(model, rows), _raw(m, rows), "midpoint rows")


def test_subnormal_borders_and_inputs():
    """float32 subnormals on both sides of the comparison: CatBoost does not flush them to zero."""
    rng = np.random.default_rng(18)
    v = rng.choice([-3e-39, -1e-39, 0.0, 1e-39, 3e-39, 1.0], size=300)
    X = np.column_stack([v, rng.normal(size=300)])
    y = (v > 0) * 1.0 + (v > 2e-39) * 2 + (v < -2e-39) * 3.0
    m = catboost.CatBoostRegressor(iterations=20, depth=2, **QUIET).fit(X, y)
    model = cbi.from_catboost(m)
    borders = {n.test.threshold for t in model.trees for n in t.nodes if isinstance(n, Split)}
    assert any(0 < abs(b) < 1.18e-38 for b in borders)  # a subnormal float32 border
    tiny = np.array([-5e-39, -2e-39, -1e-45, -0.0, 0.0, 1e-45, 5e-40, 2e-39, 1e-38, 1e-300, -1e-300])
    rows = np.vstack([_rows(model, X), np.column_stack([tiny, np.zeros(len(tiny))])])
    assert_bits(ev.raw_scores(model, rows), _raw(m, rows), "subnormals")


def test_binary_logloss_probabilities_exact():
    X, y = _numeric_data(2)
    labels = np.where(y > 0.5, "yes", "no")
    m = catboost.CatBoostClassifier(iterations=40, depth=5, **QUIET).fit(X, labels)
    model = cbi.from_catboost(m)
    assert model.link == "sigmoid" and model.target.classes == ("no", "yes")
    check(m, model, _rows(model, X))


def test_multiclass_raw_exact_probabilities_within_bound():
    """MultiClass raw values are exact; CatBoost's softmax uses its own fast exp
    (FastExpWithInfInplace), so probabilities differ by at most 4.4e-16 (measured)."""
    X, y = _numeric_data(3)
    classes = np.array([3, 5, 7])[np.digitize(y, [-0.5, 1.5])]
    m = catboost.CatBoostClassifier(iterations=40, depth=4, learning_rate=0.5, **QUIET).fit(X, classes)
    model = cbi.from_catboost(m)
    assert model.link == "softmax" and model.target.classes == (3, 5, 7) and model.n_raw == 3
    rows = _rows(model, X)
    check(m, model, rows, proba_tolerance=4.5e-16)
    assert not np.array_equal(ev.predict_proba(model, rows), m.predict_proba(rows))  # not exact


@pytest.mark.parametrize("grow_policy", ["Depthwise", "Lossguide"])
def test_non_symmetric_trees(grow_policy):
    X, y = _numeric_data(4)
    kw = {"max_leaves": 12} if grow_policy == "Lossguide" else {}
    m = catboost.CatBoostRegressor(iterations=20, depth=5, grow_policy=grow_policy, nan_mode="Max",
                                   **kw, **QUIET).fit(X, y)
    model = cbi.from_catboost(m)
    assert "trees" in json.loads(_json(m))
    check(m, model, _rows(model, X))


def test_multiclass_depthwise():
    X, y = _numeric_data(5)
    m = catboost.CatBoostClassifier(iterations=15, depth=4, grow_policy="Depthwise",
                                    **QUIET).fit(X, np.digitize(y, [-0.5, 1.5]))
    model = cbi.from_catboost(m)
    check(m, model, _rows(model, X), proba_tolerance=4.5e-16)


def test_bias_is_added_after_the_trees():
    """CatBoost adds scale_and_bias's bias after summing the trees; adding it first (as a
    base_score) rounds differently on some rows, so the order is what makes this exact."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(400, 3))
    y = 1e3 + 37.1 * X[:, 0] + rng.normal(size=400)
    m = catboost.CatBoostRegressor(iterations=60, depth=3, learning_rate=0.7, **QUIET).fit(X, y)
    model = cbi.from_catboost(m)
    last = model.trees[-1]
    assert len(last.nodes) == 1 and isinstance(last.nodes[0], Leaf)
    bias = json.loads(_json(m))["scale_and_bias"][1]
    assert list(last.nodes[0].value) == bias and model.base_score == (0.0,)
    rows = _rows(model, X)
    assert_bits(ev.raw_scores(model, rows), _raw(m, rows), "bias last")
    from dataclasses import replace

    first = replace(model, trees=model.trees[:-1], base_score=tuple(bias))
    assert not np.array_equal(ev.raw_scores(first, rows), _raw(m, rows))


def test_a_thousand_trees_sum_in_model_order():
    """1,000 depth-6 trees on large values: any other order of the float64 sum would show."""
    rng = np.random.default_rng(14)
    X = rng.normal(size=(300, 5)) * 1e3
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.sin(np.nan_to_num(X[:, 0]) / 300) * 1e6 + np.nan_to_num(X[:, 1] * X[:, 2])
    m = catboost.CatBoostRegressor(iterations=1000, depth=6, learning_rate=0.3, border_count=32,
                                   **QUIET).fit(X, y)
    model = cbi.from_catboost(m)
    assert len(model.trees) == 1001
    assert_bits(ev.raw_scores(model, X), _raw(m, X), "1,000 trees")


# --- one-hot categorical features -----------------------------------------------------------


def _cat_data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = np.empty((n, 4), dtype=object)
    X[:, 0] = rng.normal(size=n)
    X[:, 1] = rng.choice(["a", "b", "c", "d", "é x"], size=n)
    X[:, 2] = rng.choice([1, 2, 30], size=n)
    X[:, 3] = rng.normal(size=n)
    X[rng.random(n) < 0.1, 3] = np.nan
    y = (X[:, 0].astype(float) + 2.0 * (X[:, 1] == "b") - (X[:, 1] == "é x") + (X[:, 2] == 30)
         + np.nan_to_num(X[:, 3].astype(float), nan=1.0))
    return X, y


def _codes(model, X) -> np.ndarray:
    """CatBoost rows -> evaluator rows: category texts become codes (-1: not a label)."""
    out = np.empty(X.shape, dtype=np.float64)
    for j, f in enumerate(model.features):
        if f.kind == "categorical":
            index = {c: i for i, c in enumerate(f.categories)}
            out[:, j] = [index.get(str(v), -1) for v in X[:, j]]
        else:
            out[:, j] = X[:, j].astype(np.float64)
    return out


def _cat_rows(model, X, cat_columns, seed=0):
    """Training rows, then every probe row that has no missing category (CatBoost refuses a
    missing categorical value), with codes turned back into CatBoost's inputs."""
    probes = probe_rows(model, seed=seed, n_random=30)
    keep = ~np.isnan(probes[:, cat_columns]).any(axis=1)
    probes = probes[keep]
    rows = np.empty(probes.shape, dtype=object)
    rows[:] = probes
    for j in cat_columns:
        cats = model.features[j].categories
        rows[:, j] = [cats[int(c)] if c in range(len(cats)) else "never-seen" for c in probes[:, j]]
    # every training category and integers as CatBoost takes them (30 and "30" are one category)
    extra = np.repeat(X[:1], 8, axis=0)
    extra[:, 1] = ["a", "b", "c", "d", "é x", "zz", "", "B"]
    extra[:, 2] = [1, 2, 30, "30", "1", 0, -1, "x"]
    return np.vstack([X, rows, extra])


def test_one_hot_categories_text_and_integers():
    X, y = _cat_data()
    pool = catboost.Pool(X, y, cat_features=[1, 2])
    m = catboost.CatBoostRegressor(iterations=40, depth=4, one_hot_max_size=10, **QUIET).fit(pool)
    model = cbi.from_catboost(m, pool=pool)
    f1, f2 = model.features[1], model.features[2]
    assert f1.kind == f2.kind == "categorical"
    assert set(f1.categories) <= {"a", "b", "c", "d", "é x"} and "b" in f1.categories
    assert set(f2.categories) <= {"1", "2", "30"} and "30" in f2.categories
    kinds = {type(n.test) for t in model.trees for n in t.nodes if isinstance(n, Split)}
    assert kinds == {NumericTest, CategoricalTest}
    rows = _cat_rows(model, X, [1, 2])
    raw = _raw(m, catboost.Pool(rows, cat_features=[1, 2]))
    assert_bits(ev.raw_scores(model, _codes(model, rows)), raw, "evaluator vs CatBoost, categories")
    assert_targets_exact(model, _codes(model, rows)[:300], n_random=10)


def test_one_hot_binary_from_a_json_file(tmp_path):
    X, y = _cat_data(1)
    pool = catboost.Pool(X, (y > 1).astype(int), cat_features=[1, 2])
    m = catboost.CatBoostClassifier(iterations=30, depth=3, one_hot_max_size=10, **QUIET).fit(pool)
    path = tmp_path / "cat.json"
    m.save_model(str(path), format="json", pool=pool)
    model = cbi.load(path)
    assert model == cbi.load(path.read_text(encoding="utf-8")) == cbi.load(path.read_bytes())
    rows = _cat_rows(model, X, [1, 2], seed=1)
    cb_pool = catboost.Pool(rows, cat_features=[1, 2])
    assert_bits(ev.raw_scores(model, _codes(model, rows)), _raw(m, cb_pool), "raw")
    assert_bits(ev.predict_proba(model, _codes(model, rows)), m.predict_proba(cb_pool), "proba")


def test_one_hot_without_the_hash_map_is_refused():
    X, y = _cat_data(2)
    pool = catboost.Pool(X, y, cat_features=[1, 2])
    m = catboost.CatBoostRegressor(iterations=10, depth=3, one_hot_max_size=10, **QUIET).fit(pool)
    with pytest.raises(ModelFormatError, match=r"cat_features_hash.*pool=train_pool"):
        cbi.from_catboost(m)


def test_ctr_model_is_refused_naming_the_feature():
    X, y = _cat_data(3)
    names = ["num", "colour", "size", "other"]
    pool = catboost.Pool(X, y, cat_features=[1, 2], feature_names=names)
    # colour has 5 categories (CTRs), size 3 (one-hot): the message names colour only
    m = catboost.CatBoostRegressor(iterations=10, depth=3, one_hot_max_size=4, **QUIET).fit(pool)
    with pytest.raises(UnsupportedFeatureError, match=r"CTR.*'colour'.*one_hot_max_size") as e:
        cbi.from_catboost(m, pool=pool)
    assert "\n" not in str(e.value) and "'size'" not in str(e.value)


# --- refusals and malformed files -------------------------------------------------------------


def _small_doc(seed=7):
    X, y = _numeric_data(seed, n=120)
    m = catboost.CatBoostRegressor(iterations=3, depth=2, **QUIET).fit(X, y)
    return m, json.loads(_json(m))


def test_scale_other_than_one_is_refused():
    m, _ = _small_doc()
    m.set_scale_and_bias(2.0, 0.25)
    with pytest.raises(UnsupportedFeatureError, match="scale 2.0"):
        cbi.from_catboost(m)
    m.set_scale_and_bias(1.0, 0.25)
    model = cbi.from_catboost(m)
    X, _ = _numeric_data(7, n=120)
    assert_bits(ev.raw_scores(model, X), _raw(m, X), "bias set by hand")


def test_unsupported_objective_is_refused():
    X, y = _numeric_data(8, n=120)
    m = catboost.CatBoostRegressor(iterations=3, depth=2, loss_function="Poisson",
                                   **QUIET).fit(X, np.abs(np.round(y)))
    with pytest.raises(UnsupportedFeatureError, match="'Poisson'"):
        cbi.from_catboost(m)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["oblivious_trees"][0]["leaf_values"].pop(), r"oblivious_trees\[0\]\.leaf_values: expected 4"),
    (lambda d: d["oblivious_trees"][1]["splits"][0].update(border=0.1),
     r"oblivious_trees\[1\]\.splits\[0\]\.border: border 0.1 is not a float32"),
    (lambda d: d["oblivious_trees"][0]["splits"][0].update(float_feature_index=9),
     r"float_feature_index: no float feature 9"),
    (lambda d: d["oblivious_trees"][0]["splits"][0].update(split_type="Estimated"),
     "'Estimated' splits"),
    (lambda d: d["features_info"]["float_features"][0].update(borders=[1.0, 0.5]),
     "borders are not strictly increasing"),
    (lambda d: d.pop("oblivious_trees"), "not a CatBoost JSON model"),
])
def test_malformed_documents(edit, message):
    _, doc = _small_doc()
    edit(doc)
    with pytest.raises((ModelFormatError, UnsupportedFeatureError), match=message):
        cbi.from_dict(doc, source="m.json")


def test_damaged_documents_raise_only_rulegen_errors():
    """Every value of a small document (categories, classes, CTRs, both tree kinds) replaced
    by something of the wrong kind, or deleted: a RulegenError each time, never a crash or a
    hang (a flat_feature_index of 2**40 once meant 2**40 features)."""
    import copy

    from rulegen.errors import RulegenError

    X, y = _cat_data(6, n=150)
    pool = catboost.Pool(X, (y > 1).astype(int), cat_features=[1, 2])
    docs = []
    for kw in ({"one_hot_max_size": 10}, {"one_hot_max_size": 2},
               {"one_hot_max_size": 10, "grow_policy": "Depthwise"}):
        m = catboost.CatBoostClassifier(iterations=2, depth=2, **kw, **QUIET).fit(pool)
        doc = json.loads(_json(m, pool))
        doc["model_info"] = {"params": {"loss_function": doc["model_info"]["params"]["loss_function"]},
                             "class_params": doc["model_info"]["class_params"]}
        docs.append(doc)

    def places(obj, path=()):
        yield path
        items = obj.items() if isinstance(obj, dict) else enumerate(obj[:2]) if isinstance(obj, list) else ()
        for k, v in items:
            yield from places(v, (*path, k))

    bad_values = [None, "x", -1, 2**40, 1.5, math.nan, [], {}, True, [1, 2]]
    count = 0
    for doc in docs:
        for place in list(places(doc))[1:]:
            for value in [...] + bad_values:  # ... means: delete it
                damaged = copy.deepcopy(doc)
                parent = damaged
                for k in place[:-1]:
                    parent = parent[k]
                if value is ...:
                    del parent[place[-1]]
                else:
                    parent[place[-1]] = value
                try:
                    cbi.from_dict(damaged)
                except RulegenError:
                    pass
                count += 1
    assert count > 1000


# --- the command line -------------------------------------------------------------------------


def _cli(capsys, *argv):
    from rulegen.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_compiles_and_converts_a_catboost_json(tmp_path, capsys):
    from run_python import run_python

    from rulegen.modelio import detect_format, load_model

    X, y = _cat_data(4)
    pool = catboost.Pool(X, (y > 1).astype(int), cat_features=[1, 2])
    m = catboost.CatBoostClassifier(iterations=20, depth=3, one_hot_max_size=10, **QUIET).fit(pool)
    path = tmp_path / "catboost.json"
    m.save_model(str(path), format="json", pool=pool)
    assert detect_format(path.read_text(encoding="utf-8")) == "catboost-json"
    code, _, err = _cli(capsys, "compile", path, "--target", "python", "-o", tmp_path / "m.py")
    assert code == 0, err
    assert "def predict" in (tmp_path / "m.py").read_text(encoding="utf-8")
    code, _, err = _cli(capsys, "convert", path, "-o", tmp_path / "ir.json")
    assert code == 0, err
    model = load_model(tmp_path / "ir.json")
    assert model == load_model(path) == cbi.load(path)
    # the generated Python takes the category texts CatBoost takes
    rows = [[float(r[0]), str(r[1]), str(r[2]), None if r[3] != r[3] else float(r[3])] for r in X]
    res = run_python(model, rows)
    assert_bits(res.raw, _raw(m, pool), "generated Python vs CatBoost")


def _one_line_exit_2(code, err):
    assert code == 2
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_cli_refusals_are_one_line(tmp_path, capsys):
    X, y = _cat_data(5)
    pool = catboost.Pool(X, y, cat_features=[1, 2], feature_names=["num", "colour", "size", "z"])
    ctr = catboost.CatBoostRegressor(iterations=5, depth=3, one_hot_max_size=4, **QUIET).fit(pool)
    ctr.save_model(str(tmp_path / "ctr.json"), format="json", pool=pool)
    code, _, err = _cli(capsys, "compile", tmp_path / "ctr.json", "--target", "python")
    _one_line_exit_2(code, err)
    assert "ctr.json" in err and "'colour'" in err and "'size'" not in err and "CTR" in err
    onehot = catboost.CatBoostRegressor(iterations=5, depth=3, one_hot_max_size=10, **QUIET).fit(pool)
    onehot.save_model(str(tmp_path / "nohash.json"), format="json")
    code, _, err = _cli(capsys, "convert", tmp_path / "nohash.json", "-o", tmp_path / "x.json")
    _one_line_exit_2(code, err)
    assert "nohash.json" in err and "pool=train_pool" in err
    onehot.save_model(str(tmp_path / "m.cbm"))
    code, _, err = _cli(capsys, "compile", tmp_path / "m.cbm", "--target", "c")
    _one_line_exit_2(code, err)
    assert "m.cbm" in err and "format='json'" in err
    doc = json.loads(_json(onehot, pool))
    doc["oblivious_trees"][0]["leaf_values"] = "oops"
    (tmp_path / "bad.json").write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = _cli(capsys, "compile", tmp_path / "bad.json", "--target", "python")
    _one_line_exit_2(code, err)
    assert "bad.json: oblivious_trees[0].leaf_values" in err


# --- more objectives ----------------------------------------------------------------------------


@pytest.mark.parametrize("loss", ["MAE", "Quantile:alpha=0.3", "Expectile:alpha=0.7", "Huber:delta=1.0",
                                  "Lq:q=1.5", "MAPE"])
def test_identity_regressions(loss):
    X, y = _numeric_data(10, n=200)
    m = catboost.CatBoostRegressor(iterations=10, depth=3, loss_function=loss, **QUIET).fit(X, y + 5)
    model = cbi.from_catboost(m)
    assert model.link == "identity"
    rows = _rows(model, X)
    assert_bits(ev.raw_scores(model, rows), _raw(m, rows), loss)
    assert_bits(ev.predict_value(model, rows)[:, 0], m.predict(rows), loss)


def test_multi_rmse():
    X, y = _numeric_data(11, n=200)
    Y = np.column_stack([y, -2 * y + X[:, 3], np.nan_to_num(X[:, 0])])
    m = catboost.CatBoostRegressor(iterations=15, depth=3, loss_function="MultiRMSE", **QUIET).fit(X, Y)
    model = cbi.from_catboost(m)
    assert model.target.n_outputs == 3 and model.n_raw == 3
    rows = _rows(model, X)
    assert_bits(ev.raw_scores(model, rows), _raw(m, rows), "MultiRMSE raw")
    assert_bits(ev.predict_value(model, rows), m.predict(rows), "MultiRMSE predict")
    assert_targets_exact(model, rows[:300], n_random=10)


def test_multiclass_one_vs_all_probabilities_exact():
    X, y = _numeric_data(12, n=250)
    classes = np.digitize(y, [-0.5, 1.5])
    m = catboost.CatBoostClassifier(iterations=15, depth=3, loss_function="MultiClassOneVsAll",
                                    **QUIET).fit(X, classes)
    model = cbi.from_catboost(m)
    assert model.link == "sigmoid" and model.n_raw == 3
    check(m, model, _rows(model, X))


def test_cross_entropy_probabilities_exact():
    X, y = _numeric_data(13, n=250)
    p = 1 / (1 + np.exp(-y))
    m = catboost.CatBoost({"iterations": 15, "depth": 3, "loss_function": "CrossEntropy",
                           **QUIET}).fit(X, p)
    model = cbi.from_catboost(m)
    assert model.link == "sigmoid"
    rows = _rows(model, X)
    assert_bits(ev.raw_scores(model, rows), _raw(m, rows), "CrossEntropy raw")
    assert_bits(ev.predict_proba(model, rows)[:, 1],
                m.predict(rows, prediction_type="Probability")[:, 1], "CrossEntropy probability")
