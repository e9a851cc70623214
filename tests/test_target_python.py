"""The Python target: generate, really import, run on adversarial rows, compare bit for bit with
the evaluator. Also: the float32 rounding helper, the limits (deep, wide, big), user text,
mapping rows, batch forms, standalone import and determinism."""

from __future__ import annotations

import io
import math
import os
import struct
import subprocess
import sys
import tokenize

import irfixtures as F
import numpy as np
import pytest
from run_python import import_source, run_python

from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import (
    Blend,
    CategoricalTest,
    DefaultChild,
    Feature,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Split,
    Surrogate,
    Surrogates,
    Target,
    Tree,
)
from rulegen.codegen.lower import float64_bound
from rulegen.ir.validate import validate
from rulegen.targets.python.target import MAX_BLOCK_DEPTH, MAX_CHAIN, MAX_INLINE_TERMS, PythonTarget, module_name


def _f32(v: float) -> float:
    return float(np.float32(v))


def assert_exact(model: Model, X: np.ndarray, **options):
    """Generate, import, run the rows (as labels) and compare raw, outputs and class."""
    got = run_python(model, F.labels_for(model, X), **options)
    want_raw = ev.raw_scores(model, X).astype(np.float64)
    assert np.array_equal(got.raw, want_raw, equal_nan=True), _first_diff(got.raw, want_raw, X)
    if model.target.task == "classification":
        proba = ev.predict_proba(model, X).astype(np.float64)
        assert np.array_equal(got.outputs, proba, equal_nan=True), _first_diff(got.outputs, proba, X)
        assert np.array_equal(got.class_index, ev.predict_class_index(model, X))
        assert got.predictions == [model.target.classes[i] for i in got.class_index]
    else:
        value = ev.predict_value(model, X).astype(np.float64)
        assert np.array_equal(got.outputs, value, equal_nan=True), _first_diff(got.outputs, value, X)
    return got


def _first_diff(a, b, X):
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    i = int(np.flatnonzero(~same.all(axis=1))[0])
    return f"row {i}: {X[i].tolist()} gives {a[i].tolist()}, evaluator {b[i].tolist()}"


# --- every fixture, exactly ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(F.all_models()))
def test_fixture_models_are_exact(name):
    model = F.all_models()[name]
    assert_exact(model, F.probe_rows(model))


def test_fixture_models_without_comments_are_exact():
    for model in F.all_models().values():
        assert_exact(model, F.probe_rows(model, limit=300), comments=False)


def test_deep_chain_is_split_into_shallow_functions():
    model = F.chain(2500)
    got = assert_exact(model, F.probe_rows(model, limit=1500))
    text = PythonTarget().generate(model)["model.py"]
    parts = text.count("\ndef _tree_0_n")
    assert 2500 / MAX_BLOCK_DEPTH <= parts <= 2500 / MAX_BLOCK_DEPTH + 3
    assert _max_indent(text) <= MAX_BLOCK_DEPTH + 2  # the limit holds, with room to spare below 100
    # parts hand over to the next instead of calling it: the stack stays shallow at any depth
    assert got.module.predict([1e9, 1e9, 1e9]) == -1.0


def test_big_ensemble_is_exact():
    model = F.big_ensemble(1000)
    assert_exact(model, F.probe_rows(model, limit=150))


