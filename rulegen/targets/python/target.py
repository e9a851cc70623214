"""The Python target: one standard-library module that predicts exactly as the evaluator.

Contract (DESIGN.md section 4): ``FEATURES``, ``TASK``, ``CLASSES`` (classifiers), ``N_OUTPUTS``,
``predict(row)``, ``predict_proba(row)`` (classifiers), ``predict_raw(row)`` and the batch forms
``predict_batch(rows)`` / ``predict_proba_batch(rows)``. A row is a sequence in ``FEATURES`` order
or a mapping from feature name to value; ``None`` or NaN is missing; categorical values are
their labels and anything else is an unseen category.

Exactness: float32 comparisons become float64 ones against bounds from
:func:`rulegen.codegen.lower.float64_bound`; float32 accumulation rounds every addition and
division to float32 (exact: a float64 sum or quotient of two float32 values rounded once more
to float32 is the correctly rounded float32 result, since 53 >= 2 * 24 + 2): sums by Veltkamp's
split or a one-element ``array("f")`` (:mod:`rulegen.targets.python.body`), elsewhere with
``struct``, mapping its OverflowError to +-inf; ``math.exp`` is guarded as the evaluator guards
it. A numeric model whose rows read few of their inputs converts each value where a test reads
it, ``float(x[f])``, so numpy float32 scalars are widened, never compared in float32; ``None``
makes that raise TypeError, and the row is then converted whole (None to NaN) and walked again.
Trees are laid out by :mod:`rulegen.targets.python.tree`, the entry points by
:mod:`rulegen.targets.python.body`.
"""

from __future__ import annotations

from rulegen.codegen.jinja import render
from rulegen.codegen.literals import py_comment, py_docstring, py_identifier, py_str
from rulegen.codegen.lower import has_blend
from rulegen.ir.nodes import Model
from rulegen.targets.base import Target
from rulegen.targets.python.body import RawBody, lazy_reads_pay, reads_directly
from rulegen.targets.python.tree import (  # noqa: F401  (limits re-exported for tests and docs)
    MAX_BLOCK_DEPTH,
    MAX_CHAIN,
    MAX_INLINE_TERMS,
)

# What rows the entry points take: "any" sequence or mapping of values, each converted with
# float() where read; or "floats", lists or tuples of floats and ints read as they are (m2cgen's
# contract, and its speed), for a numeric model (others keep "any").
ROWS = ("any", "floats")
# A module named like one the generated code imports would shadow it when imported itself.
_IMPORTED = frozenset({"array", "ctypes", "math", "struct"})
# How much of the feature list the module docstring spells out (FEATURES always has it all).
DOC_FEATURES = 50
DOC_CATEGORIES = 10


def module_name(name: str) -> str:
    """The module (file stem) for a user-given ``name``: a valid, non-shadowing identifier."""
    stem = py_identifier(str(name))
    return stem + "_model" if stem in _IMPORTED else stem


