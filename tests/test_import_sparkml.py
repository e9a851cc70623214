"""Spark ML importer: models trained in a local Spark, saved with ``model.save``, read back
without a JVM; Spark's own ``prediction`` / ``rawPrediction`` / ``probability`` columns against
the evaluator on training rows and on probe rows (each threshold and its float64/float32
neighbours, NaN, +-inf, signed zeros, every category code and unseen ones), then every target
against the evaluator."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import irfixtures
import numpy as np
import pytest
from targetcheck import assert_targets_exact

from rulegen.cli import main
from rulegen.errors import ModelFormatError, UnsupportedFeatureError
from rulegen.importers import sparkml
from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import CategoricalTest
from rulegen.modelio import load_model

pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

N_FEATURES = 4
CATEGORIES = {2: 6, 3: 3}  # feature index -> number of categories


@pytest.fixture(scope="module")
def spark():
    """The test process's one SparkSession (tests/engines.py): a second session in the same JVM
    would keep the first one's heap, which the SQL tests' 1,000-tree query outgrew."""
    from engines import Spark

    return Spark().connection()


def _data(seed=0, n=240):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, N_FEATURES)) * 3, 2)
    for f, k in CATEGORIES.items():
        X[:, f] = rng.integers(0, k, n)
    score = X[:, 0] + np.where(np.isin(X[:, 2], (1, 4)), 2.5, -1.0) + (X[:, 3] == 2)
    y3 = np.digitize(score + rng.normal(size=n) * 0.5, [-1.0, 1.5]).astype(float)
    by_code = np.array([5.0, 0.0, 3.0, 2.0, 0.5, 4.0])[X[:, 2].astype(int)]
    yr = score + by_code + X[:, 1] * 0.1 + rng.normal(size=n) * 0.1
    return X, y3, (y3 > 0).astype(float), yr


def _frame(spark, X, y=None):
    """A DataFrame with a features vector whose metadata marks the categorical features
    (what VectorIndexer writes), and a label."""
    from pyspark.ml.linalg import Vectors
    from pyspark.sql import functions as F

    rows = [(Vectors.dense([float(v) for v in r]), float(0.0 if y is None else y[i]))
            for i, r in enumerate(X)]
    df = spark.createDataFrame(rows, ["features", "label"])
    attrs = {"nominal": [{"idx": f, "ord": False, "vals": [str(float(c)) for c in range(k)]}
                         for f, k in CATEGORIES.items()],
             "numeric": [{"idx": f} for f in range(N_FEATURES) if f not in CATEGORIES]}
    meta = {"ml_attr": {"num_attrs": N_FEATURES, "attrs": attrs}}
    return df.select(F.col("features").alias("features", metadata=meta), "label")


def _spark_outputs(spark, model, X):
    """Spark's columns for rows X as float64 arrays (prediction, raw or None, probability or None)."""
    out = model.transform(_frame(spark, X)).collect()
    pred = np.array([r["prediction"] for r in out])
    cols = out[0].asDict() if out else {}
    raw = np.array([r["rawPrediction"].toArray() for r in out]) if "rawPrediction" in cols else None
    prob = np.array([r["probability"].toArray() for r in out]) if "probability" in cols else None
    return pred, raw, prob


def _bits(a):
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).view(np.uint64)


def assert_bits(got, want, what):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    bad = np.flatnonzero((_bits(got) != _bits(want)).reshape(len(got), -1).any(axis=1))
    assert not bad.size, f"{what}: {bad.size} rows differ, first {bad[0]}: {got[bad[0]]!r} != {want[bad[0]]!r}"


def _saved(spark, model, tmp_path_factory, name):
    path = tmp_path_factory.mktemp("spark") / name
    model.write().overwrite().save(str(path))
    return path


def _rows(model, X):
    """Training rows, then the probe rows for every threshold and category of the IR model."""
    return np.vstack([X, irfixtures.probe_rows(model, n_random=60)])


@pytest.fixture(scope="module")
def data():
    return _data()