def _max_indent(text: str) -> int:
    return max((len(line) - len(line.lstrip(" "))) // 4 for line in text.splitlines() if line.strip())


# --- random models with every construct, shallow and deep, narrow and wide ----------------------------


def _random_model(seed: int, *, task="classification", n_classes=3, n_raw=None, aggregation="sum",
                  link="identity", dtype="float64", n_trees=3, max_nodes=60, wide=False,
                  blend=0.15, per_output=False) -> Model:
    """A seeded random model mixing every split kind and missing rule (DFS, so it gets deep)."""
    rng = np.random.default_rng(seed)
    feats = (Feature("n0"), Feature("n1"), Feature("n2"),
             Feature("c_int", "categorical", (10, 20, 30, 40, 50)),
             Feature("c_str", "categorical", tuple(f"v{i}" for i in range(150 if wide else 6))))
    if task == "classification":
        classes = tuple(f"k{i}" for i in range(n_classes))
        n_raw = n_raw or n_classes
        target = Target(task, "y", classes)
    else:
        target = Target(task, "y", (), n_raw)

    def num_test(f=None):
        f = int(rng.integers(3)) if f is None else f
        t = float(np.round(rng.normal(), 1))
        if rng.random() < 0.5:
            return NumericTest(f, str(rng.choice(["<", "<="])), _f32(t), "float32")
        return NumericTest(f, str(rng.choice(["<", "<="])), t)

    def binary_test():
        r = rng.random()
        if r < 0.5:
            return num_test()
        if r < 0.75:
            f = int(rng.choice([3, 4]))
            n = len(feats[f].categories)
            return CategoricalTest(f, tuple(sorted(rng.choice(n, int(rng.integers(0, n)), replace=False).tolist())))
        k = int(rng.integers(1, 4)) if rng.random() < 0.8 else MAX_INLINE_TERMS + 5
        return ObliqueTest(tuple(int(f) for f in rng.integers(0, 3, k)),
                           tuple(float(np.round(w, 2)) for w in rng.normal(size=k)), str(rng.choice(["<", "<="])),
                           float(np.round(rng.normal(), 1)))

    def split_test():
        r = rng.random()
        if r < 0.6:
            return binary_test()
        if r < 0.8:
            k = MAX_CHAIN + 20 if wide and rng.random() < 0.5 else int(rng.integers(1, 5))
            bounds = np.unique(np.round(rng.normal(size=k) * (3 if k > 10 else 1), 2))
            f32 = rng.random() < 0.5
            return IntervalTest(int(rng.integers(3)), str(rng.choice(["<", "<="])),
                                tuple(_f32(b) if f32 else float(b) for b in np.unique(np.float32(bounds)) if True),
                                "float32" if f32 else "float64")
        f = 4 if wide else int(rng.choice([3, 4]))
        n = len(feats[f].categories)
        codes = rng.permutation(n)[: int(rng.integers(2, n + 1))]  # some codes in no group
        n_groups = int(rng.integers(2, min(len(codes), MAX_CHAIN + 30) + 1))
        groups = [sorted(g.tolist()) for g in np.array_split(codes, n_groups)]
        return MultiwayTest(f, tuple(tuple(int(c) for c in g) for g in groups))

    def missing(test, n_children):
        r = rng.random()
        if r < blend:
            w = rng.random(n_children)
            w[rng.random(n_children) < 0.2] = 0.0
            if rng.random() < 0.1:
                w[:] = 1e-200  # two of these in a row underflow to a zero path weight
            return Blend(tuple(float(v) for v in w))
        if isinstance(test, (NumericTest, CategoricalTest, ObliqueTest)) and r < blend + 0.25:
            sur = tuple(Surrogate(binary_test(), int(rng.integers(2))) for _ in range(int(rng.integers(1, 3))))
            return Surrogates(sur, int(rng.integers(2)))
        return DefaultChild(int(rng.integers(n_children)))

    trees = []
    for ti in range(n_trees):
        output = ti % n_raw if per_output else None
        width = 1 if output is not None else n_raw
        nodes: list = [None]
        stack = [0]
        while stack:
            nid = stack.pop()
            if len(nodes) > max_nodes or (nid and rng.random() < 0.25):
                nodes[nid] = Leaf(tuple(float(np.round(v, 3)) for v in rng.normal(size=width)),
                                  float(rng.integers(1, 50)))
                continue
            test = split_test()
            n_children = {IntervalTest: lambda t: len(t.bounds) + 1,
                          MultiwayTest: lambda t: len(t.groups)}.get(type(test), lambda t: 2)(test)
            kids = tuple(range(len(nodes), len(nodes) + n_children))
            nodes += [None] * n_children
            unseen = None
            if isinstance(test, MultiwayTest) or (isinstance(test, CategoricalTest) and rng.random() < 0.7):
                unseen = int(rng.integers(n_children))
            nodes[nid] = Split(test, kids, missing(test, n_children), unseen, samples=float(len(nodes)))
            stack += list(kids)
        weight = 1.0 if rng.random() < 0.5 else float(np.round(rng.random() + 0.1, 2))
        trees.append(Tree(tuple(nodes), output, weight))
    base = tuple(float(np.round(v, 2)) for v in rng.normal(size=n_raw))
    return validate(Model(feats, target, tuple(trees), base, aggregation, link, dtype))


RANDOM_CONFIGS = {
    "softmax_f32_per_output": dict(link="softmax", dtype="float32", n_trees=6, per_output=True),
    "softmax_f64_vector": dict(link="softmax", n_trees=4),
    "sigmoid_binary_f32": dict(n_classes=2, n_raw=1, link="sigmoid", dtype="float32", n_trees=5),
    "mean_f32": dict(aggregation="mean", dtype="float32", n_trees=4),
    "vote_f64": dict(aggregation="vote", n_trees=5),
    "vote_f32": dict(aggregation="vote", dtype="float32", n_trees=5, blend=0.4),
    "regression_2_outputs_exp_f32": dict(task="regression", n_raw=2, link="exp", dtype="float32"),
    "regression_identity_blend_heavy": dict(task="regression", n_raw=1, blend=0.6, n_trees=2),
    "wide_splits": dict(wide=True, n_trees=2, max_nodes=600, blend=0.3),
    "deep_blend_parts": dict(n_trees=2, max_nodes=400, blend=0.3),
}


@pytest.mark.parametrize("config", sorted(RANDOM_CONFIGS))
@pytest.mark.parametrize("seed", [0, 1])
def test_random_models_are_exact(config, seed):
    model = _random_model(seed, **RANDOM_CONFIGS[config])
    assert_exact(model, F.probe_rows(model, seed=seed, limit=600))


def test_deep_and_wide_random_models_really_use_parts_and_range_dispatch():
    deep = PythonTarget().generate(_random_model(0, **RANDOM_CONFIGS["deep_blend_parts"]))["model.py"]
    assert "todo.append((_tree_" in deep  # a blended tree deeper than the limit continues in parts
    wide = PythonTarget().generate(_random_model(0, **RANDOM_CONFIGS["wide_splits"]))["model.py"]
    assert "_interval(x" in wide and ".get(x" in wide and " < " in wide


def test_very_wide_multiway_split_dispatches_in_ranges():
    n = MAX_CHAIN * MAX_CHAIN + 100  # three levels of ranges; a flat elif chain would not compile
    feats = (Feature("id", "categorical", tuple(range(n))), Feature("z"))
    leaves = tuple(Leaf((float(i % 7),)) for i in range(n))
    root = Split(MultiwayTest(0, tuple((i,) for i in range(n))), tuple(range(1, n + 1)), DefaultChild(3), unseen=5)
    model = validate(Model(feats, Target("regression"), (Tree((root,) + leaves),), (0.5,)))
    X = np.array([[c, 0.0] for c in [0, 1, 5, 63, 64, 4095, 4096, n - 1, n, -1, 0.5, math.nan]])
    assert_exact(model, X)


def test_single_leaf_tree_and_scalar_raw_regression():
    model = validate(Model((Feature("a"),), Target("regression"), (Tree((Leaf((2.5,)),)),), (-0.0,)))
    got = assert_exact(model, np.array([[1.0], [math.nan]]))
    assert got.module.predict({"a": None}) == 2.5


# --- float32 rounding ---------------------------------------------------------------------------------


def _tricky_doubles() -> np.ndarray:
    """Float32 neighbours, the midpoints between them (ties) and their float64 neighbours, in the
    normal and subnormal ranges and at the overflow boundary, plus random bit patterns."""
    rng = np.random.default_rng(7)
    f32 = np.concatenate([
        rng.standard_normal(3000).astype(np.float32) * np.float32(10.0) ** rng.integers(-38, 38, 3000).astype(np.float32),
        np.arange(0, 200, dtype=np.uint32).view(np.float32),  # the smallest subnormals
        (np.uint32(0x00800000) + np.arange(-100, 100, dtype=np.int64)).astype(np.uint32).view(np.float32),
        (np.uint32(0x7F7FFFFF) - np.arange(0, 100, dtype=np.uint32)).view(np.float32),  # up to FLT_MAX
    ])
    f32 = np.concatenate([f32, -f32])
    with np.errstate(over="ignore"):  # FLT_MAX's next value up is infinity
        up = np.nextafter(f32, np.float32(np.inf))
    lo, hi = f32.astype(np.float64), up.astype(np.float64)
    hi[np.isinf(hi)] = 2.0**128  # the overflow point rounds like a float32 value 2**128
    mid = lo / 2 + hi / 2  # exact: the tie between two float32 neighbours
    vals = np.concatenate([lo, mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)])
    bits = rng.integers(0, 2**63, 20000, dtype=np.uint64) | (rng.integers(0, 2, 20000, dtype=np.uint64) << np.uint64(63))
    edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0**128, -(2.0**128), 2.0**128 - 2.0**103,
                     -(2.0**128 - 2.0**103), 2.0**128 - 2.0**104, np.nextafter(2.0**128 - 2.0**103, 0),
                     2.0**-150, -(2.0**-150), 3 * 2.0**-151, 2.0**-149 * 1.5, 1e-300, 1e300, 5e-324])
    return np.concatenate([vals, bits.view(np.float64), edge])


