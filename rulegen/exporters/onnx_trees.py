"""IR trees as the flat arrays of ONNX's ``TreeEnsemble`` (ai.onnx.ml opset 5).

An IR split becomes a *chain* of ONNX nodes: one node for a numeric or categorical test, one per
bound for an interval split, one per group for a multiway split. Each link of the chain sends its
true side to one IR child and its false side to the next link; the last link's false side is the
remaining child. A missing value follows the link whose ``missing_value_tracks_true`` is set (ORT
tests ``x OP t || (tracks_true && isnan(x))``), or falls through to the last child.

Nothing here recurses: node references are resolved from the highest IR id down (children have
larger ids than parents).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rulegen.codegen.lower import float64_bound
from rulegen.errors import UnsupportedFeatureError
from rulegen.ir.nodes import (
    Blend,
    CategoricalTest,
    DefaultChild,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Split,
    Surrogates,
    Tree,
)

# ONNX node modes (TreeEnsemble's nodes_modes)
LEQ, LT, MEMBER = 0, 1, 6
_MODE = {"<=": LEQ, "<": LT}


def refuse(where: str, what: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError("onnx", f"{where}: {what}")


@dataclass
class Arrays:
    """The attribute arrays of one TreeEnsemble node, filled tree by tree."""

    featureids: list = field(default_factory=list)
    modes: list = field(default_factory=list)
    splits: list = field(default_factory=list)
    truenodeids: list = field(default_factory=list)
    trueleafs: list = field(default_factory=list)
    falsenodeids: list = field(default_factory=list)
    falseleafs: list = field(default_factory=list)
    tracks_true: list = field(default_factory=list)
    membership: list = field(default_factory=list)  # sets separated by NaN, in node order
    leaf_targetids: list = field(default_factory=list)
    leaf_weights: list = field(default_factory=list)
    roots: list = field(default_factory=list)

    def add_node(self, feature: int, mode: int, split: float, tracks: bool, members=None) -> int:
        self.featureids.append(feature)
        self.modes.append(mode)
        self.splits.append(split)
        self.tracks_true.append(1 if tracks else 0)
        for lst in (self.truenodeids, self.trueleafs, self.falsenodeids, self.falseleafs):
            lst.append(0)
        if mode == MEMBER:
            self.membership.extend(float(c) for c in members)
            self.membership.append(math.nan)
        return len(self.modes) - 1

    def link(self, node: int, side: str, ref: tuple[bool, int]) -> None:
        is_leaf, index = ref
        if (side == "false" and not is_leaf and self.modes[node] == MEMBER
                and self.modes[index] == MEMBER and self.featureids[index] == self.featureids[node]):
            # ORT 1.32 merges a set test whose false side is another set test on the same
            # feature into one set when their true sides look alike (leaves of equal value, of
            # any target), keeping the first one's missing-value flag. A pass-through node
            # between them (x <= inf, NaN tracking true: every row goes on) stops that.
            guard = self.add_node(self.featureids[node], LEQ, math.inf, True)
            self.link(guard, "true", ref)
            self.link(guard, "false", self.add_leaf(0, 0.0))  # never reached
            is_leaf, index = False, guard
        getattr(self, side + "nodeids")[node] = index
        getattr(self, side + "leafs")[node] = 1 if is_leaf else 0

    def add_leaf(self, target: int, value: float) -> tuple[bool, int]:
        self.leaf_targetids.append(target)
        self.leaf_weights.append(value)
        return True, len(self.leaf_weights) - 1

    def add_constant_tree(self, target: int, value: float) -> None:
        """A tree that adds ``value`` to every row. ORT mistakes a root whose two sides are one
        leaf for a leaf-only tree and then reads the leaf arrays at the *node* index, so the two
        sides get two equal leaves: ``x0 <= inf``, NaN tracking true."""
        root = self.add_node(0, LEQ, math.inf, True)
        self.link(root, "true", self.add_leaf(target, value))
        self.link(root, "false", self.add_leaf(target, value))
        self.roots.append(root)


def missing_child(split: Split, where: str, approximate: bool, notes: list) -> int:
    """The child a missing value goes to; surrogates and blends only when approximating."""
    rule = split.missing
    if isinstance(rule, DefaultChild):
        return rule.child
    if isinstance(rule, Surrogates):
        if not approximate:
            raise refuse(where, "surrogate splits (ONNX trees send a missing value one fixed way); "
                                "--approximate sends it to the surrogates' default child")
        notes.append(f"{where}: surrogates replaced by their default child")
        return rule.default
    if isinstance(rule, Blend):
        if not approximate:
            raise refuse(where, "a blended split (C4.5 missing values follow every branch; ONNX "
                                "trees follow one); --approximate sends them to the heaviest branch")
        notes.append(f"{where}: blended missing values sent to the heaviest branch")
        return int(np.argmax(rule.weights))
    raise refuse(where, f"the missing-value rule {type(rule).__name__}")


def _bound(test_op: str, t: float, dtype: str, compare: str) -> tuple[int, float]:
    """(mode, split value) for ``x op t`` compared in the test's dtype, on input of type
    ``compare``: float64 input gets the exact float64 bound of a float32 test; float32 input
    (a float32 model, cast once) compares float32 tests as they are."""
    if compare == "float64":
        op, b = float64_bound(test_op, t, dtype)
        return _MODE[op], b
    return _MODE[test_op], t


def chain(model: Model, split: Split, where: str, compare: str, approximate: bool,
          notes: list) -> tuple[list, int]:
    """The links ``(feature, mode, split, members, child, tracks_true)`` of a split and the
    child its last link's false side goes to."""
    test = split.test
    miss = missing_child(split, where, approximate, notes)
    if isinstance(test, ObliqueTest):
        raise refuse(where, "an oblique split (ONNX tree nodes test one feature)")
    if compare == "float32" and getattr(test, "dtype", "float32") == "float64":
        raise refuse(where, "a float64 comparison in a float32 model (ONNX compares in the type "
                            "the trees sum in)")
    f = test.feature
    if isinstance(test, NumericTest):
        mode, b = _bound(test.op, test.threshold, test.dtype, compare)
        return [(f, mode, b, None, 0, miss == 0)], 1
    if isinstance(test, IntervalTest):
        links = []
        for i, t in enumerate(test.bounds):
            mode, b = _bound(test.op, t, test.dtype, compare)
            links.append((f, mode, b, None, i, miss == i))
        return links, len(test.bounds)
    n_codes = len(model.features[f].categories)
    if isinstance(test, CategoricalTest):
        if split.unseen in (None, 1):
            return [_member(f, test.categories, 0, miss == 0)], 1
        # unseen joins the set side: test the listed codes outside the set instead
        rest = sorted(set(range(n_codes)) - set(test.categories))
        if not rest:
            return [(f, LEQ, math.inf, None, 0, miss == 0)], 1
        return [_member(f, rest, 1, miss == 1)], 0
    if isinstance(test, MultiwayTest):
        # unseen codes and listed codes in no group go to split.unseen: make it the fall-through
        links = [_member(f, group, g, miss == g) for g, group in enumerate(test.groups)
                 if g != split.unseen]
        return links, split.unseen
    raise refuse(where, f"the split test {type(test).__name__}")