# --- single trees -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tree_classifier(spark, data, tmp_path_factory):
    from pyspark.ml.classification import DecisionTreeClassifier

    X, y3, _, _ = data
    fitted = DecisionTreeClassifier(maxDepth=6, seed=1).fit(_frame(spark, X, y3))
    return fitted, _saved(spark, fitted, tmp_path_factory, "dtc")


def test_decision_tree_classifier_is_exact(spark, data, tree_classifier):
    X = data[0]
    fitted, path = tree_classifier
    model = sparkml.load(path)
    assert (model.aggregation, model.link, model.target.classes) == ("sum", "identity", (0, 1, 2))
    assert [f.kind for f in model.features] == ["numeric", "numeric", "categorical", "categorical"]
    assert model.features[2].categories == tuple(range(6))
    tests = [n for n in model.trees[0].nodes if hasattr(n, "test")]
    assert any(isinstance(n.test, CategoricalTest) for n in tests)
    rows = _rows(model, X)
    pred, raw, prob = _spark_outputs(spark, fitted, rows)
    assert_bits(ev.predict_proba(model, rows), prob, "probability")
    assert_bits(ev.raw_scores(model, rows), prob, "IR raw is Spark's probability")
    assert np.array_equal(ev.predict_class_index(model, rows), pred)
    assert np.array_equal(np.argmax(raw, axis=1), pred)  # Spark's class: the largest count
    assert_targets_exact(model, X[:40])


def test_decision_tree_regressor_is_exact(spark, data, tmp_path_factory):
    from pyspark.ml.regression import DecisionTreeRegressor

    X, _, _, yr = data
    fitted = DecisionTreeRegressor(maxDepth=6).fit(_frame(spark, X, yr))
    model = sparkml.load(_saved(spark, fitted, tmp_path_factory, "dtr"))
    # Spark tests membership in the smaller side of a categorical split, so values outside
    # 0..n-1 (the probes: -1, n, 0.5, 1e300, inf, NaN) go right or left by which side that is
    unseen = {n.unseen for n in model.trees[0].nodes if getattr(n, "unseen", None) is not None}
    assert unseen == {0, 1}, "both kinds of categorical split should occur"
    rows = _rows(model, X)
    pred, _, _ = _spark_outputs(spark, fitted, rows)
    assert_bits(ev.predict_value(model, rows)[:, 0], pred, "prediction")
    assert_targets_exact(model, X[:40])


# --- forests ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def forest_classifier(spark, data, tmp_path_factory):
    from pyspark.ml.classification import RandomForestClassifier

    X, y3, _, _ = data
    fitted = RandomForestClassifier(numTrees=6, maxDepth=5, seed=2).fit(_frame(spark, X, y3))
    return fitted, _saved(spark, fitted, tmp_path_factory, "rfc")


def test_random_forest_classifier_votes_are_exact(spark, data, forest_classifier):
    X = data[0]
    fitted, path = forest_classifier
    model = sparkml.load(path, forest="votes")
    assert model.aggregation == "sum"
    rows = _rows(model, X)
    pred, raw, _ = _spark_outputs(spark, fitted, rows)
    assert_bits(ev.raw_scores(model, rows), raw, "rawPrediction")
    assert np.array_equal(ev.predict_class_index(model, rows), pred)
    assert_targets_exact(model, X[:30])


def test_random_forest_classifier_probability(spark, data, forest_classifier):
    """Default: IR raw = Spark's rawPrediction / number of trees, bit for bit; Spark's
    probability divides by the sum of rawPrediction instead, which differs from the number of
    trees in the last bits on some rows: measured at most 1 ulp of 1 (2.2e-16)."""
    X = data[0]
    fitted, path = forest_classifier
    model = sparkml.load(path)
    assert model.aggregation == "mean"
    rows = _rows(model, X)
    pred, raw, prob = _spark_outputs(spark, fitted, rows)
    assert_bits(ev.raw_scores(model, rows), raw / len(model.trees), "rawPrediction / trees")
    got = ev.predict_proba(model, rows)
    assert np.max(np.abs(got - prob)) <= 2.3e-16
    assert np.array_equal(ev.predict_class_index(model, rows), pred)
    assert_targets_exact(model, X[:30])


