"""The C target: generate, compile with cc, run on adversarial rows, compare bit for bit
with the evaluator (raw scores, outputs, class, and the float-input variant)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import irfixtures
import numpy as np
import pytest
from irfixtures import random_model
from run_c import STRICT, build, have_cc, run_c

from rulegen.codegen import lower
from rulegen.errors import RulegenError
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
from rulegen.ir.validate import validate
from rulegen.targets import brace_trees
from rulegen.targets.c import table as c_table
from rulegen.targets.c.target import CTarget

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
    # the batch entry points give each row what the one-row calls give, bit for bit
    assert np.array_equal(res["batch"].view(np.uint64), res["out"].view(np.uint64))
    assert np.array_equal(res["batch_f"].view(np.uint64), res["out_f"].view(np.uint64))
    res["files"] = files
    forms = forms_used(files)
    assert sorted(forms) == list(range(len(model.trees)))
    form = options.get("form", "auto")
    if form != "auto":
        assert forms == {i: expected_form(t, form) for i, t in enumerate(model.trees)}
    res["forms"] = forms
    return res


def forms_used(files: dict[str, str]) -> dict[int, str]:
    """Tree index -> the form its code took, from the comment every tree gets."""
    found = {}
    for text in files.values():
        for m in re.finditer(r"^/\* tree (\d+): [^\n]*?, (nested|goto|blend|table) form", text, re.MULTILINE):
            assert int(m.group(1)) not in found
            found[int(m.group(1))] = m.group(2)
    return found


def expected_form(tree: Tree, form: str) -> str:
    """What a requested form gives one tree: blends always use the blend pass, and a tree
    the table cannot express (surrogates, interval, multiway, oblique) falls back."""
    if lower.has_blend(tree):
        return "blend"
    if form == "table" and c_table.supports(tree):
        return "table"
    if form in ("nested", "goto"):
        return form
    return "nested" if brace_trees.nesting(tree) <= CTarget.MAX_NESTING else "goto"


# --- every fixture model, every form --------------------------------------------------


@pytest.mark.parametrize("model_name", sorted(irfixtures.all_models()))
def test_fixture_models_exact(model_name):
    check(irfixtures.all_models()[model_name], model_name)


@pytest.mark.parametrize("form", ["nested", "goto", "table"])
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


@pytest.mark.parametrize("form", ["nested", "goto", "table"])
@pytest.mark.parametrize("child", [0, 1, 2])
def test_every_construct_without_blends(child, form):
    check(_without_blends(irfixtures.every_construct(), child), "ec", opt="-O0", form=form)


# --- random models with every construct in every combination -------------------------------

@pytest.mark.parametrize("seed", range(36))
def test_random_models(seed):
    model = random_model(seed)
    check(model, f"r{seed}", irfixtures.probe_rows(model, seed=seed), opt="-O2" if seed % 4 == 3 else "-O0",
          form=["auto", "goto", "nested"][seed % 3])


def tableable(model: Model, seed: int = 0) -> Model:
    """The model with every split the table form cannot express made into one it can, so that
    random_model's mixes of categorical unseen routes, +-inf and float32 thresholds, weights,
    outputs, aggregations, links and dtypes all reach the table: interval, multiway and oblique
    splits keep their first test and two children (the rest of the tree is dropped), and
    surrogates and blends become a default child."""
    rng = np.random.default_rng(seed)

    def binary(split: Split) -> Split:
        test, unseen = split.test, split.unseen
        if isinstance(test, IntervalTest):
            test = NumericTest(test.feature, test.op, test.bounds[0], test.dtype)
        elif isinstance(test, MultiwayTest):
            test, unseen = CategoricalTest(test.feature, test.groups[0]), (unseen if unseen in (0, 1) else None)
        elif isinstance(test, ObliqueTest):
            test = NumericTest(test.features[0], test.op, test.threshold)
        rule = split.missing
        child = rule.default if isinstance(rule, Surrogates) else (
            rule.child if isinstance(rule, DefaultChild) else int(rng.integers(2)))
        return Split(test, split.children[:2], DefaultChild(min(child, 1)), unseen, split.samples)

    trees = []
    for tree in model.trees:
        nodes, queue = [None], [(0, 0)]  # rebuilt breadth first: ids stay increasing
        while queue:
            old, new = queue.pop(0)
            node = tree.nodes[old]
            if isinstance(node, Split):
                node = binary(node)
                kids = (len(nodes), len(nodes) + 1)
                nodes += [None, None]
                queue += list(zip(node.children, kids))
                node = Split(node.test, kids, node.missing, node.unseen, node.samples)
            nodes[new] = node
        trees.append(Tree(tuple(nodes), tree.output, tree.weight))
    return validate(dataclasses.replace(model, trees=tuple(trees)))


def far_codes(model: Model, X: np.ndarray, seed: int = 0) -> np.ndarray:
    """X plus rows whose categorical values are unseen far from the codes (the table form
    maps codes to bit positions, so these must not land on the unseen or missing bits)."""
    rng = np.random.default_rng(seed)
    rows = []
    for j, f in enumerate(model.features):
        n = len(f.categories)
        for v in (n + 1, n + 2, n - 0.5, n - 1 + 1e-9, -0.0, -1.0, 2.0**31, 2.0**32, -2.0**31 - 1, 1e300,
                  -1e300, math.inf, -math.inf) if n else ():
            row = X[int(rng.integers(len(X)))].copy()
            row[j] = v
            rows.append(row)
    return np.vstack([X, *rows]) if rows else X


@pytest.mark.parametrize("seed", range(36))
def test_random_models_table_form(seed):
    """Every random model in table form: the trees it can express are tables, the others
    fall back (check() asserts which); then the same model made table-expressible."""
    model = random_model(seed)
    opt = "-O2" if seed % 4 == 3 else "-O0"
    check(model, f"t{seed}", irfixtures.probe_rows(model, seed=seed), opt=opt, form="table")
    model = tableable(model, seed)
    assert all(c_table.supports(t) for t in model.trees)
    X = far_codes(model, irfixtures.probe_rows(model, seed=seed), seed)
    res = check(model, f"u{seed}", X, opt=opt, form="table")
    assert set(res["forms"].values()) == {"table"}


def table_ensemble(seed: int, n_trees: int = 50, width: int | None = None) -> Model:
    """Many table-expressible trees drawn from tableable(random_model(seed)), in runs of 20 of
    one leaf kind, with random weights and outputs: every batch path of the table loop
    (several batches, per-tree slots and vote weights, vector leaves, categorical steps).
    ``width`` widens every tree's leaves into a vector of that many classes."""
    rng = np.random.default_rng(seed)
    base = tableable(random_model(seed), seed)
    if width is not None:
        trees = tuple(Tree(tuple(Leaf(tuple(float(v) for v in rng.random(width))) if isinstance(n, Leaf)
                                 else n for n in t.nodes)) for t in base.trees)
        classes = tuple(f"k{i}" for i in range(width))
        base = dataclasses.replace(base, trees=trees, target=Target("classification", "y", classes),
                                   base_score=tuple(float(v) for v in rng.normal(size=width)),
                                   link="softmax" if base.link == "softmax" else "identity")
    vector = [t for t in base.trees if t.output is None]
    scalar = [t for t in base.trees if t.output is not None]
    trees = []
    for i in range(n_trees):
        pool = (vector, scalar)[(i // 20) % 2] or vector or scalar
        t = pool[int(rng.integers(len(pool)))]
        output = None if t.output is None else int(rng.integers(base.n_raw))
        trees.append(Tree(t.nodes, output, [1.0, 0.1, 0.3, 2.5][int(rng.integers(4))]))
    return validate(dataclasses.replace(base, trees=tuple(trees)))


@pytest.mark.parametrize("seed, width", [(s, None) for s in range(12)] + [(2, 6), (9, 7)])
def test_table_ensembles(seed, width):
    model = table_ensemble(seed, width=width)
    X = far_codes(model, irfixtures.probe_rows(model, seed=seed, limit=2500), seed)
    res = check(model, f"e{seed}", X, opt="-O2" if seed % 3 == 0 else "-O0", form="table")
    assert set(res["forms"].values()) == {"table"}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("missing", [0, 1])
def test_table_threshold_edges(dtype, missing):
    """Every awkward threshold, both ops: one single-split tree each, leaves 2**k and 0, so the
    sum tells exactly which trees went left; rows on, beside and between the thresholds."""
    tiny = 5e-324 if dtype == "float64" else float(np.nextafter(np.float32(0), np.float32(1)))
    big = 1.7976931348623157e308 if dtype == "float64" else irfixtures.F32MAX
    ts = [-math.inf, -big, -1.5, -tiny, -0.0, 0.0, tiny, 2.0**-126, 1.5, big, math.inf]
    trees = []
    for t in ts:
        for op in ("<", "<="):
            k = len(trees)
            trees.append(Tree((Split(NumericTest(0, op, t, dtype), (1, 2), DefaultChild(missing)),
                               Leaf((2.0**k,)), Leaf((0.0,)))))
    model = validate(Model((Feature("x"),), Target("regression", "y"), tuple(trees), (0.0,)))
    X = irfixtures.probe_rows(model, n_random=50)
    res = check(model, "edge", X, opt="-O2", form="table")
    assert set(res["forms"].values()) == {"table"}


def constant_tests_tree(dtype: str = "float64") -> Model:
    """One balanced tree whose splits include tests that send numbers and NaN alike to one
    child (x < -inf, x > +inf with NaN on the same side): to a leaf, to a split, and one
    to another. Row tables write such a test as a copy of its child's row."""
    def num(f, op, t, to):
        return NumericTest(f, op, t, dtype), to

    nodes = [None] * 13
    nodes[0] = Split(*num(0, "<=", 1.5, (1, 2)), DefaultChild(0))
    nodes[1] = Split(*num(1, "<", -math.inf, (3, 4)), DefaultChild(1))  # always node 4
    nodes[3] = Leaf((1.0,))
    nodes[4] = Split(*num(1, "<=", math.inf, (5, 6)), DefaultChild(0))  # always node 5
    nodes[5] = Split(*num(0, "<=", 0.5, (7, 8)), DefaultChild(1))
    nodes[6] = Leaf((2.0,))
    nodes[7] = Leaf((3.0,))
    nodes[8] = Leaf((4.0,))
    nodes[2] = Split(*num(2, "<", -math.inf, (9, 10)), DefaultChild(1))  # always node 10, a copy
    nodes[9] = Leaf((5.0,))
    nodes[10] = Split(*num(2, "<", -math.inf, (11, 12)), DefaultChild(1))  # always leaf 12
    nodes[11] = Leaf((6.0,))
    nodes[12] = Leaf((7.0,))
    feats = (Feature("a"), Feature("b"), Feature("c"))
    return validate(Model(feats, Target("regression", "y"), (Tree(tuple(nodes)),), (0.0,), dtype=dtype))


@pytest.mark.parametrize("form", ["auto", "table"])
def test_row_tables_constant_tests(form):
    """Constant tests in row tables (the batch of branchy code, and the table form)."""
    model = constant_tests_tree()
    files = CTarget().generate(model, name="m", form=form)
    assert "row tables" in files["m.c"]
    check(model, "m", form=form)


def _table_rows(text: str) -> list[tuple]:
    """The rows of every table in a generated file, in order, as numbers: (t, c, k) in the
    table form's T, (t, c, f, s) in row tables (c_rows)."""
    out = []
    for table in re.findall(r"T\[\d+\] = \{\n(.*?)\n(?:    )?\};", text, re.DOTALL):
        for row in re.findall(r"\{(.*?), (-?\d+), (-?\d+)(?:, (-?\d+))?\}", table):
            t = row[0].strip("()").replace("HUGE_VAL", "inf")
            out.append((float(t), *(int(v) for v in row[1:] if v)))
    return out


@pytest.mark.parametrize("n_trees", [1, 3])
def test_table_rows_follow_layout(n_trees):
    """Row r of a tree's table is node layout(tree)[r]: leaves carry their contribution and
    stay put. One tree gets row tables {t, c, f, s}, more the table form's {t, c, k}."""
    model = irfixtures.big_ensemble(n_trees)
    files = CTarget().generate(model, name="m", form="table")
    rows = _table_rows(files["m.c"])
    assert len(rows) == sum(len(t.nodes) for t in model.trees)
    base = 0
    for tree in model.trees:
        order = c_table.layout(tree)
        assert sorted(order) == list(range(len(tree.nodes)))
        for r, nid in enumerate(order):
            row = rows[base + r]
            node = tree.nodes[nid]
            if isinstance(node, Leaf):
                if n_trees == 1:
                    assert row[3] == 0 and row[1] == base + r
                else:
                    assert row[2] == 0 and row[1] in (base + r, base + r - 1)
                assert row[0] == lower.leaf_contribution(model, tree, node)[0]
            else:
                c = row[1]
                assert len(row) == (4 if n_trees == 1 else 3)
                assert c > base + r and {order[c - base], order[c + 1 - base]} == set(node.children)
                if n_trees == 1:
                    assert row[2] == node.test.feature and row[3] in (1, -1)
        base += len(tree.nodes)


# --- scale ------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["goto", "table"])
def test_chain_2500_deep(form):
    model = irfixtures.chain(2500)
    files = CTarget().generate(model, name="chain", form=form)
    assert f"{form} form" in files["chain.c"]
    assert _max_brace_depth(files["chain.c"]) <= (2 if form == "goto" else 3)
    res = check(model, "chain", opt="-O1", form=form)
    assert forms_used(CTarget().generate(model, name="chain")) == {0: "table"}  # 5001 nodes
    print(f"chain(2500) {form}: compile {res['compile_seconds']:.2f} s")


@pytest.mark.parametrize("form, opt", [("auto", "-O2"), ("nested", "-O0")])
def test_big_ensemble_1000_trees(form, opt):
    model = irfixtures.big_ensemble(1000)
    t0 = time.perf_counter()
    files = CTarget().generate(model, name="big", form=form)
    seconds = time.perf_counter() - t0
    sources = sorted(f for f in files if f.endswith(".c"))
    assert len(sources) == 10 and sources[0] == "big.c" and "big_9.c" in sources
    res = check(model, "big", irfixtures.probe_rows(model, limit=3000), opt=opt, form=form)
    assert set(res["forms"].values()) == {"table" if form == "auto" else form}  # 40k nodes
    print(f"big_ensemble(1000) {form}: generate {seconds:.2f} s, compile {opt} {res['compile_seconds']:.2f} s")


def _wide_tree(n_nodes: int, seed: int = 0) -> Model:
    """One tree of about ``n_nodes`` nodes, grown breadth first at random leaves, with
    numeric (float32 and float64, both ops) and categorical splits."""
    rng = np.random.default_rng(seed)
    feats = (*(Feature(f"n{i}") for i in range(8)), Feature("c", "categorical", tuple("abcdefghij")))
    nodes: list = [None]
    open_ = [0]
    while len(nodes) + 2 <= n_nodes:
        nid = open_.pop(int(rng.integers(len(open_))))
        if rng.random() < 0.15:
            test, unseen = CategoricalTest(8, tuple(sorted({int(c) for c in rng.integers(0, 10, 4)}))), [None, 0, 1][
                int(rng.integers(3))]
        else:
            dtype = "float32" if rng.random() < 0.5 else "float64"
            t = float(np.float32(rng.normal())) if dtype == "float32" else float(rng.normal())
            test, unseen = NumericTest(int(rng.integers(8)), "<" if rng.random() < 0.5 else "<=", t, dtype), None
        kids = (len(nodes), len(nodes) + 1)
        nodes += [None, None]
        nodes[nid] = (test, kids, DefaultChild(int(rng.integers(2))), unseen)
        open_ += kids
    # ids must increase down the tree: renumber breadth first
    order, q = [0], 0
    while q < len(order):
        if nodes[order[q]] is not None:
            order += nodes[order[q]][1]
        q += 1
    new_id = {old: new for new, old in enumerate(order)}
    out = []
    for old in order:
        n = nodes[old]
        if n is None:
            out.append(Leaf((float(rng.normal()),)))
        else:
            out.append(Split(n[0], tuple(new_id[k] for k in n[1]), n[2], n[3]))
    return validate(Model(feats, Target("regression", "y"), (Tree(tuple(out)),), (0.25,)))


def test_one_tree_of_20k_nodes_compiles_quickly():
    """auto writes a 20k-node tree as a table (its nested or goto code would take gcc -O2
    8-17 s; see c.py); it compiles in a fraction of a second and stays exact."""
    model = _wide_tree(20000)
    assert len(model.trees[0].nodes) >= 19999
    files = CTarget().generate(model, name="wide")
    X = irfixtures.probe_rows(model, n_random=3000, limit=6000)
    res = check(model, "wide", X, opt="-O2")
    assert res["forms"] == {0: "table"}
    print(f"one 20k-node tree, table form: compile -O2 {res['compile_seconds']:.2f} s, "
          f"{sum(len(t) for t in files.values()) // 1000} kB")


def test_table_beyond_16_bit_row_numbers():
    """Past 32767 rows the function checks at compile time that int has 32 bits."""
    model = _wide_tree(33000, seed=1)
    files = CTarget().generate(model, name="w33")
    assert "sizeof(int) >= 4" in files["w33.c"]
    X = irfixtures.probe_rows(model, n_random=500, limit=1500)
    check(model, "w33", X, opt="-O0")


def test_auto_form_choices():
    limit, total = CTarget.MAX_BRANCHY_NODES, CTarget.TABLE_ENSEMBLE_NODES
    one = lambda n: forms_used(CTarget().generate(_wide_tree(n), name="m"))[0]
    assert one(limit - 1) in ("nested", "goto") and one(limit + 1) == "table"
    big = irfixtures.big_ensemble(200)
    first = lambda n: dataclasses.replace(big, trees=big.trees[:n])
    assert set(forms_used(CTarget().generate(first(10), name="m")).values()) == {"nested"}
    sizes = np.cumsum([len(t.nodes) for t in big.trees])
    n_trees = int(np.argmax(sizes > total)) + 1  # the fewest trees with more nodes than that
    for n, form in ((n_trees - 1, "nested"), (n_trees, "table")):
        assert set(forms_used(CTarget().generate(first(n), name="m")).values()) == {form}


def test_mixed_forms_in_one_file():
    """A big ensemble with a surrogate tree, a blended tree and an oblique tree among its
    trees: those keep their forms and split the runs of table trees around them."""
    big = irfixtures.big_ensemble(80)
    L = Leaf
    special = [
        Tree((Split(NumericTest(0, "<", 0.5), (1, 2), Surrogates((
            Surrogate(NumericTest(1, "<=", 0.0), 0),), 1)), L((0.1,)), L((-0.2,)))),
        Tree((Split(NumericTest(2, "<", 0.0, "float32"), (1, 2), Blend((0.25, 0.75))),
              L((0.3,)), L((-0.4,))), None, 0.5),
        Tree((Split(ObliqueTest((3, 4), (0.5, -1.5), "<=", 0.25), (1, 2), DefaultChild(1)),
              L((0.05,)), L((-0.05,)))),
    ]
    trees = list(big.trees)
    for pos, tree in zip((5, 40, 41), special):
        trees.insert(pos, tree)
    model = validate(dataclasses.replace(big, trees=tuple(trees)))
    res = check(model, "mix", irfixtures.probe_rows(model, limit=1500), opt="-O0")
    assert res["forms"] == {i: expected_form(t, "table") for i, t in enumerate(model.trees)}
    assert {res["forms"][5], res["forms"][40], res["forms"][41]} == {"nested", "blend"}
    assert "mix_table_0(" in res["files"]["mix.c"] and "mix_table_6(" in res["files"]["mix.c"]


def _max_brace_depth(text: str) -> int:
    """The deepest brace nesting of the tree functions (before the fixed row loops)."""
    text = re.split(r"static void \w+_trees\(", text)[0]
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


@pytest.mark.parametrize("variant", ["blends", "no_blends", "table"])
def test_fma_contraction_cannot_change_results(variant):
    """gnu99 -O2 -march=native -ffp-contract=fast fuses ``s + w*x`` unless the product passes a
    volatile (without it, 10 of every_construct's probe rows change; see c.py). The table form
    has no products; it runs here on models with weights, float32 sums and categories."""
    if variant == "table":
        for seed in (2, 7, 9):
            model = tableable(random_model(seed), seed)
            check(model, f"fma{seed}", irfixtures.probe_rows(model, n_random=2000), opt="-O2",
                  cflags=FMA_FLAGS, form="table")
        model = irfixtures.softmax_ensemble("float32")
        check(model, "fma", irfixtures.probe_rows(model, n_random=2000), opt="-O2", cflags=FMA_FLAGS,
              form="table")
        return
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
    with np.errstate(over="ignore", invalid="ignore"):  # probes beyond float32 become inf
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


def test_hostile_and_5000_byte_names_read_back():
    """Names and labels past C99's 4,095-character string literal (5,000 bytes) compile under
    -pedantic -Werror and read back byte for byte; newlines, quotes, comment markers too."""
    model = irfixtures.hostile_model()
    res = check(model, "hostile")
    assert res["feature_names"] == [f.name for f in model.features]
    assert res["classes"] == list(model.target.classes)
    assert max(len(n.encode()) for n in res["feature_names"] + res["classes"]) > 5000


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
    only const string tables, static const row tables and functions (local tables are
    static const)."""
    for model, form in [*((m, "auto") for m in irfixtures.all_models().values()), (random_model(4), "auto"),
                        (irfixtures.every_construct(), "table"), (tableable(random_model(4)), "table")]:
        for fname, text in CTarget().generate(model, name="m", form=form).items():
            assert text.isascii()
            # <stddef.h> (size_t) is one of the headers a freestanding implementation has
            assert set(re.findall(r"#include\s*<[^>]*>", text)) <= {"#include <math.h>", "#include <stddef.h>"}
            if fname.endswith(".h"):
                continue
            for line in re.findall(r"^\w.*$", text, re.MULTILINE):
                assert re.match(r"(const char \*const m_\w+\[m_N_\w+\] = \{|"
                                r"static const (struct \{ [^}]* \}|double|float) m_\w+_[TV]\[\d+\] = \{|"
                                r"(static )?(void|int|double) m_\w+\(|n\d+:$)", line), line
            local_statics = re.findall(r"^[ \t]+static .*$", text, re.MULTILINE)
            assert all(line.lstrip().startswith("static const ") for line in local_statics)


def test_text_does_not_depend_on_what_was_generated_before():
    """-0.0 == 0.0, so a cache keyed on the threshold alone wrote whichever came first."""
    def stump(t: float) -> Model:
        return Model(features=(Feature("x"),), target=Target("regression"), base_score=(0.0,),
                     trees=(Tree((Split(NumericTest(0, "<=", t), (1, 2), DefaultChild(0)),
                                  Leaf((1.0,)), Leaf((2.0,)))),))
    CTarget().generate(stump(0.0), name="m", comments=False)
    assert "x[0] > (-0.0)" in CTarget().generate(stump(-0.0), name="m", comments=False)["m.c"]


def test_deterministic(tmp_path):
    model = irfixtures.every_construct()
    first = CTarget().generate(model, name="det")
    first.update({f"t_{k}": v for k, v in CTarget().generate(random_model(4), name="det", form="table").items()})
    assert first["det.c"] == CTarget().generate(model, name="det")["det.c"]
    script = ("import sys, json; sys.path.insert(0, 'tests'); import irfixtures;"
              "from rulegen.targets.c.target import CTarget;"
              "files = CTarget().generate(irfixtures.every_construct(), name='det');"
              "files.update({'t_' + k: v for k, v in CTarget().generate("
              "irfixtures.random_model(4), name='det', form='table').items()});"
              "print(json.dumps(files))")
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
        CTarget().generate(model, name="m", form="tables")
    for trees, mark in ((1, "/* node 0: "), (20, "/* tree 0: rows 0-")):  # row tables, the table form
        model = irfixtures.big_ensemble(trees)
        table = CTarget().generate(model, name="m", form="table")["m.c"]
        quiet = CTarget().generate(model, name="m", form="table", comments=False)["m.c"]
        assert mark in table and mark not in quiet and "/* node" not in quiet


def test_build_reuses_directory(tmp_path):
    files = CTarget().generate(irfixtures.regressor(), name="r")
    exe = build(files, "r", tmp_path, opt="-O0")
    assert exe.exists() and (tmp_path / "r.h").read_text() == files["r.h"]
