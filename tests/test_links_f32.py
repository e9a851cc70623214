"""XGBoost's float32 links (docs/IR.md) in every target, on raw scores where glibc's ``expf``
and exp rounded to float32 disagree.

Each model is two trees (so SQL computes the link instead of folding one tree's outputs in): an
interval split on x0 picks leaf i for x0 = i, the second tree adds 0. The evaluator, C and Python
must give the C library's ``expf``; SQL gives exp rounded to float32 (tests/run_sql.py), and the
Python module without a C library falls back to that too.
"""

from __future__ import annotations

import math
import platform

import numpy as np
import pytest
from run_python import import_source, run_module
from targetcheck import assert_targets_exact

import rulegen
from rulegen.ir import evaluate, libm
from rulegen.ir.libm import exp_rounded_array
from rulegen.ir.nodes import DefaultChild, Feature, IntervalTest, Leaf, Model, Split, Target, Tree
from rulegen.ir.validate import validate

# float32 inputs where glibc 2.36's expf is not exp rounded to float32 (found by scanning
# every float32 in these ranges with a C program), and ordinary ones
MISROUNDED = [float.fromhex(h) for h in (
    "-0x1.05a36ap-10", "-0x1.3ffff6p+2", "0x1.0024a4p+0", "0x1.fefe02p-16", "-0x1.5be5b4p+6",
    "0x1.4028e6p+6", "-0x1.708b98p+6")]
ORDINARY = [0.0, -0.0, 1.0, -2.5, 88.5, 88.7, 89.0, 100.0, -103.0, -104.0, -110.0, 3e38, -3e38]


def two_trees(columns: list[list[float]], task: str, link: str) -> Model:
    """Output k of row x0 = i is columns[k][i] (float32 values)."""
    n = len(columns[0])
    trees = []
    for k, values in enumerate(columns):
        split = Split(IntervalTest(0, "<=", tuple(i + 0.5 for i in range(n - 1))),
                      tuple(range(1, n + 1)), DefaultChild(0))
        leaves = tuple(Leaf((float(np.float32(v)),)) for v in values)
        out = k if len(columns) > 1 else None
        trees += [Tree((split,) + leaves, output=out), Tree((Leaf((0.0,)),), output=out)]
    target = (Target("classification", "y", classes=tuple(f"c{k}" for k in range(max(2, len(columns)))))
              if task == "classification" else Target("regression", "y"))
    return validate(Model((Feature("x0"),), target, tuple(trees), (0.0,) * len(columns), "sum", link,
                          "float32"))


def models() -> dict[str, Model]:
    xs = MISROUNDED + ORDINARY
    # sigmoid takes expf(-raw); softmax expf(raw[k] - max), with class 0 at 0.0 the largest
    neg = [x for x in xs if -1e30 < x <= 0]  # SQLite refuses sums that may pass float32's range
    return {
        "exp": two_trees([xs], "regression", "exp"),
        "sigmoid": two_trees([[-x for x in xs]], "classification", "sigmoid"),
        "softmax": two_trees([[0.0] * len(neg), neg, [n / 2 for n in neg]], "classification", "softmax"),
    }


@pytest.mark.parametrize("name", ["exp", "sigmoid", "softmax"])
def test_every_target_computes_the_float32_link(name):
    model = models()[name]
    n = len(model.trees[0].nodes) - 1
    X = np.arange(n, dtype=np.float64)[:, None]
    # Python and C equal the evaluator (the C library's expf); SQL equals the evaluator with exp
    # rounded to float32 (run_sql.expected; ClickHouse's own exp there), in every SQL engine
    assert_targets_exact(model, X, dialects=("sqlite", "duckdb", "postgres", "clickhouse"), n_random=5)


def test_the_inputs_tell_expf_from_rounded_exp():
    """The premise of the other tests on this C library: these inputs tell the two apart, and
    the evaluator's sigmoid follows XGBoost's formula (checked by hand here)."""
    x = np.array(MISROUNDED, dtype=np.float32)
    theirs = np.array([libm.expf(v) for v in x], dtype=np.float32)
    if platform.libc_ver()[0] == "glibc":
        assert (theirs != exp_rounded_array(x)).all()
    raw = np.array([[-v] for v in MISROUNDED] + [[-100.0], [math.nan]], dtype=np.float32)
    want = [np.float32(1) / (np.float32(libm.expf(min(-float(r), float(np.float32(88.7))))) + np.float32(1))
            for r in raw[:, 0]]
    got = evaluate.apply_link_f32("sigmoid", raw)[:, 0]
    assert np.array_equal(got, np.array(want, dtype=np.float32), equal_nan=True)
    assert np.isnan(got[-1]) and got[-2] == np.float32(1) / (np.float32(libm.expf(88.7)) + 1)


@pytest.mark.parametrize("name", ["exp", "sigmoid", "softmax"])
def test_python_without_a_c_library_rounds_exp(name):
    model = models()[name]
    module = import_source(rulegen.generate(model, "python", name="m"))
    assert module._C_EXPF is not None  # this platform has one: the exact path is the default
    module._C_EXPF = None
    X = np.arange(len(model.trees[0].nodes) - 1, dtype=np.float64)[:, None]
    run = run_module(module, [[float(i)] for i in X[:, 0]])
    out = evaluate.apply_link_f32(model.link, evaluate.raw_scores(model, X), expf=exp_rounded_array)
    want = evaluate.proba_of(model, out) if model.target.task == "classification" else out
    assert np.array_equal(run.outputs, want.astype(np.float64), equal_nan=True)
    if platform.libc_ver()[0] == "glibc":  # and the fallback is not the exact path
        exact = evaluate.predict_proba(model, X) if name != "exp" else evaluate.predict_value(model, X)
        assert not np.array_equal(run.outputs, exact)
