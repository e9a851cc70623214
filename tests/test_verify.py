"""`rulegen verify` and `rulegen explain`: the real toolchain or import, the evaluator's answer
bit for bit, a broken build caught at its first bad row, and a row's path as the evaluator
takes it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import irfixtures as F
import numpy as np
import pytest
from run_c import have_cc

import rulegen
from rulegen.cli import main
from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import Blend, Leaf, Split, Surrogates, Target, Tree
from rulegen.ir.serialize import dumps
from rulegen.verify import verify
from rulegen.verify.explain import explain

ROOT = Path(__file__).resolve().parents[1]
IRIS = ROOT / "examples" / "iris.csv"
needs_cc = pytest.mark.skipif(not have_cc(), reason="no C compiler (cc) on PATH")


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def iris_model(tmp_path, capsys) -> Path:
    path = tmp_path / "iris.json"
    code, _, err = run(capsys, "fit", IRIS, "--target", "class", "--param", "random_state=0", "-o", path)
    assert code == 0, err
    return path


# --- verify ------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["python", pytest.param("c", marks=needs_cc)])
def test_verify_passes_with_a_count(iris_model, capsys, target):
    code, out, err = run(capsys, "verify", iris_model, IRIS, "--target", target)
    assert code == 0, err
    m = re.search(r"all (\d+) rows \(150 from .*, (\d+) probes\) equal the evaluator bit for bit", out)
    assert m and int(m.group(2)) > 50 and int(m.group(1)) == 150 + int(m.group(2)), out


@needs_cc
def test_verify_catches_fast_math_and_names_the_first_bad_row(iris_model, capsys):
    """-ffast-math lets the compiler assume no NaN: a missing value takes the wrong branch."""
    code, out, err = run(capsys, "verify", iris_model, IRIS, "--target", "c", "--cflags", "-O2 -ffast-math")
    assert code == 1, (out, err)
    lines = out.splitlines()
    assert re.match(r".*: c: row \d+ of \d+ differs \(probe row: \w+ = nan, the other values from .*iris.csv:\d+\)",
                    lines[0]), lines[0]
    assert "the evaluator" in lines[1] and "missing: the default branch" in out
    assert lines[-1].strip().startswith("prediction:")


def test_verify_catches_a_hand_edited_module(monkeypatch):
    """A test edited in the generated Python (< to <=, or <= to <) shows up on the probe row
    that sits exactly on its threshold."""
    model = F.all_models()["regressor"]
    real = rulegen.generate

    def edited(m, target, **kw):
        files = real(m, target, **kw)
        (name, text), = files.items()
        m = re.compile(r"x\[\d+\]\)? (<=|<) ").search(text, text.index("def predict_raw"))
        flipped = "<" if m.group(1) == "<=" else "<="
        return {name: text[:m.start(1)] + flipped + text[m.end(1):]}

    monkeypatch.setattr(rulegen, "generate", edited)
    report = verify(model, F.probe_rows(model, limit=50), "python")
    assert not report.ok and "raw scores: python gives" in report.what
    x = report.rows[report.first_bad]
    assert any(x[f] in F.thresholds(model).get(f, ()) for f in range(len(model.features)))


@pytest.mark.parametrize("target", ["python", pytest.param("c", marks=needs_cc)])
def test_verify_passes_on_every_fixture_model(target):
    for name, model in F.all_models().items():
        report = verify(model, F.probe_rows(model, n_random=30, limit=120), target)
        assert report.ok, (name, report.first_bad, report.what)
        assert report.n_probes > 10


def test_verify_refuses_c_options_for_python_and_a_missing_column(iris_model, tmp_path, capsys):
    code, _, err = run(capsys, "verify", iris_model, IRIS, "--target", "python", "--cflags", "-O2")
    assert code == 2 and "--cflags" in err and "Traceback" not in err
    bad = tmp_path / "bad.csv"
    bad.write_text("sepallength,sepalwidth\n1,2\n")
    code, _, err = run(capsys, "verify", iris_model, bad, "--target", "python")
    assert code == 2 and "no column 'petallength'" in err and len(err.strip().splitlines()) == 1


@needs_cc
def test_verify_reports_a_compiler_error_in_one_line(iris_model, capsys):
    code, _, err = run(capsys, "verify", iris_model, IRIS, "--target", "c", "--cflags", "-std=c99 -Wnonsense-flag -Werror")
    assert code == 2 and err.startswith("rulegen: error: ") and "failed" in err
    assert len(err.strip().splitlines()) == 1


def test_help_has_examples(capsys):
    for cmd in ("verify", "explain"):
        code, out, _ = run(capsys, cmd, "--help")
        assert code == 0 and "Examples:" in out and f"rulegen {cmd} " in out


# --- explain -----------------------------------------------------------------------------------


def _leaf_ids(model, t: int):
    """Tree t alone, each leaf's value its node id (the raw score names the leaf reached)."""
    tree = model.trees[t]
    nodes = tuple(dataclasses.replace(nd, value=(float(i),)) if isinstance(nd, Leaf) else nd
                  for i, nd in enumerate(tree.nodes))
    return dataclasses.replace(model, target=Target("regression"), trees=(Tree(nodes),), base_score=(0.0,),
                               aggregation="sum", link="identity", dtype="float64")


