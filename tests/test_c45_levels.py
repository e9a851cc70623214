"""C4.5 with declared levels: fit(classes=) and `rulegen fit --levels FILE`, which give the
learner the values and classes an ARFF header declares (see docs/learners/c45.md). The trees
themselves are checked against J48 in test_c45.py (the `declared_*` fixtures)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_c45 import compare_with_j48, parse_tree, read_arff, read_j48

from rulegen.cli import main
from rulegen.errors import LearnerError
from rulegen.ir.nodes import MultiwayTest
from rulegen.learn.trees.c45 import C45Classifier
from rulegen.modelio import load_model


def test_declared_classes_bad_calls():
    X, y = np.arange(10.0)[:, None], np.array(["a", "b"] * 5)
    for classes, match in [(["a"], "y has the class 'b', which classes does not list"),
                           ([], "non-empty list"), ("ab", "non-empty list"),
                           (["a", "b", "a"], "distinct labels"), (["a", "b", 3], "all integers")]:
        with pytest.raises(LearnerError, match=match):
            C45Classifier().fit(X, y, classes=classes)
    clf = C45Classifier().fit(X, np.arange(10) % 2, classes=[3, 1, 0])
    assert list(clf.classes_) == [3, 1, 0] and clf.model_.target.classes == (3, 1, 0)
    assert clf.predict_proba(X).shape == (10, 3) and not clf.predict_proba(X)[:, 0].any()


# --- the command line: rulegen fit --levels --------------------------------------------------


def _as_csv_and_levels(name, tmp_path):
    """A fixture as `rulegen fit` reads it: a CSV of its rows and a levels file of its header."""
    X, y, names, cats, classes = read_arff(name, with_classes=True)
    lines = [",".join([*names, "class"])]
    for row, label in zip(X, y):
        cells = ["" if np.isnan(v) else (cats[j][int(v)] if j in cats else repr(float(v)))
                 for j, v in enumerate(row)]
        lines.append(",".join([*cells, label]))
    (tmp_path / "data.csv").write_text("\n".join(lines) + "\n")
    levels = {names[j]: list(labels) for j, labels in cats.items()}
    (tmp_path / "levels.json").write_text(json.dumps({**levels, "class": classes}))
    return tmp_path / "data.csv", tmp_path / "levels.json"


def _cli(capsys, *argv):
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name", ["soybean_declared", "declared_classes"])
def test_cli_levels_file_gives_j48s_tree(name, tmp_path, capsys):
    data, levels = _as_csv_and_levels(name, tmp_path)
    ref, _, _ = parse_tree(read_j48(name)[""])
    base = ["fit", data, "--target", "class", "--algorithm", "c45", "--param",
            "error_estimate=weka", "-o", tmp_path / "m.json"]
    assert _cli(capsys, *base, "--levels", levels)[0] == 0
    model = load_model(tmp_path / "m.json")
    assert not compare_with_j48(model, ref)
    assert list(model.target.classes) == read_arff(name, with_classes=True)[4]
    assert _cli(capsys, *base)[0] == 0  # the CSV alone: sorted levels, only those shown
    assert compare_with_j48(load_model(tmp_path / "m.json"), ref)


@pytest.mark.parametrize(("levels", "args", "needle"), [
    ("{", (), "not a JSON levels file"),
    ('["x"]', (), "expected a JSON object"),
    ('{"z": ["a"]}', (), "no column 'z'; the columns are: x, y, class"),
    ('{"y": ["a", "a"]}', (), "the levels of 'y' must be a list of distinct strings"),
    ('{"y": "ab"}', (), "the levels of 'y' must be a list"),
    ('{"y": ["a"]}', (), "data.csv:3: column 'y': 'b' is not among its levels in"),
    ('{"y": ["a", "b"]}', ("--ignore", "y"), "'y' is an ignored column"),
    ('{"class": ["p", "q"]}', ("--algorithm", "cart"), "cart cannot take declared classes"),
    ('{"class": ["p", "q"]}', ("--task", "regression"), "which makes it a class"),
])
def test_cli_bad_levels_files(levels, args, needle, tmp_path, capsys):
    (tmp_path / "data.csv").write_text("x,y,class\n1,a,p\n2,b,q\n3,a,p\n")
    (tmp_path / "levels.json").write_text(levels)
    code, err = _cli(capsys, "fit", tmp_path / "data.csv", "--target", "class", "--algorithm",
                     "c45", "--levels", tmp_path / "levels.json", *args, "-o", tmp_path / "m.json")
    assert code == 2 and needle in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "m.json").exists()


def test_cli_levels_of_a_numeric_looking_column(tmp_path, capsys):
    """A column named in the levels file is categorical, its codes in the file's order."""
    (tmp_path / "data.csv").write_text("x,class\n" + "".join(f"{i % 3},{'pq'[i % 3 == 0]}\n"
                                                            for i in range(12)))
    (tmp_path / "levels.json").write_text('{"x": [2, 0, 1, 5]}')
    code, err = _cli(capsys, "fit", tmp_path / "data.csv", "--target", "class", "--algorithm",
                     "c45", "--param", "min_instances=1", "--levels", tmp_path / "levels.json",
                     "-o", tmp_path / "m.json")
    assert code == 0, err
    model = load_model(tmp_path / "m.json")
    assert model.features[0].categories == (2, 0, 1, 5) and model.target.classes == ("p", "q")
    root = model.trees[0].nodes[0]
    assert isinstance(root.test, MultiwayTest) and len(root.children) == 4
