"""The C target: generate, compile with cc, run on adversarial rows, compare bit for bit
with the evaluator (raw scores, outputs, class, and the float-input variant)."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import irfixtures
from irfixtures import random_model
import numpy as np
import pytest
from run_c import STRICT, build, have_cc, run_c

from rulegen.errors import RulegenError
from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import Blend, DefaultChild, Model, Split
from rulegen.ir.validate import validate
from rulegen.targets.c import CTarget

pytestmark = pytest.mark.skipif(not have_cc(), reason="no C compiler (cc) on PATH")

FMA_FLAGS = ("-std=gnu99", "-Wall", "-Wextra", "-Werror", "-march=native", "-ffp-contract=fast")


def expected(model: Model, X: np.ndarray) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # float32 overflow of 1e308 is intended
        Xf = X.astype(np.float32).astype(np.float64)
    if model.target.task == "classification":
        return {"raw": ev.raw_scores(model, X), "out": ev.predict_proba(model, X),
                "out_f": ev.predict_proba(model, Xf), "class": ev.predict_class_index(model, X)}
    return {"raw": ev.raw_scores(model, X), "out": ev.predict_value(model, X),
            "out_f": ev.predict_value(model, Xf), "class": None}


def check(model: Model, name: str = "model", X=None, opt: str = "-O1", cflags=STRICT, **options) -> dict:
    """Generate, compile, run and compare everything exactly; return the run's result."""
    files = CTarget().generate(model, name=name, **options)
    X = irfixtures.probe_rows(model) if X is None else X
    res = run_c(files, name, X, opt=opt, cflags=cflags)
    want = expected(model, X)
    for key in ("raw", "out", "out_f"):
        got, exp = res[key], np.asarray(want[key], dtype=np.float64)
        bad = ~((got == exp) | (np.isnan(got) & np.isnan(exp)))
        assert not bad.any(), (f"{key} differs on {bad.any(axis=1).sum()} of {len(X)} rows; first "
                               f"row {X[bad.any(axis=1)][0].tolist()}: C {got[bad.any(axis=1)][0].tolist()} "
                               f"vs evaluator {exp[bad.any(axis=1)][0].tolist()}")
    if want["class"] is not None:
        assert np.array_equal(res["class"], want["class"])
    res["files"] = files
    return res


# --- every fixture model, every form --------------------------------------------------


@pytest.mark.parametrize("model_name", sorted(irfixtures.all_models()))
def test_fixture_models_exact(model_name):
    check(irfixtures.all_models()[model_name], model_name)


@pytest.mark.parametrize("form", ["nested", "goto"])
@pytest.mark.parametrize("model_name", sorted(irfixtures.all_models()))
def test_fixture_models_each_form(model_name, form):
    check(irfixtures.all_models()[model_name], model_name, opt="-O0", form=form)


def _without_blends(model: Model, child: int) -> Model:
    """every_construct with each blend replaced by a default child, so the multiway, oblique,
    interval and surrogate splits go through the nested and goto forms too."""
    def fix(n):
        if isinstance(n, Split) and isinstance(n.missing, Blend):
            return dataclasses.replace(n, missing=DefaultChild(min(child, len(n.children) - 1)))
        return n
    return validate(dataclasses.replace(model, trees=tuple(
        dataclasses.replace(t, nodes=tuple(fix(n) for n in t.nodes)) for t in model.trees)))


@pytest.mark.parametrize("form", ["nested", "goto"])
@pytest.mark.parametrize("child", [0, 1, 2])
def test_every_construct_without_blends(child, form):
    check(_without_blends(irfixtures.every_construct(), child), "ec", opt="-O0", form=form)


# --- random models with every construct in every combination -------------------------------

@pytest.mark.parametrize("seed", range(36))
def test_random_models(seed):
    model = random_model(seed)
    check(model, f"r{seed}", irfixtures.probe_rows(model, seed=seed), opt="-O2" if seed % 4 == 3 else "-O0",
          form=["auto", "goto", "nested"][seed % 3])


# --- scale ------------------------------------------------------------------------------------


