"""Histogram split finding (LightGBM's algorithm) on binned features
(:mod:`rulegen.learn.splits.binning`).

A node's **histogram** holds, for every feature and bin, the sums of the gradient, the hessian
and the row count of the node's rows in that bin, every feature's bins packed end to end
(:class:`~rulegen.learn.splits.binning.Layout`), built by ``np.bincount`` over the binned rows
(:func:`~rulegen.learn.splits.binning.build_histograms`) or, with numba, by compiled loops that
give the same sums (:mod:`rulegen.learn.compiled.kernels`). The two children of a split
together hold exactly the parent's rows, so only the **smaller** child's histogram is built
from its rows; the larger one's is the parent's minus it (:class:`HistogramSplitFinder` does
this when the first of the two children is searched).

Nodes are searched in batches (the two siblings of a split at least; more when the builder
says which splits it will likely take next, :meth:`HistogramSplitFinder.prefetch`): their
histograms come from one bincount when small, and the scans of
:mod:`rulegen.learn.splits.histogram_scan` (gains, ties, LightGBM's rules) cover every node and
feature of the batch at once. A node's best split depends on its rows alone, so batching and
prefetching change the work, never the tree.

What LightGBM's arithmetic needs, and this does: the root's sums add every row in row order;
a child's sums and leaf output are the ones LightGBM's split computes from its scan (the
left side's, kEpsilon included, the right side's by subtraction); the smaller child (by rows,
the right one on a tie) gets its histogram built, the larger one's is the parent's minus it,
rounding residue and all; a feature whose most frequent bin (LightGBM's ``most_freq_bin``) is
not bin 0 gets that bin's sums as the node's less its other bins (LightGBM's FixHistogram).
Row counts stay exact here; the scans see LightGBM's estimates from hessians where it uses
them. NaN at a split goes the learned way for a feature with a NaN bin, where 0 goes for one
without (LightGBM reads NaN as 0 there).

The best split of a node is the highest gain over its features (LightGBM's: less the
parent's term and ``min_split_gain``), ties to the lowest feature index. As in LightGBM, a
feature with no split gaining more than that at a node is not searched again below it.
"""

from __future__ import annotations

import heapq

import numpy as np

from rulegen.ir.nodes import CategoricalTest, DefaultChild, Leaf, NumericTest
from rulegen.learn.compiled import kernels
from rulegen.learn.splits.binning import ZERO, Layout, build_histograms, concatenated
from rulegen.learn.splits.builder import NodeWork, Partition
from rulegen.learn.splits.histogram_scan import EPS, SplitParams
from rulegen.learn.splits.histogram_search import BatchSearch

__all__ = ["HistogramSplitFinder", "SplitParams"]

GUESS_LIMIT = 1 << 14  # rows x features above which a node's split is never searched ahead
GUESS_LIMIT_COMPILED = 1 << 18  # the same with the compiled kernels: a wrong guess costs less
GUESS_DECAY = 1.0  # a child's gain, guessed before it is searched, as a share of its parent's


_UNSEARCHED = object()


class _State:
    """A node's rows and sums, its histogram once built, the family it shares with its
    sibling (the parent's histogram, kept until the first of the two is searched), its best
    split once searched and its leaf value."""

    __slots__ = ("G", "H", "W", "depth", "family", "found", "hist", "l2", "out", "rows",
                 "usable", "value")

    def __init__(self, rows, G, H, W, family=None, usable=None, l2=0.0, depth=0, out=None):
        self.rows, self.G, self.H, self.W, self.depth = rows, G, H, W, depth
        self.hist, self.family, self.value = None, family, None
        self.out = out  # LightGBM's leaf output, when its split computed it
        self.found = _UNSEARCHED
        self.usable = usable  # local features still worth searching (None: all)
        self.l2 = l2  # the lambda of its leaf value (categorical splits add cat_l2)


class _Family:
    __slots__ = ("hist", "kids")

    def __init__(self, hist):
        self.hist, self.kids = hist, []


