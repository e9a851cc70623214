"""The IR: JSON round trips, validation messages, and the evaluator's semantics on
hand-computed cases (docs/IR.md is the specification these check)."""

from __future__ import annotations

import dataclasses
import json
import math

import irfixtures as F
import numpy as np
import pytest

from rulegen.codegen.lower import float64_bound
from rulegen.errors import IRValidationError, ModelFormatError
from rulegen.ir import evaluate, serialize
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

NAN = math.nan


@pytest.mark.parametrize("name", sorted(F.all_models()))
def test_json_round_trip_is_exact_and_deterministic(name):
    model = F.all_models()[name]
    text = serialize.dumps(model)
    back = serialize.loads(text)
    assert back == model
    assert serialize.dumps(back) == text


def test_json_round_trip_of_stress_models():
    for model in (F.chain(2500), F.big_ensemble(1000)):
        assert serialize.loads(serialize.dumps(model)) == model


def test_awkward_floats_survive_json():
    values = (0.1 + 0.2, 1e-300, 5e-324, -0.0, 1.7976931348623157e308, 2.0**-1074 * 3)
    feats = (Feature("x"),)
    nodes = [Split(NumericTest(0, "<=", math.inf), (1, 2), DefaultChild(0))]
    nodes += [Leaf(values), Leaf(tuple(-v for v in values))]
    m = Model(feats, Target("regression", "y", (), len(values)), (Tree(tuple(nodes)),),
              (0.0,) * len(values))
    back = serialize.loads(serialize.dumps(m))
    for a, b in zip(back.trees[0].nodes[1].value, values):
        assert a == b and math.copysign(1, a) == math.copysign(1, b)
    assert back.trees[0].nodes[0].test.threshold == math.inf


def _edit(model: Model, fn) -> str:
    d = serialize.model_to_dict(model)
    fn(d)
    return json.dumps(d)


BAD_EDITS = [
    (lambda d: d["trees"][0]["nodes"][0]["test"].__setitem__("threshold", "high"),
     "trees[0].nodes[0].test.threshold: expected a number"),
    (lambda d: d["trees"][0]["nodes"][0].__setitem__("children", [1, 99]),
     "trees[0].nodes[0].children[1]: child id 99"),
    (lambda d: d["trees"][0]["nodes"][0]["test"].__setitem__("op", ">"),
     "trees[0].nodes[0].test.op: expected one of"),
    (lambda d: d["trees"][0]["nodes"][3].__setitem__("value", [1.0]),
     "trees[0].nodes[3].value: expected 3 value(s)"),
    (lambda d: d["trees"][0]["nodes"][0]["test"].__setitem__("feature", 7),
     "trees[0].nodes[0].test.feature: feature index 7 out of range"),
    (lambda d: d["features"][1].__setitem__("name", "a"),
     "features[1].name: duplicate feature name 'a'"),
    (lambda d: d.__setitem__("link", "tanh"), "link: expected one of"),
    (lambda d: d["target"].__setitem__("classes", ["x", "y"]), "base_score: 2 classes need"),
    (lambda d: d["trees"][0]["nodes"][1]["test"].__setitem__("threshold", 1.1),
     "is not a float32 value"),
    (lambda d: d["trees"][0]["nodes"][0].__setitem__("missing", {"kind": "default", "child": 2}),
     "trees[0].nodes[0].missing.child: child index 2 out of range"),
    (lambda d: d["trees"][0]["nodes"][0].__setitem__("missing", {"kind": "sometimes"}),
     "trees[0].nodes[0].missing.kind: unknown missing rule"),
    (lambda d: d["trees"][0]["nodes"][2].__setitem__("children", [4, 6]),
     "node 4 is already a child of node 1"),
    (lambda d: d.pop("base_score"), "$: missing required key 'base_score'"),
    (lambda d: d.__setitem__("version", 99), "version: version 99 is newer"),
    (lambda d: d["trees"][0]["nodes"][3].__setitem__("value", [1.0, float("nan"), 0.0]),
     "trees[0].nodes[3].value[1]: expected a finite number"),
]


@pytest.mark.parametrize("edit,message", BAD_EDITS)
def test_bad_json_names_the_path(edit, message):
    text = _edit(F.classifier(), edit)
    with pytest.raises(IRValidationError) as err:
        serialize.loads(text, "m.json")
    assert str(err.value).startswith("m.json: ")
    assert message in str(err.value)


@pytest.mark.parametrize("text,message", [
    ('{"format": "rulegen-ir", "version": 1,', "m.json: 1:"),
    ("[1, 2", "m.json: 1:6: invalid JSON"),
    ("", "invalid JSON"),
])
def test_truncated_json_names_line_and_column(text, message):
    with pytest.raises(ModelFormatError) as err:
        serialize.loads(text, "m.json")
    assert message in str(err.value)


