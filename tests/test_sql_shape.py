"""The SQL shape: one nested CASE per tree, node-id steps past each engine's nesting limit,
hostile text, float32 outputs through each engine's ordinary client, PostgreSQL's JIT, and
text no target can write refused at the boundary. Every check runs the SQL in the real
engine (SQLite, DuckDB, a throwaway PostgreSQL) against the evaluator."""

from __future__ import annotations

import dataclasses
import json
import math

import irfixtures as fx
from irfixtures import hostile_model
import numpy as np
import pytest
from engines import engine
from run_sql import ENGINES, check_sql, compare, connect, fragment, row_column, run_sql

from rulegen.errors import IRValidationError, RulegenError, UnsupportedFeatureError
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Feature,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    Split,
    Surrogate,
    Surrogates,
    Target,
    Tree,
)
from rulegen.ir.validate import validate
from rulegen.targets.sql import SqlTarget
from rulegen.targets.sql.dialects import DIALECTS

def _run(model, X, dialect, **options):
    return check_sql(model, X, dialect, missing="mixed", **options)


def _select(dialect: str, names: list[str], frag: str) -> str:
    """SELECT the named columns and an expressions-only fragment from the test table."""
    q = DIALECTS[dialect].quote
    return f"SELECT {', '.join(map(q, names))},\n{frag}\nFROM {q('data')} AS {q('t')}"


# --- hostile text ------------------------------------------------------------------------


def hostile_for(dialect: str, dtype: str = "float64") -> Model:
    """The hostile model with the feature names the engine can have as columns: MariaDB's
    are at most 64 characters, so there the 5,000-byte name is refused and then cut."""
    model = hostile_model(dtype)
    d = DIALECTS[dialect]
    if all(d.column_problem(f.name) is None for f in model.features):
        return model
    with pytest.raises(RulegenError, match="cannot exist in"):
        SqlTarget().generate(model, dialect=dialect)
    feats = tuple(dataclasses.replace(f, name=f.name[:64]) for f in model.features)
    return validate(dataclasses.replace(model, features=feats))


