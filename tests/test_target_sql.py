"""SQL target: generate, run in real SQLite and DuckDB (PostgreSQL when a server can be
started), compare with the evaluator bit for bit."""

from __future__ import annotations

import dataclasses
import math
import time

import engines
import irfixtures as fx
import numpy as np
import pytest
from engines import engine
from run_sql import ENGINES, check_sql, compare, connect, expected, fragment, row_column, run_sql

from rulegen.codegen.lower import float64_bound
from rulegen.errors import RulegenError, UnsupportedFeatureError
from rulegen.ir.nodes import (
    Blend,
    CategoricalTest,
    DefaultChild,
    Feature,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Split,
    Surrogate,
    Surrogates,
    Target,
    Tree,
)
from rulegen.ir.validate import validate
from rulegen.targets.sql.dialects import DIALECTS
from rulegen.targets.sql.dialects import base as sd
from rulegen.targets.sql import SqlTarget

import duckdb  # noqa: E402,F401 - a declared test dependency: fail, never skip
# every model in every engine: SQLite, DuckDB with NULL and with NaN, the others with both
MATRIX = ["sqlite", "duckdb", "duckdb-nan"] + [f"{e}-mixed" for e in ENGINES if e not in ("sqlite", "duckdb")]
# the evaluator itself warns when exp_overflow's float32 output rounds to infinity
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")


# --- models beyond the shared fixtures ---------------------------------------------------


def _f32(v):
    return float(np.float32(v))


def _random_split(rng, feats, allow_blend=True):
    """A random test with a random missing rule (every kind the IR has)."""
    num = [i for i, f in enumerate(feats) if f.kind == "numeric"]
    cat = [i for i, f in enumerate(feats) if f.kind == "categorical"]

    def binary():
        r = rng.random()
        if r < 0.45:
            t = float(np.round(rng.normal(), 1))
            if rng.random() < 0.4:
                return NumericTest(int(rng.choice(num)), rng.choice(["<", "<="]), _f32(t), "float32")
            return NumericTest(int(rng.choice(num)), rng.choice(["<", "<="]), t)
        if r < 0.75:
            f = int(rng.choice(cat))
            n = len(feats[f].categories)
            codes = sorted({int(c) for c in rng.choice(n, size=int(rng.integers(1, n)), replace=False)})
            return CategoricalTest(f, tuple(codes))
        fs = tuple(int(x) for x in rng.choice(num, size=2, replace=False))
        return ObliqueTest(fs, (float(np.round(rng.normal(), 2)), float(np.round(rng.normal(), 2))),
                           rng.choice(["<", "<="]), float(np.round(rng.normal(), 1)))

    r = rng.random()
    if r < 0.15:
        dtype = "float32" if rng.random() < 0.5 else "float64"
        bounds = sorted({float(np.round(b, 1)) for b in rng.normal(size=int(rng.integers(1, 4)))})
        bounds = [_f32(b) for b in bounds] if dtype == "float32" else bounds
        test = IntervalTest(int(rng.choice(num)), rng.choice(["<", "<="]), tuple(bounds), dtype)
    elif r < 0.3:
        f = int(rng.choice(cat))
        n = len(feats[f].categories)
        perm = [int(c) for c in rng.permutation(n)]
        k = int(rng.integers(2, 4))
        cuts = sorted(rng.choice(range(1, n), size=min(k - 1, n - 1), replace=False)) if n > 1 else []
        groups = [tuple(sorted(int(x) for x in g)) for g in np.split(np.asarray(perm), cuts) if len(g)]
        if rng.random() < 0.5 and len(groups[-1]) > 1:  # leave a code in no group
            groups[-1] = groups[-1][1:]
        test = MultiwayTest(f, tuple(groups))
    else:
        test = binary()
    n_children = {IntervalTest: lambda t: len(t.bounds) + 1, MultiwayTest: lambda t: len(t.groups)}.get(
        type(test), lambda t: 2)(test)
    r = rng.random()
    if r < 0.25 and allow_blend:
        w = [float(x) for x in rng.choice([0.0, 0.25, 0.5, 1.0, 1.5, 0.3], size=n_children)]
        missing = Blend(tuple(w))
    elif r < 0.5 and not isinstance(test, (IntervalTest, MultiwayTest)):
        sur = tuple(Surrogate(binary(), int(rng.integers(2))) for _ in range(int(rng.integers(1, 3))))
        missing = Surrogates(sur, int(rng.integers(2)))
    else:
        missing = DefaultChild(int(rng.integers(n_children)))
    unseen = None
    if isinstance(test, MultiwayTest):
        unseen = int(rng.integers(n_children))
    elif isinstance(test, CategoricalTest) and rng.random() < 0.6:
        unseen = int(rng.integers(2))
    return test, n_children, missing, unseen


