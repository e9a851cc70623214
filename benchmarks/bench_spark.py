"""rulegen's Spark SQL beside a pandas UDF that calls the model's own library, and beside a
hand-written nested CASE, in Spark local[2].

    python benchmarks/bench_spark.py [--rows N] [--quick] [--memory 6g] [--write]

The data are benchmarks/bench_sql.py's (20 float32 features, binary target), held as a cached
DataFrame of FLOAT columns; the models a scikit-learn tree of depth 8, a 100-tree scikit-learn
forest of depth 8 and a 500-round XGBoost model of depth 6. Each way of scoring computes p =
P(class 1) for every row (with the row's id):

- **rulegen**: the query ``rulegen compile --target sql --dialect spark`` writes, run as is
  (whole-stage code generation on, Spark's default);
- **nested CASE**: one nested CASE per tree returning the leaf value, the same double
  thresholds, no missing-value handling (bench_sql.py's reference shape);
- **pandas UDF**: ``@pandas_udf`` calling the library's ``predict_proba`` on each Arrow batch
  (scikit-learn for the tree and the forest, XGBoost for the boosted model), the model shipped
  to the Python workers in the UDF's closure, as the Spark documentation shows.

A Spark query's cost has two parts, measured apart: ``plan s`` (parsing, analysis and
optimisation of a fresh query) with ``first run s`` (its code generation, compilation and first
run over the rows), then ``ns/row`` (the best of ``--repeat`` more runs of the same DataFrame,
whose plan and code Spark keeps). ``fixed s`` is plan + first run - one steady run; ``even at``
is the row count above which the SQL costs less in all than the UDF. Before timing, the SQL's
p is read back on every row against rulegen's evaluator (with Spark's exp, tests/engines.py)
and, as ``library diff``, against the library's; the UDF's against the library's.
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


def measure(frame, rows: int, repeat: int) -> dict:
    """The plan (parse, analyse, optimise), the first run (code generation, compilation, the
    rows) and the best steady run of ``frame`` (id and p for every row). Each run counts the
    rows of the plan's own RDD: the same compiled plan, every row computed again. (Collecting
    ``sum(p)`` twice from one DataFrame does not: Spark skips the map stage whose shuffle
    output it still holds, so a second run only adds two partial sums.)"""
    t = time.perf_counter()
    qe = frame()._jdf.queryExecution()
    qe.executedPlan()
    plan = time.perf_counter() - t
    rdd = qe.toRdd()
    first = _timed(rdd.count)
    best = min(_timed(rdd.count) for _ in range(repeat))
    return {"plan": plan, "first": first, "ns": best / rows * 1e9, "fixed": plan + first - best}


def _timed(call) -> float:
    t = time.perf_counter()
    call()
    return time.perf_counter() - t


def column(frame) -> np.ndarray:
    """p on every row, in row-id order."""
    return frame.orderBy("id").toPandas()["p"].to_numpy(dtype=np.float64)


def exactness(got: np.ndarray, want: np.ndarray) -> str:
    return "yes" if np.array_equal(got, want) else f"no ({np.max(np.abs(got - want)):.1e})"


def java_error(e: Exception) -> str:
    """The JVM's own reason (the innermost ``Caused by``) rather than py4j's wrapper line."""
    lines = [ln for ln in str(e).splitlines() if ln.startswith(("Caused by:", "java.", "org."))]
    return (lines[-1] if lines else str(e).splitlines()[0]).removeprefix("Caused by: ")[:90]


def break_even(sql: dict, udf: dict) -> str:
    """Rows above which the SQL's fixed and per-row cost together are below the UDF's."""
    if sql["ns"] >= udf["ns"]:
        return "never"
    rows = max(sql["fixed"] - udf["fixed"], 0.0) / ((udf["ns"] - sql["ns"]) * 1e-9)
    return f"{rows / 1e6:,.1f}M"


def main() -> int:
    args = engine_bench_args(__doc__, "100k rows, 20 trees, 50 boosting rounds", memory="6g")
    import pyspark
    from bench_sql import nested_case_ir, nested_case_sql
    from engines import Spark
    from run_sql import expected

    Spark.memory = args.memory
    models = fit_models(args.quick)
    X, _ = make_data(args.rows, 2)
    spark = session()
    # ordered by a row id so that read-backs line up with X
    pdf = pd.DataFrame({c: X[:, i] for i, c in enumerate(COLS)})
    pdf.insert(0, "id", np.arange(len(X), dtype=np.int64))
    frame = spark.createDataFrame(pdf).repartition(2).cache()
    frame.count()
    frame.createOrReplaceTempView("t")
    n = len(X)
    rows = [("| model | implementation | ns/row | / pandas UDF | plan s | first run s | fixed s "
             "| even at | SQL KB | exact |"), "|---|---|---|---|---|---|---|---|---|---|"]
    for name, est in models.items():
        if args.only not in name:
            continue
        model = to_ir(est)
        library = est.predict_proba(X)[:, 1].astype(np.float64)
        u = measure(lambda: udf_frame(spark, est), n, args.repeat)
        udf_exact = exactness(column(udf_frame(spark, est)), library)
        rows.append(f"| {name} | pandas UDF ({type(est).__module__.split('.')[0]}) | {u['ns']:,.0f} | 1.00 "
                    f"| {u['plan']:.1f} | {u['first']:.1f} | {u['fixed']:.1f} | | | {udf_exact} (the library) |")
        ref = (nested_case_ir(model, "spark") if hasattr(est, "get_booster")
               else nested_case_sql(est, "spark"))
        want = np.asarray(expected(model, X.astype(np.float64), "spark")["proba"][:, 1], dtype=np.float64)
        for impl, sql in (("nested CASE", ref.replace("SELECT ", "SELECT `id`, ", 1)),
                          ("rulegen SQL", rulegen_query(model))):
            try:
                r = measure(lambda: spark.sql(sql), n, args.repeat)
                got = column(spark.sql(sql))
            except Exception as e:  # py4j's error: the driver's heap, a compiler limit
                rows.append(f"| {name} | {impl} | error: {java_error(e)} | | | | | | | |")
                continue
            check = (f"{exactness(got, library)} (the library)" if impl == "nested CASE" else
                     f"{exactness(got, want)} (evaluator); library diff {np.max(np.abs(got - library)):.1e}")
            rows.append(f"| {name} | {impl} | {r['ns']:,.0f} | {r['ns'] / u['ns']:.2f} | {r['plan']:.1f} "
                        f"| {r['first']:.1f} | {r['fixed']:.1f} | {break_even(r, u)} | {len(sql) / 1e3:,.0f} "
                        f"| {check} |")
        print("\n".join(rows[-3:]), file=sys.stderr, flush=True)
    text = (f"PySpark {pyspark.__version__} local[2] ({args.memory} driver heap), {args.rows:,} cached rows "
            f"of 20 FLOAT columns, whole-stage code generation on; every row's id and p = P(class 1) computed (the "
            f"plan's RDD counted); ns/row the best of {args.repeat} runs after the first. Command: `python "
            f"benchmarks/bench_spark.py{' --quick' if args.quick else ''}`.\n\n" + "\n".join(rows))
    from docsection import publish
    publish("Spark SQL beside a pandas UDF", text, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
