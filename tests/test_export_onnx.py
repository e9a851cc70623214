"""ONNX export: what onnxruntime computes from the written file equals the evaluator bit for bit
(raw scores, outputs, labels) on probe rows, or the export is refused naming the node."""

from __future__ import annotations

import math

import irfixtures
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from rulegen.cli import main
from rulegen.errors import UnsupportedFeatureError
from rulegen.exporters import onnx as onnx_export
from rulegen.ir import evaluate, serialize
from rulegen.ir.nodes import (
    Blend,
    CategoricalTest,
    DefaultChild,
    Feature,
    IntervalTest,
    Leaf,
    Model,
    NumericTest,
    ObliqueTest,
    Split,
    Surrogate,
    Surrogates,
    Target,
    Tree,
)
from rulegen.ir.validate import validate


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint64 if a.dtype == np.float64 else np.uint32)


def run(model, X, threads=1, approximate=False):
    data, _notes = onnx_export.export(model, approximate=approximate)
    sess = onnx_export.session(data, threads)
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, {"X": np.asarray(X, dtype=np.float64)})))


def assert_exact(model, X=None, outputs=True):
    """raw always; outputs and labels when the link is exact (identity)."""
    X = irfixtures.probe_rows(model, n_random=100) if X is None else X
    got = run(model, X)
    raw = evaluate.raw_scores(model, X)
    assert got["raw"].dtype == raw.dtype
    assert np.array_equal(bits(got["raw"]), bits(raw))
    if not outputs:
        return X
    if model.target.task == "classification":
        want = evaluate.predict_proba(model, X)
        assert np.array_equal(bits(got["probabilities"]), bits(want))
        labels = np.asarray(model.target.classes, dtype=object)[evaluate.predict_class_index(model, X)]
        got_labels = [v.decode() if isinstance(v, bytes) else v for v in got["label"].tolist()]
        assert got_labels == [v if isinstance(v, int) else str(v) for v in labels]
    else:
        assert np.array_equal(bits(got["value"]), bits(evaluate.predict_value(model, X)))
    return X


@pytest.mark.parametrize("name", ["classifier", "regressor", "forest_mean", "forest_vote",
                                  "adversarial_names"])
def test_fixture_exact(name):
    assert_exact(irfixtures.all_models()[name])


def test_deep_chain_and_many_trees():
    assert_exact(irfixtures.chain(2500))
    m = irfixtures.big_ensemble(300)
    assert_exact(Model(m.features, Target("regression", "y"), m.trees, m.base_score))


LINKED = ["sigmoid_ensemble", "softmax_f32", "softmax_f64", "exp_regression"]


