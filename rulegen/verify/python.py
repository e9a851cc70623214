"""Import a generated Python module and run rows through it, as a caller would.

`rulegen verify --target python` and the tests use this. Rows are Python values
(:func:`python_rows`): labels for categorical features, None for a missing value.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from rulegen.ir.nodes import Model


@dataclass
class PythonRun:
    module: ModuleType
    raw: np.ndarray  # predict_raw, shape (n_rows, n_raw)
    outputs: np.ndarray  # classifiers: predict_proba; regressors: predict (2-D)
    predictions: list  # predict(row) as returned (labels, values or lists)
    class_index: np.ndarray | None  # classifiers: index of predict(row) in CLASSES


_COUNTER = itertools.count()


def import_source(files: dict[str, str], directory: str | Path | None = None) -> ModuleType:
    """Write ``files`` to ``directory`` (a new temporary one by default) and import the single
    ``.py`` among them under a unique name, without touching ``sys.path``."""
    (file_name,) = [f for f in files if f.endswith(".py")]
    folder = Path(directory or tempfile.mkdtemp(prefix="rulegen_py_"))
    for rel, text in files.items():
        (folder / rel).write_text(text, encoding="utf-8")
    unique = f"_rulegen_generated_{next(_COUNTER)}_{Path(file_name).stem}"
    spec = importlib.util.spec_from_file_location(unique, folder / file_name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[unique] = module  # while it runs, as a normal import would
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[unique]
    return module


def run_module(module: ModuleType, rows) -> PythonRun:
    """Run every row through ``predict_raw``, ``predict`` and (classifiers) ``predict_proba``;
    the batch forms must agree with the per-row ones exactly."""
    rows = list(rows)
    raw = [module.predict_raw(r) for r in rows]
    predictions = [module.predict(r) for r in rows]
    if not _same(predictions, module.predict_batch(rows)):
        raise AssertionError("predict_batch disagrees with predict")
    classifier = hasattr(module, "CLASSES")
    if classifier:
        outputs = [module.predict_proba(r) for r in rows]
        if not _same(outputs, module.predict_proba_batch(rows)):
            raise AssertionError("predict_proba_batch disagrees with predict_proba")
        class_index = np.array([module.CLASSES.index(p) for p in predictions], dtype=np.int64)
    else:
        outputs = [p if isinstance(p, list) else [p] for p in predictions]
        class_index = None
    width = len(raw[0]) if raw else 0
    return PythonRun(module, np.array(raw, dtype=np.float64).reshape(len(rows), width),
                     np.array(outputs, dtype=np.float64).reshape(len(rows), -1), predictions, class_index)


def python_rows(model: Model, X: np.ndarray, unseen_str: str = "never-seen", unseen_int: int = -999) -> list:
    """Rows as Python values: categorical codes become labels (unseen codes become a label the
    feature does not have), NaN becomes None."""
    out = []
    for row in X:
        vals = []
        for f, v in zip(model.features, row):
            if math.isnan(v):
                vals.append(None)
            elif f.kind == "categorical":
                if math.isfinite(v) and v == int(v) and 0 <= v < len(f.categories):
                    vals.append(f.categories[int(v)])
                else:
                    other = unseen_int if isinstance(f.categories[0], int) else unseen_str
                    while other in f.categories:  # the model might list the stand-in itself
                        other = other * 2 if isinstance(other, str) else other - 1
                    vals.append(other)
            else:
                vals.append(float(v))
        out.append(vals)
    return out


def _same(a, b) -> bool:
    """Equal, counting NaN equal to NaN (for lists of floats or of lists)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b
