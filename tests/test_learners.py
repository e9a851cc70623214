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
from rulegen.ir.nodes import Leaf
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
    from rulegen.cli_learn import _Progress

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


def _split_csv(src: Path, tmp_path: Path, every: int = 3):
    """Every `every`-th data row to a validation file, the rest to a training file."""
    lines = src.read_text().splitlines()
    train = [lines[0]] + [r for i, r in enumerate(lines[1:]) if i % every]
    valid = [lines[0]] + [r for i, r in enumerate(lines[1:]) if not i % every]
    (tmp_path / "train.csv").write_text("\n".join(train) + "\n")
    (tmp_path / "valid.csv").write_text("\n".join(valid) + "\n")
    return tmp_path / "train.csv", tmp_path / "valid.csv"


@pytest.mark.parametrize("name", ["cart", "c45", "quest"])
def test_prune_reduced_error_from_the_command_line(capsys, tmp_path, name):
    train, valid = _split_csv(LABOR, tmp_path)
    extra = ["--param", "pruning=false"] if name == "c45" else []
    full = tmp_path / "full.rules"
    code, _, err = run(capsys, "fit", train, "--target", "class", "--algorithm", name, *extra,
                       "-o", full)
    assert code == 0, err
    out = tmp_path / "pruned.rules"
    code, _, err = run(capsys, "prune", full, "--data", valid, "-o", out)
    assert code == 0, err
    assert "reduced-error pruning" in err
    before, after = load_model(full), load_model(out)
    assert len(after.trees[0].nodes) <= len(before.trees[0].nodes)
    Xv = feature_matrix(before, read_csv(valid))
    with open(valid, newline="") as f:
        yv = np.array([row["class"] for row in csv.DictReader(f)], dtype=object)

    def errors(model):
        labels = np.asarray(model.target.classes, dtype=object)
        return int(np.sum(labels[evaluate.predict_class_index(model, Xv)] != yv))

    assert errors(after) <= errors(before)
    assert_targets_exact(after, Xv, dialects=("sqlite",))


def test_prune_path_and_alpha_match_the_library(capsys, tmp_path):
    from rulegen.learn.trees import pruning

    model_path = tmp_path / "m.json"
    code, _, err = run(capsys, "fit", LABOR, "--target", "class", "--param", "random_state=0",
                       "-o", model_path)
    assert code == 0, err
    model = load_model(model_path)
    code, out, err = run(capsys, "prune", model_path, "--path")
    assert code == 0, err
    rows = list(csv.DictReader(out.splitlines()))
    path = pruning.cost_complexity_pruning_path(model)
    assert [float(r["alpha"]) for r in rows] == path.ccp_alphas.tolist()
    assert [float(r["impurity"]) for r in rows] == path.impurities.tolist()
    assert int(rows[-1]["leaves"]) == 1 and len(rows) > 2
    alpha = float(rows[-2]["alpha"])
    out_path = tmp_path / "p.json"
    code, _, err = run(capsys, "prune", model_path, "--alpha", alpha, "-o", out_path)
    assert code == 0, err
    assert load_model(out_path) == pruning.prune(model, alpha)
    assert sum(isinstance(n, Leaf) for n in load_model(out_path).trees[0].nodes) == int(rows[-2]["leaves"])


def test_prune_usage_errors_are_one_line(capsys, tmp_path):
    model_path = tmp_path / "m.json"
    run(capsys, "fit", LABOR, "--target", "class", "-o", model_path)
    for args in ([], ["--alpha", "0.1", "--path"], ["--alpha", "0.1"]):
        code, _, err = run(capsys, "prune", model_path, *args)
        assert code == 2 and err.count("\n") == 1, err
    code, _, err = run(capsys, "prune", model_path, "--data", WEATHER, "-o", tmp_path / "x.json")
    assert code == 2 and err.count("\n") == 1 and "class" in err
    assert not (tmp_path / "x.json").exists()