def test_float32_rounding_helper_matches_numpy_everywhere():
    module = import_source(PythonTarget().generate(F.softmax_ensemble("float32")))
    vals = _tricky_doubles()
    with np.errstate(over="ignore", invalid="ignore"):
        want = vals.astype(np.float32).astype(np.float64)
    got = np.array([module._f32(float(v)) for v in vals])
    same = (got.view(np.uint64) == want.view(np.uint64)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), [(vals[i], got[i], want[i]) for i in np.flatnonzero(~same)[:5]]
    assert struct.pack("<d", module._f32(-0.0)) == struct.pack("<d", -0.0)


def _huge_f32_model(link: str = "identity") -> Model:
    """float32 trees whose sums overflow: Veltkamp's split cannot serve, the cell must."""
    big = _f32(3e38)
    trees = tuple(Tree((Split(NumericTest(0, "<", 0.0), (1, 2), DefaultChild(0)), Leaf((big,)), Leaf((-big,))))
                  for _ in range(3))
    return validate(Model((Feature("a"),), Target("regression"), trees, (big,), link=link, dtype="float32"))


def test_float32_sums_overflow_to_inf_like_the_evaluator():
    for link in ("identity", "sigmoid", "exp"):
        model = _huge_f32_model(link)
        got = assert_exact(model, np.array([[-1.0], [1.0], [math.nan]]))
        assert got.raw[0, 0] == math.inf and got.raw[1, 0] == -math.inf
        assert "_cell()" in PythonTarget().generate(model)["model.py"]


