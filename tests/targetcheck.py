"""One check that a model compiles to every target and agrees with the evaluator bit for bit.

Learner tests call :func:`assert_targets_exact` with their fitted model and a few training-like
rows; probe rows on and around every threshold (float32 and float64 neighbours, NaN, +-inf,
listed and unseen category codes) are added here, so no learner test forgets them.
"""

from __future__ import annotations

import irfixtures
import numpy as np
from run_c import run_c
from run_python import run_python
from run_sql import check_sql

import rulegen
from rulegen.ir import evaluate
from rulegen.ir.nodes import Model


def assert_targets_exact(model: Model, X=None, dialects=("sqlite", "duckdb"), n_random=50):
    """Python, C and SQL (each dialect) give the evaluator's raw scores, outputs and classes."""
    probes = irfixtures.probe_rows(model, n_random=n_random)
    X = probes if X is None else np.vstack([np.asarray(X, dtype=np.float64), probes])
    raw = evaluate.raw_scores(model, X)
    classification = model.target.task == "classification"
    want = evaluate.predict_proba(model, X) if classification else evaluate.predict_value(model, X)
    res = run_python(model, irfixtures.labels_for(model, X))
    assert np.array_equal(res.raw, raw, equal_nan=True)
    assert np.array_equal(res.outputs, want, equal_nan=True)
    got = run_c(rulegen.generate(model, "c", name="learned"), "learned", X)
    assert np.array_equal(got["unseen"], unseen_count(model, X))
    assert np.array_equal(got["raw"], raw, equal_nan=True)
    assert np.array_equal(got["out"], want, equal_nan=True)
    assert np.array_equal(got["batch"].view(np.uint64), got["out"].view(np.uint64))
    if classification:
        index = evaluate.predict_class_index(model, X)
        assert np.array_equal(res.class_index, index)
        assert np.array_equal(got["class"], index)
    for dialect in dialects:
        check_sql(model, X, dialect)  # compares every output column with the evaluator
    return X


def unseen_count(model: Model, X) -> np.ndarray:
    """Per row, how many categorical features hold a value that is neither NaN nor a listed
    code (what NAME_unseen in C returns)."""
    X = np.asarray(X, dtype=np.float64)
    n = np.zeros(len(X), dtype=np.int64)
    for j, f in enumerate(model.features):
        if f.kind == "categorical":
            x = X[:, j]
            with np.errstate(invalid="ignore"):
                known = (x == np.floor(x)) & (x >= 0) & (x < len(f.categories))
            n += ~np.isnan(x) & ~known
    return n
