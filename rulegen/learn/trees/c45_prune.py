"""The grown C4.5 tree and its error-based pruning (collapse, pessimistic pruning,
subtree raising), all as loops over explicit stacks.

Pruning compares pessimistic error estimates: a node holding N (weighted) rows of
which e are misclassified is charged ``e + added_errors(N, e, cf)``, the upper
limit of a binomial confidence interval at level ``cf``. C4.5 release 8 and Weka's
J48 compute that limit slightly differently (see :func:`added_errors`).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from rulegen.learn.trees.c45_split import (
    SMALL,
    branch_shares,
    class_totals,
    route,
    split_distribution,
)

PRUNE_SLACK = 0.1  # a simpler tree is kept if its estimate is at most this much worse
COLLAPSE_SLACK = 1e-3

# C4.5 R8 reads its normal deviate off this table, interpolating linearly in CF
_R8_CF = (0.0, 0.001, 0.005, 0.01, 0.05, 0.10, 0.20, 0.40, 1.00)
_R8_DEV = (4.0, 3.09, 2.58, 2.33, 1.65, 1.28, 0.84, 0.25, 0.00)
ERROR_ESTIMATES = ("c45", "weka")


def _r8_deviate(cf: float) -> float:
    i = next(k for k, v in enumerate(_R8_CF) if cf <= v)
    i = max(i, 1)
    lo, hi = _R8_CF[i - 1], _R8_CF[i]
    return _R8_DEV[i - 1] + (_R8_DEV[i] - _R8_DEV[i - 1]) * (cf - lo) / (hi - lo)


def added_errors(n: float, e: float, cf: float = 0.25, estimate: str = "c45") -> float:
    """Errors to add to ``e`` observed errors among ``n`` rows for the pessimistic estimate.

    Both programs use the upper limit of the Wilson interval with continuity
    correction, exact for e = 0 (``n * (1 - cf**(1/n))``) and linear between e = 0
    and e = 1. They differ in the normal deviate z and near e = n:

    * ``"c45"`` (C4.5 release 8): z interpolated in R8's table (0.6925 at CF 0.25);
      when e + 0.5 >= n the answer is ``0.67 * (n - e)``.
    * ``"weka"`` (J48): z is the exact quantile (0.6745 at CF 0.25); when
      e + 0.5 >= n the answer is ``n - e``.
    """
    if e < (SMALL if estimate == "c45" else 1e-300):
        return n * (1.0 - math.exp(math.log(cf) / n))
    if e < (0.9999 if estimate == "c45" else 1.0):
        base = n * (1.0 - math.exp(math.log(cf) / n))
        return base + e * (added_errors(n, 1.0, cf, estimate) - base)
    if e + 0.5 >= n:
        return 0.67 * (n - e) if estimate == "c45" else max(n - e, 0.0)
    z = _r8_deviate(cf) if estimate == "c45" else NormalDist().inv_cdf(1.0 - cf)
    z2 = z * z
    upper = (e + 0.5 + z2 / 2.0 + z * math.sqrt((e + 0.5) * (1.0 - (e + 0.5) / n) + z2 / 4.0)) \
        / (n + z2)
    return n * upper - e


class Node:
    """A node of the tree being grown: its training rows (``rows`` may repeat across
    nodes; ``w`` holds each row's fraction here) and, for a split, the test and the
    split's class distribution per branch (missing rows spread by ``shares``)."""

    __slots__ = ("children", "dist", "feature", "mixed", "per_class", "rows", "shares",
                 "threshold", "w")

    def __init__(self, rows, w, per_class):
        self.rows, self.w, self.per_class = rows, w, per_class
        self.feature = -1  # a leaf
        self.threshold = None  # numeric splits: x <= threshold takes branch 0
        self.children: list[int] = []
        self.dist = self.shares = None
        self.mixed = False  # a split: some of its rows miss its feature

    @property
    def is_leaf(self) -> bool:
        return self.feature < 0

    def make_leaf(self):
        self.feature, self.threshold, self.children = -1, None, []
        self.dist = self.shares = None


class C45Tree:
    """Nodes in a list (id = position) plus everything needed to route rows."""

    def __init__(self, X, y, n_classes, nominal, cf, estimate):
        self.X, self.y, self.n_classes, self.nominal = X, y, n_classes, nominal
        self.cf, self.estimate = cf, estimate
        self.nodes: list[Node] = []

    # -- routing ------------------------------------------------------------------

    def n_branches(self, node: Node) -> int:
        return self.nominal[node.feature] if node.threshold is None else 2

    def branch_of(self, node: Node, rows):
        """(values, branch index) of ``rows`` at a split; the index is junk where missing."""
        x = self.X[rows, node.feature]
        if node.threshold is None:
            return x, np.where(np.isnan(x), 0, x).astype(np.intp)
        return x, np.where(x <= node.threshold, 0, 1)

    def set_split(self, node: Node, feature, threshold, rows, w):
        """Make ``node`` a split on its data ``rows``/``w``; returns each branch's data."""
        node.feature, node.threshold = feature, threshold
        x, branch = self.branch_of(node, rows)
        node.dist, node.shares = split_distribution(x, branch, self.y[rows], w,
                                                    self.n_branches(node), self.n_classes)
        node.per_class = node.dist.sum(axis=0)
        node.mixed = bool(np.isnan(x).any())
        return route(x, branch, node.shares, rows, w)

    # -- error estimates ------------------------------------------------------------

    def estimated_errors(self, per_class) -> float:
        total = float(per_class.sum())
        if abs(total) < SMALL:
            return 0.0
        e = total - float(per_class.max())
        return e + added_errors(total, e, self.cf, self.estimate)

    def routed_errors(self, top: int, rows, w) -> float:
        """Estimated errors of the subtree under ``top`` on other data: the rows are routed
        afresh, missing ones by the shares of that data itself (as J48 does)."""
        errors = 0.0
        stack = [(top, rows, w)]
        while stack:
            i, rows, w = stack.pop()
            node = self.nodes[i]
            if node.is_leaf:
                errors += self.estimated_errors(class_totals(self.y[rows], w, self.n_classes))
                continue
            x, branch = self.branch_of(node, rows)
            known = ~np.isnan(x)
            per_bag = np.bincount(branch[known], weights=w[known],
                                  minlength=self.n_branches(node))
            for c, (r, ww) in zip(node.children, route(x, branch, branch_shares(per_bag), rows, w)):
                stack.append((c, r, ww))
        return errors

    def errors_if_raised(self, i: int, big: int) -> float:
        """Estimated errors if branch ``big`` of split ``i`` took all of i's rows.

        The same as ``routed_errors(child, i's rows)``, computed incrementally: i's rows
        are the child's own rows plus "extra" weight (the other branches' rows and the
        rest of each missing row). Where the extra weight cannot change a split's shares
        (it brings no known value there, or nobody there is missing), it is routed alone
        and only the leaves it reaches are re-estimated; elsewhere the split's whole data
        is routed afresh. On a deep chain this is O(depth), not O(size), per split.
        """
        node, top = self.nodes[i], self.nodes[i].children[big]
        x, branch = self.branch_of(node, node.rows)
        miss = np.isnan(x)
        share = float(node.shares[big]) if node.shares[big] > SMALL else 0.0
        other = ~miss & (branch != big)
        rows = np.concatenate([node.rows[other], node.rows[miss]])
        w = np.concatenate([node.w[other], node.w[miss] * (1.0 - share)])
        errors = self.subtree_errors(top)
        stack = [(top, rows[w > 0], w[w > 0])]
        while stack:
            v, rows, w = stack.pop()
            vn = self.nodes[v]
            if rows.size == 0:
                continue
            if vn.is_leaf:
                more = vn.per_class + class_totals(self.y[rows], w, self.n_classes)
                errors += self.estimated_errors(more) - self.estimated_errors(vn.per_class)
                continue
            x, branch = self.branch_of(vn, rows)
            miss = np.isnan(x)
            if w[~miss].sum() > 0 and (vn.mixed or miss.any()):
                errors += (self.routed_errors(v, np.concatenate([vn.rows, rows]),
                                              np.concatenate([vn.w, w]))
                           - self.subtree_errors(v))
                continue
            for c, (r, ww) in zip(vn.children, route(x, branch, vn.shares, rows, w)):
                stack.append((c, r, ww))
        return errors

    def redistribute(self, top: int, rows, w):
        """Give the subtree under ``top`` new training data, recomputing every split's
        distribution and shares and every leaf's class counts."""
        stack = [(top, rows, w)]
        while stack:
            i, rows, w = stack.pop()
            node = self.nodes[i]
            node.rows, node.w = rows, w
            if node.is_leaf:
                node.per_class = class_totals(self.y[rows], w, self.n_classes)
                continue
            parts = self.set_split(node, node.feature, node.threshold, rows, w)
            for c, (r, ww) in zip(node.children, parts):
                stack.append((c, r, ww))

    # -- post-processing ----------------------------------------------------------------

    def _post_order(self, top: int = 0) -> list[int]:
        order, stack = [], [top]
        while stack:
            i = stack.pop()
            order.append(i)
            stack.extend(self.nodes[i].children)
        return order[::-1]  # every node after all its descendants

    def collapse(self):
        """Turn a split into a leaf when its subtree makes no fewer training errors."""
        errs = {}
        for i in self._post_order():
            node = self.nodes[i]
            if node.is_leaf:
                errs[i] = float(node.per_class.sum() - node.per_class.max())
            else:
                errs[i] = sum(errs[c] for c in node.children)
        stack = [0]
        while stack:
            i = stack.pop()
            node = self.nodes[i]
            if node.is_leaf:
                continue
            here = float(node.per_class.sum() - node.per_class.max())
            if errs[i] >= here - COLLAPSE_SLACK:
                node.make_leaf()
            else:
                stack.extend(node.children)

    def prune(self, raising: bool):
        """Bottom-up pessimistic pruning. At each split, after its subtrees: become a leaf
        if that is estimated no worse (within 0.1 errors) than the subtree and than its
        largest branch; otherwise, with ``raising``, replace the split by its largest
        branch when that is no worse, re-route the node's rows through it and prune the
        raised subtree again."""
        self._subtree = {}
        stack = [(0, False)]
        while stack:
            i, ready = stack.pop()
            node = self.nodes[i]
            if node.is_leaf:
                continue
            if not ready:
                stack.append((i, True))
                stack.extend((c, False) for c in node.children)
                continue
            big = largest_branch(node.dist.sum(axis=1))
            as_branch = self.errors_if_raised(i, big) if raising else math.inf
            as_leaf = self.estimated_errors(node.per_class)
            as_tree = sum(self.subtree_errors(c) for c in node.children)
            if (as_leaf - (as_tree + PRUNE_SLACK) < SMALL
                    and as_leaf - (as_branch + PRUNE_SLACK) < SMALL):
                node.make_leaf()
            elif as_branch - (as_tree + PRUNE_SLACK) < SMALL:
                child = self.nodes[node.children[big]]
                node.feature, node.threshold = child.feature, child.threshold
                node.children = child.children
                self.redistribute(i, node.rows, node.w)
                stack.append((i, False))
            else:
                self._subtree[i] = as_tree

    def subtree_errors(self, i: int) -> float:
        """Estimated errors of the (already pruned) subtree under ``i``: its leaves' sum."""
        node = self.nodes[i]
        return self.estimated_errors(node.per_class) if node.is_leaf else self._subtree[i]


def largest_branch(per_bag: np.ndarray) -> int:
    """The branch with the most weight; on ties (within SMALL) the last, as J48 does."""
    best, top = -1, 0.0
    for i, v in enumerate(per_bag):
        if v - top > -SMALL:
            best, top = i, float(v)
    return best
