"""rulegen's ClickHouse query beside a hand-written nested CASE, in chDB (ClickHouse in process).

    python benchmarks/bench_clickhouse.py [--rows N] [--threads T] [--quick] [--write]

The data and models are benchmarks/bench_sql.py's (20 float32 features, binary target): a
scikit-learn tree of depth 8, a 10-tree forest of depth 8 and a 200-round XGBoost model of
depth 6, in a table of 1M rows with Float32 columns (no NULL). Each query is read the way a
caller reads one column, ``SELECT sum(p) FROM (<query>)`` with p = P(class 1), best of
``--repeat`` runs (the boosted model: the first run interpreted, one more compiled), with ``max_threads`` set (1 by default: per-core numbers, as DuckDB's one
thread in bench_sql).

The reference ("nested CASE") is one nested CASE per tree returning the leaf's value, the same
thresholds, no missing-value handling, summed in one SELECT: for the scikit-learn models
bench_sql's (leaf P(class 1), averaged), for XGBoost written here from the same trees (leaf
margins summed in double, then 1 / (1 + exp(-s))). Before timing, every query's p is compared
on every row: rulegen's with its evaluator (exp: ClickHouse's own, tests/engines.py), the
reference's with the library's predict_proba (``exact``, else the largest difference).
``plan s`` is EXPLAIN PLAN alone; ``first run s`` a fresh query's planning plus its run. ClickHouse
compiles an expression to native code (LLVM) once it has run it ``min_count_to_compile_expression``
(3) times: each query is measured interpreted (``compile_expressions = 0``) and compiled from its
first run (``min_count_to_compile_expression = 0``: the first run includes compiling, and the best
run reuses the compiled code).
"""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(Path(__file__).resolve().parent)]

from bench_sql import COLS, engine_bench_args, fit_models, make_data, nested_case_sql, to_ir, nested_case_ir  # noqa: E402


def rulegen_sql(model) -> tuple[str, str]:
    """(SELECT p FROM rulegen's query, its SETTINGS clause or "")."""
    from rulegen.targets.sql import SqlTarget

    sql = SqlTarget().generate(model, dialect="clickhouse", table="t", comments=False)["model.sql"]
    sql = sql.strip().rstrip(";")
    clause = ""
    if "\nSETTINGS " in sql:
        sql, clause = sql[:sql.rindex("\nSETTINGS ")], sql[sql.rindex("\nSETTINGS ") + 10:]
    return f'SELECT q."prob_1" AS p FROM ({sql}) AS q', clause


def sql_oracle(model, X: np.ndarray) -> np.ndarray:
    """P(class 1) as rulegen's query computes it in ClickHouse: the evaluator's, with
    ClickHouse's exp (rounded to float32 where the query has no expf)."""
    from engines import engine
    from run_sql import expected

    engine("clickhouse").connection()
    return np.asarray(expected(model, X, "clickhouse")["proba"][:, 1], dtype=np.float64)


class Chdb:
    def __init__(self, X: np.ndarray, threads: int):
        import pyarrow as pa
        from chdb import session

        self.s = session.Session()
        self.threads = threads
        cols = ", ".join(f'"{c}" Float32' for c in COLS)
        # MergeTree, as a user's table: reads come in blocks of max_block_size (65,409) rows; a
        # Memory table returns the blocks as inserted, and one 1M-row block makes each of the
        # columns a step holds 8 MB
        self.s.query(f'CREATE TABLE "t" ("id" UInt32, {cols}) ENGINE = MergeTree ORDER BY "id"')
        table = pa.table([pa.array(np.arange(len(X), dtype=np.uint32))] + [pa.array(X[:, i]) for i in range(20)],
                         names=["id"] + COLS)
        sink = io.BytesIO()
        with pa.ipc.new_stream(sink, table.schema) as w:
            w.write_table(table)
        with self.s.send_insert('INSERT INTO "t"', "ArrowStream") as ins:
            ins.append(sink.getvalue())
            ins.finish()

    def query(self, sql: str, clause: str = ""):
        settings = ", ".join(x for x in (clause, f"max_threads = {self.threads}") if x)
        return self.s.query(f"{sql} SETTINGS {settings}", "ArrowTable")

    def column(self, sql: str, clause: str) -> np.ndarray:
        # one thread reads the parts in "id" order
        return self.query(f"SELECT p FROM ({sql}) AS s", clause).column("p").to_numpy()

    def seconds(self, sql: str, clause: str = "") -> float:
        t = time.perf_counter()
        self.query(sql, clause)
        return time.perf_counter() - t


