"""PMML out, scored by PMML4S (pypmml) on probe rows: bit for bit against the evaluator where
no exp is involved, and against the IR's formula with the JVM's own exp where one is; every
refusal; the command line. One JVM for the module (pypmml starts one per process)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

pytest.importorskip("pypmml")

import irfixtures as fx
from run_pmml import load, score

from rulegen.cli import main
from rulegen.errors import UnsupportedFeatureError
from rulegen.exporters import export as _export
from rulegen.exporters.pmml import export as _export_pmml
from rulegen.ir import evaluate, serialize
from rulegen.ir.nodes import (
    Blend,
    CategoricalTest,
    DefaultChild,
    Feature,
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

NS = "{http://www.dmg.org/PMML-4_4}"


# --- every PMML written here is valid PMML 4.4 ---------------------------------------------------

xmlschema = pytest.importorskip("xmlschema")


def _schema_source() -> bytes:
    """The PMML 4.4 XSD as JPMML-Model ships it (``pmml.xsd`` in pmml-model-*.jar, BSD 3-Clause,
    inside the jpmml-evaluator wheel on PyPI), read from the installed package, not copied here.
    It is DMG's schema with JPMML's additions (``x-*`` attributes, six more elements); every
    element and attribute the exporter writes is DMG's."""
    import importlib.util
    import zipfile
    from pathlib import Path

    spec = importlib.util.find_spec("jpmml_evaluator")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("jpmml-evaluator (for its copy of the PMML 4.4 XSD) is not installed",
                    allow_module_level=True)
    jars = sorted(Path(spec.submodule_search_locations[0]).glob("dependencies/pmml-model-1*.jar"))
    if not jars:
        pytest.skip("no pmml-model jar in jpmml-evaluator", allow_module_level=True)
    with zipfile.ZipFile(jars[-1]) as z:
        return z.read("pmml.xsd")


SCHEMA = xmlschema.XMLSchema(_schema_source().decode("utf-8"))


def assert_valid_pmml(data: bytes) -> None:
    """Validate against the XSD (deep trees need deeper limits than xmlschema's defaults)."""
    import sys

    from xmlschema import limits

    depth, rec = limits.MAX_XML_DEPTH, sys.getrecursionlimit()
    limits.MAX_XML_DEPTH = 100_000
    sys.setrecursionlimit(max(rec, 60_000))
    try:
        error = next(SCHEMA.iter_errors(data.decode("utf-8")), None)
    finally:
        limits.MAX_XML_DEPTH = depth
        sys.setrecursionlimit(rec)
    assert error is None, f"not valid PMML 4.4: {str(error)[:500]}"


def export_pmml(model, **kw):
    data, notes = _export_pmml(model, **kw)
    assert_valid_pmml(data)
    return data, notes


def export(model, suffix, **kw):
    data, notes = _export(model, suffix, **kw)
    assert_valid_pmml(data)
    return data, notes

# The JVM's exp (PMML4S calls java.lang.Math.exp, which gave fdlibm's results here) against the C
# library's: this module's rows differ by at most 2 units in the last place of the evaluator's
# output and 1.1e-16 absolutely; 4,000 random rows through softmax_f64 reached 3 units.
EXP_ULPS = 3
EXP_ABS = 2.3e-16


def _same(a, b) -> np.ndarray:
    """Per element: identical float64 bits, or both NaN."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return (a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))


def _expected(model, X):
    if model.target.task == "regression":
        return evaluate.predict_value(model, X)[:, 0].astype(np.float64)
    return evaluate.predict_proba(model, X).astype(np.float64)


def _got(model, res):
    return res["value"] if model.target.task == "regression" else res["proba"]


def _jvm_exp(name):
    from pypmml.jvm import Py4jGateway

    fn = getattr(Py4jGateway._jvm.java.lang, name).exp

    def exp(a):
        a = np.asarray(a, dtype=np.float64)
        values, inverse = np.unique(a, return_inverse=True)
        out = np.array([fn(float(v)) if not math.isnan(v) else math.nan for v in values])
        return out[inverse].reshape(a.shape)

    return exp


def _with_jvm_exp(model, X, name):
    """The IR's link formula on the evaluator's raw scores, with the JVM's exp."""
    out = evaluate.apply_link(model.link, evaluate.raw_scores(model, X).astype(np.float64),
                              exp=_jvm_exp(name))
    if model.target.task == "regression":
        return out[:, 0]
    return evaluate.proba_of(model, out)