def random_tree(rng, feats, depth, width, output=None, weight=1.0, allow_blend=True) -> Tree:
    nodes: list = [None]
    queue = [(0, 0)]
    while queue:
        node_id, d = queue.pop(0)
        if d >= depth or (d > 0 and rng.random() < 0.15):
            nodes[node_id] = Leaf(tuple(float(np.round(v, 3)) for v in rng.random(width)),
                                  samples=float(rng.integers(1, 50)))
            continue
        test, n, missing, unseen = _random_split(rng, feats, allow_blend)
        kids = tuple(range(len(nodes), len(nodes) + n))
        nodes += [None] * n
        nodes[node_id] = Split(test, kids, missing, unseen)
        queue += [(k, d + 1) for k in kids]
    return Tree(tuple(nodes), output, weight)


MIXED_FEATURES = (Feature("n0"), Feature("n1"), Feature("n2"), Feature("n3"),
                  Feature("colour", "categorical", ("red", "green", "blue", "it's")),
                  Feature("grade", "categorical", (10, 20, 30)))


def mixed(kind: str, seed: int) -> Model:
    rng = np.random.default_rng(seed)
    feats = MIXED_FEATURES
    if kind == "softmax":
        trees = tuple(random_tree(rng, feats, 3, 1, output=k, weight=0.5) for _ in range(3) for k in range(3))
        return validate(Model(feats, Target("classification", "y", ("a", "b", "c")), trees,
                              (0.1, -0.2, 0.0), link="softmax"))
    if kind in ("mean", "vote"):
        trees = tuple(random_tree(rng, feats, 4, 3, weight=(1.0 if kind == "mean" else float(w)))
                      for w in rng.choice([0.5, 1.0, 2.0], size=6))
        return validate(Model(feats, Target("classification", "y", (1, 2, 3)), trees, (0.0, 0.0, 0.0),
                              aggregation=kind))
    if kind == "sigmoid":
        trees = tuple(random_tree(rng, feats, 4, 1, weight=0.3) for _ in range(5))
        return validate(Model(feats, Target("classification", "y", ("no", "yes")), trees, (-0.5,),
                              link="sigmoid"))
    if kind == "multi":  # multi-output regression; full-vector and single-output trees
        trees = (random_tree(rng, feats, 4, 2), random_tree(rng, feats, 3, 1, output=1, weight=2.0),
                 random_tree(rng, feats, 3, 2, weight=0.7))
        return validate(Model(feats, Target("regression", "y", n_outputs=2), trees, (1.0, -1.0)))
    if kind == "big_blend":  # more leaves than one blend step takes
        tree = random_tree(np.random.default_rng(seed), feats, 9, 2)
        tree = Tree(tuple(dataclasses.replace(n, missing=Blend(tuple([0.6, 0.4] + [0.0] * (len(n.children) - 2))))
                          if isinstance(n, Split) else n for n in tree.nodes))
        return validate(Model(feats, Target("classification", "y", ("a", "b")), (tree,), (0.0, 0.0)))
    raise ValueError(kind)


