"""The SQL engines the tests run generated queries in: one class each, ``ENGINES`` lists them.

    from engines import engine
    e = engine("duckdb")
    conn = e.connection()                      # shared by the test process
    e.load(conn, "data", [("x", "numeric"), ("c", "text")], rows)
    columns, rows = e.fetch(conn, "SELECT ...")

A new engine is a class (here, or in a module of its own imported here) and one line in
``ENGINES``; every exactness test of the SQL target then runs in it. Engines that need a server
or a JVM start it on first use, once per test process, and stop it at exit (a SIGTERM too,
test_test_servers.py); when one cannot
start, ``connection()`` skips the test, which under CI (``CI`` set) is a failure (conftest.py).
"""

from __future__ import annotations

import atexit
import os
import signal
import sqlite3
import threading

from rulegen.targets.sql.dialects import DIALECTS


def _serve(server, what: str):
    """Start a private server for the test process, stopped at exit; its connection
    arguments. Skips when it cannot start (under CI a skip fails, conftest.py)."""
    import pytest

    why = server.why_unavailable()
    if why:
        pytest.skip(f"{what} tests cannot run: {why}")
    _exit_hooks_on_sigterm()
    args = server.start()
    atexit.register(server.stop)
    return args


def _exit_hooks_on_sigterm() -> None:
    """Let a SIGTERM (a CI timeout, ``kill``) run the atexit hooks that stop this process's
    servers before it ends as SIGTERM would: its default action skips them and leaves the
    servers running with their temporary folders."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        return  # (signal handlers belong to the main thread; keep anybody else's)

    def stop_then_end(signum, frame):
        signal.signal(signum, signal.SIG_DFL)
        try:
            atexit._run_exitfuncs()
        finally:
            os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, stop_then_end)


class Engine:
    name = ""  # the SQL dialect it runs
    types = {"numeric": "DOUBLE", "integer": "BIGINT", "text": "VARCHAR"}
    has_nan = True  # whether a numeric column keeps NaN (else the engine stores NULL)
    # whether a numeric column holds +-inf; where it cannot (MariaDB) run_sql loads the largest
    # finite double in its place and compares with the evaluator on those values
    has_infinity = True
    prints_negative_zero = True  # whether the client shows a -0.0 result as -0.0
    # The exp the engine computes, vectorised over a float64 array; None: the C library's, as
    # the evaluator's (run_sql.expected compares with the evaluator using this one)
    exp = None
    # The type a query's double output column reports (result_types); None: not typed
    double_result: str | None = "DOUBLE"
    _shared = None

    def connect(self, dsn: str | None = None):
        """A new connection (DB-API for the built-in engines)."""
        raise NotImplementedError

    def connection(self):
        """The connection the test process shares."""
        if self._shared is None:
            type(self)._shared = self.connect()
        return self._shared

    def quote(self, name: str) -> str:
        return DIALECTS[self.name].quote(name)

    def load(self, conn, table: str, columns: list[tuple[str, str]], rows: list[list]) -> None:
        """(Re)create ``table`` with ``columns`` (name, "numeric" | "integer" | "text") and
        insert ``rows`` (None for NULL)."""
        cols = ", ".join(f"{self.quote(n)} {self.types[kind]}" for n, kind in columns)
        cur = conn.cursor()
        cur.execute(f"DROP TABLE IF EXISTS {self.quote(table)}")
        cur.execute(f"CREATE TABLE {self.quote(table)} ({cols})")
        self.insert(conn, table, columns, rows)

    def insert(self, conn, table: str, columns, rows) -> None:
        if rows:
            marks = ", ".join(["?"] * len(columns))
            conn.cursor().executemany(f"INSERT INTO {self.quote(table)} VALUES ({marks})", rows)

    def fetch(self, conn, sql: str) -> tuple[list[str], list[tuple]]:
        cur = conn.cursor()
        cur.execute(sql)
        rows = [tuple(r) for r in cur.fetchall()]
        return [d[0] for d in cur.description], rows

    def result_types(self, conn, sql: str) -> dict[str, str]:
        """Each output column's type, as the engine's client reports it."""
        cur = conn.cursor()
        cur.execute(sql)
        cur.fetchall()
        return {d[0]: str(d[1]) for d in cur.description}


class SQLite(Engine):
    name = "sqlite"
    types = {"numeric": "REAL", "integer": "INTEGER", "text": "TEXT"}
    has_nan = False
    double_result = None

    def connect(self, dsn=None):
        return sqlite3.connect(":memory:")

    def connection(self):
        return self.connect()  # in memory: a fresh database each time costs nothing

    def insert(self, conn, table, columns, rows):
        super().insert(conn, table, columns, rows)
        conn.commit()


class DuckDB(Engine):
    name = "duckdb"

    def connect(self, dsn=None):
        import duckdb
        return duckdb.connect()

    def connection(self):
        return self.connect()

    def insert(self, conn, table, columns, rows):
        # one statement with a list per column (executemany runs one INSERT per row)
        types = [self.types[kind] for _, kind in columns]
        cols = [list(c) for c in zip(*rows)] if rows else [[] for _ in types]
        unnest = ", ".join(f"UNNEST(${i + 1}::{t}[])" for i, t in enumerate(types))
        conn.cursor().execute(f"INSERT INTO {self.quote(table)} SELECT {unnest}", cols)


class PostgreSQL(Engine):
    name = "postgres"
    types = {"numeric": "double precision", "integer": "bigint", "text": "text"}
    double_result = "701"  # float8's type oid

    def connect(self, dsn=None):
        import psycopg
        if dsn is None:
            return self.connection()
        return psycopg.connect(dsn, autocommit=True)

    def connection(self):
        if PostgreSQL._shared is None:
            from pgserver import PgServer

            conn = self.connect(_serve(PgServer(), "PostgreSQL"))
            atexit.register(conn.close)  # before the server stops (atexit runs in reverse)
            PostgreSQL._shared = conn
        return PostgreSQL._shared

    def insert(self, conn, table, columns, rows):
        # COPY, not executemany: psycopg prepares a repeated INSERT, and the prepared
        # statement keeps the parameter types of an earlier table with the same name
        with conn.cursor().copy(f"COPY {self.quote(table)} FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


class MariaDB(Engine):
    name = "mariadb"
    # utf8mb4 with the server's default collation (utf8mb4_general_ci: case- and
    # accent-insensitive): the query must compare labels exactly on its own
    types = {"numeric": "DOUBLE", "integer": "BIGINT", "text": "TEXT CHARACTER SET utf8mb4"}
    has_nan = False
    has_infinity = False
    prints_negative_zero = False
    double_result = "5"  # pymysql's FIELD_TYPE.DOUBLE
    _args: dict | None = None

    def connect(self, dsn=None):
        import pymysql
        if dsn is None and MariaDB._args is None:
            self.connection()
        return pymysql.connect(**(dsn or MariaDB._args))

    def connection(self):
        if MariaDB._shared is None:
            from mariadbserver import MariaDBServer

            MariaDB._args = _serve(MariaDBServer(), "MariaDB")
            conn = self.connect(MariaDB._args)
            atexit.register(conn.close)  # before the server stops (atexit runs in reverse)
            MariaDB._shared = conn
        return MariaDB._shared

    def insert(self, conn, table, columns, rows):
        # pymysql's executemany sends one multi-row INSERT per megabyte of rows
        if rows:
            marks = ", ".join(["%s"] * len(columns))
            conn.cursor().executemany(f"INSERT INTO {self.quote(table)} VALUES ({marks})", rows)


class ClickHouse(Engine):
    """chDB: ClickHouse in process, one session per test process. Columns are Nullable, so a
    numeric one keeps both NULL and NaN. Rows go in and out as Arrow (exact doubles, one
    INSERT). A big query carries the settings it needs in its own SETTINGS clause."""

    name = "clickhouse"
    types = {"numeric": "Nullable(Float64)", "integer": "Nullable(Int64)", "text": "Nullable(String)"}
    double_result = "Float64"
    _arrow = {"numeric": "float64", "integer": "int64", "text": "string"}

    @staticmethod
    def exp(a):
        """ClickHouse's own exp (not the C library's: 1 ulp apart on about 1 input in
        1,000, rulegen/targets/sql/dialects/clickhouse.py), computed by the engine."""
        import numpy as np

        a = np.asarray(a, dtype=np.float64)
        e = ENGINES["clickhouse"]
        conn = e.connection()
        e.load(conn, "_exp_in", [("x", "numeric")], [[v] for v in a.ravel().tolist()])
        _, rows = e.fetch(conn, 'SELECT exp("x") FROM "_exp_in"')
        return np.array([r[0] for r in rows], dtype=np.float64).reshape(a.shape)

    def connect(self, dsn=None):
        from chdb import session

        conn = session.Session()
        # ClickHouse compiles an expression to native code the 4th time it runs it, which takes
        # seconds to a minute for a big query; tests run interpreted, and
        # test_clickhouse.py::test_compiled_expressions_are_exact checks the compiled code
        conn.query("SET compile_expressions = 0")
        return conn

    def load(self, conn, table, columns, rows):
        cols = ", ".join(f"{self.quote(n)} {self.types[kind]}" for n, kind in columns)
        conn.query(f"DROP TABLE IF EXISTS {self.quote(table)}")
        conn.query(f"CREATE TABLE {self.quote(table)} ({cols}) ENGINE = Memory")
        self.insert(conn, table, columns, rows)

    def insert(self, conn, table, columns, rows):
        import io

        import pyarrow as pa

        if not rows:
            return
        data = [pa.array(list(c), type=self._arrow[kind], from_pandas=False)
                for c, (_, kind) in zip(zip(*rows), columns)]
        # ClickHouse matches Arrow columns to the table's by name
        batch = pa.table(data, names=[n for n, _ in columns])
        sink = io.BytesIO()
        with pa.ipc.new_stream(sink, batch.schema) as w:
            w.write_table(batch)
        names = ", ".join(self.quote(n) for n, _ in columns)
        with conn.send_insert(f"INSERT INTO {self.quote(table)} ({names})", "ArrowStream") as ins:
            ins.append(sink.getvalue())
            ins.finish()

    def fetch(self, conn, sql):
        t = conn.query(sql, "ArrowTable")
        return list(t.schema.names), list(zip(*(c.to_pylist() for c in t.columns)))

    def result_types(self, conn, sql):
        body = sql.strip().rstrip(";")
        t = conn.query(f"DESCRIBE TABLE ({body})", "ArrowTable")
        return dict(zip(t.column("name").to_pylist(), t.column("type").to_pylist()))


class Spark(Engine):
    """One local SparkSession (two cores) for the test process; tables are temporary views.

    Queries run interpreted (no whole-stage or expression code generation): Spark compiles
    generated Java for every query, which dominates on test-sized tables (100 trees, 200 rows:
    11.5 s compiled, 1.8 s interpreted; 1,000 trees: minutes). Spark checks that the two modes
    agree; test_spark.py::test_code_generation_is_exact runs models compiled."""
    CODEGEN = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
    name = "spark"
    types = {"numeric": "double", "integer": "bigint", "text": "string"}
    double_result = "double"
    memory = "2g"  # the driver's heap; benchmarks/bench_spark.py --memory sets more

    def connect(self, dsn=None):
        return self.connection()

    def connection(self):
        if Spark._shared is None:
            from pyspark.sql import SparkSession

            spark = (SparkSession.builder.master("local[2]").appName("rulegen-tests")
                     .config("spark.ui.enabled", "false")
                     .config("spark.sql.shuffle.partitions", "2")
                     .config("spark.driver.memory", self.memory)
                     .getOrCreate())
            spark.sparkContext.setLogLevel("OFF")
            for k, v in self.CODEGEN.items():
                spark.conf.set(k, v)
            atexit.register(spark.stop)
            Spark._shared = spark
        return Spark._shared

    def load(self, conn, table, columns, rows):
        from pyspark.sql import types as T

        kinds = {"numeric": T.DoubleType(), "integer": T.LongType(), "text": T.StringType()}
        schema = T.StructType([T.StructField(n, kinds[k], True) for n, k in columns])
        numeric = [k == "numeric" for _, k in columns]
        rows = [[float(v) if num and v is not None else v for v, num in zip(r, numeric)] for r in rows]
        conn.createDataFrame(rows, schema).createOrReplaceTempView(table)

    def fetch(self, conn, sql):
        df = conn.sql(sql.strip().rstrip(";"))
        return list(df.columns), [tuple(r) for r in df.collect()]

    def result_types(self, conn, sql):
        return dict(conn.sql(sql.strip().rstrip(";")).dtypes)

    def exp(self, a):
        """Spark's own exp (Java's StrictMath.exp) of each element, in one query."""
        import numpy as np
        from pyspark.sql import types as T

        a = np.asarray(a, dtype=np.float64)
        values, back = np.unique(a.ravel(), return_inverse=True)
        if not len(values):
            return a.copy()
        spark = self.connection()
        schema = T.StructType([T.StructField("i", T.LongType()), T.StructField("x", T.DoubleType())])
        df = spark.createDataFrame([(i, float(v)) for i, v in enumerate(values)], schema)
        got = dict(df.selectExpr("i", "exp(x)").collect())
        out = np.array([got[i] for i in range(len(values))], dtype=np.float64)
        return out[back].reshape(a.shape)


ENGINES: dict[str, Engine] = {e.name: e for e in (SQLite(), DuckDB(), PostgreSQL(), MariaDB(), ClickHouse())}
# Spark parses and plans each query for a second or more (the 1,000-tree one for a minute):
# the whole matrix would take it about 45 minutes, so tests/test_spark.py runs a selection
SLOW: dict[str, Engine] = {e.name: e for e in (Spark(),)}


def engine(name: str) -> Engine:
    try:
        return ENGINES[name] if name in ENGINES else SLOW[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}") from None