def test_chain_2500_deep():
    model = irfixtures.chain(2500)
    files = CTarget().generate(model, name="chain")
    assert "goto form" in files["chain.c"]
    assert _max_brace_depth(files["chain.c"]) <= 2
    check(model, "chain", opt="-O1")


def test_big_ensemble_1000_trees():
    model = irfixtures.big_ensemble(1000)
    t0 = time.perf_counter()
    files = CTarget().generate(model, name="big")
    seconds = time.perf_counter() - t0
    sources = sorted(f for f in files if f.endswith(".c"))
    assert len(sources) == 10 and sources[0] == "big.c" and "big_9.c" in sources
    res = check(model, "big", irfixtures.probe_rows(model, limit=3000), opt="-O1")
    print(f"big_ensemble(1000): generate {seconds:.2f} s, compile {res['compile_seconds']:.2f} s")


def _max_brace_depth(text: str) -> int:
    depth = deepest = 0
    for ch in re.sub(r'/\*.*?\*/|"(\\.|[^"\\])*"', "", text, flags=re.DOTALL):
        depth += (ch == "{") - (ch == "}")
        deepest = max(deepest, depth)
    return deepest


def test_nesting_limit_chooses_goto_form():
    limit = CTarget.MAX_NESTING
    shallow = CTarget().generate(irfixtures.chain(limit), name="m")["m.c"]
    deep = CTarget().generate(irfixtures.chain(limit + 1), name="m")["m.c"]
    assert "nested form" in shallow and _max_brace_depth(shallow) <= limit + 1
    assert "goto form" in deep and _max_brace_depth(deep) <= 2
    for model in [*irfixtures.all_models().values(), *(random_model(s) for s in range(36))]:
        for text in CTarget().generate(model, name="m").values():
            assert _max_brace_depth(text) <= limit + 3  # function + blend blocks at most


# --- floating point: contraction, float inputs -------------------------------------------


@pytest.mark.parametrize("variant", ["blends", "no_blends"])
def test_fma_contraction_cannot_change_results(variant):
    """gnu99 -O2 -march=native -ffp-contract=fast fuses ``s + w*x`` unless the product passes a
    volatile (without it, 10 of every_construct's probe rows change; see c.py)."""
    model = irfixtures.every_construct()
    if variant == "no_blends":
        model = _without_blends(model, 0)
    check(model, "fma", irfixtures.probe_rows(model, n_random=2000), opt="-O2", cflags=FMA_FLAGS)


def test_strict_O2():
    """gcc 12 -O2 vectorises (double)(float)x in the softmax loop into nothing unless the
    rounding goes through a volatile float (this test failed before that)."""
    check(irfixtures.softmax_ensemble("float32"), "sm", opt="-O2")


def test_float_variant_on_float32_rows():
    model = irfixtures.classifier()
    X = irfixtures.probe_rows(model).astype(np.float32).astype(np.float64)
    res = check(model, "f", X)  # check() also compares out_f on the rounded rows
    assert np.array_equal(res["out_f"], res["out"], equal_nan=True)


# --- names, escaping, interface ----------------------------------------------------------


def test_adversarial_names_read_back():
    model = irfixtures.adversarial_names()
    res = check(model, "adv")
    assert res["feature_names"] == list(irfixtures.ADVERSARIAL_NAMES)
    assert res["classes"] == [str(c) for c in model.target.classes]
    header = res["files"]["adv.h"]
    assert "\\u5e74\\u9f84" in header and "*/ x" not in header
    assert header.count("/*") == header.count("*/")


@pytest.mark.parametrize("name, prefix", [("my model", "my_model"), ("int", "int_"), ("1st", "m_1st")])
def test_user_names_become_identifiers(name, prefix):
    model = irfixtures.regressor()
    files = CTarget().generate(model, name=name)
    assert sorted(files) == [f"{prefix}.c", f"{prefix}.h"]
    assert f"void {prefix}_predict(const double *features, double *out);" in files[f"{prefix}.h"]
    X = irfixtures.probe_rows(model)
    res = run_c(files, prefix, X, opt="-O0")
    assert np.array_equal(res["out"], ev.predict_value(model, X), equal_nan=True)


