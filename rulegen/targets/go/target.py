"""The Go target: one file, one package, standard library only (``math``), exact bit for bit.

Each tree is a function that adds its leaf to the accumulator array, as in the C target: nested
``if``/``else`` while the nesting stays within ``go_trees.MAX_NESTING`` blocks, a flat goto form
beyond, a forward pass over node ids for C4.5 blends, and the table form
(:mod:`rulegen.targets.go.table`) for big trees and big ensembles, whose branchy code the Go
compiler would take long over. ``form`` picks one for every tree (``auto``: the C target's sizes).

Exactness notes (docs/IR.md is the specification):

- Comparisons are in float64; float32 tests use :func:`rulegen.codegen.lower.float64_bound`.
  "x <= t, missing left" is ``!(x > t)``, NaN-safe with no call.
- Go's spec lets a compiler fuse ``x*y + z`` into an FMA (gc does on arm64, ppc64le, s390x),
  and says an explicit conversion ``float64(x*y)`` rounds and so prevents it: every product
  that feeds a sum (oblique sums, blend weights, a blended tree's weight) is wrapped in one.
  Ordinary leaves have the tree weight folded in at generation time: no product at all.
- float32 models accumulate in ``float32``; Go rounds every float32 operation to float32.
- Go constants are exact and round once to their type, so repr's shortest decimal is exact;
  a constant -0.0 is +0.0, and there is no infinity constant: ``negZero``, ``posInf``, ``negInf``.
- ``math.Exp`` is Go's own, not the C library's: links with exp may differ from the evaluator
  in the last place. ``EXP_NOTE`` states what the tests measured; raw scores are exact.
"""

from __future__ import annotations

import textwrap

import numpy as np

import rulegen
from rulegen.codegen import lower
from rulegen.codegen.jinja import render
from rulegen.codegen.literals import go_comment, go_float, go_identifier, go_string
from rulegen.errors import RulegenError
from rulegen.ir.nodes import Leaf, Model, Tree
from rulegen.targets import brace_trees
from rulegen.targets.go import table as go_table
from rulegen.targets.go import trees as go_trees
from rulegen.targets.base import Target
from rulegen.targets.brace_trees import show

FORMS = ("auto", "nested", "goto", "table")
MAX_BRANCHY_NODES = 5000  # a tree with more nodes goes to the table (as in the C target)
TABLE_ENSEMBLE_NODES = 2500  # an ensemble with more nodes in all goes to the table
# Measured by tests/test_target_go.py on its probe rows (go 1.19, amd64, glibc 2.36): see
# docs/targets/go.md. Raw scores and identity links are always bit for bit.
EXP_NOTE = ("math.Exp is Go's own, not the C library's exp/expf that rulegen's evaluator uses, so "
            "outputs of a link with exp (sigmoid, softmax, exp) may differ from it in the last place: "
            "measured on the tests' adversarial rows (go 1.19, amd64), 3,930 of 65,272 float64 outputs "
            "differ, each by at most one unit in the last place of max(|value|, 1) (a probability's "
            "complement 1 - p carries p's absolute difference), and 33 of 53,904 float32 outputs, by one "
            "float32 unit (none of the 7,953 outputs of the XGBoost models tested). Raw scores "
            "(PredictRaw), routing and identity links are exact")


class GoTarget(Target):
    name = "go"
    description = "one Go package (a single file), standard library only"

    def generate(self, model: Model, *, name: str = "model", **options) -> dict[str, str]:
        comments = bool(options.pop("comments", True))
        form = options.pop("form", "auto")
        if options:
            raise RulegenError(f"unknown option(s) for the go target: {', '.join(sorted(options))}")
        if form not in FORMS:
            raise RulegenError(f"form must be one of {', '.join(FORMS)}, got {form!r}")
        pkg = go_identifier(str(name))
        return {f"{pkg}.go": render("go/package.go.j2", _Builder(model, pkg, comments, form).context())}