def test_validation_checks_each_construct():
    m = F.every_construct()
    nodes = list(m.trees[0].nodes)
    bad = dataclasses.replace(nodes[2], unseen=None)
    with pytest.raises(IRValidationError, match="must say where unseen categories go"):
        validate(dataclasses.replace(m, trees=(Tree(tuple(nodes[:2] + [bad] + nodes[3:])),)))
    bad = dataclasses.replace(nodes[2], missing=Blend((0.5, 0.5)))
    with pytest.raises(IRValidationError, match="need one weight per child"):
        validate(dataclasses.replace(m, trees=(Tree(tuple(nodes[:2] + [bad] + nodes[3:])),)))
    bad = dataclasses.replace(nodes[2], missing=Surrogates((), 0))
    with pytest.raises(IRValidationError, match="surrogates need a binary split"):
        validate(dataclasses.replace(m, trees=(Tree(tuple(nodes[:2] + [bad] + nodes[3:])),)))
    bad = Split(NumericTest(1, "<", 0.0), (5, 6), DefaultChild(0))
    with pytest.raises(IRValidationError, match="is categorical; this test needs a numeric"):
        validate(dataclasses.replace(m, trees=(Tree(tuple(nodes[:1] + [bad] + nodes[2:])),)))


# --- evaluator semantics -------------------------------------------------------------------


def _one_tree(nodes, features=None, task="regression", classes=(), width=1, **kw) -> Model:
    features = features or (Feature("x"), Feature("y"))
    return validate(Model(features, Target(task, "t", classes, 1 if classes else width),
                          (Tree(tuple(nodes)),), (0.0,) * width, **kw))


def test_numeric_ops_and_missing_direction():
    for op, equal_goes in (("<=", 10.0), ("<", 20.0)):
        for default, nan_goes in ((0, 10.0), (1, 20.0)):
            m = _one_tree([Split(NumericTest(0, op, 1.5), (1, 2), DefaultChild(default)),
                           Leaf((10.0,)), Leaf((20.0,))])
            got = evaluate.predict(m, [[1.5, 0], [1.0, 0], [2.0, 0], [NAN, 0]])
            assert got.tolist() == [equal_goes, 10.0, 20.0, nan_goes]


def test_float32_comparison_rounds_the_input():
    t = float(np.float32(0.1))  # 0.10000000149011612
    m = _one_tree([Split(NumericTest(0, "<=", t, "float32"), (1, 2), DefaultChild(0)),
                   Leaf((1.0,)), Leaf((2.0,))])
    just_above = float(np.nextafter(t, 1.0))  # rounds to t in float32
    m64 = _one_tree([Split(NumericTest(0, "<=", t), (1, 2), DefaultChild(0)),
                     Leaf((1.0,)), Leaf((2.0,))])
    assert evaluate.predict(m, [[just_above, 0]]).tolist() == [1.0]
    assert evaluate.predict(m64, [[just_above, 0]]).tolist() == [2.0]


def test_surrogates_in_order_then_default():
    split = Split(NumericTest(0, "<", 0.0), (1, 2), Surrogates((
        Surrogate(NumericTest(1, "<", 5.0), 1),   # reversed: y < 5 goes right
        Surrogate(NumericTest(2, "<=", 0.0), 0)), 0))
    m = _one_tree([split, Leaf((1.0,)), Leaf((2.0,))],
                  features=(Feature("x"), Feature("y"), Feature("z")))
    rows = [[-1, 0, 0], [NAN, 4, 9], [NAN, 6, 9], [NAN, NAN, -1], [NAN, NAN, 1], [NAN, NAN, NAN]]
    assert evaluate.predict(m, rows).tolist() == [1.0, 2.0, 1.0, 1.0, 2.0, 1.0]


def test_blend_weights_paths_and_sums_in_leaf_order():
    nodes = [Split(NumericTest(0, "<", 0.0), (1, 2), Blend((0.25, 0.75))),
             Leaf((8.0,)),
             Split(NumericTest(1, "<", 0.0), (3, 4), Blend((0.5, 0.5))),
             Leaf((16.0,)), Leaf((32.0,))]
    m = _one_tree(nodes)
    got = evaluate.predict(m, [[-1, 0], [1, -1], [NAN, -1], [NAN, NAN], [1, NAN]])
    assert got.tolist() == [8.0, 16.0, 0.25 * 8 + 0.75 * 16,
                            ((0.0 + 0.25 * 8) + 0.375 * 16) + 0.375 * 32, 24.0]


def test_interval_multiway_and_unseen():
    feats = (Feature("x"), Feature("c", "categorical", ("a", "b", "c", "d")))
    m = _one_tree([Split(IntervalTest(0, "<", (1.0, 2.0)), (1, 2, 3), DefaultChild(2)),
                   Split(MultiwayTest(1, ((0, 2), (1,))), (4, 5), DefaultChild(0), unseen=1),
                   Leaf((2.0,)), Leaf((3.0,)), Leaf((4.0,)), Leaf((5.0,))], features=feats)
    rows = [[0.5, 0], [0.5, 1], [0.5, 3], [0.5, 9], [0.5, NAN], [1.0, 0], [2.0, 0], [NAN, 0]]
    assert evaluate.predict(m, rows).tolist() == [4.0, 5.0, 5.0, 5.0, 4.0, 2.0, 3.0, 3.0]


