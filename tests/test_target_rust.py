"""The Rust target against the evaluator, bit for bit, with the real rustc.

Every model here is generated into one module of a single crate, built with ONE rustc run and
run once (tests/run_rust.py); each test then checks its model's results: raw scores, outputs
(probabilities or values), the Option form, the batch form, the class index, the unseen count
and the names, on probe rows at and around every threshold (float32 and float64 neighbours,
NaN, +-inf, listed and unseen category codes).
"""

from __future__ import annotations

import dataclasses
import re
import warnings

from imported_models import LIBRARIES, imported_models, missing
import irfixtures
import numpy as np
import pytest
from run_rust import RustJob, have_rustc, run_rust

import rulegen
from rulegen.codegen.literals import rust_comment, rust_identifier, rust_string
from rulegen.errors import RulegenError, UnsupportedFeatureError
from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import (
    DefaultChild,
    Feature,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    Split,
    Target,
    Tree,
)
from rulegen.ir.validate import validate

pytestmark = pytest.mark.skipif(not have_rustc(), reason="no Rust compiler (rustc) on PATH")

OPT = "0"  # the tests' build; opt-level changes no result (Rust has no fast-math)
N_RANDOM = 40  # random models mixing every construct
# Links through exp: how many outputs may differ from the evaluator's, and by how many ulps.
# Measured: none (f64::exp and f32::exp call glibc's exp and expf, as the evaluator does).
EXP_MAX_ULPS = 0


def exp_sweep(dtype: str, link: str) -> Model:
    """One interval split with 1,200 leaves whose values sweep (-110, 110): a row per leaf puts
    every one of them through the link (exp at 1,200 points, overflow and underflow included)."""
    n = 1200
    bounds = tuple(float(b) for b in range(1, n))
    values = np.linspace(-110.0, 110.0, n) + np.random.default_rng(7).normal(size=n) * 0.01
    if dtype == "float32":
        values = values.astype(np.float32).astype(np.float64)
    nodes = (Split(IntervalTest(0, "<", bounds), tuple(range(1, n + 1)), DefaultChild(0)),)
    nodes += tuple(Leaf((float(v),)) for v in values)
    target = (Target("classification", "y", ("n", "p")) if link == "sigmoid"
              else Target("regression", "y"))
    return validate(Model((Feature("i"),), target, (Tree(nodes),), (0.0,), link=link, dtype=dtype))


def exp_sweep_rows() -> np.ndarray:
    return np.arange(0.0, 1200.0).reshape(-1, 1) + 0.5


def unseen_count(model: Model, X) -> np.ndarray:
    """Per row, categorical features whose value is neither NaN nor a listed code (as
    tests/targetcheck.py counts them for C's NAME_unseen)."""
    n = np.zeros(len(X), dtype=np.int64)
    for j, f in enumerate(model.features):
        if f.kind == "categorical":
            x = X[:, j]
            with np.errstate(invalid="ignore"):
                known = (x == np.floor(x)) & (x >= 0) & (x < len(f.categories))
            n += ~np.isnan(x) & ~known
    return n


def _f32_variant(model: Model) -> Model:
    return validate(dataclasses.replace(model, dtype="float32"))


def cases() -> dict[str, tuple[Model, np.ndarray]]:
    out = {}
    for name, model in irfixtures.all_models().items():
        out[name] = (model, irfixtures.probe_rows(model))
        out[name + "_as_f32"] = (_f32_variant(model), irfixtures.probe_rows(model, seed=1))
    for seed in range(N_RANDOM):
        model = irfixtures.random_model(seed)
        out[f"random_{seed}"] = (model, irfixtures.probe_rows(model, seed=seed))
    for seed in range(0, N_RANDOM, 4):  # and the other accumulation type
        model = irfixtures.random_model(seed)
        other = dataclasses.replace(model, dtype="float64" if model.dtype == "float32" else "float32")
        out[f"random_{seed}_other_dtype"] = (validate(other), irfixtures.probe_rows(model, seed=seed))
    for dtype in ("float64", "float32"):
        out[f"hostile_{dtype}"] = (irfixtures.hostile_model(dtype), None)
        for link in ("sigmoid", "exp"):
            out[f"exp_sweep_{link}_{dtype}"] = (exp_sweep(dtype, link), exp_sweep_rows())
    out["hostile_float64"] = (out["hostile_float64"][0], irfixtures.probe_rows(out["hostile_float64"][0]))
    out["hostile_float32"] = (out["hostile_float32"][0], irfixtures.probe_rows(out["hostile_float32"][0]))
    out["chain_2500"] = (irfixtures.chain(2500), None)
    out["big_ensemble_1000"] = (irfixtures.big_ensemble(1000), None)
    for name in ("chain_2500", "big_ensemble_1000"):
        out[name] = (out[name][0], irfixtures.probe_rows(out[name][0], limit=600))
    out.update(imported_models())
    return out


