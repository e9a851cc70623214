"""The JavaScript target: one dependency-free ES module, exact bit for bit (links: see EXP_NOTE).

Every tree is stored as typed arrays (the table form) that one loop descends, for every model
size: there is no nesting to overflow V8's parser, no function too big for its optimising
compiler (TurboFan skips functions over 60 KB of bytecode, --max-optimized-bytecode-size), and a
2,500-deep chain or 1,000 trees load as a few array literals. Per node (global id ``n``):

- ``KIND[n]``: 0 leaf, 1 ``x < THR[n]``, 2 ``x <= THR[n]`` (a numeric split whose missing
  value goes to a fixed child: ``LEFT``/``RIGHT``/``MISS`` are node ids), 3 any other split,
  routed by the small interpreter over ``CODE`` (a Float64Array of test records, see
  :func:`_Tables.test`); its children are listed in ``KIDS`` from ``RIGHT[n]``.
- For a leaf, ``LEFT[n]`` is the offset of its values in ``VALS`` (the tree weight folded in
  and rounded to the model's dtype, as :func:`rulegen.codegen.lower.leaf_contribution`), or the
  class it votes for.

Exactness (docs/IR.md): JavaScript numbers are IEEE doubles and every operation rounds once
(no FMA contraction is allowed by the language, so oblique sums and blend weights need no
guard). float32 tests compare against the exact float64 bound from
:func:`rulegen.codegen.lower.float64_bound`; float32 accumulation rounds each addition and
division with ``Math.fround`` (exact: 53 >= 2 * 24 + 2). C4.5 blends run as a forward pass over
node ids, which sums the reached leaves in increasing id as the IR defines.
"""

from __future__ import annotations

import textwrap

import numpy as np

import rulegen
from rulegen.codegen import lower
from rulegen.codegen.jinja import render
from rulegen.codegen.literals import c_identifier, js_comment, js_label, js_number, js_string
from rulegen.errors import RulegenError
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Surrogates,
)
from rulegen.targets.base import Target

# V8's Math.exp is not glibc's exp, and there is no expf: float64 links call Math.exp, float32
# links Math.fround(Math.exp(x)). Measured with Node.js 20.20 (V8 11.3) against glibc 2.36 on
# the link outputs of tests/test_target_javascript.py (every fixture, random and imported model
# of several trees with a link, on its probe rows), which asserts these bounds. (A one-tree
# model's outputs are folded per leaf at generation: exact.) One ulp of exp can become two in
# a softmax (a quotient of two exps) and in 1 - p.
EXP_ULPS_F64 = 2  # largest difference of a float64 link output, in float64 ulps
EXP_ULPS_F32 = 2  # largest difference of a float32 link output, in float32 ulps
EXP_MEASURED = {
    "float64": "831 of 17,890 outputs differed, none by more than 2 ulps, no class changed",
    "float32": "20 of 24,401 outputs differed, none by more than 2 ulps, no class changed",
}
EXP_NOTE = ("V8's Math.exp is not the C library's exp: outputs after the {link} link may differ "
            "from rulegen's evaluator (glibc) by up to {ulps} {kind} ulps (on rulegen's test rows "
            "{measured}); raw scores, routing and everything before the link are exact.")
DOC_FEATURES = 200  # features listed in the header comment (FEATURES always has them all)
ROW = 20  # numbers per line in the array literals


def module_stem(name: str) -> str:
    return c_identifier(str(name))


class JavaScriptTarget(Target):
    name = "javascript"
    description = "one dependency-free ES module (Node.js, browsers)"

    def generate(self, model: Model, *, name: str = "model", comments: bool = True, **options) -> dict[str, str]:
        if options:
            raise RulegenError(f"unknown option(s) for the javascript target: {', '.join(sorted(options))}")
        stem = module_stem(name)
        return {stem + ".mjs": render("javascript/module.mjs.j2", context(model, bool(comments)))}