def check(model, X=None, approximate=False):
    """Export, score with PMML4S, compare; returns the PMML bytes."""
    data, notes = export_pmml(model, approximate=approximate)
    assert bool(notes) == approximate or not approximate
    X = fx.probe_rows(model) if X is None else X
    res = score(model, data, X)
    got, want = _got(model, res), _expected(model, X)
    single = len(model.trees) == 1
    if model.link == "identity" or single:
        bad = ~_same(got, want).reshape(len(X), -1).all(axis=1)
        assert not bad.any(), f"{bad.sum()} rows differ, e.g. row {X[bad][0].tolist()}: " \
                              f"{got[bad][0]} != {want[bad][0]}"
    else:
        # exact but for exp: the IR's formula with the JVM's exp, bit for bit
        assert any(_same(got, _with_jvm_exp(model, X, name)).all()
                   for name in ("StrictMath", "Math")), "not the IR's link with the JVM's exp"
        diff = np.abs(got - want)
        assert np.nanmax(diff) <= EXP_ABS
        assert np.nanmax(diff / np.spacing(np.abs(want))) <= EXP_ULPS
    if model.target.task == "classification":
        # the predicted label, where no two classes tie (PMML4S breaks ties by its map's order)
        top = np.sort(want, axis=1)
        clear = top[:, -1] != top[:, -2]
        labels = np.asarray(model.target.classes, dtype=object)[np.argmax(got, axis=1)]
        assert [str(v) for v in labels[clear]] == [str(v) for v in np.asarray(res["label"],
                                                                            dtype=object)[clear]]
    return data


# --- hand-built models ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["classifier", "regressor", "sigmoid_ensemble", "softmax_f64",
                                  "forest_mean", "exp_regression", "adversarial_names"])
def test_fixture_models(name):
    check(fx.all_models()[name])


def test_hostile_text_and_a_mean_of_two_trees():
    model = fx.hostile_model("float64")
    data = check(model)
    root = ET.fromstring(data)
    names = [f.get("name") for f in root.iter(f"{NS}DataField")]
    assert names[:len(model.features)] == [f.name for f in model.features]
    assert [v.get("value") for v in root.iter(f"{NS}Value")] == list(model.target.classes)


def test_thresholds_read_back_identical():
    """Every SimplePredicate value is the repr of a double that parses back to itself, and each
    float32 test's bound is the float64 one the targets use."""
    model = fx.classifier()
    values = {float(p.get("value")) for p in ET.fromstring(export_pmml(model)[0]).iter(
        f"{NS}SimplePredicate")}
    from rulegen.codegen.lower import float64_bound

    want = set()
    for n in model.trees[0].nodes:
        if isinstance(n, Split):
            b = float64_bound(n.test.op, n.test.threshold, n.test.dtype)[1]
            want.add(b if math.isfinite(b) else float(np.finfo(np.float64).max))
    assert values == want


def test_float32_single_tree_is_exact():
    rng = np.random.default_rng(7)
    tree = fx._random_tree(rng, 3, 5, 1, dtype="float32")
    model = validate(Model(tuple(Feature(f"x{i}") for i in range(3)), Target("regression", "y"),
                           (Tree(tree.nodes, None, 0.3),), (0.25,), link="exp", dtype="float32"))
    check(model)


def test_signed_zeros_in_sums_and_means():
    f = (Feature("x"),)
    t = Tree((Split(NumericTest(0, "<", 0.5), (1, 2), DefaultChild(0)), Leaf((-0.0,)), Leaf((1.0,))))
    X = np.array([[0.0], [1.0], [np.nan], [-np.inf]])
    check(validate(Model(f, Target("regression", "y"), (t, t), (-0.0,))), X)
    check(validate(Model(f, Target("regression", "y"), (t, t), (0.0,), aggregation="mean")), X)