JIT = {"interpreted": "compile_expressions = 0",
       "compiled": "compile_expressions = 1, min_count_to_compile_expression = 0"}


def measure(ch: Chdb, sql: str, clause: str, want: np.ndarray, repeat: dict) -> dict:
    """Planning; then per JIT mode a first run fetching p (planning and compiling included,
    checked on every row) and the best of it and ``repeat[mode]`` runs of sum(p)."""
    out = {"plan": ch.seconds(f"EXPLAIN PLAN SELECT sum(p) FROM ({sql}) AS s", clause), "exact": True, "diff": 0.0}
    for mode, setting in JIT.items():
        c = ", ".join(x for x in (clause, setting) if x)
        t = time.perf_counter()
        got = ch.column(sql, c)
        out[mode + " first"] = time.perf_counter() - t
        out["exact"] &= got.shape == want.shape and np.array_equal(got, want)
        out["diff"] = max(out["diff"], float(np.max(np.abs(got - want))) if got.shape == want.shape else np.nan)
        best = min([out[mode + " first"]] + [ch.seconds(f"SELECT sum(p) FROM ({sql}) AS s", c)
                                             for _ in range(repeat[mode])])
        out[mode] = best / len(want) * 1e9
    return out


def main() -> int:
    args = engine_bench_args(__doc__, "100k rows and 50 boosting rounds", threads=True)
    from rulegen.targets.sql.dialects import DIALECTS

    import chdb

    models = fit_models(args.quick, rounds=200)
    X, _ = make_data(args.rows, 2)
    ch = Chdb(X, args.threads)
    X64 = X.astype(np.float64)
    rows = ["| model | implementation | ns/row | / nested CASE | ns/row, JIT | / nested CASE | plan s | "
            "first run s | first run s, JIT | SQL KB | exact |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, est in models.items():
        if args.only not in name:
            continue
        model = to_ir(est)
        boosted = hasattr(est, "get_booster")
        ref = nested_case_ir(model, "clickhouse") if boosted else nested_case_sql(est, "clickhouse")
        # a hand-written query past 256 KiB needs the same settings as ours
        ref_clause = DIALECTS["clickhouse"].settings(len(ref.encode()), 1).removeprefix("SETTINGS ")
        ours, clause = rulegen_sql(model)
        library = est.predict_proba(X)[:, 1].astype(np.float64)
        base = None
        for impl, sql, c, want in (("nested CASE", ref, ref_clause, library), ("rulegen", ours, clause, sql_oracle(model, X64))):
            # interpreted, 200 boosted trees take minutes a run: the first run only
            r = measure(ch, sql, c, want, {"interpreted": 0 if boosted else args.repeat,
                                           "compiled": 1 if boosted else args.repeat})
            base = base or r
            rows.append(f"| {name} | {impl} | {r['interpreted']:,.0f} | {r['interpreted'] / base['interpreted']:.2f} | "
                        f"{r['compiled']:,.0f} | {r['compiled'] / base['compiled']:.2f} | {r['plan']:.2f} | "
                        f"{r['interpreted first']:.2f} | {r['compiled first']:.2f} | "
                        f"{len((sql + c).encode()) / 1024:,.0f} | "
                        + ("yes" if r["exact"] else f"no ({r['diff']:.1e})") + " |")
            print(rows[-1], file=sys.stderr, flush=True)
    text = (f"chDB {chdb.__version__} (ClickHouse {ch.s.query('SELECT version()', 'CSV').bytes().decode().strip()}), "
            f"{args.rows:,} rows of 20 Float32 columns, max_threads = {args.threads}, best of {args.repeat}; "
            f"p = P(class 1) read as `SELECT sum(p)`. Command: `python benchmarks/bench_clickhouse.py"
            f"{' --quick' if args.quick else ''}`.\n\n" + "\n".join(rows))
    from docsection import publish
    publish("ClickHouse (chDB) beside a nested CASE", text, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
