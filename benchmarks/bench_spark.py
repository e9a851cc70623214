"""rulegen's Spark SQL beside a pandas UDF that calls the model's own library, in Spark local[2].

    python benchmarks/bench_spark.py [--rows N] [--quick] [--write]

The data are benchmarks/bench_sql.py's (20 float32 features, binary target), held as a cached
DataFrame of FLOAT columns; the models a scikit-learn tree of depth 8, a 100-tree scikit-learn
forest of depth 8 and a 500-round XGBoost model of depth 6. Each way of scoring computes p =
P(class 1) for every row and is read as ``SELECT sum(p)``:

- **rulegen**: the query ``rulegen compile --target sql --dialect spark`` writes, run as is
  (whole-stage code generation on, Spark's default);
- **pandas UDF**: ``@pandas_udf`` calling the library's ``predict_proba`` on each Arrow batch
  (scikit-learn for the tree and the forest, XGBoost for the boosted model), the model shipped
  to the Python workers in the UDF's closure, as the Spark documentation shows.

``first s`` is a fresh query's parsing, planning, code generation and one run; ``best s`` the
best of it and ``--repeat`` more runs. Before timing, both are read back on every row: the
SQL's p against rulegen's evaluator (with Spark's exp, tests/engines.py) and, as ``library
diff``, against the library's; the UDF's against the library's.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd  # module level: pandas_udf resolves the UDF's type hints here

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(Path(__file__).resolve().parent)]

from bench_sql import COLS, engine_bench_args, make_data, to_ir  # noqa: E402


def fit_models(quick: bool) -> dict:
    import xgboost as xgb
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    X, y = make_data(20_000 if quick else 100_000, 1)
    rounds, trees = (50, 20) if quick else (500, 100)
    return {
        "tree, depth 8": DecisionTreeClassifier(max_depth=8, random_state=0).fit(X, y),
        # fitted on two cores, predicting on one: sums in one order, as the UDF's batches do
        f"forest {trees} x depth 8": RandomForestClassifier(trees, max_depth=8, random_state=0,
                                                            n_jobs=2).fit(X, y).set_params(n_jobs=1),
        f"XGBoost {rounds} x depth 6": xgb.XGBClassifier(
            n_estimators=rounds, max_depth=6, learning_rate=0.1, tree_method="hist",
            base_score=0.5, n_jobs=1, random_state=0).fit(X, y),
    }


def session():
    """The tests' SparkSession (local[2]), with Spark's default code generation back on."""
    from engines import engine

    e = engine("spark")
    spark = e.connection()
    for k in e.CODEGEN:
        spark.conf.unset(k)
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
    return spark


def rulegen_query(model) -> str:
    from rulegen.targets.sql import SqlTarget

    sql = SqlTarget().generate(model, dialect="spark", table="t", comments=False,
                               passthrough=["id"])["model.sql"]
    return f"SELECT q.`id`, q.`prob_1` AS p FROM ({sql.strip().rstrip(';')}) AS q"


def udf_frame(spark, est):
    from pyspark.sql.functions import col, pandas_udf, struct

    @pandas_udf("double")
    def p(rows: pd.DataFrame) -> pd.Series:  # a struct of the 20 columns arrives as a DataFrame
        return pd.Series(est.predict_proba(rows.to_numpy(dtype=np.float32))[:, 1].astype(np.float64))

    return spark.table("t").select(col("id"), p(struct(*[col(c) for c in COLS])).alias("p"))


def timed(frame, repeat: int) -> tuple[float, float]:
    t = time.perf_counter()
    frame.agg({"p": "sum"}).collect()
    first = time.perf_counter() - t
    best = first
    for _ in range(repeat):
        t = time.perf_counter()
        frame.agg({"p": "sum"}).collect()
        best = min(best, time.perf_counter() - t)
    return first, best


def column(frame) -> np.ndarray:
    """p on every row, in row-id order."""
    return frame.orderBy("id").toPandas()["p"].to_numpy(dtype=np.float64)


def main() -> int:
    args = engine_bench_args(__doc__, "100k rows, 20 trees, 50 boosting rounds")
    import pyspark
    from run_sql import expected

    models = fit_models(args.quick)
    X, _ = make_data(args.rows, 2)
    spark = session()
    # ordered by a row id so that read-backs line up with X
    pdf = pd.DataFrame({c: X[:, i] for i, c in enumerate(COLS)})
    pdf.insert(0, "id", np.arange(len(X), dtype=np.int64))
    frame = spark.createDataFrame(pdf).repartition(2).cache()
    frame.count()
    frame.createOrReplaceTempView("t")
    rows = ["| model | implementation | ns/row | / pandas UDF | first s | best s | exact |",
            "|---|---|---|---|---|---|---|"]
    for name, est in models.items():
        if args.only not in name:
            continue
        model = to_ir(est)
        library = est.predict_proba(X)[:, 1].astype(np.float64)
        want = np.asarray(expected(model, X.astype(np.float64), "spark")["proba"][:, 1], dtype=np.float64)
        got = column(spark.sql(rulegen_query(model)))
        exact = "yes" if np.array_equal(got, want) else f"no ({np.max(np.abs(got - want)):.1e})"
        lib_diff = float(np.max(np.abs(got - library)))
        u = udf_frame(spark, est)
        got_udf = column(u)
        udf_exact = "yes" if np.array_equal(got_udf, library) else f"no ({np.max(np.abs(got_udf - library)):.1e})"
        u_first, u_best = timed(u, args.repeat)
        s_first, s_best = timed(spark.sql(rulegen_query(model)), args.repeat)
        n = len(X)
        rows.append(f"| {name} | pandas UDF ({type(est).__module__.split('.')[0]}) | {u_best / n * 1e9:,.0f} | 1.00 | "
                    f"{u_first:.1f} | {u_best:.2f} | {udf_exact} (the library) |")
        rows.append(f"| {name} | rulegen SQL | {s_best / n * 1e9:,.0f} | {s_best / u_best:.2f} | {s_first:.1f} | "
                    f"{s_best:.2f} | {exact} (evaluator); library diff {lib_diff:.1e} |")
        print("\n".join(rows[-2:]), file=sys.stderr, flush=True)
    text = (f"PySpark {pyspark.__version__} local[2], {args.rows:,} cached rows of 20 FLOAT columns, "
            f"best of {args.repeat + 1}; p = P(class 1) read as `sum(p)`. Command: `python "
            f"benchmarks/bench_spark.py{' --quick' if args.quick else ''}`.\n\n" + "\n".join(rows))
    from docsection import publish
    publish("Spark SQL beside a pandas UDF", text, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
