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
    _one_line_error(capsys, ["compile", other, "--target", "sql"], "directory under stages/")
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
