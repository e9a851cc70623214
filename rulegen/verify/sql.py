"""Run generated SQL in a real engine on rows, and read every output column back.

`rulegen verify --target sql` loads the rows into a temporary table of an in-memory database
(or of the user's database file or PostgreSQL server, never touching their tables), runs the query the SQL target
writes for that table, and reads raw scores, probabilities or values and labels back through
the engine's ordinary Python client. Missing values go in as NULL.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.errors import RulegenError
from rulegen.ir import evaluate
from rulegen.ir.libm import exp_rounded_array
from rulegen.ir.nodes import Model
from rulegen.verify.python import python_rows

ENGINES = ("sqlite", "duckdb", "postgres")
_TYPES = {"sqlite": {"numeric": "REAL", "integer": "INTEGER", "text": "TEXT"},
          "duckdb": {"numeric": "DOUBLE", "integer": "BIGINT", "text": "VARCHAR"},
          "postgres": {"numeric": "double precision", "integer": "bigint", "text": "text"}}
TABLE = "rulegen_verify_rows"


def column_kind(feature) -> str:
    """The column a feature is loaded into: numeric, or categories as integers or text."""
    if feature.kind == "numeric":
        return "numeric"
    ints = all(isinstance(c, int) and not isinstance(c, bool) for c in feature.categories)
    return "integer" if ints else "text"


def row_column(model: Model) -> str:
    """Name of the row-number column: "_row", lengthened until no feature has it."""
    names = {f.name.lower() for f in model.features}
    name = "_row"
    while name in names:
        name += "_"
    return name


def connect(dialect: str, database: str | None):
    """A new connection: SQLite or DuckDB to a file (default: in memory), PostgreSQL to a
    connection string (libpq's: "dbname=... host=..." or "postgresql://...")."""
    if dialect == "sqlite":
        import sqlite3

        return sqlite3.connect(database or ":memory:")
    module = {"duckdb": "duckdb", "postgres": "psycopg"}[dialect]
    try:
        lib = __import__(module)
    except ImportError:
        raise RulegenError(f"--dialect {dialect} needs the {module} package: pip install {module}") from None
    if dialect == "duckdb":
        return lib.connect(database or ":memory:")
    if not database:
        raise RulegenError("--dialect postgres needs --database, a connection string such as "
                           "'dbname=mydb host=localhost'")
    try:
        return lib.connect(database, autocommit=True)
    except lib.Error as e:
        raise RulegenError(f"cannot connect to PostgreSQL ({database!r}): {' '.join(str(e).split())}") from None


def run_sql(model: Model, X: np.ndarray, dialect: str, database: str | None = None) -> dict:
    """The query's raw scores, outputs (probabilities or values) and class indices for ``X``."""
    from rulegen.targets.sql import SqlTarget
    from rulegen.targets.sql.dialects import DIALECTS

    if dialect not in ENGINES:
        raise RulegenError(f"verify runs SQL in {', '.join(ENGINES)}; not {dialect!r}")
    d = DIALECTS[dialect]
    rid = row_column(model)
    (sql,) = SqlTarget().generate(model, dialect=dialect, table=TABLE, raw=True, passthrough=[rid]).values()
    conn = connect(dialect, database)
    try:
        types = _TYPES[dialect]
        cols = [(rid, "integer")] + [(f.name, column_kind(f)) for f in model.features]
        cur = conn.cursor()
        # a new connection has no temporary tables; one of this name hides any user table
        cur.execute(f"CREATE TEMP TABLE {d.quote(TABLE)} ({', '.join(f'{d.quote(n)} {types[k]}' for n, k in cols)})")
        rows = [[i] + r for i, r in enumerate(python_rows(model, X))]
        if dialect == "postgres":  # COPY: psycopg would prepare a repeated INSERT
            with cur.copy(f"COPY {d.quote(TABLE)} FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            cur.executemany(f"INSERT INTO {d.quote(TABLE)} VALUES ({', '.join(['?'] * len(cols))})", rows)
        cur.execute(sql)
        names = [c[0] for c in cur.description]
        result = sorted((tuple(r) for r in cur.fetchall()), key=lambda r: r[names.index(d.column_name(rid))])
    finally:
        conn.close()
    if len(result) != len(X):
        raise RulegenError(f"{len(X)} rows in, {len(result)} rows out of the query")

    def floats(heads):
        idx = [names.index(d.column_name(h)) for h in heads]
        return np.array([[math.nan if r[i] is None else float(r[i]) for i in idx] for r in result])

    t = model.target
    got = {"raw": floats([f"raw_{k}" for k in range(model.n_raw)])}
    if t.task == "classification":
        got["out"] = floats([f"prob_{c}" for c in t.classes])
        labels = [r[names.index(d.column_name("prediction"))] for r in result]
        got["class"] = np.array([t.classes.index(v) if v in t.classes else -1 for v in labels])
    else:
        got["out"] = floats(["prediction"] if model.n_raw == 1 else [f"prediction_{k}" for k in range(model.n_raw)])
    return got


def expected_outputs(model: Model, raw: np.ndarray) -> np.ndarray:
    """The evaluator's outputs, as SQL computes a float32 link: SQL has no float32 ``expf``,
    so an ensemble's float32 link takes exp rounded to float32 (docs/IR.md)."""
    from rulegen.targets.sql import rounded_exp

    if rounded_exp(model):
        return evaluate.apply_link_f32(model.link, raw, expf=exp_rounded_array)
    return evaluate.outputs_of(model, raw)
