"""The source library's own scores for an imported model file, when the library is installed.

``rulegen verify`` checks the code it generates against the evaluator; for a model file that
XGBoost, LightGBM or CatBoost wrote, or an ONNX file, this also checks the evaluator (that is,
the import) against the library itself, on the same rows: XGBoost's margins in float32 (its own
arithmetic), LightGBM's raw scores and CatBoost's raw values in float64, onnxruntime's scores
(one thread, float32 rows, as the converters' models take them). Models with categorical
features are not compared here (the tests compare them with their own care for each library's
category rules).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from rulegen.ir.nodes import Model


def library_of(path: str | Path) -> str | None:
    """"xgboost", "lightgbm", "catboost" or "onnxruntime" for a file that library writes or
    scores, else None."""
    from rulegen.modelio import _is_ubjson, detect_format

    path = Path(path)
    if path.is_dir():
        return None
    if path.suffix.lower() == ".onnx":
        return "onnxruntime"
    raw = path.read_bytes()
    if _is_ubjson(raw):
        return "xgboost"
    if raw[:4] == b"CBM1":
        return "catboost"
    try:
        kind = detect_format(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return None
    return {"xgboost-json": "xgboost", "lightgbm-text": "lightgbm",
            "catboost-json": "catboost"}.get(kind)


def raw_scores(path: str | Path, model: Model, X: np.ndarray) -> tuple[np.ndarray | None, str]:
    """(the library's raw scores for rows X, what was compared) or (None, why not)."""
    lib = library_of(path)
    if lib is None:
        return None, "not a library's model file"
    if any(f.kind == "categorical" for f in model.features):
        return None, "categorical features (not compared with the library here)"
    try:
        module = __import__(lib)
    except ImportError:
        return None, f"{lib} is not installed"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if lib == "catboost":
            return _catboost(module, path, X)
        if lib == "onnxruntime":
            return _onnxruntime(module, path, model, X)
        if lib == "xgboost":
            booster = module.Booster(model_file=str(path))
            got = booster.inplace_predict(X, predict_type="margin", validate_features=False)
            return np.asarray(got, dtype=np.float32).astype(np.float64).reshape(len(X), -1), \
                f"XGBoost {module.__version__}'s margins"
        booster = module.Booster(model_file=str(path))
        got = booster.predict(X, raw_score=True)
        return np.asarray(got, dtype=np.float64).reshape(len(X), -1), \
            f"LightGBM {module.__version__}'s raw scores"


def _catboost(catboost, path: Path, X: np.ndarray):
    if Path(path).read_bytes()[:4] != b"CBM1":
        # CatBoost 1.2 reads some 17-digit leaf values of its own JSON one ulp off, so the model
        # it loads is not the one that wrote the file (tests/test_import_catboost.py)
        return None, "CatBoost reads its own JSON files inexactly; verify the .cbm instead"
    booster = catboost.CatBoost()
    booster.load_model(str(path), format="cbm")
    got = booster.predict(X, prediction_type="RawFormulaVal", thread_count=1)
    return np.asarray(got, dtype=np.float64).reshape(len(X), -1), \
        f"CatBoost {catboost.__version__}'s raw values"


def _onnxruntime(ort, path: Path, model: Model, X: np.ndarray):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # more threads may sum the trees in another order
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    inp = session.get_inputs()[0]
    dtype = np.float64 if inp.type == "tensor(double)" else np.float32  # rulegen writes double
    names = [o.name for o in session.get_outputs()]
    if "raw" in names:  # rulegen's export: its raw scores
        names = ["raw"]
    elif model.link != "identity":
        return None, ("onnxruntime's outputs are after its post transform (the import's raw "
                      "scores are its margins; docs/IMPORTERS.md)")
    with np.errstate(over="ignore"):
        outputs = session.run(names, {inp.name: np.asarray(X, dtype=dtype)})
    for out in outputs:  # the scores: the float output with one column per raw score
        out = np.asarray(out)
        if out.dtype.kind == "f" and out.reshape(len(X), -1).shape[1] == model.n_raw:
            return out.astype(np.float64).reshape(len(X), -1), f"onnxruntime {ort.__version__}'s scores"
    return None, "no output of onnxruntime holds one score per raw output"