def test_header_is_valid_cplusplus(tmp_path):
    """The header compiles as C++98 and its extern "C" block links against the C object."""
    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    files = CTarget().generate(irfixtures.adversarial_names(), name="adv")
    for fname, text in files.items():
        (tmp_path / fname).write_text(text)
    (tmp_path / "use.cc").write_text(
        '#include "adv.h"\nint main() {\n  double x[adv_N_FEATURES] = {0};\n'
        "  return adv_predict_class(x) == 0 && adv_CLASSES[0][0] == 'i' ? 0 : 1;\n}\n")
    subprocess.run(["cc", *STRICT, "-c", "adv.c"], cwd=tmp_path, check=True)
    subprocess.run([cxx, "-std=c++98", "-Wall", "-Wextra", "-Werror", "-pedantic", "use.cc", "adv.o",
                    "-o", "use"], cwd=tmp_path, check=True)
    subprocess.run(["./use"], cwd=tmp_path, check=True)


def test_header_contract():
    files = CTarget().generate(irfixtures.sigmoid_ensemble(), name="s")
    h = files["s.h"]
    for decl in ("#define s_N_FEATURES 4", "#define s_N_OUTPUTS 2", "#define s_N_RAW 1",
                 "#define s_N_CLASSES 2", "extern const char *const s_FEATURE_NAMES[s_N_FEATURES];",
                 "extern const char *const s_CLASSES[s_N_CLASSES];",
                 "int s_predict_class(const double *features);",
                 "void s_predict_raw(const double *features, double *raw);",
                 "void s_predict_f(const float *features, double *out);", "link with -lm",
                 "#ifdef __cplusplus"):
        assert decl in h, decl
    reg = CTarget().generate(irfixtures.regressor(), name="r")
    assert "predict_class" not in reg["r.h"] and "-lm is not needed" in reg["r.h"]
    assert "#include <math.h>" not in reg["r.c"]
    cats = CTarget().generate(irfixtures.every_construct(), name="e")["e.h"]
    assert '3 = "it\'s"' in cats and "0 = 10" in cats


def test_generated_text_is_plain_c():
    """ASCII only, no header but <math.h>, and nothing at file scope that could change:
    only const string tables and functions (local tables are static const)."""
    for model in [*irfixtures.all_models().values(), random_model(4)]:
        for fname, text in CTarget().generate(model, name="m").items():
            assert text.isascii()
            assert set(re.findall(r"#include\s*<[^>]*>", text)) <= {"#include <math.h>"}
            if fname.endswith(".h"):
                continue
            for line in re.findall(r"^\w.*$", text, re.MULTILINE):
                assert re.match(r"(const char \*const m_\w+\[m_N_\w+\] = \{|"
                                r"(static )?(void|int|double) m_\w+\(|n\d+:$)", line), line
            local_statics = re.findall(r"^\s+static .*$", text, re.MULTILINE)
            assert all(line.lstrip().startswith("static const ") for line in local_statics)


def test_deterministic(tmp_path):
    model = irfixtures.every_construct()
    first = CTarget().generate(model, name="det")
    assert first == CTarget().generate(model, name="det")
    script = ("import sys, json; sys.path.insert(0, 'tests'); import irfixtures;"
              "from rulegen.targets.c import CTarget;"
              "print(json.dumps(CTarget().generate(irfixtures.every_construct(), name='det')))")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"}, check=True).stdout
    assert json.loads(out) == first


def test_options():
    model = irfixtures.classifier()
    plain = CTarget().generate(model, name="m", comments=False)["m.c"]
    assert "/* node" not in plain and "/* node" in CTarget().generate(model, name="m")["m.c"]
    check(model, "m", opt="-O0", comments=False)
    with pytest.raises(RulegenError):
        CTarget().generate(model, name="m", colour=True)
    with pytest.raises(RulegenError):
        CTarget().generate(model, name="m", form="table")


def test_build_reuses_directory(tmp_path):
    files = CTarget().generate(irfixtures.regressor(), name="r")
    exe = build(files, "r", tmp_path, opt="-O0")
    assert exe.exists() and (tmp_path / "r.h").read_text() == files["r.h"]
