"""The attribute arrays of ai.onnx.ml tree ensembles, put into :class:`onnx_trees.Flat`.

Opsets 1 and 3 (``TreeEnsembleRegressor`` / ``Classifier``) name nodes by (tree id, node id) and
hang weights on leaves through ``*_treeids`` / ``*_nodeids``; onnxruntime takes a tree's root to
be the first node of each run of equal tree ids. Opset 5 (``TreeEnsemble``) lists splits and
leaves apart, with ``tree_roots``; onnxruntime reads a root whose true and false ids are equal as
a leaf-only tree whose leaf has the root's index (``tree_ensemble_attribute.h``).
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.errors import ModelFormatError
from rulegen.importers.onnx_trees import Flat, refuse

V5_MODES = {0: "BRANCH_LEQ", 1: "BRANCH_LT", 2: "BRANCH_GTE", 3: "BRANCH_GT", 4: "BRANCH_EQ",
            5: "BRANCH_NEQ", 6: "BRANCH_MEMBER"}


def text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _floats(attrs: dict, name: str) -> list:
    """A float attribute as Python floats of its float32 values."""
    return [float(np.float32(v)) for v in attrs.get(name, [])]


def flat_v3(attrs: dict, prefix: str, n_out: int, at: str) -> Flat:
    tree_ids = list(attrs.get("nodes_treeids", []))
    node_ids = list(attrs.get("nodes_nodeids", []))
    modes = [text(m) for m in attrs.get("nodes_modes", [])]
    feats = list(attrs.get("nodes_featureids", []))
    values = _floats(attrs, "nodes_values")
    true_ids = list(attrs.get("nodes_truenodeids", []))
    false_ids = list(attrs.get("nodes_falsenodeids", []))
    tracks = list(attrs.get("nodes_missing_value_tracks_true", []))
    n = len(tree_ids)
    if not n or any(len(a) != n for a in (node_ids, modes, feats, values, true_ids, false_ids)):
        raise ModelFormatError(f"{at}: the nodes_* attributes are missing or of different lengths")
    index: dict = {}
    for i, key in enumerate(zip(tree_ids, node_ids)):
        if key in index:
            raise ModelFormatError(f"{at}: node {key[1]} of tree {key[0]} appears twice")
        index[key] = i
    flat = Flat()
    for i in range(n):
        t = tree_ids[i]
        refs = [index.get((t, c), -1) for c in (true_ids[i], false_ids[i])]
        flat.add(modes[i], feats[i], values[i], refs[0], refs[1], i < len(tracks) and tracks[i] == 1,
                 name=f"tree {t} node {node_ids[i]}")
        if i == 0 or tree_ids[i - 1] != t:
            if any(name == t for name, _r in flat.roots):
                raise refuse(at, f"tree {t}'s nodes are not contiguous")
            flat.roots.append((t, i))
    w_vals = _floats(attrs, f"{prefix}_weights")
    entries = list(zip(attrs.get(f"{prefix}_treeids", []), attrs.get(f"{prefix}_nodeids", []),
                       attrs.get(f"{prefix}_ids", []), w_vals))
    for t, nd, k, w in entries:
        i = index.get((t, nd))
        if i is None:
            raise ModelFormatError(f"{at}: a weight names node {nd} of tree {t}, which does not exist")
        if modes[i] != "LEAF":
            continue  # onnxruntime ignores weights on branch nodes
        if not 0 <= k < n_out:
            raise ModelFormatError(f"{at}: tree {t} node {nd}: output {k} out of range")
        slot = flat.weights[i]
        if k in slot:
            raise refuse(at, f"tree {t} node {nd}: two weights for output {k} (onnxruntime adds "
                             "them one by one)")
        slot[k] = w
    for i in range(n):
        if modes[i] == "LEAF" and not flat.weights[i]:
            raise ModelFormatError(f"{at}: tree {tree_ids[i]} node {node_ids[i]}: a leaf without a weight")
    return flat


def flat_v5(attrs: dict, at: str, type32: bool) -> Flat:
    from onnx import numpy_helper

    def tensor(name):
        return numpy_helper.to_array(attrs[name]).ravel() if name in attrs else np.zeros(0)

    modes = [int(m) for m in tensor("nodes_modes")]
    splits = [float(v) for v in tensor("nodes_splits")]
    feats = list(attrs.get("nodes_featureids", []))
    true_ids = list(attrs.get("nodes_truenodeids", []))
    false_ids = list(attrs.get("nodes_falsenodeids", []))
    true_leaf = list(attrs.get("nodes_trueleafs", []))
    false_leaf = list(attrs.get("nodes_falseleafs", []))
    tracks = list(attrs.get("nodes_missing_value_tracks_true", []))
    targets = list(attrs.get("leaf_targetids", []))
    weights = [float(v) for v in tensor("leaf_weights")]
    members = [float(v) for v in tensor("membership_values")]
    n = len(modes)
    if any(len(a) != n for a in (splits, feats, true_ids, false_ids, true_leaf, false_leaf)) \
            or len(targets) != len(weights) or not attrs.get("tree_roots"):
        raise ModelFormatError(f"{at}: the nodes_*, leaf_* or tree_roots attributes are missing or "
                               "of different lengths")
    if type32 and any(float(np.float32(v)) != v for v in splits + weights if not math.isnan(v)):
        raise ModelFormatError(f"{at}: float tensors hold values that are not float32")
    flat = Flat()
    sets = iter(_split_on_nan(members))
    for i in range(n):
        mode = V5_MODES.get(modes[i], f"{modes[i]} (unknown)")
        refs = [(n + c) if leaf else c for c, leaf in ((true_ids[i], true_leaf[i]), (false_ids[i], false_leaf[i]))]
        bad = [c for c, leaf in ((true_ids[i], true_leaf[i]), (false_ids[i], false_leaf[i]))
               if not 0 <= c < (len(targets) if leaf else n)]
        if bad:
            raise ModelFormatError(f"{at}: node {i}: child {bad[0]} out of range")
        flat.add(mode, feats[i], splits[i], refs[0], refs[1], i < len(tracks) and tracks[i] == 1,
                 next(sets, None) if mode == "BRANCH_MEMBER" else None, name=f"node {i}")
    for j, (k, w) in enumerate(zip(targets, weights)):
        flat.add("LEAF", name=f"leaf {j}")
        flat.weights[-1][k] = w
    for t, r in enumerate(attrs["tree_roots"]):
        if not 0 <= r < n:
            raise ModelFormatError(f"{at}: tree_roots[{t}] = {r} out of range")
        if true_ids[r] == false_ids[r]:
            # onnxruntime reads this as a one-leaf tree whose leaf is leaf r (not the node's child)
            if r >= len(targets):
                raise ModelFormatError(f"{at}: tree_roots[{t}]: leaf {r} out of range")
            flat.roots.append((t, n + r))
        else:
            flat.roots.append((t, r))
    return flat


def _split_on_nan(values: list) -> list:
    sets, cur = [], []
    for v in values:
        if math.isnan(v):
            sets.append(tuple(cur))
            cur = []
        else:
            cur.append(v)
    if cur:
        sets.append(tuple(cur))
    return sets
