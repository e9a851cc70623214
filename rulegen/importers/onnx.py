"""Import ONNX tree ensembles (ai.onnx.ml ``TreeEnsembleRegressor`` / ``TreeEnsembleClassifier``,
as skl2onnx and onnxmltools write them) exactly as onnxruntime scores them.

    from rulegen.importers import onnx as onnx_import
    model = onnx_import.load("model.onnx")      # a path or the file's bytes
    # rulegen compile model.onnx --target c

What onnxruntime computes (``onnxruntime/core/providers/cpu/ml/tree_ensemble_*``), and so the IR:

* ``nodes_values`` / ``target_weights`` / ``class_weights`` are float32 attributes: the trees are
  ``TreeEnsembleCommon<float input, float, float>``: the float32 input is compared with the float32
  threshold, and each output is summed in float from +0.0, tree by tree in the order trees first
  appear in the node arrays, one leaf weight at a time. The IR: float32 tests, float32 sums
  (``Model.dtype = "float32"``), leaves in tree order. The input the IR reads is rounded to float32
  by its tests, so feeding float64 rows to the IR equals feeding them as float32 to ORT.
* base values are added *after* the trees (``score + base``), so they become a last tree of one
  constant leaf and ``base_score`` is 0.
* ``AVERAGE`` divides the float sum by the number of trees: the IR's "mean" (refused with base
  values, which ORT adds after the division).
* Refused (one line naming the node): ``*_as_tensor`` (double) attributes, other post transforms
  than NONE (ORT's logistic and softmax are its own float approximations), BRANCH_EQ / NEQ,
  MIN / MAX aggregation, two weights for one output on one leaf (ORT adds them one by one),
  binary classifiers (ORT's two-class rules), ``TreeEnsemble`` (opset 5).
"""

from __future__ import annotations

import math
from collections import deque
from pathlib import Path

import numpy as np

from rulegen.errors import ModelFormatError, UnsupportedFeatureError
from rulegen.ir.nodes import (
    DefaultChild,
    Feature,
    Leaf,
    Model,
    NumericTest,
    Provenance,
    Split,
    Target,
    Tree,
)
from rulegen.ir.validate import validate

__all__ = ["load", "loads"]

_PASS_THROUGH = {"Identity", "Cast", "ZipMap"}  # nodes after the trees that change no number
# mode -> (IR op, whether the IR's true side is ONNX's true side)
_MODES = {"BRANCH_LEQ": ("<=", True), "BRANCH_LT": ("<", True),
          "BRANCH_GT": ("<=", False), "BRANCH_GTE": ("<", False)}