def _leaves_shown(lines: list[str]) -> list[list[int]]:
    out: list[list[int]] = []
    for line in lines:
        if re.match(r"tree \d+", line):
            out.append([])
        m = re.match(r"\s+node (\d+): leaf", line)
        if m:
            out[-1].append(int(m.group(1)))
    return out


def test_explain_shows_the_evaluators_leaf_in_every_tree():
    """On probe rows of random models (every split kind and missing rule but blends), the one
    leaf explain shows per tree is the leaf the evaluator reaches."""
    seen = 0
    for seed in range(8):
        model = F.random_model(seed)
        if any(isinstance(n, Split) and isinstance(n.missing, Blend) for t in model.trees for n in t.nodes):
            continue
        X = F.probe_rows(model, n_random=20, limit=80)
        want = np.stack([ev.raw_scores(_leaf_ids(model, t), X)[:, 0] for t in range(len(model.trees))], axis=1)
        for x, w in zip(X, want):
            shown = _leaves_shown(explain(model, x))
            assert [s for s in shown] == [[int(v)] for v in w]
            seen += 1
    assert seen > 200


def test_explain_says_why_for_missing_and_unseen_values():
    model = F.every_construct()
    text = "\n".join(explain(model, np.full(len(model.features), np.nan)))
    assert "missing: the default branch" in text
    raw = ev.raw_scores(model, np.full((1, len(model.features)), np.nan))[0]
    assert "raw (sum in float64, base 0.0, 0.0): " + ", ".join(map(repr, map(float, raw))) in text
    texts = ["\n".join(explain(model, x)) for x in F.probe_rows(model, n_random=100)]
    rules = {type(n.missing) for t in model.trees for n in t.nodes if isinstance(n, Split)}
    assert Blend in rules and Surrogates in rules
    assert any("every branch, weighted" in t and "(path weight" in t for t in texts)
    assert any("missing: surrogate 1," in t for t in texts)
    assert any("unseen value: the model's route for it" in t for t in texts)


def test_explain_cli_rows(iris_model, tmp_path, capsys):
    code, out, err = run(capsys, "explain", iris_model, "--row", "sepallength=5.1", "--row", "sepalwidth=3.5",
                         "--row", "petallength=1.4", "--row", "petalwidth=0.2")
    assert code == 0, err
    assert out.splitlines()[0] == "row: sepallength=5.1, sepalwidth=3.5, petallength=1.4, petalwidth=0.2"
    assert out.splitlines()[-1] == "prediction: Iris-setosa"
    code, out2, err = run(capsys, "explain", iris_model, "--row", "5.1,3.5,1.4,0.2")
    assert code == 0 and out2 == out
    code, out3, err = run(capsys, "explain", iris_model, "--row", "5.1,3.5,,0.2")
    assert code == 0 and "petallength=missing" in out3
    code, out4, err = run(capsys, "explain", iris_model, "--data", IRIS, "--index", 0)
    assert code == 0 and out4.splitlines()[1:] == out.splitlines()
    code, _, err = run(capsys, "explain", iris_model, "--row", "petal_len=1")
    assert code == 2 and "no feature 'petal_len'" in err and "did you mean" in err
    code, _, err = run(capsys, "explain", iris_model, "--data", IRIS, "--index", 150)
    assert code == 2 and "150 data rows" in err
    code, _, err = run(capsys, "explain", iris_model)
    assert code == 2 and "--row" in err


