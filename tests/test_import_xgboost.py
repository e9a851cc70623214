"""The XGBoost importer against XGBoost itself.

Every model is trained here on seeded data (one thread: XGBoost's OpenMP threads crawl on a busy
2-core machine), imported, and run on training rows plus probes: every threshold and one float32
step either side of it (as float64 inputs), NaN, +-inf, values beyond float32, every category
code and unseen codes. Then, compared as float32:

    XGBoost margin == evaluator raw == Python target raw == C target raw (== SQL raw)
    XGBoost outputs == evaluator == Python == C (float32 links with the C library's expf)
    classes identical; SQL's ensembles round exp instead (tests/run_sql.py, docs/IMPORTERS.md)
"""

from __future__ import annotations

import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import xgboost as xgb  # noqa: E402

from irfixtures import labels_for
from run_c import have_cc, run_c
from run_python import run_python

from rulegen.codegen.registry import generate
from rulegen.errors import ModelFormatError, UnsupportedFeatureError
from rulegen.importers import xgboost as imp
from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import CategoricalTest, NumericTest, Split

import run_sql

FIXTURES = Path(__file__).parent / "fixtures" / "xgboost"


# --- helpers --------------------------------------------------------------------------------


def train(params: dict, X, y, rounds: int, **dmatrix) -> xgb.Booster:
    params = {"nthread": 1, "seed": 0, **params}
    dm = xgb.DMatrix(X, y, nthread=1, **dmatrix)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xgb.train(params, dm, rounds)