class _Split:
    """A node's best split: local feature ``i`` (``f`` in X), its goes-left ``table`` over
    the feature's bins (missing last), ``cut`` (numeric: bins <= cut go left) or the set
    ``how`` (categorical). Its rows are divided and its IR test made only when needed
    (leaf-wise growth leaves most of the last frontier's best splits untaken)."""

    __slots__ = ("cut", "f", "finder", "gain", "has_missing", "how", "i", "kids", "l2", "left",
                 "part", "st", "table", "usable")

    def __init__(self, finder, st, gain, i, f, table, how, usable, l2, has_missing, left=None):
        self.finder, self.st, self.gain, self.i, self.f = finder, st, gain, i, f
        self.table, self.how, self.usable, self.l2 = table, how, usable, l2
        self.has_missing = has_missing  # the node has rows missing this feature
        self.left = left  # numeric: LightGBM's left sums (g, h with kEpsilon) from its scan
        self.cut = None if isinstance(how, np.ndarray) else how
        self.kids = self.part = None

    def partition(self) -> Partition:
        """The builder's view of the split (made once)."""
        if self.part is None:
            finder, f, table = self.finder, self.f, self.table
            if self.cut is None:
                test = CategoricalTest(f, tuple(int(c) for c in self.how))
            else:
                last = self.cut == len(table) - 2  # every value left, missing right
                test = finder.cut_test(f, -1 if last else self.cut)
            finder.routes[id(test)] = (test, f, table)
            self.part = Partition(test, DefaultChild(0 if table[-1] else 1),
                                  [_Child(self, 0), _Child(self, 1)], self.gain)
        return self.part

    def children(self):
        if self.kids is None:
            st, finder, table = self.st, self.finder, self.table
            sl = finder.layout.slots(self.i)
            if kernels.enabled():
                rows, n_left, GL, HL = kernels.divide(finder.bins.codes, self.f, st.rows,
                                                      table, st.hist, sl.start)
                left_rows, right_rows = rows[:n_left], rows[n_left:]
            else:
                c = np.take(finder.bins.codes[self.f], st.rows)
                if self.cut is None:
                    left = table[c]
                else:  # numeric: comparisons are cheaper than a lookup
                    left = c <= self.cut
                    if table[-1] and self.has_missing:
                        left |= c == len(table) - 1
                # np.compress, not rows[left]: several times faster on unpredictable masks
                left_rows, right_rows = np.compress(left, st.rows), np.compress(~left, st.rows)
                GL, HL = _left_sums(st.hist[:2, sl], table)
            fam = _Family(st.hist)
            st.hist = None
            d = st.depth + 1
            if self.left is None:
                sums = ((GL, HL, None), (st.G - GL, st.H - HL, None))
            else:
                # as LightGBM's SplitInfo: the children's sums and leaf outputs from the
                # scan's left side (its hessian holds kEpsilon), the right side by subtraction
                LG, LH = self.left
                lam, G, H = self.l2, st.G, st.H + 2 * EPS  # (the hessian the scan saw)
                sums = ((LG, LH - EPS, -LG / (LH + lam)),
                        (G - LG, H - LH - EPS, -(G - LG) / ((H - LH) + lam)))
            self.kids = tuple(finder.state(r, fam, self.usable, self.l2, g, h, d, out)
                              for r, (g, h, out) in zip((left_rows, right_rows), sums))
        return self.kids


def _left_sums(gh, table) -> tuple[float, float]:
    """The g and h sums of a split's left side from the split feature's histogram ``gh``
    (2, bins): its bins added in bin order from 0.0 -- for a numeric split exactly the sums
    its scan found (bins <= cut, then the missing bin)."""
    acc = np.zeros((2, int(table.sum()) + 1))
    acc[:, 1:] = gh[:, table]
    GL, HL = np.cumsum(acc, axis=1)[:, -1].tolist()
    return GL, HL


class _Child(NodeWork):
    """The builder's view of one child of a :class:`_Split`: the NodeWork fields ``rows``,
    ``weights`` and ``state`` are computed on first use (NodeWork's __init__ is not called)."""

    def __init__(self, split: _Split, side: int):
        self.impurity, self.depth = np.inf, 0
        self._split, self._side, self._state = split, side, None

    @property
    def state(self):
        if self._state is None:
            self._state = self._split.children()[self._side]
        return self._state

    @property
    def rows(self):
        return self.state.rows

    @property
    def weights(self):
        finder, rows = self._split.finder, self.state.rows
        return np.broadcast_to(1.0, rows.shape) if finder.unit_weights else finder.w[rows]


