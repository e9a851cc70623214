"""CatBoost trees -> IR trees, without recursion.

A CatBoost split holds or not: a float split when ``float32(x) > border`` (NaN already replaced
as the feature's treatment says), a one-hot split when the category's hash equals the value.

* Oblivious (symmetric) trees: depth ``d``, ``splits[j]`` tested at level ``j``; the leaf index
  is ``sum(holds_j << j)`` (split 0 is the lowest bit) and ``leaf_values[index * dim + k]`` is
  output ``k`` (``evaluator_impl.cpp``: CalcIndexes and CalculateLeafValuesMulti). The IR tree
  is the full binary tree of depth ``d`` in breadth-first order.
* Non-symmetric trees (``grow_policy`` Depthwise / Lossguide): nested ``split`` / ``left`` /
  ``right`` objects, ``right`` taken when the split holds; leaves hold ``value``.

In the IR a float split is ``NumericTest(f, "<=", border, "float32")``: child 0 is "does not
hold". A one-hot split is ``CategoricalTest(f, (code,))``: child 0 is "holds". The one-hot
split's category code is only known once every tree has been read, so the builders put the
hash there and :func:`Splits.resolve` swaps in the codes.
"""

from __future__ import annotations

import math
from dataclasses import replace

from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Leaf,
    NumericTest,
    Split,
    Tree,
)

MAX_DEPTH = 20  # CatBoost allows 16; more would be a 2**21-node IR tree


class Fail(Exception):
    """A malformed document: the JSON path and what is wrong (becomes ModelFormatError)."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")


def number(value, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Fail(path, "expected a number")
    return float(value)


class Splits:
    """A split as (IR test, missing rule, index of the child taken when the split holds)."""

    @staticmethod
    def numeric(flat: int, border: float, nan_holds: bool):
        return NumericTest(flat, "<=", border, "float32"), DefaultChild(1 if nan_holds else 0), 1

    @staticmethod
    def onehot(flat: int, hash_value: int):
        # CatBoost takes no missing category; the IR sends missing where "not equal" goes
        return CategoricalTest(flat, (hash_value,)), DefaultChild(1), 0

    @staticmethod
    def resolve(tree: Tree, codes: dict[int, dict[int, int]]) -> Tree:
        """The tree with each one-hot split's hash replaced by its category code."""
        nodes = list(tree.nodes)
        for i, node in enumerate(nodes):
            if isinstance(node, Split) and isinstance(node.test, CategoricalTest):
                t = node.test
                code = codes[t.feature][t.categories[0]]
                nodes[i] = replace(node, test=CategoricalTest(t.feature, (code,)))
        return replace(tree, nodes=tuple(nodes))


def _leaf_value(values: list, index: int, dim: int, path: str) -> tuple[float, ...]:
    out = []
    for k in range(dim):
        v = number(values[index * dim + k], f"{path}[{index * dim + k}]")
        if not math.isfinite(v):
            raise Fail(f"{path}[{index * dim + k}]", f"leaf value {v!r} is not finite")
        out.append(v)
    return tuple(out)


def symmetric_leaf_count(raw, path: str) -> int:
    if not isinstance(raw, dict):
        raise Fail(path, "expected an object")
    splits = raw.get("splits", [])
    if not isinstance(splits, list):
        raise Fail(f"{path}.splits", "expected an array")
    if len(splits) > MAX_DEPTH:
        raise Fail(f"{path}.splits", f"depth {len(splits)} is over {MAX_DEPTH}")
    return 1 << len(splits)


def oblivious_tree(raw, path: str, dim: int, read) -> Tree:
    n_leaves = symmetric_leaf_count(raw, path)
    depth = n_leaves.bit_length() - 1
    splits = [read(s, f"{path}.splits[{j}]") for j, s in enumerate(raw.get("splits", []))]
    values = raw.get("leaf_values")
    if not isinstance(values, list) or len(values) != n_leaves * dim:
        raise Fail(f"{path}.leaf_values", f"expected {n_leaves * dim} values "
                                          f"({n_leaves} leaves x {dim} outputs)")
    weights = raw.get("leaf_weights")
    if not (isinstance(weights, list) and len(weights) == n_leaves
            and all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights)):
        weights = None
    nodes: list = []
    for level, (test, missing, _) in enumerate(splits):
        first_child = (1 << (level + 1)) - 1
        for pos in range(1 << level):
            nodes.append(Split(test, (first_child + 2 * pos, first_child + 2 * pos + 1), missing))
    for pos in range(n_leaves):
        index = 0
        for level, (_, _, holds_child) in enumerate(splits):
            child = (pos >> (depth - 1 - level)) & 1
            index |= (child == holds_child) << level
        samples = float(weights[index]) if weights is not None else None
        nodes.append(Leaf(_leaf_value(values, index, dim, f"{path}.leaf_values"), samples=samples))
    return Tree(nodes=tuple(nodes))


def unbalanced_tree(raw, path: str, dim: int, read) -> Tree:
    """IR tree for one non-symmetric tree (nested objects), walked with a stack."""
    nodes: list = []
    pending: dict[int, list] = {}
    stack = [(raw, path, -1, 0)]
    while stack:
        node, p, parent, pos = stack.pop()
        me = len(nodes)
        if parent >= 0:
            pending[parent][pos] = me
        if not isinstance(node, dict):
            raise Fail(p, "expected an object")
        if "split" in node:
            test, missing, holds = read(node["split"], f"{p}.split")
            nodes.append((test, missing))
            pending[me] = [None, None]
            sides = ["right" if pos == holds else "left" for pos in (0, 1)]
            for side in sides:
                if side not in node:
                    raise Fail(f"{p}.{side}", "missing")
            # push child 1 first, so that child 0 gets the next id
            stack.append((node[sides[1]], f"{p}.{sides[1]}", me, 1))
            stack.append((node[sides[0]], f"{p}.{sides[0]}", me, 0))
            continue
        if "value" not in node:
            raise Fail(p, "a node with neither 'split' nor 'value'")
        value = node["value"]
        value = value if isinstance(value, list) else [value]
        if len(value) != dim:
            raise Fail(f"{p}.value", f"expected {dim} values")
        w = node.get("weight")
        samples = float(w) if isinstance(w, (int, float)) and not isinstance(w, bool) else None
        nodes.append(Leaf(_leaf_value(value, 0, dim, f"{p}.value"), samples=samples))
    out = []
    for i, nd in enumerate(nodes):
        if isinstance(nd, Leaf):
            out.append(nd)
        else:
            test, missing = nd
            out.append(Split(test, tuple(pending[i]), missing))
    return Tree(nodes=tuple(out))
