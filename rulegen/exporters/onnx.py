"""Write a model as an ONNX graph around one ``TreeEnsemble`` (ai.onnx.ml opset 5).

    from rulegen.exporters import onnx as onnx_export
    data, notes = onnx_export.export(model)            # bytes of a .onnx file
    # rulegen convert model.json -o model.onnx [--approximate]

The graph takes ``X``: tensor(double) [N, n_features] (categorical features as category codes,
NaN missing) and gives ``raw`` (the IR's raw scores), ``value`` (regressors) or ``probabilities``
and ``label`` (classifiers). What onnxruntime computes, from its source
(``onnxruntime/core/providers/cpu/ml/tree_ensemble_*``) and checked by tests/test_export_onnx.py:

* ``TreeEnsemble``'s type T is its input's: thresholds, leaf weights and the sums are all T. A
  float64 model feeds T = double, so nothing is rounded to float; float32 tests become exact
  float64 bounds (``rulegen.codegen.lower``). A float32 model (XGBoost-style float sums) casts
  ``X`` to float once and runs T = float: its float32 tests then compare exactly as the IR says.
* ORT sums each output from +0.0, tree by tree in node order (with one intra-op thread; with
  more, big batches are split over threads by tree and the partial sums merged, a different
  order), then adds base values last. The IR adds the base first, so the base is written as a
  first tree of one constant leaf and the base values are left out.
* A leaf of TreeEnsemble feeds one output, so a tree with vector leaves is written once per
  output (each output still receives its trees in IR order). "vote" trees become one leaf per
  IR leaf on the winning class with the tree weight; "mean" and "vote" divide after the sum
  (a ``Div`` in the model's type, as the IR does).
* Links: the graph states the IR's link formula operation by operation (``Neg``, ``Exp``,
  ``Add``, ``Div``; softmax's max, shift and left-to-right sum; float32's cap at 88.7 and double
  sum), so the only difference is onnxruntime's ``Exp``, which is not the C library's: the notes
  give the bound measured for it (``ORT_LINK_ULPS``). The ``post_transform`` attribute is not
  used: ORT computes LOGISTIC and SOFTMAX in float even for double trees, skips LOGISTIC for one
  output, and ONNX defines LOGISTIC as ``1 - 1/(1 + exp(|x|))`` below 0, not the IR's formula.
"""

from __future__ import annotations

import json
import math

import numpy as np

from rulegen.codegen.lower import leaf_contribution, total_weight, vote_index
from rulegen.errors import ModelFormatError
from rulegen.exporters.onnx_trees import Arrays, add_tree, refuse
from rulegen.ir.nodes import Model

OPSET, ML_OPSET, IR_VERSION = 21, 5, 10  # ai.onnx.ml 5 (TreeEnsemble) came with opset 21, IR 10

# onnxruntime's link outputs vs rulegen's evaluator, in units in the last place of the
# evaluator's output (counting a subnormal's spacing as the smallest normal's), by (link, dtype).
# Measured with onnxruntime 1.32.0 on one thread, through the graphs this module writes: float64
# and float32 models whose raw scores spread over (-39, 39) ((-750, 708) for exp), on 1.4 million
# random rows (tests/test_export_onnx.py::test_link_bound_holds_on_many_rows keeps 200,000 of
# them). ORT's double Exp was within 2 ulp of glibc's exp on 4e6 inputs, its float Exp within
# 1 ulp of glibc's expf.
ORT_LINK_ULPS = {
    ("sigmoid", "float64"): 2, ("softmax", "float64"): 4, ("exp", "float64"): 2,
    ("sigmoid", "float32"): 4, ("softmax", "float32"): 4, ("exp", "float32"): 1,
}


def export(model: Model, *, approximate: bool = False) -> tuple[bytes, list[str]]:
    """The ``.onnx`` file's bytes and notes on anything approximated (empty when exact)."""
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise ModelFormatError("writing ONNX needs the onnx package: pip install onnx") from None
    notes: list[str] = []
    proto = build(model, approximate, notes)
    data = proto.SerializeToString()
    if notes:
        notes.append(measure(model, data))
    if model.link != "identity":  # exact in the file; only the scorer's exp differs
        notes.insert(0, link_note(model))
    return data, notes