def test_categories_unseen_missing_and_surrogates():
    """Unseen categories take Split.unseen (or "not in the set"), missing the default child or
    the first present surrogate; integer and text labels."""
    feats = (Feature("n <&> x"), Feature("c", "categorical", ("a&b<c>", "b b", 'q"t', "d\\")),
             Feature("k", "categorical", (10, 20, 30)))
    nodes = (
        Split(CategoricalTest(1, (0, 2)), (1, 2), Surrogates((
            Surrogate(CategoricalTest(2, (1,)), 1), Surrogate(NumericTest(0, "<=", 0.5), 0)), 1),
            unseen=0),
        Split(CategoricalTest(2, (0, 2)), (3, 4), DefaultChild(0)),
        Split(CategoricalTest(1, ()), (5, 6), DefaultChild(0), unseen=1),
        Leaf((1.0,)), Leaf((2.0,)), Leaf((3.0,)), Leaf((4.0,)),
    )
    model = validate(Model(feats, Target("regression", "y"), (Tree(nodes),), (0.0,)))
    X = fx.probe_rows(model)
    check(model, X)
    assert len(set(evaluate.predict_value(model, X)[:, 0])) == 4  # every leaf is reached


def test_names_that_collide_with_intermediate_fields():
    model = fx.sigmoid_ensemble()
    feats = tuple(Feature(n) for n in ("raw_0", "label", "raw_max", "label_1"))
    renamed = validate(Model(feats, model.target, model.trees, model.base_score, link="sigmoid"))
    root = ET.fromstring(check(renamed, fx.probe_rows(renamed, limit=300)))
    fields = [f.get("name") for f in root.iter(f"{NS}DataField")]
    assert fields == ["raw_0", "label", "raw_max", "label_1", "label_2"]


@pytest.mark.parametrize("default", [0, 1])
def test_oblique_splits(default):
    """Sums in IR order; a NaN sum from infinite inputs (inf*0, inf-inf) takes child 1 as in the
    IR, a missing input the default child."""
    f = (Feature("a"), Feature("b"), Feature("c"))
    nodes = (
        Split(ObliqueTest((0, 1, 2), (0.1, -0.7, 0.0), "<=", 0.3), (1, 2), DefaultChild(default)),
        Split(ObliqueTest((1, 1), (1e308, 1e308), "<", math.inf), (3, 4), DefaultChild(default)),
        Leaf((1.0,)), Leaf((2.0,)), Leaf((3.0,)),
    )
    model = validate(Model(f, Target("regression", "y"), (Tree(nodes), Tree(nodes, None, 0.5)),
                           (0.0,)))
    X = np.vstack([fx.probe_rows(model), [[math.inf, 1.0, 1.0], [1.0, math.inf, 1.0],
                                          [1.0, 1.0, -math.inf], [1.0, 1e308, math.nan]]])
    check(model, X)


def test_missing_as_nan_through_py4j():
    """A float NaN is missing like None (the batch path sends null)."""
    model = fx.classifier()
    m = load(export_pmml(model)[0])
    for row in ([math.nan, 1.0, 0.0], [0.1, math.nan, math.nan], [math.nan] * 3):
        got = m.predict(dict(zip(["a", "b", "c"], row)))
        want = evaluate.predict_proba(model, np.array([row]))[0]
        assert [got[f"probability_{c}"] for c in model.target.classes] == want.tolist()


def test_deep_chain():
    model = fx.chain(2500)
    check(model, fx.probe_rows(model, limit=800))


