"""Histogram split finding (LightGBM's algorithm) on binned features (:mod:`rulegen.learn.binning`).

A node's **histogram** holds, for every feature and bin, the sums of the gradient, the hessian
and the row count of the node's rows in that bin: an array (3, features, width) built by
``np.bincount`` over the binned rows (:func:`build_histogram`). The two children of a split
together hold exactly the parent's rows, so only the **smaller** child's histogram is built
from its rows; the larger one's is the parent's minus it (:class:`HistogramSplitFinder` does
this lazily, when the first of the two children is searched).

With G, H the node's sums and lambda ``reg_lambda``, a split into (GL, HL), (GR, HR) gains
``GL^2/(HL+l) + GR^2/(HR+l) - G^2/(H+l)`` -- LightGBM's scale, twice the bracket of
:func:`rulegen.learn.newton.split_gain` -- and a leaf is worth ``-G/(H+l)``
(:func:`rulegen.learn.newton.leaf_weight`). A split must gain more than ``min_split_gain``,
each child must keep ``min_child_samples`` rows (counted exactly; LightGBM estimates counts
from hessians) and a hessian sum of ``min_child_weight``.

* **Numeric**: "bins <= b left" for every b, from cumulative sums over the bins, tried with
  the missing bin left and right (the learned default direction); with missing rows present,
  "every value left, missing right" too (threshold +inf). Ties go as in LightGBM's two scans:
  missing left wins, and among bins giving the same partition (bins empty at the node) the
  highest b with missing left (or no missing rows), the lowest with missing right. A node
  that saw no missing value of the feature sends missing values to the child with more rows
  (ties right), as scikit-learn's histogram boosting does.
* **Categorical**, codes 0..m-1 (LightGBM's rules, as documented and as measured):
  - m <= ``max_cat_to_onehot``: one present category against the rest;
  - otherwise the categories with at least ``cat_smooth`` rows at the node are sorted by
    ``G_c / (H_c + cat_smooth)`` (ties by code) and scanned from both ends, at most
    ``min(max_cat_threshold, (k+1)//2)`` of the k sorted categories from each: categories
    join the set one by one, and a candidate is taken when both sides are admissible, the
    other side keeps ``min_data_per_group`` rows and ``min_data_per_group`` rows joined since
    the previous candidate. The children's terms of the gain use ``lambda + cat_l2`` (the
    parent's term plain lambda), and so do the two children's leaf values.
  The set is child 0; missing values, categories not in the set (rare ones included) and
  unseen codes go to child 1 (LightGBM's "other" side). With cat_smooth = cat_l2 = lambda = 0
  and no count limits this finds the best of all subsets (Fisher's grouping theorem: the best
  two-group partition for sums of G^2/H is contiguous in G/H order; both ends together cover
  every cut of the order).

The best split of a node is the highest gain over its features; gains equal up to 1e-10
(relative: the same partition summed in another order) go to the lowest feature index. As in
LightGBM, a feature with no split gaining more than ``min_split_gain`` at a node is not
searched again below it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rulegen.ir.nodes import CategoricalTest, DefaultChild, Leaf
from rulegen.learn.builder import NodeWork, Partition, float32_test
from rulegen.learn.newton import leaf_weight, split_gain

TIE = 1e-10  # relative: gains this close are equal (rounding differs between features)


@dataclass(frozen=True)
class SplitParams:
    reg_lambda: float = 0.0
    min_child_samples: int = 20
    min_child_weight: float = 1e-3
    min_split_gain: float = 0.0
    cat_smooth: float = 10.0
    cat_l2: float = 10.0
    max_cat_threshold: int = 32
    min_data_per_group: int = 100
    max_cat_to_onehot: int = 4


def gain(GL, HL, GR, HR, reg_lambda):
    """LightGBM's split gain: twice the note's bracket (exact: a power of two)."""
    return 2.0 * split_gain(GL, HL, GR, HR, reg_lambda)


def build_histogram(codes, feats, rows, g, h, width, h_const=None) -> np.ndarray:
    """(3, len(feats), width): sums of g, h and the row count per bin of each feature over
    ``rows``. ``h_const``: every h equals it, so the hessian row is count * h_const."""
    out = np.empty((3, len(feats), width))
    every = len(rows) == codes.shape[1]  # rows are distinct: these are all the rows
    if len(feats) == codes.shape[0]:
        block = codes if every else codes[:, rows]
    else:
        block = codes[feats] if every else codes[np.ix_(feats, rows)]
    g_r = g if every else g[rows]
    h_r = None if h_const is not None else h if every else h[rows]
    for i in range(len(feats)):  # features, not rows: each bincount is vectorised
        b = block[i]
        out[0, i] = np.bincount(b, weights=g_r, minlength=width)
        out[2, i] = np.bincount(b, minlength=width)
        if h_r is not None:
            out[1, i] = np.bincount(b, weights=h_r, minlength=width)
    if h_const is not None:
        np.multiply(out[2], h_const, out=out[1])
    return out


def _admissible(CL, HL, CR, HR, min_count, min_hess):
    return (CL >= min_count) & (CR >= min_count) & (HL >= min_hess) & (HR >= min_hess)


def _children_score(GL, HL, GR, HR, lam, guard):
    """GL^2/(HL+l) + GR^2/(HR+l): the part of the gain that varies within a node (the
    scan's hot path, so without :func:`gain`'s per-candidate parent term). ``guard``: count
    a side with HL+l <= 0 as 0, as :func:`rulegen.learn.newton.split_gain` does."""
    with np.errstate(divide="ignore", invalid="ignore"):
        DL, DR = HL + lam, HR + lam
        s = GL * GL / DL
        s += GR * GR / DR
        if guard:
            s = np.where(DL > 0, GL * GL / DL, 0.0) + np.where(DR > 0, GR * GR / DR, 0.0)
    return s


def best_numeric(hist, n_bins, G, H, C, p: SplitParams, h_const=None, estimated=False):
    """Per feature of ``hist`` (3, q, width): (gain, bin b, missing_left); gain -inf where
    no split is allowed. b == n_bins - 1 means every value left, missing right. ``h_const``:
    the hessian row is the count row times it."""
    q = hist.shape[1]
    top = int(np.max(n_bins))  # bins past every feature's last value bin are never cut
    if h_const is None:
        cG, cH, cC = np.cumsum(hist[:, :, :top], axis=2)
    else:
        cG, cC = np.cumsum(hist[::2, :, :top], axis=2)
        cH = cC * h_const
    Gm, Hm, Cm = hist[0, :, -1:], hist[1, :, -1:], hist[2, :, -1:]
    j = np.arange(top)
    nb = np.asarray(n_bins)[:, None]
    has_m = Cm > 0
    min_count = max(1, p.min_child_samples)
    lam, mcw = p.reg_lambda, p.min_child_weight
    guard = lam <= 0 and mcw <= 0
    base = G * G / (H + lam) if H + lam > 0 else 0.0  # the parent's term
    r = np.arange(q)
    # missing left (with no missing rows: either side); ties: the highest b, as LightGBM's
    # reverse scan, which also wins ties against the missing-right pass below
    GL, HL, CL = cG + Gm, cH + Hm, cC + Cm
    HR = H - HL
    CR = C - CL
    if estimated:
        # LightGBM scans this pass from the top bin down: the right side's count is the
        # sum of its bins' estimates and the left side gets the rest
        CR = cC[:, -1:] - cC
        CL = C - CR
    v = _children_score(GL, HL, G - GL, HR, lam, guard)
    ok = (j < nb - 1) & _admissible(CL, HL, CR, HR, min_count, mcw)
    v[~ok] = -np.inf
    pos = (top - 1) - v[:, ::-1].argmax(axis=1)
    best = v[r, pos]
    left = has_m[:, 0].copy()
    miss = np.flatnonzero(left)
    if miss.size:
        # missing right; j = nb-1 is "every value left"; ties: the lowest b
        cG, cH, cC, nbm = cG[miss], cH[miss], cC[miss], nb[miss]
        HR = H - cH
        v1 = _children_score(cG, cH, G - cG, HR, lam, guard)
        ok1 = (j <= nbm - 1) & _admissible(cC, cH, C - cC, HR, min_count, mcw)
        v1[~ok1] = -np.inf
        b1 = v1.argmax(axis=1)
        val1 = v1[np.arange(miss.size), b1]
        better = val1 > best[miss]
        sel = miss[better]
        best[sel], pos[sel], left[sel] = val1[better], b1[better], False
    return best - base, pos, left


def _scan_cuts(cnt, hess, C, H, p: SplitParams) -> list:
    """How many of the sorted categories go to the set side at each candidate, as LightGBM's
    scan takes them: categories join one by one; a candidate needs both sides admissible
    (the scan stops once the other side is too small) and ``min_data_per_group`` rows joined
    since the previous candidate. A loop over categories, never rows."""
    min_count = max(1, p.min_child_samples)
    cuts, left_c, left_h, group = [], 0.0, 0.0, 0.0
    for t in range(len(cnt)):
        left_c, left_h, group = left_c + cnt[t], left_h + hess[t], group + cnt[t]
        if left_c < min_count or left_h < p.min_child_weight:
            continue
        right_c = C - left_c
        if right_c < min_count or right_c < p.min_data_per_group or H - left_h < p.min_child_weight:
            break
        if group < p.min_data_per_group:
            continue
        group = 0.0
        cuts.append(t + 1)
    return cuts


def best_categorical(hf, m, G, H, C, p: SplitParams):
    """The best split of one categorical feature from its histogram ``hf`` (3, width)
    (codes 0..m-1, missing last): (gain, sorted codes of the set side, missing_left), or
    None."""
    Gc, Hc, Cc = hf[0, :m], hf[1, :m], hf[2, :m]
    present = np.flatnonzero(Cc > 0)
    k = len(present)
    if k == 0 or (k == 1 and hf[2, -1] == 0):
        return None
    if m <= p.max_cat_to_onehot:
        sets = [present[i:i + 1] for i in range(k)]
        SG, SH, SC = Gc[present], Hc[present], Cc[present]
        lam = p.reg_lambda
    else:
        # as LightGBM: categories with fewer than cat_smooth rows here are never in the set
        used = present[Cc[present] >= p.cat_smooth]
        key = Gc[used] / (Hc[used] + p.cat_smooth)
        order = used[np.lexsort((used, key))]
        n_scan = min(p.max_cat_threshold, (len(used) + 1) // 2)
        sets, sums = [], []
        for seq in (order[:n_scan], order[::-1][:n_scan]):  # lowest ratios first, then highest
            cum = np.cumsum(hf[:, seq], axis=1)
            cuts = _scan_cuts(Cc[seq], Hc[seq], C, H, p)
            sets += [seq[:t] for t in cuts]
            sums.append(cum[:, np.asarray(cuts, dtype=np.intp) - 1])
        SG, SH, SC = np.concatenate(sums, axis=1)
        lam = p.reg_lambda + p.cat_l2
    if not sets:
        return None
    min_count = max(1, p.min_child_samples)
    parent = G * G / (H + p.reg_lambda) if H + p.reg_lambda > 0 else 0.0
    # missing rows stay with the rest (child 1), as LightGBM's; the children's terms take
    # ``lam``, the parent's reg_lambda, as LightGBM
    v = _children_score(SG, SH, G - SG, H - SH, lam, lam <= 0) - parent
    v = np.where(_admissible(SC, SH, C - SC, H - SH, min_count, p.min_child_weight), v, -np.inf)
    i = int(v.argmax())  # the first best, in scan order
    return (float(v[i]), np.sort(sets[i]), False) if v[i] > -np.inf else None


class _State:
    """A node's rows and sums, its histogram once built, the family it shares with its
    sibling (the parent's histogram, kept until the first of the two is searched), its leaf
    value and whether the builder split it."""

    __slots__ = ("G", "H", "W", "expanded", "family", "hist", "l2", "rows", "usable", "value")

    def __init__(self, rows, G, H, W, family=None, usable=None, l2=0.0):
        self.rows, self.G, self.H, self.W = rows, G, H, W
        self.hist, self.family, self.value, self.expanded = None, family, None, False
        self.usable = usable  # local features still worth searching (None: all)
        self.l2 = l2  # the lambda of its leaf value (categorical splits add cat_l2)


class _Family:
    __slots__ = ("hist", "kids")

    def __init__(self, hist):
        self.hist, self.kids = hist, []


class _Split:
    """A node's best split; its rows are divided only if the builder takes it (leaf-wise
    growth leaves most of the last frontier's best splits untaken)."""

    __slots__ = ("cut", "f", "finder", "i", "kids", "l2", "st", "table", "usable")

    def __init__(self, finder, st, i, f, table, cut, usable, l2):
        self.finder, self.st, self.i, self.f, self.table = finder, st, i, f, table
        self.cut, self.usable, self.l2, self.kids = cut, usable, l2, None

    def children(self):
        if self.kids is None:
            st, finder, table = self.st, self.finder, self.table
            c = finder.bins.codes[self.f, st.rows]
            if self.cut is None:
                left = table[c]
            else:  # numeric: comparisons are cheaper than a lookup
                left = c <= self.cut
                if table[-1]:
                    left |= c == len(table) - 1
            # the children's sums from the split feature's histogram: no pass over the rows
            GL, HL = (float(v) for v in st.hist[:2, self.i][:, table].sum(axis=1))
            fam = _Family(st.hist)
            st.hist, st.expanded = None, True
            self.kids = (finder.state(st.rows[left], fam, self.usable, self.l2, GL, HL),
                         finder.state(st.rows[~left], fam, self.usable, self.l2,
                                      st.G - GL, st.H - HL))
        return self.kids


class _Child(NodeWork):
    """The builder's view of one child of a :class:`_Split`: the NodeWork fields ``rows``,
    ``weights`` and ``state`` are computed on first use (NodeWork's __init__ is not called)."""

    def __init__(self, split: _Split, side: int):
        self.impurity, self.depth = np.inf, 0
        self._split, self._side = split, side

    @property
    def state(self):
        return self._split.children()[self._side]

    @property
    def rows(self):
        return self.state.rows

    @property
    def weights(self):
        finder, rows = self._split.finder, self.state.rows
        return np.broadcast_to(1.0, rows.shape) if finder.unit_weights else finder.w[rows]


class HistogramSplitFinder:
    """A :class:`~rulegen.learn.builder.TreeBuilder` split finder over binned features.

    ``bins``: :class:`~rulegen.learn.binning.Bins`; ``feats``: the sorted features this tree
    may use; ``g``, ``h``, ``w`` per training row (g and h already weighted); leaves hold
    ``scale * -G/(H+lambda)`` (scale: the learning rate)."""

    def __init__(self, bins, feats, g, h, w, params: SplitParams, scale: float = 1.0):
        self.bins, self.feats = bins, np.asarray(feats, dtype=np.intp)
        self.g, self.h, self.w, self.p, self.scale = g, h, w, params, float(scale)
        self.width = bins.width
        self.is_cat = bins.is_categorical[self.feats]
        self.n_bins = bins.n_bins[self.feats]
        # squared error: h is constant, so its histogram is the count's multiple (with
        # h = 1 exactly the count), and unit weights make a node's weight its row count
        self.h_const = float(h[0]) if len(h) and np.all(h == h[0]) else None
        self.unit_weights = bool(np.all(w == 1.0))
        self.routes = {}  # id(test) -> (test, feature, goes-left table over its bins)
        self.summarized = []  # every node's state, in the order the builder opened them
        self.root_rows = None
        self.histograms_built = 0  # rows x features of every histogram built directly

    # -- nodes --------------------------------------------------------------------

    def state(self, rows, family=None, usable=None, l2=None, G=None, H=None) -> _State:
        m = len(rows)
        if self.h_const is not None:
            H = self.h_const * m
        elif H is None:
            H = float(self.h[rows].sum())
        G = float(self.g[rows].sum()) if G is None else G
        W = float(m) if self.unit_weights else float(self.w[rows].sum())
        st = _State(rows, G, H, W, family, usable, self.p.reg_lambda if l2 is None else l2)
        if family is not None:
            family.kids.append(st)
        return st

    def release(self) -> None:
        """Drop every node's histogram and family once the tree is done: siblings and
        their family refer to one another, so without this the histograms would wait for
        the cycle collector and pile up over the rounds (tens of MB on small data)."""
        for st in self.summarized:
            st.hist = st.family = None

    def root(self, rows) -> NodeWork:
        rows = np.asarray(rows, dtype=np.intp)
        self.root_rows = rows
        return NodeWork(rows, self.w[rows], state=self.state(rows))

    def summarize(self, node: NodeWork):
        st = node.state
        st.value = self.scale * float(leaf_weight(st.G, st.H, st.l2))
        self.summarized.append(st)
        return (st.value,), st.W, None

    def histogram(self, st: _State) -> np.ndarray:
        """The node's histogram: built from its rows, or (the larger of two siblings) the
        parent's minus the smaller sibling's."""
        if st.hist is None:
            fam = st.family
            if fam is None or fam.hist is None:
                st.hist = self._build(st.rows)
            else:
                a, b = fam.kids
                small, large = (a, b) if len(a.rows) <= len(b.rows) else (b, a)
                small.hist = self._build(small.rows)
                large.hist = fam.hist - small.hist
                # bins the larger child has no row in hold exact zeros, not rounding residue,
                # so that cuts in a run of empty bins tie exactly
                large.hist[:2, large.hist[2] == 0] = 0.0
                fam.hist = None
        return st.hist

    def _build(self, rows):
        self.histograms_built += len(rows) * len(self.feats)
        return build_histogram(self.bins.codes, self.feats, rows, self.g, self.h, self.width,
                               self.h_const)

    # -- search -------------------------------------------------------------------

    def find_split(self, node: NodeWork) -> Partition | None:
        st = node.state
        hist = self.histogram(st)
        G, H, C = st.G, st.H, float(len(st.rows))
        estimated = self.h_const is None and H > 0
        if estimated:
            # as LightGBM: with varying hessians a bin's row count is estimated from its
            # hessian (the node's rows per unit of hessian, rounded half up)
            hist = hist.copy()
            hist[2] = np.floor(hist[1] * (C / H) + 0.5)
        usable = np.ones(len(self.feats), dtype=bool) if st.usable is None else st.usable
        gains = np.full(len(self.feats), -np.inf)
        found = []  # (gain, local feature, how, missing_left)
        num = np.flatnonzero(~self.is_cat & usable)
        if num.size:
            sub = hist if num.size == len(self.feats) else hist[:, num]
            vals, pos, left = best_numeric(sub, self.n_bins[num], G, H, C, self.p, self.h_const,
                                           estimated)
            gains[num] = vals
            top = vals.max()
            if top > -np.inf:
                # features whose gain equals the best up to rounding (typically the same
                # partition of the rows) tie; the lowest index wins
                k = int(np.flatnonzero(vals >= top - TIE * abs(top))[0])
                found.append((float(vals[k]), int(num[k]), int(pos[k]), bool(left[k])))
        for i in np.flatnonzero(self.is_cat & usable):
            cat = best_categorical(hist[:, i], int(self.n_bins[i]), G, H, C, self.p)
            if cat is not None:
                gains[i] = cat[0]
                found.append((cat[0], int(i), cat[1], cat[2]))
        if not found:
            return None
        top = max(c[0] for c in found)
        best = min((c for c in found if c[0] >= top - TIE * abs(top)), key=lambda c: c[1])
        if not best[0] > self.p.min_split_gain:
            return None
        # as LightGBM: a feature with no split gaining more than min_split_gain here is not
        # searched again below this node
        return self._partition(st, *best, gains > self.p.min_split_gain)

    # -- applying -------------------------------------------------------------------

    def _partition(self, st, value, i, how, missing_left, usable) -> Partition:
        f = int(self.feats[i])
        width = self.width
        if isinstance(how, np.ndarray):  # categorical: the set side is child 0
            table = np.zeros(width, dtype=bool)
            table[how] = True
            test = CategoricalTest(f, tuple(int(c) for c in how))
        else:
            table = np.arange(width) <= how
            last = how == self.n_bins[i] - 1
            test = float32_test(f, np.inf if last else float(self.bins.edges[f][how]))
        counts = st.hist[2, i]
        if not counts[-1] > 0 and not isinstance(how, np.ndarray):
            # no missing value here: missing values follow the child with more rows
            n_left = float(counts[:-1][table[:-1]].sum())
            missing_left = n_left > len(st.rows) - n_left
        table[-1] = missing_left
        # as LightGBM: the children of a categorical split (not one-vs-rest) take their
        # leaf values with the gain's lambda + cat_l2
        many = isinstance(how, np.ndarray) and self.n_bins[i] > self.p.max_cat_to_onehot
        l2 = self.p.reg_lambda + (self.p.cat_l2 if many else 0.0)
        cut = None if isinstance(how, np.ndarray) else how
        split = _Split(self, st, i, f, table, cut, usable, l2)
        self.routes[id(test)] = (test, f, table)
        return Partition(test, DefaultChild(0 if missing_left else 1),
                         [_Child(split, 0), _Child(split, 1)], value)

    def leaf_values(self, tree, n: int) -> np.ndarray:
        """The leaf value of every training row 0..n-1 after :meth:`TreeBuilder.build`: the
        rows of every leaf as the bins divided them, and the rows that did not grow the tree
        (subsample, zero weight) routed by the bins too -- never by the IR's thresholds, so
        the IR can be tested against this."""
        out = np.zeros(n)
        for st in self.summarized:
            if not st.expanded:
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
            slots[nd.children[0]], slots[nd.children[1]] = rows[left], rows[~left]
        return out