def test_float32_sums_by_veltkamp_split_round_ties_and_subnormals_exactly():
    """Leaves whose float32 sums land on ties (1 + 2**-24), among subnormals and across
    binades: the split's rounding equals the evaluator's float32 sums on every path."""
    values = [1.0, 2.0**-24, 3 * 2.0**-24, 2.0**-23, -(2.0**-24), 2.0**-149, 3 * 2.0**-149, -(2.0**-148),
              2.0**-126, -(2.0**-127), 1.5, 2.0**24, 1.0 + 2.0**-23, -1.0, 2.0**100, -(2.0**100), 2.0**-1]
    rng = np.random.default_rng(11)
    n = 14
    trees = []
    for t in range(n):
        a, b = (float(v) for v in rng.choice(values, 2))
        trees.append(Tree((Split(NumericTest(t, "<", 0.0), (1, 2), DefaultChild(1)), Leaf((a,)), Leaf((b,)))))
    feats = tuple(Feature(f"f{i}") for i in range(n))
    model = validate(Model(feats, Target("regression"), tuple(trees), (2.0**-149,), dtype="float32"))
    text = PythonTarget().generate(model)["model.py"]
    assert "536870913.0" in text and "_cell" not in text
    X = rng.choice([-1.0, 1.0, math.nan], size=(3000, n))
    assert_exact(model, X)


# --- rows: mappings, None / NaN, labels, batch forms ---------------------------------------------------


def test_rows_as_mappings_sequences_none_nan_and_unseen_labels():
    model = F.every_construct()
    X = F.probe_rows(model, limit=200)
    rows = F.labels_for(model, X)
    module = import_source(PythonTarget().generate(model))
    names = module.FEATURES
    assert names == [f.name for f in model.features] and module.TASK == "classification"
    assert module.CLASSES == ["bad", "good"] and module.N_OUTPUTS == 2
    for row in rows:
        want = module.predict_raw(row)
        assert module.predict_raw(dict(zip(names, row))) == want
        assert module.predict_raw(tuple(float("nan") if v is None else v for v in row)) == want
        assert module.predict_raw(np.array(row, dtype=object)) == want
        assert module.predict_raw([v if v is not None else None for v in row]) == want
    assert module.predict_batch(rows) == [module.predict(r) for r in rows]
    assert module.predict_proba_batch(rows) == [module.predict_proba(r) for r in rows]
    # every odd value is an unseen category: other types, unhashable, a listed label of another type
    base = rows[0]
    for odd in ([1], {"a": 1}, 3.5, "RED", b"red"):
        row = list(base)
        row[1] = odd
        unseen = list(base)
        unseen[1] = "never-seen"
        assert module.predict_raw(row) == module.predict_raw(unseen)
    with pytest.raises(ValueError, match="expected 6 values"):
        module.predict([1.0, 2.0])
    with pytest.raises(KeyError):
        module.predict({"num": 1.0})
    # unseen_features names the categorical features whose value is not listed
    cats = [(j, f) for j, f in enumerate(model.features) if f.kind == "categorical"]
    flagged = 0
    for x, row in zip(X, rows):
        want = [f.name for j, f in cats if not np.isnan(x[j])
                and not (x[j] == np.floor(x[j]) and 0 <= x[j] < len(f.categories))]
        assert module.unseen_features(row) == want
        assert module.unseen_features(dict(zip(names, row))) == want
        flagged += bool(want)
    assert flagged > 0
    assert import_source(PythonTarget().generate(F.regressor())).unseen_features([1.0, 2.0]) == []


