"""`rulegen verify`: build a target with the user's own toolchain, run it on their rows and on
probe rows at every threshold, and compare every output with the evaluator bit for bit.

``probes`` makes the rows, ``c``, ``python`` and ``sql`` build and run the code, ``explain``
prints a row's path; :func:`verify` puts them together and returns a :class:`Report`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rulegen.ir import evaluate
from rulegen.ir.nodes import Model
from rulegen.verify.probes import probe_rows

TARGETS = ("python", "c", "sql")


@dataclass
class Report:
    target: str
    n_data: int  # the user's rows
    n_probes: int  # rows made around the model's thresholds
    first_bad: int | None = None  # index of the first row that differs
    what: str = ""  # which output differs there, and how
    rows: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))

    @property
    def ok(self) -> bool:
        return self.first_bad is None


def expected(model: Model, X: np.ndarray, target: str = "python") -> dict[str, np.ndarray]:
    """The evaluator's raw scores, outputs (probabilities or values) and class indices."""
    raw = evaluate.raw_scores(model, X).astype(np.float64)
    if target == "sql":
        from rulegen.verify.sql import expected_outputs

        out = expected_outputs(model, raw)
    else:
        out = evaluate.outputs_of(model, raw)
    if model.target.task == "classification":
        out = evaluate.proba_of(model, out)
    res = {"raw": raw, "out": np.asarray(out, dtype=np.float64)}
    if model.target.task == "classification":
        res["class"] = np.argmax(res["out"], axis=1)
    return res


def same_bits(a: np.ndarray, b: np.ndarray, signed_zero: bool = True) -> np.ndarray:
    """Per row: every value the same double (NaN equal to NaN; -0.0 equal to 0.0 only where
    ``signed_zero`` is off: a SQL client may print either)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return np.zeros(len(a), dtype=bool)
    equal = (a.view(np.uint64) == b.view(np.uint64)) if signed_zero else (a == b)
    same = equal | (np.isnan(a) & np.isnan(b))
    return same.reshape(len(a), -1).all(axis=1)


def _run(model: Model, X: np.ndarray, target: str, options: dict) -> dict[str, np.ndarray]:
    import rulegen

    if target == "python":
        from rulegen.verify.python import import_source, python_rows, run_module

        run = run_module(import_source(rulegen.generate(model, "python", name="verified")), python_rows(model, X))
        got = {"raw": run.raw, "out": run.outputs}
        if run.class_index is not None:
            got["class"] = run.class_index
        return got
    if target == "sql":
        from rulegen.verify.sql import run_sql

        return run_sql(model, X, options.get("dialect", "sqlite"), options.get("database"))
    from rulegen.verify.c import STRICT, run_c

    files = rulegen.generate(model, "c", name="verified", **options.get("generate", {}))
    flags = options.get("cflags")
    res = run_c(files, "verified", X, cflags=tuple(flags) if flags is not None else (*STRICT, "-O2"),
                opt="", cc=options.get("cc"))
    got = {"raw": res["raw"], "out": res["out"], "batch": res["batch"]}
    if model.target.task == "classification":
        got["class"] = res["class"]
    return got


def verify(model: Model, data: np.ndarray, target: str, *, probes: bool = True, **options) -> Report:
    """Run ``target``'s code on ``data`` (codes for categories, NaN for missing) and on probe
    rows, and compare with the evaluator. ``options``: ``cc`` and ``cflags`` (a list) for C,
    ``dialect`` and ``database`` (a file; default in memory) for SQL."""
    data = np.asarray(data, dtype=np.float64).reshape(-1, len(model.features))
    extra = probe_rows(model, data) if probes else np.empty((0, len(model.features)))
    X = np.vstack([data, extra])
    want, got = expected(model, X, target), _run(model, X, target, options)
    report = Report(target, len(data), len(extra), rows=X)
    labels = {"raw": "raw scores", "out": "probabilities" if model.target.task == "classification" else "values",
              "batch": "the batch function's outputs", "class": "class"}
    first = {}  # output -> its first differing row, in the order raw, out, batch, class
    for key in ("raw", "out", "batch", "class"):
        if key not in got:
            continue
        ref = want["out" if key == "batch" else key]
        same = (np.asarray(got[key]) == ref) if key == "class" else same_bits(got[key], ref, target != "sql")
        if not same.all():
            first[key] = int(np.flatnonzero(~same)[0])
    if first:
        key = min(first, key=first.get)  # the earliest row; at a tie, the first output listed
        i = first[key]
        ref = want["out" if key == "batch" else key]
        report.first_bad = i
        report.what = (f"{labels[key]}: {target} gives {_show(got[key][i])}, "
                       f"the evaluator {_show(ref[i])}")
    return report


def _show(v) -> str:
    v = np.atleast_1d(np.asarray(v))
    return "[" + ", ".join(repr(float(x)) if v.dtype.kind == "f" else repr(int(x)) for x in v) + "]"
