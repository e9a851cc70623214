"""The command line: the README's main job, exit codes, one-line errors, atomic writes."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rulegen.cli import main
from rulegen.data import feature_matrix, read_csv
from rulegen.ir import evaluate
from rulegen.modelio import load_model

ROOT = Path(__file__).resolve().parents[1]
IRIS = ROOT / "examples" / "iris.csv"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def iris_model(tmp_path, capsys) -> Path:
    path = tmp_path / "iris.json"
    code, _, err = run(capsys, "fit", IRIS, "--target", "class", "--param", "random_state=0",
                       "-o", path)
    assert code == 0, err
    return path


def test_fit_check_predict(iris_model, tmp_path, capsys):
    model = load_model(iris_model)
    assert model.target.name == "class"
    assert [f.name for f in model.features] == ["sepallength", "sepalwidth", "petallength",
                                                "petalwidth"]
    code, out, _ = run(capsys, "check", iris_model)
    assert code == 0 and "ok: classification (3 classes), 4 features, 1 tree" in out
    preds = tmp_path / "p.csv"
    code, _, _ = run(capsys, "predict", iris_model, IRIS, "-o", preds)
    assert code == 0
    rows = list(csv.reader(preds.open()))
    assert rows[0] == ["prediction", "prob_Iris-setosa", "prob_Iris-versicolor",
                       "prob_Iris-virginica"]
    X = feature_matrix(model, read_csv(IRIS))
    expected = evaluate.predict_proba(model, X)
    got = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    assert np.array_equal(got, expected)
    truth = [r[-1] for r in csv.reader(IRIS.open())][1:]
    accuracy = np.mean([r[0] == t for r, t in zip(rows[1:], truth)])
    assert accuracy > 0.99  # an unpruned tree fits iris almost perfectly


@pytest.mark.parametrize("target,extra,expect", [
    ("python", ["-o", "{d}/m.py"], ["m.py"]),
    ("sql", ["--dialect", "duckdb", "-o", "{d}/m.sql"], ["m.sql"]),
    ("c", ["-o", "{d}/cdir"], ["cdir/iris.h", "cdir/iris.c"]),
    ("c", ["-o", "{d}/flower.c"], ["flower.h", "flower.c"]),
])
def test_compile_writes_where_it_says(iris_model, tmp_path, capsys, target, extra, expect):
    args = [a.format(d=tmp_path) for a in extra]
    code, _, err = run(capsys, "compile", iris_model, "--target", target, *args)
    assert code == 0, err
    for rel in expect:
        assert (tmp_path / rel).is_file(), rel
        assert str(tmp_path / rel) in err  # says where the files went


def _one_line_error(code, err):
    assert code == 2
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err


@pytest.mark.parametrize("content,needle", [
    ('{"format": "rulegen-ir", "version": 1, "features": [', "bad.json: 1:"),
    ('{"format": "rulegen-ir", "version": "one"}', "bad.json: version: expected an integer"),
    ("not a model", "bad.json: not a model file"),
    ('{"learner": {}, "version": [2, 0]}', "bad.json: learner"),
    ('{"hello": 1}', "neither a rulegen IR model"),
])
def test_bad_model_files(tmp_path, capsys, content, needle):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    out = tmp_path / "out.py"
    code, _, err = run(capsys, "compile", bad, "--target", "python", "-o", out)
    _one_line_error(code, err)
    assert needle in err
    assert not out.exists()


def test_ill_typed_node_names_json_path(iris_model, tmp_path, capsys):
    d = json.loads(iris_model.read_text())
    d["trees"][0]["nodes"][0]["test"]["threshold"] = "high"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    code, _, err = run(capsys, "check", bad)
    _one_line_error(code, err)
    assert "trees[0].nodes[0].test.threshold: expected a number" in err


def test_unknown_target_column(tmp_path, capsys):
    code, _, err = run(capsys, "fit", IRIS, "--target", "species", "-o", tmp_path / "m.json")
    _one_line_error(code, err)
    assert "no column 'species'" in err and "class" in err
    assert not (tmp_path / "m.json").exists()


def test_text_in_numeric_column_names_line(tmp_path, capsys, iris_model):
    data = tmp_path / "d.csv"
    lines = IRIS.read_text().splitlines()
    lines[5] = "five," + lines[5].split(",", 1)[1]
    data.write_text("\n".join(lines) + "\n")
    code, _, err = run(capsys, "predict", iris_model, data)
    _one_line_error(code, err)
    assert "d.csv:6: column 'sepallength': 'five' is not a number" in err
    code, _, err = run(capsys, "fit", data, "--target", "class", "-o", tmp_path / "m.json")
    _one_line_error(code, err)
    assert "d.csv:6:" in err and not (tmp_path / "m.json").exists()


def test_ragged_csv_names_line(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("a,b,y\n1,2,x\n3,y\n")
    code, _, err = run(capsys, "fit", data, "--target", "y", "-o", tmp_path / "m.json")
    _one_line_error(code, err)
    assert "d.csv:3: expected 3 fields, got 2" in err


@pytest.mark.parametrize("args,needle", [
    (["--target", "cobol"], "unknown value 'cobol'"),  # (java was the example before it became a target)
    (["--target", "pyhton"], "did you mean 'python'"),
    (["--target", "sql", "--dialect", "oracle"], "unknown value 'oracle'"),
    (["--target", "c", "--dialect", "duckdb"], "--dialect applies to the sql target only"),
])
def test_unknown_target_or_dialect(iris_model, tmp_path, capsys, args, needle):
    code, _, err = run(capsys, "compile", iris_model, *args, "-o", tmp_path / "x")
    _one_line_error(code, err)
    assert needle in err
    assert not (tmp_path / "x").exists()


def test_unwritable_outputs_leave_nothing(iris_model, tmp_path, capsys):
    code, _, err = run(capsys, "compile", iris_model, "--target", "python",
                       "-o", tmp_path / "missing" / "m.py")
    _one_line_error(code, err)
    assert "does not exist" in err
    (tmp_path / "adir").mkdir()
    code, _, err = run(capsys, "compile", iris_model, "--target", "sql", "-o", tmp_path / "adir")
    _one_line_error(code, err)
    assert "is a directory" in err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run(capsys, "fit", IRIS, "--target", "class", "-o", blocker / "m.json")
    _one_line_error(code, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "file", "iris.json"]
    assert list((tmp_path / "adir").iterdir()) == []


def test_failed_compile_keeps_the_old_output(iris_model, tmp_path, capsys):
    out = tmp_path / "m.py"
    out.write_text("# precious\n")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, _, _ = run(capsys, "compile", bad, "--target", "python", "-o", out)
    assert code == 2 and out.read_text() == "# precious\n"


def test_bad_param(tmp_path, capsys):
    code, _, err = run(capsys, "fit", IRIS, "--target", "class", "--param", "max_depht=3",
                       "-o", tmp_path / "m.json")
    _one_line_error(code, err)
    assert "max_depht" in err
    code, _, err = run(capsys, "fit", IRIS, "--target", "class", "--param", "max_depth",
                       "-o", tmp_path / "m.json")
    _one_line_error(code, err)
    assert "KEY=VALUE" in err


@pytest.mark.parametrize("command", ["fit", "compile", "predict", "check"])
def test_help_explains_with_an_example(capsys, command):
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    assert "Example" in out and f"rulegen {command}" in out


def test_regression_fit_and_task_override(tmp_path, capsys):
    data = tmp_path / "step.csv"
    ys = [4.50, 4.75, 4.91, 5.34, 5.80, 7.05, 7.90, 8.23, 8.70, 9.00]
    data.write_text("x,y\n" + "".join(f"{i + 1},{y}\n" for i, y in enumerate(ys)))
    out = tmp_path / "m.json"
    code, _, err = run(capsys, "fit", data, "--target", "y", "--param", "max_depth=1", "-o", out)
    assert code == 0, err
    m = load_model(out)
    assert m.target.task == "regression"
    assert m.trees[0].nodes[0].test.threshold == 5.5


def test_console_script_exit_codes(tmp_path):
    """The installed entry point, as a user runs it: exit 2 and no traceback."""
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    proc = subprocess.run([sys.executable, "-m", "rulegen.cli", "check", str(bad)],
                          capture_output=True, text=True, env={**os.environ, "RULEGEN_DEBUG": ""})
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("form", ["nested", "goto", "table"])
def test_c_form_option(iris_model, tmp_path, capsys, form):
    code, _, err = run(capsys, "compile", iris_model, "--target", "c", "--form", form,
                       "-o", tmp_path / "m.c")
    assert code == 0, err
    assert f"{form} form" in (tmp_path / "m.c").read_text()
    code, _, err = run(capsys, "compile", iris_model, "--target", "python", "--form", form)
    _one_line_error(code, err)


def test_c_precision_positive_only_and_batch_block(iris_model, tmp_path, capsys):
    code, _, err = run(capsys, "compile", iris_model, "--target", "c", "--precision", "float32",
                       "--batch-block", "8", "-o", tmp_path / "f")
    assert code == 0, err
    header = (tmp_path / "f" / "iris.h").read_text()
    # one tree runs its batch a row at a time; test_c_float runs blocks of a forest
    assert "#define iris_PRECISION 32" in header and "void iris_predict_batch(" in header
    assert "const float *features, float *out" in header
    code, _, err = run(capsys, "compile", iris_model, "--target", "c", "--leaves", "-o", tmp_path / "l")
    assert code == 0, err
    assert "iris_predict_leaves" in (tmp_path / "l" / "iris.h").read_text()
    for flag in (["--precision", "float32"], ["--positive-only"], ["--batch-block", "4"], ["--leaves"]):
        code, _, err = run(capsys, "compile", iris_model, "--target", "python", *flag)
        _one_line_error(code, err)
        assert flag[0] in err
    # iris has three classes: no single P(class 1)
    code, _, err = run(capsys, "compile", iris_model, "--target", "c", "--positive-only",
                       "-o", tmp_path / "p")
    _one_line_error(code, err)
    assert "binary classifier" in err and not (tmp_path / "p").exists()
    code, _, err = run(capsys, "compile", iris_model, "--target", "c", "--batch-block", "0")
    _one_line_error(code, err)


def test_text_columns_are_categorical_and_ignore_drops_columns(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("id,colour,x,y\n1,red,0.5,a\n2,blue,1.5,b\n3,red,2.5,b\n4,blue,0.1,a\n")
    code, _, err = run(capsys, "fit", data, "--target", "y", "-o", tmp_path / "m.json")
    assert code == 0, err
    colour = load_model(tmp_path / "m.json").features[1]
    assert (colour.name, colour.kind, colour.categories) == ("colour", "categorical",
                                                             ("blue", "red"))
    code, _, err = run(capsys, "fit", data, "--target", "y", "--ignore", "colour", "--ignore",
                       "id", "-o", tmp_path / "m.rules")
    assert code == 0, err
    assert [f.name for f in load_model(tmp_path / "m.rules").features] == ["x"]
    code, _, err = run(capsys, "fit", data, "--target", "y", "--ignore", "nope", "-o",
                       tmp_path / "n.json")
    _one_line_error(code, err)
    assert "no column 'nope'" in err


def test_a_typo_in_a_numeric_column_is_not_a_category(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("x,y\n1,a\n2,b\nthree,b\n4,a\n")
    code, _, err = run(capsys, "fit", data, "--target", "y", "-o", tmp_path / "m.json")
    _one_line_error(code, err)
    assert "d.csv:4: column 'x': 'three' is not a number" in err and "--categorical 'x'" in err
    code, _, err = run(capsys, "fit", data, "--target", "y", "--categorical", "x",
                       "-o", tmp_path / "m.json")
    assert code == 0, err
    assert load_model(tmp_path / "m.json").features[0].kind == "categorical"


def test_rules_syntax_error_shows_the_line_and_a_caret(tmp_path, capsys):
    bad = tmp_path / "bad.rules"
    text = (ROOT / "examples" / "iris.rules").read_text()
    bad.write_text(text.replace(" or missing", " or mising", 1))
    assert " or mising" in bad.read_text()
    code, _, err = run(capsys, "compile", bad, "--target", "c", "-o", tmp_path / "out")
    assert code == 2 and "Traceback" not in err
    first, source, caret = err.rstrip("\n").split("\n")
    assert first.startswith(f"rulegen: error: {bad}:") and "mising" in first
    assert "mising" in source and caret.strip() == "^"
    assert source[len(caret) - 1:].startswith("mising")
    assert not (tmp_path / "out").exists()


def test_sql_keep_returns_other_columns(iris_model, tmp_path, capsys):
    import sqlite3

    out = tmp_path / "m.sql"
    code, _, err = run(capsys, "compile", iris_model, "--target", "sql", "--keep", "class",
                       "--table", "iris", "-o", out)
    assert code == 0, err
    con = sqlite3.connect(":memory:")
    con.execute('CREATE TABLE iris (sepallength REAL, sepalwidth REAL, petallength REAL, '
                'petalwidth REAL, class TEXT)')
    rows = list(csv.reader(IRIS.open()))[1:]
    con.executemany("INSERT INTO iris VALUES (?, ?, ?, ?, ?)", rows)
    got = con.execute(f"SELECT avg(class = prediction) FROM ({out.read_text().rstrip().rstrip(';')})")
    assert got.fetchone()[0] > 0.99


def test_predict_counts_unseen_categories_and_can_refuse_them(tmp_path, capsys):
    """A typo in a category column takes the model's unseen route, and predict says so: one
    line per column with the count, an example and the first line; --strict-categories stops
    with exit 2 and writes nothing. Integer labels written as floats ("3.0") are the label."""
    weather = ROOT / "tests" / "data" / "weather.nominal.csv"
    model_path = tmp_path / "w.json"
    code, _, err = run(capsys, "fit", weather, "--target", "play", "--algorithm", "id3", "-o", model_path)
    assert code == 0, err
    rows = weather.read_text().splitlines()
    rows[2] = rows[2].replace("sunny", "sunnny")
    rows[5] = rows[5].replace("sunny", "Sunny").replace("rainy", "Rainy")
    rows[3] = rows[3].replace("hot", "hott")
    data = tmp_path / "typos.csv"
    data.write_text("\n".join(rows) + "\n")
    out = tmp_path / "p.csv"
    code, _, err = run(capsys, "predict", model_path, data, "-o", out)
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if "not seen in training" in ln]
    typo_lines = [i + 1 for i, r in enumerate(rows) if any(t in r for t in ("sunnny", "Sunny", "Rainy"))]
    assert f"typos.csv:{typo_lines[0]}: column 'outlook': {len(typo_lines)} value" in lines[0]
    assert "e.g. 'sunnny'" in lines[0] and "'temperature': 1 value not seen" in lines[1]
    assert len(lines) == 2 and out.exists()
    out.unlink()
    code, _, err = run(capsys, "predict", model_path, data, "-o", out, "--strict-categories")
    assert code == 2 and not out.exists()
    assert len(err.strip().splitlines()) == 1 and "column 'outlook'" in err and "--strict-categories" in err
    code, _, err = run(capsys, "predict", model_path, weather, "--strict-categories")
    assert code == 0 and "not seen" not in err


def test_integer_category_labels_read_from_float_text():
    from rulegen.data import parse_csv
    from rulegen.ir.nodes import Feature, Leaf, Model, Target, Tree
    from rulegen.ir.validate import validate

    m = validate(Model((Feature("g", "categorical", (1, 2, 3)),), Target("regression"),
                       (Tree((Leaf((0.0,)),)),), (0.0,)))
    unseen = []
    X = feature_matrix(m, parse_csv("g,h\n3.0,1\n+2,1\n1,1\n4.0,1\n2.5,1\n,1\n", "t.csv"), unseen)
    assert X[:, 0].tolist()[:5] == [2.0, 1.0, 0.0, -1.0, -1.0] and np.isnan(X[5, 0])
    assert unseen[0].count == 2 and unseen[0].example == "4.0" and unseen[0].line == 5


def test_outputs_honour_the_umask_and_keep_an_existing_mode(iris_model, tmp_path, capsys):
    """Atomic writes used to leave every output 0600: a new file now gets 0666 less the
    umask, a replaced file keeps its mode; -o a/new/dir/ for C creates the directories."""
    old = os.umask(0o022)
    try:
        out = tmp_path / "m.py"
        assert run(capsys, "compile", iris_model, "--target", "python", "-o", out)[0] == 0
        assert (out.stat().st_mode & 0o777) == 0o644
        out.chmod(0o640)
        assert run(capsys, "compile", iris_model, "--target", "python", "-o", out)[0] == 0
        assert (out.stat().st_mode & 0o777) == 0o640
        os.umask(0o077)
        deep = tmp_path / "some" / "new" / "dir"
        code, _, err = run(capsys, "compile", iris_model, "--target", "c", "-o", str(deep) + "/")
        assert code == 0, err
        files = sorted(p.name for p in deep.iterdir())
        assert files == ["iris.c", "iris.h"]
        assert all((deep / f).stat().st_mode & 0o777 == 0o600 for f in files)
    finally:
        os.umask(old)


@pytest.mark.parametrize("value", ["1e308", "inf", "-Infinity"])
def test_fit_names_the_line_and_column_of_a_value_beyond_float32(value, tmp_path, capsys):
    rows = IRIS.read_text().splitlines()
    cells = rows[30].split(",")
    cells[2] = value
    rows[30] = ",".join(cells)
    data = tmp_path / "big.csv"
    data.write_text("\n".join(rows) + "\n")
    code, _, err = run(capsys, "fit", data, "--target", "class", "-o", tmp_path / "m.rules")
    column = rows[0].split(",")[2]
    assert code == 2 and err.startswith(f"rulegen: error: {data}:31: column {column!r}: {value!r} is "
                                        "infinite or beyond the float32 range")
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "m.rules").exists()


def test_csv_keeps_cr_lf_inside_quoted_fields_and_counts_their_lines(tmp_path, capsys):
    from rulegen.data import read_csv

    data = tmp_path / "crlf.csv"
    data.write_bytes(b'x,"the\r\ntarget"\r\n1,"a\r\nb"\r\n\r\n2,c\r\n3,a\r\n')
    t = read_csv(data)
    assert t.columns == ["x", "the\r\ntarget"]
    assert t.cells[1][0] == "a\r\nb" and t.lines == [3, 6, 7]
    data.write_bytes(b'x,"the\r\ntarget"\r\n1,"a\r\nb"\r\n2,c\r\n3,a\r\nz,c\r\n4,c\r\n')
    code, _, err = run(capsys, "fit", data, "--target", "the\r\ntarget", "-o", tmp_path / "m.rules")
    assert code == 2 and f"{data}:7: column 'x': 'z' is not a number" in err, err


def test_convert_approximate_only_for_standard_files(iris_model, tmp_path, capsys):
    """IR JSON and rules are always exact, so --approximate there is a usage error, and the
    output is not written."""
    out = tmp_path / "copy.json"
    code, _, err = run(capsys, "convert", iris_model, "-o", out, "--approximate")
    assert code == 2 and "--approximate" in err and not out.exists()
    code, _, err = run(capsys, "convert", iris_model, "-o", out)
    assert code == 0 and load_model(out) == load_model(iris_model)
