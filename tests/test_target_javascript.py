"""The JavaScript target: generate ES modules, run them ALL in one node process on adversarial rows,
and compare with the evaluator bit for bit (raw scores; outputs too, except where V8's Math.exp
differs from glibc's: there within the bound the generated header states, measured here)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from imported_models import LIBRARIES, imported_models, missing
import irfixtures as F
import numpy as np
import pytest
from run_javascript import as_f32_rows, have_node, run_js

from rulegen.codegen import lower
from rulegen.codegen.literals import js_comment, js_label, js_number, js_string
from rulegen.codegen.registry import generate
from rulegen.errors import RulegenError
from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import Model
from rulegen.ir.serialize import dumps
from rulegen.ir.validate import validate
from rulegen.targets import javascript as js

pytestmark = pytest.mark.skipif(not have_node(), reason="no Node.js (node) on PATH")

ROOT = Path(__file__).resolve().parents[1]
N_RANDOM = 40


def _f32_variant(model: Model) -> Model | None:
    try:
        return validate(dataclasses.replace(model, dtype="float32"))
    except RulegenError:
        return None


def _cases() -> dict[str, tuple[Model, np.ndarray]]:
    cases = {}
    for name, model in F.all_models().items():
        cases[name] = (model, F.probe_rows(model))
        v = _f32_variant(model) if model.dtype == "float64" else None
        if v is not None:
            cases[name + "_as_f32"] = (v, F.probe_rows(v))
    for seed in range(N_RANDOM):
        model = F.random_model(seed)
        cases[f"random_{seed}"] = (model, F.probe_rows(model, seed=seed, limit=600))
    for dtype in ("float64", "float32"):
        model = F.hostile_model(dtype)
        cases[f"hostile_{dtype}"] = (model, F.probe_rows(model, limit=300))
    cases["chain_2500"] = (F.chain(2500), F.probe_rows(F.chain(2500), limit=500))
    big = F.big_ensemble(1000)
    cases["big_ensemble_1000"] = (big, F.probe_rows(big, limit=300))
    cases.update(imported_models())
    return cases


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Every case generated, then ONE node process imports and runs them all."""
    cases = _cases()
    t0 = time.perf_counter()
    jobs = {key: (generate(model, "javascript", name=key), X) for key, (model, X) in cases.items()}
    gen_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    results = run_js(jobs, tmp_path_factory.mktemp("js"), api={"every_construct", "regressor"})
    node_s = time.perf_counter() - t0
    print(f"\njavascript: {len(jobs)} modules generated in {gen_s:.1f} s, run by node in {node_s:.1f} s")
    return {"cases": cases, "jobs": jobs, "results": results, "node_s": node_s}


# --- bits and ulps ------------------------------------------------------------------------------