def _member(f: int, codes, child: int, tracks: bool) -> tuple:
    if not codes:  # an empty set: no value is in it (NaN may still track true)
        return (f, LT, -math.inf, None, child, tracks)
    return (f, MEMBER, 0.0, tuple(codes), child, tracks)


def add_tree(arrays: Arrays, model: Model, tree: Tree, t_index: int, leaf_value, compare: str,
             approximate: bool, notes: list) -> None:
    """Append one ONNX tree for ``tree``; ``leaf_value(leaf) -> (target, value)``."""
    nodes = tree.nodes
    refs: list = [None] * len(nodes)
    for node_id in range(len(nodes) - 1, -1, -1):
        node = nodes[node_id]
        if isinstance(node, Leaf):
            refs[node_id] = arrays.add_leaf(*leaf_value(node))
            continue
        where = f"trees[{t_index}].nodes[{node_id}]"
        links, last = chain(model, node, where, compare, approximate, notes)
        if not links:  # every value goes one way
            refs[node_id] = refs[node.children[last]]
            continue
        ids = [arrays.add_node(f, mode, b, tracks, members)
               for f, mode, b, members, _child, tracks in links]
        for k, (link_id, lk) in enumerate(zip(ids, links)):
            arrays.link(link_id, "true", refs[node.children[lk[4]]])
            arrays.link(link_id, "false", (False, ids[k + 1]) if k + 1 < len(ids)
                        else refs[node.children[last]])
        refs[node_id] = (False, ids[0])
    is_leaf, index = refs[0]
    if is_leaf:
        target, value = arrays.leaf_targetids[index], arrays.leaf_weights[index]
        arrays.add_constant_tree(target, value)
    else:
        arrays.roots.append(index)