def build(model: Model, approximate: bool = False, notes: list | None = None):
    """The ONNX ModelProto for ``model``."""
    from onnx import TensorProto, helper

    notes = [] if notes is None else notes
    if not model.features:
        raise refuse("features", "a model without features (ONNX trees read at least one)")
    f32 = model.dtype == "float32"
    ttype = TensorProto.FLOAT if f32 else TensorProto.DOUBLE
    npt = np.float32 if f32 else np.float64
    arrays = _arrays(model, approximate, notes)

    nodes, inits = [], []

    def const(name, values, dtype=ttype, dims=()):
        inits.append(helper.make_tensor(name, dtype, list(dims), values))
        return name

    x = "X"
    if f32:
        nodes.append(helper.make_node("Cast", ["X"], ["X_float"], to=TensorProto.FLOAT))
        x = "X_float"
    nodes.append(_ensemble(helper, model, arrays, x, "sum", ttype))
    raw = "sum"
    if model.aggregation in ("mean", "vote"):
        n = len(model.trees) if model.aggregation == "mean" else total_weight(model)
        nodes.append(helper.make_node("Div", ["sum", const("n_trees", [float(npt(n))])],
                                      ["raw"]))
    else:
        nodes.append(helper.make_node("Identity", ["sum"], ["raw"]))
    raw = "raw"
    out = raw
    if model.link != "identity":
        out = _link(helper, model.link, f32, model.n_raw, raw, nodes, const)
    n_raw = model.n_raw
    outputs = [helper.make_tensor_value_info("raw", ttype, [None, n_raw])]
    if model.target.task == "classification":
        classes = model.target.classes
        if n_raw == 1 and len(classes) == 2:
            nodes.append(helper.make_node("Sub", [const("one", [1.0]), out], ["p0"]))
            nodes.append(helper.make_node("Concat", ["p0", out], ["probabilities"], axis=1))
        else:
            nodes.append(helper.make_node("Identity", [out], ["probabilities"]))
        nodes.append(helper.make_node("ArgMax", ["probabilities"], ["class_index"], axis=1,
                                      keepdims=0))
        if all(isinstance(c, int) for c in classes):
            const("classes", [int(c) for c in classes], TensorProto.INT64, [len(classes)])
            ltype = TensorProto.INT64
        else:
            const("classes", [str(c).encode("utf-8") for c in classes], TensorProto.STRING,
                  [len(classes)])
            ltype = TensorProto.STRING
        nodes.append(helper.make_node("Gather", ["classes", "class_index"], ["label"], axis=0))
        outputs += [helper.make_tensor_value_info("probabilities", ttype, [None, len(classes)]),
                    helper.make_tensor_value_info("label", ltype, [None])]
    else:
        nodes.append(helper.make_node("Identity", [out], ["value"]))
        outputs.append(helper.make_tensor_value_info("value", ttype, [None, n_raw]))
    inputs = [helper.make_tensor_value_info("X", TensorProto.DOUBLE, [None, len(model.features)])]
    graph = helper.make_graph(nodes, "rulegen", inputs, outputs, initializer=inits)
    proto = helper.make_model(
        graph, producer_name="rulegen", ir_version=IR_VERSION,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("ai.onnx.ml", ML_OPSET)])
    helper.set_model_props(proto, {"rulegen.features": _features_json(model)})
    return proto


def link_note(model: Model) -> str:
    """The one line convert prints for a model with a link."""
    ulps = ORT_LINK_ULPS[(model.link, model.dtype)]
    return (f"link {model.link}: the scorer computes exp itself (onnxruntime {model.dtype}: "
            f"within {ulps} ulp of rulegen's outputs in rulegen's tests; the rest of the formula "
            "is rulegen's, stated in the file); raw scores exact")