def test_categorical_unseen_default_is_the_false_branch():
    feats = (Feature("c", "categorical", ("a", "b")),)
    base = [Split(CategoricalTest(0, (1,)), (1, 2), DefaultChild(0)), Leaf((1.0,)), Leaf((2.0,))]
    m = _one_tree(base, features=feats)
    assert evaluate.predict(m, [[1], [0], [5], [-1], [0.5], [NAN]]).tolist() == [1, 2, 2, 2, 2, 1]
    base[0] = dataclasses.replace(base[0], unseen=0)
    m = _one_tree(base, features=feats)
    assert evaluate.predict(m, [[1], [0], [5], [NAN]]).tolist() == [1, 2, 1, 1]


def test_oblique_sum_and_missing():
    m = _one_tree([Split(ObliqueTest((0, 1), (0.5, -2.0), "<=", 1.0), (1, 2), DefaultChild(1)),
                   Leaf((1.0,)), Leaf((2.0,))])
    got = evaluate.predict(m, [[2.0, 0.0], [2.0, -0.25], [NAN, 0], [math.inf, 0], [math.inf, math.inf]])
    assert got.tolist() == [1.0, 2.0, 2.0, 2.0, 2.0]


def test_ensemble_sum_weight_sigmoid_and_binary_proba():
    m = F.sigmoid_ensemble()
    X = F.probe_rows(m, n_random=50)
    raw = np.full(len(X), -0.3)
    for tree in m.trees:
        raw = raw + 0.1 * evaluate.tree_output(tree, X, m.features, 1)[:, 0]
    assert np.array_equal(evaluate.raw_scores(m, X)[:, 0], raw)
    p = np.array([1 / (1 + math.exp(-r)) for r in raw])
    assert np.array_equal(evaluate.predict_proba(m, X), np.column_stack([1 - p, p]))


def test_float32_accumulation_rounds_every_addition():
    m = F.softmax_ensemble("float32")
    X = F.probe_rows(m, n_random=50)
    acc = np.tile(np.float32(m.base_score), (len(X), 1))
    for tree in m.trees:
        c = evaluate.tree_output(tree, X, m.features, 1)[:, 0].astype(np.float32)
        acc[:, tree.output] = acc[:, tree.output] + c
    assert acc.dtype == np.float32
    assert np.array_equal(evaluate.raw_scores(m, X), acc)


def test_mean_and_vote():
    X = F.probe_rows(F.forest("mean"), n_random=50)
    m = F.forest("mean")
    total = sum(evaluate.tree_output(t, X, m.features, 2) for t in m.trees)
    expected = np.zeros_like(total)
    for t in m.trees:
        expected = expected + evaluate.tree_output(t, X, m.features, 2)
    assert np.array_equal(evaluate.raw_scores(m, X), expected / len(m.trees))
    v = F.forest("vote")
    votes = np.zeros((len(X), 2))
    for t in v.trees:
        k = np.argmax(evaluate.tree_output(t, X, v.features, 2), axis=1)
        votes[np.arange(len(X)), k] += t.weight
    assert np.allclose(evaluate.raw_scores(v, X), votes / sum(t.weight for t in v.trees))


def test_exp_overflow_is_inf_not_an_error():
    m = _one_tree([Leaf((1000.0,))], link="exp")
    assert evaluate.predict(m, [[0, 0]]).tolist() == [math.inf]


def test_deep_chain_evaluates_without_recursion():
    m = F.chain(2500)
    X = np.array([[-1e9, -1e9, -1e9], [1e9, 1e9, 1e9]])
    assert evaluate.predict(m, X).tolist() == [0.0, -1.0]


# --- float32 lowering ---------------------------------------------------------------------


def _f32_thresholds():
    rng = np.random.default_rng(7)
    f32 = np.finfo(np.float32)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, float(f32.max), -float(f32.max), float(f32.tiny),
               float(np.float32(1e-45)), -float(np.float32(1e-45)), math.inf, -math.inf, 16777216.0]
    rand = rng.normal(size=300) * 10.0 ** rng.integers(-45, 39, size=300)
    with np.errstate(over="ignore"):
        return special + [float(np.float32(v)) for v in rand if np.isfinite(np.float32(v))]


def _probes(t, b):
    vals = [t, b, 2.0**128, -2.0**128, float(np.finfo(np.float32).max), math.inf, -math.inf,
            3.4028235677973366e38, -3.4028235677973366e38]
    for base in (t, b):
        if math.isinf(base):
            continue
        up = down = base
        for _ in range(3):
            up, down = float(np.nextafter(up, math.inf)), float(np.nextafter(down, -math.inf))
            vals += [up, down]
    return vals


@pytest.mark.parametrize("op", ["<", "<="])
def test_float64_bound_matches_float32_comparison_everywhere(op):
    for t in _f32_thresholds():
        op64, b = float64_bound(op, t, "float32")
        xs = np.array(_probes(t, b))
        with np.errstate(over="ignore"):
            x32 = xs.astype(np.float32)
        want = x32 < np.float32(t) if op == "<" else x32 <= np.float32(t)
        got = xs < b if op64 == "<" else xs <= b
        assert np.array_equal(want, got), (op, t, op64, b)
