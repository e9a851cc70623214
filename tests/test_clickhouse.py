"""What is special about ClickHouse (rulegen/targets/sql/dialects/clickhouse.py), checked in the
engine itself through chDB: exact float literals, backslash escapes in names and strings, the
SETTINGS clause big queries end with (and the two ways a user runs such a query inside another),
ClickHouse's own exp, NaN compared as IEEE does, and the engine defect that makes the
expressions-only form refused. The model matrix, nesting, hostile-text and 1,000-tree tests run
ClickHouse with every other engine (tests/engines.py)."""

from __future__ import annotations

import dataclasses
import math
import struct

import irfixtures as fx
import numpy as np
import pytest
from engines import engine
from run_sql import ENGINES, check_sql, compare, row_column, run_sql

from rulegen.ir.nodes import CategoricalTest, DefaultChild, Feature, Leaf, Model, NumericTest, Split, Target, Tree
from rulegen.ir.validate import validate
from rulegen.targets.sql import SqlTarget
from rulegen.targets.sql.dialects import DIALECTS
from rulegen.targets.sql.dialects.clickhouse import EXP_NOTE
from rulegen.targets.sql.dialects.postgres import exp_limits

D = DIALECTS["clickhouse"]


def _session():
    """A fresh chDB session with ClickHouse's default settings (expressions interpreted)."""
    return engine("clickhouse").connect()


def _bits(v: float) -> bytes:
    return struct.pack("<d", v)


def test_float_literals_read_back_exactly():
    """Random bit patterns over every exponent, subnormals and the extremes: each literal is
    read by ClickHouse's parser as the same double, sign of zero included."""
    rng = np.random.default_rng(11)
    vals = [0.1, -0.0, 0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
            1.7976931348623157e308, -1.7976931348623157e308, 9007199254740993.0, 1e23, math.pi]
    raw = rng.integers(0, 2**63, 12_000, dtype=np.uint64) | (rng.integers(0, 2, 12_000, dtype=np.uint64) << 63)
    vals += [v for v in raw.view(np.float64).tolist() if math.isfinite(v)]
    e = engine("clickhouse")
    conn = e.connection()
    for i in range(0, len(vals), 1000):
        chunk = vals[i:i + 1000]
        _, rows = e.fetch(conn, "SELECT " + ", ".join(f"{D.num(v)} AS c{j}" for j, v in enumerate(chunk)))
        bad = [(v, g) for v, g in zip(chunk, rows[0]) if _bits(g) != _bits(v)]
        assert not bad, bad[:5]
    _, rows = e.fetch(conn, f"SELECT {D.num(math.inf)}, {D.num(-math.inf)}, toTypeName({D.num(1.0)})")
    assert rows[0] == (math.inf, -math.inf, "Float64")


def backslash_model() -> Model:
    """Backslashes everywhere a name or label goes: an escape in ClickHouse's quoted names
    and strings, plain text in the other engines."""
    feats = (Feature("x\\"), Feature('y\\"\\n'),
             Feature("c\\'", "categorical", ("\\", "a\\'b", "\\\\", "\\N", "\\x41", "\\0", "n\\nl", "'")))
    nodes = (Split(NumericTest(0, "<=", 0.5), (1, 2), DefaultChild(1)),
             Split(CategoricalTest(2, (0, 2, 4)), (3, 4), DefaultChild(0), unseen=1),
             Split(NumericTest(1, "<", -1.0), (5, 6), DefaultChild(0)),
             Split(CategoricalTest(2, (1, 3, 5)), (7, 8), DefaultChild(1), unseen=0),
             Leaf((0.9, 0.1)), Leaf((0.2, 0.8)), Leaf((0.6, 0.4)), Leaf((0.3, 0.7)), Leaf((0.5, 0.5)))
    tree = Tree(nodes)
    return validate(Model(feats, Target("classification", "t\\", ("k\\", "k\\\\")), (tree, tree), (0.0, 0.0),
                          aggregation="mean"))


@pytest.mark.parametrize("dialect", ENGINES)
def test_backslashes_in_names_labels_and_categories(dialect):
    model = backslash_model()
    X = fx.probe_rows(model, limit=400)
    res = check_sql(model, X, dialect, missing="mixed")
    assert set(res.column("prediction")) <= {"k\\", "k\\\\"}
    assert [c for c in res.columns if c.startswith("prob_")] == ["prob_k\\", "prob_k\\\\"]