def test_regression_contract():
    module = import_source(PythonTarget().generate(F.regressor()))
    assert not hasattr(module, "CLASSES") and not hasattr(module, "predict_proba")
    assert module.N_OUTPUTS == 1 and isinstance(module.predict([1.0, 2.0]), float)
    multi = _random_model(3, **RANDOM_CONFIGS["regression_2_outputs_exp_f32"])
    m2 = import_source(PythonTarget().generate(multi))
    out = m2.predict([0.1, 0.2, 0.3, 10, "v1"])
    assert isinstance(out, list) and len(out) == 2 == m2.N_OUTPUTS


# --- the module on its own: standard library only, user text inert, names, determinism ------------------


def test_module_imports_standalone_without_rulegen_or_numpy(tmp_path):
    for name, model in [("adv", F.adversarial_names()), ("f32", F.softmax_ensemble("float32")),
                        ("blend", F.every_construct())]:
        text = PythonTarget().generate(model, name=name)[f"{name}.py"]
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
        row = F.labels_for(model, F.probe_rows(model, limit=1))[0]
        code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import {name}; "
                "inf, nan = float('inf'), float('nan'); "  # what repr(row) may contain
                f"print(repr({name}.predict({row!r}))); "
                "assert not [m for m in sys.modules if m.split('.')[0] in ('numpy', 'rulegen', 'jinja2')]")
        # -I: isolated (no PYTHON* variables, no user site); -S: no site-packages at all
        out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == repr(run_python(model, [row]).predictions[0])


def test_user_text_only_in_strings_and_comments():
    """Identifiers never depend on user text: renaming every feature, category and class to a
    bland name leaves the token stream's names and operators unchanged."""
    import dataclasses

    def bland(m: Model) -> Model:
        feats = tuple(dataclasses.replace(f, name=f"f{i}", categories=tuple(f"c{j}" for j in range(len(f.categories))))
                      for i, f in enumerate(m.features))
        target = dataclasses.replace(m.target, name="t", classes=tuple(f"k{j}" for j in range(len(m.target.classes))))
        return dataclasses.replace(m, features=feats, target=target)

    def skeleton(text):
        toks = tokenize.generate_tokens(io.StringIO(text).readline)
        return [(t.type, t.string) for t in toks if t.type not in (tokenize.STRING, tokenize.COMMENT)]

    weird = F.adversarial_names()
    weird = dataclasses.replace(weird, features=weird.features[:-1] + (
        Feature("nul\x00 line\nbreak \u2028 \ud800 \"\"\" '''", "categorical", weird.features[-1].categories),))
    for comments in (True, False):
        a = PythonTarget().generate(weird, comments=comments)["model.py"]
        b = PythonTarget().generate(bland(weird), comments=comments)["model.py"]
        assert skeleton(a) == skeleton(b)
        a.encode("utf-8")  # no lone surrogate reaches the file
        assert "\x00" not in a
    assert_exact(weird, F.probe_rows(weird))


def test_comments_switch_and_provenance():
    model = F.classifier()
    with_c = PythonTarget().generate(model)["model.py"]
    without = PythonTarget().generate(model, comments=False)["model.py"]
    assert "# node 3, samples 10.0, distribution 10.0, 0.0, 0.0" in with_c
    assert "# node" not in without and "# tree" not in without
    assert with_c.startswith('"""Classifier for \'kind\'')
    assert "import model" in with_c and "predict_proba(row)" in with_c


