"""Every learner in the catalog, through the command line: fit on a CSV with numeric and text
columns and missing cells, compile to every target, agree with the evaluator bit for bit;
`fit --help` describes every parameter; a task a learner cannot do is one clear line."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from targetcheck import assert_targets_exact

from rulegen.cli import main
from rulegen.data import feature_matrix, read_csv
from rulegen.ir import evaluate
from rulegen.learn.catalog import CATALOG, parameters
from rulegen.modelio import load_model

DATA = Path(__file__).resolve().parent / "data"
LABOR = DATA / "labor.csv"  # 57 rows, numeric and text columns, many missing cells
WEATHER = DATA / "weather.nominal.csv"  # categorical only (ID3's home)

# learner -> (data, target column, extra fit arguments) for a classification run
CLASSIFY = {name: (LABOR, "class", []) for name in CATALOG}
CLASSIFY["id3"] = (WEATHER, "play", [])
# the same rows less the one whose first-year wage increase (the target) is missing
REGRESS = (DATA / "labor_wages.csv", "wage-increase-first-year", ["--ignore", "class"])


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _fit_and_check(capsys, tmp_path, name, data, target, extra, task):
    path = tmp_path / f"{name}.rules"
    code, _, err = run(capsys, "fit", data, "--target", target, "--algorithm", name,
                       "--task", task, *extra, "-o", path)
    assert code == 0, err
    assert f"fitted {name}" in err
    model = load_model(path)
    assert model.provenance.algorithm == name
    assert model.target.task == task
    X = feature_matrix(model, read_csv(data))
    assert_targets_exact(model, X)
    # `rulegen predict` gives the evaluator's answer on the training file
    out = tmp_path / "pred.csv"
    code, _, err = run(capsys, "predict", path, data, "-o", out)
    assert code == 0, err
    with open(out, newline="") as f:
        got = [row["prediction"] for row in csv.DictReader(f)]
    if task == "classification":
        want = np.asarray(model.target.classes, dtype=object)[evaluate.predict_class_index(model, X)]
        assert got == [str(v) for v in want]
    else:
        assert np.array_equal(np.array(got, dtype=float), evaluate.predict_value(model, X)[:, 0])
    return model


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_classification_through_cli_and_targets(capsys, tmp_path, name):
    data, target, extra = CLASSIFY[name]
    model = _fit_and_check(capsys, tmp_path, name, data, target, extra, "classification")
    assert len(model.trees[0].nodes) > 1, "the fixture should give a tree that splits"


@pytest.mark.parametrize("name", sorted(n for n, i in CATALOG.items() if i.regressor))
def test_regression_through_cli_and_targets(capsys, tmp_path, name):
    data, target, extra = REGRESS
    _fit_and_check(capsys, tmp_path, name, data, target, extra, "regression")


@pytest.mark.parametrize("name", sorted(n for n, i in CATALOG.items() if not i.regressor))
def test_classifier_only_learner_refuses_regression(capsys, tmp_path, name):
    data, target, extra = REGRESS
    code, _, err = run(capsys, "fit", data, "--target", target, "--algorithm", name,
                       *extra, "-o", tmp_path / "m.json")
    assert code == 2
    assert err.count("\n") == 1 and "classification only" in err and "regression" in err
    assert not (tmp_path / "m.json").exists()


def test_every_parameter_is_described_in_help(capsys):
    code, out, _ = run(capsys, "fit", "--help")
    assert code == 0
    text = " ".join(out.split())  # help lines wrap anywhere
    for name, info in CATALOG.items():
        assert f"{name}: " in text
        for key in parameters(info):
            assert info.params.get(key), f"{name}: parameter {key!r} has no description"
            assert f"{key}=" in text


def test_unknown_parameter_and_algorithm_are_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "fit", LABOR, "--target", "class", "--param", "max_dept=3",
                       "-o", tmp_path / "m.json")
    assert code == 2 and err.count("\n") == 1 and "did you mean 'max_depth'" in err
    code, _, err = run(capsys, "fit", LABOR, "--target", "class", "--algorithm", "c4.5",
                       "-o", tmp_path / "m.json")
    assert code == 2 and err.count("\n") == 1 and "--algorithm" in err


def test_progress_bar_draws_on_stderr_and_ends_the_line(capsys):
    from rulegen.cli import _Progress

    bar = _Progress(True)
    for done in range(1, 5):
        bar(done, 4)
    bar.close()
    err = capsys.readouterr().err
    assert err.count("\r") == 4 and err.endswith("\n")
    assert "4/4" in err and "[" + "#" * 30 + "]" in err
    off = _Progress(False)
    off(1, 4)
    off.close()
    assert capsys.readouterr().err == ""
