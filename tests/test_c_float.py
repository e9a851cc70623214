"""The C target's float profile (``precision="float32"``), its batch entry point and the
positive-only option, built with cc under -Wdouble-promotion -Werror and run for real.

What the profile promises (rulegen/targets/c/profile.py): every float row reaches the
evaluator's leaves (checked exactly, tree by tree, with each leaf's value replaced by its
node id); a model that accumulates in float32 gives the evaluator's raw scores and outputs
bit for bit; any other model stays within the bound its header states."""

from __future__ import annotations

import dataclasses
import re
import warnings

import irfixtures
import numpy as np
import pytest
from irfixtures import random_model
from run_c import STRICT, have_cc, run_c
from test_target_c import constant_tests_tree, tableable

import rulegen
from rulegen.errors import UnsupportedFeatureError
from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import Blend, Leaf, Model, ObliqueTest, Split, Target, Tree
from rulegen.targets.c import profile as c_profile
from rulegen.targets.c import rows as c_rows

pytestmark = pytest.mark.skipif(not have_cc(), reason="no C compiler (cc) on PATH")

FLOAT_FLAGS = (*STRICT, "-Wdouble-promotion")


def float_ok(model: Model) -> bool:
    try:
        c_profile.check_float_profile(model)
    except UnsupportedFeatureError:
        return False
    return True


def models() -> dict[str, Model]:
    out = {k: m for k, m in irfixtures.all_models().items() if float_ok(m) and k != "chain"}
    for seed in range(12):
        m = random_model(seed)
        out[f"random_{seed}"] = m if float_ok(m) else tableable(m, seed)
    return out


MODELS = models()


def rows32(model: Model) -> np.ndarray:
    """The probe rows rounded to float32, as float64 (what the evaluator reads)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return irfixtures.probe_rows(model, n_random=100).astype(np.float32).astype(np.float64)


def leaf_ids(model: Model, t: int) -> Model:
    """Tree t alone, every leaf's value its node id: the raw score names the leaf reached."""
    tree = model.trees[t]
    nodes = tuple(dataclasses.replace(nd, value=(float(i),)) if isinstance(nd, Leaf) else nd
                  for i, nd in enumerate(tree.nodes))
    return dataclasses.replace(
        model, target=Target("regression"), trees=(Tree(nodes),), base_score=(0.0,),
        aggregation="sum", link="identity", dtype="float64")


def expected_leaves(model: Model, X: np.ndarray) -> np.ndarray:
    """The node id of the leaf each row reaches in each tree, from the evaluator."""
    return np.stack([ev.raw_scores(leaf_ids(model, t), X)[:, 0] for t in range(len(model.trees))],
                    axis=1).astype(np.int64)


def no_double(files: dict[str, str]) -> None:
    for name, text in files.items():
        code = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
        assert not re.search(r"\bdouble\b|HUGE_VAL\b|\bexp\(", code), name


@pytest.mark.parametrize("form", ["auto", "nested", "goto", "table"])
def test_routing_is_exact_for_every_float_row(form):
    """Every tree of every model reaches the evaluator's leaf on every float row: the leaf ids
    of NAME_predict_leaves (one build per model), against each tree's leaf-id model."""
    for name, model in MODELS.items():
        if any(isinstance(nd, Split) and isinstance(nd.missing, Blend) for t in model.trees for nd in t.nodes):
            continue  # refused by the float profile (test below)
        X = rows32(model)
        files = rulegen.generate(model, "c", name="r", precision="float32", form=form, leaves=True)
        no_double(files)
        res = run_c(files, "r", X, cflags=FLOAT_FLAGS)
        assert np.array_equal(res["leaves"], expected_leaves(model, X)), name


def test_row_tables_route_every_float_row():
    """Packed split rows (a tree alone, as the float profile writes it) reach the evaluator's
    leaf on every float row, one row at a time and in the batch: the first tree of each model
    that row tables take, every leaf's value its node id."""
    seen = 0
    for name, model in {**MODELS, "constant_tests": constant_tests_tree()}.items():
        tree = leaf_ids(model, 0)
        if not c_rows.supports(tree):
            continue
        X = rows32(model)
        files = rulegen.generate(tree, "c", name="r", precision="float32")
        assert "packed split rows" in files["r.c"], name
        res = run_c(files, "r", X, cflags=FLOAT_FLAGS)
        want = expected_leaves(model, X)[:, 0]
        assert np.array_equal(res["raw"][:, 0], want), name
        assert np.array_equal(res["batch"][:, 0], want), name
        seen += 1
    assert seen >= 10