def edge_models() -> dict[str, Model]:
    one = (Feature("x"),)
    out = {
        "single_leaf": validate(Model(one, Target("regression", "y"), (Tree((Leaf((2.5,)),)),), (0.5,))),
        "exp_overflow": validate(Model(one, Target("regression", "y"), (Tree((
            Split(NumericTest(0, "<", 0.0), (1, 2), DefaultChild(0)), Leaf((1000.0,)), Leaf((100.0,)))),),
            (0.0,), link="exp")),
        "sigmoid_extremes": validate(Model(one, Target("classification", "y", (0, 1)), (Tree((
            Split(NumericTest(0, "<", 0.0), (1, 2), DefaultChild(1)), Leaf((-800.0,)), Leaf((40.0,)))),),
            (0.0,), link="sigmoid")),
        "binary_identity": validate(Model(one, Target("classification", "y", ("n", "p")), (Tree((
            Split(NumericTest(0, "<=", 1.0), (1, 2), DefaultChild(0)), Leaf((0.25,)), Leaf((1e-30,)))),),
            (0.0,))),
        "vote_ties": validate(Model(one, Target("classification", "y", ("a", "b", "c")), (
            Tree((Split(NumericTest(0, "<", 0.5), (1, 2), DefaultChild(0)), Leaf((0.5, 0.5, 0.0)),
                  Leaf((1e-320, 2e-320, 0.0))), None, 1e-5),  # weight * value: a tie at 0.0
            Tree((Split(NumericTest(0, "<", -0.5), (1, 2), DefaultChild(1)), Leaf((0.2, 0.3, 0.3)),
                  Leaf((0.0, 0.0, 0.0))), None, 1.0)), (0.0, 0.0, -0.0), aggregation="vote")),
    }
    for kind, seed in [("softmax", 11), ("mean", 12), ("vote", 13), ("sigmoid", 14), ("multi", 15),
                       ("big_blend", 16)]:
        out[f"mixed_{kind}"] = mixed(kind, seed)
    return out


def zigzag_chain(depth: int = 2500) -> Model:
    """A depth-`depth` chain whose paths never become impossible: intervals on three
    features narrow from both ends, so every leaf keeps a real condition."""
    feats = (Feature("p"), Feature("q"), Feature("r"))
    nodes: list = []
    for i in range(depth):
        f, k, me = i % 3, i // 3, len(nodes)
        if k % 2 == 0:  # leaf below lo_k, chain above
            t = -1000.0 + k * 0.1
            test = NumericTest(f, "<", _f32(t), "float32") if i % 5 == 4 else NumericTest(f, "<", t)
            nodes += [Split(test, (me + 1, me + 2), DefaultChild(i % 2)), Leaf((float(i),))]
        else:  # chain below hi_k, leaf above
            nodes += [Split(NumericTest(f, "<=", 1000.0 - k * 0.1), (me + 2, me + 1), DefaultChild(i % 2)),
                      Leaf((float(i),))]
    nodes.append(Leaf((-1.0,)))
    return validate(Model(feats, Target("regression", "z"), (Tree(tuple(nodes)),), (0.0,)))


def as_float32(model: Model) -> Model:
    return validate(dataclasses.replace(model, dtype="float32"))


# --- probe rows -------------------------------------------------------------------------------


def bound_rows(model: Model, X: np.ndarray, limit: int = 1500) -> np.ndarray:
    """Rows exactly on (and one step either side of) every float64 bound the SQL compares
    with: for float32 tests these are midpoints probe_rows never hits (at most ``limit``)."""
    extra = []
    base = X[: min(len(X), 50)]
    rng = np.random.default_rng(7)
    for tree in model.trees:
        for node in tree.nodes:
            if not isinstance(node, Split):
                continue
            tests = [node.test] + ([s.test for s in node.missing.surrogates]
                                   if isinstance(node.missing, Surrogates) else [])
            for t in tests:
                pairs = []
                if isinstance(t, NumericTest):
                    pairs = [(t.feature, float64_bound(t.op, t.threshold, t.dtype)[1])]
                elif isinstance(t, IntervalTest):
                    pairs = [(t.feature, float64_bound(t.op, b, t.dtype)[1]) for b in t.bounds]
                for f, b in pairs:
                    for v in (b, math.nextafter(b, -math.inf), math.nextafter(b, math.inf)):
                        if math.isfinite(v):
                            row = base[int(rng.integers(len(base)))].copy()
                            row[f] = v
                            extra.append(row)
    if len(extra) > limit:
        extra = [extra[i] for i in sorted(rng.choice(len(extra), limit, replace=False))]
    return np.vstack([X] + extra) if extra else X


def sparse_rows(model: Model, X: np.ndarray, n: int = 300) -> np.ndarray:
    """Rows with half their cells missing, so surrogate cascades and nested blends run out
    of features (probe_rows blanks 10% of cells)."""
    rng = np.random.default_rng(11)
    rows = X[rng.integers(len(X), size=n)].copy()
    rows[rng.random(rows.shape) < 0.5] = np.nan
    return np.vstack([X, rows])