def test_explain_walks_a_deep_chain_without_recursion():
    model = F.chain(2500)
    lines = explain(model, np.array([1e9, 1e9, 1e9]))
    nodes = [line for line in lines if line.lstrip().startswith("node ")]
    assert len(nodes) == 2501 and nodes[-1].strip() == "node 5000: leaf, adds -1.0"  # every split on the way
    assert lines[-1] == "prediction (identity): -1.0"


def test_verify_model_file_round_trip(tmp_path, capsys):
    """verify reads any model file rulegen reads: an IR file written from a fixture."""
    model = F.all_models()["sigmoid_ensemble"]
    path = tmp_path / "m.json"
    path.write_text(dumps(model))
    data = tmp_path / "d.csv"
    X = F.probe_rows(model, n_random=20, limit=40)
    rows = F.labels_for(model, X)
    data.write_text(",".join(f.name for f in model.features) + "\n" + "".join(
        ",".join("" if v is None else repr(v) for v in r) + "\n" for r in rows))
    code, out, err = run(capsys, "verify", path, data, "--target", "python")
    assert code == 0, err


# --- SQL -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
def test_verify_sql_passes_on_every_fixture_model(dialect):
    if dialect == "duckdb":
        pytest.importorskip("duckdb")
    for name, model in F.all_models().items():
        report = verify(model, F.probe_rows(model, n_random=30, limit=120), "sql", dialect=dialect)
        assert report.ok, (name, report.first_bad, report.what)


def test_verify_sql_catches_a_hand_edited_query(monkeypatch, iris_model, tmp_path, capsys):
    """A comparison edited in the query (<= to <) fails on the probe row at its threshold;
    a database file is left as it was."""
    from rulegen.targets.sql import SqlTarget

    real = SqlTarget.generate

    def edited(self, model, **kw):
        out = real(self, model, **kw)
        (name, text), = out.items()
        m = re.compile(r" (<=|<) ").search(text, text.index("CASE"))
        flipped = "<" if m.group(1) == "<=" else "<="
        return {name: text[:m.start(1)] + flipped + text[m.end(1):]}

    db = tmp_path / "mine.db"
    import sqlite3

    con = sqlite3.connect(db)
    con.execute("CREATE TABLE keep (a INTEGER)")
    con.commit()
    con.close()
    before = db.read_bytes()
    monkeypatch.setattr(SqlTarget, "generate", edited)
    code, out, err = run(capsys, "verify", iris_model, IRIS, "--target", "sql", "--database", db)
    assert code == 1, (out, err)
    assert "probe row:" in out.splitlines()[0] and "sql gives" in out.splitlines()[1]
    assert db.read_bytes() == before


# --- the source library --------------------------------------------------------------------------


def _library_files(tmp_path):
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    xgb.XGBClassifier(n_estimators=10, max_depth=3, n_jobs=1).fit(X, y).get_booster().save_model(tmp_path / "x.json")
    lgb.LGBMClassifier(n_estimators=10, verbose=-1, n_jobs=1).fit(X, y).booster_.save_model(tmp_path / "l.txt")
    for name, head in (("x.csv", "f"), ("l.csv", "Column_")):
        (tmp_path / name).write_text(",".join(f"{head}{i}" for i in range(4)) + "\n"
                                     + "".join(",".join(map(repr, r)) + "\n" for r in X[:50].tolist()))
    return tmp_path


