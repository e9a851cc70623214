"""Generated SQL in the real engines, side by side with the peers: rulegen's query against a
nested-CASE reference (one nested CASE per tree returning the leaf value, the same exact
double thresholds, no missing-value handling: the fastest plain shape) and orbital, on
DuckDB (one thread), SQLite and PostgreSQL (one worker, JIT off and on).

    python benchmarks/bench_sql.py [--quick] [--write]

Models are fitted here on synthetic binary data (20 float32 features, four of them
small integers, as in the shared bench): a scikit-learn tree of depth 8, a 10-tree forest
of depth 8 and a 500-round XGBoost model of depth 6. Each query is read the way a caller
reads one column: ``SELECT sum(p) FROM (<query>)`` with p the probability of class 1 (the
work of computing p, without the client's fetch); "every output column" reads the class
and every probability of rulegen's whole query, beside the reference's probability of
every class (its ratio is to that: the least any exact query computing them does). Every result is checked first, bit for bit
on every row (``exact``): rulegen's against its evaluator, the peers' against the
library's predict_proba (the evaluator equals scikit-learn's and XGBoost's bit for bit; SQL
has no float32 expf, so an XGBoost query is checked against the evaluator with exp rounded to
float32, docs/IMPORTERS.md). ``first row s`` is planning plus the first row
(``LIMIT 1``), ``first run s`` planning plus a whole run. ``B/node``: SQL bytes per node.

orbital is measured when it is installed (``pip install orbital``). PostgreSQL needs its
server binaries (tests/pgserver.py finds them).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def make_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Correlated gaussians, heavy tails and small integers (ties at thresholds)."""
    rng = np.random.default_rng(seed)
    mix = np.random.default_rng(7).standard_normal((12, 12)) * 0.35 + np.eye(12)
    g = rng.standard_normal((n, 12)) @ mix
    heavy = rng.standard_normal((n, 4)) / np.sqrt(rng.random((n, 4)) * 0.9 + 0.1)
    ints = rng.integers(0, 10, size=(n, 4)).astype(np.float64)
    X = np.hstack([g, heavy, ints]).astype(np.float32)
    s = (1.5 * np.sin(X[:, 0] * 1.3) + X[:, 1] * X[:, 2] * 0.7 + np.where(X[:, 3] > 0.3, 1.2, -0.4)
         + 0.8 * np.tanh(X[:, 4] - X[:, 5]) + 0.3 * X[:, 6] ** 2 - 0.5 * np.abs(X[:, 7])
         + 0.1 * X[:, 18] * X[:, 8] - 0.2 * (X[:, 17] > 6) + rng.standard_normal(n) * 0.8)
    return X, (s > np.median(s)).astype(int)


COLS = [f"f{i}" for i in range(20)]