def test_drop_missing_target_leaves_rows_out_and_keeps_line_numbers(capsys, tmp_path):
    # labor.csv: one row (file line 4) has no first-year wage increase
    target = "wage-increase-first-year"
    code, _, err = run(capsys, "fit", LABOR, "--target", target, "--ignore", "class",
                       "-o", tmp_path / "m.json")
    assert code == 2 and ":4:" in err and "--drop-missing-target" in err
    code, _, err = run(capsys, "fit", LABOR, "--target", target, "--ignore", "class",
                       "--drop-missing-target", "-o", tmp_path / "m.json")
    assert code == 0, err
    assert "left out 1 of 57 rows" in err
    assert load_model(tmp_path / "m.json").provenance.n_samples == 56
    # a bad cell after the dropped row is still reported at its own file line
    lines = LABOR.read_text().splitlines()
    cells = lines[9].split(",")
    cells[0] = "oops"
    lines[9] = ",".join(cells)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    code, _, err = run(capsys, "fit", bad, "--target", target, "--ignore", "class",
                       "--drop-missing-target", "-o", tmp_path / "m2.json")
    assert code == 2 and f"{bad}:10:" in err and "oops" in err, err


@pytest.mark.parametrize("name", ["random_forest", "adaboost", "gradient_boosting",
                                  "xgboost_style", "lightgbm_style"])
def test_ensembles_report_progress_and_refuse_a_non_function(name):
    from rulegen.errors import LearnerError

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), np.arange(60) % 2
    cls = CATALOG[name].estimator_class("classification")
    calls = []
    cls(n_estimators=4).fit(X, y, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1] and calls[0][0] == 1
    with pytest.raises(LearnerError, match="progress"):
        cls(n_estimators=4).fit(X, y, progress=5)


@pytest.mark.parametrize("name", sorted(n for n, info in CATALOG.items() if info.classifier))
def test_dataframe_columns_are_read_by_name(name):
    """Fitted on a DataFrame, asked about the same columns in another order: the same
    predictions (rows are read by name); a missing or unknown column is refused."""
    import pandas as pd  # a test dependency: fail, never skip
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.integers(0, 3, 300).astype(float), "b": rng.standard_normal(300),
                       "c": rng.integers(0, 2, 300).astype(float)})
    y = np.where((df["a"] == 1) ^ (df["c"] == 1), "yes", "no")
    est = CATALOG[name].estimator_class("classification")()
    kwargs = {"categorical_features": ["a", "c"]} if name == "id3" else {}
    if name == "id3":
        df = df.drop(columns="b").assign(b=rng.integers(0, 2, 300).astype(float))
        kwargs["categorical_features"] = ["a", "b", "c"]
    est.fit(df, y, **kwargs)
    want = est.predict_proba(df)
    shuffled = df[list(reversed(df.columns))]
    assert np.array_equal(est.predict_proba(shuffled), want)
    assert list(est.predict(shuffled)) == list(est.predict(df))
    assert np.array_equal(est.predict_proba(df.to_numpy()), want)  # an array: by position
    with pytest.raises(ValueError, match=r"(?s)unseen at fit time:\n- d\n.*yet now missing:\n- b\n"
                                         r".*pass the columns"):
        est.predict(df.drop(columns="b").assign(d=0.0))


@pytest.mark.parametrize("name", sorted(n for n, info in CATALOG.items() if info.classifier))
def test_constant_target_gives_a_constant_model(capsys, tmp_path, name):
    """One class in the target: every learner (the boosted ones too, which once refused) fits
    a model that predicts that class with probability 1 on every row, in every target."""
    data, _target, extra = CLASSIFY[name]
    rows = list(csv.reader(data.open()))
    path = tmp_path / "constant.csv"
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows([rows[0] + ["kind"]] + [r + ["same"] for r in rows[1:]])
    out = tmp_path / "model.json"
    ignore = ["--ignore", rows[0][-1]]
    code, _, err = run(capsys, "fit", path, "--target", "kind", "--algorithm", name, *ignore,
                       *extra, "-o", out)
    assert code == 0, err
    model = load_model(out)
    assert model.target.classes == ("same",)
    X = feature_matrix(model, read_csv(path))
    assert np.array_equal(evaluate.predict_proba(model, X), np.ones((len(X), 1)))
    assert_targets_exact(model, X)
