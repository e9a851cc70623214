"""Import ONNX tree ensembles exactly as onnxruntime scores them: ai.onnx.ml
``TreeEnsembleRegressor`` / ``TreeEnsembleClassifier`` (opsets 1 and 3, float attributes, as
skl2onnx and onnxmltools write them) and ``TreeEnsemble`` (opset 5, float or double, as
``rulegen convert m.json -o m.onnx`` writes it).

    from rulegen.importers import onnx as onnx_import
    model = onnx_import.load("model.onnx")      # a path or the file's bytes
    # rulegen compile model.onnx --target c

What onnxruntime computes (``onnxruntime/core/providers/cpu/ml/tree_ensemble_*``, ``ml_common.h``)
and so the IR (docs/IMPORTERS.md has the details and the measured differences):

* Float input and float attributes (opset 3, float opset 5): float32 tests, each output summed
  in float from +0.0, tree by tree in root order, one leaf weight at a time: the IR's float32
  tests and ``Model.dtype``. A double opset-5 ensemble: the same in float64. A double input or
  double attributes in opset 3 are refused (ORT sums in double and returns float).
* Base values are added after the trees: a last tree of one constant leaf, ``base_score`` 0.
* Binary classifiers whose weights all go to class 0 (skl2onnx forests, onnxmltools boosters):
  ORT's score ``s`` is the class-1 score; all weights >= 0: probabilities ``[1 - s, s]`` whatever
  the post transform (the IR's identity link); weights of both signs with ``LOGISTIC``: ORT's
  logistic of ``-s`` and ``s`` (the IR's sigmoid link, within a measured bound).
* ``LOGISTIC`` / ``SOFTMAX`` become the IR's float32 sigmoid / softmax links; ORT computes them
  with its own float arithmetic, so the outputs (never the raw scores) may differ in the last
  bits: the importer says so with an :class:`rulegen.errors.ImportNote` warning, which the CLI
  prints as a ``note:`` line. A one-output regressor ignores ``LOGISTIC`` / ``SOFTMAX`` in ORT.
* Everything else is refused with one line naming the node or attribute.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from rulegen.errors import ImportNote, ModelFormatError
from rulegen.importers.onnx_arrays import flat_v3, text
from rulegen.importers.onnx_trees import build_tree, refuse
from rulegen.ir.nodes import Feature, Leaf, Model, Provenance, Target, Tree
from rulegen.ir.validate import validate

__all__ = ["load", "loads"]

_PASS_THROUGH = {"Identity", "Cast", "ZipMap"}  # nodes after the trees that change no number
_FLOAT, _DOUBLE = 1, 11  # onnx.TensorProto element types


# |ORT output - IR output| held by tests/test_import_onnx.py. Sigmoid: measured up to 8.9e-8,
# held to 2**-23 (ORT's 1/(1 + e) rounded twice in float, for outputs up to 1). Softmax: measured
# 1.2e-7 with 3 classes, 3.0e-7 with 10; it grows with the classes (ORT sums in float).
def link_bound(link: str, n_raw: int) -> float | None:
    if link == "sigmoid":
        return 2.0 ** -23
    return 1.2e-7 if n_raw <= 3 else 3.0e-7 if n_raw <= 10 else None


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
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    at = f"{where}: node {node.name or node.op_type}"
    input32 = _input_is_float(proto, node, at)
    meta = {p.key: p.value for p in proto.metadata_props}
    if node.op_type == "TreeEnsemble":
        from rulegen.importers import onnx_v5

        return onnx_v5.build(proto, node, attrs, at, input32, _features(meta, at), _check_graph)
    if node.op_type not in ("TreeEnsembleRegressor", "TreeEnsembleClassifier"):
        raise refuse(at, f"{node.op_type} (TreeEnsembleRegressor, TreeEnsembleClassifier and "
                         "TreeEnsemble are read)")
    _check_graph(proto, node, where)
    return _build_v3(proto, node, attrs, at, input32)


def _check_graph(proto, node, where: str) -> None:
    """Only nodes that change no number may sit beside the ensemble: Identity, Cast, ZipMap, and
    Mul / Div by a constant 1 (onnxmltools writes ``probabilities * 1``)."""
    inits = {i.name: i for i in proto.graph.initializer}
    for n in proto.graph.node:
        if n is node or n.op_type in _PASS_THROUGH:
            continue
        if n.op_type in ("Mul", "Div") and len(n.input) == 2 and _is_one(inits.get(n.input[1])):
            continue
        raise refuse(where, f"graph node {n.name or n.op_type} ({n.op_type}; only one tree "
                            "ensemble, with Identity, Cast, ZipMap and Mul by 1 after it, is read)")


def _is_one(init) -> bool:
    if init is None:
        return False
    from onnx import numpy_helper

    a = numpy_helper.to_array(init)
    return a.size == 1 and float(a.ravel()[0]) == 1.0


def _input_is_float(proto, node, at: str) -> bool:
    """Whether the ensemble reads float (else double): its input's type, through a Cast."""
    name = node.input[0]
    for n in proto.graph.node:
        if name in n.output and n.op_type == "Cast":
            to = next((a.i for a in n.attribute if a.name == "to"), None)
            if to in (_FLOAT, _DOUBLE):
                return to == _FLOAT
    for inp in proto.graph.input:
        if inp.name == name:
            elem = inp.type.tensor_type.elem_type
            if elem in (_FLOAT, _DOUBLE):
                return elem == _FLOAT
            raise refuse(at, f"input {name} of element type {elem} (float and double inputs are read)")
    raise refuse(at, f"input {name} is computed by the graph (preprocessing is not read)")


