"""The command line on models from other libraries: format detection from the content,
`convert`, and `compile` straight from an XGBoost or LightGBM file."""

from __future__ import annotations

import csv

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb
from run_python import run_python

from rulegen.cli import main
from rulegen.modelio import load_model


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 4)) * 3, 1)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2]) > 0).astype(int)
    return X, y


def _csv(path, X):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([f"f{i}" for i in range(X.shape[1])])
        for row in X:
            w.writerow(["" if np.isnan(v) else repr(float(v)) for v in row])


def _predicted_proba(path):
    rows = list(csv.reader(open(path)))
    return np.array([[float(v) for v in r[1:]] for r in rows[1:]])


@pytest.mark.parametrize("fmt", ["json", "ubj"])
def test_xgboost_file_compiles_and_predicts(tmp_path, capsys, fmt):
    X, y = _data()
    clf = xgb.XGBClassifier(n_estimators=15, max_depth=3, random_state=0).fit(X, y)
    clf.get_booster().feature_names = [f"f{i}" for i in range(4)]
    model_file = tmp_path / f"xgb.{fmt}"
    clf.get_booster().save_model(str(model_file))
    out = tmp_path / "m.py"
    assert main(["compile", str(model_file), "--target", "python", "-o", str(out)]) == 0
    assert main(["convert", str(model_file), "-o", str(tmp_path / "ir.json")]) == 0
    model = load_model(tmp_path / "ir.json")
    assert model == load_model(model_file)
    margin = clf.get_booster().predict(xgb.DMatrix(X, feature_names=[f"f{i}" for i in range(4)]),
                                       output_margin=True)
    res = run_python(model, [[None if np.isnan(v) else float(v) for v in r] for r in X])
    assert np.array_equal(res.raw[:, 0].astype(np.float32), margin.astype(np.float32))
    capsys.readouterr()


def test_lightgbm_text_convert_and_predict(tmp_path, capsys):
    X, y = _data(1)
    booster = lgb.train({"objective": "binary", "num_leaves": 7, "verbose": -1, "seed": 0},
                        lgb.Dataset(X, y, feature_name=[f"f{i}" for i in range(4)]), 20)
    model_file = tmp_path / "lgb.txt"
    booster.save_model(str(model_file))
    ir = tmp_path / "ir.json"
    assert main(["convert", str(model_file), "-o", str(ir)]) == 0
    data = tmp_path / "x.csv"
    _csv(data, X)
    preds = tmp_path / "p.csv"
    assert main(["predict", str(ir), str(data), "-o", str(preds)]) == 0
    p = booster.predict(X)
    assert np.array_equal(_predicted_proba(preds)[:, 1], p)
    assert main(["compile", str(model_file), "--target", "c", "-o", str(tmp_path / "c")]) == 0
    assert (tmp_path / "c" / "lgb.c").is_file()
    capsys.readouterr()


def test_import_to_rules_to_compile_predicts_like_the_original(tmp_path, capsys):
    """LightGBM and XGBoost files -> rules file -> compiled Python: the same predictions as the
    library, bit for bit on raw scores (the rules file is what a person reviews and edits)."""
    X, y = _data(2)
    rows = [[None if np.isnan(v) else float(v) for v in r] for r in X]
    names = [f"f{i}" for i in range(4)]
    booster = lgb.train({"objective": "binary", "num_leaves": 7, "verbose": -1, "seed": 0},
                        lgb.Dataset(X, y, feature_name=names), 25)
    booster.save_model(str(tmp_path / "lgb.txt"))
    clf = xgb.XGBClassifier(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    clf.get_booster().feature_names = names
    clf.get_booster().save_model(str(tmp_path / "xgb.json"))
    expected = {
        "lgb.txt": booster.predict(X, raw_score=True),
        "xgb.json": clf.get_booster().predict(xgb.DMatrix(X, feature_names=names),
                                              output_margin=True),
    }
    for source, want in expected.items():
        rules = tmp_path / f"{source}.rules"
        assert main(["convert", str(tmp_path / source), "-o", str(rules)]) == 0
        assert rules.read_text().startswith("rulegen rules 1")
        assert main(["check", str(rules)]) == 0
        out = tmp_path / f"{source.split('.')[0]}_model.py"
        assert main(["compile", str(rules), "--target", "python", "-o", str(out)]) == 0
        model = load_model(rules)
        assert model == load_model(tmp_path / source)
        raw = run_python(model, rows).raw[:, 0]
        if model.dtype == "float32":
            assert np.array_equal(raw.astype(np.float32), want.astype(np.float32)), source
        else:
            assert np.array_equal(raw, want), source
    capsys.readouterr()


def test_check_reports_rule_mistakes_with_places(tmp_path, capsys):
    from rulegen.ir import evaluate  # noqa: F401 - the model must still load

    X, y = _data(3)
    booster = lgb.train({"objective": "binary", "num_leaves": 4, "verbose": -1, "seed": 0},
                        lgb.Dataset(X, y, feature_name=[f"f{i}" for i in range(4)]), 3)
    booster.save_model(str(tmp_path / "lgb.txt"))
    rules = tmp_path / "m.rules"
    assert main(["convert", str(tmp_path / "lgb.txt"), "-o", str(rules)]) == 0
    capsys.readouterr()
    text = rules.read_text()
    bad = tmp_path / "bad.rules"
    bad.write_text(text.replace("f1", "f1x", 1) if "f1" in text else text + "\n}")
    code = main(["check", str(bad)])
    out = capsys.readouterr().out
    assert code == 2
    assert "bad.rules:" in out and "error" in out
    for line in out.strip().splitlines():
        assert line.count(":") >= 3  # FILE:LINE:COLUMN: severity: message