def _refuse(source: str, what: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError("rulegen IR", what, source)


def load(path_or_bytes, source: str = "") -> Model:
    if isinstance(path_or_bytes, (bytes, bytearray)):
        return loads(bytes(path_or_bytes), source)
    path = Path(path_or_bytes)
    return loads(path.read_bytes(), source or str(path))


def loads(data: bytes, source: str = "") -> Model:
    try:
        import onnx
    except ImportError:
        raise ModelFormatError(f"{source or 'model'}: reading ONNX needs the onnx package: "
                               "pip install onnx") from None
    from google.protobuf.message import DecodeError

    try:
        proto = onnx.load_model_from_string(data)
    except DecodeError:
        raise ModelFormatError(f"{source or 'model'}: not an ONNX model (protobuf does not parse)") from None
    where = source or "model"
    trees = [n for n in proto.graph.node if n.domain == "ai.onnx.ml" and n.op_type.startswith("TreeEnsemble")]
    if len(trees) != 1:
        raise ModelFormatError(f"{where}: expected one ai.onnx.ml TreeEnsemble node, found {len(trees)}")
    node = trees[0]
    others = [n.op_type for n in proto.graph.node if n is not node and n.op_type not in _PASS_THROUGH]
    if others:
        raise _refuse(where, f"graph node {others[0]} (only one tree ensemble, with Identity, "
                             "Cast and ZipMap after it, is read)")
    if node.op_type not in ("TreeEnsembleRegressor", "TreeEnsembleClassifier"):
        raise _refuse(where, f"node {node.name or node.op_type}: {node.op_type} (opset 5) is not read; "
                             "TreeEnsembleRegressor and TreeEnsembleClassifier are")
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    return _build(proto, node, attrs, where)


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _build(proto, node, attrs: dict, where: str) -> Model:
    at = f"{where}: node {node.name or node.op_type}"
    tensors = sorted(k for k in attrs if k.endswith("_as_tensor"))
    if tensors:
        raise _refuse(at, f"attribute {tensors[0]} (double trees; the converters tested write float)")
    post = _text(attrs.get("post_transform", b"NONE"))
    if post != "NONE":
        raise _refuse(at, f"post_transform {post} (onnxruntime computes it with its own float "
                          "approximation of exp, which no IR link reproduces)")
    agg = _text(attrs.get("aggregate_function", b"SUM"))
    if agg not in ("SUM", "AVERAGE"):
        raise _refuse(at, f"aggregate_function {agg}")
    classifier = node.op_type == "TreeEnsembleClassifier"
    prefix = "class" if classifier else "target"
    if classifier:
        labels = list(attrs.get("classlabels_int64s", [])) or [_text(s) for s in attrs.get("classlabels_strings", [])]
        n_out = len(labels)
        if n_out <= 2:
            raise _refuse(at, "a binary classifier (onnxruntime's two-class scores follow rules of "
                              "their own); multiclass classifiers and regressors are read")
    else:
        n_out = int(attrs.get("n_targets", 1))
    base = [float(v) for v in attrs.get("base_values", [])]
    use_base = len(base) == n_out and any(v != 0.0 or math.copysign(1, v) < 0 for v in base)
    if agg == "AVERAGE" and use_base:
        raise _refuse(at, "AVERAGE with base_values (onnxruntime adds them after dividing)")
    n_features = _n_features(proto, node, attrs)
    tree_list = _trees(attrs, prefix, n_out, at)
    if use_base:
        tree_list.append(Tree((Leaf(tuple(float(np.float32(v)) for v in base)),)))
    features = tuple(Feature(f"x{i}") for i in range(n_features))
    target = (Target("classification", "label", tuple(labels)) if classifier
              else Target("regression", "y", (), n_out))
    prov = Provenance(algorithm=f"onnx {node.op_type}",
                      library=f"{proto.producer_name} {proto.producer_version}".strip())
    return validate(Model(features, target, tuple(tree_list), (0.0,) * n_out,
                          "mean" if agg == "AVERAGE" else "sum", "identity", "float32", prov))


def _n_features(proto, node, attrs) -> int:
    feats = attrs.get("nodes_featureids", [])
    n = (max(feats) + 1) if feats else 1
    for inp in proto.graph.input:
        if inp.name == node.input[0]:
            dims = inp.type.tensor_type.shape.dim
            if len(dims) == 2 and dims[1].dim_value > 0:
                n = max(n, dims[1].dim_value)
    return n


def _trees(attrs: dict, prefix: str, n_out: int, at: str) -> list[Tree]:
    tree_ids = list(attrs.get("nodes_treeids", []))
    node_ids = list(attrs.get("nodes_nodeids", []))
    modes = [_text(m) for m in attrs.get("nodes_modes", [])]
    feats = list(attrs.get("nodes_featureids", []))
    values = list(attrs.get("nodes_values", []))
    true_ids = list(attrs.get("nodes_truenodeids", []))
    false_ids = list(attrs.get("nodes_falsenodeids", []))
    tracks = list(attrs.get("nodes_missing_value_tracks_true", []))
    n = len(tree_ids)
    if not n or any(len(a) != n for a in (node_ids, modes, feats, values, true_ids, false_ids)):
        raise ModelFormatError(f"{at}: the nodes_* attributes are missing or of different lengths")
    index = {}
    order: list[int] = []  # tree ids in the order onnxruntime visits them
    for i, key in enumerate(zip(tree_ids, node_ids)):
        if key in index:
            raise ModelFormatError(f"{at}: node {key[1]} of tree {key[0]} appears twice")
        index[key] = i
        if not order or order[-1] != tree_ids[i]:
            if tree_ids[i] in order:
                raise _refuse(at, f"tree {tree_ids[i]}'s nodes are not contiguous")
            order.append(tree_ids[i])
    roots = {t: next(i for i in range(n) if tree_ids[i] == t) for t in order}
    weights: dict[int, dict[int, float]] = {}
    w_trees = attrs.get(f"{prefix}_treeids", [])
    w_nodes = attrs.get(f"{prefix}_nodeids", [])
    w_ids = attrs.get(f"{prefix}_ids", [])
    w_vals = attrs.get(f"{prefix}_weights", [])
    for t, nd, k, w in zip(w_trees, w_nodes, w_ids, w_vals):
        i = index.get((t, nd))
        if i is None:
            raise ModelFormatError(f"{at}: a weight names node {nd} of tree {t}, which does not exist")
        if modes[i] != "LEAF":
            continue  # onnxruntime ignores weights on branch nodes
        if not 0 <= k < n_out:
            raise ModelFormatError(f"{at}: tree {t} node {nd}: output {k} out of range")
        slot = weights.setdefault(i, {})
        if k in slot:
            raise _refuse(at, f"tree {t} node {nd}: two weights for output {k} (onnxruntime adds "
                              "them one by one)")
        slot[k] = float(np.float32(w))
    return [_tree(t, roots[t], index, modes, feats, values, true_ids, false_ids, tracks, weights,
                  n_out, at) for t in order]


def _tree(t, root, index, modes, feats, values, true_ids, false_ids, tracks, weights, n_out, at):
    """One IR tree, breadth first from the root (children get larger ids than parents)."""
    nodes: list = []
    queue = deque([root])
    slots: list[int] = [root]
    new_id = {root: 0}
    while queue:
        i = queue.popleft()
        where = f"{at}: tree {t} node {i}"
        if modes[i] == "LEAF":
            w = weights.get(i, {})
            nodes.append(Leaf(tuple(w.get(k, 0.0) for k in range(n_out))))
            continue
        if modes[i] not in _MODES:
            raise _refuse(where, f"mode {modes[i]} (comparisons <, <=, >, >= are read)")
        op, same_side = _MODES[modes[i]]
        thr = float(np.float32(values[i]))
        if math.isnan(thr):
            raise _refuse(where, "a NaN threshold")
        kids = []
        for child_node in (true_ids[i], false_ids[i]):
            c = index.get((t, child_node))
            if c is None or c in new_id:
                raise ModelFormatError(f"{where}: child {child_node} missing or reached twice")
            new_id[c] = len(slots)
            slots.append(c)
            queue.append(c)
            kids.append(new_id[c])
        track = i < len(tracks) and tracks[i] == 1
        if same_side:
            children, missing = (kids[0], kids[1]), DefaultChild(0 if track else 1)
        else:  # x > t true  is  x <= t false
            children, missing = (kids[1], kids[0]), DefaultChild(1 if track else 0)
        nodes.append(Split(NumericTest(feats[i], op, thr, "float32"), children, missing))
    return Tree(tuple(nodes))