def test_generation_is_deterministic_across_hash_seeds():
    code = ("import sys, hashlib; sys.path.insert(0, 'tests'); import irfixtures as F; "
            "from rulegen.targets.python.target import PythonTarget as P; "
            "ms = [F.every_construct(), F.adversarial_names(), F.forest('vote')]; "
            "print(hashlib.sha256(''.join(P().generate(m)['model.py'] for m in ms).encode()).hexdigest())")
    digests = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                             cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        assert out.returncode == 0, out.stderr
        digests.add(out.stdout.strip())
    assert len(digests) == 1
    m = F.big_ensemble(50)
    assert PythonTarget().generate(m) == PythonTarget().generate(m)


@pytest.mark.parametrize("name, stem", [
    ("model", "model"), ("my model", "my_model"), ("../../etc/passwd", "etc_passwd"), ("1st", "m_1st"),
    ("class", "class_"), ("match", "match_"), ("struct", "struct_model"), ("math", "math_model"),
    ("年龄", "m_"), ("", "m_"), ("a-b.c", "a_b_c"),
])
def test_file_name_is_sanitised(name, stem):
    assert module_name(name) == stem
    files = PythonTarget().generate(F.regressor(), name=name)
    assert list(files) == [stem + ".py"]
    assert import_source(files).predict([1.0, 2.0]) == run_python(F.regressor(), [[1.0, 2.0]]).predictions[0]


def test_unknown_option_is_an_error():
    with pytest.raises(TypeError, match="unknown option"):
        PythonTarget().generate(F.regressor(), dialect="x")


def test_py_docstring_round_trips_any_text():
    from rulegen.codegen.literals import py_docstring

    rng = np.random.default_rng(11)
    alphabet = ['"', "\\", "a", "\n", "\r", "\x00", "\ud800", "'", "年", "\u2028", "\t", " "]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet, int(rng.integers(0, 12))))
        literal = py_docstring(text)
        literal.encode("utf-8")
        assert eval(compile(literal, "<doc>", "eval")) == text, literal


def test_float32_cell_stand_in_gives_the_same_scores():
    """float32 sums that may overflow round through array("f") where CPython's (float)
    conversion rounds as struct does (checked when the module loads), else through
    _Rounder: both give the evaluator's raw scores bit for bit."""
    model = _huge_f32_model()
    module = import_source(PythonTarget().generate(model, name="m"))
    assert module._cell is module._array_cell  # this CPython rounds in array("f")
    X = np.array([[-1.0], [1.0], [math.nan], [0.0], [-0.0]])
    rows = F.labels_for(model, X)
    fast = [module.predict_raw(r) for r in rows]
    module._cell = module._Rounder
    slow = [module.predict_raw(r) for r in rows]
    want = ev.raw_scores(model, X)
    assert np.array_equal(np.array(slow), np.array(fast), equal_nan=True)
    assert np.array_equal(np.array(slow), want, equal_nan=True)


# --- lazy reads: numeric models whose rows read few of their inputs --------------------------------


def _lazy_models() -> dict[str, Model]:
    """Three layouts of trees that convert each value where a test reads it: one big tree
    (looked up by leaf), one chain deeper than a function may nest (parts), several trees."""
    rng = np.random.default_rng(21)
    big = F._random_tree(rng, 40, 16, 1)
    chain = F.chain(60)
    chain = validate(Model(tuple(Feature(f"c{i}") for i in range(50)), chain.target, chain.trees, (0.0,)))
    trees = tuple(F._random_tree(rng, 30, 4, 1, output=k % 3) for k in range(4))
    return {
        "one_big_tree": validate(Model(tuple(Feature(f"x{i}") for i in range(40)), Target("regression"),
                                       (big,), (0.5,))),
        "deep_chain": chain,
        "few_trees": validate(Model(tuple(Feature(f"x{i}") for i in range(30)),
                                    Target("classification", "y", ("a", "b", "c")), trees, (0.0, 0.1, -0.1),
                                    link="softmax")),
    }


