"""The Java target: generate, compile every class of this module in ONE javac run, run them all
in ONE JVM, compare with the evaluator: raw scores bit for bit, outputs bit for bit up to the
measured exp difference (Math.exp is not glibc's exp), classes, unseen counts, the Double[]
and batch forms, and the names read back."""

from __future__ import annotations

import dataclasses
import functools
import math
import subprocess
import sys

from imported_models import LIBRARIES, imported_models, installed
import irfixtures
import numpy as np
import pytest
from irfixtures import random_model
from run_java import have_java, run_java
from targetcheck import unseen_count

import rulegen
from rulegen.codegen.literals import java_comment, java_identifier
from rulegen.ir import evaluate as ev
from rulegen.ir import libm
from rulegen.ir.nodes import Feature, Model
from rulegen.ir.validate import validate
from rulegen.targets.java.target import EXP_ULPS
from rulegen.targets.java.table import le_bound

pytestmark = pytest.mark.skipif(not have_java(), reason="no javac/java (a JDK) on PATH")

RANDOM_SEEDS = range(36)
F32_SEEDS = range(12)


def _flip_dtype(model: Model) -> Model:
    return validate(dataclasses.replace(model, dtype="float32" if model.dtype == "float64" else "float64"))


def escape_model() -> Model:
    """Names that would be harmful if javac's \\u escapes (decoded before comments and strings
    are recognised) or a comment terminator got through: they must end up as plain text."""
    base = irfixtures.adversarial_names()
    names = ["\\u002a/ int boom;", "\\u000a} class Evil {", "\\\\u0022", "*/ /* \\", "a\\u005c", "年龄 \U0001F600"]
    feats = tuple(Feature(n) for n in names) + (base.features[-1],)
    return validate(dataclasses.replace(base, features=feats))


def _cases() -> dict:
    """name -> (model, rows). Built once; the names are fixed so pytest can list them."""
    cases = {}
    for name, model in irfixtures.all_models().items():
        cases[name] = (model, None)
        cases[name + "_flipped"] = (_flip_dtype(model), None)
    for seed in RANDOM_SEEDS:
        model = random_model(seed)
        cases[f"random_{seed}"] = (model, irfixtures.probe_rows(model, seed=seed))
        if seed in F32_SEEDS:
            cases[f"random_{seed}_flipped"] = (_flip_dtype(model), irfixtures.probe_rows(model, seed=seed))
    cases["hostile"] = (irfixtures.hostile_model(), None)
    cases["hostile_f32"] = (irfixtures.hostile_model("float32"), None)
    cases["escapes"] = (escape_model(), None)
    cases["chain_2500"] = (irfixtures.chain(2500), "limit")
    cases["big_ensemble_1000"] = (irfixtures.big_ensemble(1000), "limit")
    cases.update(imported_models())
    return cases


CASE_NAMES = ([n for m in irfixtures.all_models() for n in (m, m + "_flipped")]
              + [f"random_{s}" for s in RANDOM_SEEDS] + [f"random_{s}_flipped" for s in F32_SEEDS]
              + ["hostile", "hostile_f32", "escapes", "chain_2500", "big_ensemble_1000",
                 *[name for lib, names in LIBRARIES.items() if installed(lib) for name in names]])


@functools.lru_cache(maxsize=1)
def built() -> dict:
    """Every case generated, compiled in one javac run and run in one JVM."""
    cases = _cases()
    assert sorted(cases) == sorted(CASE_NAMES)
    jobs, rows = [], {}
    for i, (name, (model, X)) in enumerate(cases.items()):
        if X is None or isinstance(X, str):
            X = irfixtures.probe_rows(model, limit=3000 if X == "limit" else None)
        rows[name] = X
        jobs.append((rulegen.generate(model, "java", name=f"M{i}_{name}"), X))
    extra = [("Reader", {}), ("java", {}), ("Math", {}), ("System", {}), ("NoComments", {"comments": False})]
    for name, options in extra:  # class names that would clash (renamed), and no comments
        jobs.append((rulegen.generate(cases["every_construct"][0], "java", name=name, **options),
                     rows["every_construct"]))
    results = run_java(jobs)
    for res in results[len(cases):]:
        assert _same(res["out"], results[list(cases).index("every_construct")]["out"])
    return {name: (cases[name][0], rows[name], res) for name, res in zip(cases, results)}


