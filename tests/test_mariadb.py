"""What is special about MariaDB, in a throwaway server (tests/mariadbserver.py): no NaN and no
infinity (overflow raises), labels compared exactly whatever the column's collation or the
session's sql_mode, column names of at most 64 characters, literals and exp exact. The
generic exactness tests (test_target_sql.py, test_sql_shape.py) run here too."""

from __future__ import annotations

import contextlib
import itertools
import math
import struct
import sys

import irfixtures as fx
import numpy as np
import pytest
from engines import engine
from run_sql import compare, row_column, run_sql

from rulegen.errors import RulegenError, UnsupportedFeatureError
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Feature,
    Leaf,
    Model,
    NumericTest,
    ObliqueTest,
    Split,
    Target,
    Tree,
)
from rulegen.ir.validate import validate
from rulegen.targets.sql import SqlTarget
from rulegen.targets.sql.dialects import DIALECTS

D = DIALECTS["mariadb"]
E = engine("mariadb")
MAX = sys.float_info.max


@pytest.fixture(scope="module")
def conn():
    return E.connection()


def _fetch(conn, sql):
    return E.fetch(conn, sql)[1]


# --- numbers --------------------------------------------------------------------------------


def test_literals_read_back_exactly(conn):
    rng = np.random.default_rng(8)
    bits = rng.integers(0, 0x7FF0_0000_0000_0000, 3000, dtype=np.int64)
    vals = [struct.unpack("<d", struct.pack("<q", int(b)))[0] for b in bits]
    vals = [v * s for v, s in zip(vals, rng.choice([-1.0, 1.0], len(vals)))]
    vals += [5e-324, -5e-324, MAX, -MAX, 2.2250738585072014e-308, 0.1, 1e23]
    for i in range(0, len(vals), 500):
        chunk = vals[i:i + 500]
        row = _fetch(conn, "SELECT " + ", ".join(D.num(v) for v in chunk))[0]
        assert list(row) == chunk
    # -0.0 prints as 0 but is -0.0 inside an expression: atan2 sees its sign
    assert _fetch(conn, f"SELECT atan2({D.num(-0.0)}, -1e0), atan2({D.num(0.0)}, -1e0)")[0] == (-math.pi, math.pi)


def test_exp_is_the_c_librarys(conn):
    """The engine's exp matches math.exp (so engines.py needs no exp of its own)."""
    rng = np.random.default_rng(2)
    xs = [float(v) for v in np.concatenate([rng.uniform(-745, 709, 4000), rng.standard_normal(1000)])]
    got = _fetch(conn, "SELECT " + ", ".join(f"exp({D.num(x)})" for x in xs))[0]
    assert list(got) == [math.exp(x) for x in xs]


def test_no_nan_or_infinity_reaches_a_column(conn):
    """The header's "NULL is missing" is the whole story: NaN and inf cannot be stored, and
    arithmetic that would overflow raises instead of giving inf."""
    import pymysql

    E.load(conn, "n", [("x", "numeric")], [])
    for bad in ("'nan'", "'inf'", "1e308 * 10", "1e0 / 0e0"):
        with pytest.raises(pymysql.err.MySQLError):
            conn.cursor().execute(f"INSERT INTO `n` VALUES ({bad})")
    with pytest.raises(pymysql.err.MySQLError, match="out of range"):
        _fetch(conn, "SELECT exp(710e0)")
    # the cast to float32 saturates where binary32 overflows: why the query bounds its sums
    assert _fetch(conn, "SELECT CAST(CAST(1e39 AS FLOAT) AS DOUBLE)")[0][0] == float(np.finfo(np.float32).max)
    sql = SqlTarget().generate(fx.classifier(), dialect="mariadb")["model.sql"]
    assert "/* NULL is missing */" in sql and "NaN is missing" not in sql
    assert "no NaN or infinity" in sql