def test_random_forest_regressor_is_exact(spark, data, tmp_path_factory):
    from pyspark.ml.regression import RandomForestRegressor

    X, _, _, yr = data
    fitted = RandomForestRegressor(numTrees=5, maxDepth=5, seed=4).fit(_frame(spark, X, yr))
    model = sparkml.load(_saved(spark, fitted, tmp_path_factory, "rfr"))
    assert model.aggregation == "mean"
    rows = _rows(model, X)
    pred, _, _ = _spark_outputs(spark, fitted, rows)
    assert_bits(ev.predict_value(model, rows)[:, 0], pred, "prediction")
    assert_targets_exact(model, X[:30])


# --- gradient boosting ------------------------------------------------------------------------


def test_gbt_classifier(spark, data, tmp_path_factory):
    """IR raw = 2 * Spark's margin (rawPrediction[1]); probability 1/(1+exp(-raw)).
    Spark's BLAS sums with fused multiply-adds in vector lanes, the IR in order: the margins
    differ in the last bits (bound asserted), and so do the probabilities."""
    from pyspark.ml.classification import GBTClassifier

    X, _, y2, _ = data
    fitted = GBTClassifier(maxIter=10, maxDepth=3, seed=5).fit(_frame(spark, X, y2))
    model = sparkml.load(_saved(spark, fitted, tmp_path_factory, "gbtc"))
    assert (model.link, model.trees[0].weight, model.trees[1].weight) == ("sigmoid", 2.0, 0.2)
    rows = _rows(model, X)
    pred, raw, prob = _spark_outputs(spark, fitted, rows)
    margin = raw[:, 1]
    got = ev.raw_scores(model, rows)[:, 0]
    assert np.max(np.abs(got - 2 * margin)) <= 4 * np.spacing(np.max(np.abs(2 * margin)))
    assert np.max(np.abs(ev.predict_proba(model, rows) - prob)) <= 5e-16
    sure = np.abs(margin) > 1e-12
    assert np.array_equal(ev.predict_class_index(model, rows)[sure], pred[sure])
    assert_targets_exact(model, X[:30])


def _plain_sum_below(spark) -> int:
    """Up to how many trees Spark's GBT dot product is a plain multiply-then-add loop from 0.0
    (the IR's sum): netlib's VectorBLAS (Java 16+ with jdk.incubator.vector, which Spark adds)
    runs its fused multiply-add lanes only from one full vector up; its other Java BLAS fuses
    from the second tree on."""
    jvm = spark._jvm
    blas = getattr(getattr(jvm.org.apache.spark.ml.linalg, "BLAS$"), "MODULE$").nativeBLAS()
    if blas.getClass().getSimpleName() != "VectorBLAS":
        return 1
    return jvm.jdk.incubator.vector.DoubleVector.SPECIES_MAX.length() - 1


def test_gbt_regressor_with_fewer_trees_than_lanes_is_exact(spark, data, tmp_path_factory):
    """With fewer trees than the BLAS's vector lanes (4 doubles with AVX2) Spark's dot product
    is a plain loop from 0.0: the IR's margin is then exact."""
    from pyspark.ml.regression import GBTRegressor

    X, _, _, yr = data
    fitted = GBTRegressor(maxIter=3, maxDepth=3, seed=6).fit(_frame(spark, X, yr))
    model = sparkml.load(_saved(spark, fitted, tmp_path_factory, "gbtr3"))
    rows = _rows(model, X)
    pred, _, _ = _spark_outputs(spark, fitted, rows)
    got = ev.predict_value(model, rows)[:, 0]
    if len(model.trees) <= _plain_sum_below(spark):
        assert_bits(got, pred, "prediction")
    else:  # another BLAS or CPU: the bound of test_gbt_classifier
        assert np.max(np.abs(got - pred)) <= 4 * np.spacing(np.max(np.abs(pred)))
    assert_targets_exact(model, X[:30])


# --- the command line and bad input -----------------------------------------------------------


def _one_line_error(capsys, args, needle):
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert needle in err, err