def rows_for(model: Model, limit: int | None = None) -> np.ndarray:
    return sparse_rows(model, bound_rows(model, fx.probe_rows(model, limit=limit)))


ALL = {**fx.all_models(), **edge_models()}


# --- every model x engine ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["model", "float32"])
@pytest.mark.parametrize("engine", MATRIX)
@pytest.mark.parametrize("name", sorted(ALL))
def test_model_matches_evaluator(name, engine, dtype):
    model = ALL[name] if dtype == "model" else as_float32(ALL[name])
    dialect, _, missing = engine.partition("-")
    X = rows_for(model)
    try:
        check_sql(model, X, dialect, missing=missing or "null")
    except UnsupportedFeatureError as e:
        # an engine without infinity (MariaDB) refuses a model only where the evaluator
        # really gives an infinity on these rows
        assert not engines.engine(dialect).has_infinity and "infinity" in str(e), e
        want = expected(model, X, dialect)
        assert any(np.isinf(v).any() for k, v in want.items() if k != "prediction"), e


@pytest.mark.parametrize("dialect", ENGINES)
def test_chain_2500(dialect):
    model = fx.chain(2500)
    t = time.perf_counter()
    SqlTarget().generate(model, dialect=dialect)
    print(f"chain(2500) {dialect}: generated in {time.perf_counter() - t:.2f}s")
    check_sql(model, rows_for(model, limit=3000), dialect)


@pytest.mark.parametrize("dialect", ENGINES)
def test_zigzag_chain_2500(dialect):
    model = zigzag_chain(2500)
    sql = SqlTarget().generate(model, dialect=dialect)["model.sql"]
    assert sql.count("WHEN ") >= 2400  # one arm per leaf: the paths do not collapse
    check_sql(model, rows_for(model, limit=3000), dialect)


@pytest.mark.parametrize("dialect", ENGINES)
def test_big_ensemble_1000(dialect):
    model = fx.big_ensemble(1000)
    t = time.perf_counter()
    sql = SqlTarget().generate(model, dialect=dialect, raw=True,
                               passthrough=[row_column(model)])["model.sql"]
    gen = time.perf_counter() - t
    X = fx.probe_rows(model, limit=2000)
    t = time.perf_counter()
    res = run_sql(sql, model, fx.labels_for(model, X), dialect)
    print(f"big_ensemble(1000) {dialect}: generated in {gen:.2f}s, "
          f"{len(sql) // 1024} KiB, loaded and ran in {time.perf_counter() - t:.2f}s")
    compare(res, model, X)


def test_sqlite_float32_ensemble_uses_one_step_per_tree():
    model = as_float32(fx.big_ensemble(120))
    sql = SqlTarget().generate(model, dialect="sqlite")["model.sql"]
    assert sql.count(": accumulate") == 120
    check_sql(model, fx.probe_rows(model, limit=800), "sqlite")


# --- forms and options --------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ENGINES)
@pytest.mark.parametrize("name", ["every_construct", "softmax_f32", "forest_vote", "adversarial_names",
                                  "mixed_multi", "regressor"])
def test_expressions_only(name, dialect):
    """The fragment runs inside a user's own SELECT and gives the same columns."""
    model = ALL[name]
    X = rows_for(model, limit=300)
    frag = fragment(model, dialect, raw=True)
    if frag is None:
        return  # refused (ClickHouse)
    assert not frag.rstrip().endswith(";")
    q = DIALECTS[dialect].quote
    cols = ", ".join(map(q, [row_column(model)] + [f.name for f in model.features]))
    sql = f"SELECT {cols},\n{frag}\nFROM {q('data')} AS {q('t')}"
    res = run_sql(sql, model, fx.labels_for(model, X), dialect)
    compare(res, model, X)


def test_comments_switch_and_provenance():
    model = fx.every_construct()
    with_c = SqlTarget().generate(model)["model.sql"]
    assert "/* tree 0 leaf" in with_c
    without = SqlTarget().generate(model, comments=False)["model.sql"]
    assert "/*" not in without and "*/" not in without
    check_sql(model, rows_for(model), "sqlite", comments=False)