def test_models_that_could_reach_infinity_are_refused():
    one = (Feature("x"),)
    split = Split(NumericTest(0, "<", 0.0), (1, 2), DefaultChild(0))
    big_sum = Model(one, Target("regression", "y"), (Tree((split, Leaf((1e308,)), Leaf((1.0,)))),) * 2, (0.0,))
    exp_link = Model(one, Target("regression", "y"), (Tree((split, Leaf((710.0,)), Leaf((1.0,)))),) * 2,
                     (0.0,), link="exp")
    exp_f32 = Model(one, Target("regression", "y"), (Tree((split, Leaf((45.0,)), Leaf((1.0,)))),) * 2,
                    (0.0,), link="exp", dtype="float32")
    for model in (big_sum, exp_link, exp_f32):
        with pytest.raises(UnsupportedFeatureError, match="overflow"):
            SqlTarget().generate(validate(model), dialect="mariadb")
        SqlTarget().generate(validate(model), dialect="duckdb")  # engines with inf write it


@contextlib.contextmanager
def sql_mode(conn, mode: str):
    cur = conn.cursor()
    cur.execute("SELECT @@SESSION.sql_mode")
    saved = cur.fetchone()[0]
    cur.execute(f"SET SESSION sql_mode = '{mode}'")
    try:
        yield
    finally:
        cur.execute(f"SET SESSION sql_mode = '{saved}'")


@pytest.mark.parametrize("mode", ["", "HIGH_NOT_PRECEDENCE"])
def test_oblique_sums_overflow_exactly(conn, mode):
    """Products and partial sums that overflow to +-inf (ties at the overflow bound
    included), inf - inf (NaN), and huge terms that cancel to a subnormal: the evaluator's
    IEEE answer, where a plain sum would raise."""
    feats = (Feature("x"), Feature("y"), Feature("z"))
    tests = [ObliqueTest((0, 1, 2), (1.5, -2.0, 1.0), "<", 0.0),
             ObliqueTest((0, 1), (1.0, 1.0), "<=", math.inf),
             ObliqueTest((2, 0, 1), (0.75, 0.5, -0.25), "<", -5e-324),
             ObliqueTest((1, 2), (3.0, 3.0), "<=", -math.inf)]
    nodes = [Split(tests[0], (1, 2), DefaultChild(0)), Split(tests[1], (3, 4), DefaultChild(1)),
             Split(tests[2], (5, 6), DefaultChild(0)), Split(tests[3], (7, 8), DefaultChild(1)),
             Leaf((1.0,)), Leaf((2.0,)), Leaf((3.0,)), Leaf((4.0,)), Leaf((5.0,))]
    model = validate(Model(feats, Target("regression", "v"), (Tree(tuple(nodes)),), (0.0,)))
    vals = [MAX, -MAX, 1e308, -1e308, MAX / 1.5, -MAX / 2, 2.0**1023, 2.0**970, 5e-324, -5e-324,
            0.0, 1.0, -1.0, math.nan]
    X = np.array(list(itertools.product(vals, repeat=3)))
    sql = SqlTarget().generate(model, dialect="mariadb", raw=True, passthrough=[row_column(model)])["model.sql"]
    with sql_mode(conn, mode):
        res = run_sql(sql, model, fx.labels_for(model, X), "mariadb", conn=conn)
    with np.errstate(over="ignore", invalid="ignore"):  # the evaluator's own overflows
        compare(res, model, X)


# --- text -----------------------------------------------------------------------------------


CATEGORIES = ("a", "A ", "É", "back\\slash", "it's \\' x", "\\", "a\\nb", "tab\t", "ß", "年")
# unseen labels a case-, accent- or space-insensitive comparison would take for known ones
UNSEEN = ("A", "a ", "e", "É ", "\\\\", "ss", "SS", "back\\\\slash", "it's ' x", "a\nb", "tab")


def _label_model() -> Model:
    feats = (Feature("c", "categorical", CATEGORIES), Feature("x"))
    nodes = (Split(CategoricalTest(0, (0, 2, 3, 5, 8)), (1, 2), DefaultChild(1), 0),
             Split(CategoricalTest(0, (1, 4, 6)), (3, 4), DefaultChild(0), 1),
             Split(NumericTest(1, "<", 0.5), (5, 6), DefaultChild(0)),
             Leaf((0.9, 0.05, 0.05)), Leaf((0.1, 0.8, 0.1)), Leaf((0.2, 0.2, 0.6)), Leaf((0.3, 0.3, 0.4)))
    return validate(Model(feats, Target("classification", "k\\", ("x\\y", "q'\\", "plain")),
                          (Tree(nodes),) * 2, (0.0, 0.0, 0.0)))