def _features(meta: dict, at: str) -> tuple | None:
    """Feature names, kinds and categories that rulegen's exporter keeps in the metadata."""
    raw = meta.get("rulegen.features")
    if raw is None:
        return None
    try:
        return tuple(Feature(d["name"], d["kind"], tuple(d["categories"])) for d in json.loads(raw))
    except (ValueError, KeyError, TypeError):
        raise ModelFormatError(f"{at}: metadata rulegen.features is not a list of features") from None


def n_features(proto, node, attrs, known: int) -> int:
    feats = attrs.get("nodes_featureids", [])
    n = max(known, (max(feats) + 1) if feats else 1)
    for inp in proto.graph.input:
        if inp.name == node.input[0]:
            dims = inp.type.tensor_type.shape.dim
            if len(dims) == 2 and dims[1].dim_value > 0:
                n = max(n, dims[1].dim_value)
    return n


def build_trees(flat, n_out: int, at: str, input32: bool, categorical=None):
    limit = len(flat.modes)
    return [build_tree(flat, root, n_out, f"{at}: tree {t}", input32=input32,
                       categorical=categorical or {}, limit=limit) for t, root in flat.roots]


def base_tree(values, dtype: str) -> Tree | None:
    """Base values as a last constant tree (ORT adds them after the trees); None when they add
    nothing (+0.0 or -0.0 added to a sum that started at +0.0 changes nothing)."""
    if all(v == 0.0 for v in values):
        return None
    cast = np.float32 if dtype == "float32" else float
    return Tree((Leaf(tuple(float(cast(v)) for v in values)),))


def note(where: str, link: str, post: str, n_raw: int) -> None:
    """Say that ORT's own arithmetic computes the outputs (the raw scores are exact)."""
    bound = link_bound(link, n_raw)
    by = (f"by up to {bound:.2g} (tested; docs/IMPORTERS.md)" if bound is not None else
          f"(by how much is unmeasured for {n_raw} classes; 3.0e-7 for 10)")
    warnings.warn(ImportNote(
        f"{where}: post_transform {post} is the IR's {link} link; onnxruntime computes it with "
        f"its own float arithmetic, so outputs may differ from it {by}; raw scores are exact"),
        stacklevel=3)