class PythonTarget(Target):
    name = "python"
    description = "one dependency-free Python module (standard library only)"

    def generate(self, model: Model, *, name: str = "model", comments: bool = True, rows: str = "any",
                 **options) -> dict[str, str]:
        if options:
            raise TypeError(f"unknown option(s) for the python target: {', '.join(sorted(options))}")
        if rows not in ROWS:
            raise ValueError(f"rows must be one of {', '.join(ROWS)}, not {rows!r}")
        stem = module_name(name)
        return {stem + ".py": render("python/module.py.j2", self.context(model, stem, comments, rows))}

    def context(self, model: Model, stem: str, comments: bool = True, rows: str = "any") -> dict:
        classifier = model.target.task == "classification"
        # rows of floats are read as they are where the model's tests allow (reads_directly)
        floats = rows == "floats" and reads_directly(model)
        lazy = floats or lazy_reads_pay(model)
        body = RawBody(model, comments, lazy, floats)
        one = len(model.trees) == 1 and not has_blend(model.trees[0])
        if one:  # the tree gives its leaf; every output is folded per leaf at generation
            body.one_tree()
        else:
            body.trees()
        helpers = body.helpers
        inputs, levels_consts = [], []  # per feature, for a model with categorical features
        numeric = all(f.kind != "categorical" for f in model.features)
        for j, feat in enumerate(model.features if not numeric else ()):
            note = "  " + py_comment("# " + py_str(feat.name)) if comments else ""
            if feat.kind == "categorical":
                levels = ", ".join(py_str(c) for c in feat.categories)
                levels_consts.append((f"_LEVELS_{j}", f"frozenset({{{levels}}})"))
                inputs.append((f"_category(row[{j}], _LEVELS_{j})", note))
            else:
                helpers.add("number")
                inputs.append((f"_number(row[{j}])", note))
        return {
            "docstring": py_docstring(self._docstring(model, stem, floats)),
            "imports": [m for m, need in (("array", "cell" in helpers), ("ctypes", "expf" in helpers),
                                          ("math", helpers & {"exp", "expf"}), ("struct", "f32" in helpers)) if need],
            "numeric": numeric,
            "lazy": lazy,
            "floats": floats,
            "categorical": [j for j, f in enumerate(model.features) if f.kind == "categorical"],
            "features": [py_str(f.name) for f in model.features],
            "task": py_str(model.target.task),
            "classes": [py_str(c) for c in model.target.classes] if classifier else None,
            "n_outputs": len(model.target.classes) if classifier else model.target.n_outputs,
            "constants": levels_consts + body.constants,
            "helpers": helpers,
            "functions": body.functions,
            "inputs": inputs,
            "n_features": len(model.features),
            "dtype": model.dtype,
            "link": model.link,
            # each entry point: the expression of x (the row as the trees read it) it returns
            "entries": body.entries,
            "output_lines": [] if one else self._link(model),
        }

    @staticmethod
    def _link(model: Model) -> list[str]:
        """_outputs(raw): the link in float64, or XGBoost's float32 link for float32 models
        (docs/IR.md)."""
        if model.dtype == "float32":
            return _link_f32(model.link)
        if model.link == "identity":
            return ["return raw"]
        if model.link == "sigmoid":
            return ["return [1.0 / (1.0 + _exp(-v)) for v in raw]"]
        if model.link == "exp":
            return ["return [_exp(v) for v in raw]"]
        return [  # softmax
            "m = raw[0]",
            "for v in raw:  # the maximum, or NaN if any score is NaN (as numpy.max)",
            "    if v > m or v != v:",
            "        m = v",
            "e = [_exp(v - m) for v in raw]",
            "s = e[0]",
            "for v in e[1:]:  # summed left to right",
            "    s = s + v",
            "return [v / s for v in e]",
        ]

    @staticmethod
    def _docstring(model: Model, stem: str, floats: bool = False) -> str:
        t, p = model.target, model.provenance
        classifier = t.task == "classification"
        lines = [
            f"{'Classifier' if classifier else 'Regressor'} for {py_str(t.name)}, compiled by rulegen "
            "into standard-library Python.",
            "",
            f"{len(model.trees)} tree(s), aggregation {model.aggregation}, link {model.link}, "
            f"accumulated in {model.dtype}.",
        ]
        if classifier:
            lines.append("Classes: " + ", ".join(py_str(c) for c in t.classes) + ".")
        about = [f"algorithm {py_str(p.algorithm)}" if p.algorithm else "",
                 f"trained with {py_str(p.library)}" if p.library else "",
                 f"{p.n_samples} samples" if p.n_samples is not None else "",
                 f"{p.n_features} features" if p.n_features is not None else ""]
        if any(about):
            lines.append("Provenance: " + ", ".join(a for a in about if a) + ".")
        if p.params:
            lines.append("Parameters: " + ", ".join(f"{k}={py_str(v)}" for k, v in p.params) + ".")
        calls = [("predict(row)", "the class label" if classifier else "the value(s)")]
        if classifier:
            calls.append(("predict_proba(row)", "probabilities, in CLASSES order"))
        calls += [("predict_batch(rows)", "one prediction per row"),
                  ("predict_raw(row)", "the scores before the link"),
                  ("unseen_features(row)", "categorical features whose value is not listed")]
        lines += ["", "Usage::", "", f"    import {stem}", ""]
        lines += [f"    {stem}.{call:<22} # {what}" for call, what in calls]
        if floats:
            lines += [
                "",
                "A row is a list or tuple of Python floats or ints (numpy float32 and float64 scalars",
                "too) in FEATURES order, read as it is, with no length check (compiled with --rows",
                "floats). None or NaN is missing. Convert Decimal, Fraction and numpy float16 values",
                "with float() first: they would be compared as they are. Results equal rulegen's",
                "reference evaluator bit for bit.",
            ]
        else:
            lines += [
                "",
                "A row is a sequence of values in FEATURES order, or a mapping with every feature name",
                "as a key. None or NaN is missing. Categorical features take their labels; any other",
                "value is an unseen category. Results equal rulegen's reference evaluator bit for bit.",
            ]
        lines += ["", "Features:"]
        for f in model.features[:DOC_FEATURES]:
            kind = f.kind
            if f.kind == "categorical":
                cats = ", ".join(py_str(c) for c in f.categories[:DOC_CATEGORIES])
                kind += f": {cats}" + (", ..." if len(f.categories) > DOC_CATEGORIES else "")
            lines.append(f"    {py_str(f.name)} ({kind})")
        if len(model.features) > DOC_FEATURES:
            lines.append(f"    ... and {len(model.features) - DOC_FEATURES} more (see FEATURES)")
        return "\n".join(lines) + "\n"


def _link_f32(link: str) -> list[str]:
    """XGBoost's float links: every operation rounded to float32, expf from the C library."""
    if link == "identity":
        return ["return [_f32(v) for v in raw]"]
    if link == "exp":
        return ["return [_expf(v) for v in raw]"]
    if link == "sigmoid":  # 1 / (expf(min(-x, 88.7f)) + 1); NaN stays NaN
        return ["return [_f32(1.0 / _f32(_expf(_EXP_CAP if _EXP_CAP < -v else -v) + 1.0)) for v in raw]"]
    return [  # softmax
        "m = raw[0]",
        "for v in raw:  # fmaxf: the largest, NaN passed over",
        "    if v > m or m != m:",
        "        m = v",
        "e = [_expf(_f32(v - m)) for v in raw]",
        "s = 0.0",
        "for v in e:  # summed in double, left to right",
        "    s = s + v",
        "s = _f32(s)",
        "return [_f32(v / s) for v in e]",
    ]