def test_big_queries_carry_their_settings():
    """A query past the default max_query_size ends with the settings it needs and runs in a
    fresh session; a user embedding it moves that clause to the end of the outer query, or
    SETs the settings first, as the header says. Small queries have no clause."""
    assert "SETTINGS" not in SqlTarget().generate(fx.classifier(), dialect="clickhouse")["model.sql"]
    # long names make a big text of a small model (the 1,000-tree test has the AST elements)
    small = fx.sigmoid_ensemble()
    feats = tuple(dataclasses.replace(f, name=f"{i}" + "n" * 40_000) for i, f in enumerate(small.features))
    model = validate(dataclasses.replace(small, features=feats))
    sql = SqlTarget().generate(model, dialect="clickhouse", raw=True, passthrough=[row_column(model)])["model.sql"]
    assert len(sql.encode()) > 256 * 1024
    clause = sql[sql.rindex("\nSETTINGS ") + 1:].rstrip().rstrip(";")
    assert "max_query_size" in clause and clause in sql[:sql.index("\nWITH")]  # the header names it
    X = fx.probe_rows(model, limit=300)
    conn = _session()
    res = run_sql(sql, model, fx.labels_for(model, X), "clickhouse", conn=conn)
    compare(res, model, X)
    body = sql[:sql.rindex("\nSETTINGS ")]
    total = float(np.sum(res.raw[:, 0]))
    e = engine("clickhouse")
    _, rows = e.fetch(conn, f'SELECT sum(q."raw_0") FROM ({body}) AS q {clause}')
    assert rows[0][0] == pytest.approx(total, rel=1e-12)
    with pytest.raises(Exception, match="max_query_size"):
        conn.query(f'SELECT sum(q."raw_0") FROM ({body}) AS q', "CSV")  # the defaults refuse it
    for setting in clause.removeprefix("SETTINGS ").split(", "):
        conn.query(f"SET {setting}")
    _, rows = e.fetch(conn, f'SELECT sum(q."raw_0") FROM ({body}) AS q')
    assert rows[0][0] == pytest.approx(total, rel=1e-12)


def test_exp_is_clickhouses_own():
    """The premise of EXP_NOTE and of the ClickHouse engine's exp in tests/engines.py: one ulp
    from the C library's on some inputs, a function of x alone (a constant, or any row of a
    table, gives the same), with the C library's overflow and underflow bounds."""
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.standard_normal(20_000) * 5, rng.uniform(-745, 709, 20_000)])
    got = engine("clickhouse").exp(x)
    want = np.array([math.exp(v) for v in x])
    differ = np.flatnonzero(got != want)
    assert 0 < len(differ) < len(x) / 200
    assert all(abs(got[i] - want[i]) <= math.ulp(want[i]) for i in differ)
    pick = x[differ[:20]]
    _, rows = engine("clickhouse").fetch(engine("clickhouse").connection(),
                                         "SELECT " + ", ".join(f"exp({D.num(v)})" for v in pick))
    assert np.array_equal(np.array(rows[0]), got[differ[:20]])
    top, bottom = exp_limits()
    edge = np.array([top, math.nextafter(top, math.inf), bottom, math.nextafter(bottom, -math.inf),
                     math.inf, -math.inf, math.nan, 1000.0, -1000.0])
    out = engine("clickhouse").exp(edge)
    assert math.isfinite(out[0]) and out[1] == math.inf and out[2] > 0.0 and out[3] == 0.0
    assert out[4] == math.inf and out[5] == 0.0 and math.isnan(out[6]) and out[7] == math.inf and out[8] == 0.0
    # the header says so where the query computes exp, not where one tree's outputs are folded
    assert EXP_NOTE in SqlTarget().generate(fx.big_ensemble(3), dialect="clickhouse")["model.sql"]
    assert EXP_NOTE not in SqlTarget().generate(fx.classifier(), dialect="clickhouse")["model.sql"]


def test_nan_compares_as_ieee():
    """The premises of the dialect's NaN handling: NaN fails every comparison (no guard in
    at_least), ``x <= inf`` tells numbers from NULL and NaN, NULLIF cannot catch NaN, and
    greatest depends on where NaN stands."""
    _, rows = engine("clickhouse").fetch(_session(), (
        "SELECT nan > 1, nan < 1, nan = nan, nan <= inf, -inf <= inf, NULLIF(nan, nan), "
        "greatest(nan, 1.0), greatest(1.0, nan), "
        f"{D.greatest(['nan', '1.0'])}, {D.greatest(['1.0', 'nan'])}, {D.greatest(['1.0', '2.0'])}"))
    r = rows[0]
    assert r[:5] == (0, 0, 0, 0, 1) and math.isnan(r[5])
    assert r[6] == 1.0 and math.isnan(r[7])
    assert math.isnan(r[8]) and math.isnan(r[9]) and r[10] == 2.0