def data(seed: int, n: int = 400, p: int = 5, nan: float = 0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if nan:
        X[rng.random(X.shape) < nan] = np.nan
    return rng, X, np.nan_to_num(X)


def f32_neighbours(t: float) -> list[float]:
    f = np.float32(t)
    return [float(f), float(np.nextafter(f, np.float32(-np.inf))), float(np.nextafter(f, np.float32(np.inf)))]


def probes(model, X, rng, n_train: int = 150, limit: int = 1500) -> np.ndarray:
    """Training rows, threshold probes, NaN / inf / huge values, every category code and
    unseen ones; rows are float64 (categorical columns hold codes)."""
    rows = [X[:n_train]]
    base = lambda: X[rng.integers(len(X))].copy()
    extra = []
    seen: dict[int, set] = {}
    for tree in model.trees:
        for nd in tree.nodes:
            if isinstance(nd, Split) and isinstance(nd.test, NumericTest):
                seen.setdefault(nd.test.feature, set()).add(nd.test.threshold)
    for f, ts in sorted(seen.items()):
        for t in sorted(ts):
            for v in f32_neighbours(t) + [np.nextafter(t, -np.inf), np.nextafter(t, np.inf)]:
                row = base()
                row[f] = v
                extra.append(row)
    for j, feat in enumerate(model.features):
        values = [math.nan]
        if feat.kind == "categorical":
            n = len(feat.categories)
            values += list(range(n)) + [-1, n, n + 7]
        else:
            values += [math.inf, -math.inf, 1e308, -1e300, -0.0, 3.4028235677973366e38]
        for v in values:
            row = base()
            row[j] = v
            extra.append(row)
    for _ in range(40):
        row = base()
        row[rng.random(len(row)) < 0.4] = np.nan
        extra.append(row)
    extra.append(np.full(X.shape[1], np.nan))
    extra = np.array(extra)
    if len(extra) > limit:
        extra = extra[np.sort(rng.choice(len(extra), limit, replace=False))]
    return np.vstack(rows + [extra])


def xgb_margin(booster, P, feature_types=None) -> np.ndarray:
    """XGBoost's margins, shape (n, n_raw). ``inplace_predict`` takes inf (DMatrix refuses it);
    on finite rows both paths must agree."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = np.asarray(booster.inplace_predict(P, predict_type="margin", validate_features=False)).reshape(len(P), -1)
        finite = ~np.isinf(P).any(axis=1) & ~(np.abs(np.nan_to_num(P)) > 3.4e38).any(axis=1)
        dm = xgb.DMatrix(P[finite], nthread=1, feature_types=feature_types,
                         feature_names=booster.feature_names,
                         enable_categorical=feature_types is not None)
        via_dm = booster.predict(dm, output_margin=True).reshape(int(finite.sum()), -1)
    assert np.array_equal(got[finite], via_dm)
    return got


def xgb_outputs(booster, P) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(booster.inplace_predict(P)).reshape(len(P), -1)


def same32(got, want, what: str) -> None:
    got = np.asarray(got, dtype=np.float64).astype(np.float32)
    want = np.asarray(want, dtype=np.float64).astype(np.float32)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    bad = ~((got == want) | (np.isnan(got) & np.isnan(want)))
    assert not bad.any(), (f"{what}: {bad.any(axis=-1).sum()} rows differ; first: "
                           f"{got[bad][:3].tolist()} vs {want[bad][:3].tolist()}")


def check_outputs(model, booster, P) -> np.ndarray:
    """Probabilities / predictions bit-identical, classes identical; returns XGBoost's outputs."""
    theirs = xgb_outputs(booster, P).astype(np.float32)
    same32(ev.predict_outputs(model, P), theirs, "evaluator vs XGBoost outputs")
    if model.target.task == "classification":
        if model.n_raw == 1:
            theirs_cls = (theirs[:, 0] > 0.5).astype(np.int64)  # XGBClassifier.predict's rule
        else:
            theirs_cls = np.argmax(theirs, axis=1)
        assert np.array_equal(ev.predict_class_index(model, P), theirs_cls)
    return theirs


def outputs_part(model, out: np.ndarray) -> np.ndarray:
    """A target's probabilities / values as XGBoost's ``predict`` gives them (binary: p(1))."""
    binary = model.target.task == "classification" and model.n_raw == 1
    return np.asarray(out, dtype=np.float64)[:, 1:] if binary else np.asarray(out, dtype=np.float64)


def check_all(model, booster, P, *, feature_types=None, c: bool = True, python: bool = True,
              sql=("sqlite", "duckdb", "postgres")) -> dict:
    want = xgb_margin(booster, P, feature_types)
    raw = ev.raw_scores(model, P)
    same32(raw, want, "evaluator raw vs XGBoost margin")
    theirs = check_outputs(model, booster, P)
    if python:
        run = run_python(model, labels_for(model, P))
        same32(run.raw, want, "Python raw vs XGBoost margin")
        same32(outputs_part(model, run.outputs), theirs, "Python outputs vs XGBoost")
        if run.class_index is not None:
            assert np.array_equal(run.class_index, ev.predict_class_index(model, P))
    if c:
        res = run_c(generate(model, "c", name="xgbm"), "xgbm", P)
        same32(res["raw"], want, "C raw vs XGBoost margin")
        exp = ev.predict_proba(model, P) if model.target.task == "classification" else ev.predict_value(model, P)
        assert np.array_equal(res["out"], exp)
        same32(outputs_part(model, res["out"]), theirs, "C outputs vs XGBoost")
        if model.target.task == "classification":
            assert np.array_equal(res["class"], ev.predict_class_index(model, P))
    for dialect in sql:
        res = run_sql.check_sql(model, P, dialect)  # equal to the evaluator bit for bit
        same32(res.raw, want, f"{dialect} raw vs XGBoost margin")
    return {"margin": want, "raw": raw}


# --- the main objectives, through every target ------------------------------------------------


def test_binary_logistic_with_missing_values_both_default_directions():
    rng, X, X0 = data(1, nan=0.15)
    y = (X0[:, 0] + X0[:, 1] * X0[:, 2] + np.isnan(X[:, 3]) > 0.3).astype(int)
    b = train({"objective": "binary:logistic", "max_depth": 4, "eta": 0.3}, X, y, 40)
    model = imp.from_booster(b)
    assert (model.link, model.dtype, model.target.classes) == ("sigmoid", "float32", (0, 1))
    defaults = {nd.missing.child for t in model.trees for nd in t.nodes if isinstance(nd, Split)}
    assert defaults == {0, 1}, "training NaNs should give default_left both ways"
    check_all(model, b, probes(model, X, rng))


def test_multiclass_softprob_four_classes():
    rng, X, X0 = data(2, n=500, nan=0.05)
    y = np.digitize(X0[:, 0] + 0.5 * X0[:, 1], [-0.8, 0.0, 0.8])
    b = train({"objective": "multi:softprob", "num_class": 4, "max_depth": 3, "eta": 0.4}, X, y, 15)
    model = imp.from_booster(b)
    assert model.n_raw == 4 and model.link == "softmax" and len(model.trees) == 60
    assert [t.output for t in model.trees[:5]] == [0, 1, 2, 3, 0]
    check_all(model, b, probes(model, X, rng, limit=1000))


def test_regression_squarederror():
    rng, X, X0 = data(3, nan=0.05)
    y = 3 * X0[:, 0] - X0[:, 1] ** 2 + rng.normal(size=len(X))
    b = train({"objective": "reg:squarederror", "max_depth": 5, "eta": 0.2}, X, y, 30)
    model = imp.from_booster(b)
    assert model.target.task == "regression" and model.link == "identity"
    check_all(model, b, probes(model, X, rng), sql=("sqlite", "duckdb", "postgres"))


def test_count_poisson():
    rng, X, X0 = data(4, nan=0.05)
    y = rng.poisson(np.exp(0.8 * X0[:, 0]))
    b = train({"objective": "count:poisson", "max_depth": 4, "eta": 0.3}, X, y, 30)
    model = imp.from_booster(b)
    assert model.link == "exp"
    check_all(model, b, probes(model, X, rng), sql=("sqlite", "duckdb", "postgres"))


def test_categorical_codes_and_unseen_categories():
    rng = np.random.default_rng(5)
    n = 600
    X = np.c_[rng.normal(size=n), rng.integers(0, 8, n), rng.integers(0, 3, n), rng.normal(size=n)]
    X[rng.random(n) < 0.1, 1] = np.nan
    y = (np.isin(X[:, 1], [1, 4, 6]) ^ (X[:, 2] == 2) | (X[:, 0] > 1)).astype(int)
    types = ["q", "c", "c", "q"]
    b = train({"objective": "binary:logistic", "max_depth": 4, "max_cat_to_onehot": 1}, X, y, 25,
              feature_types=types, enable_categorical=True)
    model = imp.from_booster(b)
    kinds = [f.kind for f in model.features]
    assert kinds == ["numeric", "categorical", "categorical", "numeric"]
    assert model.features[1].categories == tuple(range(8))
    cat_splits = [nd for t in model.trees for nd in t.nodes
                  if isinstance(nd, Split) and isinstance(nd.test, CategoricalTest)]
    assert cat_splits and all(nd.unseen is None for nd in cat_splits)
    P = probes(model, X, rng)
    assert (P[:, 1] == 8).any() and (P[:, 1] == -1).any()
    check_all(model, b, P, feature_types=types)


def test_one_hot_categorical_splits():
    rng = np.random.default_rng(6)
    X = np.c_[rng.integers(0, 4, 400), rng.normal(size=400)]
    y = (X[:, 0] == 2).astype(int) + 0.1 * X[:, 1]
    b = train({"objective": "reg:squarederror", "max_depth": 3, "max_cat_to_onehot": 10}, X, y, 10,
              feature_types=["c", "q"], enable_categorical=True)
    model = imp.from_booster(b)
    check_all(model, b, probes(model, X, rng), feature_types=["c", "q"], c=False, sql=())


def test_integer_features_threshold_ties():
    """hist puts thresholds exactly on integer values: x == t must go right (x < t is false)."""
    rng = np.random.default_rng(7)
    X = rng.integers(0, 10, size=(500, 4)).astype(float)
    y = ((X[:, 0] + X[:, 1] > 9) ^ (X[:, 2] == 3)).astype(int)
    b = train({"objective": "binary:logistic", "max_depth": 4}, X, y, 20)
    model = imp.from_booster(b)
    thresholds = {nd.test.threshold for t in model.trees for nd in t.nodes if isinstance(nd, Split)}
    assert thresholds & {1.0, 2.0, 3.0, 4.0, 5.0}, thresholds
    grid = np.array(np.meshgrid(*[np.arange(10.0)] * 2)).reshape(2, -1).T
    P = np.vstack([np.c_[grid, grid[::-1]], probes(model, X, rng)])
    check_all(model, b, P)


# --- file formats -------------------------------------------------------------------------


def test_json_ubjson_files_and_bytes_agree(tmp_path):
    _rng, X, X0 = data(8, nan=0.1)
    y = (X0[:, 0] > 0).astype(int)
    b = train({"objective": "binary:logistic", "max_depth": 3}, X, y, 10)
    b.feature_names = [f"col {i}" for i in range(X.shape[1])]
    b.save_model(tmp_path / "m.json")
    b.save_model(tmp_path / "m.ubj")
    a = imp.load(tmp_path / "m.json")
    assert imp.load(str(tmp_path / "m.ubj")) == a
    assert imp.load((tmp_path / "m.ubj").read_bytes()) == a
    assert imp.load((tmp_path / "m.json").read_text()) == a
    assert imp.from_booster(b) == a
    assert [f.name for f in a.features] == [f"col {i}" for i in range(5)]
    assert a.provenance.library == f"xgboost {xgb.__version__}"
    same32(ev.raw_scores(a, X), xgb_margin(b, X), "file import")


def test_sklearn_estimator():
    _rng, X, X0 = data(9)
    y = np.digitize(X0[:, 0], [-0.5, 0.5])
    clf = xgb.XGBClassifier(n_estimators=8, max_depth=3, n_jobs=1, random_state=0).fit(X, y)
    model = imp.from_booster(clf)
    assert model.target.classes == (0, 1, 2)
    assert np.array_equal(ev.predict_class_index(model, X), clf.predict(X))
    same32(ev.predict_proba(model, X), clf.predict_proba(X), "XGBClassifier.predict_proba")
    with pytest.raises(ModelFormatError, match="cannot get the booster of XGBClassifier"):
        imp.from_booster(xgb.XGBClassifier())
    with pytest.raises(ModelFormatError, match="expected an xgboost Booster"):
        imp.from_booster(object())


def test_json_decimals_are_rounded_once_to_float32():
    """A decimal whose nearest double is a float32 midpoint must round as strtof (and XGBoost)
    do, not twice."""
    _rng, X, _ = data(10, n=50, p=2)
    b = train({"objective": "reg:squarederror", "max_depth": 1, "base_score": 0.0}, X, X[:, 0], 1)
    doc = json.loads(b.save_raw("json"))
    tree = doc["learner"]["gradient_booster"]["model"]["trees"][0]
    leaves = [i for i, c in enumerate(tree["left_children"]) if c == -1]
    for text, want in [("1.0000000596046448", 1.0000001192092896),  # just above the midpoint
                       ("1.00000005960464472", 1.0)]:  # just below; both parse to the midpoint
        assert float(text) == 1 + 2**-24
        for i in leaves:
            tree["split_conditions"][i] = "@"
        raw = json.dumps(doc).replace('"@"', text)
        model = imp.load(raw.encode())
        assert model.trees[0].nodes[leaves[0]].value == (want,)
        theirs = xgb.Booster(model_file=bytearray(raw.encode()))
        same32(ev.raw_scores(model, X), xgb_margin(theirs, X), text)


def test_pandas_categorical_fixture():
    """XGBoost 3.2 trained on a DataFrame stores the categories (``cats.enc``): the IR labels
    are the training categories, and the margins equal those XGBoost gave on a DataFrame of
    these rows (recorded in the fixture; pandas is not needed here). An unseen label ("purple")
    behaves as missing, as XGBoost did."""
    fx = json.loads((FIXTURES / "pandas_categorical.json").read_text())
    model = imp.from_dict(fx["model"])
    assert model.features[1].categories == ("blue", "green", "red", "teal", "x y")
    assert model.features[2].categories == (3, 7, 11, 40)
    X = np.array([[math.nan if v is None else (f.categories.index(v) if v in f.categories else -1)
                   if f.kind == "categorical" else v for v, f in zip(row, model.features)]
                  for row in fx["rows"]], dtype=np.float64)
    margin = np.asarray(fx["margin"], dtype=np.float32)[:, None]
    same32(ev.raw_scores(model, X), margin, "evaluator vs recorded margins")
    same32(run_python(model, fx["rows"]).raw, margin, "Python (labels) vs recorded margins")
    same32(ev.predict_proba(model, X)[:, 1], fx["probability"], "evaluator vs recorded probability")
    run_sql.check_sql(model, X, "sqlite")


# --- other objectives, boosters and options (evaluator only) --------------------------------


@pytest.mark.parametrize("objective,extra,target", [
    ("binary:logitraw", {}, "binary"),
    ("binary:logistic", {}, "two_binary"),
    ("reg:logistic", {}, "prob"),
    ("multi:softmax", {"num_class": 3}, "class3"),
    ("reg:gamma", {}, "positive"),
    ("reg:tweedie", {}, "positive"),
    ("reg:absoluteerror", {}, "real"),
    ("reg:pseudohubererror", {}, "real"),
    ("reg:squaredlogerror", {}, "positive"),
    ("reg:quantileerror", {"quantile_alpha": [0.2, 0.8]}, "real"),
    ("survival:cox", {}, "positive"),
    ("rank:ndcg", {}, "rank"),
    ("rank:pairwise", {}, "rank"),
    ("binary:logistic", {"booster": "dart", "rate_drop": 0.5, "skip_drop": 0.0}, "binary"),
    ("binary:logistic", {"num_parallel_tree": 3, "subsample": 0.7}, "binary"),
    ("reg:squarederror", {}, "two"),
    ("reg:squarederror", {"multi_strategy": "multi_output_tree"}, "two"),
    ("multi:softprob", {"num_class": 3, "multi_strategy": "multi_output_tree"}, "class3"),
    ("reg:squarederror", {"tree_method": "exact"}, "real"),
    ("reg:squarederror", {"tree_method": "approx"}, "real"),
])
def test_objectives_and_boosters(objective, extra, target):
    rng, X, X0 = data(11, n=300, p=4, nan=0.1)
    s = X0[:, 0] + 0.5 * X0[:, 1]
    y = {"binary": (s > 0).astype(float), "prob": 1 / (1 + np.exp(-2 * s)),
         "class3": np.digitize(s, [-0.5, 0.5]), "positive": np.exp(s) + 0.1,
         "real": 2 * s + rng.normal(size=len(s)), "rank": np.digitize(s, [-0.5, 0.5]),
         "two": np.c_[s, X0[:, 2] - s], "two_binary": np.c_[s > 0, X0[:, 2] > s].astype(float)}[target]
    dm = xgb.DMatrix(X, y, nthread=1)
    if target == "rank":
        dm.set_group([100, 100, 100])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = xgb.train({"objective": objective, "max_depth": 3, "nthread": 1, "seed": 0, **extra}, dm, 12)
    model = imp.from_booster(b)
    if extra.get("booster") == "dart":
        assert len({t.weight for t in model.trees}) > 1, "dart should weight its trees"
    P = probes(model, X, rng, limit=600)
    same32(ev.raw_scores(model, P), xgb_margin(b, P), objective)
    if objective == "multi:softmax":  # predict() gives the class index
        assert np.array_equal(ev.predict_class_index(model, P), xgb_outputs(b, P)[:, 0])
    elif objective == "binary:logitraw":  # predict() is the margin: imported as identity regression
        assert model.target.task == "regression" and model.link == "identity"
    elif target == "two_binary":  # multi-label: per-label probabilities as regression outputs
        assert (model.target.task, model.target.n_outputs, model.link) == ("regression", 2, "sigmoid")
        check_outputs(model, b, P)
    else:
        check_outputs(model, b, P)


def test_survival_aft():
    _rng, X, X0 = data(12, n=300, p=3)
    t = np.exp(X0[:, 0]) + 0.1
    dm = xgb.DMatrix(X, nthread=1)
    dm.set_float_info("label_lower_bound", t)
    dm.set_float_info("label_upper_bound", t * 1.5)
    b = xgb.train({"objective": "survival:aft", "max_depth": 3, "nthread": 1}, dm, 10)
    model = imp.from_booster(b)
    assert model.link == "exp"
    same32(ev.raw_scores(model, X), xgb_margin(b, X), "aft")
    check_outputs(model, b, X)


@pytest.mark.parametrize("objective", ["binary:logistic", "reg:logistic", "reg:gamma", "count:poisson"])
def test_base_score_transformation_is_float32_logf(objective):
    """XGBoost turns base_score p into the margin with -logf(1.0f/p - 1.0f) or logf(p), in float32
    and with the C library's logf: set many p, zero every leaf, and compare the margin."""
    rng, X, X0 = data(13, n=60, p=2)
    y = (X0[:, 0] > 0).astype(float) * 0.8 + 0.1
    b = train({"objective": objective, "max_depth": 1}, X, y, 1)
    doc = json.loads(b.save_raw("json"))
    tree = doc["learner"]["gradient_booster"]["model"]["trees"][0]
    tree["split_conditions"] = [0.0 if c == -1 else v for c, v in
                                zip(tree["left_children"], tree["split_conditions"])]
    # The listed p are where glibc's logf differs from the correctly rounded float32 log.
    hard = [0.4844989478588104, 0.5681923031806946, 0.7084994912147522,  # logit
            0.7296554446220398, 0.9808353185653687, 0.9545904994010925]  # log
    ps = np.concatenate([rng.random(60), hard, [1e-6, 0.001, 0.25, 0.5, 0.75, 0.999, 0.9999]])
    if objective in ("reg:gamma", "count:poisson"):
        ps = np.concatenate([ps, rng.random(20) * 100])
    for p in ps.astype(np.float32):
        doc["learner"]["learner_model_param"]["base_score"] = f"[{float(p)!r}]"
        raw = json.dumps(doc).encode()
        model = imp.load(raw)
        theirs = xgb.Booster(model_file=bytearray(raw))
        want = theirs.predict(xgb.DMatrix(X[:1], nthread=1), output_margin=True)[0]
        assert np.float32(model.base_score[0]) == want, (p, model.base_score, want)


def test_old_format_without_newer_keys():
    """XGBoost 1.x/2.x documents: scalar base_score "5E-1", no split_type / categories /
    iteration_indptr / cats. XGBoost 3.2 still reads them; so must we."""
    _rng, X, X0 = data(14, n=200, p=3, nan=0.1)
    b = train({"objective": "multi:softprob", "num_class": 3, "max_depth": 3},
              X, np.digitize(X0[:, 0], [-0.5, 0.5]), 4)
    doc = json.loads(b.save_raw("json"))
    doc["learner"]["learner_model_param"]["base_score"] = "5E-1"
    model_doc = doc["learner"]["gradient_booster"]["model"]
    for key in ("iteration_indptr", "cats"):
        model_doc.pop(key)
    for tree in model_doc["trees"]:
        for key in ("split_type", "categories", "categories_nodes", "categories_segments",
                    "categories_sizes"):
            tree.pop(key)
    raw = json.dumps(doc).encode()
    model = imp.load(raw)
    assert model.base_score == (0.5, 0.5, 0.5)
    theirs = xgb.Booster(model_file=bytearray(raw))
    same32(ev.raw_scores(model, X), xgb_margin(theirs, X), "old format")


def test_iteration_range_and_best_iteration():
    rng, X, X0 = data(15, n=400)
    y = (X0[:, 0] + rng.normal(size=len(X)) > 0).astype(int)
    dtrain = xgb.DMatrix(X[:300], y[:300], nthread=1)
    dvalid = xgb.DMatrix(X[300:], y[300:], nthread=1)
    b = xgb.train({"objective": "binary:logistic", "max_depth": 3, "eta": 0.5, "nthread": 1}, dtrain,
                  200, evals=[(dvalid, "v")], early_stopping_rounds=3, verbose_eval=False)
    assert b.best_iteration + 1 < b.num_boosted_rounds()
    best = imp.from_booster(b, iteration_range="best")
    assert len(best.trees) == b.best_iteration + 1
    assert len(imp.from_booster(b).trees) == b.num_boosted_rounds()
    same32(ev.raw_scores(best, X), b.predict(xgb.DMatrix(X), output_margin=True,
                                             iteration_range=(0, b.best_iteration + 1))[:, None], "best")
    mid = imp.from_booster(b, iteration_range=(2, 5))
    same32(ev.raw_scores(mid, X), b.predict(xgb.DMatrix(X), output_margin=True,
                                            iteration_range=(2, 5))[:, None], "(2, 5)")
    with pytest.raises(ModelFormatError, match="iteration_range"):
        imp.from_booster(b, iteration_range=(0, 10_000))


# --- a big model ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(not have_cc(), reason="no C compiler")
def test_thousand_trees_compile_with_O2(capsys):
    rng, X, _ = data(16, n=2000, p=15, nan=0.05)
    y = (np.nansum(X[:, :5], axis=1) + rng.normal(size=len(X)) > 0).astype(int)
    b = train({"objective": "binary:logistic", "max_depth": 6, "eta": 0.05}, X, y, 1000)
    raw = bytes(b.save_raw("json"))
    t0 = time.perf_counter()
    model = imp.load(raw)
    t1 = time.perf_counter()
    files = generate(model, "c", name="big")
    t2 = time.perf_counter()
    assert len(model.trees) == 1000
    P = np.vstack([X[:300], probes(model, X, rng, n_train=0, limit=300)])
    res = run_c(files, "big", P, opt="-O2")
    want = xgb_margin(b, P)
    same32(ev.raw_scores(model, P), want, "evaluator, 1000 trees")
    same32(res["raw"], want, "C -O2, 1000 trees")
    assert np.array_equal(res["class"], ev.predict_class_index(model, P))
    # the same model runs as SQL, equal to the evaluator (and so to XGBoost) bit for bit
    for dialect in ("sqlite", "duckdb", "postgres"):
        run_sql.check_sql(model, P[:200], dialect)
    with capsys.disabled():
        print(f"\n[1000 trees, depth 6: import {t1 - t0:.2f}s, C generation {t2 - t1:.2f}s, "
              f"{len(files)} files, gcc -O2 {res['compile_seconds']:.1f}s]")


# --- malformed and unsupported files ----------------------------------------------------------


@pytest.fixture(scope="module")
def small_doc():
    _rng, X, X0 = data(17, n=200, p=3)
    b = train({"objective": "binary:logistic", "max_depth": 2}, X, (X0[:, 0] > 0).astype(int), 5)
    return json.loads(b.save_raw("json")), bytes(b.save_raw("ubj"))


def _broken(doc, edit) -> bytes:
    doc = json.loads(json.dumps(doc))
    edit(doc)
    return json.dumps(doc).encode()


TREES = "learner.gradient_booster.model.trees"


def _trees(d):
    return d["learner"]["gradient_booster"]["model"]["trees"]


@pytest.mark.parametrize("edit,message", [
    (lambda d: _trees(d)[3].__setitem__("split_conditions", "oops"),
     rf"{TREES}\[3\]\.split_conditions: expected an array"),
    (lambda d: _trees(d)[3]["split_conditions"].__setitem__(0, "x"),
     rf"{TREES}\[3\]\.split_conditions: expected an array of numbers, found 'x'"),
    (lambda d: _trees(d)[2]["left_children"].pop(),
     rf"{TREES}\[2\]\.left_children: expected \d+ entries \(num_nodes\), got"),
    (lambda d: _trees(d)[1]["left_children"].__setitem__(0, 99),
     rf"{TREES}\[1\]\.left_children\[0\]: child 99 out of range"),
    (lambda d: _trees(d)[1]["right_children"].__setitem__(0, 1),
     rf"{TREES}\[1\]\.left_children\[0\]: node 1 is already the root or another split's child"),
    (lambda d: _trees(d)[0]["split_indices"].__setitem__(0, 7),
     rf"{TREES}\[0\]\.split_indices\[0\]: feature 7 out of range"),
    (lambda d: _trees(d)[4].pop("default_left"), rf"{TREES}\[4\]\.default_left: missing"),
    (lambda d: _trees(d)[0]["split_type"].__setitem__(0, 1),
     rf"{TREES}\[0\]\.categories_nodes: no categories for categorical node 0"),
    (lambda d: d["learner"]["learner_model_param"].__setitem__("base_score", "abc"),
     r"learner\.learner_model_param\.base_score: expected a number"),
    (lambda d: d["learner"]["learner_model_param"].__setitem__("base_score", "[1.5E0]"),
     r"learner\.learner_model_param\.base_score: a logistic objective needs a base_score in \(0, 1\)"),
    (lambda d: d["learner"]["learner_model_param"].__setitem__("num_feature", "three"),
     r"learner\.learner_model_param\.num_feature: expected an integer"),
    (lambda d: d["learner"].pop("gradient_booster"), r"learner\.gradient_booster: missing"),
    (lambda d: d["learner"]["gradient_booster"]["model"].__setitem__("tree_info", [0, 0]),
     r"learner\.gradient_booster\.model\.tree_info: expected 5 entries"),
    (lambda d: d.__setitem__("learner", []), r"learner: expected an object"),
])
def test_malformed_json_names_the_path(small_doc, edit, message):
    with pytest.raises(ModelFormatError, match=message):
        imp.load(_broken(small_doc[0], edit))


def test_unsupported_objective_and_boosters(small_doc):
    doc = small_doc[0]
    bad = _broken(doc, lambda d: d["learner"]["objective"].__setitem__("name", "binary:hinge"))
    with pytest.raises(UnsupportedFeatureError, match=r"'binary:hinge' \(learner\.objective\.name\)"):
        imp.load(bad)
    bad = _broken(doc, lambda d: d["learner"]["gradient_booster"].__setitem__("name", "gblinear"))
    with pytest.raises(UnsupportedFeatureError, match="gblinear"):
        imp.load(bad)
    _rng, X, X0 = data(18, n=100, p=2)
    lin = train({"objective": "binary:logistic", "booster": "gblinear"}, X, (X0[:, 0] > 0).astype(int), 2)
    with pytest.raises(UnsupportedFeatureError, match="gblinear"):
        imp.from_booster(lin)


def test_truncated_and_garbage_files(small_doc, tmp_path):
    text, ubj = json.dumps(small_doc[0]).encode(), small_doc[1]
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        imp.load(text[: len(text) // 2])
    with pytest.raises(ModelFormatError, match="UBJSON byte .*truncated"):
        imp.load(ubj[: len(ubj) // 2])
    with pytest.raises(ModelFormatError, match="unexpected bytes after the end"):
        imp.load(ubj + b"xx")
    with pytest.raises(ModelFormatError, match="not an XGBoost model"):
        imp.load(b"tree\nversion=v4\n")
    with pytest.raises(ModelFormatError, match="empty file"):
        imp.load(b"  ")
    with pytest.raises(ModelFormatError, match="no-such.json: cannot read"):
        imp.load(tmp_path / "no-such.json")
    with pytest.raises(ModelFormatError, match=r"learner\.learner_model_param: missing"):
        imp.load(b'{"learner": {"objective": {"name": "reg:squarederror"}}}')
    path = tmp_path / "bad.json"
    path.write_bytes(_broken(small_doc[0], lambda d: _trees(d)[3].__setitem__("split_conditions", 1)))
    with pytest.raises(ModelFormatError, match=rf"bad\.json: {TREES}\[3\]\.split_conditions"):
        imp.load(path)


def test_mutated_documents_fail_cleanly(small_doc):
    """Random damage (wrong types, deleted keys, shortened arrays, flipped UBJSON bytes) gives a
    ModelFormatError or UnsupportedFeatureError, or a valid model: never another exception."""
    import random

    doc, ubj = small_doc
    rnd = random.Random(3)

    def paths(o, p=()):
        yield p
        items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()
        for k, v in items:
            yield from paths(v, (*p, k))

    every = [p for p in paths(doc) if p]
    junk = [None, "x", -1, 0, 2**40, 1.5, math.nan, [], {}, [1, [2]], "[1,2]", True, 10**30]
    for _ in range(300):
        d = json.loads(json.dumps(doc))
        for _ in range(rnd.randint(1, 3)):
            p, parent = rnd.choice(every), d
            try:
                for k in p[:-1]:
                    parent = parent[k]
                if isinstance(parent, dict) and rnd.random() < 0.2:
                    del parent[p[-1]]
                else:
                    parent[p[-1]] = rnd.choice(junk)
            except (KeyError, IndexError, TypeError):
                pass
        try:
            imp.load(json.dumps(d).encode())
        except (ModelFormatError, UnsupportedFeatureError):
            pass
    for _ in range(300):
        b = bytearray(ubj)
        for _ in range(rnd.randint(1, 4)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        try:
            imp.load(bytes(b))
        except (ModelFormatError, UnsupportedFeatureError):
            pass


def test_binary_objective_with_num_class_is_refused(small_doc, tmp_path, capsys):
    """binary:logistic with num_class=3: XGBoost itself predicts three outputs from such a
    file, so reading it as one binary margin would be wrong on every row; it is refused with
    the JSON path, exit 2 on the command line."""
    from rulegen.cli import main

    bad = _broken(small_doc[0], lambda d: d["learner"]["learner_model_param"].__setitem__("num_class", "3"))
    b = xgb.Booster()
    b.load_model(bytearray(bad))
    _rng, X, _ = data(17, n=20, p=3)
    assert b.predict(xgb.DMatrix(X)).shape == (20, 3)  # XGBoost's own reading of the file
    with pytest.raises(ModelFormatError, match=r"learner_model_param\.num_class: num_class=3 with "
                                               r"objective 'binary:logistic'"):
        imp.load(bad)
    path = tmp_path / "bad.json"
    path.write_bytes(bad)
    assert main(["compile", str(path), "--target", "c", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "num_class=3" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_unsupported_objective_names_the_file(small_doc, tmp_path):
    path = tmp_path / "hinge.json"
    path.write_bytes(_broken(small_doc[0], lambda d: d["learner"]["objective"].__setitem__("name", "binary:hinge")))
    with pytest.raises(UnsupportedFeatureError, match=rf"^{path}: target 'rulegen IR' cannot express "
                                                      r"the XGBoost objective 'binary:hinge'"):
        imp.load(path)


def test_dataframe_with_category_columns_through_the_command_line(tmp_path):
    """As a user does it: XGBoost trained on a pandas DataFrame with 'category' columns and
    NaN, saved with save_model, then `rulegen predict` on a CSV of the text values and the
    generated Python on the same rows: margins equal XGBoost's predict on the DataFrame bit for
    bit (probabilities within XGBoost's float32 link, docs/IMPORTERS.md), classes equal."""
    import pandas as pd

    from rulegen.cli import main

    rng = np.random.default_rng(21)
    n = 1500
    df = pd.DataFrame({
        "colour": pd.Categorical(rng.choice(["red", "blue", "green", "x y"], n)),
        "size": rng.standard_normal(n).astype(np.float32),
        "grade": pd.Categorical(rng.choice([3, 7, 11], n)),
    })
    df.loc[rng.random(n) < 0.08, "size"] = np.nan
    df.loc[rng.random(n) < 0.08, "colour"] = np.nan
    y = ((df["colour"] == "red") + df["size"].fillna(0) + (df["grade"] == 7) > 0.9).astype(int)
    est = xgb.XGBClassifier(n_estimators=30, max_depth=4, enable_categorical=True, tree_method="hist",
                            n_jobs=1, random_state=0).fit(df, y)
    path = tmp_path / "model.json"
    est.get_booster().save_model(str(path))
    # known labels and missing values only: where an unknown label goes in XGBoost 3.2 is not
    # settled: test_pandas_categorical_fixture sees it as missing, another model did not
    new = pd.DataFrame({"colour": ["red", "blue", None, "x y", "green", "green"],
                        "size": [0.5, np.nan, -1.0, 2.0, 0.1, 0.0], "grade": [7, 3, 11, 7, 3, 11]})
    frame = new.assign(colour=pd.Categorical(new["colour"], categories=df["colour"].cat.categories),
                       grade=pd.Categorical(new["grade"], categories=df["grade"].cat.categories))
    margin = est.get_booster().predict(xgb.DMatrix(frame, enable_categorical=True), output_margin=True)
    csv_path = tmp_path / "new.csv"
    new.to_csv(csv_path, index=False)
    out = tmp_path / "pred.csv"
    assert main(["predict", str(path), str(csv_path), "-o", str(out)]) == 0
    got = pd.read_csv(out)
    assert [int(v) for v in got["prediction"]] == [int(v) for v in est.predict(frame)]
    same32(got["prob_1"].to_numpy(), est.predict_proba(frame)[:, 1], "predict vs XGBoost probability")
    model = imp.load(path)
    rows = [[None if (isinstance(v, float) and math.isnan(v)) else v for v in r]
            for r in new.itertuples(index=False)]
    same32(run_python(model, rows).raw, margin.astype(np.float32)[:, None], "Python raw vs XGBoost margin")