CASES = cases() if have_rustc() else {}


@pytest.fixture(scope="module")
def built():
    """Every case in one crate: one rustc run, one program run."""
    jobs, names = [], {}
    for i, (case, (model, X)) in enumerate(CASES.items()):
        module = f"m{i}_{rust_identifier(case)}"
        names[case] = module
        jobs.append(RustJob(module, rulegen.generate(model, "rust", name=module), X,
                            model.target.task == "classification"))
    results = run_rust(jobs, opt=OPT)
    first = next(iter(results.values()))
    print(f"\n{len(jobs)} modules: rustc -C opt-level={OPT} {first['compile_seconds']:.1f} s, "
          f"run {first['run_seconds']:.1f} s")
    return {case: results[module] for case, module in names.items()}


def _bits(a) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    return np.where(np.isnan(a), np.nan, a).view(np.uint64)  # NaN payloads aside


def _ulps(got: np.ndarray, want: np.ndarray, dtype: str) -> np.ndarray:
    """Distance in units in the last place of the model's type (NaN vs NaN: 0)."""
    kind = np.float32 if dtype == "float32" else np.float64
    ints = np.int32 if dtype == "float32" else np.int64
    g, w = got.astype(kind).view(ints).astype(np.int64), want.astype(kind).view(ints).astype(np.int64)
    g = np.where(g < 0, np.iinfo(ints).min - g, g)  # ordered as integers
    w = np.where(w < 0, np.iinfo(ints).min - w, w)
    d = np.abs(g - w)
    both_nan = np.isnan(got) & np.isnan(want)
    return np.where(both_nan, 0, d)


_EXPECTED: dict = {}


def expected_for(case: str) -> dict:
    if case not in _EXPECTED:
        _EXPECTED[case] = expected(*CASES[case])
    return _EXPECTED[case]


def expected(model: Model, X: np.ndarray) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        classifier = model.target.task == "classification"
        return {"raw": ev.raw_scores(model, X),
                "out": ev.predict_proba(model, X) if classifier else ev.predict_value(model, X),
                "class": ev.predict_class_index(model, X) if classifier else None}


@pytest.mark.parametrize("lib", sorted(LIBRARIES))
def test_imported_models_are_in_the_cases(lib):
    """The cases hold every imported model whose library is installed (CI installs them all)."""
    pytest.importorskip(lib)
    assert not missing(CASES, lib)


@pytest.mark.parametrize("case", list(CASES))
def test_exact(built, case):
    model, X = CASES[case]
    got, want = built[case], expected_for(case)
    assert np.array_equal(_bits(got["raw"]), _bits(want["raw"])), "raw scores differ"
    ulps = _ulps(got["out"], np.asarray(want["out"], dtype=np.float64), model.dtype)
    bad = ulps > EXP_MAX_ULPS if model.link != "identity" else ulps > 0
    assert not bad.any(), (f"outputs differ on {bad.any(axis=1).sum()} of {len(X)} rows, up to "
                           f"{ulps.max()} ulps; first row {X[bad.any(axis=1)][0].tolist()}")
    if model.link == "identity":
        assert np.array_equal(_bits(got["out"]), _bits(want["out"]))
    if want["class"] is not None:
        assert np.array_equal(got["class"], want["class"])
    # the batch and Option forms give what the one-row form gives, bit for bit
    assert np.array_equal(got["batch"].view(np.uint64), got["out"].view(np.uint64))
    assert np.array_equal(got["opt"].view(np.uint64), got["out"].view(np.uint64))
    assert np.array_equal(got["unseen"], unseen_count(model, X))
    labels = [str(c) for c in model.target.classes] if model.target.task == "classification" else []
    assert got["names"] == [f.name for f in model.features] + labels


def test_exp_is_the_evaluators_bit_for_bit(built):
    """The measured difference of the links through exp: none, in f64 and in f32."""
    total = 0
    for case in CASES:
        model, _X = CASES[case]
        if model.link == "identity":
            continue
        want = np.asarray(expected_for(case)["out"], dtype=np.float64)
        assert _ulps(built[case]["out"], want, model.dtype).max() <= EXP_MAX_ULPS
        total += want.size
    assert total > 10000