def test_deterministic():
    for name, model in ALL.items():
        for dialect in DIALECTS:
            try:
                a = SqlTarget().generate(model, dialect=dialect, raw=True)
            except UnsupportedFeatureError:
                continue  # MariaDB's refusals: test_model_matches_evaluator
            b = SqlTarget().generate(dataclasses.replace(model), dialect=dialect, raw=True)
            assert a == b, name


def test_unknown_dialect():
    with pytest.raises(RulegenError, match="sqlite, duckdb, postgres"):
        SqlTarget().generate(fx.regressor(), dialect="oracle")


def test_output_columns_and_passthrough():
    model = fx.adversarial_names()
    sql = SqlTarget().generate(model, table='my "table"', passthrough=["id"], raw=True)["model.sql"]
    con = connect("sqlite")
    con.execute('CREATE TABLE "my ""table""" ("id" INTEGER, ' + ", ".join(
        '"' + f.name.replace('"', '""') + '" ' + ("TEXT" if f.kind == "categorical" else "REAL")
        for f in model.features) + ")")
    con.execute('INSERT INTO "my ""table""" VALUES (7, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, \'it''s\')')
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    assert names == ["id"] + [f.name for f in model.features] + ["prediction"] + [
        f"prob_{c}" for c in model.target.classes] + ["raw_0", "raw_1", "raw_2"]
    assert cur.fetchone()[0] == 7


def test_internal_names_avoid_user_names():
    feats = (Feature("_rg_x0"), Feature("_RG_S0"), Feature("_rg_a0"))
    tree = Tree((Split(NumericTest(0, "<", 0.5), (1, 2), DefaultChild(0)),
                 Split(ObliqueTest((1, 2), (1.0, -1.0), "<=", 0.0), (3, 4), DefaultChild(1)),
                 Leaf((1.0,)), Leaf((2.0,)), Leaf((3.0,))))
    model = validate(Model(feats, Target("regression", "y"), (tree, tree), (0.0,)))
    sql = SqlTarget().generate(model, table="_rg1_s0")["model.sql"]
    assert '"_rg2_' in sql
    for dialect in ENGINES:
        check_sql(model, rows_for(model), dialect, table="_rg1_s0")


def test_float32_overflow_is_refused():
    feats = (Feature("x"),)
    tree = Tree((Split(NumericTest(0, "<", 0.0), (1, 2), DefaultChild(0)), Leaf((3e38,)), Leaf((1.0,))))
    model = validate(Model(feats, Target("regression", "y"), (tree, tree), (0.0,), dtype="float32"))
    with pytest.raises(UnsupportedFeatureError):
        SqlTarget().generate(model, dialect="duckdb")


# --- float32 rounding helpers against numpy ---------------------------------------------------


def _f32_cases() -> np.ndarray:
    rng = np.random.default_rng(3)
    vals = [0.0, -0.0, math.inf, -math.inf, sd.F32_OVERFLOW, math.nextafter(sd.F32_OVERFLOW, 0),
            sd.F32_ZERO, math.nextafter(sd.F32_ZERO, 1), 2.0**-149, 1.5 * 2.0**-149, 2.5 * 2.0**-149,
            2.0**-126, math.nextafter(2.0**-126, 0), 1e-300, 5e-324, 1e300]
    for e in range(-150, 129, 3):  # ties and near-ties in every binade, normal and subnormal
        m = rng.integers(2**23, 2**24, 40).astype(np.float64)
        for extra in (0.5, -0.5, 0.5 + 2.0**-20, 0.25):
            vals += list((m + extra) * 2.0 ** (e - 23))
    vals += list(rng.standard_normal(2000) * 10.0 ** rng.integers(-45, 39, 2000))
    vals = np.asarray(vals)
    return np.concatenate([vals, -vals])