def _bits(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def same_bits(a, b) -> np.ndarray:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return (_bits(a) == _bits(b)) | (np.isnan(a) & np.isnan(b))


def ulps(a, b, dtype: str) -> np.ndarray:
    """Distance in units in the last place of ``dtype`` (0 for two NaNs, -0 vs 0 is 0)."""
    a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if dtype == "float32":
        ia = a.astype(np.float32).view(np.int32).astype(np.int64)
        ib = b.astype(np.float32).view(np.int32).astype(np.int64)
        lo = -(2**31)
    else:
        ia, ib, lo = a.view(np.int64).tolist(), b.view(np.int64).tolist(), -(2**63)
        ia, ib = np.array(ia, dtype=object), np.array(ib, dtype=object)
    oa = np.where(np.asarray(ia) < 0, lo - np.asarray(ia), ia)
    ob = np.where(np.asarray(ib) < 0, lo - np.asarray(ib), ib)
    d = np.abs(np.asarray(oa, dtype=object) - np.asarray(ob, dtype=object))
    d[np.isnan(a) & np.isnan(b)] = 0
    d[np.isnan(a) ^ np.isnan(b)] = 2**64
    return d.astype(float)


def _first_diff(got, want, X) -> str:
    bad = ~same_bits(got, want).reshape(len(got), -1).all(axis=1)
    i = int(np.flatnonzero(bad)[0])
    return f"{bad.sum()} rows differ; row {i}: {X[i].tolist()} gives {got[i].tolist()}, evaluator {want[i].tolist()}"


def expected_outputs(model: Model, X: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if model.target.task == "classification":
            return ev.predict_proba(model, X).astype(np.float64)
        return ev.predict_value(model, X).astype(np.float64)


def _binary(model: Model) -> bool:
    return model.target.task == "classification" and model.n_raw == 1 and len(model.target.classes) == 2


def link_outputs(model: Model, out: np.ndarray) -> np.ndarray:
    """The link's outputs inside what predictProba / predict give (a binary classifier's
    probability of class 1 is the link's output; class 0 gets 1 - it)."""
    return out[:, 1:] if _binary(model) else out


def folded(model: Model) -> bool:
    """One tree without blends: the module holds each leaf's outputs, computed at generation."""
    return len(model.trees) == 1 and not lower.has_blend(model.trees[0])


def exp_bound(model: Model) -> int:
    if model.link == "identity" or folded(model):
        return 0
    return js.EXP_ULPS_F32 if model.dtype == "float32" else js.EXP_ULPS_F64


def exp_differences(model: Model, X: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ulps of each link output in the model's dtype, absolute difference of each output)."""
    want = expected_outputs(model, X)
    d = ulps(link_outputs(model, out), link_outputs(model, want), model.dtype)
    with np.errstate(invalid="ignore"):
        a = np.where(same_bits(out, want), 0.0, np.abs(out - want))
    return d, a


def check_case(key: str, model: Model, X: np.ndarray, res: dict) -> None:
    """Raw scores exact (also from a Float32Array batch); outputs exact, or after an exp
    within the bound the header states (probabilities within that many epsilons); classes
    the evaluator's wherever the probabilities are."""
    raw = ev.raw_scores(model, X).astype(np.float64)
    assert same_bits(res["raw"], raw).all(), f"{key} raw: " + _first_diff(res["raw"], raw, X)
    Xf = as_f32_rows(X)
    raw_f = ev.raw_scores(model, Xf).astype(np.float64)
    assert same_bits(res["raw_f32"], raw_f).all(), f"{key} Float32Array raw: " + _first_diff(res["raw_f32"], raw_f, Xf)
    want = expected_outputs(model, X)
    bound = exp_bound(model)
    if bound == 0:
        assert same_bits(res["out"], want).all(), f"{key} outputs: " + _first_diff(res["out"], want, X)
    else:
        d, a = exp_differences(model, X, res["out"])
        eps = 2.0**-23 if model.dtype == "float32" else 2.0**-52
        assert d.max(initial=0) <= bound, f"{key} outputs beyond {bound} ulp: " + _first_diff(res["out"], want, X)
        if model.target.task == "classification":
            assert a.max(initial=0) <= bound * eps, key
    if res["class"] is not None:
        same_row = same_bits(res["out"], want).all(axis=1)
        want_cls = ev.predict_class_index(model, X)
        assert np.array_equal(res["class"][same_row], want_cls[same_row]), key
        assert np.array_equal(res["class"], np.argmax(res["out"], axis=1)), key
    assert res["null_diff"] == 0, f"{key}: null/undefined/objects differ from NaN on {res['null_diff']} rows"
    assert res["batch_diff"] == 0, f"{key}: batch forms differ from the one-row form on {res['batch_diff']} rows"


# --- the cases ----------------------------------------------------------------------------------


FIXTURES = sorted(F.all_models())


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_models_exact(run, name):
    model, X = run["cases"][name]
    check_case(name, model, X, run["results"][name])


def test_fixture_models_as_float32_exact(run):
    keys = [k for k in run["cases"] if k.endswith("_as_f32")]
    assert len(keys) >= 6
    for key in keys:
        check_case(key, *run["cases"][key], run["results"][key])


def test_random_models_exact(run):
    """random_model mixes every split kind, missing rule, unseen route, +-inf and float32
    thresholds, blends, weights, output indices, aggregations, links and dtypes."""
    for seed in range(N_RANDOM):
        key = f"random_{seed}"
        check_case(key, *run["cases"][key], run["results"][key])


@pytest.mark.parametrize("lib", sorted(LIBRARIES))
def test_imported_models_exact(run, lib):
    """Every model of each installed library (CI installs them all) is among the cases, exact."""
    pytest.importorskip(lib)
    assert not missing(run["cases"], lib)
    for key in LIBRARIES[lib]:
        check_case(key, *run["cases"][key], run["results"][key])


def test_chain_2500_deep_and_1000_trees(run):
    for key in ("chain_2500", "big_ensemble_1000"):
        check_case(key, *run["cases"][key], run["results"][key])
    text = next(iter(run["jobs"]["chain_2500"][0].values()))
    assert max(len(line) - len(line.lstrip()) for line in text.splitlines()) <= 8  # no nesting
    assert run["node_s"] < 120


def test_exp_difference_within_the_stated_bound(run):
    """V8's Math.exp is not glibc's: count the outputs that differ and by how much, per dtype;
    the bounds are the ones the generated header and docs/targets/javascript.md state."""
    stats = {dt: {"outputs": 0, "differ": 0, "max_ulps": 0, "flips": 0, "max_abs_proba": 0.0}
             for dt in ("float64", "float32")}
    for key, (model, X) in run["cases"].items():
        if exp_bound(model) == 0:
            continue
        res = run["results"][key]
        d, a = exp_differences(model, X, res["out"])
        s = stats[model.dtype]
        s["outputs"] += d.size
        s["differ"] += int((d > 0).sum())
        s["max_ulps"] = max(s["max_ulps"], int(d.max(initial=0)))
        if model.target.task == "classification":
            s["max_abs_proba"] = max(s["max_abs_proba"], float(a.max(initial=0)))
            s["flips"] += int((res["class"] != ev.predict_class_index(model, X)).sum())
    print("\nexp differences:", json.dumps(stats))
    assert stats["float64"]["outputs"] > 10000 and stats["float32"]["outputs"] > 10000
    assert stats["float64"]["max_ulps"] <= js.EXP_ULPS_F64
    assert stats["float32"]["max_ulps"] <= js.EXP_ULPS_F32


# --- hostile text -------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["adversarial_names", "hostile_float64", "hostile_float32"])
def test_names_and_labels_read_back_exactly(run, key):
    model = run["cases"][key][0]
    res = run["results"][key]
    assert res["features"] == [f.name for f in model.features]
    assert res["classes"] == list(model.target.classes)


@pytest.mark.parametrize("key", ["adversarial_names", "hostile_float64", "every_construct"])
def test_user_text_only_in_strings_and_comments(run, key):
    text = next(iter(run["jobs"][key][0].values()))
    assert text.isascii()
    header_end = text.index("*/")
    assert text[header_end:].startswith("*/\n\nexport const FEATURES")
    body = text[header_end + 2:]
    # with every string literal and // comment removed, no user text is left
    code = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', body)
    code = re.sub(r"//[^\n]*", "", code)
    assert "/*" not in code and "*/" not in code
    for f in run["cases"][key][0].features:
        if not re.fullmatch(r"\w+", f.name):  # (plain words are also the code's own names)
            assert f.name not in code


def test_literals():
    for v in (0.1, -0.0, 0.0, 5e-324, 1.7976931348623157e308, 1e22, 1 / 3, -2.5e-39):
        assert float(js_number(v)) == v and math.copysign(1, float(js_number(v))) == math.copysign(1, v)
    assert js_number(math.inf) == "Infinity" and js_number(-math.inf) == "-Infinity"
    assert js_number(math.nan) == "NaN"
    assert js_string('a"b\\c\n\u2028</script>') == '"a\\"b\\\\c\\n\\u2028\\u003c/script>"'
    assert js_label(3) == "3" and js_label(2**60) == f"{2**60}n" and js_label("x") == '"x"'
    assert js_comment("a */ b\nc\u2029d /* e") == "a * / b c d / * e"


# --- the API --------------------------------------------------------------------------------------


def test_bad_rows_are_refused_not_guessed(run):
    api = run["results"]["every_construct"]["api"]
    assert api["string"] == "TypeError" and api["bigint"] == "TypeError"
    assert api["boolean"] == "TypeError" and api["notARow"] == "TypeError"
    assert api["short"] == "RangeError" and api["long"] == "RangeError"
    assert api["objectMissingKey"] == "RangeError" and api["badTyped"] == "RangeError"
    assert api["object"] == "none" and api["emptyBatch"] == 0
    assert api["unseen"] == ["colour", "size", "code"]  # 0.5 is no code
    assert api["unseenNone"] == [] and api["unseenMissing"] == []
    assert run["results"]["regressor"]["api"]["unseen"] == []


def test_one_tree_models_with_a_link_are_exact(run):
    """A one-tree model's outputs are folded per leaf with the evaluator's exp: bit-exact."""
    keys = [k for k, (m, _X) in run["cases"].items() if folded(m) and m.link != "identity"]
    assert len(keys) >= 3, keys
    for key in keys:
        text = next(iter(run["jobs"][key][0].values()))
        assert "const OUTS = " in text and "Math.exp is not the C library's exp" not in text
        check_case(key, *run["cases"][key], run["results"][key])  # exp_bound 0: bit for bit


def test_header_states_provenance_and_exp_note():
    model = F.softmax_ensemble("float32")
    model = dataclasses.replace(model, provenance=dataclasses.replace(
        model.provenance, algorithm="xgboost */ gbtree", library="xgboost 3.0.2", n_samples=100))
    text = generate(model, "javascript", name="m")["m.mjs"]
    head = text[:text.index("*/") + 2]
    assert "Model: algorithm xgboost * / gbtree." in head and "trained with xgboost 3.0.2" in head
    assert "Math.exp is not the C library's exp" in head and "2 float32 ulps" in head
    plain = generate(F.classifier(), "javascript", name="m")["m.mjs"]
    assert "and so do the outputs" in plain and "Math.exp" not in plain


def test_deterministic_and_options():
    m = F.every_construct()
    assert generate(m, "javascript", name="a b") == generate(m, "javascript", name="a b")
    assert list(generate(m, "javascript", name="a b/c")) == ["a_b_c.mjs"]
    with pytest.raises(RulegenError, match="unknown option"):
        generate(m, "javascript", form="nested")


def test_cli_compiles_a_module(tmp_path):
    model_path = tmp_path / "iris.json"
    model_path.write_text(dumps(F.classifier()))
    out = tmp_path / "out" / "iris.mjs"
    out.parent.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "rulegen.cli", "compile", str(model_path), "--target",
                           "javascript", "-o", str(out)], capture_output=True, text=True, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == generate(F.classifier(), "javascript", name="iris")["iris.mjs"]
    proc = subprocess.run([sys.executable, "-m", "rulegen.cli", "compile", str(model_path), "--target",
                           "javascript", "--form", "table"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 2 and "--form applies to the c and go targets only" in proc.stderr