def link_subgraph(link: str, dtype: str, k: int) -> tuple[list, list]:
    """The nodes and constants the exporter writes for ``link`` from "raw" to "linked" (a model
    of ``dtype`` with ``k`` raw outputs): what the importer matches a file's link against."""
    from onnx import TensorProto, helper

    nodes, inits = [], []
    ttype = TensorProto.FLOAT if dtype == "float32" else TensorProto.DOUBLE

    def const(name, values, dtype=ttype, dims=()):
        inits.append(helper.make_tensor(name, dtype, list(dims), values))
        return name

    _link(helper, link, dtype == "float32", k, "raw", nodes, const)
    return nodes, inits


def _link(helper, link: str, f32: bool, k: int, raw: str, nodes: list, const) -> str:
    """Nodes computing docs/IR.md's link of ``raw`` exactly as written there, but for Exp."""
    from onnx import TensorProto


    def node(op, inputs, out, **kw):
        nodes.append(helper.make_node(op, inputs, [out], **kw))
        return out

    if link == "exp":
        return node("Exp", [raw], "linked")
    if link == "sigmoid":
        one = const("link_one", [1.0])
        v = node("Neg", [raw], "link_neg")
        if f32:  # XGBoost's std::min(-x, 88.7f): a NaN -x stays NaN, as with Where(Greater)
            cap = const("link_cap", [88.7])
            v = node("Where", [node("Greater", [v, cap], "link_over"), cap, v], "link_capped")
        if f32:
            return node("Div", [one, node("Add", [node("Exp", [v], "link_e"), one], "link_den")],
                        "linked")
        return node("Div", [one, node("Add", [one, node("Exp", [v], "link_e")], "link_den")],
                    "linked")
    # softmax: m = max(raw) per row, e = exp(raw - m), s = e[0] + e[1] + ... left to right
    m = node("ReduceMax", [raw, const("link_axes", [1], TensorProto.INT64, [1])], "link_max",
             keepdims=1)
    e = node("Exp", [node("Sub", [raw, m], "link_shift")], "link_e")
    cols = [f"link_e{j}" for j in range(k)]
    nodes.append(helper.make_node("Split", [e], cols, axis=1, num_outputs=k))
    if f32:  # summed in double, then rounded to float once
        cols = [node("Cast", [c], c + "_d", to=TensorProto.DOUBLE) for c in cols]
    s = cols[0]
    for j in range(1, k):
        s = node("Add", [s, cols[j]], f"link_s{j}")
    if f32:
        s = node("Cast", [s], "link_s_f", to=TensorProto.FLOAT)
    return node("Div", [e, s], "linked")


def _arrays(model: Model, approximate: bool, notes: list) -> Arrays:
    """Every tree of the model, the base score first, as TreeEnsemble arrays."""
    compare = model.dtype
    rnd = (lambda v: float(np.float32(v))) if compare == "float32" else float
    arrays = Arrays()
    for k, b in enumerate(model.base_score):
        if b != 0.0:
            arrays.add_constant_tree(k, rnd(b))
        elif math.copysign(1.0, b) < 0 and not _feeds_nonzero(model, k):
            raise refuse(f"base_score[{k}]", "-0.0 where every tree may add -0.0 (onnxruntime's "
                         "sums start at +0.0); write the base score as 0.0")
    for t_index, tree in enumerate(model.trees):
        if model.aggregation == "vote":
            # one tree per class: ORT mixes up equal leaves of different targets (see onnx_trees)
            for k in range(model.n_raw):
                def value(leaf, tree=tree, k=k):
                    return k, rnd(tree.weight) if vote_index(leaf, tree.weight) == k else 0.0
                add_tree(arrays, model, tree, t_index, value, compare, approximate, notes)
        elif tree.output is not None:
            def value(leaf, tree=tree):
                return tree.output, leaf_contribution(model, tree, leaf)[0]
            add_tree(arrays, model, tree, t_index, value, compare, approximate, notes)
        else:
            for k in range(model.n_raw):
                def value(leaf, tree=tree, k=k):
                    return k, leaf_contribution(model, tree, leaf)[k]
                add_tree(arrays, model, tree, t_index, value, compare, approximate, notes)
    if not arrays.roots:
        for k in range(model.n_raw):
            arrays.add_constant_tree(k, 0.0)
    return arrays