@pytest.mark.parametrize("dialect", ENGINES)
def test_f32_round_matches_numpy(dialect):
    vals = _f32_cases()
    e = engine(dialect)
    if not e.has_infinity:
        # no infinity to load or to round to: MariaDB's cast saturates at FLT_MAX there, so
        # the query keeps rounded values below overflow (test_mariadb.py); the rest is exact
        vals = vals[np.abs(vals) < sd.F32_OVERFLOW]
    con = e.connection()
    e.load(con, "v", [("x", "numeric")], [[float(v)] for v in vals])
    d = DIALECTS[dialect]
    expr = d.f32_round(d.quote("x"))
    _, rows = e.fetch(con, f"SELECT {d.to_double(expr)} FROM {d.quote('v')}")
    got = np.array([r[0] for r in rows], dtype=np.float64)
    with np.errstate(over="ignore"):
        want = vals.astype(np.float32).astype(np.float64)
    assert np.array_equal(got, want)


def test_sqlite_veltkamp_on_float32_sums():
    """f32_sum (no subnormal or overflow branch) is exact for sums of two float32 values."""
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(20000) * 10.0 ** rng.integers(-40, 38, 20000)).astype(np.float32)
    shift = 2.0 ** -rng.integers(0, 40, 20000)
    b = (a * shift * rng.choice([-1, 1], 20000)).astype(np.float32)
    with np.errstate(over="ignore"):
        want = (a + b).astype(np.float64)
    con = connect("sqlite")
    con.execute("CREATE TABLE v (a REAL, b REAL)")
    con.executemany("INSERT INTO v VALUES (?, ?)", [(float(x), float(y)) for x, y in zip(a, b)])
    got = np.array([r[0] for r in con.execute(
        f"SELECT {DIALECTS['sqlite'].f32_sum('a + b')} FROM v").fetchall()])
    ok = np.isfinite(want)
    assert np.array_equal(got[ok], want[ok])


# --- PostgreSQL (a throwaway server) -----------------------------------------------------------


@pytest.fixture(scope="module")
def pg_conn():
    """The process-wide throwaway server (tests/pgserver.py: temp dir, Unix socket only).
    Skipped with the reason when it cannot start; under CI (``CI`` set) that is a failure."""
    from run_sql import postgres_connection

    return postgres_connection()


@pytest.mark.parametrize("dtype", ["model", "float32"])
@pytest.mark.parametrize("missing", ["null", "nan"])
@pytest.mark.parametrize("name", sorted(ALL))
def test_postgres_matches_evaluator(pg_conn, name, missing, dtype):
    model = ALL[name] if dtype == "model" else as_float32(ALL[name])
    check_sql(model, rows_for(model), "postgres", conn=pg_conn, missing=missing)


def test_postgres_scale_and_expressions(pg_conn):
    """The depth-2,500 chains and the 1,000-tree ensemble, with the server's default JIT."""
    for model in (zigzag_chain(2500), fx.chain(2500), fx.big_ensemble(1000)):
        check_sql(model, fx.probe_rows(model, limit=1500), "postgres", conn=pg_conn)
    model = ALL["every_construct"]
    X = rows_for(model, limit=300)
    frag = SqlTarget().generate(model, dialect="postgres", expressions_only=True, raw=True)["model.sql"]
    cols = ", ".join('"' + n + '"' for n in [row_column(model)] + [f.name for f in model.features])
    res = run_sql(f'SELECT {cols},\n{frag}\nFROM "data"', model, fx.labels_for(model, X), "postgres",
                  conn=pg_conn)
    compare(res, model, X)


def test_qualified_table_name():
    model = fx.regressor()
    sql = SqlTarget().generate(model, table=("aux", "my table"))["model.sql"]
    assert 'FROM "aux"."my table"' in sql
    con = connect("sqlite")
    con.execute("ATTACH ':memory:' AS aux")
    con.execute('CREATE TABLE aux."my table" ("x1" REAL, "x2" REAL)')
    con.execute('INSERT INTO aux."my table" VALUES (1.0, 2.0), (NULL, -1.0)')
    got = con.execute(sql).fetchall()
    assert [r[2] for r in got] == [1e-300, 0.30000000000000004]  # as the evaluator says


def test_output_names_cannot_shadow_input_columns():
    from rulegen.errors import RulegenError
    from rulegen.ir.nodes import Feature

    model = fx.regressor()
    clash = dataclasses.replace(model, features=(Feature("Prediction"), model.features[1]))
    with pytest.raises(RulegenError, match="same name as the input column 'Prediction'"):
        SqlTarget().generate(clash, dialect="sqlite")
    SqlTarget().generate(clash, dialect="sqlite", expressions_only=True)  # the caller aliases
