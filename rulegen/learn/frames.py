"""pandas DataFrames as learner input, read as `rulegen fit` reads a CSV (rulegen/data.py):
a ``category`` column or a text column becomes a categorical feature (codes of its labels),
bool and numeric columns are numbers, and NaN, None and ``pd.NA`` are all missing.

Text columns go through :func:`rulegen.data.design_matrix`, so a DataFrame and the same
table read from a CSV give the same labels, codes and errors (a stray word in a column of
numbers is refused there too). A ``category`` column keeps its dtype's own categories, in
their order, as the labels. pandas is never imported: a frame is recognised by its dtypes.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.data import Table, _encode, design_matrix
from rulegen.errors import DataError, LearnerError


def _kind(col) -> str:
    """'category', 'text', or 'number' (numeric and bool, nullable or not)."""
    dtype = col.dtype
    if str(dtype) == "category":
        return "category"
    if getattr(dtype, "kind", "O") in "biuf":
        return "number"
    if str(dtype) in ("boolean", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16",
                      "UInt32", "UInt64", "Float32", "Float64"):
        return "number"
    return "text"  # object, string[python], string[pyarrow]


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or \
        type(v).__name__ in ("NAType", "NaTType")


def _cells(values) -> list:
    """Text cells as data.py holds them: str, or None for missing."""
    return [None if _missing(v) else str(v) for v in values]


def has_categories(X) -> bool:
    """A DataFrame that numpy cannot read as numbers by itself: a column that is text or
    ``category``, or a nullable one (``Int64``, ``boolean``: pd.NA is no float)."""
    dtypes = getattr(X, "dtypes", None)
    return dtypes is not None and hasattr(X, "columns") and not all(
        isinstance(d, np.dtype) and d.kind in "biuf" for d in dtypes)


def _numbers(col) -> np.ndarray:
    try:
        return col.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise LearnerError(f"column {col.name!r}: not numbers: {exc}") from None


def encode_for_fit(df) -> tuple[np.ndarray, dict]:
    """X (float64, codes for categorical columns) and {column position: labels}."""
    names = [str(c) for c in df.columns]
    out = np.empty((len(df), len(names)))
    categories = {}
    text = []
    for k, c in enumerate(df.columns):
        col = df[c]
        kind = _kind(col)
        if kind == "number":
            out[:, k] = _numbers(col)
        elif kind == "category":
            labels = tuple(v.item() if isinstance(v, np.generic) else v
                           for v in col.cat.categories)
            if not labels:
                labels = ("",)  # a feature needs one label; no row has it
            codes = col.cat.codes.to_numpy().astype(np.float64)
            codes[codes < 0] = np.nan
            out[:, k], categories[k] = codes, labels
        else:
            text.append(k)
    if text:
        table = Table("DataFrame", [names[k] for k in text],
                      [_cells(df[df.columns[k]].tolist()) for k in text],
                      list(range(len(df))))  # a "line" is the row's position
        try:
            A, _, cats = design_matrix(table, range(len(text)))
        except DataError as exc:  # data.py names the row as a CSV line
            raise LearnerError(str(exc).replace("DataFrame:", "DataFrame row ", 1)) from None
        for i, k in enumerate(text):
            out[:, k] = A[:, i]
            if i in cats:
                categories[k] = cats[i]
    return out, categories


def as_numbers(X):
    """X as numbers: a DataFrame with text or category columns encoded as fit encodes it
    (for learners that also read X in float64), anything else unchanged."""
    return encode_for_fit(X)[0] if has_categories(X) else X


def encode_for_predict(df, features) -> np.ndarray:
    """The model's features from ``df`` (columns already in the model's order) as the
    evaluator's input: a label the model does not list gets code -1 (its unseen route)."""
    out = np.empty((len(df), len(features)))
    for k, feat in enumerate(features):
        col = df[df.columns[k]]
        if feat.kind == "numeric":
            if _kind(col) != "number":
                raise LearnerError(f"column {feat.name!r} holds text, but the model reads "
                                   "it as numbers")
            out[:, k] = _numbers(col)
        else:
            out[:, k] = _encode(feat, _cells(col.tolist()))
    return out