def _ulps(got: np.ndarray, want: np.ndarray, f32: bool) -> np.ndarray:
    """Units in the last place between two arrays of values (0 where both are NaN)."""
    def ordered(a):  # IEEE bits as sign-magnitude integers, ordered like the values
        bits = a.astype(np.float32).view(np.int32) if f32 else a.view(np.int64)
        mask = (1 << 31) - 1 if f32 else (1 << 63) - 1
        return np.array([int(b) if b >= 0 else -(int(b) & mask) for b in bits.ravel()], dtype=object)

    d = np.abs(ordered(got) - ordered(want)).astype(float).reshape(got.shape)
    d[np.isnan(got) & np.isnan(want)] = 0
    return d


def _same(a, b) -> bool:
    return np.array_equal(np.asarray(a, dtype=np.float64).view(np.uint64), np.asarray(b, dtype=np.float64).view(np.uint64))


def check(name: str) -> dict:
    model, X, res = built()[name]
    with np.errstate(all="ignore"):
        raw = ev.raw_scores(model, X)
        classifier = model.target.task == "classification"
        want = ev.predict_proba(model, X) if classifier else ev.predict_value(model, X)
    want = np.asarray(want, dtype=np.float64)
    bad = ~((res["raw"] == raw) | (np.isnan(res["raw"]) & np.isnan(raw)))
    assert not bad.any(), f"{name}: raw differs on {bad.any(axis=1).sum()} of {len(X)} rows"
    f32 = model.dtype == "float32"
    binary = classifier and model.n_raw == 1
    if binary:  # the class-0 column is 1 - out, computed exactly from the link's output
        with np.errstate(all="ignore"):
            one = (np.float32(1) - res["out"][:, 1].astype(np.float32)) if f32 else 1.0 - res["out"][:, 1]
        assert _same(res["out"][:, 0], one)
    ulps = _ulps(res["out"][:, 1:] if binary else res["out"], want[:, 1:] if binary else want, f32)
    if model.link == "identity":
        assert ulps.max(initial=0) == 0, f"{name}: outputs differ with no exp in the link"
    else:
        assert ulps.max(initial=0) <= EXP_ULPS[model.dtype], f"{name}: {ulps.max()} ulps"
    # the Double[] form (null = missing), both batch forms: the same bits as the one-row calls
    assert _same(res["boxed"], res["out"]) and _same(res["batch"], res["out"]) and _same(res["flat"], res["out"])
    if classifier:
        assert np.array_equal(res["class"], np.argmax(res["out"], axis=1))
        same_row = (res["out"] == want).all(axis=1) | np.isnan(want).any(axis=1)
        assert np.array_equal(res["class"][same_row], np.argmax(want, axis=1)[same_row])
    assert np.array_equal(res["unseen"], unseen_count(model, X))
    features, classes, cats = res["names"]
    assert features == [f.name for f in model.features]
    assert classes == ([str(c) for c in model.target.classes] if classifier else [])
    assert cats == [[str(c) for c in f.categories] for f in model.features]
    return {"ulps": ulps, "res": res, "model": model}


@pytest.mark.parametrize("name", CASE_NAMES)
def test_exact(name):
    check(name)