def _exportable(model: Model) -> Model:
    """The random model without what PMML refuses: blends and an oblique split's surrogates
    become default children, oblique surrogates go, and ensembles accumulate in float64 with a
    link PMML has."""
    trees = []
    for tree in model.trees:
        nodes = []
        for n in tree.nodes:
            if isinstance(n, Split):
                test, missing = n.test, n.missing
                if isinstance(missing, Blend) or (isinstance(test, ObliqueTest)
                                                  and isinstance(missing, Surrogates)):
                    missing = DefaultChild(0)
                if isinstance(missing, Surrogates):
                    missing = Surrogates(tuple(s for s in missing.surrogates
                                               if not isinstance(s.test, ObliqueTest)), missing.default)
                n = Split(test, n.children, missing, n.unseen)
            nodes.append(n)
        trees.append(Tree(tuple(nodes), tree.output, tree.weight))
    link, base, task = model.link, model.base_score, model.target.task
    if model.aggregation != "sum":
        link, base = "identity", (0.0,) * model.n_raw
    elif task == "classification":
        link = "sigmoid" if model.n_raw == 1 else "softmax"
    elif link not in ("identity", "exp"):
        link = "identity"
    dtype = model.dtype if len(trees) == 1 else "float64"  # one tree is exact in float32 too
    return validate(Model(model.features, model.target, tuple(trees), base,
                          model.aggregation, link, dtype))


def test_random_models():
    exact = refused = 0
    for seed in range(120):
        model = _exportable(fx.random_model(seed))
        try:
            export_pmml(model)
        except UnsupportedFeatureError:
            refused += 1
            continue
        check(model, fx.probe_rows(model, seed, n_random=20, limit=200))
        exact += 1
    assert exact >= 45, (exact, refused)  # 48 on this seed range


# --- learned models --------------------------------------------------------------------------


def _data(n=240, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 4)), 2)
    X[:, 3] = rng.integers(0, 4, n)
    y = ((X[:, 0] + X[:, 1] * (X[:, 3] > 1)) > 0).astype(int)
    if classes == 3:
        y = y + (X[:, 2] > 0.8)
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, y


def test_rulegen_learners():
    from rulegen.learn import (
        CARTClassifier,
        CARTRegressor,
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )

    X, y = _data()
    X3, y3 = _data(seed=1, classes=3)
    cats = {"categorical_features": [3], "categories": {3: ("lo", "mid", "hi", "top")}}
    models = [
        CARTClassifier(max_depth=5).fit(X3, y3, **cats).model_,
        CARTRegressor(max_depth=5).fit(X, np.nan_to_num(X[:, 0]) * 2 + y, **cats).model_,
        RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X3, y3).model_,
        RandomForestClassifier(n_estimators=6, max_depth=3, voting="hard", random_state=0).fit(
            X3, y3).model_,
        RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(
            X, np.nan_to_num(X[:, 1])).model_,
        GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=0).fit(X, y).model_,
        GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X3, y3).model_,
        GradientBoostingRegressor(n_estimators=8, max_depth=3, random_state=0).fit(
            X, np.nan_to_num(X[:, 0]) + y).model_,
    ]
    for model in models:
        check(model, fx.probe_rows(model, n_random=40, limit=500))


def test_imported_sklearn_models():
    pytest.importorskip("sklearn")
    from sklearn import ensemble, tree

    from rulegen.importers.sklearn import from_sklearn

    X, y = _data(seed=2, classes=3)
    Xf = np.nan_to_num(X)
    ests = [
        (tree.DecisionTreeClassifier(max_depth=5, random_state=0), X),
        (ensemble.RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0), X),
        (ensemble.GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0), Xf),
        (ensemble.HistGradientBoostingClassifier(max_iter=5, categorical_features=[3],
                                                 random_state=0), X),
    ]
    from threadpoolctl import threadpool_limits

    for est, data in ests:
        with threadpool_limits(1):  # OpenMP threads on a shared 2-CPU machine only wait
            model = from_sklearn(est.fit(data, y))
        check(model, fx.probe_rows(model, n_random=40, limit=500))


def test_imported_lightgbm_with_categories():
    lgb = pytest.importorskip("lightgbm")
    from rulegen.importers.lightgbm import from_booster

    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 12, 400), rng.normal(size=400)]).astype(float)
    X[rng.random(400) < 0.1, 0] = np.nan
    y = np.where(np.isin(X[:, 0], [1, 4, 9]), 2, (X[:, 1] > 0.2).astype(int))
    params = {"objective": "multiclass", "num_class": 3, "num_leaves": 6, "min_data_per_group": 5,
              "cat_smooth": 1, "verbose": -1, "num_threads": 1, "seed": 0}
    booster = lgb.train(params, lgb.Dataset(X, y, categorical_feature=[0]), 6)
    model = from_booster(booster)
    assert model.features[0].kind == "categorical" and model.link == "softmax"
    check(model, fx.probe_rows(model, n_random=40, limit=400))


