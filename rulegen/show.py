"""`rulegen show`: one self-contained HTML page that draws a model's trees.

The page needs no network: the model travels as JSON inside it and a small script draws it.
A tree is a flat list of rows indented by depth (no nesting in the DOM, so a chain of 2,500
splits draws as easily as a stump); splits below ``open_depth`` start collapsed and open on a
click. With a row, its path is highlighted in every tree (every branch a missing value takes,
with its weight, for C4.5's blends) and each tree's contribution is listed. The URL's hash
picks a tree and a search (``#tree=3&search=age``), so a page can be linked to a place.

User text (names, labels, categories) reaches the page only as JSON with ``<``, ``>`` and
``&`` escaped, and the script sets it as text, never as markup.
"""

from __future__ import annotations

import html
import json
from collections import Counter

import numpy as np

from rulegen.codegen.jinja import render
from rulegen.codegen.lower import depth
from rulegen.ir import evaluate
from rulegen.ir.nodes import (
    Blend,
    DefaultChild,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    Split,
    Surrogates,
)
from rulegen.verify.explain import leaf_text, number_text as _num, test_text, value_text, walk

OPEN_DEPTH = 3  # splits above this depth start open


def _branches(model: Model, split: Split) -> list[str]:
    test = split.test
    if isinstance(test, IntervalTest):
        labels = [f"{test.op} {_num(b)}" for b in test.bounds] + ["above"]
    elif isinstance(test, MultiwayTest):
        cats = model.features[test.feature].categories
        labels = ["{" + ", ".join(repr(cats[c]) for c in g) + "}" for g in test.groups]
    else:
        labels = ["yes", "no"]
    return labels


def _missing(split: Split, labels: list[str]) -> str:
    rule = split.missing
    if isinstance(rule, DefaultChild):
        return f"missing: {labels[rule.child]}"
    if isinstance(rule, Surrogates):
        return f"missing: {len(rule.surrogates)} surrogate(s), then {labels[rule.default]}"
    assert isinstance(rule, Blend)
    return "missing: every branch, weighted " + ", ".join(map(_num, rule.weights))


def _tree(model: Model, t: int) -> dict:
    tree = model.trees[t]
    nodes = []
    for node in tree.nodes:
        n = None if node.samples is None else _num(node.samples)
        if isinstance(node, Leaf):
            item = {"v": leaf_text(model, t, node), "n": n}
            if node.distribution is not None:
                item["d"] = ", ".join(map(_num, node.distribution))
        else:
            labels = _branches(model, node)
            shown = [b + (" (and unseen)" if k == node.unseen else "") for k, b in enumerate(labels)]
            item = {"t": test_text(model, node.test), "k": list(node.children), "b": shown,
                    "m": _missing(node, labels), "n": n}
        nodes.append(item)
    return {"weight": _num(tree.weight), "output": tree.output, "nodes": nodes}


def _row(model: Model, x: np.ndarray) -> dict:
    X = np.asarray(x, dtype=np.float64).reshape(1, -1)
    trees = []
    for t, tree in enumerate(model.trees):
        steps = walk(model, X, t)
        out = evaluate.tree_output(tree, X, model.features, 1 if tree.output is not None else model.n_raw)[0]
        adds = out if tree.weight == 1.0 else tree.weight * out
        trees.append({"path": [s[0] for s in steps], "weights": {str(s[0]): _num(s[1]) for s in steps if s[1] != 1.0},
                      "why": {str(s[0]): s[3] for s in steps if s[3]},
                      "adds": ", ".join(map(_num, adds))})
    raw = evaluate.raw_scores(model, X)[0]
    out = evaluate.outputs_of(model, raw[None, :])
    if model.target.task == "classification":
        proba = evaluate.proba_of(model, out)[0]
        outputs = ", ".join(f"{c}={_num(v)}" for c, v in zip(model.target.classes, proba))
        prediction = str(model.target.classes[int(np.argmax(proba))])
    else:
        outputs = prediction = ", ".join(map(_num, out[0]))
    return {"values": [f"{f.name}={value_text(model, j, X[0, j])}" for j, f in enumerate(model.features)],
            "trees": trees, "raw": ", ".join(map(_num, raw)), "outputs": outputs, "prediction": prediction}


def page(model: Model, x=None, title: str = "model") -> str:
    """The HTML page for ``model`` (and the row ``x``: codes for categories, NaN for missing)."""
    uses = Counter(model.features[f].name for tree in model.trees for n in tree.nodes if isinstance(n, Split)
                   for f in (n.test.features if hasattr(n.test, "features") else [n.test.feature]))
    data = {
        "title": title,
        "task": model.target.task, "link": model.link, "aggregation": model.aggregation, "dtype": model.dtype,
        "summary": {"trees": len(model.trees), "nodes": sum(len(t.nodes) for t in model.trees),
                    "leaves": sum(isinstance(n, Leaf) for t in model.trees for n in t.nodes),
                    "depth": max(depth(t) for t in model.trees), "uses": uses.most_common()},
        "trees": [_tree(model, t) for t in range(len(model.trees))],
        "row": None if x is None else _row(model, x),
        "openDepth": OPEN_DEPTH,
    }
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return render("html/show.html.j2", {"title": html.escape(title), "data": text})