def test_cli_compiles_and_converts_a_saved_model(tree_classifier, tmp_path, capsys):
    _, path = tree_classifier
    out = tmp_path / "model.sql"
    assert main(["compile", str(path), "--target", "sql", "-o", str(out)]) == 0
    assert "SELECT" in out.read_text().upper()
    assert main(["convert", str(path), "-o", str(tmp_path / "ir.json")]) == 0
    assert load_model(tmp_path / "ir.json") == sparkml.load(path) == load_model(path)
    assert main(["check", str(path)]) == 0
    capsys.readouterr()
    (tmp_path / "plain").mkdir()
    _one_line_error(capsys, ["compile", tmp_path / "plain", "--target", "sql"], "is a directory")


def _copy(path, tmp_path, name):
    import shutil

    return Path(shutil.copytree(path, tmp_path / name))


def _edit_metadata(path, **changes):
    part = min((path / "metadata").glob("part-*"))
    meta = json.loads(part.read_text())
    for k, v in changes.items():
        if k == "thresholds":
            meta["paramMap"]["thresholds"] = v
        else:
            meta[k] = v
    part.write_text(json.dumps(meta))


def test_bad_model_directories(tree_classifier, tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    _, path = tree_classifier
    other = _copy(path, tmp_path, "logistic")
    _edit_metadata(other, **{"class": "org.apache.spark.ml.classification.LogisticRegressionModel"})
    _one_line_error(capsys, ["compile", other, "--target", "sql"], "LogisticRegressionModel")
    _edit_metadata(other, **{"class": "org.apache.spark.ml.PipelineModel"})
    _one_line_error(capsys, ["compile", other, "--target", "sql"], "paramMap.stageUids")
    thr = _copy(path, tmp_path, "thresholds")
    _edit_metadata(thr, thresholds=[0.2, 0.3, 0.5])
    with pytest.raises(UnsupportedFeatureError, match="'thresholds' set"):
        sparkml.load(thr)
    nodata = _copy(path, tmp_path, "nodata")
    for f in (nodata / "data").iterdir():
        f.unlink()
    _one_line_error(capsys, ["convert", nodata, "-o", tmp_path / "x.json"], "no .parquet files")
    broken = _copy(path, tmp_path, "broken")
    part = min((broken / "data").glob("*.parquet"))
    part.write_bytes(part.read_bytes()[:100])
    _one_line_error(capsys, ["compile", broken, "--target", "c"], "cannot read the Parquet")
    # a node whose child points back at itself
    loop = _copy(path, tmp_path, "loop")
    part = min((loop / "data").glob("*.parquet"))
    table = pq.read_table(part)
    rows = table.to_pylist()
    next(r for r in rows if r["id"] == 0)["rightChild"] = 0
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), part)
    _one_line_error(capsys, ["compile", loop, "--target", "sql"], "node 0: child 0 is not a fresh node")
    # weighted counts whose two largest round to the same probability: Spark predicts class 1
    # (the larger count), the IR would take class 0
    tie = _copy(path, tmp_path, "tie")
    part = min((tie / "data").glob("*.parquet"))
    rows = table.to_pylist()
    next(r for r in rows if r["leftChild"] == -1)["impurityStats"] = [
        500841.3122101236, 500841.31221012364, 416461.8166021848]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), part)
    with pytest.raises(UnsupportedFeatureError, match="largest count and largest probability"):
        sparkml.load(tie)
    assert not list(tmp_path.glob("*.json"))


def test_missing_pyarrow_is_one_clear_line(tree_classifier, monkeypatch):
    _, path = tree_classifier
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ModelFormatError, match=r"needs pyarrow \(pip install pyarrow\)"):
        sparkml.load(path)