class _Tables:
    """The typed arrays of every tree, filled in IR order."""

    def __init__(self, model: Model):
        self.model = model
        self.f32 = model.dtype == "float32"
        self.kind, self.feat, self.thr, self.left, self.right, self.miss = [], [], [], [], [], []
        self.vals: list[float] = []
        self.code: list[float] = []
        self.kids: list[int] = []

    def dt(self, v: float) -> float:
        return float(np.float32(v)) if self.f32 else float(v)

    # --- test records in CODE: each starts with its type --------------------------------

    def test(self, test, unseen: int) -> int:
        """Append a test record and return its offset. ``unseen`` is the child position for
        a category outside the feature's list (categorical records only).

        1 numeric  [1, f, le, bound]          le: 1 for <=, 0 for <; bound already exact in float64
        2 category [2, f, n, unseen, pos_0 .. pos_n-1]   the child position of each code
        3 interval [3, f, nb, le_0, b_0, ...]            the first i with x op_i b_i, else nb
        4 oblique  [4, le, t, n, f_0, w_0, ...]          s = ((0 + w0*x0) + w1*x1) + ...
        """
        at, c = len(self.code), self.code
        if isinstance(test, NumericTest):
            op, b = lower.float64_bound(test.op, test.threshold, test.dtype)
            c += [1, test.feature, int(op == "<="), b]
        elif isinstance(test, (CategoricalTest, MultiwayTest)):
            n = len(self.model.features[test.feature].categories)
            pos = [unseen] * n
            if isinstance(test, CategoricalTest):
                pos = [1] * n
                for k in test.categories:
                    pos[k] = 0
            else:
                for g, group in enumerate(test.groups):
                    for k in group:
                        pos[k] = g
            c += [2, test.feature, n, unseen] + pos
        elif isinstance(test, IntervalTest):
            c += [3, test.feature, len(test.bounds)]
            for b in test.bounds:
                op, b2 = lower.float64_bound(test.op, b, test.dtype)
                c += [int(op == "<="), b2]
        elif isinstance(test, ObliqueTest):
            c += [4, int(test.op == "<="), test.threshold, len(test.features)]
            for f, w in zip(test.features, test.weights):
                c += [f, w]
        else:  # pragma: no cover - validation admits no other test
            raise RulegenError(f"unsupported test {test!r}")
        return at

    def missing(self, rule) -> int:
        """A missing-value record: [0, child] | [1, default, n, (child_if_true, test)...] |
        [2, n, w_0, ...] (a blend)."""
        if isinstance(rule, DefaultChild):
            at = len(self.code)
            self.code += [0, rule.child]
            return at
        if isinstance(rule, Surrogates):
            # a surrogate's unseen category "does not hold": position 1
            tests = [(s.child_if_true, self.test(s.test, 1)) for s in rule.surrogates]
            at = len(self.code)
            self.code += [1, rule.default, len(tests)] + [v for pair in tests for v in pair]
            return at
        at = len(self.code)
        self.code += [2, len(rule.weights)] + list(rule.weights)
        return at

    # --- nodes ---------------------------------------------------------------------------

    def add_tree(self, tree, blended: bool, vote: bool) -> int:
        base = len(self.kind)
        for node in tree.nodes:
            if isinstance(node, Leaf):
                self.kind.append(0)
                self.feat.append(0)
                self.thr.append(0.0)
                if vote and not blended:
                    self.left.append(lower.vote_index(node, tree.weight))
                else:
                    self.left.append(len(self.vals))
                    # a blended tree weighs its raw leaf values at run time, as the evaluator
                    self.vals += list(node.value) if blended else \
                        list(lower.leaf_contribution(self.model, tree, node))
                self.right.append(0)
                self.miss.append(0)
                continue
            t, kids = node.test, [base + k for k in node.children]
            if isinstance(t, NumericTest) and isinstance(node.missing, DefaultChild):
                op, b = lower.float64_bound(t.op, t.threshold, t.dtype)
                self.kind.append(2 if op == "<=" else 1)
                self.feat.append(t.feature)
                self.thr.append(b)
                self.left.append(kids[0])
                self.right.append(kids[1])
                self.miss.append(kids[node.missing.child])
                continue
            unseen = node.unseen if node.unseen is not None else 1
            self.kind.append(3)
            self.feat.append(0)
            self.thr.append(0.0)
            self.left.append(self.test(t, unseen))
            self.right.append(len(self.kids))
            self.kids += kids
            self.miss.append(self.missing(node.missing))
        return base


def _lines(values) -> list[str]:
    return [", ".join(map(js_number, values[i:i + ROW])) for i in range(0, len(values), ROW)]


