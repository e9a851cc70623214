"""The shared tree builder: grows a tree from a split finder and a leaf summary.

Learners plug in two things:

* a **split finder** with ``find_split(node) -> Partition | None``: it chooses the
  test for a node (any IR test: numeric, categorical, multiway...), says where
  missing values go, and hands back one :class:`NodeWork` per child;
* a **summary** function ``summarize(node) -> (value, samples, distribution)``
  giving the leaf value and the support recorded on every node.

The builder owns the growth order and the stopping rules shared by CART-like
learners (scikit-learn's semantics). Growth is a loop over an explicit stack
(depth first) or heap (best first, when ``max_leaf_nodes`` is set); nothing
recurses, so tree depth is limited only by memory. Node ids follow creation
order -- pre-order for depth first, expansion order for best first, exactly as
scikit-learn numbers its nodes -- so every child id exceeds its parent's.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

from rulegen.ir.nodes import Leaf, Missing, Split, Test, Tree

EPSILON = float(np.finfo(np.float64).eps)  # sklearn's tolerance for "pure" and "no gain"


@dataclass
class NodeWork:
    """A node waiting to be split: the rows that reach it and their weights.

    ``rows`` are global row ids (for blended learners the same row may reach
    several nodes, each with its own fraction in ``weights``). ``impurity`` is
    set by whoever created the node (the parent's split finder). ``state`` is
    private to the split finder, e.g. per-feature presorted row orders.
    """

    rows: np.ndarray
    weights: np.ndarray
    impurity: float = float("inf")
    depth: int = 0
    state: object = None


@dataclass
class Partition:
    """A split chosen by a split finder: the IR test, the missing-value rule and
    one child per test outcome (in ``Split.children`` order).

    ``improvement`` is the weighted impurity decrease
    ``W_node / W_total * (impurity - sum_i W_i / W_node * impurity_i)``: it is
    compared with ``min_impurity_decrease`` and orders best-first growth.
    """

    test: Test
    missing: Missing
    children: list[NodeWork]
    improvement: float
    unseen: int | None = None


class SplitFinder(Protocol):
    def find_split(self, node: NodeWork) -> Partition | None: ...


Summary = tuple[tuple[float, ...], float, "tuple[float, ...] | None"]


@dataclass(frozen=True)
class GrowthLimits:
    """Pre-pruning rules, checked before a node is searched (as sklearn does)."""

    max_depth: int | None = None
    min_samples_split: int = 2
    min_samples_leaf: int = 1
    min_weight_leaf: float = 0.0
    min_impurity_decrease: float = 0.0
    max_leaf_nodes: int | None = None


@dataclass
class _Record:
    summary: Summary
    partition: Partition | None
    children: list = field(default_factory=list)


class TreeBuilder:
    def __init__(self, finder: SplitFinder, summarize: Callable[[NodeWork], Summary],
                 limits: GrowthLimits = GrowthLimits()):
        self.finder = finder
        self.summarize = summarize
        self.limits = limits

    def _search(self, node: NodeWork) -> Partition | None:
        lim = self.limits
        n = len(node.rows)
        if ((lim.max_depth is not None and node.depth >= lim.max_depth)
                or n < lim.min_samples_split
                or n < 2 * lim.min_samples_leaf
                or float(node.weights.sum()) < 2 * lim.min_weight_leaf
                or node.impurity <= EPSILON):
            return None
        part = self.finder.find_split(node)
        if part is None or part.improvement + EPSILON < lim.min_impurity_decrease:
            return None
        for child in part.children:
            child.depth = node.depth + 1
        return part

    def _open(self, records: list[_Record], node: NodeWork, parent: int | None, slot: int) -> int:
        nid = len(records)
        if parent is not None:
            records[parent].children[slot] = nid
        part = self._search(node)
        n_children = len(part.children) if part is not None else 0
        records.append(_Record(self.summarize(node), part, [None] * n_children))
        return nid

    def build(self, root: NodeWork) -> Tree:
        records: list[_Record] = []
        if self.limits.max_leaf_nodes is None:
            self._depth_first(records, root)
        else:
            self._best_first(records, root)
        return Tree(nodes=tuple(self._to_ir(r) for r in records))

    def _depth_first(self, records, root):
        stack = [(root, None, 0)]
        while stack:
            node, parent, slot = stack.pop()
            nid = self._open(records, node, parent, slot)
            part = records[nid].partition
            if part is not None:
                # reversed, so child 0 is popped (and numbered) first
                for i in range(len(part.children) - 1, -1, -1):
                    stack.append((part.children[i], nid, i))
                part.children = []  # the stack holds them now; free memory early

    def _best_first(self, records, root):
        max_leaves = self.limits.max_leaf_nodes
        heap: list[tuple[float, int]] = []
        leaves = 1

        def push(nid):
            part = records[nid].partition
            if part is not None:
                # ties: the earlier node first (sklearn's heap order is unspecified)
                heapq.heappush(heap, (-part.improvement, nid))

        push(self._open(records, root, None, 0))
        while heap:
            _, nid = heapq.heappop(heap)
            rec = records[nid]
            children = rec.partition.children
            if leaves + len(children) - 1 > max_leaves:
                rec.partition, rec.children = None, []
                continue
            leaves += len(children) - 1
            rec.partition.children = []
            for i, child in enumerate(children):
                push(self._open(records, child, nid, i))

    @staticmethod
    def _to_ir(rec: _Record):
        value, samples, distribution = rec.summary
        part = rec.partition
        if part is None:
            return Leaf(value=value, samples=samples, distribution=distribution)
        return Split(test=part.test, children=tuple(rec.children), missing=part.missing,
                     unseen=part.unseen, samples=samples, distribution=distribution)
