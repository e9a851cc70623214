"""Executor for generated Python (the tests' name for :mod:`rulegen.verify.python`, which
`rulegen verify` uses too): write the module to a temporary folder, import it from there in a
fresh module namespace, run rows through it and collect the results as arrays.

Other tests (learners, importers, the CLI) reuse it::

    from run_python import run_python
    got = run_python(model, labels_for(model, X))
    assert np.array_equal(got.raw, raw_scores(model, X), equal_nan=True)
"""

from __future__ import annotations

from rulegen.ir.nodes import Model
from rulegen.targets.python.target import PythonTarget
from rulegen.verify.python import PythonRun, import_source, run_module  # noqa: F401


def run_python(model: Model, rows, *, name: str = "model", directory=None, **options) -> PythonRun:
    """Generate the Python module for ``model``, import it and run ``rows`` (Python values:
    labels for categorical features, None for missing; see irfixtures.labels_for)."""
    files = PythonTarget().generate(model, name=name, **options)
    return run_module(import_source(files, directory), rows)
