"""Run generated SQL in a real engine and read the output columns back as numpy arrays.

Reusable by any test that produces a model (targets, learners, importers)::

    from run_sql import check_sql
    check_sql(model, X, "duckdb")            # generate, load X, run, compare with the evaluator

or step by step::

    sql = SqlTarget().generate(model, dialect="sqlite", raw=True)["model.sql"]
    res = run_sql(sql, model, labels_for(model, X), "sqlite")
    res.prediction, res.proba, res.raw, res.values

Rows are what SQL tables hold (``labels_for``): labels for categorical features, None for
missing. ``missing="nan"`` stores missing numeric values as NaN instead of NULL, and
``missing="mixed"`` every other row's, in engines that keep NaN (SQLite stores NaN as NULL).
An engine without infinity (MariaDB) gets the largest finite double in place of +-inf, and the
evaluator is compared on the same values (``storable``).

The table gets one more column, ``row_column(model)``, numbering the rows. When the query
returns it (``check_sql`` generates with ``passthrough=[row_column(model)]``) the output is
sorted by it; PostgreSQL does not return a plain scan in insertion order (a row can land in
free space of an earlier page). Either way ``run_sql`` then checks that the returned feature
columns equal the rows loaded, in order.

Each engine is a class in tests/engines.py; without ``conn`` the engine's shared connection is
used (PostgreSQL's server starts on first use).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np

from engines import ENGINES as _ENGINES
from engines import engine

from rulegen.ir.evaluate import apply_link, apply_link_f32, outputs_of, proba_of, raw_scores
from rulegen.ir.libm import exp_rounded_array
from rulegen.ir.nodes import Model
from rulegen.targets.sql import rounded_exp
from rulegen.targets.sql.query import Query
from rulegen.verify.sql import column_kind as _kind
from rulegen.verify.sql import row_column

ENGINES = tuple(_ENGINES)  # every engine the tests run SQL in (tests/engines.py)


def connect(dialect: str, dsn: str | None = None):
    """A new connection to ``dialect``'s engine (PostgreSQL: to ``dsn``, or the shared one)."""
    return engine(dialect).connect(dsn)


def load_table(conn, dialect: str, model: Model, rows, table: str = "data",
               missing: str = "null") -> list[list]:
    """(Re)create ``table`` with one column per feature plus ``row_column(model)`` (0, 1,
    ...) and insert ``rows``. Returns the rows as stored (missing numeric values as None
    or NaN), without the row number."""
    if missing not in ("null", "nan", "mixed"):
        raise ValueError("missing must be 'null', 'nan' or 'mixed'")
    nan = engine(dialect).has_nan and missing != "null"
    stored = []
    for i, row in enumerate(rows):
        out = storable(list(row), model, dialect)
        if nan and (missing == "nan" or i % 2):
            out = [math.nan if v is None and f.kind == "numeric" else v
                   for v, f in zip(out, model.features)]
        stored.append(out)
    columns = [(row_column(model), "integer")] + [(f.name, _kind(f)) for f in model.features]
    engine(dialect).load(conn, table, columns, [[i] + r for i, r in enumerate(stored)])
    return stored


def storable(row: list, model: Model, dialect: str) -> list:
    """A row as the engine can hold it: where it has no infinity, +-inf numeric values become
    the largest finite double (the rows the evaluator is compared on get the same values)."""
    if engine(dialect).has_infinity:
        return row
    return [math.copysign(sys.float_info.max, v) if f.kind == "numeric" and isinstance(v, float)
            and math.isinf(v) else v for v, f in zip(row, model.features)]


def storable_codes(X: np.ndarray, model: Model, dialect: str) -> np.ndarray:
    """:func:`storable` for a matrix of codes."""
    if engine(dialect).has_infinity:
        return X
    X = np.array(X, dtype=np.float64)
    for j, f in enumerate(model.features):
        if f.kind == "numeric":
            X[:, j] = np.where(np.isinf(X[:, j]), np.copysign(sys.float_info.max, X[:, j]), X[:, j])
    return X


@dataclass
class SqlResult:
    model: Model
    columns: list[str]
    rows: list[tuple]
    dialect: str = "sqlite"

    def column(self, name: str) -> list:
        from rulegen.targets.sql.dialects import DIALECTS

        i = self.columns.index(DIALECTS[self.dialect].column_name(name))
        return [r[i] for r in self.rows]

    def _floats(self, names: list[str]) -> np.ndarray:
        out = np.empty((len(self.rows), len(names)))
        for j, name in enumerate(names):
            out[:, j] = [math.nan if v is None else float(v) for v in self.column(name)]
        return out

    @property
    def prediction(self):
        """Labels (object array) for classifiers; values (n,) or (n, k) for regression."""
        if self.model.target.task == "classification":
            return np.asarray(self.column("prediction"), dtype=object)
        v = self.values
        return v[:, 0] if v.shape[1] == 1 else v

    @property
    def proba(self) -> np.ndarray | None:
        if self.model.target.task != "classification":
            return None
        return self._floats([f"prob_{c}" for c in self.model.target.classes])

    @property
    def values(self) -> np.ndarray | None:
        if self.model.target.task != "regression":
            return None
        n = self.model.n_raw
        return self._floats(["prediction"] if n == 1 else [f"prediction_{k}" for k in range(n)])

    @property
    def raw(self) -> np.ndarray | None:
        names = [f"raw_{k}" for k in range(self.model.n_raw)]
        return self._floats(names) if all(n in self.columns for n in names) else None


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return (math.isnan(a) and math.isnan(b)) or a == b
    return a == b