def _ort_exp(dtype):
    """onnxruntime's own Exp on a float64 or float32 vector, one thread."""
    from onnx import TensorProto, helper

    t = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    graph = helper.make_graph([helper.make_node("Exp", ["x"], ["y"])], "exp",
                              [helper.make_tensor_value_info("x", t, [None])],
                              [helper.make_tensor_value_info("y", t, [None])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    sess = onnx_export.session(proto.SerializeToString())

    def exp(a):
        a = np.asarray(a, dtype=dtype)
        return sess.run(None, {"x": a.ravel()})[0].reshape(a.shape)
    return exp


def _formula_with_ort_exp(model, raw):
    """docs/IR.md's link on ``raw`` with onnxruntime's Exp in place of the C library's."""
    if model.dtype == "float32":
        out = evaluate.apply_link_f32(model.link, raw, expf=_ort_exp(np.float32))
    else:
        out = evaluate.apply_link(model.link, raw, exp=_ort_exp(np.float64))
    return evaluate.proba_of(model, out) if model.target.task == "classification" else out


def _output(model, got):
    return got["probabilities" if model.target.task == "classification" else "value"]


@pytest.mark.parametrize("name", LINKED)
def test_links_state_the_formula_exactly(name):
    """Written without --approximate; onnxruntime's outputs are the IR's formula evaluated with
    its own Exp, bit for bit, and the raw scores and labels are exact."""
    model = irfixtures.all_models()[name]
    _data, notes = onnx_export.export(model)
    assert len(notes) == 1 and notes[0].startswith(f"link {model.link}: the scorer computes exp")
    X = assert_exact(model, outputs=False)
    got = run(model, X)
    want = _formula_with_ort_exp(model, evaluate.raw_scores(model, X))
    assert np.array_equal(bits(_output(model, got)), bits(want))


def _ulps(got, want):
    """|got - want| in units in the last place of ``want`` (at least the smallest normal's)."""
    want = want.astype(np.float64 if want.dtype == np.float64 else np.float32)
    tiny = np.finfo(want.dtype).tiny
    spacing = np.spacing(np.maximum(np.abs(want), tiny)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        d = np.abs(got.astype(np.float64) - want.astype(np.float64)) / spacing
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    return np.where(same, 0.0, d)


def _wide_model(link, dtype, seed=0):
    """Trees on their own features with 64 leaves each, so that random rows reach some
    260,000 raw scores over (-40, 40) (exp: (-750, 710)) per output."""
    rng = np.random.default_rng(seed)
    n_out = 3 if link == "softmax" else 1
    lo, hi = (-250.0, 236.0) if link == "exp" else (-13.0, 13.0)
    feats, trees = [], []
    for k in range(n_out):
        for _ in range(3):
            j = len(feats)
            feats.append(Feature(f"x{j}"))
            bounds = tuple(float(b) for b in range(1, 64))
            values = rng.uniform(lo, hi, 64)
            if dtype == "float32":
                values = values.astype(np.float32).astype(np.float64)
            nodes = [Split(IntervalTest(j, "<", bounds, dtype), tuple(range(1, 65)), DefaultChild(0))]
            nodes += [Leaf((float(v),)) for v in values]
            trees.append(Tree(tuple(nodes), k if n_out > 1 else None))
    target = (Target("regression", "y") if link == "exp" else
              Target("classification", "c", tuple(range(max(2, n_out)))))
    return validate(Model(tuple(feats), target, tuple(trees), (0.0,) * n_out, link=link,
                          dtype=dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("link", ["sigmoid", "softmax", "exp"])
def test_link_bound_holds_on_many_rows(link, dtype):
    """The bound the note quotes (ORT_LINK_ULPS) holds on 200,000 random rows: ulps of the
    link's outputs (for two classes, of the second probability; the first is 1 - it)."""
    model = _wide_model(link, dtype)
    rng = np.random.default_rng(1)
    X = rng.integers(0, 64, size=(200_000, len(model.features))).astype(np.float64) + 0.5
    got = _output(model, run(model, X))[:, -model.n_raw:]
    want = evaluate.predict_outputs(model, X)
    worst = float(_ulps(got, want).max())
    assert worst <= onnx_export.ORT_LINK_ULPS[(link, dtype)], worst
    assert f"within {onnx_export.ORT_LINK_ULPS[(link, dtype)]} ulp" in onnx_export.export(model)[1][0]


def _numeric_only(model: Model) -> Model:
    """random_model with oblique splits made numeric, surrogates and blends made default
    children, and float64 sums where a float32 model holds float64 tests (all refused
    otherwise, tested on their own)."""
    trees = []
    has64 = False
    for tree in model.trees:
        nodes = []
        for n in tree.nodes:
            if isinstance(n, Split) and isinstance(n.test, ObliqueTest):
                n = Split(NumericTest(n.test.features[0], n.test.op, n.test.threshold), n.children,
                          n.missing, n.unseen)
            if isinstance(n, Split) and isinstance(n.missing, Surrogates):
                n = Split(n.test, n.children, DefaultChild(n.missing.default), n.unseen)
            if isinstance(n, Split) and isinstance(n.missing, Blend):
                n = Split(n.test, n.children, DefaultChild(int(np.argmax(n.missing.weights))),
                          n.unseen)
            if isinstance(n, Split) and getattr(n.test, "dtype", "float32") == "float64":
                has64 = True
            nodes.append(n)
        trees.append(Tree(tuple(nodes), tree.output, tree.weight))
    dtype = "float64" if has64 else model.dtype
    return validate(Model(model.features, model.target, tuple(trees), model.base_score,
                          model.aggregation, model.link, dtype))


def test_random_models_every_split_kind():
    """Numeric (float32 and float64, +-inf), categorical with every unseen route, interval and
    multiway splits, every aggregation, vector and scalar leaves, tree weights, both dtypes."""
    kinds = set()
    for seed in range(100):
        model = _numeric_only(irfixtures.random_model(seed))
        _data, notes = onnx_export.export(model)  # no refusal without approximate
        assert not any("trees[" in n for n in notes)
        X = assert_exact(model, outputs=model.link == "identity")
        if model.link != "identity":  # the formula with onnxruntime's Exp, bit for bit
            got = _output(model, run(model, X))
            want = _formula_with_ort_exp(model, evaluate.raw_scores(model, X))
            assert np.array_equal(bits(got), bits(want)), seed
            kinds.add(model.link)
        kinds |= {type(n.test).__name__ for t in model.trees for n in t.nodes if isinstance(n, Split)}
        kinds |= {model.aggregation, model.dtype}
    assert kinds >= {"NumericTest", "CategoricalTest", "IntervalTest", "MultiwayTest", "sum",
                     "mean", "vote", "float32", "float64", "sigmoid", "softmax", "exp"}


def test_approximate_structure_notes_name_the_node():
    every = irfixtures.every_construct()
    nodes = list(every.trees[0].nodes)
    nodes[3] = Split(NumericTest(3, "<", 0.1), nodes[3].children, nodes[3].missing)
    model = validate(Model(every.features, every.target, (Tree(tuple(nodes)),), every.base_score))
    with pytest.raises(UnsupportedFeatureError, match=r"trees\[0\]\.nodes\[8\]: a blended split"):
        onnx_export.export(model)
    _data, notes = onnx_export.export(model, approximate=True)
    assert notes[:3] == ["trees[0].nodes[8]: blended missing values sent to the heaviest branch",
                         "trees[0].nodes[2]: blended missing values sent to the heaviest branch",
                         "trees[0].nodes[1]: surrogates replaced by their default child"]
    assert "probe rows" in notes[-1] and "values differ" in notes[-1]
    # rows without missing values at those splits agree exactly
    X = irfixtures.probe_rows(model, n_random=50)
    X = X[~np.isnan(X[:, [1, 2, 4]]).any(axis=1)]
    got = run(model, X, approximate=True)["probabilities"]
    assert np.array_equal(got, evaluate.predict_proba(model, X))


def test_refusals_name_the_node():
    every = irfixtures.every_construct()
    with pytest.raises(UnsupportedFeatureError, match=r"trees\[0\]\.nodes\[8\]: a blended split"):
        onnx_export.export(every)
    with pytest.raises(UnsupportedFeatureError, match=r"trees\[0\]\.nodes\[3\]: an oblique split"):
        onnx_export.export(every, approximate=True)
    feats = (Feature("a"), Feature("b"))
    sur = validate(Model(feats, Target("regression"), (Tree((
        Split(NumericTest(0, "<", 0.1), (1, 2),
              Surrogates((Surrogate(NumericTest(1, "<=", 2.0), 1),), 0)),
        Leaf((1.0,)), Leaf((2.0,)))),), (0.0,)))
    with pytest.raises(UnsupportedFeatureError, match=r"trees\[0\]\.nodes\[0\]: surrogate splits"):
        onnx_export.export(sur)
    mixed = validate(Model(feats, Target("regression"), (Tree((
        Split(NumericTest(0, "<", 0.1), (1, 2), DefaultChild(0)), Leaf((1.0,)), Leaf((2.0,)))),),
        (0.0,), dtype="float32"))
    with pytest.raises(UnsupportedFeatureError, match=r"nodes\[0\]: a float64 comparison in a float32"):
        onnx_export.export(mixed)


def test_negative_zero_base():
    feats = (Feature("a"),)
    tree = Tree((Split(NumericTest(0, "<", 0.5), (1, 2), DefaultChild(0)), Leaf((-0.0,)),
                 Leaf((2.0,))))
    model = validate(Model(feats, Target("regression"), (tree,), (-0.0,)))
    with pytest.raises(UnsupportedFeatureError, match=r"base_score\[0\]: -0.0"):
        onnx_export.export(model)
    # a tree that never adds -0.0 makes the start irrelevant
    tree2 = Tree((Split(NumericTest(0, "<", 0.5), (1, 2), DefaultChild(0)), Leaf((1.0,)),
                  Leaf((2.0,))))
    assert_exact(validate(Model(feats, Target("regression"), (tree, tree2), (-0.0,))))


def test_set_tests_in_a_row_keep_their_missing_routes():
    """onnxruntime 1.32 merges a set test whose false side is a set test on the same feature with
    leaves of equal value, keeping the first one's missing flag: a NaN that the second test sends
    to its set side went the other way before the exporter separated them."""
    feats = (Feature("c", "categorical", ("a", "b", "c", "d", "e")),)
    nodes = (
        Split(CategoricalTest(0, (0, 1, 2)), (1, 2), DefaultChild(1)),
        Leaf((1.0,)),
        Split(CategoricalTest(0, (4,)), (3, 4), DefaultChild(0)),
        Leaf((1.0,)), Leaf((5.0,)),
    )
    model = validate(Model(feats, Target("regression"), (Tree(nodes),), (0.0,)))
    X = np.array([[0.0], [1.0], [2.0], [3.0], [np.nan], [4.0], [-0.0], [0.5], [7.0], [math.inf]])
    assert_exact(model, X)
    assert run(model, X[4:5])["value"][0, 0] == 1.0


def test_vote_leaves_of_equal_weight_and_different_classes():
    """Written as one tree with leaves on different classes, this met the same merge (equal leaf
    weights, different targets) before the set tests were separated; the exporter also writes
    one tree per class, so leaves of one tree never differ in target."""
    feats = (Feature("c", "categorical", ("a", "b", "c", "d", "e")),)
    from rulegen.ir.nodes import MultiwayTest

    nodes = (Split(MultiwayTest(0, ((3,), (0, 1, 2), (4,))), (1, 2, 3), DefaultChild(2), unseen=0),
             Leaf((1.0, 0.0)), Leaf((0.0, 1.0)), Leaf((1.0, 0.0)))
    model = validate(Model(feats, Target("classification", "y", ("p", "q")), (Tree(nodes),),
                           (0.0, 0.0), "vote"))
    assert_exact(model, np.array([[v] for v in (0, 1, 2, 3, 4, 5, np.nan, 0.5)]))


def test_sklearn_forest_and_tree_imported_then_exported():
    pytest.importorskip("sklearn")
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    from rulegen.importers.sklearn import from_sklearn

    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(300, 4)) * 3, 1)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) > 0).astype(int) + (X[:, 2] > 1)
    clf = from_sklearn(RandomForestClassifier(8, max_depth=5, random_state=0, n_jobs=1).fit(X, y))
    assert_exact(clf, np.vstack([X, irfixtures.probe_rows(clf, n_random=20)]))
    reg = from_sklearn(RandomForestRegressor(6, max_depth=5, random_state=0, n_jobs=1).fit(X, y * 1.5))
    assert_exact(reg)


def test_xgboost_regression_float32_sums():
    xgb = pytest.importorskip("xgboost")
    from rulegen.importers.xgboost import from_booster

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) * 2 + np.nan_to_num(X[:, 1]) ** 2
    booster = xgb.train({"max_depth": 4, "nthread": 1, "base_score": 0.3}, xgb.DMatrix(X, y), 30)
    model = from_booster(booster)
    assert model.dtype == "float32"
    Xp = np.vstack([X, irfixtures.probe_rows(model, n_random=20)])
    assert_exact(model, Xp)
    with np.errstate(invalid="ignore"):  # XGBoost refuses infinities and floats past FLT_MAX
        Xf = Xp[~(np.abs(Xp) > np.finfo(np.float32).max).any(axis=1)]
    got = run(model, Xf)["value"][:, 0]
    assert np.array_equal(bits(got), bits(booster.predict(xgb.DMatrix(Xf)).astype(np.float32)))