class HistogramSplitFinder:
    """A :class:`~rulegen.learn.splits.builder.TreeBuilder` split finder over binned features.

    ``bins``: :class:`~rulegen.learn.splits.binning.Bins`; ``feats``: the sorted features this tree
    may use; ``g``, ``h``, ``w`` per training row (g and h already weighted); leaves hold
    ``scale * -G/(H+lambda)`` (scale: the learning rate).

    Two siblings are searched together, when the first of them is asked for: their
    histograms come from one build and one subtraction, and every scan covers both nodes'
    features in one set of array operations (the per-node cost on small data is numpy's call
    overhead, not arithmetic)."""

    lightgbm_ties = True  # the builder breaks equal gains between leaves as LightGBM

    def __init__(self, bins, feats, g, h, w, params: SplitParams, scale: float = 1.0,
                 fit_cache: dict | None = None):
        self.bins, self.feats = bins, np.asarray(feats, dtype=np.intp)
        self.fit_cache = fit_cache
        self.g, self.h, self.w, self.p, self.scale = g, h, w, params, float(scale)
        self.is_cat = bins.is_categorical[self.feats]
        self.n_bins = bins.n_bins[self.feats]
        # the trees of a fit that use every feature share one layout
        shared = fit_cache is not None and len(self.feats) == len(bins.n_bins)
        self.layout = fit_cache.get("layout") if shared else None
        if self.layout is None:
            self.layout = Layout(self.n_bins, self.is_cat)
            if shared:
                fit_cache["layout"] = self.layout
        # 0: no NaN bin; 1: a NaN bin; 2: and LightGBM's histograms leave bin 0 out
        self.has_nan = bins.has_missing[self.feats].astype(np.int8)
        most_freq = bins.most_freq[self.feats] if bins.most_freq is not None else None
        if most_freq is not None:
            self.has_nan += (self.has_nan > 0) & (most_freq == 0)
        # LightGBM's FixHistogram: these local features' most frequent bin (> 0) holds the
        # node's sums less the feature's other bins
        self.fixed = [] if most_freq is None else [
            (i, int(most_freq[i])) for i in np.flatnonzero(most_freq > 0).tolist()]
        # squared error: h is constant, so its histogram is the count's multiple (with
        # h = 1 exactly the count), and unit weights make a node's weight its row count
        self.h_const = float(h[0]) if len(h) and np.all(h == h[0]) else None
        self.unit_weights = bool(np.all(w == 1.0))
        self.search = BatchSearch(self.layout, params, self.n_bins, self.is_cat, self.has_nan,
                                  self.h_const)
        self.routes = {}  # id(test) -> (test, feature, goes-left table over its bins)
        self.summarized = []  # every node's state, in the order the builder opened them
        self.states = []  # every state made (prefetching makes some the tree never opens)
        self.root_rows = None
        self._plan = None  # see prefetch
        self.histograms_built = 0  # rows x features of every histogram built directly

    def cut_test(self, f, cut) -> NumericTest:
        """The IR test "bins <= cut go left" of feature f (cut -1: every value), a new
        object every time (``routes`` tells splits apart by their test's identity): LightGBM's
        ``x <= bound`` in double, bound the upper bound of bin ``cut``. LightGBM reads
        ``|x| <= ZERO`` as 0, which only the bound -ZERO tells from x: there the test is
        ``x < -ZERO``."""
        t = np.inf if cut < 0 else float(self.bins.edges[f][cut])
        if t == -ZERO:
            return NumericTest(f, "<", t, "float64")
        return NumericTest(f, "<=", t, "float64")

    # -- nodes --------------------------------------------------------------------

    def state(self, rows, family=None, usable=None, l2=None, G=None, H=None,
              depth=0, out=None) -> _State:
        m = len(rows)
        if H is None:  # the root: LightGBM adds every row's g and h in row order
            H = float(np.cumsum(self.h[rows])[-1]) if m else 0.0
        if G is None:
            G = float(np.cumsum(self.g[rows])[-1]) if m else 0.0
        W = float(m) if self.unit_weights else float(self.w[rows].sum())
        st = _State(rows, G, H, W, family, usable, self.p.reg_lambda if l2 is None else l2,
                    depth, out)
        if family is not None:
            family.kids.append(st)
        self.states.append(st)
        return st

    def release(self) -> None:
        """Drop every node's histogram, family and split once the tree is done: siblings
        and their family, a split and its children refer to one another, so without this
        the histograms and row lists would wait for the cycle collector and pile up over
        the rounds (tens of MB on small data, hundreds on big)."""
        for st in self.states:
            split = st.found
            if split is not None and split is not _UNSEARCHED:
                # a split, its Partition and the Partition's children refer to one another
                if split.part is not None:
                    split.part.children = []
                split.part = split.kids = split.st = None
            st.hist = st.family = st.found = None
        self.states = []

    def root(self, rows) -> NodeWork:
        rows = np.asarray(rows, dtype=np.intp)
        self.root_rows = rows
        return NodeWork(rows, self.w[rows], state=self.state(rows))

    def summarize(self, node: NodeWork):
        st = node.state
        D = st.H + st.l2
        if st.family is None:
            st.value = 0.0  # LightGBM: a tree that never splits outputs 0
        elif st.out is not None:
            st.value = self.scale * st.out  # LightGBM's output times the learning rate
        else:
            st.value = self.scale * (-st.G / D if D > 0 else 0.0)  # newton.leaf_weight
        self.summarized.append(st)
        return (st.value,), st.W, None

    def histogram(self, st: _State) -> np.ndarray:
        """The node's histogram: built from its rows, or (the larger of two siblings) the
        parent's minus the smaller sibling's -- both siblings' at once, when the node is
        searched (which this does if it is not yet)."""
        self._search_node(st)
        return st.hist

    def _search_node(self, st: _State) -> None:
        if st.found is _UNSEARCHED:
            if st.family is None:  # the root
                st.hist = self._root_histogram(st.rows)
                self._fix(st.hist[:, None], [st])
                self._search([st], st.hist[:, None])
            else:
                self._search(*self._family_histograms([st.family]))

    def _family_histograms(self, fams) -> tuple[list, np.ndarray]:
        """The histograms of the two children of each family, built as one batch: the
        smaller children's from their rows, the larger's by subtraction. Returns the nodes
        (the smaller children, then the larger in the same order) and their histograms
        (3, nodes, layout.size); each node's ``hist`` is a view of it."""
        # as LightGBM: the left child is the smaller only with strictly fewer rows
        pairs = [(a, b) if len(a.rows) < len(b.rows) else (b, a) for a, b in
                 (fam.kids for fam in fams)]
        nodes = [s for s, _ in pairs] + [lg for _, lg in pairs]
        P = len(pairs)
        hist = np.empty((3, 2 * P, self.layout.size))
        parents = np.empty((3, P, self.layout.size))
        for n, fam in enumerate(fams):  # (cheaper than np.stack for a few)
            parents[:, n] = fam.hist
        for fam in fams:
            fam.hist = None
        if kernels.enabled():
            rows, starts = concatenated([s.rows for s in nodes[:P]])
            self.histograms_built += len(rows) * len(self.feats)
            hc = self.h_const
            kernels.family_histograms(self.bins.codes, self.feats, self.layout.off, rows,
                                      starts, self.g, self.g if hc is not None else self.h,
                                      hc is None, hc or 0.0, hc is not None, parents, hist)
            if self.fixed:  # the smaller ones' fixed bins, and the larger ones' from them
                self._fix(hist[:, :P], nodes[:P])
                for i, b in self.fixed:
                    j = self.layout.off[i] + b
                    np.subtract(parents[:2, :, j], hist[:2, :P, j], out=hist[:2, P:, j])
        else:
            hist[:, :P] = self._build([s.rows for s in nodes[:P]])
            self._fix(hist[:, :P], nodes[:P])
            np.subtract(parents, hist[:, :P], out=hist[:, P:])
        for s, st in enumerate(nodes):
            st.hist = hist[:, s]
        return nodes, hist

    def _fix(self, hist, nodes) -> None:
        """LightGBM's FixHistogram on ``hist`` (3, len(nodes), size), in place: a feature's
        most frequent bin (when not bin 0) gets the node's g and h sums less the feature's
        other bins, subtracted in bin order (the missing bin last)."""
        if not self.fixed:
            return
        P = len(nodes)
        tot = np.array([[s.G for s in nodes], [s.H for s in nodes]])
        for i, b in self.fixed:
            sl = self.layout.slots(i)
            seq = np.empty((2, P, sl.stop - sl.start))
            seq[:, :, 0] = tot
            np.negative(np.delete(hist[:2, :, sl], b, axis=2), out=seq[:, :, 1:])
            hist[:2, :, sl.start + b] = np.cumsum(seq, axis=2)[:, :, -1]

    def _root_histogram(self, rows) -> np.ndarray:
        """The root's histogram. Its row counts are the same every round when the root
        holds every row and the tree every feature: they are counted once per fit (in
        ``fit_cache``), a pass over all rows and features saved in every later round."""
        cache = self.fit_cache
        every = len(rows) == self.bins.codes.shape[1] and len(self.feats) == len(self.bins.n_bins)
        counts = cache.get("counts") if every and cache is not None else None
        hist = self._build([rows], counts=None if counts is None else counts[None])[:, 0]
        if every and cache is not None and counts is None:
            cache["counts"] = hist[2].copy()
        return hist

    def _build(self, rows_list, counts=None) -> np.ndarray:
        self.histograms_built += sum(len(r) for r in rows_list) * len(self.feats)
        return build_histograms(self.bins.codes, self.feats, rows_list, self.g, self.h,
                                self.layout, self.h_const, counts)

    # -- search -------------------------------------------------------------------

    def find_split(self, node: NodeWork) -> Partition | None:
        st = node.state
        self._search_node(st)
        return None if st.found is None else st.found.partition()

    def prefetch(self, taken, waiting, expansions: int, max_depth=None) -> None:
        """The builder takes the split ``taken`` now, may take those of ``waiting()`` (its
        waiting leaves) and ``expansions`` splits in all. Replay its best-first choice on
        the gains known so far (descending into children already searched) and search, as
        one batch, the children of every split that replay takes and whose children are not
        searched yet. A node's best split depends on its rows alone, so a wrong guess costs
        work, never a different tree.

        A replay that met only searched splits is remembered: while the builder takes the
        splits it predicted, in its order, a new replay would meet the same and is skipped."""
        first = taken.children[0]._split
        plan = self._plan
        if plan and plan[-1] is first:
            plan.pop()
            return
        heap = [(-np.inf, 0, first)]  # taken now, whatever its gain
        heap += [(-p.improvement, i, p.children[0]._split) for i, p in enumerate(waiting(), 1)]
        heapq.heapify(heap)
        order, fams, seen, complete = len(heap), [], [], True
        limit = GUESS_LIMIT_COMPILED if kernels.enabled() else GUESS_LIMIT
        big = limit // max(1, len(self.feats))
        while heap and expansions > 0:
            _, _, split = heapq.heappop(heap)
            expansions -= 1
            if split is None:
                continue  # a child not searched yet, expanded in the replay
            seen.append(split)
            kids = split.kids
            if kids is None and fams and len(split.st.rows) > big:
                # a wrong guess costs a histogram and a division of the node's rows, a
                # batch saves a fixed cost of calls: guess only below that cost
                kids = ()
            else:
                kids = split.children()
                if max_depth is not None and kids[0].depth >= max_depth:
                    continue  # the builder does not search them
            if not kids or kids[0].found is _UNSEARCHED:
                complete = False
                if kids:
                    fams.append(kids[0].family)
                # its children will take splits of the budget too, likely worth less than
                # it: without them the replay would guess far more splits than are taken
                gain = -GUESS_DECAY * max(split.gain, 0.0)
                heapq.heappush(heap, (gain, order, None))
                heapq.heappush(heap, (gain, order + 1, None))
                order += 2
                continue
            for kid in kids:
                if kid.found is not None:
                    heapq.heappush(heap, (-kid.found.gain, order, kid.found))
                    order += 1
        self._plan = seen[:0:-1] if complete else None  # the predicted next splits, reversed
        if fams:
            self._search(*self._family_histograms(fams))

    def _search(self, nodes, hist) -> None:
        """Sets each node's ``found``: its best split (a :class:`_Split`) or None. ``hist``
        (3, nodes, layout.size) holds their histograms."""
        # a node of fewer than 2 * min_child_samples rows has no admissible split (the two
        # sides' counts add up to the node's, estimated or not): not scanned
        need = 2 * max(1, self.p.min_child_samples)
        for s in nodes:
            s.found = None
        compiled = kernels.enabled()
        C = np.array([float(len(s.rows)) for s in nodes])
        dead = C < need
        if dead.any() and not compiled:  # (compiled: searched with no usable feature)
            if dead.all():
                return
            live = np.flatnonzero(~dead)
            nodes, hist, C, dead = [nodes[k] for k in live], hist[:, live], C[live], dead[live]
        S, q = len(nodes), len(self.feats)
        G = np.array([s.G for s in nodes])
        H = np.array([s.H for s in nodes])
        estimated = np.zeros(S, dtype=bool) if self.h_const is not None else H > 0
        # LightGBM's counts per unit of hessian, with the hessian its scans see
        ratio = np.divide(C, H + 2 * EPS, out=np.zeros(S), where=estimated)
        usable = np.array([np.ones(q, dtype=bool) if s.usable is None else s.usable
                           for s in nodes])
        usable[dead] = False
        gains = np.full((S, q), -np.inf)
        search = self.search.compiled if compiled else self.search.numpy
        for s, found in search(hist, G, H, C, estimated, ratio, usable, gains):
            # as LightGBM: a feature with no split gaining more than min_split_gain here
            # is not searched again below this node
            nodes[s].found = self._split(nodes[s], gains[s] > 0.0, *found)

    # -- applying -------------------------------------------------------------------

    def _split(self, st, usable, i, gain, how, missing_left, LG=None, LH=None,
               LC=None) -> _Split:
        """``LG``, ``LH``, ``LC``: a numeric split's left side as LightGBM's scan summed it
        (g, h with kEpsilon, count)."""
        nb = int(self.n_bins[i])
        cat = isinstance(how, np.ndarray)  # categorical: the set side is child 0
        if cat:
            table = np.zeros(nb + 1, dtype=bool)
            table[how] = True
        else:
            table = np.arange(nb + 1) <= how
        has_missing = bool(st.hist[2, self.layout.off[i] + nb] > 0)  # its missing bin
        if not cat and not self.has_nan[i]:
            # as LightGBM: a feature without a NaN bin reads NaN as 0
            missing_left = bool(np.searchsorted(self.bins.edges[self.feats[i]], 0.0) <= how)
        table[-1] = missing_left
        # as LightGBM: the children of a categorical split (not one-vs-rest) take their
        # leaf values with the gain's lambda + cat_l2
        many = cat and nb + 1 > self.p.max_cat_to_onehot
        l2 = self.p.reg_lambda + (self.p.cat_l2 if many else 0.0)
        return _Split(self, st, gain, i, int(self.feats[i]), table, how, usable, l2,
                      has_missing, None if cat else (LG, LH))

    def leaf_values(self, tree, n: int) -> np.ndarray:
        """The leaf value of every training row 0..n-1 after :meth:`TreeBuilder.build`: the
        rows of every leaf as the bins divided them, and the rows that did not grow the tree
        (subsample, zero weight) routed by the bins too -- never by the IR's thresholds, so
        the IR can be tested against this."""
        out = np.zeros(n)
        for st, nd in zip(self.summarized, tree.nodes):  # the builder opened node i i-th
            if isinstance(nd, Leaf):
                out[st.rows] = st.value
        if len(self.root_rows) == n:
            return out
        rest = np.ones(n, dtype=bool)
        rest[self.root_rows] = False
        slots = [None] * len(tree.nodes)
        slots[0] = np.flatnonzero(rest)
        codes = self.bins.codes
        for i, nd in enumerate(tree.nodes):  # children have larger ids than their parent
            rows, slots[i] = slots[i], None
            if rows is None or rows.size == 0:
                continue
            if isinstance(nd, Leaf):
                out[rows] = nd.value[0]
                continue
            test, f, table = self.routes[id(nd.test)]
            assert test is nd.test
            left = table[codes[f, rows]]
            slots[nd.children[0]] = np.compress(left, rows)
            slots[nd.children[1]] = np.compress(~left, rows)
        return out
