"""Executor for generated Python: write the module to a temporary folder, import it from there
in a fresh module namespace, run rows through it and collect the results as arrays.

Other tests (learners, importers, the CLI) reuse it::

    from run_python import run_python
    got = run_python(model, labels_for(model, X))
    assert np.array_equal(got.raw, raw_scores(model, X), equal_nan=True)
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
from rulegen.targets.python.target import PythonTarget

_COUNTER = itertools.count()


@dataclass
class PythonRun:
    module: ModuleType
    raw: np.ndarray  # predict_raw, shape (n_rows, n_raw)
    outputs: np.ndarray  # classifiers: predict_proba; regressors: predict (2-D)
    predictions: list  # predict(row) as returned (labels, values or lists)
    class_index: np.ndarray | None  # classifiers: index of predict(row) in CLASSES


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


def run_python(model: Model, rows, *, name: str = "model", directory=None, **options) -> PythonRun:
    """Generate the Python module for ``model``, import it and run ``rows`` (Python values:
    labels for categorical features, None for missing; see irfixtures.labels_for)."""
    files = PythonTarget().generate(model, name=name, **options)
    return run_module(import_source(files, directory), rows)


def _same(a, b) -> bool:
    """Equal, counting NaN equal to NaN (for lists of floats or of lists)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b