def _feeds_nonzero(model: Model, k: int) -> bool:
    """Whether some tree adds to output k on every row and never adds -0.0 (then a -0.0 base
    and ORT's +0.0 start give the same sum)."""
    from rulegen.ir.nodes import Leaf

    if model.aggregation == "vote":
        return False
    for tree in model.trees:
        if tree.output is not None and tree.output != k:
            continue
        j = 0 if tree.output is not None else k
        vals = [leaf_contribution(model, tree, n)[j] for n in tree.nodes if isinstance(n, Leaf)]
        if all(not (v == 0.0 and math.copysign(1.0, v) < 0) for v in vals):
            return True
    return False


def _ensemble(helper, model: Model, a: Arrays, x: str, out: str, ttype: int):
    from onnx import TensorProto

    def tensor(name, values, dtype=ttype):
        return helper.make_tensor(name, dtype, [len(values)], values)

    kw = {
        "aggregate_function": 1,  # SUM
        "post_transform": 0,  # NONE
        "n_targets": model.n_raw,
        "tree_roots": a.roots,
        "nodes_featureids": a.featureids,
        "nodes_modes": tensor("nodes_modes", a.modes, TensorProto.UINT8),
        "nodes_splits": tensor("nodes_splits", a.splits),
        "nodes_truenodeids": a.truenodeids,
        "nodes_trueleafs": a.trueleafs,
        "nodes_falsenodeids": a.falsenodeids,
        "nodes_falseleafs": a.falseleafs,
        "nodes_missing_value_tracks_true": a.tracks_true,
        "leaf_targetids": a.leaf_targetids,
        "leaf_weights": tensor("leaf_weights", a.leaf_weights),
    }
    if a.membership:
        kw["membership_values"] = tensor("membership_values", a.membership)
    return helper.make_node("TreeEnsemble", [x], [out], domain="ai.onnx.ml", **kw)


def _features_json(model: Model) -> str:
    """Feature names, kinds and categories: ONNX has no place for them, so metadata keeps them
    (the importer reads them back)."""
    return json.dumps([{"name": f.name, "kind": f.kind, "categories": list(f.categories)}
                       for f in model.features], ensure_ascii=False)


def session(data: bytes, threads: int = 1):
    """An onnxruntime session on one intra-op thread (the sums' order then is tree order)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def measure(model: Model, data: bytes) -> str:
    """The largest difference between onnxruntime's outputs and the evaluator's on probe rows."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return "difference unmeasured (onnxruntime is not installed)"
    from rulegen.ir import evaluate
    from rulegen.verify.probes import probe_rows

    rng = np.random.default_rng(0)
    base = rng.normal(size=(64, len(model.features))) * 2
    for j, f in enumerate(model.features):
        if f.kind == "categorical":
            base[:, j] = rng.integers(0, len(f.categories), size=len(base))
    X = np.vstack([base, probe_rows(model, base)])
    name = "probabilities" if model.target.task == "classification" else "value"
    got = session(data).run([name], {"X": X})[0].astype(np.float64)
    if model.target.task == "classification":
        want = evaluate.predict_proba(model, X)
    else:
        want = evaluate.predict_value(model, X)
    with np.errstate(invalid="ignore"):
        diff = np.abs(got - want.astype(np.float64))
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    diff = np.where(same, 0.0, diff)
    worst = float(np.nanmax(diff)) if diff.size else 0.0
    if np.isnan(diff).any():
        worst = math.nan
    return (f"measured with onnxruntime on {len(X)} probe rows: max |{name} difference| = "
            f"{worst:.3g}, {int((~same).sum())} of {same.size} values differ")
