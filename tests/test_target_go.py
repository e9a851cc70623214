"""The Go target: generate, build with the real go toolchain, run on adversarial rows, compare
bit for bit with the evaluator (raw scores always; outputs too, except that links with exp go
through Go's math.Exp, whose measured difference is asserted here).

Every model of this module is built in ONE ``go build`` (one package per model in one module;
tests/run_go.py), run once, and the tests below look up their model's results.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import shutil
import warnings

import imported_models as imported
import irfixtures as F
import numpy as np
import pytest
from run_go import have_go, run_go_many
from test_target_c import far_codes, table_ensemble, tableable  # the C tests' table-form models

from rulegen.codegen.literals import go_comment, go_float, go_identifier, go_string
from rulegen.errors import RulegenError
from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import Blend, DefaultChild, Feature, Leaf, Model, NumericTest, Split, Target, Tree
from rulegen.ir.validate import validate
from rulegen.targets.go import table as go_table
from rulegen.targets.go.target import GoTarget

pytestmark = pytest.mark.skipif(not have_go(), reason="no go toolchain on PATH (Debian: golang-go)")

FORMS = ("auto", "nested", "goto", "table")
# Go's math.Exp is not glibc's exp: measured on this module's rows (docs/targets/go.md; go 1.19,
# amd64), outputs of links with exp differ from the evaluator by at most this many units in the
# last place of max(|value|, 1) for probabilities (1 - p carries p's absolute difference) or of
# |value| for the outputs of regressors.
EXP_ULPS = 1


def _f32_variant(model: Model) -> Model:
    return validate(dataclasses.replace(model, dtype="float32"))


def _without_blends(model: Model, child: int) -> Model:
    def fix(n):
        if isinstance(n, Split) and isinstance(n.missing, Blend):
            return dataclasses.replace(n, missing=DefaultChild(min(child, len(n.children) - 1)))
        return n
    return validate(dataclasses.replace(model, trees=tuple(
        dataclasses.replace(t, nodes=tuple(fix(n) for n in t.nodes)) for t in model.trees)))


def _edges(dtype: str) -> Model:
    """Every awkward threshold, both ops, one single-split tree each with leaf 2**k, so the sum
    says exactly which trees went left (the table's +-x <= t rewriting at its limits)."""
    tiny = 5e-324 if dtype == "float64" else float(np.nextafter(np.float32(0), np.float32(1)))
    big = 1.7976931348623157e308 if dtype == "float64" else F.F32MAX
    trees = []
    for t in [-math.inf, -big, -1.5, -tiny, -0.0, 0.0, tiny, 2.0**-126, 1.5, big, math.inf]:
        for op in ("<", "<="):
            for missing in (0, 1):
                trees.append(Tree((Split(NumericTest(0, op, t, dtype), (1, 2), DefaultChild(missing)),
                                   Leaf((2.0 ** len(trees),)), Leaf((0.0,)))))
    return validate(Model((Feature("x"),), Target("regression", "y"), tuple(trees), (0.0,)))


@functools.lru_cache(maxsize=1)
def _cases() -> dict[str, tuple[Model, np.ndarray, dict]]:
    cases = {}
    for name, model in F.all_models().items():
        X = F.probe_rows(model)
        for form in FORMS:
            cases[f"{name}_{form}"] = (model, X, {"form": form})
        cases[f"{name}_f32"] = (_f32_variant(model), X, {})
    cases["nocomments"] = (F.every_construct(), F.probe_rows(F.every_construct()), {"comments": False})
    for child in (0, 1, 2):
        model = _without_blends(F.every_construct(), child)
        for form in ("nested", "goto"):
            cases[f"noblend{child}_{form}"] = (model, F.probe_rows(model), {"form": form})
    for seed in range(36):
        model = F.random_model(seed)
        cases[f"r{seed}"] = (model, F.probe_rows(model, seed=seed), {"form": FORMS[seed % 4]})
        if seed % 3 == 0:
            cases[f"r{seed}_f32"] = (_f32_variant(model), F.probe_rows(model, seed=seed), {})
    for seed in range(12):  # random models made table-expressible: every table path
        model = tableable(F.random_model(seed), seed)
        cases[f"t{seed}"] = (model, far_codes(model, F.probe_rows(model, seed=seed), seed), {"form": "table"})
    for seed, width in [(0, None), (1, None), (4, None), (2, 6), (9, 7)]:
        model = table_ensemble(seed, width=width)
        X = far_codes(model, F.probe_rows(model, seed=seed, limit=2500), seed)
        cases[f"e{seed}"] = (model, X, {"form": "table"})
    for dtype in ("float64", "float32"):
        edge = _edges(dtype)
        cases[f"edges_{dtype}"] = (edge, F.probe_rows(edge, n_random=50), {"form": "table"})
        cases[f"hostile_{dtype}"] = (F.hostile_model(dtype), F.probe_rows(F.hostile_model(dtype)), {})
    chain = F.chain(2500)
    cases["chain_auto"] = (chain, F.probe_rows(chain), {})
    cases["chain_goto"] = (chain, F.probe_rows(chain), {"form": "goto"})
    big = F.big_ensemble(1000)
    cases["big_auto"] = (big, F.probe_rows(big, limit=3000), {})
    cases.update(_imported_cases())
    return cases


def _imported_cases() -> dict:
    """Every language's imported models (tests/imported_models.py), and the scikit-learn
    importer tests' models; a missing library leaves its models out (test_imported_models
    says so)."""
    cases = {}
    try:
        import test_import_sklearn as ts
    except ImportError:
        ts = None
    for name, (model, X) in imported.imported_models().items():
        cases[name] = (model, X, {})
    if ts is None:
        return cases
    for name in sorted(ts.CASES):
        est, Xfit = ts._fit(name)
        model = ts.from_sklearn(est)
        cases["sk_" + name.replace("-", "_")] = (model, ts.to_codes(model, ts.probe_rows(est, Xfit, ts.CASES[name][3])), {})
    return cases


@pytest.fixture(scope="module")
def runs():
    cases = _cases()
    files = {name: GoTarget().generate(model, name=name, **opts) for name, (model, _X, opts) in cases.items()}
    res = run_go_many({name: (files[name], X) for name, (_m, X, _o) in cases.items()})
    print(f"\ngo build of {len(cases)} packages: {res['_build_seconds']:.1f} s, run {res['_run_seconds']:.1f} s")
    return cases, files, res


def _expected(model: Model, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        raw = ev.raw_scores(model, X).astype(np.float64)
        if model.target.task == "classification":
            return raw, ev.predict_proba(model, X), ev.predict_class_index(model, X)
        return raw, ev.predict_value(model, X), None


def _same(a, b) -> np.ndarray:
    return (a == b) | (np.isnan(a) & np.isnan(b))


def compare(model: Model, X: np.ndarray, got: dict) -> dict:
    """Raw bit for bit; outputs bit for bit, or within EXP_ULPS for links with exp; classes;
    the batch equal to the one-row calls bit for bit; the float32 entry points on the rows
    rounded to float32 likewise. Returns how many outputs differed."""
    with np.errstate(over="ignore"):
        Xf = X.astype(np.float32).astype(np.float64)
    assert np.array_equal(got["batch_f"].view(np.uint64), got["out_f"].view(np.uint64))
    _raw, out_f, _cls = _expected(model, Xf)
    _outputs(model, got["out_f"], out_f, _cls)
    raw, out, cls = _expected(model, X)
    bad = ~_same(got["raw"], raw)
    assert not bad.any(), (f"raw differs on {bad.any(axis=1).sum()} rows; first {X[bad.any(axis=1)][0].tolist()}: "
                           f"go {got['raw'][bad.any(axis=1)][0].tolist()} vs {raw[bad.any(axis=1)][0].tolist()}")
    assert np.array_equal(got["batch"].view(np.uint64), got["out"].view(np.uint64))
    differ, worst, rel = _outputs(model, got["out"], out, cls)
    if cls is not None:
        assert np.array_equal(got["class"], cls)
    return {"outputs": out.size, "differ": int(differ.sum()), "ulps": worst, "rel": rel,
            "rows": int(differ.any(axis=1).sum()), "n": len(X)}


def _outputs(model: Model, got: np.ndarray, out: np.ndarray, cls) -> tuple:
    """Outputs bit for bit, or within EXP_ULPS for links with exp: (differ mask, ulps, ulps of |v|)."""
    dt = out.dtype
    mine = got.astype(dt)
    assert np.array_equal(mine.astype(np.float64), got, equal_nan=True)  # float32 outputs are float32
    differ = ~_same(mine, out)
    worst = rel = 0.0
    if model.link == "identity":
        assert not differ.any(), f"outputs differ: {mine[differ][:4]} vs {out[differ][:4]}"
    elif differ.any():
        assert not (np.isnan(mine) ^ np.isnan(out)).any() and not (np.isinf(mine) ^ np.isinf(out)).any()
        scale = np.maximum(np.abs(out), 1.0) if cls is not None else np.abs(out)
        ulps = np.abs(mine - out)[differ] / np.spacing(scale[differ].astype(dt))
        worst = float(ulps.max())
        rel = float((np.abs(mine - out)[differ] / np.spacing(np.abs(out[differ]))).max())
        assert worst <= EXP_ULPS, f"{model.link} outputs differ by {worst} ulps (bound {EXP_ULPS})"
    return differ, worst, rel


# --- every case, exactly -------------------------------------------------------------------------


def _names():
    return sorted(_cases())


@pytest.mark.parametrize("case", _names())
def test_exact(runs, case):
    cases, _files, res = runs
    model, X, _opts = cases[case]
    compare(model, X, res[case])


def test_imported_models(runs):
    """XGBoost, LightGBM and scikit-learn models are in the build (their results: test_exact)."""
    cases = runs[0]
    for lib in imported.LIBRARIES:
        pytest.importorskip(lib)
        assert not imported.missing(cases, lib), lib
    assert {"sk_rfc_binary", "sk_hgbc_3_categorical"} <= set(cases)
    assert cases["xgb_binary"][0].dtype == "float32" and cases["lgbm_binary"][0].link == "sigmoid"


def test_forms_used(runs):
    """auto picks the table for big models (as the C target's sizes), forced forms stick where
    the tree allows them, blends always take the forward pass."""
    cases_, files, _res = runs

    def forms(name):
        text = next(iter(files[name].values()))
        return set(re.findall(r"^// tree \d+: [^\n]*?, (nested|goto|blend|table) form", text, re.MULTILINE))

    assert forms("chain_auto") == {"table"} and forms("chain_goto") == {"goto"}
    assert forms("big_auto") == {"table"}
    assert forms("every_construct_auto") == {"blend"}
    assert forms("noblend0_goto") == {"goto"} and forms("noblend0_nested") == {"nested"}
    assert forms("forest_mean_table") == {"table"} and forms("classifier_nested") == {"nested"}
    assert all(forms(f"t{seed}") == {"table"} for seed in range(12))
    assert all(go_table.supports(t) for t in cases_["t3"][0].trees)


def test_exp_difference_is_measured(runs):
    """The count the docs state: how many link outputs differ from the evaluator's (glibc exp)."""
    cases, _files, res = runs
    total = {}
    for name, (model, X, _o) in cases.items():
        if model.link != "identity":
            c = compare(model, X, res[name])
            group = (model.dtype, model.link, name.split("_")[0] if name[:3] in ("xgb", "lgb", "sk_") else "")
            t = total.setdefault(group, [0, 0, 0, 0, 0.0, 0.0])
            for i, key in enumerate(("differ", "outputs", "rows", "n")):
                t[i] += c[key]
            t[4], t[5] = max(t[4], c["ulps"]), max(t[5], c["rel"])
    print()
    for (dtype, link, source), (d, n, rows, nrows, ulps, rel) in sorted(total.items()):
        print(f"{dtype} {link} {source or 'fixtures'}: {d} of {n} outputs ({rows} of {nrows} rows) differ, "
              f"at most {ulps:g} ulps of max(|v|, 1) (probabilities) or |v|; {rel:g} ulps of |v|")
    assert {dtype for dtype, _l, _s in total} == {"float64", "float32"}


def test_names_read_back(runs):
    cases, files, res = runs
    for name in ("adversarial_names_auto", "hostile_float64"):
        model = cases[name][0]
        assert res[name]["feature_names"] == [f.name for f in model.features]
        assert res[name]["classes"] == [str(c) for c in model.target.classes]
        text = next(iter(files[name].values()))
        assert text.isascii() and "\x00" not in text
        # user text appears only inside strings and comments
        code = re.sub(r'"(\\.|[^"\\])*"', '""', text)
        code = "\n".join(line.split("//")[0] for line in code.splitlines())
        for f in model.features:
            if len(f.name) > 3:
                assert f.name not in code


def test_unseen_counts(runs):
    cases, _files, res = runs
    model, X, _o = cases["every_construct_auto"]
    want = np.zeros(len(X), dtype=np.int64)
    for j, f in enumerate(model.features):
        if f.kind == "categorical":
            v = X[:, j]
            with np.errstate(invalid="ignore"):
                known = (v == np.floor(v)) & (v >= 0) & (v < len(f.categories))
            want += (~known & ~np.isnan(v)).astype(np.int64)
    assert np.array_equal(res["every_construct_auto"]["unseen"], want)


# --- text ---------------------------------------------------------------------------------------


def test_header_and_api():
    text = GoTarget().generate(F.sigmoid_ensemble(), name="My Model")["my_model.go"]
    assert text.startswith("// Code generated by rulegen ") and "DO NOT EDIT." in text.splitlines()[0]
    for decl in ("package my_model", 'import "math"', "NFeatures = 4", "NOutputs = 2", "NRaw = 1",
                 "func Predict(features []float64, out []float64)", "func PredictClass(features []float64) int",
                 "func PredictProba(", "func PredictLabel(", "func PredictBatch(X []float64, out []float64)",
                 "func PredictRaw(features []float64, raw []float64)", "func Unseen(",
                 "func PredictFloat32(features []float32, out []float64)", "func PredictBatchFloat32(", "math.Exp is Go's"):
        assert decl in text, decl
    reg = GoTarget().generate(F.regressor(), name="r")["r.go"]
    assert "PredictClass" not in reg and "math.Exp" not in reg and "bit for bit." in reg
    with pytest.raises(RulegenError):
        GoTarget().generate(F.regressor(), name="r", colour=True)
    with pytest.raises(RulegenError):
        GoTarget().generate(F.regressor(), name="r", form="tables")


def test_deterministic():
    model = F.every_construct()
    assert GoTarget().generate(model, name="d") == GoTarget().generate(model, name="d")


def test_products_are_never_fusable():
    """Every product that feeds a sum is inside float64(...) / float32(...) (no FMA)."""
    for model in [F.every_construct(), *(F.random_model(s) for s in range(36))]:
        for text in GoTarget().generate(model, name="m").values():
            for line in text.splitlines():
                code = line.split("//")[0]
                for m in re.finditer(r"\+ ([^+\n]*\*[^+\n]*)$", code):
                    assert m.group(1).startswith(("float64(", "float32(")), line


@pytest.mark.skipif(shutil.which("gofmt") is None, reason="no gofmt")
def test_gofmt_and_vet_clean(tmp_path):
    """The output is what gofmt writes, and go vet finds nothing, in every form."""
    import subprocess

    from run_go import go_env, go_path

    models = [F.every_construct(), F.adversarial_names(), F.hostile_model(), F.chain(40),
              *(F.random_model(s) for s in range(12)), table_ensemble(2), table_ensemble(9, width=7),
              tableable(F.random_model(3), 3), F.big_ensemble(60)]
    for i, model in enumerate(models):
        (tmp_path / f"m{i}").mkdir()
        form = "table" if i >= 16 else FORMS[i % 4]
        for fname, text in GoTarget().generate(model, name=f"m{i}", form=form).items():
            (tmp_path / f"m{i}" / fname).write_text(text)
    out = subprocess.run(["gofmt", "-l", "-e", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == "", out.stdout + out.stderr  # as gofmt writes it
    (tmp_path / "go.mod").write_text("module vet\n\ngo 1.19\n")
    vet = subprocess.run([go_path(), "vet", "./..."], cwd=tmp_path, env=go_env(tmp_path), capture_output=True,
                         text=True)
    assert vet.returncode == 0, vet.stderr[-3000:]


# --- literals -----------------------------------------------------------------------------------


def test_go_literals():
    assert go_float(-0.0) == "negZero" and go_float(math.inf) == "posInf" and go_float(-math.inf) == "negInf"
    assert go_float(0.1 + 0.2) == "0.30000000000000004"
    for s in F.HOSTILE + list(F.ADVERSARIAL_NAMES) + ["\x00", "\ufeff", "\\", '"']:
        lit = go_string(s)
        assert lit.isascii() and lit.startswith('"') and lit.endswith('"')
        assert '"' not in lit[1:-1] and "\n" not in lit
        c = go_comment(s)
        assert c.isascii() and c.isprintable()
    for s in ("main", "math", "func", "1st", "My Model", "", "年龄"):
        ident = go_identifier(s)
        assert re.fullmatch(r"[a-z_][a-z0-9_]*", ident) and ident not in ("main", "math", "func", "_")


# --- the command line ---------------------------------------------------------------------------


def test_cli_compile_go(tmp_path):
    from click.testing import CliRunner

    from rulegen.cli import cli
    from rulegen.ir.serialize import dumps

    (tmp_path / "iris.json").write_text(dumps(F.classifier()))
    runner = CliRunner()
    res = runner.invoke(cli, ["compile", str(tmp_path / "iris.json"), "--target", "go", "-o", str(tmp_path / "pkg")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "pkg" / "iris.go").read_text().count("package iris\n") == 1
    res = runner.invoke(cli, ["compile", str(tmp_path / "iris.json"), "--target", "go", "--form", "goto",
                              "-o", str(tmp_path / "pkg" / "f.go")])
    assert res.exit_code == 0, res.output
    assert "package f\n" in (tmp_path / "pkg" / "f.go").read_text()
    assert "goto form" in (tmp_path / "pkg" / "f.go").read_text()
    res = runner.invoke(cli, ["compile", str(tmp_path / "iris.json"), "--target", "go", "--precision", "float32"])
    assert res.exit_code == 2 and "applies to the c target only" in res.output


# --- FMA: the architectures whose Go compiler fuses x*y + z ----------------------------------------


def _fma_count(tmp_path, texts: dict[str, str], goarch: str) -> int:
    """Build packages for ``goarch`` (cross-compiling, nothing runs) and count fused
    multiply-add instructions in the assembly the compiler prints."""
    import subprocess

    from run_go import go_env, go_path

    import time

    for pkg, text in texts.items():
        (tmp_path / pkg).mkdir(exist_ok=True)
        # a fresh comment makes the build cache miss, so the compiler runs and prints (-S)
        (tmp_path / pkg / f"{pkg}.go").write_text(text + f"\n// build {time.time_ns()}\n")
    (tmp_path / "go.mod").write_text("module fma\n\ngo 1.19\n")
    proc = subprocess.run([go_path(), "build", "-gcflags=-S", *(f"./{p}" for p in texts)], cwd=tmp_path,
                          env={**go_env(tmp_path), "GOARCH": goarch}, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return len(re.findall(r"\tFN?M(?:ADD|SUB)[SD]?\b", proc.stderr))


@pytest.mark.parametrize("goarch", ["arm64", "ppc64le", "s390x"])
def test_no_fma_where_go_fuses(tmp_path, goarch):
    """Go fuses x*y + z on arm64, ppc64le and s390x unless the product is converted explicitly:
    the generated code has no fused instruction there, and the same code with the conversions
    taken off has some (so the check can see them). Oblique sums, blends, weighted blended trees
    and float32 accumulation are all in these models."""
    models = {"ec": F.every_construct(), **{f"r{s}": F.random_model(s) for s in (1, 3, 4, 6, 9, 12)}}
    texts = {pkg: GoTarget().generate(m, name=pkg)[f"{pkg}.go"] for pkg, m in models.items()}
    assert sum(t.count("float64(p[") for t in texts.values()) and sum(t.count("dot(x,") for t in texts.values())
    assert _fma_count(tmp_path, texts, goarch) == 0
    bare = {f"{p}bare": re.sub(r"\bfloat(?:64|32)\(([^()]*\*[^()]*)\)", r"(\1)", t).replace(
        f"package {p}\n", f"package {p}bare\n") for p, t in texts.items()}
    assert _fma_count(tmp_path, bare, goarch) > 0


def test_go_literals_round_trip_through_the_compiler(tmp_path):
    """Every double and float32 literal reads back bit for bit in Go, strings byte for byte."""
    import subprocess

    from run_go import go_env, go_path
    from test_literals import NASTY, _doubles, _floats

    ds, fs = _doubles() + [math.inf, -math.inf], _floats()
    texts = NASTY + F.HOSTILE + ["\x00", "\ufeff"]
    src = ["package main", "", 'import (\n\t"fmt"\n\t"math"\n)', "",
           "var (\n\tnegZero = math.Copysign(0, -1)\n\tposInf = math.Inf(1)\n\tnegInf = math.Inf(-1)\n)", "",
           "var D = []float64{" + ", ".join(go_float(v) for v in ds) + "}",
           "var F = []float32{" + ", ".join(f"float32({go_float(v)})" for v in fs) + "}",
           "var S = []string{" + ", ".join(go_string(s) for s in texts) + "}", "",
           "func main() {", "\tfor _, v := range D {\n\t\tfmt.Println(math.Float64bits(v))\n\t}",
           "\tfor _, v := range F {\n\t\tfmt.Println(math.Float32bits(v))\n\t}",
           "\tfor _, s := range S {\n\t\tfmt.Printf(\"%x\\n\", s)\n\t}", "}"]
    (tmp_path / "main.go").write_text("\n".join(src) + "\n")
    (tmp_path / "go.mod").write_text("module lit\n\ngo 1.19\n")
    out = subprocess.run([go_path(), "run", "."], cwd=tmp_path, env=go_env(tmp_path), capture_output=True,
                         text=True, check=True).stdout.split()
    want = [str(int(np.float64(v).view(np.uint64))) for v in ds]
    want += [str(int(np.float32(v).view(np.uint32))) for v in fs]
    want += [s.encode("utf-8").hex() for s in texts]
    assert out == want
