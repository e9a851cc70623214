"""Lowering passes: small pure functions from the IR to what targets emit.

Each pass does one thing, never recurses, and keeps the meaning of
``docs/IR.md`` exactly; the target tests check that against the evaluator.
"""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from rulegen.ir.nodes import Blend, Leaf, Model, Split, Surrogates, Tree

_F32_OVERFLOW = 2.0**128  # where float32 rounding goes to infinity, seen as a float32 "value"


def _f32_neighbours(t: float) -> tuple[float, float]:
    """The float32 values just below and just above ``t`` (itself a float32 value);
    beyond FLT_MAX the next value is treated as 2**128, the overflow point."""
    with np.errstate(over="ignore"):
        f = np.float32(t)
        below = float(np.nextafter(f, np.float32(-np.inf)))
        above = float(np.nextafter(f, np.float32(np.inf)))
    if math.isinf(above) and not math.isinf(t):
        above = _F32_OVERFLOW
    if math.isinf(below) and not math.isinf(t):
        below = -_F32_OVERFLOW
    return below, above


def _is_even_f32(v: float) -> bool:
    """Whether ``v`` has an even float32 significand (the tie-breaking winner)."""
    if abs(v) == _F32_OVERFLOW:
        return True  # the overflow "value" behaves like 2**128, an even significand
    bits = np.array([v], dtype=np.float32).view(np.uint32)[0]
    return not (bits & 1)


def float64_bound(op: str, threshold: float, dtype: str) -> tuple[str, float]:
    """An (op, bound) pair with ``x op bound`` in float64 equal, for every float64 x,
    to the IR test ``x op threshold`` compared in ``dtype`` (NaN is false in both).

    float32 rounding is monotonic, so ``f32(x) < t`` holds exactly below the midpoint
    m between t and the float32 value just below it; at m itself the tie goes to the
    neighbour with an even significand. ``f32(x) <= t`` is ``f32(x) < next32(t)``.
    """
    if dtype == "float64":
        return op, float(threshold)
    t = float(threshold)
    if op == "<=":
        if t == math.inf:
            return "<=", t  # true for every number
        # f32(x) <= t  is  f32(x) < next32(t); next32(-inf) is -FLT_MAX
        t = -float(np.finfo(np.float32).max) if t == -math.inf else _f32_neighbours(t)[1]
    if t == -math.inf:
        return "<", t  # never true
    below = _f32_neighbours(t)[0] if t != math.inf else float(np.finfo(np.float32).max)
    upper = _F32_OVERFLOW if t == math.inf else t
    mid = below / 2 + upper / 2  # exact: both are float32 values, far from double limits
    return ("<=", mid) if _is_even_f32(below) else ("<", mid)


def float32_bound(op: str, bound: float) -> tuple[str, float]:
    """An (op, bound) pair of float32 values with ``x op' bound'`` equal, for every float32
    x, to the float64 test ``x op bound`` (a float64 bound, as from :func:`float64_bound`).

    A bound that is a float32 value stays. Otherwise no float lies on it, so both ``x < b``
    and ``x <= b`` hold exactly when x is at most the largest float32 below b (-inf below
    -FLT_MAX, FLT_MAX above it): the float profile of the C target compares in float.
    """
    with np.errstate(over="ignore"):
        f = np.float32(bound)
    if float(f) == bound or math.isinf(bound):
        return op, float(bound)
    if float(f) > bound:
        f = np.nextafter(f, np.float32(-np.inf))
    return "<=", float(f)


def split_tests(tree: Tree) -> Iterator:
    """Every test the tree's splits read: each split's own, then its surrogates'."""
    for node in tree.nodes:
        if isinstance(node, Split):
            yield node.test
            if isinstance(node.missing, Surrogates):
                for s in node.missing.surrogates:
                    yield s.test


def has_blend(tree: Tree) -> bool:
    return any(isinstance(n, Split) and isinstance(n.missing, Blend) for n in tree.nodes)


def _round(v: float, dtype: str) -> float:
    return float(np.float32(v)) if dtype == "float32" else float(v)


def leaf_contribution(model: Model, tree: Tree, leaf: Leaf) -> tuple[float, ...]:
    """What a leaf adds to the accumulator, with the tree weight folded in and rounded to
    the model's dtype. Exact for trees without blends: the evaluator computes the same
    ``weight * value`` product per row, and folding it here avoids any chance of a C
    compiler fusing the multiply into the add."""
    if tree.weight == 1.0:
        return tuple(_round(v, model.dtype) for v in leaf.value)
    return tuple(_round(tree.weight * v, model.dtype) for v in leaf.value)


def vote_index(leaf: Leaf, weight: float = 1.0) -> int:
    """The class a leaf votes for: the first largest of ``weight * value`` (as the evaluator,
    which can differ from the unweighted argmax only when the product overflows or ties)."""
    value = np.asarray(leaf.value)
    return int(np.argmax(value if weight == 1.0 else weight * value))


def preorder(tree: Tree) -> Iterator[tuple[int, int]]:
    """(node id, depth) in depth-first order, children left to right; no recursion."""
    stack = [(0, 0)]
    while stack:
        node_id, depth = stack.pop()
        yield node_id, depth
        node = tree.nodes[node_id]
        if isinstance(node, Split):
            for child in reversed(node.children):
                stack.append((child, depth + 1))


def node_depths(tree: Tree) -> list[int]:
    """Each node's number of splits above it."""
    d = [0] * len(tree.nodes)
    for node_id, node in enumerate(tree.nodes):  # children have larger ids than parents
        if isinstance(node, Split):
            for child in node.children:
                d[child] = d[node_id] + 1
    return d


def depth(tree: Tree) -> int:
    """Number of splits on the longest root-to-leaf path."""
    return max(node_depths(tree))


def parents(tree: Tree) -> list[int]:
    """parents[i] is the id of node i's parent (-1 for the root)."""
    out = [-1] * len(tree.nodes)
    for node_id, node in enumerate(tree.nodes):
        if isinstance(node, Split):
            for child in node.children:
                out[child] = node_id
    return out


def total_weight(model: Model) -> float:
    """Sum of tree weights in order, as the "vote" aggregation divides by it."""
    total = 0.0
    for tree in model.trees:
        total = total + tree.weight
    return total


def leaf_outputs(model: Model) -> tuple[list[int], np.ndarray, np.ndarray]:
    """For a model of one tree without blends, whose every row ends in one leaf: the leaf
    ids, and per leaf the raw scores and the outputs (class probabilities, or values) the
    evaluator gives each row that reaches it -- its own arithmetic, folded at generation."""
    from rulegen.ir import evaluate

    tree, = model.trees
    leaves = [i for i, n in enumerate(tree.nodes) if isinstance(n, Leaf)]
    values = np.array([tree.nodes[i].value for i in leaves], dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # IEEE overflow is the semantics
        raw = evaluate.combine(model, [values], len(leaves))
        out = evaluate.outputs_of(model, raw)
    if model.target.task == "classification":
        out = evaluate.proba_of(model, out)
    return leaves, raw, out
