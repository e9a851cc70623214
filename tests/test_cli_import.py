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


def test_convert_to_rules_is_not_yet_supported(tmp_path, capsys):
    X, y = _data(2)
    booster = lgb.train({"objective": "binary", "num_leaves": 3, "verbose": -1},
                        lgb.Dataset(X, y), 2)
    model_file = tmp_path / "lgb.txt"
    booster.save_model(str(model_file))
    assert main(["convert", str(model_file), "-o", str(tmp_path / "m.rules")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rules language" in err