@pytest.mark.parametrize("dialect", ENGINES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_hostile_names_labels_and_categories(dialect, dtype):
    """Newlines, CR, tabs, quotes, comment and statement markers, unicode and 5,000-byte
    names and labels cannot break the query: every engine predicts what the evaluator does."""
    model = hostile_for(dialect, dtype)
    X = fx.probe_rows(model, limit=600)
    for comments in (True, False):
        _run(model, X, dialect, comments=comments)


@pytest.mark.parametrize("dialect", ENGINES)
def test_hostile_text_in_expressions_only(dialect):
    model = hostile_for(dialect)
    X = fx.probe_rows(model, limit=300)
    frag = fragment(model, dialect, raw=True)
    if frag is None:
        return  # refused (ClickHouse)
    names = [row_column(model)] + [f.name for f in model.features]
    res = run_sql(_select(dialect, names, frag), model, fx.labels_for(model, X), dialect)
    compare(res, model, X)


def test_postgres_names_that_would_merge_are_refused():
    model = hostile_model()
    a, b = "n" * 70 + "1", "n" * 70 + "2"  # the same first 63 bytes
    feats = (Feature(a), Feature(b)) + model.features[2:]
    clash = dataclasses.replace(model, features=feats)
    SqlTarget().generate(clash, dialect="duckdb")
    with pytest.raises(RulegenError, match="same name in PostgreSQL"):
        SqlTarget().generate(clash, dialect="postgres")
    labels = dataclasses.replace(model, target=Target("classification", "t", ("k" * 70 + "a", "k" * 70 + "b", "c")))
    with pytest.raises(RulegenError, match="output columns .* same name in PostgreSQL"):
        SqlTarget().generate(validate(labels), dialect="postgres")


# --- text no target can write is refused at the boundary --------------------------------


@pytest.mark.parametrize("where", ["feature", "category", "class", "target"])
@pytest.mark.parametrize("bad", ["a\x00b", "a\ud800"])
def test_unwritable_text_is_refused_by_validation(where, bad):
    model = fx.every_construct()
    if where == "feature":
        model = dataclasses.replace(model, features=(Feature(bad),) + model.features[1:])
        path = r"features\[0\]\.name"
    elif where == "category":
        f = model.features[1]
        feats = list(model.features)
        feats[1] = dataclasses.replace(f, categories=(bad,) + f.categories[1:])
        model = dataclasses.replace(model, features=tuple(feats))
        path = r"features\[1\].categories\[0\]"
    elif where == "class":
        t = model.target
        model = dataclasses.replace(model, target=dataclasses.replace(t, classes=(bad,) + t.classes[1:]))
        path = r"target.classes\[0\]"
    else:
        model = dataclasses.replace(model, target=dataclasses.replace(model.target, name=bad))
        path = "target.name"
    with pytest.raises(IRValidationError, match=path):
        validate(model)


def test_nul_in_a_model_file_or_csv_is_exit_2(tmp_path, capsys):
    from rulegen.cli import main
    from rulegen.ir.serialize import dumps

    text = dumps(fx.classifier()).replace('"setosa"', '"set\\u0000osa"')
    (tmp_path / "m.json").write_text(text)
    code = main(["compile", str(tmp_path / "m.json"), "--target", "sql", "-o", str(tmp_path / "m.sql")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "target.classes[0]" in err and "NUL" in err
    assert not (tmp_path / "m.sql").exists()
    (tmp_path / "d.csv").write_text("a,b,y\n1,x\x00,p\n2,z,q\n3,z,p\n")
    code = main(["fit", str(tmp_path / "d.csv"), "--target", "y", "-o", str(tmp_path / "m2.json")])
    err = capsys.readouterr().err
    assert code == 2 and "d.csv:2:4: a NUL character" in err, err
    assert not (tmp_path / "m2.json").exists()


# --- nesting: node-id steps past each engine's limit ----------------------------------


def chain_model(kind: str, depth: int, then_side: bool) -> Model:
    """A chain of ``depth`` splits of one kind whose next split sits in the THEN arm of the
    CASE (``then_side``) or in its ELSE, the two places a parser nests differently."""
    feats = (Feature("x"), Feature("y"), Feature("c", "categorical", ("p", "q", "r", "s")))
    nodes: list = []
    for i in range(depth):
        me, t = len(nodes), round(-50.0 + i * 0.25, 2)
        if kind == "numeric":
            nxt = 0 if then_side else 1  # the child the route puts first (THEN) is 1 - missing
            missing = DefaultChild(1 - nxt if then_side else nxt)
            split, n_kids = (NumericTest(0, "<=", t), missing, None), 2
        elif kind == "surrogate":
            nxt = 0 if then_side else 1  # routes as (CASE ...) = 0 THEN child 0
            rule = Surrogates((Surrogate(NumericTest(1, "<", -t), 1), Surrogate(CategoricalTest(2, (0, 2)), 0)),
                              i % 2)
            split, n_kids = (NumericTest(0, "<=", t), rule, None), 2
        elif kind == "multiway":
            nxt = 0 if then_side else 2  # arms: child 0, child 1 (unseen last); ELSE missing child 2
            split, n_kids = (MultiwayTest(2, ((0,), (1, 3), (2,))), DefaultChild(2), 1), 3
        else:  # interval: arms child 0 (below), child 2 (above); ELSE child 1 (missing)
            nxt = 0 if then_side else 1
            split, n_kids = (IntervalTest(0, "<", (t, t + 0.125)), DefaultChild(1), None), 3
        leaves = iter(range(me + 1, me + n_kids))  # then the next split, at me + n_kids
        children = tuple(me + n_kids if k == nxt else next(leaves) for k in range(n_kids))
        test, rule, unseen = split
        nodes.append(Split(test, children, rule, unseen))
        nodes += [Leaf((float(i * 10 + k),)) for k in range(1, n_kids)]
    nodes.append(Leaf((-1.0,)))
    return validate(Model(feats, Target("regression", "z"), (Tree(tuple(nodes)),), (0.0,)))


@pytest.mark.parametrize("dialect", ENGINES)
@pytest.mark.parametrize("kind", ["numeric", "surrogate", "multiway", "interval"])
def test_nesting_at_and_past_the_limit(dialect, kind):
    """The deepest single expression each engine gets, one level more (the first node-id
    step) and three steps, with the next split in THEN and in ELSE; the whole query and
    the expressions-only fragment (a scalar subquery nests deeper in the parser)."""
    limit = DIALECTS[dialect].max_case_depth
    for depth in sorted({min(limit, 60), limit + 1, 3 * limit + 2}):
        if depth > 120 and kind != "numeric":
            continue  # the long chains run once, numerically
        for then_side in (True, False):
            model = chain_model(kind, depth, then_side)
            X = fx.probe_rows(model, limit=400)
            _run(model, X, dialect)
            _run(model, X, dialect, expressions_only=False, comments=False)
            try:
                frag = fragment(model, dialect)
            except UnsupportedFeatureError as e:
                # where a fragment inlines its steps (MariaDB) a deep tree's node-id search
                # grows too large: refused past the one-CASE limit, never below it
                assert not DIALECTS[dialect].correlated_steps and depth > limit, e
                continue
            if frag is None:
                continue  # refused (ClickHouse)
            res = run_sql(_select(dialect, [row_column(model), "x", "y", "c"], frag), model,
                          fx.labels_for(model, X), dialect)
            compare(res, model, X)


def test_shallow_trees_are_one_nested_case():
    """O(nodes): each split appears once per output, and no node-id step is needed."""
    model = fx.forest("mean", n_trees=3)
    sql = SqlTarget().generate(model, dialect="duckdb", comments=False)["model.sql"]
    splits = sum(sum(isinstance(n, Split) for n in t.nodes) for t in model.trees)
    assert sql.count("CASE") == splits * model.n_raw + 1  # + the class choice
    assert "node reached" not in SqlTarget().generate(model, dialect="duckdb")["model.sql"]


# --- float32 outputs through each engine's ordinary client ---------------------------------


@pytest.mark.parametrize("dialect", ENGINES)
def test_float32_outputs_come_back_as_exact_doubles(dialect):
    """run_sql reads results with the default cursor (PostgreSQL: text): the float32 values
    must arrive as doubles equal to the evaluator's, and be typed double in the engine."""
    for name in ("softmax_f32", "sigmoid_ensemble"):
        model = fx.all_models()[name]
        model = validate(dataclasses.replace(model, dtype="float32"))
        X = fx.probe_rows(model, limit=400)
        res = _run(model, X, dialect, raw=True)
        assert len(res.rows) == len(X)
    e = engine(dialect)
    if e.double_result is None:
        return  # SQLite: no column types
    sql = SqlTarget().generate(model, dialect=dialect, raw=True)["model.sql"]
    conn = e.connection()
    from run_sql import load_table
    load_table(conn, dialect, model, fx.labels_for(model, X[:3]))
    types = e.result_types(conn, sql)
    outs = [f"prob_{c}" for c in model.target.classes] + ["raw_0"]
    assert all(types[c] == e.double_result for c in outs), types


# --- PostgreSQL's JIT -----------------------------------------------------------------------


def test_postgres_jit_compiled_queries_are_exact():
    """The JIT forced on for every query (thresholds 0) gives the same bits."""
    from run_sql import postgres_connection
    conn = postgres_connection()
    if not conn.execute("SELECT pg_jit_available()").fetchone()[0]:
        pytest.skip("this PostgreSQL has no JIT (llvmjit) installed")
    try:
        for setting in ("jit = on", "jit_above_cost = 0", "jit_inline_above_cost = 0",
                        "jit_optimize_above_cost = 0"):
            conn.execute(f"SET {setting}")
        for name in ("every_construct", "softmax_f32", "forest_vote"):
            model = fx.all_models()[name]
            X = fx.probe_rows(model, limit=300)
            check_sql(model, X, "postgres", conn=conn)
        sql = SqlTarget().generate(model, dialect="postgres")["model.sql"].rstrip().rstrip(";")
        plan = conn.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}").fetchone()[0][0]
        assert plan["JIT"]["Functions"] > 0
    finally:
        conn.execute("RESET ALL")


def test_postgres_header_says_how_to_avoid_the_jit():
    small = SqlTarget().generate(fx.classifier(), dialect="postgres")["model.sql"]
    assert "jit" not in small
    big = SqlTarget().generate(fx.big_ensemble(100), dialect="postgres")["model.sql"]
    assert "SET jit = off;" in big
    assert "jit" not in SqlTarget().generate(fx.big_ensemble(100), dialect="duckdb")["model.sql"]


def test_duckdb_header_advice_keeps_the_answers():
    """Big queries carry DuckDB's planning advice; following it changes no prediction."""
    model = fx.big_ensemble(200)
    sql = SqlTarget().generate(model, dialect="duckdb")["model.sql"]
    assert "disabled_optimizers" not in SqlTarget().generate(fx.classifier(), dialect="duckdb")["model.sql"]
    line = next(ln for ln in sql.splitlines() if "disabled_optimizers" in ln)
    setting = line[line.index("SET "):line.index(";") + 1]
    conn = connect("duckdb")
    conn.execute(setting)
    assert conn.execute("SELECT current_setting('disabled_optimizers')").fetchone()[0]
    check_sql(model, fx.probe_rows(model, limit=300), "duckdb", conn=conn)


def test_json_literals_stay_lossless_in_every_dialect():
    """Each dialect's literal reads back as the same double in the engine (SQLite through its
    own parser emulation, DuckDB through exponent literals, PostgreSQL through a cast)."""
    rng = np.random.default_rng(5)
    vals = [0.1, -0.0, 1e-300, 5e-324, 1.7976931348623157e308, 1.7666343426738188e-298, math.pi]
    vals += list(rng.standard_normal(50) * 10.0 ** rng.integers(-300, 300, 50))
    for dialect in ENGINES:
        d = DIALECTS[dialect]
        query = "SELECT " + ", ".join(f"{d.num(v)} AS {d.quote(f'v{i}')}" for i, v in enumerate(vals))
        e = engine(dialect)
        _, rows = e.fetch(e.connection(), query)
        got = [float(x) for x in rows[0]]
        signed = [v for v in vals if v or e.prints_negative_zero]  # MariaDB prints -0.0 as 0
        assert got == vals and [math.copysign(1, g) for g, v in zip(got, vals) if v in signed] == [
            math.copysign(1, v) for v in signed]
        json.dumps(got)  # plain floats


@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
@pytest.mark.parametrize("nullif", [False, True])
def test_nan_guards_and_nullif_agree(dialect, nullif, monkeypatch):
    """Both ways of keeping NaN out of ``x > t`` (a second bound per comparison, or NULLIF
    once a row) are exact, whichever the dialect would pick for a model."""
    monkeypatch.setattr(type(DIALECTS[dialect]), "prefer_nullif", lambda self, g, f: nullif)
    models = fx.all_models()
    for name in ("every_construct", "sigmoid_ensemble", "forest_mean", "softmax_f32"):
        model = models[name]
        _run(model, fx.probe_rows(model, limit=400), dialect)
    model = chain_model("interval", 30, False)
    _run(model, fx.probe_rows(model, limit=400), dialect)


def test_a_fence_is_placed_only_where_a_column_would_be_computed_twice():
    """plan.render_steps: a step whose columns the next (fenced) step reads once needs no
    fence, even when that step reuses their names (a0 := a0 / n); the step whose columns
    the outputs read twice does."""
    from rulegen.targets.sql.plan import Col, Output, Step, render_steps

    steps = [Step("sum", [Col("a0", "big0", frozenset(), cost=80.0), Col("a1", "big1", frozenset(), cost=80.0)]),
             Step("mean", [Col("a0", '"a0" / 10', frozenset({"a0"})), Col("a1", '"a1" / 10', frozenset({"a1"}))])]
    outputs = [Output("prediction", 'CASE WHEN "a0" >= "a1" THEN 0 ELSE 1 END', frozenset({"a0", "a1"})),
               Output("prob_0", '"a0"', frozenset({"a0"})), Output("prob_1", '"a1"', frozenset({"a1"}))]
    rendered, _ = render_steps(steps, outputs, [], "", False, "OFFSET 0", lambda n: 1.0)
    assert [r.fence for r in rendered] == ["", "OFFSET 0"]
