"""The shared tree builder: grows a tree from a split finder and a leaf summary.

Learners plug in two things:

* a **split finder** with ``find_split(node) -> Partition | None``: it chooses the
  test for a node (any IR test: numeric, categorical, multiway...), says where
  missing values go, and hands back one :class:`NodeWork` per child;
* a **summary** function ``summarize(node) -> (value, samples, distribution[, impurity])``
  giving the leaf value and the support (and impurity) recorded on every node.

The builder owns the growth order and the stopping rules shared by CART-like
learners (scikit-learn's semantics). Growth is a loop over an explicit stack
(depth first) or heap (best first, when ``max_leaf_nodes`` is set); nothing
recurses, so tree depth is limited only by memory. Node ids follow creation
order -- pre-order for depth first, expansion order for best first, exactly as
scikit-learn numbers its nodes -- so every child id exceeds its parent's.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from rulegen.ir.nodes import DefaultChild, Leaf, Missing, NumericTest, Split, Test, Tree
from rulegen.learn.splits.presorted import (  # (learners import these from here too)
    missing_rows,
    partition_presorted,
    presort,
    presorted_subset,
    split_presorted,
    unpartition_presorted,
)

EPSILON = float(np.finfo(np.float64).eps)  # sklearn's tolerance for "pure" and "no gain"
FEATURE_THRESHOLD = np.float32(1e-7)  # sklearn's tie tolerance, added in float32
_BLOCK = 1 << 22  # elements per (features x rows) work array


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
        self.node_values: list[tuple[float, ...]] = []  # per node id, after build()

    def _search(self, node: NodeWork) -> Partition | None:
        lim = self.limits
        n = len(node.rows)
        if ((lim.max_depth is not None and node.depth >= lim.max_depth)
                or n < lim.min_samples_split
                or n < 2 * lim.min_samples_leaf
                # (weights are >= 0: with no minimum the sum need not be taken)
                or (lim.min_weight_leaf > 0
                    and float(node.weights.sum()) < 2 * lim.min_weight_leaf)
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
        # the IR keeps no value on a split (a regression mean, say); post-pruning
        # needs one to turn a split into a leaf, so the builder hands them out here
        self.node_values = [r.summary[0] for r in records]
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
        heap: list[tuple] = []
        leaves = 1
        # LightGBM's order among equal gains: the lower split feature, then the lower leaf
        # index (a split's left child keeps its leaf's index, the right one takes the next)
        lgb_ties = getattr(self.finder, "lightgbm_ties", False)
        leaf_index = {}

        def push(nid):
            part = records[nid].partition
            if part is not None:
                # ties: the earlier node first (sklearn's heap order is unspecified)
                key = (part.test.feature, leaf_index[nid]) if lgb_ties else ()
                heapq.heappush(heap, (-part.improvement, *key, nid))

        prefetch = getattr(self.finder, "prefetch", None)
        first = self._open(records, root, None, 0)
        leaf_index[first] = 0
        push(first)
        while heap:
            nid = heapq.heappop(heap)[-1]
            rec = records[nid]
            children = rec.partition.children
            if leaves + len(children) - 1 > max_leaves:
                rec.partition, rec.children = None, []
                continue
            leaves += len(children) - 1
            if prefetch is not None:
                # a finder that searches several nodes at once more cheaply than one by one
                # learns which splits may follow this one: the leaves waiting in the heap
                # and how many more splits the leaf budget allows
                prefetch(rec.partition, lambda: [records[e[-1]].partition for e in heap],
                         max_leaves - leaves + 1, self.limits.max_depth)
            rec.partition.children = []
            for i, child in enumerate(children):
                cid = self._open(records, child, nid, i)
                leaf_index[cid] = leaf_index[nid] if i == 0 else leaves - len(children) + i
                push(cid)

    @staticmethod
    def _to_ir(rec: _Record):
        value, samples, distribution, *rest = rec.summary
        impurity = float(rest[0]) if rest else None
        part = rec.partition
        if part is None:
            return Leaf(value=value, samples=samples, distribution=distribution, impurity=impurity)
        return Split(test=part.test, children=tuple(rec.children), missing=part.missing,
                     unseen=part.unseen, samples=samples, distribution=distribution,
                     impurity=impurity)


# --- the numeric binary split finder ---------------------------------------------


def _f32_digits(v, legacy=True) -> int:
    """Significant digits of the shortest decimal that reads back as float32 ``v``.
    ``legacy=False`` (numpy's print options have no old mode set) reads them from str(),
    numpy's Dragon4 as format_float_scientific but ~10x cheaper: forests make a test per
    split. An old print mode changes str(), not the scientific form."""
    if math.isinf(v) or math.isnan(v):
        return 0
    if legacy:
        text = np.format_float_scientific(v, unique=True)
    else:
        text = str(v)
    digits = text.split("e")[0].lstrip("-").replace(".", "").strip("0")
    return len(digits) or 1  # (zero: one digit, "0.e+00")


_F32_MAX = float(np.finfo(np.float32).max)


def float32_test(feature: int, threshold: float) -> NumericTest:
    """The IR test for sklearn's ``float32(x) <= threshold`` (threshold float64).

    Compared in float32, the test is exact for every float64 input: with lo/hi the
    float32 values just below/above ``threshold``, ``float32(x) <= threshold`` iff
    ``float32(x) <= lo`` iff ``float32(x) < hi``. Of the two we keep the one with
    fewer significant digits (a midpoint of 1.9 and 3.0 reads "< 2.45" rather than
    "<= 2.4499998"), "<=" on ties. A float64 bound would also be exact (see
    codegen.lower.float64_bound) but could never print as the short decimal.
    """
    if math.isinf(threshold):
        return NumericTest(feature, "<=", float(threshold), "float32")
    if abs(threshold) >= _F32_MAX:
        with np.errstate(over="ignore"):  # at FLT_MAX the next value up is infinity
            t = np.float32(threshold)
    else:  # (np.errstate costs more than the rest of this function)
        t = np.float32(threshold)
    if float(t) == threshold:
        return NumericTest(feature, "<=", float(threshold), "float32")
    lo = t if float(t) < threshold else np.nextafter(t, np.float32(-np.inf))
    if float(lo) == _F32_MAX:
        with np.errstate(over="ignore"):
            hi = np.nextafter(lo, np.float32(np.inf))
    else:
        hi = np.nextafter(lo, np.float32(np.inf))
    legacy = np.get_printoptions()["legacy"] is not False
    if _f32_digits(hi, legacy) < _f32_digits(lo, legacy):
        return NumericTest(feature, "<", float(hi), "float32")
    return NumericTest(feature, "<=", float(lo), "float32")


class NumericSplitFinder:
    """CART's binary numeric splits (scikit-learn semantics, see learn/cart.py),
    for any criterion of learn/criteria.py; forests and boosting can reuse it.

    ``state`` of a node is ``(presorted, stats)``: its rows sorted by every
    feature (best splitter; shape (n_features, n) of global ids, int32 as from
    :func:`presort`, missing last),
    which children get by a stable filter -- so a node costs O(n_features * n)
    plus the criterion, never a sort -- and its criterion stats. Rows within a
    node must be distinct: give bootstrap multiplicities as weights.

    ``in_place``: the presorted orders given to :meth:`root` are the finder's to reorder,
    and a split divides its node's orders in place (:func:`partition_presorted`): the
    children's are views of the root's array, so a tree needs no memory for orders beyond
    that one array, and :meth:`restore` puts them back (a bit per feature and row of each
    split node is kept for that). ``leaf_depth``: the depth at which nodes are never split (the growth
    limit's ``max_depth``), whose orders are then not made. ``missing``: what
    :func:`missing_rows` gives for this X, when the caller has it already.
    """

    # elements per (features x rows) work array of the search: a block's criterion
    # temporaries (a dozen float64 arrays) stay at a few MB even at the root of a big set
    _block = 1 << 18

    def __init__(self, X32, T, w, criterion, *, splitter="best", max_features=None,
                 min_samples_leaf=1, min_weight_leaf=0.0, rng=None, in_place=False,
                 leaf_depth=None, missing=None):
        self.in_place, self.leaf_depth = in_place, leaf_depth
        self._undo = []  # in place: the partitions made, for restore()
        self.XT = np.ascontiguousarray(np.asarray(X32, dtype=np.float32).T)
        # which rows miss which feature, kept for the features with a missing value only
        self.nan_features, self.isnan = missing_rows(self.XT) if missing is None else missing
        self.T, self.w, self.criterion = T, np.asarray(w, dtype=np.float64), criterion
        self.splitter = splitter
        n_features = self.XT.shape[0]
        self.max_features = n_features if max_features is None else min(max_features, n_features)
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_leaf = min_weight_leaf
        self.rng = rng if rng is not None else np.random.default_rng()
        self.total_weight = float(self.w.sum())
        self._mask = np.zeros(self.XT.shape[1], dtype=bool)

    # -- nodes -----------------------------------------------------------------

    def root(self, rows, order=None) -> NodeWork:
        """The root's work item; ``rows`` ascending. With ``order`` from :func:`presort`
        the result is the same as without: a stable sort of a subset keeps the subset's
        order in the stable sort of the whole."""
        rows = np.asarray(rows, dtype=np.intp)
        state = None
        if self.splitter == "best":
            if order is None:
                ids = rows.astype(np.int32) if self.XT.shape[1] < 2**31 else rows
                state = ids[presort(self.XT[:, rows].T)]
            else:
                state = presorted_subset(order, self._mask, rows)
        stats = self.criterion.stats(self.T, self.w, rows)
        # (the builder only reads the weights: all of them need no copy)
        weights = self.w if len(rows) == len(self.w) else self.w[rows]
        return NodeWork(rows, weights, stats.impurity, 0, (state, stats))

    def restore(self) -> None:
        """In place: put the presorted orders given to :meth:`root` back as they were (the
        splits' partitions undone, last first), so that the next tree can start from them."""
        while self._undo:
            S, n_left, undo = self._undo.pop()
            unpartition_presorted(S, n_left, undo, self._block)

    @staticmethod
    def summarize(node: NodeWork):
        stats = node.state[1]  # computed when the node was created
        return stats.value, stats.weight, stats.distribution, stats.impurity

    def _missing_counts(self, rows) -> np.ndarray:
        nm = np.zeros(self.XT.shape[0], dtype=np.intp)
        if self.nan_features.size:
            nm[self.nan_features] = self.isnan[:, rows].sum(axis=1)
        return nm

    def _visit(self, lo, hi, nm, n) -> np.ndarray:
        """Features to evaluate, in visiting order: sklearn draws features without
        replacement until it has drawn max_features *and* one non-constant one;
        constant ones are drawn (and counted) but not evaluated."""
        # (NaN comparisons are simply false in numpy; no warnings to silence)
        const = (nm == n) | ((nm == 0) & (hi <= lo + FEATURE_THRESHOLD))
        perm = self.rng.permutation(len(const))
        cp = const[perm]
        found = np.flatnonzero(~cp)
        if found.size == 0:
            return found
        stop = max(self.max_features, int(found[0]) + 1)
        return perm[:stop][~cp[:stop]]

    def candidates(self, node: NodeWork):
        """(missing count, present min, present max) of every feature at the node, and the
        features to evaluate in visiting order (see ``_visit``)."""
        rows = node.rows
        n = len(rows)
        nm = self._missing_counts(rows)
        if self.splitter == "best":
            S = node.state[0]
            last = np.maximum(n - nm - 1, 0)
            idx = np.arange(len(nm))
            lo, hi = self.XT[idx, S[:, 0]], self.XT[idx, S[idx, last]]
        else:
            lo = np.fmin.reduce(self.XT[:, rows], axis=1)
            hi = np.fmax.reduce(self.XT[:, rows], axis=1)
        return nm, lo, hi, self._visit(lo, hi, nm, n)

    def best_numeric(self, node: NodeWork, feats, nm, lo, hi):
        """The best split of ``feats`` as (proxy, feature, threshold, missing_left), or None;
        the earliest feature wins ties."""
        n = len(node.rows)
        step = max(1, self._block // n)
        if self.splitter == "best":
            blocks = [(feats[i:i + step], None) for i in range(0, len(feats), step)]
        else:
            # thresholds are drawn per block of _BLOCK elements as they always were (the
            # random stream must not depend on the work-array size), then searched by step
            draw = max(1, _BLOCK // n)
            blocks = []
            for i in range(0, len(feats), draw):
                F = feats[i:i + draw]
                thr, dirs = self._random_draw(F, nm, lo, hi)
                blocks += [(F[j:j + step], (thr[j:j + step], dirs[j:j + step]))
                           for j in range(0, len(F), step)]
        best = None
        for F, drawn in blocks:
            if drawn is None:
                found = self._best_block(node, F, nm, lo, hi)
            else:
                found = self._random_block(node, F, nm, *drawn)
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        return best

    def find_split(self, node: NodeWork) -> Partition | None:
        nm, lo, hi, feats = self.candidates(node)
        best = self.best_numeric(node, feats, nm, lo, hi)
        if best is None:
            return None
        _, feature, threshold, missing_left = best
        return self._partition(node, feature, threshold, missing_left)

    # -- candidate search --------------------------------------------------------

    def _leaf_ok(self, n, n_left, wl, wr):
        msl, mwl = self.min_samples_leaf, self.min_weight_leaf
        return (n_left >= msl) & (n - n_left >= msl) & (wl >= mwl) & (wr >= mwl)

    def _two_pass(self, S, boundary, nm, nn):
        """Best prefix of each row of S (rows sorted by value, missing last): pass 1 sends
        missing rows right (``i == nn``: every present row left), pass 2 sends them left.
        ``boundary[:, i-1]``: a split between sorted positions i-1 and i is allowed.
        Returns the best proxy, its position and whether pass 2 won, per row of S."""
        n = S.shape[1]
        wl, wr, p1 = self.criterion.prefix_proxy(self.T, self.w, S)
        # position i - 1 is the split "i rows left": (boundary or every present row left
        # with some missing) and _leaf_ok, made without (q, n) index temporaries
        valid = boundary.copy()
        some = np.flatnonzero((nm > 0) & (nn >= 1))
        valid[some, nn[some] - 1] = True
        msl, mwl = self.min_samples_leaf, self.min_weight_leaf
        valid[:, :max(msl - 1, 0)] = False
        valid[:, max(n - msl, 0):] = False
        valid &= wl >= mwl  # (bools: n bytes a row, not 8)
        valid &= wr >= mwl
        del wl, wr  # (q, n) float64 each: free before pass 2 makes its own
        np.putmask(p1, np.logical_not(valid, out=valid), -np.inf)
        del valid
        pos = p1.argmax(axis=1)
        val = p1[np.arange(len(S)), pos]
        left_pass = np.zeros(len(S), dtype=bool)
        miss = np.flatnonzero(nm > 0)
        if miss.size:
            # the same sequence rotated so missing rows come first (go left)
            rot = np.arange(n)[None, :] + nn[miss, None]
            rot[rot >= n] -= n
            S2 = np.take_along_axis(S[miss], rot, axis=1)
            wl2, wr2, p2 = self.criterion.prefix_proxy(self.T, self.w, S2)
            del S2
            # position i - 1 is "i rows left", j = i - nm of them present: valid where
            # 1 <= j (j <= nn - 1 always holds) and boundary[j - 1], i.e. boundary shifted
            # right by nm: rotated by the same index, its first nm positions cleared
            shifted = np.zeros((len(miss), n), dtype=bool)
            shifted[:, :n - 1] = boundary[miss]
            valid2 = np.take_along_axis(shifted, rot, axis=1)[:, :n - 1]
            del shifted, rot
            valid2[np.arange(n - 1)[None, :] < nm[miss, None]] = False
            valid2[:, :max(msl - 1, 0)] = False
            valid2[:, max(n - msl, 0):] = False
            valid2 &= wl2 >= mwl
            valid2 &= wr2 >= mwl
            del wl2, wr2
            np.putmask(p2, np.logical_not(valid2, out=valid2), -np.inf)
            pos2 = p2.argmax(axis=1)
            val2 = p2[np.arange(miss.size), pos2]
            better = val2 > val[miss]  # pass 1 comes first in sklearn: strict
            sel = miss[better]
            val[sel], pos[sel], left_pass[sel] = val2[better], pos2[better], True
        return val, pos, left_pass

    def _best_block(self, node, F, nm_all, lo, hi):
        S = node.state[0][F].astype(np.intp)  # gathers by int32 ids are ~2x slower
        n = S.shape[1]
        V = self.XT[F[:, None], S]
        nm = nm_all[F]
        nn = n - nm
        boundary = V[:, 1:] > V[:, :-1] + FEATURE_THRESHOLD  # float32, as sklearn
        val, pos, left_pass = self._two_pass(S, boundary, nm, nn)
        r = int(val.argmax())  # first maximum = earliest in visiting order
        if val[r] == -np.inf:
            return None
        n_left, f_nm, f_nn = int(pos[r]) + 1, int(nm[r]), int(nn[r])
        if left_pass[r]:
            k = n_left - f_nm
            threshold = float(V[r, k - 1]) / 2.0 + float(V[r, k]) / 2.0
            missing_left = True
        elif n_left == f_nn:
            threshold, missing_left = math.inf, False  # NaN <= inf is false
        else:
            threshold = float(V[r, n_left - 1]) / 2.0 + float(V[r, n_left]) / 2.0
            missing_left = False
        if f_nm == 0:
            missing_left = n_left > n - n_left
        return float(val[r]), int(F[r]), threshold, missing_left

    def _random_draw(self, F, nm_all, lo, hi):
        """Each feature's random threshold and missing direction."""
        q = len(F)
        lo64, hi64 = lo[F].astype(np.float64), hi[F].astype(np.float64)
        thr = lo64 + (hi64 - lo64) * self.rng.random(q)
        thr = np.where(thr == hi64, lo64, thr)  # as sklearn: never split above the max
        draw = self.rng.integers(0, 2, q).astype(bool)
        return thr, np.where(nm_all[F] > 0, draw, False)

    def _random_block(self, node, F, nm_all, thr, dirs):
        rows = node.rows
        n, q = len(rows), len(F)
        nm = nm_all[F]
        X = self.XT[F[:, None], rows].astype(np.float64)
        left = np.where(np.isnan(X), dirs[:, None], X <= thr[:, None])
        n_left = left.sum(axis=1)
        seqs = rows[np.argsort(~left, axis=1, kind="stable")]
        wl, wr, proxy = self.criterion.prefix_proxy(self.T, self.w, seqs)
        col = np.clip(n_left - 1, 0, n - 2)
        r_idx = np.arange(q)
        ok = self._leaf_ok(n, n_left, wl[r_idx, col], wr[r_idx, col]) & (n_left > 0) & (n_left < n)
        val = np.where(ok, proxy[r_idx, col], -np.inf)
        r = int(val.argmax())
        if val[r] == -np.inf:
            return None
        missing_left = bool(dirs[r]) if nm[r] > 0 else bool(n_left[r] > n - n_left[r])
        return float(val[r]), int(F[r]), float(thr[r]), missing_left

    # -- applying the chosen split ----------------------------------------------------

    def _partition(self, node, feature, threshold, missing_left) -> Partition:
        rows = node.rows
        x = self.XT[feature, rows].astype(np.float64)
        left = np.where(np.isnan(x), missing_left, x <= threshold)
        children, improvement = self._split_rows(node, left)
        return Partition(float32_test(feature, threshold), DefaultChild(0 if missing_left else 1),
                         children, improvement)

    def _split_rows(self, node, left: np.ndarray) -> tuple[list, float]:
        """The two children's work items for a row mask (True = left), with the presorted
        orders filtered rather than re-sorted, and the split's weighted impurity decrease."""
        rows = node.rows
        rows_l, rows_r = rows[left], rows[~left]
        S = node.state[0]
        sorted_l = sorted_r = None
        if S is not None and (self.leaf_depth is None or node.depth + 1 < self.leaf_depth):
            if self.in_place:
                n_left = len(rows_l)
                self._mask[rows_l] = True
                undo = partition_presorted(S, self._mask, n_left, self._block)
                self._mask[rows_l] = False
                self._undo.append((S, n_left, undo))
                sorted_l, sorted_r = S[:, :n_left], S[:, n_left:]
            else:
                sorted_l, sorted_r = split_presorted(S, self._mask, rows_l, len(rows_r))
        w = self.w
        st_l, st_r = self.criterion.children_stats(self.T, w, rows_l, rows_r)
        w_node = node.state[1].weight
        w_l = st_l.weight
        w_r = w_node - w_l
        improvement = (w_node / self.total_weight) * (
            node.impurity - (w_r / w_node * st_r.impurity) - (w_l / w_node * st_l.impurity))
        children = [NodeWork(rows_l, w[rows_l], st_l.impurity, state=(sorted_l, st_l)),
                    NodeWork(rows_r, w[rows_r], st_r.impurity, state=(sorted_r, st_r))]
        return children, improvement