@pytest.mark.parametrize("name", sorted(_lazy_models()))
def test_lazy_reads_take_every_row_form_exactly(name):
    """float() where a test reads: float rows, numpy float32 and float64 scalars, numpy rows,
    tuples, mappings, ints, None and NaN all give the evaluator's results for their values."""
    from rulegen.targets.python.body import MAX_ENTRY_NODES, lazy_reads_pay

    model = _lazy_models()[name]
    assert lazy_reads_pay(model)
    text = PythonTarget().generate(model)["model.py"]
    assert "float(x[" in text or "float(x1" in text  # x1: the row unpacked into locals
    layout = {"one_big_tree": "_tree_0(x)]", "deep_chain": "while callable(step)", "few_trees": "def _raw(x)"}
    assert layout[name] in text
    if name == "one_big_tree":
        assert len(model.trees[0].nodes) > MAX_ENTRY_NODES
    X = F.probe_rows(model, limit=600)
    got = assert_exact(model, X)  # rows of floats and None
    module = got.module
    with np.errstate(over="ignore"):  # probes beyond float32's range become +-inf
        X32 = X.astype(np.float32)
    XI = np.where(np.isfinite(X), np.round(X), np.nan)
    cases = [
        ([list(r) for r in X], X),  # numpy float64 scalars
        ([tuple(F.labels_for(model, r[None])[0]) for r in X], X),
        ([dict(zip(module.FEATURES, F.labels_for(model, r[None])[0])) for r in X], X),
        ([list(r) for r in X32], X32.astype(np.float64)),  # numpy float32 scalars: widened, not compared in float32
        (list(X32), X32.astype(np.float64)),  # numpy rows
        ([[None if v != v else int(v) for v in r] for r in XI], XI),
    ]
    for rows, want_X in cases:
        raw = np.array([module.predict_raw(r) for r in rows])
        want = ev.raw_scores(model, want_X).astype(np.float64)
        assert np.array_equal(raw, want, equal_nan=True), _first_diff(raw, want, want_X)
        predictions = [module.predict(r) for r in rows]
        want_pred = ev.predict(model, want_X)
        assert [p == w or (p != p and w != w) for p, w in zip(predictions, want_pred.tolist())] == [True] * len(rows)
    with pytest.raises(ValueError, match="expected"):
        module.predict_raw([0.0] * (len(model.features) - 1))
    with pytest.raises(TypeError):
        module.predict_raw([[1.0]] * len(model.features))


# --- rows of floats (--rows floats): read as they are, exact for the types the contract allows ---


def _row_forms(model: Model, X: np.ndarray) -> list:
    """(rows, the float64 values the evaluator should see) for every row form rows of floats
    may take: floats and None, numpy float32 and float64 scalars, numpy rows, tuples, ints."""
    with np.errstate(over="ignore"):  # probes beyond float32's range become +-inf
        X32 = X.astype(np.float32)
    small = np.isfinite(X) & (np.abs(X) < 2.0**62)
    XI = np.where(small, np.round(X), np.nan)
    return [
        ([[None if v != v else float(v) for v in r] for r in X], X),
        ([list(r) for r in X], X),  # numpy float64 scalars
        ([list(r) for r in X32], X32.astype(np.float64)),  # numpy float32 scalars, compared as they are
        (list(X32), X32.astype(np.float64)),  # numpy rows
        ([tuple(r.tolist()) for r in X], X),
        ([[None if v != v else int(v) for v in r] for r in XI], XI),  # ints, exact past 2**53 too
    ]


def assert_float_rows_exact(model: Model, X: np.ndarray) -> None:
    module = import_source(PythonTarget().generate(model, rows="floats"))
    for rows, want_X in _row_forms(model, X):
        raw = np.array([module.predict_raw(r) for r in rows], dtype=np.float64).reshape(len(rows), -1)
        want = ev.raw_scores(model, want_X).astype(np.float64)
        assert np.array_equal(raw, want, equal_nan=True), _first_diff(raw, want, want_X)
        if model.target.task == "classification":
            proba = np.array([module.predict_proba(r) for r in rows], dtype=np.float64)
            want_p = ev.predict_proba(model, want_X).astype(np.float64)
            assert np.array_equal(proba, want_p, equal_nan=True), _first_diff(proba, want_p, want_X)
        predictions = module.predict_batch(rows)
        want_pred = ev.predict(model, want_X).tolist()
        assert all(p == w or (p != p and w != w) for p, w in zip(predictions, want_pred))


def _numeric_fixtures() -> dict[str, Model]:
    from rulegen.targets.python.body import reads_directly

    return {k: m for k, m in {**F.all_models(), **_lazy_models()}.items() if reads_directly(m)}