def run_sql(sql: str, model: Model, rows, dialect: str = "sqlite", *, table: str = "data",
            conn=None, missing: str = "null") -> SqlResult:
    """Load ``rows`` into ``table``, run ``sql`` (a full query from the SQL target) and
    return its output. Raises AssertionError if the rows come back in another order."""
    conn = engine(dialect).connection() if conn is None else conn
    stored = load_table(conn, dialect, model, rows, table, missing)
    # the engine's ordinary client: PostgreSQL's text protocol prints a double as its
    # shortest exact decimal (a real would print as a float32 decimal: not what we return)
    columns, result = engine(dialect).fetch(conn, sql)
    res = SqlResult(model, columns, result, dialect)
    if row_column(model) in columns:
        i = columns.index(row_column(model))
        res.rows.sort(key=lambda r: r[i])
    if len(result) != len(stored):
        raise AssertionError(f"{len(stored)} rows in, {len(result)} rows out")
    for j, f in enumerate(model.features):
        got = res.column(f.name)
        for i, (a, b) in enumerate(zip(got, (r[j] for r in stored))):
            if not _same(a, b):
                raise AssertionError(f"row {i}: {f.name!r} came back as {a!r}, loaded {b!r} "
                                     "(reordered rows?)")
    return res


def expected(model: Model, X: np.ndarray, dialect: str = "sqlite") -> dict:
    """What the evaluator says for codes ``X``: raw, proba / values, class labels. SQL has no
    float32 ``expf``: float32 links take exp rounded to float32 (docs/IR.md), the one place
    SQL is compared with something other than the evaluator's own arithmetic."""
    X = storable_codes(X, model, dialect)
    raw = raw_scores(model, X)
    out = {"raw": raw}
    exp = engine(dialect).exp
    if rounded_exp(model):
        values = apply_link_f32(model.link, raw, expf=_rounded(exp) if exp else exp_rounded_array)
    elif exp is not None and model.dtype == "float64" and not Query.folds_outputs(model):
        # the query computes exp (one tree's outputs are folded in with the C library's)
        values = apply_link(model.link, raw, exp=exp)
    else:
        values = outputs_of(model, raw)
    if model.target.task == "classification":
        out["proba"] = proba_of(model, values)
        classes = np.asarray(model.target.classes, dtype=object)
        out["prediction"] = classes[np.argmax(out["proba"], axis=1)]
    else:
        out["values"] = values
    return out


def _rounded(exp):
    """exp of float32 values in the engine's double exp, rounded to float32."""
    def f(a):
        with np.errstate(over="ignore"):
            return exp(np.asarray(a, dtype=np.float64)).astype(np.float32)
    return f


def _mismatch(name: str, got: np.ndarray, want: np.ndarray) -> str | None:
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return f"{name}: shape {got.shape} != {want.shape}"
    if np.array_equal(got, want, equal_nan=True):
        return None
    bad = np.argwhere(~((got == want) | (np.isnan(got) & np.isnan(want))))
    i = tuple(bad[0])
    return f"{name}: {len(bad)} cells differ, first at {i}: sql {got[i]!r} vs evaluator {want[i]!r}"


def compare(res: SqlResult, model: Model, X: np.ndarray) -> None:
    """Assert the SQL output equals the evaluator bit for bit (-0.0 == 0.0)."""
    want = expected(model, X, res.dialect)
    problems = []
    if res.raw is not None:
        problems.append(_mismatch("raw", res.raw, want["raw"]))
    if "proba" in want:
        problems.append(_mismatch("proba", res.proba, want["proba"]))
        got = res.prediction
        diff = [i for i, (a, b) in enumerate(zip(got, want["prediction"]))
                if a != b or type(a) is not type(b)]
        if diff:
            i = diff[0]
            problems.append(f"prediction: {len(diff)} rows differ, first row {i}: "
                            f"sql {got[i]!r} vs evaluator {want['prediction'][i]!r}")
    else:
        problems.append(_mismatch("values", res.values, want["values"]))
    problems = [p for p in problems if p]
    if problems:
        raise AssertionError("; ".join(problems))


def fragment(model: Model, dialect: str, **options) -> str | None:
    """The expressions-only fragment for ``model``, or None in an engine that cannot run it
    (ClickHouse: its correlated subqueries lose rows with NULL), after checking that the
    generator refuses it there rather than write SQL that would answer wrongly."""
    import pytest

    from rulegen.errors import UnsupportedFeatureError
    from rulegen.targets.sql import SqlTarget
    from rulegen.targets.sql.dialects import DIALECTS

    if DIALECTS[dialect].no_correlated_subqueries:
        with pytest.raises(UnsupportedFeatureError, match="expressions_only in "):
            SqlTarget().generate(model, dialect=dialect, expressions_only=True, **options)
        return None
    return SqlTarget().generate(model, dialect=dialect, expressions_only=True, **options)["model.sql"]


def postgres_connection():
    """The test process's PostgreSQL connection (tests/engines.py)."""
    return engine("postgres").connection()


def check_sql(model: Model, X: np.ndarray, dialect: str = "sqlite", *, conn=None,
              missing: str = "null", **options) -> SqlResult:
    """Generate SQL for ``model`` (raw columns on), run it on codes ``X`` converted with
    ``labels_for``, and compare with the evaluator exactly."""
    from irfixtures import labels_for

    from rulegen.targets.sql import SqlTarget

    options.setdefault("raw", True)
    options.setdefault("passthrough", [row_column(model)])
    sql = SqlTarget().generate(model, dialect=dialect, **options)["model.sql"]
    res = run_sql(sql, model, labels_for(model, X), dialect, conn=conn, missing=missing,
                  table=options.get("table", "data"))
    compare(res, model, X)
    return res