def _compare(model: Model, res: dict, X: np.ndarray) -> dict:
    raw, out = ev.raw_scores(model, X), ev.outputs_of(model, ev.raw_scores(model, X))
    if model.target.task == "classification":
        out = ev.proba_of(model, out)
    got_raw, got_out = res["raw"].astype(np.float64), res["out"].astype(np.float64)
    bounds = c_profile.float_bounds(model)
    if bounds["exact_f32"]:
        assert np.array_equal(got_raw, raw, equal_nan=True)
        if not bounds["softmax_sum"]:
            assert np.array_equal(got_out, out, equal_nan=True)
    else:
        finite = np.isfinite(raw)
        assert np.array_equal(np.isnan(got_raw), np.isnan(raw))
        assert np.all(np.abs(got_raw - raw)[finite] <= bounds["bound_raw_value"])
    fin = np.isfinite(out)
    err = float(np.max(np.abs(got_out - out)[fin], initial=0.0))
    if "bound_out_value" in bounds and np.isfinite(bounds["bound_out_value"]):
        assert err <= bounds["bound_out_value"]
    elif bounds["softmax_sum"]:
        assert err <= float(bounds["bound_out"])
    assert np.array_equal(res["batch"].view(np.uint32), res["out"].view(np.uint32))
    return {"raw_err": float(np.max(np.abs(got_raw - raw)[np.isfinite(raw)], initial=0.0)), "out_err": err}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_float_profile_sums_within_its_bound(name):
    model = MODELS[name]
    X = rows32(model)
    files = rulegen.generate(model, "c", name="m", precision="float32")
    no_double(files)
    assert "#define m_PRECISION 32" in files["m.h"]
    _compare(model, run_c(files, "m", X, cflags=FLOAT_FLAGS), X)


@pytest.mark.parametrize("form", ["nested", "table"])
def test_xgboost_float_profile_is_bit_exact(form):
    """A float32 model (XGBoost's) gives the library's own numbers in float, with no double."""
    xgb = pytest.importorskip("xgboost")
    from rulegen.importers.xgboost import from_booster

    rng = np.random.default_rng(3)
    X = rng.standard_normal((600, 8)).astype(np.float32)
    X[:, 5] = rng.integers(0, 6, 600)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = ((X[:, 0] > 0.2) ^ (np.nan_to_num(X[:, 5]) > 2)).astype(int)
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 4, "eta": 0.3, "nthread": 1},
                        xgb.DMatrix(X, y), 30)
    model = from_booster(booster)
    P = rows32(model)
    files = rulegen.generate(model, "c", name="xg", precision="float32", form=form)
    no_double(files)
    res = run_c(files, "xg", P, cflags=FLOAT_FLAGS)
    _compare(model, res, P)
    margin = booster.inplace_predict(P.astype(np.float32), predict_type="margin")
    assert np.array_equal(res["raw"][:, 0], margin)


def test_float_table_rows_are_8_bytes():
    model = irfixtures.big_ensemble(60)
    text = rulegen.generate(model, "c", name="b", precision="float32", form="table")["b.c"]
    assert "struct { float t; short c, k; }" in text
    assert "struct { double" not in text
    text = rulegen.generate(irfixtures.big_ensemble(1), "c", name="b", precision="float32")["b.c"]
    assert "static const float b_table_0_T[" in text and "static const uint32_t b_table_0_W[" in text


def _moved(model: Model, n_pad: int) -> Model:
    """The model's first tree reading features n_pad and up, behind n_pad unused ones."""
    wide = dataclasses.replace(model, features=tuple(
        dataclasses.replace(model.features[0], name=f"pad{i}") for i in range(n_pad)) + model.features)
    moved = tuple(dataclasses.replace(nd, test=dataclasses.replace(nd.test, feature=nd.test.feature + n_pad))
                  if isinstance(nd, Split) else nd for nd in model.trees[0].nodes)
    return dataclasses.replace(wide, trees=(Tree(moved),))


def test_packed_rows_past_256_features():
    """Packed rows give the feature as many bits as it needs (300 features: 9)."""
    model = _moved(irfixtures.big_ensemble(1), 300)
    files = rulegen.generate(model, "c", name="w", precision="float32")
    assert "[feature:9]" in files["w.c"]
    X = rows32(model)
    _compare(model, run_c(files, "w", X, cflags=FLOAT_FLAGS), X)