def test_exp_difference_is_bounded():
    """The measured difference Math.exp makes, per dtype: how many outputs differ from the
    evaluator's and by how many ulps (docs/targets/java.md quotes these numbers). float32
    links round exp to float, which equals the float-rounded glibc exp on every row here."""
    stats: dict = {}
    for name in CASE_NAMES:
        model, X, res = built()[name]
        if model.link == "identity":
            continue
        ulps = check(name)["ulps"]
        s = stats.setdefault((model.dtype, model.link), [0, 0, 0.0])
        s[0] += int((ulps > 0).sum())
        s[1] += ulps.size
        s[2] = max(s[2], float(ulps.max(initial=0)))
        if model.dtype == "float32":  # what a correct float rounding of glibc's exp would give
            with np.errstate(all="ignore"):
                out = ev.apply_link_f32(model.link, res["raw"], expf=libm.exp_rounded_array)
                if model.target.task == "classification":
                    out = ev.proba_of(model, out)
            assert _same(res["out"], np.asarray(out, dtype=np.float64)), name
    for (dtype, link), (n_bad, n, worst) in sorted(stats.items()):
        print(f"{dtype} {link}: {n_bad} of {n} outputs differ, at most {worst:g} ulp(s)")
        assert worst <= EXP_ULPS[dtype]
        assert n_bad < n / 50  # under 1% on these adversarial rows: a last-place difference, not a bug


def test_deep_and_big_models_run_quickly():
    for name in ("chain_2500", "big_ensemble_1000"):
        model, X, res = built()[name]
        print(f"{name}: {len(X)} rows in {res['seconds']:.2f} s (5 calls a row), "
              f"one javac run for all cases {res['compile_s']:.1f} s, one JVM {res['run_s']:.1f} s")
        assert res["seconds"] < 60
    files = rulegen.generate(irfixtures.big_ensemble(1000), "java", name="Big")
    assert len(files["Big.java"]) < 2_000_000  # 40k nodes as strings: about 1 MB


@np.errstate(over="ignore")
def test_le_bound_matches_the_ir_test():
    """x <= le_bound(op, t) is the IR test for doubles near every kind of threshold."""
    f32max = float(np.finfo(np.float32).max)
    for t in (0.0, -0.0, 1.0, -2.5, 0.1, 5e-324, f32max, -f32max, math.inf, -math.inf, 1e300):
        for dtype in ("float64", "float32"):
            if dtype == "float32" and float(np.float32(t)) != t and not math.isinf(t):
                continue
            for op in ("<", "<="):
                b = le_bound(op, t, dtype)
                xs = [t, math.inf, -math.inf, 0.0, -0.0, 1e308, -1e308]
                if math.isfinite(t):
                    xs += [math.nextafter(t, math.inf), math.nextafter(t, -math.inf)]
                    for s in np.float32(t), :
                        xs += [float(np.nextafter(s, np.float32(np.inf))), float(np.nextafter(s, np.float32(-np.inf)))]
                for x in xs:
                    with np.errstate(over="ignore"):
                        xv = float(np.float32(x)) if dtype == "float32" else x
                        tv = float(np.float32(t)) if dtype == "float32" else t
                    want = xv < tv if op == "<" else xv <= tv
                    assert (x <= b) == want, (op, t, dtype, x, b)


def test_java_comment_and_identifier():
    for s in ["*/", "\\u002a/", "\\\\u002a/", "a\nb\r\u2028c", "年", "\U0001F600", "/*", "\\"]:
        text = java_comment(s)
        assert "*/" not in text and "/*" not in text and "\n" not in text and text.isascii()
        # every backslash run is even, so none can start a \u escape
        for run in text.split("\\")[1::2]:
            assert run == ""
    for name in ["class", "1st", "年龄", "", "_", "String", "a-b", "Math", "Reader", "java"]:
        ident = java_identifier(name)
        assert ident.isidentifier() and ident.isascii()
        assert ident not in ("class", "String", "Math", "_", "Reader", "java")


def test_cli_writes_a_class(tmp_path):
    from rulegen.ir.serialize import dumps

    path = tmp_path / "m.json"
    path.write_text(dumps(irfixtures.classifier()))
    out = tmp_path / "out" / "my-model.java"
    out.parent.mkdir()
    proc = subprocess.run([sys.executable, "-m", "rulegen.cli", "compile", str(path), "--target", "java",
                           "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    made = tmp_path / "out" / "my_model.java"  # the file is named after the class
    assert "public final strictfp class my_model {" in made.read_text()
