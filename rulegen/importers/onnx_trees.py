"""ONNX tree arrays (ai.onnx.ml ``TreeEnsemble*``, opsets 1, 3 and 5) as IR trees.

Both attribute layouts are first put into one flat form (:class:`Flat`): a node index ``i`` is a
split (``modes[i]``, ``feats[i]``, ``values[i]``, ``true_ref[i]``, ``false_ref[i]``,
``tracks[i]``, ``members[i]``) or a leaf (``weights[i]``: ``{output: weight}``). Each tree is then
read breadth first from its root, so IR children get larger ids than their parents, with a loop
and a queue (no recursion, however deep the tree).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from rulegen.errors import ModelFormatError, UnsupportedFeatureError
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Leaf,
    NumericTest,
    Split,
    Tree,
)

# mode -> (IR op, whether the IR's true side is ONNX's true side)
_MODES = {"BRANCH_LEQ": ("<=", True), "BRANCH_LT": ("<", True),
          "BRANCH_GT": ("<=", False), "BRANCH_GTE": ("<", False)}


def refuse(where: str, what: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError("rulegen IR", what, where)


@dataclass
class Flat:
    """One tree ensemble's nodes, whatever the opset wrote."""

    modes: list = field(default_factory=list)
    feats: list = field(default_factory=list)
    values: list = field(default_factory=list)  # thresholds as Python floats of the file's type
    true_ref: list = field(default_factory=list)
    false_ref: list = field(default_factory=list)
    tracks: list = field(default_factory=list)
    members: list = field(default_factory=list)  # BRANCH_MEMBER: the set's values, else None
    weights: list = field(default_factory=list)  # leaves: {output: weight}, in file order
    names: list = field(default_factory=list)  # how an error names node i
    roots: list = field(default_factory=list)  # (tree name, node index), in summing order

    def add(self, mode, feat=0, value=0.0, true_ref=-1, false_ref=-1, tracks=False, members=None,
            name="") -> int:
        self.modes.append(mode)
        self.feats.append(feat)
        self.values.append(value)
        self.true_ref.append(true_ref)
        self.false_ref.append(false_ref)
        self.tracks.append(tracks)
        self.members.append(members)
        self.weights.append({} if mode == "LEAF" else None)
        self.names.append(name)
        return len(self.modes) - 1


def threshold(t: float, input32: bool) -> tuple[float, str]:
    """(IR threshold, IR test dtype): ORT compares a float input with float thresholds in float,
    and a double input with float or double thresholds in double (exact as float64)."""
    if input32:
        return float(np.float32(t)), "float32"
    return float(t), "float64"


def build_tree(flat: Flat, root: int, n_out: int, at: str, *, input32: bool, categorical: dict,
               limit: int) -> Tree:
    """The IR tree whose root is ``flat`` node ``root``. A node reached twice is an error (ORT
    would score it, but an IR node has one parent)."""
    nodes: list = []
    queue = deque([root])
    seen = {root}
    while queue:
        i = queue.popleft()
        where = f"{at}: {flat.names[i]}"
        mode = flat.modes[i]
        if mode == "LEAF":
            w = flat.weights[i]
            nodes.append(Leaf(tuple(w.get(k, 0.0) for k in range(n_out))))
            continue
        kids = []
        for ref in (flat.true_ref[i], flat.false_ref[i]):
            if not 0 <= ref < len(flat.modes) or ref in seen:
                raise ModelFormatError(f"{where}: a child is missing or reached twice")
            seen.add(ref)
            queue.append(ref)
            kids.append(len(seen) - 1)
        if len(seen) > limit:
            raise ModelFormatError(f"{where}: the tree has more nodes than the file")
        f = flat.feats[i]
        track = bool(flat.tracks[i])
        if mode == "BRANCH_MEMBER":
            if f not in categorical:
                raise refuse(where, "BRANCH_MEMBER on a feature not declared categorical (only "
                                    "rulegen's own exports, whose metadata lists the categories, are read)")
            codes = flat.members[i]
            if not codes or any(c != math.floor(c) or c < 0 for c in codes):
                raise refuse(where, "a set test whose values are not category codes")
            test = CategoricalTest(f, tuple(sorted({int(c) for c in codes})))
            nodes.append(Split(test, (kids[0], kids[1]), DefaultChild(0 if track else 1)))
            continue
        if mode not in _MODES:
            raise refuse(where, f"mode {mode} (comparisons <, <=, >, >= are read)")
        op, same_side = _MODES[mode]
        if math.isnan(flat.values[i]):
            raise refuse(where, "a NaN threshold")
        t, dtype = threshold(flat.values[i], input32)
        if same_side:
            children, missing = (kids[0], kids[1]), DefaultChild(0 if track else 1)
        else:  # x > t true  is  x <= t false
            children, missing = (kids[1], kids[0]), DefaultChild(1 if track else 0)
        if f in categorical:
            nodes.append(_all_one_way(f, op, t, categorical[f], children, missing, where))
            continue
        nodes.append(Split(NumericTest(f, op, t, dtype), children, missing))
    return _scalar_if_one_output(Tree(tuple(nodes)), n_out)


def _all_one_way(f, op, t, n_codes, children, missing, where) -> Split:
    """A comparison on a categorical feature's code: rulegen's exporter writes ``x <= inf`` (every
    value true) and ``x < -inf`` (every value false); as a set test of every code, unseen values
    on the same side."""
    if op == "<=" and t == math.inf:
        first = 0
    elif op == "<" and t == -math.inf:
        first = 1
    else:
        raise refuse(where, "a numeric comparison on a categorical feature")
    kids = children if first == 0 else (children[1], children[0])
    miss = missing.child if first == 0 else 1 - missing.child
    return Split(CategoricalTest(f, tuple(range(n_codes))), kids, DefaultChild(miss), unseen=0)


def _scalar_if_one_output(tree: Tree, n_out: int) -> Tree:
    """A tree whose leaves all feed one output k becomes ``output=k`` with scalar leaves (the
    same sums: the other outputs only received +0.0, which changes no sum that starts at +0.0)."""
    if n_out == 1:
        return tree
    fed = set()
    for n in tree.nodes:
        if isinstance(n, Leaf):
            fed.update(k for k, v in enumerate(n.value) if v != 0.0 or math.copysign(1, v) < 0)
    if len(fed) != 1:
        return tree
    k = fed.pop()
    return Tree(tuple(Leaf((n.value[k],)) if isinstance(n, Leaf) else n for n in tree.nodes),
                output=k)
