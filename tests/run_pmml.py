"""Score PMML with PMML4S through pypmml: one JVM per process, many models, rows in batches.

Rows go over as JSON (numbers as Python's repr, infinities as the strings PMML4S parses,
missing as null) and come back as JSON, which cannot carry NaN, infinity or the sign of zero:
the rows whose outputs come back null or zero are scored again one at a time through py4j,
which carries every double exactly.
"""

from __future__ import annotations

import json
import math
import os
import tempfile

import numpy as np
from irfixtures import labels_for

from rulegen.ir.nodes import Model


def _cell(v):
    if isinstance(v, float):
        if math.isnan(v):
            return None
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
    return v


def load(pmml: bytes):
    from pypmml import Model as PModel
    from pypmml.base import PMMLContext

    # PMML4S builds a tree by recursion per nesting level: the JVM's default stack stops between
    # 600 and 1,000 levels, so the one JVM pypmml starts (on first use) gets a bigger one.
    PMMLContext.getOrCreate(java_opts=["-Xss64m"])

    with tempfile.NamedTemporaryFile(suffix=".pmml", delete=False) as f:
        f.write(pmml)
    try:
        return PModel.fromFile(f.name)
    finally:
        os.unlink(f.name)


def score(model: Model, pmml: bytes, X: np.ndarray) -> dict:
    """{"value": (n,) for regression} or {"proba": (n, classes), "label": [...]}, as PMML4S
    computes them for the rows X (codes for categories, NaN missing)."""
    m = load(pmml)
    values = labels_for(model, X)
    rows = [[_cell(v) for v in r] for r in values]
    names = [f.name for f in model.features]
    # PMML4S reads a JSON null in an integer field as 0, not as missing: those rows go by py4j
    ints = [j for j, f in enumerate(model.features) if f.categories and isinstance(f.categories[0], int)]
    out = json.loads(m.call("predict", json.dumps({"columns": names, "data": rows})))
    columns, data = out["columns"], out["data"]
    if model.target.task == "regression":
        numbers = [columns.index(next(c for c in columns if c.startswith("predicted_")))]
    else:
        numbers = [columns.index(f"probability_{c}") for c in model.target.classes]
    for i, r in enumerate(data):
        if any(r[j] is None or r[j] == 0 for j in numbers) or any(rows[i][j] is None for j in ints):
            exact = m.predict({n: (None if isinstance(v, float) and math.isnan(v) else v)
                               for n, v in zip(names, values[i])})
            exact = dict(exact)
            data[i] = [exact[c] for c in columns]
    return _columns(model, columns, data)


def _columns(model: Model, columns, data) -> dict:
    def col(name):
        j = columns.index(name)
        return [r[j] for r in data]

    def floats(values):
        return np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)

    target = next(c for c in columns if c.startswith("predicted_"))
    if model.target.task == "regression":
        return {"value": floats(col(target)), "columns": columns}
    probs = [floats(col(f"probability_{c}")) for c in model.target.classes]
    return {"proba": np.stack(probs, axis=1), "label": col(target), "columns": columns}
