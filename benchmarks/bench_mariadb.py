"""rulegen's MariaDB query beside a hand-written nested CASE, in a throwaway MariaDB server
(tests/mariadbserver.py: its own data directory, a Unix socket, default settings).

    python benchmarks/bench_mariadb.py [--rows N] [--repeat R] [--write]

The data and models are benchmarks/bench_sql.py's (20 float32 features, binary target): a
scikit-learn tree of depth 8, a 10-tree forest of depth 8 and a 200-round XGBoost model of
depth 6, in a table of FLOAT columns. The reference is one nested CASE per tree returning the
leaf value (``x <= t`` / ``x < t`` with the same double thresholds rulegen compares with, no
missing-value handling), summed in one SELECT, then the mean (forests) or the sigmoid in
double (XGBoost, so not bit-exact: XGBoost's link is float32). Each query is read as
``SELECT sum(p) FROM (<query>) AS s`` with p = P(class 1): the server's work without the
client's fetch. Every result is checked first on every row (``exact``): rulegen's against the
evaluator (with exp rounded to float32 where the model is float32, as the SQL header says),
the reference's against the library's predict_proba.
"""

from __future__ import annotations

import argparse
import atexit
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from bench_sql import COLS, fit_models, make_data, nested_case_ir, sql_oracle, to_ir  # noqa: E402

from rulegen.targets.sql import SqlTarget  # noqa: E402
from rulegen.targets.sql.dialects import DIALECTS  # noqa: E402

D = DIALECTS["mariadb"]


def every_output(model, reference: bool) -> str:
    """A query reading every output: rulegen's class and probabilities, or the reference's
    probability of each class (the least an exact query computing them does)."""
    if reference:
        def expr(sql):
            return sql[len("SELECT "):sql.index(" AS p FROM")]

        p1 = expr(nested_case_ir(model, "mariadb"))
        p0 = f"1e0 - ({p1})" if model.link == "sigmoid" else expr(nested_case_ir(model, "mariadb", 0))
        return f"SELECT max({p0}), max({p1}) FROM `t`"
    sql = SqlTarget().generate(model, dialect="mariadb", table="t", comments=False)["model.sql"]
    cols = ", ".join(f"max(q.{D.quote(c)})" for c in ["prediction"] + [f"prob_{k}" for k in model.target.classes])
    return f"SELECT {cols} FROM ({sql.strip().rstrip(';')}) AS q"


def rulegen_sql(model) -> str:
    sql = SqlTarget().generate(model, dialect="mariadb", table="t", comments=False)["model.sql"]
    return f"SELECT q.`prob_1` AS p FROM ({sql.strip().rstrip(';')}) AS q"


class Server:
    def __init__(self, X: np.ndarray):
        import pymysql
        from mariadbserver import MariaDBServer

        self.server = MariaDBServer()
        why = self.server.why_unavailable()
        if why:
            raise SystemExit(f"cannot start MariaDB: {why}")
        self.con = pymysql.connect(**self.server.start())
        atexit.register(self.server.stop)
        cur = self.con.cursor()
        cur.execute("SELECT version()")
        self.version = cur.fetchone()[0]
        cur.execute("CREATE TABLE t (" + ", ".join(f"{D.quote(c)} FLOAT" for c in COLS) + ")")
        rows = [tuple(float(v) for v in r) for r in X]
        cur.executemany(f"INSERT INTO t VALUES ({', '.join(['%s'] * len(COLS))})", rows)
        self.n = len(X)

    def column(self, sql: str) -> np.ndarray:
        cur = self.con.cursor()
        cur.execute(sql)
        return np.array([r[0] for r in cur.fetchall()], dtype=np.float64)

    def seconds(self, sql: str, repeat: int) -> float:
        cur = self.con.cursor()
        best = float("inf")
        for _ in range(repeat):
            t = time.perf_counter()
            cur.execute(f"SELECT sum(p) FROM ({sql}) AS s")
            cur.fetchall()
            best = min(best, time.perf_counter() - t)
        return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write", action="store_true", help="put the table into docs/BENCHMARKS.md")
    args = ap.parse_args()
    models = fit_models(False, rounds=args.rounds)  # 100,000 training rows
    X, _ = make_data(args.rows, 2)
    server = Server(X)
    rows = ["| model | implementation | ns/row | / nested CASE | SQL KB | exact |", "|---|---|---|---|---|---|"]
    for name, est in models.items():
        model = to_ir(est)
        library = est.predict_proba(X)[:, 1].astype(np.float64)
        oracle = sql_oracle(model, X.astype(np.float64))
        ref = None
        for impl, sql, want in (("nested CASE", nested_case_ir(model, "mariadb"), library),
                                ("rulegen", rulegen_sql(model), oracle)):
            got = server.column(sql)
            exact = "yes" if np.array_equal(got, want) else f"no ({np.max(np.abs(got - want)):.1e})"
            ns = server.seconds(sql, args.repeat) / server.n * 1e9
            ref = ref or ns
            rows.append(f"| {name} | {impl} | {ns:,.0f} | {ns / ref:.2f} | {len(sql) / 1024:,.0f} | {exact} |")
            print(rows[-1], file=sys.stderr, flush=True)
        ref = None
        for impl, reference in (("nested CASE, both probabilities", True), ("rulegen, every output column", False)):
            sql = every_output(model, reference)
            cur = server.con.cursor()
            best = float("inf")
            for _ in range(args.repeat):
                t = time.perf_counter()
                cur.execute(sql)
                cur.fetchall()
                best = min(best, time.perf_counter() - t)
            ns = best / server.n * 1e9
            ref = ref or ns
            rows.append(f"| {name} | {impl} | {ns:,.0f} | {ns / ref:.2f} | | |")
            print(rows[-1], file=sys.stderr, flush=True)
    text = (f"{server.version}, {args.rows:,} rows of 20 FLOAT columns, default server settings; best "
            f"of {args.repeat}; p = P(class 1) read as `SELECT sum(p)`. Command: "
            f"`python benchmarks/bench_mariadb.py`.\n\n" + "\n".join(rows))
    from docsection import publish
    publish("SQL in MariaDB", text, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