def engine_bench_args(doc: str, quick_help: str, threads: bool = False, memory: str = ""):
    """The command line of a one-engine benchmark (bench_clickhouse, bench_spark): --quick
    (100k rows), --rows, --repeat, --only, --write, and --threads or --memory (default
    ``memory``) where the engine takes it."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--rows", type=int, default=1_000_000)
    if threads:
        ap.add_argument("--threads", type=int, default=1)
    if memory:
        ap.add_argument("--memory", default=memory, help="the engine's memory (default %(default)s)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--only", default="", help="the models whose name contains this text")
    ap.add_argument("--write", action="store_true", help="put the table into docs/BENCHMARKS.md")
    args = ap.parse_args()
    if args.quick:
        args.rows = 100_000
    return args


def fit_models(quick: bool, rounds: int = 500) -> dict:
    """A depth-8 tree, a 10-tree forest and an XGBoost model of ``rounds`` (50 when quick)."""
    import xgboost as xgb
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    X, y = make_data(20_000 if quick else 100_000, 1)
    rounds = 50 if quick else rounds
    return {
        "tree, depth 8": DecisionTreeClassifier(max_depth=8, random_state=0).fit(X, y),
        "forest 10 x depth 8": RandomForestClassifier(10, max_depth=8, random_state=0).fit(X, y),
        f"XGBoost {rounds} x depth 6": xgb.XGBClassifier(
            n_estimators=rounds, max_depth=6, learning_rate=0.1, tree_method="hist",
            base_score=0.5, n_jobs=1, random_state=0).fit(X, y),
    }


def to_ir(est):
    from rulegen.importers.sklearn import from_sklearn
    from rulegen.importers.xgboost import from_booster
    import dataclasses

    if hasattr(est, "get_booster"):
        m = from_booster(est.get_booster())
    else:
        m = from_sklearn(est)
    return dataclasses.replace(m, features=tuple(dataclasses.replace(f, name=c)
                                                 for f, c in zip(m.features, COLS)))


def sql_oracle(model, X: np.ndarray) -> np.ndarray:
    """P(class 1) as rulegen's SQL computes it: the evaluator's, with exp rounded to float32
    where the query has no expf (rulegen.targets.sql.rounded_exp)."""
    from rulegen.ir import evaluate
    from rulegen.ir.libm import exp_rounded_array
    from rulegen.targets.sql import rounded_exp

    raw = evaluate.raw_scores(model, X)
    if rounded_exp(model):
        out = evaluate.apply_link_f32(model.link, raw, expf=exp_rounded_array)
    else:
        out = evaluate.outputs_of(model, raw)
    return evaluate.proba_of(model, out)[:, 1].astype(np.float64)


# --- the SQL under test -------------------------------------------------------------------------


def rulegen_sql(model, dialect: str) -> str:
    from rulegen.targets.sql import SqlTarget

    sql = SqlTarget().generate(model, dialect=dialect, table="t", comments=False)["model.sql"]
    return f'SELECT q."prob_1" AS p FROM ({sql.strip().rstrip(";")}) AS q'


def nested_case_sql(est, dialect: str, classes=(1,)) -> str | None:
    """The reference shape, written here from scikit-learn's arrays: one nested CASE per
    tree (x <= t THEN left ELSE right), leaf P(class k), the trees summed in one SELECT;
    one column ``p`` for class 1, or ``p0, p1, ...`` for ``classes``."""
    from rulegen.targets.sql.dialects import DIALECTS

    if hasattr(est, "get_booster"):
        return None
    num, quote = DIALECTS[dialect].num, DIALECTS[dialect].quote
    cols = []
    for k in classes:
        parts = []
        for e in getattr(est, "estimators_", [est]):
            t = e.tree_
            out, stack = [], [0]
            while stack:  # pre-order with END markers, no recursion
                i = stack.pop()
                if isinstance(i, str):
                    out.append(i)
                elif t.children_left[i] == -1:
                    v = t.value[i, 0]
                    out.append(num(float(v[k] / v.sum())))
                else:
                    out.append(f"CASE WHEN {quote(COLS[t.feature[i]])} <= {num(float(t.threshold[i]))} THEN ")
                    stack += [" END", int(t.children_right[i]), " ELSE ", int(t.children_left[i])]
            parts.append("".join(out))
        expr = " + ".join(f"({p})" for p in parts)
        if len(parts) > 1:
            expr = f"({expr}) / {num(float(len(parts)))}"
        cols.append(f"{expr} AS p" + (str(k) if classes != (1,) else ""))
    return f'SELECT {", ".join(cols)} FROM {quote("t")}'


def nested_case_ir(model, dialect: str, k: int | None = None) -> str:
    """The reference from the IR's own trees (numeric splits, the missing rule ignored): P(class
    k) for a forest (the mean of the leaf probabilities; k = 1 unless given) or a boosted binary
    model (the sigmoid of the margins summed in double)."""
    from rulegen.codegen.lower import float64_bound
    from rulegen.ir.nodes import Leaf, NumericTest
    from rulegen.targets.sql.dialects import DIALECTS

    d = DIALECTS[dialect]
    k = (1 if model.n_raw == 2 else 0) if k is None else k
    parts = []
    for tree in model.trees:
        out, stack = [], [0]
        while stack:  # pre-order with END markers, no recursion
            i = stack.pop()
            if isinstance(i, str):
                out.append(i)
                continue
            node = tree.nodes[i]
            if isinstance(node, Leaf):
                out.append(d.num(node.value[k] * tree.weight))
                continue
            assert isinstance(node.test, NumericTest)
            op, bound = float64_bound(node.test.op, node.test.threshold, node.test.dtype)
            yes, no = node.children
            out.append(f"CASE WHEN {d.quote(COLS[node.test.feature])} {op} {d.num(bound)} THEN ")
            stack += [" END", no, " ELSE ", yes]
        parts.append("".join(out))
    expr = " + ".join(f"({p})" for p in parts)
    if model.link == "sigmoid":
        expr = f"{d.num(1.0)} / ({d.num(1.0)} + exp(-({d.num(model.base_score[0])} + {expr})))"
    elif len(parts) > 1:
        expr = f"({expr}) / {d.num(float(len(parts)))}"
    return f"SELECT {expr} AS p FROM {d.quote('t')}"


def orbital_sql(est, dialect: str) -> str | None:
    try:
        import orbital
        from sklearn.pipeline import Pipeline
    except ImportError:
        return None
    if hasattr(est, "get_booster"):
        return None
    feats = {c: orbital.types.DoubleColumnType() for c in COLS}
    op = orbital.parse_pipeline(Pipeline([("model", est)]), features=feats)
    sql = orbital.export_sql("t", op, dialect=dialect)
    return f'SELECT q."output_probability.1" AS p FROM ({sql}) AS q'


# --- engines ---------------------------------------------------------------------------------


class Engine:
    def __init__(self, name: str, X: np.ndarray):
        self.name, self.n = name, len(X)

    def run(self, sql: str) -> np.ndarray:
        raise NotImplementedError

    rows = 0  # rows in its table; n: rows a measurement reads

    def sum_time(self, sql: str, repeat: int) -> float:
        best = float("inf")
        for _ in range(repeat):
            t = time.perf_counter()
            self.scalar(f"SELECT sum(p) FROM ({sql}) AS s")
            best = min(best, time.perf_counter() - t)
        return best


class DuckDB(Engine):
    def __init__(self, X):
        import duckdb

        super().__init__("DuckDB (1 thread)", X)
        self.con = duckdb.connect()
        self.con.execute("SET threads = 1")
        self.con.execute("CREATE TABLE t (" + ", ".join(f"{c} FLOAT" for c in COLS) + ")")
        self.con.execute("INSERT INTO t SELECT " + ", ".join(f"UNNEST(${i + 1}::FLOAT[])" for i in range(20)),
                         [X[:, i].tolist() for i in range(20)])

    def run(self, sql):
        return np.asarray(self.con.execute(sql).fetchnumpy()["p"], dtype=np.float64)

    def scalar(self, sql):
        return self.con.execute(sql).fetchone()[0]


class SQLite(Engine):
    def __init__(self, X):
        super().__init__(f"SQLite {sqlite3.sqlite_version}", X)
        self.con = sqlite3.connect(":memory:")
        self.con.execute("CREATE TABLE t (" + ", ".join(f"{c} REAL" for c in COLS) + ")")
        self.con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * 20)})", X.astype(np.float64).tolist())

    def run(self, sql):
        return np.array([r[0] for r in self.con.execute(sql)], dtype=np.float64)

    def scalar(self, sql):
        return self.con.execute(sql).fetchone()[0]


class Postgres(Engine):
    def __init__(self, X, server):
        import psycopg

        super().__init__("PostgreSQL", X)
        self.dsn = server
        self.con = psycopg.connect(server, autocommit=True)
        self.con.execute("CREATE TABLE t (" + ", ".join(f"{c} real" for c in COLS) + ")")
        with self.con.cursor().copy("COPY t FROM STDIN") as cp:
            for row in X.tolist():
                cp.write_row(row)
        self.con.execute("VACUUM ANALYZE t")
        self.jit("on")

    def jit(self, mode: str):
        self.con.execute("RESET ALL")
        self.con.execute("SET max_parallel_workers_per_gather = 0")  # one worker, as the peers
        self.con.execute(f"SET jit = {mode}")
        self.name = f"PostgreSQL (jit {mode})"

    def run(self, sql):
        return np.array([r[0] for r in self.con.execute(sql).fetchall()], dtype=np.float64)

    def scalar(self, sql):
        return self.con.execute(sql).fetchone()[0]


# --- measuring -------------------------------------------------------------------------------


def measure(engine: Engine, sql: str, want: np.ndarray, repeat: int) -> dict:
    t = time.perf_counter()
    engine.scalar(f"SELECT p FROM ({sql}) AS s LIMIT 1")
    first_row = time.perf_counter() - t
    t = time.perf_counter()
    got = engine.run(sql)
    first = time.perf_counter() - t
    exact = got.shape == want.shape and np.array_equal(got, want)
    diff = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("nan")
    best = engine.sum_time(sql, repeat if first < 30 else 1)
    return {"ns": best / engine.n * 1e9, "first": first, "row": first_row, "exact": exact, "diff": diff}


def all_outputs_ns(engine: Engine, model, dialect: str, repeat: int, est=None) -> float:
    """The whole query as rulegen writes it, every output column read; with ``est``, the
    reference's probability of every class instead."""
    from rulegen.targets.sql import SqlTarget

    classes = model.target.classes
    if est is None:
        sql = SqlTarget().generate(model, dialect=dialect, table="t", comments=False)["model.sql"]
        read = ", ".join(f'max(q."{c}")' for c in ["prediction"] + [f"prob_{k}" for k in classes])
    else:
        sql = nested_case_sql(est, dialect, tuple(range(len(classes))))
        read = ", ".join(f'max(q."p{k}")' for k in range(len(classes)))
    sql = sql.strip().rstrip(";")
    if engine.n != engine.rows:
        sql = sql.replace('FROM "t"', f'FROM (SELECT * FROM "t" LIMIT {engine.n}) AS "t"')
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        engine.scalar(f"SELECT {read} FROM ({sql}) AS q")
        best = min(best, time.perf_counter() - t)
    return best / engine.n * 1e9