@pytest.mark.parametrize("column", ["TEXT CHARACTER SET utf8mb4", "TEXT CHARACTER SET latin1"])
@pytest.mark.parametrize("mode", ["", "NO_BACKSLASH_ESCAPES", "ANSI_QUOTES,HIGH_NOT_PRECEDENCE"])
def test_labels_compare_exactly_in_any_collation_and_mode(conn, column, mode, monkeypatch):
    """Backslashes, quotes, case, accents and trailing spaces count: an unseen label that the
    column's own collation (case- and accent-insensitive, PAD SPACE) would call equal to a
    known one still goes the unseen way, whatever sql_mode the session has."""
    model = _label_model()
    labels = list(CATEGORIES) + list(UNSEEN) + [None]
    if "latin1" in column:
        labels = [v for v in labels if v is None or v.isascii() or v in ("É", "É ", "ß")]
    rows = [[c, x] for c in labels for x in (0.0, 1.0, None)]
    X = np.array([[CATEGORIES.index(c) if c in CATEGORIES else (math.nan if c is None else -1),
                   math.nan if x is None else x] for c, x in rows])
    monkeypatch.setitem(E.types, "text", column)
    sql = SqlTarget().generate(model, dialect="mariadb", raw=True, passthrough=[row_column(model)])["model.sql"]
    with sql_mode(conn, mode):
        res = run_sql(sql, model, rows, "mariadb", conn=conn)
    compare(res, model, X)
    assert set(res.column("prediction")) <= set(model.target.classes)


def test_column_names_mariadb_cannot_have_are_refused():
    model = fx.regressor()

    def named(name):
        return validate(Model((Feature(name),) + model.features[1:], model.target, model.trees, model.base_score))

    SqlTarget().generate(named("é" * 64), dialect="mariadb")
    for bad, why in (("é" * 65, "longer than 64"), ("x ", "ending in a space"), ("x\U0001F600", r"beyond U\+FFFF")):
        with pytest.raises(RulegenError, match=why):
            SqlTarget().generate(named(bad), dialect="mariadb")
        with pytest.raises(RulegenError, match=why):
            SqlTarget().generate(model, dialect="mariadb", passthrough=[bad])
    # result names are cut at 255 bytes: two classes alike that far would share a column
    long = fx.classifier()
    classes = ("k" * 260 + "a", "k" * 260 + "b", "c")
    clash = validate(Model(long.features, Target("classification", "t", classes), long.trees, long.base_score))
    with pytest.raises(RulegenError, match="same name in MariaDB"):
        SqlTarget().generate(clash, dialect="mariadb")


def test_expressions_only_inlines_and_refuses_big_ensembles(conn):
    """Subqueries cannot read the outer row from a WITH step: the fragment is one expression
    per output, and an ensemble too large to inline is refused with the way out."""
    with pytest.raises(UnsupportedFeatureError, match="use the full query"):
        SqlTarget().generate(fx.big_ensemble(101), dialect="mariadb", expressions_only=True)
    model = fx.big_ensemble(100)
    frag = SqlTarget().generate(model, dialect="mariadb", expressions_only=True, raw=True)["model.sql"]
    assert "WITH" not in frag
    X = fx.probe_rows(model, limit=300)
    names = [row_column(model)] + [f.name for f in model.features]
    sql = f"SELECT {', '.join(map(D.quote, names))},\n{frag}\nFROM `data`"
    compare(run_sql(sql, model, fx.labels_for(model, X), "mariadb", conn=conn), model, X)


def test_more_steps_than_one_with_holds(conn, monkeypatch):
    """MariaDB refuses a WITH of more than 64 steps: longer chains nest as derived tables."""
    monkeypatch.setattr(D, "trees_per_step", 1)
    model = fx.big_ensemble(90)
    sql = SqlTarget().generate(model, dialect="mariadb", raw=True, passthrough=[row_column(model)])["model.sql"]
    assert sql.count(" AS (\n") > 64 and sql.count("WITH") == 2
    X = fx.probe_rows(model, limit=300)
    compare(run_sql(sql, model, fx.labels_for(model, X), "mariadb", conn=conn), model, X)