# --- refusals and approximations ---------------------------------------------------------------


def _refused(model, needle, where):
    with pytest.raises(UnsupportedFeatureError) as e:
        export_pmml(model)
    assert needle in str(e.value) and str(e.value).startswith(where), str(e.value)
    assert "\n" not in str(e.value)


def test_refusals():
    _refused(fx.every_construct(), "blended split", "trees[0].nodes[2]")
    _refused(fx.softmax_ensemble("float32"), "float32 accumulation", "dtype")
    _refused(fx.forest("vote"), "weighted vote", "trees[0].weight")
    f = (Feature("x"), Feature("z"))
    leaf = Leaf((1.0,))
    oblique = Tree((Split(ObliqueTest((0, 1), (1.0, 2.0), "<", 0.5), (1, 2), Surrogates((
        Surrogate(NumericTest(0, "<", 0.0), 0),), 1)), leaf, Leaf((2.0,))))
    _refused(validate(Model(f, Target("regression", "y"), (oblique,), (0.0,))),
             "oblique split with surrogates", "trees[0].nodes[0]")
    as_surrogate = Tree((Split(NumericTest(0, "<", 0.5), (1, 2), Surrogates((
        Surrogate(ObliqueTest((0, 1), (1.0, 2.0), "<", 0.5), 0),), 1)), leaf, Leaf((2.0,))))
    _refused(validate(Model(f, Target("regression", "y"), (as_surrogate,), (0.0,))),
             "oblique test as a surrogate", "trees[0].nodes[0].missing.surrogates[0]")
    simple = Tree((Split(NumericTest(0, "<", 0.5), (1, 2), DefaultChild(0)), leaf, Leaf((2.0,))))
    _refused(validate(Model(f, Target("regression", "y", (), 2),
                            (Tree(tuple(Leaf((1.0, 2.0)) if isinstance(n, Leaf) else n
                                        for n in simple.nodes)),), (0.0, 0.0))),
             "2 regression outputs", "target")
    _refused(validate(Model((Feature("bad\x01name"), Feature("z")), Target("regression", "y"),
                            (simple,), (0.0,))), "U+0001", "features[0].name")
    _refused(validate(Model(f, Target("regression", "y"), (simple, simple), (1.0,),
                            aggregation="mean")), "nonzero base score", "base_score")
    _refused(validate(Model(f, Target("classification", "y", ("a", "b")),
                            (simple, simple), (0.0,))), "'identity' link", "link")
    big = Tree((Split(NumericTest(0, "<", 0.5), (1, 2), DefaultChild(0)), leaf, Leaf((1e308,))))
    _refused(validate(Model(f, Target("regression", "y"), (big,), (0.0,), link="exp")),
             "inf", "trees[0].nodes[2]")
    _refused(validate(Model((Feature("c", "categorical", ("a", 1)),), Target("regression", "y"),
                            (Tree((leaf,)),), (0.0,))), "mixing types", "features[0]")
    _refused(validate(Model((Feature("c", "categorical", (1, 2**70)),), Target("regression", "y"),
                            (Tree((leaf,)),), (0.0,))), "beyond 64 bits", "features[0].categories[1]")
    _refused(validate(Model(f, Target("regression", "y"), (simple, simple), (0.0,),
                            aggregation="mean", link="exp")), "'exp' link on a 'mean'", "link")
    pair = Tree(tuple(Leaf((0.5, 0.5)) if isinstance(n, Leaf) else n for n in simple.nodes))
    _refused(validate(Model(f, Target("classification", "y", ("a", "b")),
                            (pair, Tree(simple.nodes, 1)), (0.0, 0.0), aggregation="mean")),
             "a tree feeding one output", "trees[1].output")
    _refused(validate(Model(f, Target("classification", "y", ("a", "b")), (simple, simple), (0.0,),
                            aggregation="vote")), "1 raw output(s) for 2 classes", "base_score")


