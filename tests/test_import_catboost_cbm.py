"""CatBoost's native .cbm files, read without the catboost library: the same IR as the model's
JSON, CatBoost's raw values bit for bit, refusals, and damaged files (a RulegenError, never a
crash or a hang)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_import_catboost import (
    QUIET,
    _cat_data,
    _numeric_data,
    _raw,
    _rows,
    assert_bits,
)

from rulegen.errors import ModelFormatError, RulegenError, UnsupportedFeatureError
from rulegen.importers import catboost as cbi
from rulegen.ir import evaluate as ev

catboost = pytest.importorskip("catboost")


@pytest.mark.parametrize("setup", ["rmse", "logloss", "multiclass", "multirmse", "nan_max",
                                   "depthwise", "lossguide_multiclass"])
def test_cbm_reads_like_json(tmp_path, setup):
    """The native .cbm file (read without catboost) gives the model its JSON gives."""
    X, y = _numeric_data(15, n=200)
    cls, kw, target = {
        "rmse": (catboost.CatBoostRegressor, {}, y),
        "logloss": (catboost.CatBoostClassifier, {}, y > 0.5),
        "multiclass": (catboost.CatBoostClassifier, {}, np.digitize(y, [-0.5, 1.5])),
        "multirmse": (catboost.CatBoostRegressor, {"loss_function": "MultiRMSE"}, np.column_stack([y, -y])),
        "nan_max": (catboost.CatBoostRegressor, {"nan_mode": "Max"}, y),
        "depthwise": (catboost.CatBoostRegressor, {"grow_policy": "Depthwise"}, y),
        "lossguide_multiclass": (catboost.CatBoostClassifier, {"grow_policy": "Lossguide", "nan_mode": "Max"},
                                 np.digitize(y, [-0.5, 1.5])),
    }[setup]
    m = cls(iterations=10, depth=4, **kw, **QUIET).fit(X, target)
    m.save_model(str(tmp_path / "m.cbm"))
    m.save_model(str(tmp_path / "m.json"), format="json")
    from_cbm, from_json = cbi.load(tmp_path / "m.cbm"), cbi.load(tmp_path / "m.json")
    assert replace(from_cbm, provenance=from_json.provenance) == from_json
    rows = _rows(from_cbm, X)
    assert_bits(ev.raw_scores(from_cbm, rows), _raw(m, rows), ".cbm raw")


def test_cbm_refusals(tmp_path):
    X, y = _numeric_data(16, n=150)
    Xc, yc = _cat_data(16)
    pool = catboost.Pool(Xc, yc, cat_features=[1, 2], feature_names=["num", "colour", "size", "z"])
    for one_hot, error, message in ((4, UnsupportedFeatureError, r"CTR.*'colour'"),
                                    (10, ModelFormatError, r"no category texts.*pool=train_pool")):
        m = catboost.CatBoostRegressor(iterations=5, depth=3, one_hot_max_size=one_hot, **QUIET).fit(pool)
        m.save_model(str(tmp_path / "c.cbm"), pool=pool)
        with pytest.raises(error, match=message):
            cbi.load(tmp_path / "c.cbm")
    for grow_policy in ("SymmetricTree", "Depthwise"):
        m = catboost.CatBoostRegressor(iterations=3, depth=3, grow_policy=grow_policy, **QUIET).fit(X, y)
        m.save_model(str(tmp_path / "m.cbm"))
        _damaged_cbm((tmp_path / "m.cbm").read_bytes())


def _damaged_cbm(data: bytes):
    with pytest.raises(ModelFormatError, match="runs past the file's end"):
        cbi.load(data[:-10])
    # damaged bytes: a RulegenError every time, never a crash or a hang
    rng = np.random.default_rng(0)
    for _ in range(300):
        damaged = bytearray(data)
        for pos in rng.integers(8, len(data), size=rng.integers(1, 4)):
            damaged[pos] = rng.integers(256)
        try:
            cbi.load(bytes(damaged))
        except RulegenError:
            pass


def test_cli_compiles_a_cbm(tmp_path, capsys):
    from rulegen.cli import main
    from rulegen.modelio import load_model

    X, y = _numeric_data(17, n=150)
    m = catboost.CatBoostClassifier(iterations=5, depth=3, **QUIET).fit(X, y > 0.5)
    m.save_model(str(tmp_path / "m.cbm"))
    assert main(["compile", str(tmp_path / "m.cbm"), "--target", "python", "-o", str(tmp_path / "m.py")]) == 0
    assert main(["convert", str(tmp_path / "m.cbm"), "-o", str(tmp_path / "ir.json")]) == 0
    capsys.readouterr()
    model = load_model(tmp_path / "ir.json")
    assert model == load_model(tmp_path / "m.cbm") and model.target.classes == (0, 1)
    assert_bits(ev.predict_proba(model, X), m.predict_proba(X), ".cbm via the CLI")
