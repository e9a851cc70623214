"""ai.onnx.ml opset-5 ``TreeEnsemble``: a plain ensemble (regression outputs), or the graph
rulegen's exporter writes around one (``rulegen/exporters/onnx.py``), read back to the IR.

``TreeEnsemble``'s type T is its input's (float, or double): thresholds, leaf weights and sums are
T, so a float ensemble is the IR's float32 tests and sums, a double one float64. The exporter's
graph: an optional ``Cast`` to float, the ensemble, ``Div`` by the tree count ("mean") or the
total vote weight, ``Identity`` to ``raw``, then the link's formula in plain operators (matched
against what the exporter writes, constants included; older files: ORT's ``Sigmoid`` / ``Exp`` /
``Softmax``), then the probabilities and label; metadata ``rulegen.features`` keeps the
feature names and categories. What the exporter split per output (a tree with vector leaves is
written once per output) is merged back where the division needs the tree count.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from rulegen.errors import ImportNote
from rulegen.importers.onnx_arrays import flat_v5
from rulegen.importers.onnx_trees import refuse
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Feature,
    Leaf,
    Model,
    Provenance,
    Split,
    Target,
    Tree,
)
from rulegen.ir.validate import validate

# onnxruntime 1.32 reads post_transform through its own enum (tree_ensemble_attribute.h), where
# 1 is LOGISTIC and 2 SOFTMAX; the ONNX spec says the other way round. Tested: ORT's outputs.
_POST = {0: "NONE", 1: "LOGISTIC", 2: "SOFTMAX", 3: "SOFTMAX_ZERO", 4: "PROBIT"}
_LINK_OPS = {"Sigmoid": "sigmoid", "Exp": "exp", "Softmax": "softmax"}
_EXPORT_OPS = {"Cast", "Identity", "Div", "Sub", "Concat", "ArgMax", "Gather", *_LINK_OPS}


def build(proto, node, attrs: dict, at: str, input32: bool, features, check_graph) -> Model:
    from rulegen.importers import onnx as base

    agg = int(attrs.get("aggregate_function", 1))
    post = _POST.get(int(attrs.get("post_transform", 0)), str(attrs.get("post_transform")))
    if agg not in (0, 1):
        raise refuse(at, f"aggregate_function {agg} (MIN / MAX; SUM and AVERAGE are read)")
    n_out = int(attrs.get("n_targets", 0))
    if n_out < 1:
        raise refuse(at, f"n_targets {n_out}")
    link = "identity"
    if post != "NONE" and n_out > 1:  # ORT ignores it for one output (except PROBIT)
        link = {"LOGISTIC": "sigmoid", "SOFTMAX": "softmax"}.get(post, "")
    if not link or post == "PROBIT":
        raise refuse(at, f"post_transform {post} (no IR link computes it)")
    if link != "identity" and not input32:
        raise refuse(at, f"post_transform {post} on double scores (untested)")
    dtype = "float32" if input32 else "float64"
    flat = flat_v5(attrs, at, input32)
    for k in {next(iter(w)) for w in flat.weights if w}:
        if not 0 <= k < n_out:
            raise refuse(at, f"a leaf feeds target {k}, outside n_targets {n_out}")
    ours = features is not None
    categorical = ({i: len(f.categories) for i, f in enumerate(features) if f.kind == "categorical"}
                   if ours else {})
    trees = base.build_trees(flat, n_out, at, input32, categorical)
    nf = base.n_features(proto, node, attrs, len(features) if ours else 0)
    if ours and nf != len(features):
        raise refuse(at, f"metadata rulegen.features lists {len(features)} features, the trees read {nf}")
    features = features or tuple(Feature(f"x{i}") for i in range(nf))
    base_score = (0.0,) * n_out
    aggregation = "mean" if agg == 0 else "sum"
    target = Target("regression", "y", (), n_out)
    if ours:
        graph = _exporter_graph(proto, node, at)
        fed = [targets_of(flat, root) for _t, root in flat.roots]
        if agg == 1:  # ORT's AVERAGE would count the constant trees
            trees, fed, base_score = _leading_constants(trees, fed, n_out)
        if graph["divisor"] is not None:
            if agg == 0:
                raise refuse(at, "AVERAGE followed by a Div")
            d = graph["divisor"]
            if d == 1.0:  # a vote whose weights sum to 1: dividing changes nothing
                d = None
            counted, aggregation = trees, "sum"
            if d is not None:
                counted, aggregation = None, "mean"
                if d == int(d) and d >= 1:
                    counted = _to_count(trees, fed, n_out, int(d))
                if counted is None:
                    counted, aggregation = _as_votes(trees, n_out, d, dtype, categorical), "vote"
            if counted is None:
                raise refuse(at, f"Div by {d!r}: neither a number of trees the {len(trees)} trees "
                                 "can be counted as nor the weight of the votes they hold")
            trees = counted
        if graph["link"] != "identity":
            if post != "NONE" and n_out > 1:
                raise refuse(at, "a post_transform and a link operator")
            link = graph["link"]
            warnings.warn(ImportNote(
                f"{at}: the file computes the {link} link with onnxruntime's {graph['op']}; the "
                "IR's link uses the C library's exp, so outputs may differ from onnxruntime's in "
                "the last bits (docs/INTERCHANGE.md); raw scores are exact"), stacklevel=3)
        if graph["classes"] is not None:
            target = Target("classification", "label", graph["classes"])
    else:
        check_graph(proto, node, at)
    if post != "NONE" and n_out > 1:
        spec = "SOFTMAX" if post == "LOGISTIC" else "LOGISTIC"
        base.note(f"{at} (post_transform {int(attrs['post_transform'])}, which onnxruntime "
                  f"reads as {post}, not as the ONNX spec's {spec})", link, post, n_out)
    prov = Provenance(algorithm="onnx TreeEnsemble",
                      library=f"{proto.producer_name} {proto.producer_version}".strip())
    return validate(Model(tuple(features), target, tuple(trees), base_score, aggregation, link,
                          dtype, prov))


def _exporter_graph(proto, node, at: str) -> dict:
    """What follows the ensemble in rulegen's graph: the Div's constant, the link, the classes."""
    from onnx import numpy_helper

    inits = {i.name: numpy_helper.to_array(i) for i in proto.graph.initializer}
    out = {"divisor": None, "link": "identity", "op": "", "classes": None}
    linking = [n for n in proto.graph.node
               if n is not node and n.output and all(o == "linked" or o.startswith("link_") for o in n.output)]
    if linking:
        out["link"] = _exported_link(linking, inits, at)
        out["op"] = "Exp"
    for n in proto.graph.node:
        if n is node or any(n is m for m in linking):
            continue
        if n.op_type not in _EXPORT_OPS:
            raise refuse(at, f"graph node {n.name or n.op_type} ({n.op_type}: not one rulegen's "
                             "exporter writes)")
        if n.op_type == "Div" and list(n.input)[:1] == [node.output[0]]:
            d = inits.get(n.input[1])
            if d is None or d.size != 1:
                raise refuse(at, "a Div by something other than a constant")
            out["divisor"] = float(d.ravel()[0])
        elif n.op_type == "Div":
            raise refuse(at, "a Div that is not the ensemble's mean")
        if n.op_type in _LINK_OPS:
            if linking:
                raise refuse(at, f"graph node {n.name or n.op_type} after the link")
            out["link"], out["op"] = _LINK_OPS[n.op_type], n.op_type
    names = {o.name for o in proto.graph.output}
    if "probabilities" in names:
        classes = inits.get("classes")
        if classes is None:
            raise refuse(at, "probabilities without the classes constant")
        out["classes"] = tuple(c.decode("utf-8") if isinstance(c, bytes) else
                               (int(c) if isinstance(c, (int, np.integer)) else str(c))
                               for c in classes.ravel().tolist())
    return out


def _exported_link(linking: list, inits: dict, at: str) -> str:
    """The IR link whose formula the exporter writes exactly as these nodes (raw to "linked"),
    constants included; anything else is refused."""
    from onnx import helper, numpy_helper

    from rulegen.exporters.onnx import link_subgraph

    def key(nodes):
        return [(n.op_type, list(n.input), list(n.output),
                 sorted((a.name, helper.get_attribute_value(a)) for a in n.attribute)) for n in nodes]

    splits = [n for n in linking if n.op_type == "Split"]
    k = len(splits[0].output) if splits else 1
    for link in ("sigmoid", "softmax", "exp"):
        for dtype in ("float32", "float64"):
            nodes, consts = link_subgraph(link, dtype, k)
            if key(nodes) == key(linking) and all(
                    c.name in inits and inits[c.name].dtype == numpy_helper.to_array(c).dtype
                    and np.array_equal(inits[c.name], numpy_helper.to_array(c)) for c in consts):
                return link
    raise refuse(at, "link nodes that are not one of the IR's link formulas as rulegen writes them")


def _constant(tree: Tree):
    """The value a tree gives every row, or None."""
    leaves = {n.value for n in tree.nodes if isinstance(n, Leaf)}
    return next(iter(leaves)) if len(leaves) == 1 else None


def _leading_constants(trees: list, fed: list, n_out: int):
    """The exporter writes a nonzero base score as a first constant tree per output: back to
    ``base_score`` (ORT's +0.0 + b is b, which is where the IR's sum starts)."""
    base = [0.0] * n_out
    i = 0
    while i < len(trees):
        k = 0 if n_out == 1 else trees[i].output
        v = _constant(trees[i])
        if k is None or base[k] != 0.0 or v is None or v[0] == 0.0:
            break
        base[k] = v[0]
        i += 1
    return trees[i:], fed[i:], tuple(base)


def targets_of(flat, root: int) -> set:
    """The outputs the leaves under ``root`` feed (a loop over a stack)."""
    out, stack, seen = set(), [root], set()
    while stack:
        i = stack.pop()
        if i in seen or not 0 <= i < len(flat.modes):
            continue
        seen.add(i)
        if flat.modes[i] == "LEAF":
            out.update(flat.weights[i])
        else:
            stack += [flat.true_ref[i], flat.false_ref[i]]
    return out


def _same_splits(a: Tree, b: Tree) -> bool:
    if len(a.nodes) != len(b.nodes):
        return False
    return all((isinstance(x, Leaf) and isinstance(y, Leaf)) or (isinstance(x, Split) and x == y)
               for x, y in zip(a.nodes, b.nodes))


def _to_count(trees: list, fed: list, n_out: int, n: int) -> list | None:
    """``n`` trees giving the same sums, or None: trees of zero leaves dropped (adding 0.0 to a
    sum that started at +0.0 changes nothing), runs of trees with the same splits that each feed
    their own output merged into one tree of vector leaves (each output still receives the same
    values in the same order) until ``n`` are left, zero trees added if fewer."""
    keep = [(t, f) for t, f in zip(trees, fed)
            if any(v != 0.0 for x in t.nodes if isinstance(x, Leaf) for v in x.value)]
    if not keep:
        return None if n < 1 else [Tree((Leaf((0.0,) * n_out),))] * n
    out: list = []  # [(tree, fed)] with runs merged while more than n would be left
    left = len(keep)
    for t, f in keep:
        if (left > n and out and len(f) == 1 and len(out[-1][1]) >= 1 and not (f & out[-1][1])
                and _same_splits(out[-1][0], t)):
            out[-1] = (_merge(out[-1][0], out[-1][1], t, f, n_out), out[-1][1] | f)
            left -= 1
        else:
            out.append((t, f))
    if len(out) > n:
        return None
    return [t for t, _f in out] + [Tree((Leaf((0.0,) * n_out),))] * (n - len(out))


def _merge(a: Tree, fa: set, b: Tree, fb: set, n_out: int) -> Tree:
    """One tree adding what ``a`` (feeding ``fa``) and then ``b`` (feeding the one output in
    ``fb``, not in ``fa``) add."""
    nodes = []
    for x, y in zip(a.nodes, b.nodes):
        if not isinstance(x, Leaf):
            nodes.append(x)
            continue
        value = list(_vector(x, a, n_out))
        k = next(iter(fb))
        value[k] = _vector(y, b, n_out)[k]
        nodes.append(Leaf(tuple(value)))
    return Tree(tuple(nodes))


def _vector(leaf: Leaf, tree: Tree, n_out: int) -> tuple:
    if tree.output is None:
        return leaf.value
    v = [0.0] * n_out
    v[tree.output] = leaf.value[0]
    return tuple(v)


def _only_feeds(tree: Tree, k: int, n_out: int) -> bool:
    """Whether every nonzero leaf value of ``tree`` goes to output ``k`` (the exporter's guard
    leaves, never reached, hold 0.0 for output 0)."""
    return all(v == 0.0 for n in tree.nodes if isinstance(n, Leaf)
               for j, v in enumerate(_vector(n, tree, n_out)) if j != k)


def _never_reached(tree: Tree, categorical: dict) -> set:
    """Leaves behind the exporter's pass-through guards (a set of every code, unseen and missing
    values on the set side too): no row reaches their other side."""
    out = set()
    for n in tree.nodes:
        if (isinstance(n, Split) and isinstance(n.test, CategoricalTest) and n.unseen == 0
                and isinstance(n.missing, DefaultChild) and n.missing.child == 0
                and len(n.test.categories) == categorical.get(n.test.feature, -1)):
            out.add(n.children[1])
    return out


def _as_votes(trees: list, n_out: int, d: float, dtype: str, categorical: dict) -> list | None:
    """The exporter's form of a vote: per IR tree, one tree per class (in class order, the same
    splits) whose leaves hold the tree's weight where that class wins and 0.0 elsewhere. Back to
    one tree of one-hot leaves with that weight, if the weights sum (in order, float64, then in
    ``dtype``) to the divisor ``d``; else None."""
    if len(trees) % n_out:
        return None
    out, total = [], 0.0
    for g in range(0, len(trees), n_out):
        group = trees[g:g + n_out]
        if not all(_only_feeds(t, k, n_out) for k, t in enumerate(group)) or \
                not all(_same_splits(group[0], t) for t in group[1:]):
            return None
        nodes, weights = [], set()
        unreached = _never_reached(group[0], categorical)
        for j, n in enumerate(group[0].nodes):
            if not isinstance(n, Leaf):
                nodes.append(n)
                continue
            value = [_vector(t.nodes[j], t, n_out)[k] for k, t in enumerate(group)]
            winners = [k for k, v in enumerate(value) if v != 0.0]
            if not winners and j in unreached:
                winners = [0]  # any vote: no row gets here
            elif len(winners) != 1:
                return None
            if j not in unreached:
                weights.add(value[winners[0]])
            nodes.append(Leaf(tuple(1.0 if k == winners[0] else 0.0 for k in range(n_out))))
        if len(weights) != 1 or not 0 < next(iter(weights)) < math.inf:
            return None
        w = weights.pop()
        total = total + w
        out.append(Tree(tuple(nodes), weight=w))
    cast = np.float32 if dtype == "float32" else np.float64
    return out if cast(total) == cast(d) else None