@pytest.mark.parametrize("name", sorted(_numeric_fixtures()))
def test_rows_of_floats_are_exact_in_every_allowed_form(name):
    model = _numeric_fixtures()[name]
    text = PythonTarget().generate(model, rows="floats")["model.py"]
    assert "compiled with --rows\nfloats" in text or "(compiled with --rows floats)" in text.replace("\n", " ")
    assert_float_rows_exact(model, F.probe_rows(model, limit=400))


def _stumps(thresholds, dtype: str) -> Model:
    """One stump per threshold on its own input, each op and missing side in turn; the leaves
    are powers of two, so the raw score says which side every stump took."""
    trees = []
    for i, t in enumerate(thresholds):
        test = NumericTest(i, "<=" if i % 2 else "<", float(t), dtype)
        trees.append(Tree((Split(test, (1, 2), DefaultChild(i // 2 % 2)), Leaf((0.0,)), Leaf((2.0 ** -(i % 40),)))))
    features = tuple(Feature(f"x{i}") for i in range(len(thresholds)))
    return validate(Model(features, Target("regression"), tuple(trees), (0.0,)))


def test_rows_of_floats_at_float32_midpoints_and_huge_bounds():
    """Where a test reads the value as it is, numpy compares a float32 scalar with the bound
    rounded to float32 and an int exactly: every threshold kind the reads have to get right,
    probed at and around it in float32, float64 and ints."""
    f32 = np.float32
    t32 = [f32(0.1), f32(1.0), f32(-1.0), np.nextafter(f32(1.0), f32(0)), f32(3.0), f32(2.0**-126),
           f32(1e-45), f32(-3e38), f32(3.4e38), f32(2.0**24 + 2), f32(2.0**60), f32(-(2.0**70))]
    t64 = [0.1, 1.0 / 3.0, 0.5, -2.5, 2.0**53 + 2, 2.0**60 + 2**9, -(2.0**60) - 2**9, 2.0**60, 2.0**58,
           1e300, 5e-324, float(f32(0.7)), 3.4e38]
    for thresholds, dtype in ((t32, "float32"), (t64, "float64")):
        model = _stumps(thresholds, dtype)
        rows = []
        with np.errstate(over="ignore"):  # thresholds past float32's range: the probes are +-inf
            for t in thresholds:
                near = [float(t), float(np.nextafter(t, np.inf)), float(np.nextafter(t, -np.inf))]
                up = down = f32(t)
                for _ in range(3):  # float32 values around it, as they round from the double
                    near += [float(up), float(down)]
                    up, down = np.nextafter(up, f32(np.inf)), np.nextafter(down, f32(-np.inf))
                rows.append(near)
        width = max(map(len, rows))
        base = np.array([r + [r[0]] * (width - len(r)) for r in rows])  # (features, probes)
        X = np.concatenate([base.T, np.full((1, len(thresholds)), np.nan)])
        assert_float_rows_exact(model, X)
        # ints that no double holds, next to the thresholds past 2**53: float() rounds them
        module = import_source(PythonTarget().generate(model, rows="floats"))
        bounds = [float64_bound(tree.nodes[0].test.op, tree.nodes[0].test.threshold, dtype)[1]
                  for tree in model.trees]
        ints = [[0] * j + [int(b) + d] + [0] * (len(bounds) - j - 1)
                for j, b in enumerate(bounds) if 2.0**53 <= abs(b) < 2.0**62 for d in range(-3, 4)]
        assert ints
        raw = np.array([module.predict_raw(r) for r in ints])
        want = ev.raw_scores(model, np.array([[float(v) for v in r] for r in ints])).astype(np.float64)
        assert np.array_equal(raw, want)


@pytest.mark.parametrize("rows", ["any", "floats"])
def test_ensembles_read_the_row_from_locals(rows):
    """Trees summed in one function unpack the row once (x0, x1, ... = x): a row of the wrong
    length is refused there; every row form is read right (the fixtures' tests above)."""
    from rulegen.targets.python.body import unpack_pays

    model = F.big_ensemble(60)
    assert unpack_pays(model)
    text = PythonTarget().generate(model, rows=rows)["model.py"]
    assert "x0, x1, x2" in text and "x[" not in text.split("def _raw(x):")[1].split("\ndef ")[0]
    module = import_source({"model.py": text})
    X = F.probe_rows(model, limit=200)
    assert_exact(model, X) if rows == "any" else assert_float_rows_exact(model, X)
    for bad in ([0.0] * (len(model.features) - 1), [0.0] * (len(model.features) + 1)):
        with pytest.raises(ValueError):
            module.predict_raw(bad)