def test_correlated_subqueries_lose_rows_with_null():
    """Why expressions_only is refused: a scalar subquery reading the outer row gives NULL
    where an outer column it reads is NULL. When this fails, ClickHouse has fixed it (issue
    #112576): lift the refusal (ClickHouse.no_correlated_subqueries) and let the
    expressions-only tests run."""
    e = engine("clickhouse")
    conn = _session()
    e.load(conn, "t", [("i", "integer"), ("x", "numeric")], [[0, 1.0], [1, None], [2, math.nan]])
    _, rows = e.fetch(conn, 'SELECT "i", (SELECT coalesce("x", 7.0)) AS "y" FROM "t" ORDER BY "i"')
    assert rows[0] == (0, 1.0) and math.isnan(rows[2][1])
    assert rows[1] == (1, None), "ClickHouse now answers 7.0 here: see this test's docstring"


def test_float32_columns_compare_exactly():
    """A user's table may hold Float32 columns: thresholds compare with them as doubles."""
    model = fx.all_models()["softmax_f32"]
    X = fx.probe_rows(model, limit=300)
    e = engine("clickhouse")
    conn = _session()
    e.types = dict(e.types, numeric="Nullable(Float32)")
    try:
        with np.errstate(over="ignore"):
            X32 = X.astype(np.float32).astype(np.float64)
        check_sql(model, X32, "clickhouse", conn=conn, missing="mixed")
    finally:
        del e.types


def test_compiled_expressions_are_exact():
    """ClickHouse compiles an expression to native code (LLVM) once it has run it
    min_count_to_compile_expression (3) times; forced here from the first run: the same bits,
    exp included."""
    conn = _session()
    conn.query("SET compile_expressions = 1")
    conn.query("SET min_count_to_compile_expression = 0")
    models = fx.all_models()
    for name in ("every_construct", "softmax_f32", "softmax_f64", "forest_vote", "sigmoid_ensemble", "exp_regression"):
        model = models[name]
        check_sql(model, fx.probe_rows(model, limit=300), "clickhouse", conn=conn, missing="mixed")
    x = np.random.default_rng(4).standard_normal(20_000) * 5
    e = engine("clickhouse")
    e.load(conn, "x", [("x", "numeric")], [[v] for v in x.tolist()])
    _, rows = e.fetch(conn, 'SELECT exp("x"), 1.0 / (1.0 + exp(-"x")) FROM "x"')
    assert np.array_equal(np.array([r[0] for r in rows]), e.exp(x))
    _, rows = e.fetch(conn, "SELECT value FROM system.events WHERE event = 'CompileFunction'")
    assert rows and rows[0][0] > 0  # something was compiled
    # the header of a big query tells how to choose when to compile; a small one's does not
    assert "SET compile_expressions = 0;" in SqlTarget().generate(fx.big_ensemble(60), dialect="clickhouse")["model.sql"]
    assert "compile_expressions" not in SqlTarget().generate(fx.classifier(), dialect="clickhouse")["model.sql"]


def test_many_steps_raise_the_subquery_depth(monkeypatch):
    """Each WITH step is a subquery of the next, and ClickHouse stops at 100 nested ones
    (max_subquery_depth): a query of 90 steps or more raises it in its SETTINGS clause."""
    monkeypatch.setattr(type(D), "trees_per_step", 1)  # a step a tree: many steps, small text
    trees = tuple(Tree((Split(NumericTest(i % 2, "<=", (i % 7) / 4.0), (1, 2), DefaultChild(i % 2)),
                        Leaf((i / 7.0,)), Leaf((-i / 3.0,)))) for i in range(120))
    model = validate(Model((Feature("a"), Feature("b")), Target("regression", "y"), trees, (0.5,)))
    sql = SqlTarget().generate(model, dialect="clickhouse")["model.sql"]
    assert sql.count('" AS (') > 100 and "max_subquery_depth" in sql and len(sql) < 192 * 1024
    check_sql(model, fx.probe_rows(model, limit=300), "clickhouse", conn=_session(), missing="mixed")