def test_verify_compares_catboost_and_onnx_files_with_their_library(tmp_path, capsys):
    """A CatBoost .cbm against CatBoost, an skl2onnx file against onnxruntime, on the data's
    rows and the probe rows (NaN, +-inf, every threshold's neighbours); a CatBoost JSON says why
    it is not compared (CatBoost reads its own JSON inexactly)."""
    catboost = pytest.importorskip("catboost")
    pytest.importorskip("onnxruntime")
    skl2onnx = pytest.importorskip("skl2onnx")
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    y = X[:, 0] + X[:, 1] * X[:, 2]
    cb = catboost.CatBoostRegressor(iterations=20, depth=4, thread_count=1, random_seed=0,
                                    allow_writing_files=False, verbose=0).fit(X, y)
    cb.save_model(str(tmp_path / "c.cbm"))
    cb.save_model(str(tmp_path / "c.json"), format="json")
    rf = RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(X, y)
    onx = skl2onnx.to_onnx(rf, X[:1], target_opset={"": 17, "ai.onnx.ml": 3})
    (tmp_path / "r.onnx").write_bytes(onx.SerializeToString())
    for name in ("c.cbm", "c.json", "r.onnx"):
        head = "x" if name.endswith(".onnx") else "f"
        (tmp_path / f"{name}.csv").write_text(
            ",".join(f"{head}{i}" for i in range(4)) + "\n"
            + "".join(",".join(map(repr, r)) + "\n" for r in X[:40].tolist()))
    for name, lib in (("c.cbm", "CatBoost [\\d.]+'s raw values"), ("r.onnx", "onnxruntime [\\d.]+'s scores")):
        code, out, err = run(capsys, "verify", tmp_path / name, tmp_path / f"{name}.csv", "--target", "python")
        assert code == 0, err
        assert re.search(rf"the evaluator equals {lib} on all \d+ rows", out), out
    code, out, err = run(capsys, "verify", tmp_path / "c.json", tmp_path / "c.json.csv", "--target", "python")
    assert code == 0 and "not compared with the library: CatBoost reads its own JSON" in out, out


def test_verify_compares_an_imported_model_with_its_library(tmp_path, capsys, monkeypatch):
    d = _library_files(tmp_path)
    for model, data, lib in (("x.json", "x.csv", "XGBoost"), ("l.txt", "l.csv", "LightGBM")):
        code, out, err = run(capsys, "verify", d / model, d / data, "--target", "python")
        assert code == 0, err
        assert re.search(rf"the evaluator equals {lib} [\d.]+'s (margins|raw scores) on all \d+ rows", out), out
    from rulegen.verify import library

    real = library.raw_scores

    def off(path, model, X):
        got, what = real(path, model, X)
        got = got.copy()
        got[7, 0] = np.nextafter(np.float32(got[7, 0]), np.float32(np.inf))  # one float32 step
        return got, what

    monkeypatch.setattr(library, "raw_scores", off)
    code, out, err = run(capsys, "verify", d / "x.json", d / "x.csv", "--target", "python")
    assert code == 1 and "row 8: the evaluator gives" in out


def test_verify_sql_in_postgresql_through_a_connection_string(iris_model, capsys):
    """The tests' private PostgreSQL server (tests/engines.py), reached by its DSN as a user would."""
    pytest.importorskip("psycopg")
    from engines import engine

    dsn = engine("postgres").connection().info.dsn
    for name, model in F.all_models().items():
        report = verify(model, F.probe_rows(model, n_random=30, limit=120), "sql", dialect="postgres", database=dsn)
        assert report.ok, (name, report.first_bad, report.what)
    code, out, err = run(capsys, "verify", iris_model, IRIS, "--target", "sql", "--dialect", "postgres",
                         "--database", dsn)
    assert code == 0 and "equal the evaluator bit for bit" in out, err
    code, _, err = run(capsys, "verify", iris_model, IRIS, "--target", "sql", "--dialect", "postgres",
                       "--database", "host=/nonexistent dbname=nothing")
    assert code == 2 and "cannot connect to PostgreSQL" in err and len(err.strip().splitlines()) == 1