def test_approximate_float32_sums():
    model = fx.softmax_ensemble("float32")
    data, notes = export_pmml(model, approximate=True)
    assert len(notes) == 2 and "float32 accumulation written as double sums" in notes[0]
    assert notes[1].startswith("link softmax: the scorer computes exp itself")
    bound = float(notes[0].split("by at most ")[1].split(" ")[0])
    assert 0 < bound < 1e-6
    X = fx.probe_rows(model)
    got = score(model, data, X)["proba"]
    assert np.nanmax(np.abs(got - _expected(model, X))) < 1e-6


def test_approximate_weighted_vote_is_what_pmml4s_computes():
    model = fx.forest("vote")
    data, notes = export_pmml(model, approximate=True)
    assert len(notes) == 1 and "weighted vote" in notes[0]
    X = fx.probe_rows(model)
    got = score(model, data, X)["proba"]
    # what the file says: each class's weight total (in tree order) over the totals' sum
    acc = np.zeros((len(X), 2))
    for tree in model.trees:
        c = evaluate.tree_output(tree, X, model.features, 2)
        acc[np.arange(len(X)), np.argmax(tree.weight * c, axis=1)] += tree.weight
    assert _same(got, acc / (acc[:, 0] + acc[:, 1])[:, None]).all()
    assert np.abs(got - _expected(model, X)).max() <= 2.3e-16


# --- the command line ----------------------------------------------------------------------------


def test_cli_convert(tmp_path, capsys):
    src = tmp_path / "m.json"
    src.write_text(serialize.dumps(fx.classifier()))
    out = tmp_path / "m.pmml"
    assert main(["convert", str(src), "-o", str(out)]) == 0
    assert out.read_bytes() == export(fx.classifier(), ".pmml")[0]
    capsys.readouterr()

    bad = tmp_path / "blend.json"
    bad.write_text(serialize.dumps(fx.every_construct()))
    assert main(["convert", str(bad), "-o", str(tmp_path / "b.pmml")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "trees[0].nodes[2]" in err
    assert "Traceback" not in err and not (tmp_path / "b.pmml").exists()

    f32 = tmp_path / "f32.json"
    f32.write_text(serialize.dumps(fx.softmax_ensemble("float32")))
    assert main(["convert", str(f32), "-o", str(tmp_path / "f.pmml")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--approximate" in err
    assert main(["convert", str(f32), "-o", str(tmp_path / "f.pmml"), "--approximate"]) == 0
    captured = capsys.readouterr()
    assert "approximate: float32 accumulation written as double sums" in captured.out + captured.err
    assert_valid_pmml((tmp_path / "f.pmml").read_bytes())


def test_cli_says_the_scorer_computes_the_link(tmp_path, capsys):
    """A linked ensemble is written (the file states the IR's formula) and the command says that
    the scorer's own exp decides the last bits; an identity model says nothing of the kind."""
    src = tmp_path / "s.json"
    src.write_text(serialize.dumps(fx.sigmoid_ensemble()))
    assert main(["convert", str(src), "-o", str(tmp_path / "s.pmml")]) == 0
    assert_valid_pmml((tmp_path / "s.pmml").read_bytes())
    out = capsys.readouterr()
    assert "note: link sigmoid: the scorer computes exp itself" in out.out + out.err
    src.write_text(serialize.dumps(fx.forest("mean")))
    assert main(["convert", str(src), "-o", str(tmp_path / "f.pmml")]) == 0
    assert_valid_pmml((tmp_path / "f.pmml").read_bytes())
    out = capsys.readouterr()
    assert "note:" not in out.out + out.err


def test_the_schema_check_can_fail():
    """A value outside an enumeration and an element out of place are caught."""
    data = _export_pmml(fx.classifier())[0]
    with pytest.raises(AssertionError, match="not valid PMML 4.4"):
        assert_valid_pmml(data.replace(b'missingValueStrategy="defaultChild"',
                                       b'missingValueStrategy="sideways"', 1))
    with pytest.raises(AssertionError, match="not valid PMML 4.4"):
        assert_valid_pmml(data.replace(b"<Header", b"<Heading", 1).replace(b"</Header>",
                                                                           b"</Heading>", 1))