def test_node_rows_in_any_order_and_files_and_older_column_names(forest_classifier, tmp_path):
    """Spark writes an ensemble's node rows in as many Parquet files as the model's size asks
    for, in no particular order, and (before 4.0) names the tree metadata columns; the import
    does not depend on either."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    _, path = forest_classifier
    want = sparkml.load(path)
    moved = _copy(path, tmp_path, "moved")
    part = min((moved / "data").glob("*.parquet"))
    table = pq.read_table(part)
    order = np.random.default_rng(0).permutation(table.num_rows)
    shuffled = table.take(pa.array(order))
    half = table.num_rows // 2
    part.unlink()
    pq.write_table(shuffled.slice(0, half), moved / "data" / "part-00000-a.parquet")
    pq.write_table(shuffled.slice(half), moved / "data" / "part-00001-b.parquet")
    meta = min((moved / "treesMetadata").glob("*.parquet"))
    pq.write_table(pq.read_table(meta).rename_columns(["treeID", "metadata", "weights"]), meta)
    assert sparkml.load(moved) == want
    # a tree missing from the data is refused, naming the folder
    pq.write_table(shuffled.filter(pc.not_equal(shuffled["treeID"], 2)),
                   moved / "data" / "part-00001-b.parquet")
    (moved / "data" / "part-00000-a.parquet").unlink()
    with pytest.raises(ModelFormatError, match="tree ids should be 0..n-1"):
        sparkml.load(moved)


# --- pipelines: StringIndexer(s) + VectorAssembler + a tree model -----------------------------

COLORS = ("red", "green", "blue", "cyan", "magenta", "yellow")
SIZES = ("S", "M", "L")
KINDS = ("low", "mid", "high")


def _named_frame(spark, X, label=None, order=("x0", "x1", "color", "size")):
    """Rows of _data's layout as a DataFrame of numbers and strings: a code outside the labels is
    an unseen string, NaN a null string (numbers stay NaN). ``label``: strings (a "kind" column)
    or numbers (a "label" column)."""
    from pyspark.sql import types as T

    labels = {"color": COLORS, "size": SIZES}

    def text(name, v):
        if np.isnan(v):
            return None
        ok = float(v).is_integer() and 0 <= v < len(labels[name])
        return labels[name][int(v)] if ok else f"unseen {v!r}"

    fields = [T.StructField("x0", T.DoubleType()), T.StructField("x1", T.DoubleType()),
              T.StructField("color", T.StringType()), T.StructField("size", T.StringType())]
    rows = [[float(r[0]), float(r[1]), text("color", r[2]), text("size", r[3])] for r in X]
    if label is not None and isinstance(label[0], str):
        fields.append(T.StructField("kind", T.StringType()))
    elif label is not None:
        fields.append(T.StructField("label", T.DoubleType()))
    if label is not None:
        rows = [r + [v if isinstance(v, str) else float(v)] for r, v in zip(rows, label)]
    return spark.createDataFrame(rows, T.StructType(fields))


def _ir_rows(X, order=("x0", "color", "x1", "size")):
    """_data's rows in a pipeline model's feature order (category codes index COLORS / SIZES)."""
    src = {"x0": 0, "x1": 1, "color": 2, "size": 3}
    return np.column_stack([X[:, src[n]] for n in order])


@pytest.fixture(scope="module")
def keep_pipeline(spark, data, tmp_path_factory):
    """Indexers with handleInvalid="keep" (two columns in one stage), a label indexer, an
    assembler that keeps NaN, a random forest."""
    from pyspark.ml import Pipeline
    from pyspark.ml.classification import RandomForestClassifier
    from pyspark.ml.feature import StringIndexer, VectorAssembler

    X, y3, _, _ = data
    train = _named_frame(spark, X, [KINDS[int(v)] for v in y3])
    stages = [StringIndexer(inputCols=["color", "size"], outputCols=["color_i", "size_i"],
                            handleInvalid="keep"),
              StringIndexer(inputCol="kind", outputCol="label"),
              VectorAssembler(inputCols=["x0", "color_i", "x1", "size_i"], outputCol="features",
                              handleInvalid="keep"),
              RandomForestClassifier(numTrees=5, maxDepth=5, seed=7)]
    fitted = Pipeline(stages=stages).fit(train)
    return fitted, _saved(spark, fitted, tmp_path_factory, "pipe_keep")


def test_pipeline_with_keep_indexers_is_exact(spark, data, keep_pipeline):
    """Spark's rawPrediction (forest="votes") and prediction through the whole pipeline, on
    training rows and probe rows with unseen strings, null strings and NaN numbers."""
    fitted, path = keep_pipeline
    model = sparkml.load(path, forest="votes")
    assert [f.name for f in model.features] == ["x0", "color", "x1", "size"]
    assert [f.kind for f in model.features] == ["numeric", "categorical", "numeric", "categorical"]
    assert set(model.features[1].categories) == set(COLORS)
    assert model.target.name == "kind" and set(model.target.classes) == set(KINDS)
    # probe codes are in the IR's category order; Spark sees them as those strings
    X = _ir_rows(data[0])
    X = np.vstack([_recode(model, X), irfixtures.probe_rows(model, n_random=80)])
    out = fitted.transform(_named_frame_for(spark, model, X)).collect()  # no "kind" column
    raw = np.array([r["rawPrediction"].toArray() for r in out])
    pred = np.array([r["prediction"] for r in out])
    assert_bits(ev.raw_scores(model, X), raw, "rawPrediction")
    assert np.array_equal(ev.predict_class_index(model, X), pred)
    assert_targets_exact(model, X[:40])
    assert sparkml.load(path).aggregation == "mean"  # forest="probability" is still the default


def _recode(model, X):
    """_data's codes (indexes into COLORS / SIZES) as codes of the IR model's categories."""
    X = X.copy()
    for j, labels in ((1, COLORS), (3, SIZES)):
        cats = model.features[j].categories
        X[:, j] = [cats.index(labels[int(v)]) for v in X[:, j]]
    return X


def _named_frame_for(spark, model, X):
    """IR rows (codes of the model's categories) as Spark rows of strings."""
    X = X.copy()
    for j, labels in ((1, COLORS), (3, SIZES)):
        cats = model.features[j].categories
        col = X[:, j]
        known = ~np.isnan(col) & (col == np.floor(col)) & (col >= 0) & (col < len(cats))
        col[known] = [labels.index(cats[int(v)]) for v in col[known]]
        col[~known & ~np.isnan(col)] = len(labels) + 7  # any unseen string
    return _named_frame(spark, X[:, [0, 2, 1, 3]])  # back to _data's layout


def test_pipeline_with_error_indexer_regression(spark, data, tmp_path_factory):
    """Indexer and assembler left at handleInvalid="error": Spark fails on unseen strings and
    missing values, so only rows it scores are compared; a tree regressor, exact."""
    from pyspark.ml import Pipeline
    from pyspark.ml.feature import StringIndexer, VectorAssembler
    from pyspark.ml.regression import DecisionTreeRegressor

    X, _, _, yr = data
    fitted = Pipeline(stages=[StringIndexer(inputCol="color", outputCol="color_i"),
                              VectorAssembler(inputCols=["x1", "color_i", "x0"],
                                              outputCol="features"),
                              DecisionTreeRegressor(maxDepth=5)]).fit(_named_frame(spark, X, yr))
    model = sparkml.load(_saved(spark, fitted, tmp_path_factory, "pipe_error"))
    assert [f.name for f in model.features] == ["x1", "color", "x0"]
    assert model.target.name == "label"
    cats = model.features[1].categories
    probes = irfixtures.probe_rows(model, n_random=60)
    ok = ~np.isnan(probes).any(axis=1) & np.isin(probes[:, 1], np.arange(len(cats)))
    Xm = np.vstack([np.column_stack([X[:, 1], _recode1(cats, X[:, 2]), X[:, 0]]), probes[ok]])
    back = np.column_stack([Xm[:, 2], Xm[:, 0], [COLORS.index(cats[int(v)]) for v in Xm[:, 1]],
                            np.zeros(len(Xm))])
    out = fitted.transform(_named_frame(spark, back)).collect()
    assert_bits(ev.predict_value(model, Xm)[:, 0], [r["prediction"] for r in out], "prediction")
    assert_targets_exact(model, Xm[:30])


def _recode1(cats, col):
    return np.array([cats.index(COLORS[int(v)]) for v in col], dtype=float)


def test_pipeline_on_the_command_line(keep_pipeline, data, tmp_path, capsys):
    """--forest picks the forest's outputs; verify, explain and show take the directory."""
    _, path = keep_pipeline
    assert main(["convert", str(path), "-o", str(tmp_path / "v.json"), "--forest", "votes"]) == 0
    assert load_model(tmp_path / "v.json") == sparkml.load(path, forest="votes")
    assert main(["convert", str(path), "-o", str(tmp_path / "p.json")]) == 0
    assert load_model(tmp_path / "p.json") == sparkml.load(path)
    assert main(["compile", str(path), "--target", "python", "--forest", "votes",
                 "-o", str(tmp_path / "m.py")]) == 0
    X = data[0][:25]
    lines = ["x0,x1,color,size"] + [f"{float(r[0])!r},{float(r[1])!r},{COLORS[int(r[2])]},{SIZES[int(r[3])]}"
                                    for r in X]
    csv = tmp_path / "rows.csv"
    csv.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["verify", str(path), str(csv), "--target", "python", "--forest", "votes"]) == 0
    assert main(["explain", str(path), "--row", "x0=0.5", "--row", "color=blue", "--row", "x1=1",
                 "--row", "size=XL"]) == 0
    assert "size" in capsys.readouterr().out
    assert main(["show", str(path), "-o", str(tmp_path / "p.html"), "--data", str(csv)]) == 0
    assert (tmp_path / "p.html").stat().st_size > 1000
    capsys.readouterr()
    _one_line_error(capsys, ["convert", tmp_path / "v.json", "-o", tmp_path / "w.json",
                             "--forest", "votes"], "--forest applies to a Spark ML model directory")


