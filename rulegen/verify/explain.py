"""One row's way through a model, as text: each tree's tests with the row's values, the branch
taken (and why, for a missing or unseen value), the leaf and what it adds; then the sums, the
link and the prediction. The routing is the evaluator's own (``evaluate.child_index``), one
row at a time, with an explicit stack: nothing recurses with the depth of a tree.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.codegen.lower import leaf_contribution, vote_index
from rulegen.ir import evaluate
from rulegen.ir.evaluate import _binary_outcome, child_index
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    Split,
    Surrogates,
)


def number_text(v: float) -> str:
    """A number as Python writes it: the shortest text that reads back as the same double."""
    return repr(float(v))


_num = number_text


def value_text(model: Model, f: int, v: float) -> str:
    """The row's value of feature f as the model sees it."""
    feat = model.features[f]
    if math.isnan(v):
        return "missing"
    if feat.kind == "categorical":
        if math.isfinite(v) and v == math.floor(v) and 0 <= v < len(feat.categories):
            return repr(feat.categories[int(v)])
        return "unseen"
    return _num(v)


def test_text(model: Model, test) -> str:
    names = [f.name for f in model.features]
    if isinstance(test, NumericTest):
        return f"{names[test.feature]} {test.op} {_num(test.threshold)}" + (
            " (float32)" if test.dtype == "float32" else "")
    if isinstance(test, CategoricalTest):
        cats = model.features[test.feature].categories
        return f"{names[test.feature]} in {{{', '.join(repr(cats[c]) for c in test.categories)}}}"
    if isinstance(test, IntervalTest):
        return f"{names[test.feature]} {test.op} each of {', '.join(map(_num, test.bounds))}"
    if isinstance(test, MultiwayTest):
        return f"{names[test.feature]} by category"
    terms = " + ".join(f"{_num(w)}*{names[f]}" for f, w in zip(test.features, test.weights))
    return f"{terms} {test.op} {_num(test.threshold)}"


def _features_of(test) -> list[int]:
    return list(test.features) if hasattr(test, "features") else [test.feature]


def _why(model: Model, split: Split, X: np.ndarray) -> tuple[list[tuple[int, float]], str]:
    """[(child position, path weight)] and the reason, for one row at a split."""
    rows = np.array([0])
    child, missing = child_index(split, X, rows, model.features)
    rule = split.missing
    if not missing[0]:
        k = int(child[0])
        if split.unseen is not None and k == split.unseen and any(
                model.features[f].kind == "categorical" and value_text(model, f, X[0, f]) == "unseen"
                for f in _features_of(split.test)):
            return [(k, 1.0)], "unseen value: the model's route for it"
        if isinstance(split.test, (NumericTest, CategoricalTest)) or hasattr(split.test, "weights"):
            return [(k, 1.0)], "yes" if k == 0 else "no"
        return [(k, 1.0)], f"branch {k + 1}"
    if isinstance(rule, DefaultChild):
        return [(rule.child, 1.0)], "missing: the default branch"
    if isinstance(rule, Surrogates):
        for i, s in enumerate(rule.surrogates):
            holds, miss, _unseen = _binary_outcome(s.test, X, rows, model.features)
            if not miss[0]:
                k = s.child_if_true if holds[0] else 1 - s.child_if_true
                return [(k, 1.0)], (f"missing: surrogate {i + 1}, {test_text(model, s.test)} "
                                    f"({', '.join(value_text(model, f, X[0, f]) for f in _features_of(s.test))}) "
                                    f"is {'true' if holds[0] else 'false'}")
        return [(rule.default, 1.0)], "missing, and every surrogate too: the default branch"
    weights = list(rule.weights)
    return [(k, w) for k, w in enumerate(weights) if w != 0.0], (
        "missing: every branch, weighted " + ", ".join(map(_num, weights)))


def walk(model: Model, X: np.ndarray, t: int) -> list[tuple[int, float, int, str, list[int]]]:
    """Tree t's nodes on row X's path(s), in depth-first order: (node id, path weight, depth,
    why the row went on, the children it went on to)."""
    tree = model.trees[t]
    out = []
    stack = [(0, 1.0, 0)]
    while stack:
        nid, p, depth = stack.pop()
        node = tree.nodes[nid]
        if isinstance(node, Leaf):
            out.append((nid, p, depth, "", []))
            continue
        branches, why = _why(model, node, X)
        out.append((nid, p, depth, why, [node.children[k] for k, _w in branches]))
        for k, w in reversed(branches):
            stack.append((node.children[k], p * w, depth + 1))
    return out


def explain(model: Model, x) -> list[str]:
    """The lines of text for one row ``x`` (codes for categories, NaN for missing)."""
    X = np.asarray(x, dtype=np.float64).reshape(1, -1)
    lines = ["row: " + ", ".join(f"{f.name}={value_text(model, j, X[0, j])}" for j, f in enumerate(model.features))]
    for t, tree in enumerate(model.trees):
        head = f"tree {t}" + (f" (weight {_num(tree.weight)})" if tree.weight != 1.0 else "")
        if tree.output is not None and model.n_raw > 1:
            head += f", adds to raw[{tree.output}]"
        lines.append(head + ":")
        for nid, p, depth, why, targets in walk(model, X, t):
            node, pad = tree.nodes[nid], "  " * (depth + 1)
            share = "" if p == 1.0 else f" (path weight {_num(p)})"
            if isinstance(node, Leaf):
                lines.append(f"{pad}node {nid}: leaf{share}, {leaf_text(model, t, node)}")
                continue
            seen = ", ".join(f"{model.features[f].name}={value_text(model, f, X[0, f])}"
                             for f in dict.fromkeys(_features_of(node.test)))
            to = ", ".join(f"node {c}" for c in targets)
            lines.append(f"{pad}node {nid}: {test_text(model, node.test)}? {seen}: {why} -> {to}{share}")
    raw = evaluate.raw_scores(model, X)[0]
    lines.append(f"raw ({model.aggregation} in {model.dtype}, base {', '.join(map(_num, model.base_score))}): "
                 + ", ".join(map(_num, raw)))
    out = evaluate.outputs_of(model, raw[None, :])
    if model.target.task == "classification":
        proba = evaluate.proba_of(model, out)[0]
        lines.append(f"probabilities ({model.link}): " + ", ".join(
            f"{c}={_num(v)}" for c, v in zip(model.target.classes, proba)))
        lines.append(f"prediction: {model.target.classes[int(np.argmax(proba))]}")
    else:
        lines.append(f"prediction ({model.link}): " + ", ".join(map(_num, out[0])))
    return lines


def leaf_text(model: Model, t: int, leaf: Leaf) -> str:
    """What a leaf adds (its contribution, the tree weight folded in) or the class it votes for."""
    tree = model.trees[t]
    if model.aggregation == "vote":
        return f"votes {model.target.classes[vote_index(leaf, tree.weight)]!r}"
    return "adds " + ", ".join(map(_num, leaf_contribution(model, tree, leaf)))