def _build_v3(proto, node, attrs: dict, at: str, input32: bool) -> Model:
    doubles = sorted(k for k in attrs if k.endswith("_as_tensor") and not k.startswith("nodes_hitrates"))
    if doubles:
        raise refuse(at, f"attribute {doubles[0]} (opset 3 with double attributes: onnxruntime "
                         "sums in double and returns float, a last rounding the IR has no place "
                         "for; opset-5 TreeEnsemble in double is read)")
    if not input32:
        raise refuse(at, "a double input to an opset-3 ensemble (onnxruntime then sums in double "
                         "and returns float, a last rounding the IR has no place for)")
    post = text(attrs.get("post_transform", b"NONE"))
    agg = text(attrs.get("aggregate_function", b"SUM"))
    if agg not in ("SUM", "AVERAGE"):
        raise refuse(at, f"aggregate_function {agg}")
    classifier = node.op_type == "TreeEnsembleClassifier"
    if classifier and agg != "SUM":
        raise refuse(at, f"aggregate_function {agg} on a classifier (onnxruntime sums)")
    if post in ("PROBIT", "SOFTMAX_ZERO") or post not in ("NONE", "LOGISTIC", "SOFTMAX"):
        raise refuse(at, f"post_transform {post} (no IR link: {'ORT approximates erfinv' if post == 'PROBIT' else 'scores near 0 are left out of the softmax'})")
    prefix = "class" if classifier else "target"
    if classifier:
        labels = list(attrs.get("classlabels_int64s", [])) or [text(s) for s in attrs.get("classlabels_strings", [])]
        n_out = len(labels)
        if n_out < 2:
            raise refuse(at, f"a classifier with {n_out} class label(s)")
    else:
        n_out = int(attrs.get("n_targets", 1))
    dtype = "float32"  # float attributes: ORT sums in float
    base = [float(v) for v in attrs.get("base_values", [])]
    flat = flat_v3(attrs, prefix, n_out, at)
    nf = n_features(proto, node, attrs, 0)
    link = "identity"
    binary = classifier and n_out == 2
    if binary:
        n_raw, link, base = _binary(attrs, prefix, post, base, at)
    else:
        n_raw = n_out
        if base and len(base) != n_out:
            raise refuse(at, f"{len(base)} base_values for {n_out} outputs (onnxruntime then "
                             "uses only the first)" if not classifier else
                         f"{len(base)} base_values for {n_out} classes")
        if n_out > 1:
            link = {"NONE": "identity", "LOGISTIC": "sigmoid", "SOFTMAX": "softmax"}[post]
    if agg == "AVERAGE" and any(v != 0.0 for v in base):
        raise refuse(at, "AVERAGE with base_values (onnxruntime adds them after dividing)")
    tree_list = build_trees(flat, n_raw, at, input32)
    extra = base_tree(base, dtype)
    if extra is not None:
        tree_list.append(extra)
    if link != "identity":
        note(at, link, post, n_raw)
    features = tuple(Feature(f"x{i}") for i in range(nf))
    target = (Target("classification", "label", tuple(labels)) if classifier
              else Target("regression", "y", (), n_out))
    prov = Provenance(algorithm=f"onnx {node.op_type}",
                      library=f"{proto.producer_name} {proto.producer_version}".strip())
    return validate(Model(features, target, tuple(tree_list), (0.0,) * n_raw,
                          "mean" if agg == "AVERAGE" else "sum", link, dtype, prov))


def _binary(attrs: dict, prefix: str, post: str, base: list, at: str):
    """ORT's two-class rules (``TreeAggregatorClassifier::FinalizeScores``, ``write_scores``),
    for the files converters write: every weight on class 0, holding the class-1 score ``s``."""
    ids = set(attrs.get(f"{prefix}_ids", []))
    if ids != {0}:
        raise refuse(at, "a binary classifier with weights on class 1 (onnxruntime then labels "
                         "by class 1's score > 0, not by the larger score)")
    if len(base) > 1:
        raise refuse(at, f"a binary classifier with {len(base)} base_values")
    weights = list(attrs.get(f"{prefix}_weights", []))
    if all(w >= 0 for w in weights):
        # ORT writes [1 - s, s] and labels by s > 0.5, whatever the post transform: the IR's
        # two-class probabilities from one raw score, and its argmax (ties to class 0)
        return 1, "identity", base
    if post == "LOGISTIC":
        return 1, "sigmoid", base
    raise refuse(at, f"a binary classifier with weights of both signs and post_transform {post} "
                     "(onnxruntime writes [-s, s], whose -0.0 the IR's sums cannot give)")