def test_row_tables_where_packed_words_are_too_narrow():
    """A tree too big for 32-bit packed words (2 x 12 bits of children, 8 of feature, 1 of
    sign) keeps 8-byte row tables; with more than 256 features, 12-byte rows."""
    rng = np.random.default_rng(3)
    tree = irfixtures._random_tree(rng, 10, 13, 1)
    assert len(tree.nodes) > 2 ** 11  # splits and leaf values: 12 bits
    base = dataclasses.replace(irfixtures.big_ensemble(1), trees=(tree,))
    for pad, struct_text in ((246, "struct { float t; short c; unsigned char f; signed char s; }"),
                             (300, "struct { float t; int c; short f, s; }")):
        model = _moved(base, pad)
        files = rulegen.generate(model, "c", name="w", precision="float32")
        assert struct_text in files["w.c"] and "uint32_t" not in files["w.c"]
        X = rows32(model)[:300]
        _compare(model, run_c(files, "w", X, cflags=FLOAT_FLAGS), X)


@pytest.mark.parametrize("what", ["oblique", "blend"])
def test_float_profile_refuses_what_it_cannot_route_exactly(what):
    for seed in range(60):
        m = random_model(seed)
        splits = [nd for t in m.trees for nd in t.nodes if isinstance(nd, Split)]
        if what == "oblique" and any(isinstance(nd.test, ObliqueTest) for nd in splits):
            break
        if what == "blend" and any(isinstance(nd.missing, Blend) for nd in splits):
            break
    else:
        pytest.fail(f"no random model with a {what} split")
    with pytest.raises(UnsupportedFeatureError, match=r"trees\[\d+\]\.nodes\[\d+\].*--precision float64"):
        rulegen.generate(m, "c", name="m", precision="float32")


def test_positive_only_gives_p1_alone_exactly():
    sk = pytest.importorskip("sklearn.ensemble")
    from rulegen.importers.sklearn import from_sklearn

    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 6)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int)
    model = from_sklearn(sk.RandomForestClassifier(8, max_depth=5, random_state=0).fit(X, y))
    assert model.n_raw == 2
    P = irfixtures.probe_rows(model, n_random=100)
    want = ev.predict_proba(model, P)[:, 1]
    full = rulegen.generate(model, "c", name="p", form="nested")["p.c"]
    files = rulegen.generate(model, "c", name="p", positive_only=True)
    assert "#define p_N_OUTPUTS 1" in files["p.h"] and "int p_predict_class" not in files["p.h"]
    one = rulegen.generate(model, "c", name="p", positive_only=True, form="nested")["p.c"]
    adds = re.compile(r"acc\[\d\] = acc\[\d\] \+ ")
    assert 2 * len(adds.findall(one)) == len(adds.findall(full))  # one add a leaf instead of two
    res = run_c(files, "p", P)
    assert np.array_equal(res["out"][:, 0], want)
    assert np.array_equal(res["batch"][:, 0], want)
    res32 = run_c(rulegen.generate(model, "c", name="p", positive_only=True, precision="float32"),
                  "p", P, cflags=FLOAT_FLAGS)
    P32 = P.astype(np.float32).astype(np.float64)
    assert np.all(np.abs(res32["out"][:, 0] - ev.predict_proba(model, P32)[:, 1]) < 1e-6)


def test_positive_only_refuses_what_needs_every_class():
    model = irfixtures.softmax_ensemble()
    with pytest.raises(UnsupportedFeatureError, match="binary classifier|every class"):
        rulegen.generate(model, "c", name="m", positive_only=True)


def test_batch_handles_any_row_count_and_block():
    model = irfixtures.forest()
    X = irfixtures.probe_rows(model, n_random=150)[:203]
    for block in (1, 7, 64):
        res = run_c(rulegen.generate(model, "c", name="f", batch_block=block), "f", X)
        assert np.array_equal(res["batch"].view(np.uint64), res["out"].view(np.uint64))


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("form", ["auto", "nested", "goto", "table"])
def test_predict_leaves_names_the_evaluators_leaf(precision, form):
    cases = [irfixtures.classifier(), irfixtures.forest(), irfixtures.sigmoid_ensemble(),
             irfixtures.big_ensemble(130), tableable(random_model(5), 5), random_model(0), random_model(2), random_model(9)]
    for model in cases:
        if precision == "float32" and not float_ok(model):
            continue
        if any(isinstance(nd, Split) and isinstance(nd.missing, Blend) for t in model.trees for nd in t.nodes):
            continue  # refused: a blended tree reaches several leaves (next test)
        X = rows32(model) if precision == "float32" else irfixtures.probe_rows(model, n_random=60)
        files = rulegen.generate(model, "c", name="lv", leaves=True, precision=precision, form=form)
        res = run_c(files, "lv", X, cflags=FLOAT_FLAGS if precision == "float32" else STRICT)
        assert np.array_equal(res["leaves"], expected_leaves(model, X))


def test_predict_leaves_refuses_blends():
    model = irfixtures.every_construct()
    with pytest.raises(UnsupportedFeatureError, match=r"leaf ids for trees\[\d+\]"):
        rulegen.generate(model, "c", name="m", leaves=True)
