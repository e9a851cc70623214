"""ONNX import: models written by skl2onnx and onnxmltools, read into the IR, score what
onnxruntime scores bit for bit on float32 rows (training rows plus probes on and around every
threshold, NaN, +-inf), and every target agrees (assert_targets_exact)."""

from __future__ import annotations

import warnings

import irfixtures
import numpy as np
import pytest
from targetcheck import assert_targets_exact

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("skl2onnx")

from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from rulegen.cli import main
from rulegen.errors import UnsupportedFeatureError
from rulegen.exporters.onnx import session
from rulegen.importers import onnx as onnx_import
from rulegen.ir import evaluate


def _data(seed=0, n=300, nan=True):
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(n, 4)) * 2).astype(np.float32)
    if nan:
        X[rng.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) > 0).astype(int) + (np.nan_to_num(X[:, 1]) > 0.5)
    return X, y


def _skl2onnx(est, X) -> bytes:
    from skl2onnx import to_onnx

    opts = {id(est): {"zipmap": False}} if hasattr(est, "predict_proba") else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return to_onnx(est, X[:1], options=opts).SerializeToString()


def _ort_scores(data: bytes, X) -> np.ndarray:
    sess = session(data)
    names = [o.name for o in sess.get_outputs()]
    outs = dict(zip(names, sess.run(None, {sess.get_inputs()[0].name: X.astype(np.float32)})))
    return outs.get("probabilities", outs.get("variable"))


def assert_like_onnxruntime(data: bytes, X):
    model = onnx_import.loads(data, "test.onnx")
    rows = np.vstack([np.asarray(X, dtype=np.float64), irfixtures.probe_rows(model, n_random=30)])
    with np.errstate(over="ignore"):
        rows32 = rows.astype(np.float32)  # the model's input type; the IR rounds as its tests do
    got = _ort_scores(data, rows32)
    want = evaluate.raw_scores(model, rows)
    assert got.dtype == want.dtype == np.float32
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    if model.target.task == "classification":
        assert np.array_equal(evaluate.predict_proba(model, rows).view(np.uint32), got.view(np.uint32))
    return model, rows


@pytest.mark.parametrize("make", [
    lambda: RandomForestRegressor(6, max_depth=5, random_state=0, n_jobs=1),
    lambda: DecisionTreeRegressor(max_depth=6, random_state=0),
    lambda: RandomForestClassifier(6, max_depth=5, random_state=0, n_jobs=1),
    lambda: ExtraTreesClassifier(5, max_depth=5, random_state=0, n_jobs=1),
    lambda: DecisionTreeClassifier(max_depth=5, random_state=0),
], ids=["rf_reg", "tree_reg", "rf_clf", "extra_clf", "tree_clf"])
def test_sklearn_models(make):
    X, y = _data()
    est = make().fit(X, y if hasattr(make(), "predict_proba") else y * 1.25 + np.nan_to_num(X[:, 2]))
    model, rows = assert_like_onnxruntime(_skl2onnx(est, X), X)
    assert_targets_exact(model, rows[:60])


def test_gradient_boosting_base_value_comes_last():
    X, y = _data(1, nan=False)
    est = GradientBoostingRegressor(n_estimators=25, max_depth=3, random_state=0).fit(X, y + 0.3)
    model, rows = assert_like_onnxruntime(_skl2onnx(est, X), X)
    assert len(model.trees) == 26 and len(model.trees[-1].nodes) == 1  # base as the last tree
    assert_targets_exact(model, rows[:60])


def test_xgboost_and_lightgbm_regressors_through_onnxmltools():
    pytest.importorskip("onnxmltools")
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    from onnxmltools import convert_lightgbm, convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    X, y = _data(2)
    types = [("X", FloatTensorType([None, 4]))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = xgb.XGBRegressor(n_estimators=20, max_depth=3, n_jobs=1, base_score=0.7).fit(X, y)
        data = convert_xgboost(reg, initial_types=types).SerializeToString()
        model, _rows = assert_like_onnxruntime(data, X)
        lreg = lgb.LGBMRegressor(n_estimators=20, num_leaves=7, verbose=-1, n_jobs=1).fit(X, y)
        data = convert_lightgbm(lreg, initial_types=types).SerializeToString()
        model, rows = assert_like_onnxruntime(data, X)
    assert_targets_exact(model, rows[:60])


def test_refused_with_the_reason():
    pytest.importorskip("onnxmltools")
    xgb = pytest.importorskip("xgboost")
    from onnxmltools import convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    X, y = _data(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = xgb.XGBClassifier(n_estimators=5, max_depth=2, n_jobs=1).fit(X, y)
        data = convert_xgboost(clf, initial_types=[("X", FloatTensorType([None, 4]))])
    with pytest.raises(UnsupportedFeatureError, match="post_transform SOFTMAX"):
        onnx_import.loads(data.SerializeToString(), "xgb.onnx")
    binary = RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y > 0)
    with pytest.raises(UnsupportedFeatureError, match="a binary classifier"):
        onnx_import.loads(_skl2onnx(binary, X), "rf.onnx")


def test_cli_compile_and_bad_files(tmp_path, capsys):
    X, y = _data(4)
    est = RandomForestRegressor(4, max_depth=4, random_state=0, n_jobs=1).fit(X, y)
    path = tmp_path / "rf.onnx"
    path.write_bytes(_skl2onnx(est, X))
    assert main(["compile", str(path), "--target", "c", "-o", str(tmp_path / "rf.c")]) == 0
    assert (tmp_path / "rf.c").exists()
    capsys.readouterr()
    (tmp_path / "junk.onnx").write_bytes(b"\xff\xfe not a protobuf")
    assert main(["compile", str(tmp_path / "junk.onnx"), "--target", "c"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "junk.onnx" in err[0] and "not an ONNX model" in err[0], err
    binary = RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y > 0)
    (tmp_path / "bin.onnx").write_bytes(_skl2onnx(binary, X))
    assert main(["compile", str(tmp_path / "bin.onnx"), "--target", "c"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bin.onnx" in err[0] and "binary classifier" in err[0], err