def _stage(path, i):
    return next((path / "stages").glob(f"{i}_*"))


def test_pipeline_refusals_name_the_stage(keep_pipeline, tmp_path, capsys):
    _, path = keep_pipeline
    other = _copy(path, tmp_path, "onehot")
    _edit_metadata(_stage(other, 1), **{"class": "org.apache.spark.ml.feature.OneHotEncoderModel"})
    _one_line_error(capsys, ["compile", other, "--target", "sql"],
                    "stages[1] (OneHotEncoderModel StringIndexer_")
    unused = _copy(path, tmp_path, "unused")
    part = min((_stage(unused, 1) / "metadata").glob("part-*"))
    part.write_text(part.read_text().replace('"outputCol":"label"', '"outputCol":"kind_i"'))
    _one_line_error(capsys, ["convert", unused, "-o", tmp_path / "x.json"],
                    "its output 'kind_i' feeds neither the VectorAssembler nor")
    vector = _copy(path, tmp_path, "vector")
    part = min((_stage(vector, 2) / "metadata").glob("part-*"))
    part.write_text(part.read_text().replace('"x0","color_i",', '"color_i",'))
    _one_line_error(capsys, ["check", vector], "stages[2] (VectorAssembler VectorAssembler_")
    last = _copy(path, tmp_path, "last")
    _edit_metadata(_stage(last, 3), **{"class": "org.apache.spark.ml.feature.IndexToString"})
    _one_line_error(capsys, ["check", last], "the last stage is not a tree model")
    gone = _copy(path, tmp_path, "gone")
    import shutil

    shutil.rmtree(_stage(gone, 0))
    _one_line_error(capsys, ["check", gone], "not a directory")
    assert not list(tmp_path.glob("*.json"))


def test_keep_bucket_alone_on_the_left():
    """A split whose set is only the "keep" code: the labels' set is tested instead, with the
    sides swapped, and unseen and missing values go where the keep code went."""
    from rulegen.importers.sparkml_pipeline import _route_bucket
    from rulegen.ir.nodes import DefaultChild, Leaf, Split, Tree

    tree = Tree((Split(CategoricalTest(0, (3,)), (1, 2), DefaultChild(1), unseen=1),
                 Leaf((1.0,)), Leaf((2.0,))))
    got = _route_bucket(tree, {0: 3}).nodes[0]
    assert got.test == CategoricalTest(0, (0, 1, 2)) and got.children == (2, 1)
    assert got.missing == DefaultChild(1) and got.unseen == 1
    mixed = Tree((Split(CategoricalTest(0, (1, 3)), (1, 2), DefaultChild(0), unseen=0),
                  Leaf((1.0,)), Leaf((2.0,))))
    got = _route_bucket(mixed, {0: 3}).nodes[0]
    assert got.test == CategoricalTest(0, (1,)) and got.children == (1, 2)
    assert got.missing == DefaultChild(0) and got.unseen == 0
