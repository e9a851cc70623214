"""Score a Parquet file with PySpark, using the SQL rulegen compiles (no rulegen at run time).

    rulegen fit examples/iris.csv --target class -o iris.json
    rulegen compile iris.json --target sql --dialect spark --table flowers -o iris_spark.sql
    python examples/spark_score_parquet.py iris_spark.sql flowers.parquet scored.parquet

Without a Parquet file at hand, pass ``--from-csv examples/iris.csv`` to write one first. The
same query runs unchanged on a cluster (``spark-submit --master yarn ...``); NULL and NaN are
both missing values. For a single column inside your own job, compile with
``--expressions-only`` and pass each line of the fragment to ``df.selectExpr``.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def score(spark, query: str, parquet: str, output: str, table: str):
    """Run the compiled query over the rows of ``parquet`` (registered as ``table``) and write
    the scored rows to ``output``; returns the scored DataFrame."""
    spark.read.parquet(parquet).createOrReplaceTempView(table)
    scored = spark.sql(Path(query).read_text(encoding="utf-8").strip().rstrip(";"))
    scored.write.mode("overwrite").parquet(output)
    return spark.read.parquet(output)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("query", help="the .sql file from rulegen compile --dialect spark")
    ap.add_argument("parquet", help="the rows to score (a Parquet file or folder)")
    ap.add_argument("output", help="where to write the scored rows (Parquet)")
    ap.add_argument("--table", default="flowers", help="the table name the query reads")
    ap.add_argument("--from-csv", metavar="CSV", help="first write PARQUET from this CSV")
    args = ap.parse_args()

    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("rulegen-score").getOrCreate()
    if args.from_csv:
        spark.read.csv(args.from_csv, header=True, inferSchema=True).write.mode("overwrite").parquet(args.parquet)
    score(spark, args.query, args.parquet, args.output, args.table).show(5, truncate=False)
    spark.stop()


if __name__ == "__main__":
    main()