def postgres_plan_memory(dsn: str, model) -> tuple[float, float]:
    """(seconds, peak MB of the server process) to plan the model's query on a fresh
    connection (EXPLAIN: planning only)."""
    import psycopg

    sql = rulegen_sql(model, "postgres")
    with psycopg.connect(dsn, autocommit=True) as con:
        pid = con.execute("SELECT pg_backend_pid()").fetchone()[0]
        t = time.perf_counter()
        con.execute("EXPLAIN " + sql).fetchall()
        seconds = time.perf_counter() - t
        status = Path(f"/proc/{pid}/status").read_text()
    peak = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")))
    return seconds, peak / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small data and 50 boosting rounds")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--duckdb-rows", type=int, default=1_000_000)
    ap.add_argument("--rows", type=int, default=100_000, help="SQLite and PostgreSQL rows")
    ap.add_argument("--write", action="store_true", help="put the table into docs/BENCHMARKS.md")
    args = ap.parse_args()
    if args.quick:
        args.duckdb_rows, args.rows = 100_000, 20_000
    models = fit_models(args.quick)
    Xd, _ = make_data(args.duckdb_rows, 2)
    engines = [("duckdb", DuckDB(Xd)), ("sqlite", SQLite(Xd[:args.rows]))]
    from pgserver import PgServer
    server = PgServer()
    dsn = None
    if server.why_unavailable() is None:
        dsn = server.start()
        engines.append(("postgres", Postgres(Xd[:args.rows], dsn)))
    for _, e in engines:
        e.rows = e.n
    rows = ["| model | engine | implementation | ns/row | / nested CASE | first row s | first run s | SQL KB | B/node | exact |",
            "|---|---|---|---|---|---|---|---|---|---|"]

    def add(*cells):
        rows.append("| " + " | ".join(str(c) for c in cells) + " |")
        print(rows[-1], file=sys.stderr, flush=True)

    notes = []
    try:
        for mname, est in models.items():
            model = to_ir(est)
            nodes = sum(len(t.nodes) for t in model.trees)
            boosted = hasattr(est, "get_booster")
            for dialect, engine in engines:
                engine.n = args.rows if boosted else engine.rows  # minutes per 1M-row query
                X = Xd[:engine.n]
                library = est.predict_proba(X)[:, 1].astype(np.float64)
                oracle = sql_oracle(model, X.astype(np.float64))
                sqls = {"nested CASE": nested_case_sql(est, dialect), "rulegen": rulegen_sql(model, dialect),
                        "orbital": orbital_sql(est, dialect)}
                for mode in (["off", "on"] if dialect == "postgres" else [None]):
                    if mode:
                        engine.jit(mode)
                    ref = None
                    for impl, sql in sqls.items():
                        if sql is None:
                            continue
                        if engine.n != engine.rows:
                            sql = sql.replace('FROM "t"', f'FROM (SELECT * FROM "t" LIMIT {engine.n}) AS "t"')
                        want = oracle if impl == "rulegen" else library
                        try:
                            r = measure(engine, sql, want, args.repeat)
                        except Exception as e:  # noqa: BLE001 - a peer's failure is a result
                            add(mname, engine.name, impl, f"error: {str(e).splitlines()[0][:70]}", "", "", "", "", "", "")
                            continue
                        ref = r["ns"] if impl == "nested CASE" else ref
                        size = len(sql.encode())
                        add(mname, engine.name, impl, f"{r['ns']:,.0f}", f"{r['ns'] / ref:.2f}" if ref else "-",
                            f"{r['row']:.2f}", f"{r['first']:.2f}", f"{size / 1024:,.0f}", f"{size / nodes:.0f}",
                            "yes" if r["exact"] else f"no ({r['diff']:.1e})")
                    ref_all = None if boosted else all_outputs_ns(engine, model, dialect, args.repeat, est)
                    if ref_all:
                        add(mname, engine.name, "nested CASE, every class's probability", f"{ref_all:,.0f}",
                            "1.00", "", "", "", "", "")
                    ns = all_outputs_ns(engine, model, dialect, 1 if boosted else args.repeat)
                    add(mname, engine.name, "rulegen, every output column", f"{ns:,.0f}",
                        f"{ns / ref_all:.2f}" if ref_all else "-", "", "", "", "", "")
        if dsn:
            import xgboost as xgb

            big = xgb.XGBClassifier(n_estimators=1000, max_depth=6, learning_rate=0.1, tree_method="hist",
                                    base_score=0.5, n_jobs=1, random_state=0)
            Xb, yb = make_data(20_000, 3)
            model = to_ir(big.fit(Xb, yb))
            seconds, peak = postgres_plan_memory(dsn, model)
            notes.append(f"PostgreSQL plans the 1,000-tree XGBoost model's query "
                         f"({sum(len(t.nodes) for t in model.trees):,} nodes) in {seconds:.1f} s "
                         f"with a server process peak of {peak:,.0f} MB.")
            print(notes[-1], file=sys.stderr, flush=True)
    finally:
        if dsn:
            server.stop()
    text = (f"DuckDB {args.duckdb_rows:,} rows (XGBoost: {args.rows:,}), SQLite and PostgreSQL "
            f"{args.rows:,} rows; best of {args.repeat}; p = P(class 1) read as `SELECT sum(p)`. "
            f"Command: `python benchmarks/bench_sql.py{' --quick' if args.quick else ''}`.\n\n"
            + "\n".join(rows) + ("\n\n" + "\n".join(notes) if notes else ""))
    from docsection import publish
    publish("SQL in the engines beside the peers", text, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