def test_stress_models_compile_and_run(built):
    for case in ("chain_2500", "big_ensemble_1000"):
        assert len(built[case]["raw"]) == len(CASES[case][1])


def test_hostile_text_stays_in_strings_and_comments():
    model = irfixtures.hostile_model()
    text = rulegen.generate(model, "rust", name="h")["h.rs"]
    assert text.isascii()
    for line in text.splitlines():
        if line.startswith("//"):
            continue  # a comment line: one line by construction
        for s in re.findall(r'"(?:[^"\\]|\\.)*"', line):  # string literals hold no raw breaks
            assert "\n" not in s and "\r" not in s
    assert "/*" not in text.replace("/ *", "")
    for name in irfixtures.ADVERSARIAL_NAMES + tuple(irfixtures.HOSTILE):
        assert rust_string(name).isascii() and "\n" not in rust_comment(name)


def test_literal_helpers():
    assert rust_string('a"b\\c\n年') == '"a\\"b\\\\c\\u{a}\\u{5e74}"'
    assert rust_comment("x */ y /* z\u202e\nw") == "x * / y / * z\\u202e w"
    assert rust_identifier("fn") == "fn_" and rust_identifier("1st") == "m_1st"
    assert rust_identifier("self") == "self_" and rust_identifier("x-y") == "x_y"
    with pytest.raises(ValueError, match="surrogate"):  # validation refuses them before this
        rust_string("a\ud800")


def test_header_names_provenance_and_api():
    model = irfixtures.softmax_ensemble("float32")
    text = rulegen.generate(model, "rust", name="m")["m.rs"]
    assert text.startswith("// m.rs: generated by rulegen")
    for api in ("pub fn predict(", "pub fn predict_proba(", "pub fn predict_class(",
                "pub fn predict_label(", "pub fn predict_raw(", "pub fn predict_batch(",
                "pub fn predict_opt(", "pub fn unseen(", "pub static CLASSES", "type A = f32;"):
        assert api in text
    assert "expf" in text and "mul_add" not in text


def test_deterministic_and_options():
    model = irfixtures.every_construct()
    a = rulegen.generate(model, "rust", name="x")
    assert a == rulegen.generate(model, "rust", name="x")
    with pytest.raises(RulegenError, match="unknown option"):
        rulegen.generate(model, "rust", name="x", form="nested")
    assert "0 = \"red\"" in a["x.rs"]
    assert "0 = \"red\"" not in rulegen.generate(model, "rust", name="x", comments=False)["x.rs"]


def test_cli_compiles_to_a_rust_file(tmp_path):
    from click.testing import CliRunner

    from rulegen.cli import cli
    from rulegen.ir.serialize import dumps
    path = tmp_path / "iris.json"
    path.write_text(dumps(irfixtures.classifier()))
    res = CliRunner().invoke(cli, ["compile", str(path), "--target", "rust", "-o",
                                   str(tmp_path / "iris_model.rs")])
    assert res.exit_code == 0, res.output
    assert "pub fn predict(" in (tmp_path / "iris_model.rs").read_text()


def test_both_forms_are_exercised():
    """Numeric trees with default children take the fast rows, the rest node rows; random
    models mix both in one model (accumulated in tree order all the same)."""
    def counts(model):
        text = rulegen.generate(model, "rust", name="m")["m.rs"]
        fast = int(re.search(r"static FR: \[R; (\d+)\]", text).group(1)) - 1  # less the idle row
        nodes = int(re.search(r"static NK: \[u8; (\d+)\]", text).group(1))
        return fast, nodes
    assert counts(irfixtures.sigmoid_ensemble()) [1] == 0 and counts(irfixtures.sigmoid_ensemble())[0] > 0
    assert counts(irfixtures.every_construct())[0] == 0
    mixed = [name for name in CASES if name.startswith("random_") and all(counts(CASES[name][0]))]
    assert len(mixed) >= 3, mixed


def test_too_wide_a_split_is_refused():
    n = 65535
    nodes = (Split(MultiwayTest(0, tuple((i,) for i in range(n))), tuple(range(1, n + 1)),
                   DefaultChild(0), unseen=0),) + tuple(Leaf((0.0,)) for _ in range(n))
    model = Model((Feature("c", "categorical", tuple(range(n))),), Target("regression"),
                  (Tree(nodes),), (0.0,))
    with pytest.raises(UnsupportedFeatureError, match="65535 children"):
        rulegen.generate(model, "rust", name="w")