def test_lightgbm_regression():
    lgb = pytest.importorskip("lightgbm")
    from rulegen.importers.lightgbm import from_booster

    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    X[rng.random(X.shape) < 0.05] = np.nan
    booster = lgb.train({"objective": "regression", "num_leaves": 7, "verbose": -1,
                         "num_threads": 1, "seed": 0}, lgb.Dataset(X, X[:, 0] * 3 + 1), 20)
    assert_exact(from_booster(booster))


def test_cli_convert(tmp_path, capsys):
    good = tmp_path / "forest.json"
    good.write_text(serialize.dumps(irfixtures.forest("mean")))
    assert main(["convert", str(good), "-o", str(tmp_path / "f.onnx")]) == 0
    assert (tmp_path / "f.onnx").read_bytes()[:2] == b"\x08\x0a"  # ir_version 10 first
    capsys.readouterr()

    bad = tmp_path / "every.json"
    bad.write_text(serialize.dumps(irfixtures.every_construct()))
    assert main(["convert", str(bad), "-o", str(tmp_path / "e.onnx")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nodes[8]: a blended split" in err[0], err
    assert not (tmp_path / "e.onnx").exists()

    sig = tmp_path / "sig.json"
    sig.write_text(serialize.dumps(irfixtures.sigmoid_ensemble()))
    assert main(["convert", str(sig), "-o", str(tmp_path / "s.onnx")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "s.onnx: note: link sigmoid: the scorer computes exp" in err[0], err
    assert "within 2 ulp" in err[0]
    # --approximate changes nothing here: the link line stays a note
    assert main(["convert", str(sig), "-o", str(tmp_path / "s.onnx"), "--approximate"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "s.onnx: note: link sigmoid" in err[0], err
