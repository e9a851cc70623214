"""Spark SQL in one local SparkSession (tests/engines.py): a bounded selection of the SQL
target's exactness tests, since Spark plans every query for seconds (the full matrix of
tests/test_target_sql.py would take it about half an hour).

Every construct, both dtypes, NULL and NaN mixed; hostile names and labels; the deep chain
and the 1,000-tree ensemble (interpreted, as the session runs); float32 links (Spark's exp
is Java's StrictMath.exp: run_sql.expected compares with the evaluator using it); and the
same models compiled with code generation, as a cluster runs them by default.
"""

from __future__ import annotations

import dataclasses

import irfixtures as fx
import numpy as np
import pytest
from engines import engine
from irfixtures import hostile_model
from run_sql import check_sql, compare, row_column, run_sql
from test_links_f32 import models as link_models

from rulegen.ir.validate import validate
from rulegen.targets.sql import SqlTarget
from rulegen.targets.sql.dialects import DIALECTS

pyspark = pytest.importorskip("pyspark")  # a declared test dependency: under CI a skip fails

NAMES = ["every_construct", "softmax_f32", "softmax_f64", "exp_regression", "forest_vote", "forest_mean",
         "sigmoid_ensemble", "adversarial_names", "regressor", "classifier"]


def _run(model, X, **options):
    return check_sql(model, X, "spark", missing="mixed", **options)


@pytest.mark.parametrize("dtype", ["model", "float32"])
def test_models_match_the_evaluator(dtype):
    models = fx.all_models()
    for name in NAMES:
        model = models[name]
        if dtype == "float32":
            model = validate(dataclasses.replace(model, dtype="float32"))
        _run(model, fx.probe_rows(model, limit=500))


def test_hostile_names_and_labels():
    for dtype in ("float64", "float32"):
        model = hostile_model(dtype)
        _run(model, fx.probe_rows(model, limit=300))


def test_float32_links_with_sparks_exp():
    for model in link_models().values():
        X = np.arange(len(model.trees[0].nodes) - 1, dtype=np.float64)[:, None]
        _run(model, np.vstack([X, fx.probe_rows(model, limit=50)]))


def test_header_names_sparks_exp():
    sql = SqlTarget().generate(fx.all_models()["sigmoid_ensemble"], dialect="spark")["model.sql"]
    assert "StrictMath.exp" in sql
    assert "StrictMath" not in SqlTarget().generate(fx.classifier(), dialect="spark")["model.sql"]


def test_expressions_only():
    for name in ("every_construct", "softmax_f32"):
        model = fx.all_models()[name]
        X = fx.probe_rows(model, limit=200)
        frag = SqlTarget().generate(model, dialect="spark", expressions_only=True, raw=True)["model.sql"]
        q = DIALECTS["spark"].quote
        cols = ", ".join(map(q, [row_column(model)] + [f.name for f in model.features]))
        res = run_sql(f"SELECT {cols},\n{frag}\nFROM {q('data')} AS {q('t')}", model,
                      fx.labels_for(model, X), "spark")
        compare(res, model, X)


def test_chain_2500_and_1000_trees():
    model = fx.chain(2500)
    _run(model, fx.probe_rows(model, limit=1500))
    model = fx.big_ensemble(1000)
    _run(model, fx.probe_rows(model, limit=300))


def test_code_generation_is_exact():
    """The session runs queries interpreted; these run compiled, as a cluster runs them."""
    e = engine("spark")
    conf = e.connection().conf
    for k in e.CODEGEN:
        conf.unset(k)
    try:
        models = fx.all_models()
        for name in ("every_construct", "softmax_f32", "forest_vote"):
            model = models[name]
            _run(model, fx.probe_rows(model, limit=300))
        model = fx.big_ensemble(60)
        _run(model, fx.probe_rows(model, limit=200))
    finally:
        for k, v in e.CODEGEN.items():
            conf.set(k, v)


def test_example_scores_a_parquet_file(tmp_path):
    """examples/spark_score_parquet.py, as its docstring runs it: fit, compile, score Parquet."""
    import csv
    import importlib.util
    from pathlib import Path

    from rulegen.cli import main
    from rulegen.ir import evaluate
    from rulegen.modelio import load_model

    root = Path(__file__).resolve().parents[1]
    model_path, query = tmp_path / "iris.json", tmp_path / "iris_spark.sql"
    for args in (["fit", str(root / "examples" / "iris.csv"), "--target", "class", "-o", str(model_path)],
                 ["compile", str(model_path), "--target", "sql", "--dialect", "spark", "--table", "flowers",
                  "-o", str(query)]):
        assert main(args) == 0
    spec = importlib.util.spec_from_file_location("spark_example", root / "examples" / "spark_score_parquet.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    spark = engine("spark").connection()
    parquet = str(tmp_path / "flowers.parquet")
    spark.read.csv(str(root / "examples" / "iris.csv"), header=True, inferSchema=True).write.parquet(parquet)
    scored = example.score(spark, str(query), parquet, str(tmp_path / "scored.parquet"), "flowers").toPandas()
    model = load_model(model_path)
    with open(root / "examples" / "iris.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    X = np.array([[float(r[c]) for c in scored.columns[:4]] for r in rows])
    got = scored.sort_values(list(scored.columns[:4]), kind="stable")
    order = np.lexsort(X.T[::-1])
    want = evaluate.predict(model, X[order])
    assert len(scored) == len(rows) == 150
    assert [str(v) for v in got["prediction"]] == [str(v) for v in want]