def context(model: Model, comments: bool = True) -> dict:
    tab = _Tables(model)
    vote = model.aggregation == "vote"
    roots, blends = [], []
    for tree in model.trees:
        blends.append(int(lower.has_blend(tree)))
        roots.append(tab.add_tree(tree, blends[-1], vote))
    classifier = model.target.task == "classification"
    binary = classifier and model.n_raw == 1 and len(model.target.classes) == 2
    divisor = None
    if model.aggregation == "mean":
        divisor = tab.dt(float(len(model.trees)))
    elif vote:
        divisor = tab.dt(lower.total_weight(model))
    f32 = model.dtype == "float32"
    sizes = [len(t.nodes) for t in model.trees]
    outs = [t.output if t.output is not None else 0 if model.n_raw == 1 else -1 for t in model.trees]
    arrays = [(name, kind, _lines(values)) for name, kind, values in (
        ("KIND", "Uint8Array", tab.kind), ("FEAT", "Int32Array", tab.feat), ("THR", "Float64Array", tab.thr),
        ("LEFT", "Int32Array", tab.left), ("RIGHT", "Int32Array", tab.right), ("MISS", "Int32Array", tab.miss),
        ("VALS", "Float64Array", tab.vals), ("CODE", "Float64Array", tab.code), ("KIDS", "Int32Array", tab.kids),
        # per tree: first node, node count, output slot (-1: all), blended, weight, vote weight
        ("ROOT", "Int32Array", roots), ("SIZE", "Int32Array", sizes), ("TOUT", "Int32Array", outs),
        ("BLEND", "Uint8Array", blends), ("TW", "Float64Array", [t.weight for t in model.trees]),
        ("VW", "Float64Array", [tab.dt(t.weight) for t in model.trees]))]
    # one tree without blends: each leaf's outputs as the evaluator computes them, exact whatever
    # the exp (OUTS[node * N_OUTPUTS + k]); as the C target's one-tree fold
    folded = len(model.trees) == 1 and not blends[0] and model.link != "identity"
    if folded:
        leaves, _raw, out = lower.leaf_outputs(model)
        outs = [0.0] * (len(model.trees[0].nodes) * out.shape[1])
        for i, nid in enumerate(leaves):
            outs[nid * out.shape[1]:(nid + 1) * out.shape[1]] = [float(v) for v in out[i]]
        arrays.append(("OUTS", "Float64Array", _lines(outs)))
    link = model.link
    exp_note = None
    if link != "identity" and not folded:
        ulps, kind = (EXP_ULPS_F32, "float32") if f32 else (EXP_ULPS_F64, "float64")
        exp_note = EXP_NOTE.format(link=link, ulps=ulps, kind=kind, measured=EXP_MEASURED[model.dtype])
    p = model.provenance
    about = [("algorithm", p.algorithm), ("trained with", p.library),
             ("samples", "" if p.n_samples is None else str(p.n_samples)),
             ("features", "" if p.n_features is None else str(p.n_features))]
    features = []
    for j, f in enumerate(model.features[:DOC_FEATURES]):
        cats = [f"{k} = {js_comment(repr(c))}" for k, c in enumerate(f.categories)]
        features.append({"index": j, "name": js_comment(repr(f.name)), "kind": f.kind, "codes": cats})
    return {
        "version": rulegen.__version__,
        "comments": comments,
        "provenance": [f"{k} {js_comment(v)}" for k, v in about if v],
        "params": [js_comment(f"{k}={v!r}") for k, v in p.params],
        "target_name": js_comment(repr(model.target.name)),
        "n_trees": len(model.trees), "aggregation": model.aggregation, "link": link,
        "dtype": model.dtype, "f32": f32, "task": model.target.task, "vote": vote,
        "classifier": classifier, "binary": binary,
        "features": features, "more_features": max(0, len(model.features) - DOC_FEATURES),
        "feature_names": [js_string(f.name) for f in model.features],
        "categorical": [j for j, f in enumerate(model.features) if f.kind == "categorical"],
        "n_cats": [len(f.categories) for f in model.features],
        "classes": [js_label(c) for c in model.target.classes] if classifier else [],
        "class_notes": [js_comment(repr(c)) for c in model.target.classes] if classifier else [],
        "n_features": len(model.features), "n_raw": model.n_raw,
        "n_outputs": len(model.target.classes) if classifier else model.target.n_outputs,
        "base": [js_number(tab.dt(b)) for b in model.base_score],
        "divisor": None if divisor is None else js_number(divisor),
        "folded": folded, "any_blend": any(blends), "any_generic": 3 in tab.kind, "max_size": max(sizes),
        "arrays": arrays,
        "exp_note": textwrap.wrap(exp_note, 92) if exp_note else [],
        "exp_cap": js_number(float(np.float32(88.7))),
    }