class _Builder:
    def __init__(self, model: Model, pkg: str, comments: bool, form: str):
        self.model, self.pkg, self.comments, self.form = model, pkg, comments, form
        self.f32 = model.dtype == "float32"
        self.acc = "float32" if self.f32 else "float64"
        self.total = sum(len(t.nodes) for t in model.trees)

    def lit(self, v: float) -> str:
        """A value of the accumulation type, rounded to it."""
        if not self.f32:
            return go_float(v)
        with np.errstate(over="ignore"):
            text = go_float(float(np.float32(v)))
        return f"float32({text})" if text[0].isalpha() else text

    def form_of(self, tree: Tree) -> str:
        if lower.has_blend(tree):
            return "blend"
        branchy = "nested" if brace_trees.nesting(tree) <= go_trees.MAX_NESTING else "goto"
        if self.form in ("nested", "goto"):
            return self.form
        if not go_table.supports(tree):
            return branchy
        if self.form == "table" or len(tree.nodes) > MAX_BRANCHY_NODES:
            return "table"
        if len(self.model.trees) > 1 and self.total > TABLE_ENSEMBLE_NODES:
            return "table"
        return branchy

    def tree_function(self, index: int, tree: Tree, form: str) -> dict:
        m = self.model
        em = go_trees.Emitter(m, tree, index, self.comments)
        width = 1 if tree.output is not None else m.n_raw
        slots = [tree.output] if tree.output is not None else list(range(m.n_raw))
        if form == "blend":
            body = brace_trees.emit_blend(em, width, lambda leaf: [go_float(v) for v in leaf.value])
            body += self.blend_tail(tree, width, slots)
        else:
            def leaf_lines(_nid: int, leaf: Leaf) -> list[str]:
                if m.aggregation == "vote":
                    j = lower.vote_index(leaf, tree.weight)
                    return [f"acc[{j}] = acc[{j}] + {self.lit(tree.weight)}"]
                values = lower.leaf_contribution(m, tree, leaf)
                return [f"acc[{j}] = acc[{j}] + {self.lit(v)}" for j, v in zip(slots, values)]

            body = (brace_trees.emit_nested if form == "nested" else brace_trees.emit_goto)(em, leaf_lines)
        note = f"tree {index}: {len(tree.nodes)} nodes, depth {lower.depth(tree)}, {form} form"
        if tree.weight != 1.0:
            note += f", weight {tree.weight!r}"
        if tree.output is not None:
            note += f", adds to raw[{tree.output}]"
        return {"name": f"tree{index}", "tables": em.tables, "body": body, "comments": [note], "xx": False}

    def blend_tail(self, tree: Tree, width: int, slots: list[int]) -> list[str]:
        """Weight the blended output o[], then add it (or its vote) to the accumulator; the
        weight's product is converted explicitly so that it cannot fuse into the sum."""
        ind, w = "\t", go_float(tree.weight)
        if self.model.aggregation == "vote":
            out = [f"{ind}o[{k}] = {w} * o[{k}]" for k in range(width)] if tree.weight != 1.0 else []
            return out + [f"{ind}b := argmax(o[:])", f"{ind}acc[b] = acc[b] + {self.lit(tree.weight)}"]
        cast = "float32" if self.f32 else "float64"
        if tree.weight != 1.0:
            return [f"{ind}acc[{j}] = acc[{j}] + {cast}({w}*o[{k}])" for k, j in enumerate(slots)]
        return [f"{ind}acc[{j}] = acc[{j}] + {cast}(o[{k}])" for k, j in enumerate(slots)]

    def units(self) -> list[dict]:
        units: list = []
        for i, tree in enumerate(self.model.trees):
            form = self.form_of(tree)
            if form != "table":
                units.append(self.tree_function(i, tree, form))
                continue
            kind = go_table.leaf_kind(self.model, tree)
            if not (units and isinstance(units[-1], go_table.Group) and units[-1].kind == kind):
                units.append(go_table.Group(self.model, kind, f"g{i}", self.lit))
            units[-1].add(i, tree)
        return [u.unit(self.comments) if isinstance(u, go_table.Group) else u for u in units]

    def context(self) -> dict:
        m = self.model
        classifier = m.target.task == "classification"
        divisor = None
        if m.aggregation == "mean":
            divisor = self.lit(float(len(m.trees)))
        elif m.aggregation == "vote":
            divisor = self.lit(lower.total_weight(m))
        prov = m.provenance
        features = []
        for i, f in enumerate(m.features):
            cats = [f"{k} = {go_comment(show(c))}" for k, c in enumerate(f.categories)]
            features.append({"index": i, "name": go_comment(show(f.name)), "kind": f.kind,
                             "categories": cats, "n": len(f.categories), "string": go_string(f.name)})
        units = self.units()
        about = [f"algorithm {prov.algorithm}" if prov.algorithm else "",
                 f"trained with {prov.library}" if prov.library else "",
                 f"{prov.n_samples} samples" if prov.n_samples is not None else ""]
        return {
            "pkg": self.pkg, "version": rulegen.__version__,
            "source": go_comment(", ".join(a for a in about if a)),
            "params": go_comment(", ".join(f"{k}={v}" for k, v in prov.params)),
            "n_trees": len(m.trees), "aggregation": m.aggregation, "link": m.link, "dtype": m.dtype,
            "task": m.target.task, "target_name": go_comment(show(m.target.name)),
            "classifier": classifier, "binary": classifier and m.n_raw == 1 and len(m.target.classes) == 2,
            "n_features": len(m.features), "n_raw": m.n_raw,
            "n_outputs": len(m.target.classes) if classifier else m.n_raw,
            "features": features, "categorical": [f for f in features if f["kind"] == "categorical"],
            "classes": [{"string": go_string(c), "comment": go_comment(show(c))} for c in m.target.classes],
            "acc": self.acc, "f32": self.f32, "base": [self.lit(b) for b in m.base_score], "divisor": divisor,
            "units": units, "xx": any(u["xx"] for u in units), "exp_note": textwrap.wrap(EXP_NOTE + ".", 92) if m.link != "identity" else [],
            "uses_dot": any("dot(x," in line for u in units for line in u["tables"] + u["body"]),
            "uses_argmax": any("argmax(" in line for u in units for line in u["body"]),
        }
