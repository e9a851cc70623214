"""The source library's own scores for an imported model file, when the library is installed.

``rulegen verify`` checks the code it generates against the evaluator; for a model file that
XGBoost or LightGBM wrote, this also checks the evaluator (that is, the import) against the
library itself, on the same rows: XGBoost's margins in float32 (its own arithmetic), LightGBM's
raw scores in float64. Models with categorical features are not compared here (the tests
compare them with their own care for each library's category rules).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from rulegen.ir.nodes import Model


def library_of(path: str | Path) -> str | None:
    """"xgboost" or "lightgbm" for a file that library wrote, else None."""
    from rulegen.modelio import _is_ubjson, detect_format

    raw = Path(path).read_bytes()
    if _is_ubjson(raw):
        return "xgboost"
    try:
        kind = detect_format(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return None
    return {"xgboost-json": "xgboost", "lightgbm-text": "lightgbm"}.get(kind)


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
        if lib == "xgboost":
            booster = module.Booster(model_file=str(path))
            got = booster.inplace_predict(X, predict_type="margin", validate_features=False)
            return np.asarray(got, dtype=np.float32).astype(np.float64).reshape(len(X), -1), \
                f"XGBoost {module.__version__}'s margins"
        booster = module.Booster(model_file=str(path))
        got = booster.predict(X, raw_score=True)
        return np.asarray(got, dtype=np.float64).reshape(len(X), -1), \
            f"LightGBM {module.__version__}'s raw scores"
