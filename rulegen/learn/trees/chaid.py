"""CHAID (Kass 1980): multiway trees grown by significance tests.

At each node, for every predictor, the categories seen at the node are merged while
they do not differ significantly (:func:`rulegen.learn.trees.chaid_merge.merge_categories`:
alpha-merge, optional re-splitting, the floating missing category, small groups),
and the merged table gets a Bonferroni-adjusted p-value. The predictor with the
smallest adjusted p-value splits the node, one child per group, if that p-value is
at most ``alpha_split``; otherwise the node is a leaf. Classification uses Pearson's
chi-square (or the likelihood ratio); regression the F test. Predictors may be used
again further down.

Predictors:

* **categorical** columns (``categorical_features``, codes 0..m-1) are *free*: any
  categories may merge. Missing is one more category (as in SPSS), so it may end up
  alone or in any group. IR: ``MultiwayTest``; a missing-only group is empty.
* **numeric** columns are cut once, before growing, into at most ``max_bins``
  ordered bins of about equal weight (the cut points are training values, so the
  test ``float32(x) <= cut`` puts every training row in its bin) and are
  *monotonic*: only neighbouring bins merge. Missing *floats*: it joins the group it
  is most similar to or stays alone, whichever gives the smaller p-value. IR:
  ``IntervalTest`` on the upper cut of each group; a missing-only child is the last
  one, behind a bound of ``+inf`` that no value passes. A value between two groups'
  training bins goes to the lower group.

What a node never saw goes to its child with the largest training weight (first on
ties): a missing value where no row was missing, a category absent from its rows or
outside the feature's list (``Split.unseen``, never the missing-only branch).

Stopping: ``max_depth`` (default 3, as SPSS), a node weighing less than
``min_parent_size`` is not split, every child weighs at least ``min_child_size``
(lighter groups are merged first, as SPSS does). SPSS defaults to 100 and 50, which
suits tens of thousands of rows; the defaults here (20 and 7) let the test work on a
few hundred. The sizes are sums of ``sample_weight``, which are frequency weights: a
weight of 2 is the row twice, in the tests' sample sizes too (so scaling every
weight changes the p-values).

Leaves: class probabilities (classifier) or the weighted mean (regressor). After
fitting, ``splits_`` maps each split's node id to its test: feature, statistic,
degrees of freedom, p-value, Bonferroni multiplier and adjusted p-value.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.errors import LearnerError
from rulegen.ir.nodes import DefaultChild, IntervalTest
from rulegen.learn.base import (
    ClassifierMixin,
    Estimator,
    RegressorMixin,
    bad,
    is_int,
    is_real,
    make_model,
)
from rulegen.learn.trees.chaid_merge import CountTables, MeanTables, merge_categories
from rulegen.learn.trees.multiway import (
    Chosen,
    class_summary,
    grow,
    largest,
    mean_summary,
    multiway_split,
)

_BLOCK = 1 << 22  # elements per (features x rows) work array


def quantile_cuts(x: np.ndarray, w: np.ndarray, max_bins: int) -> np.ndarray:
    """Cut points (training values, float32) for at most ``max_bins`` bins of about equal
    weight: the weighted quantiles at k/max_bins (the smallest value whose cumulative
    weight reaches that share), distinct, below the largest value. Bin i holds the
    values ``cuts[i-1] < x <= cuts[i]``."""
    ok = ~np.isnan(x) & (w > 0)
    v, ww = x[ok], w[ok]
    if v.size == 0:
        return np.zeros(0, dtype=np.float32)
    order = np.argsort(v, kind="stable")
    v, cw = v[order], np.cumsum(ww[order])
    targets = cw[-1] * np.arange(1, max_bins) / max_bins
    idx = np.minimum(np.searchsorted(cw, targets, side="left"), len(v) - 1)
    cuts = np.unique(v[idx])
    return cuts[cuts < v[-1]].astype(np.float32)


class _Search:
    """Chooses each node's split. Every predictor's values are integer slots: codes (or
    bins) 0..size-1, and ``size`` for missing; one ``bincount`` per block of features
    gives every slot's stats at a node."""

    def __init__(self, codes, sizes, cuts, y, w, tables, params):
        self.codes, self.y, self.w, self.tables = codes, y, w, tables
        self.sizes = np.asarray(sizes, dtype=np.intp)
        self.cuts = cuts  # per feature: float32 cut points, or None if categorical
        slots = self.sizes + 1
        self.offset = np.concatenate([[0], np.cumsum(slots)[:-1]]).astype(np.intp)
        self.n_slots = int(slots.sum())
        self.regression = isinstance(tables, MeanTables)
        (self.alpha_merge, self.alpha_split, self.alpha_resplit, self.bonferroni,
         self.max_depth, self.min_parent, self.min_child, self.n_classes) = params

    def _slot_stats(self, rows) -> np.ndarray:
        """Stats of every slot at the node: class counts (n_slots, k) or (w, mean, M2)."""
        yr, wr = self.y[rows], self.w[rows]
        p = len(self.sizes)
        step = max(1, _BLOCK // max(len(rows), 1))
        if not self.regression:
            k = self.n_classes
            out = np.zeros(self.n_slots * k)
            for s in range(0, p, step):
                cell = (self.offset[s:s + step, None] + self.codes[s:s + step][:, rows]) * k + yr
                out += np.bincount(cell.ravel(), np.broadcast_to(wr, cell.shape).ravel(),
                                   self.n_slots * k)
            return out.reshape(self.n_slots, k)
        W, S, M2 = (np.zeros(self.n_slots) for _ in range(3))
        for s in range(0, p, step):
            slot = (self.offset[s:s + step, None] + self.codes[s:s + step][:, rows]).ravel()
            ww = np.broadcast_to(wr, (min(step, p - s), len(rows))).ravel()
            yy = np.broadcast_to(yr, (min(step, p - s), len(rows))).ravel()
            W += np.bincount(slot, ww, self.n_slots)
            S += np.bincount(slot, ww * yy, self.n_slots)
            mean = np.divide(S, W, out=np.zeros_like(S), where=W > 0)
            M2 += np.bincount(slot, ww * (yy - mean[slot]) ** 2, self.n_slots)
        mean = np.divide(S, W, out=np.zeros_like(S), where=W > 0)
        return np.stack([W, mean, M2], axis=1)

    def choose(self, rows, depth, state) -> Chosen | None:
        if self.max_depth is not None and depth >= self.max_depth:
            return None
        if float(self.w[rows].sum()) < self.min_parent or np.unique(self.y[rows]).size < 2:
            return None
        stats = self._slot_stats(rows)
        weight = self.tables.weight(stats)
        best = None
        for f, size in enumerate(self.sizes):
            lo = self.offset[f]
            present = np.flatnonzero(weight[lo:lo + size + 1] > 0)
            if present.size < 2:
                continue
            res = merge_categories(
                stats[lo + present], self.tables, ordered=self.cuts[f] is not None,
                missing_last=bool(present[-1] == size), alpha_merge=self.alpha_merge,
                alpha_resplit=self.alpha_resplit, min_child_size=self.min_child,
                bonferroni_adjust=self.bonferroni)
            if len(res.groups) >= 2 and (best is None or res.log_adjusted_p < best[1].log_adjusted_p):
                best = (f, res, present)
        if best is None or best[1].log_adjusted_p > math.log(self.alpha_split):
            return None
        return self._partition(rows, *best, weight)

    def _partition(self, rows, f, res, present, weight) -> Chosen:
        size, lo = int(self.sizes[f]), self.offset[f]
        groups = [[int(present[i]) for i in g] for g in res.groups]  # slots; ``size`` = missing
        wts = [float(weight[lo + np.asarray(g)].sum()) for g in groups]
        holding = [i for i, g in enumerate(groups) if size in g]
        missing_group = holding[0] if holding else None
        if self.cuts[f] is None:
            test, missing, unseen = multiway_split(
                f, [tuple(c for c in g if c != size) for g in groups], missing_group, wts)
        else:
            # the upper cut of each group of bins but the last; +inf before a missing-only child
            valued = [g for g in groups if g != [size]]
            bounds = [float(self.cuts[f][max(c for c in g if c != size)]) for g in valued[:-1]]
            if len(valued) < len(groups):
                bounds.append(math.inf)
            test = IntervalTest(f, "<=", tuple(bounds), "float32")
            missing = DefaultChild(largest(wts) if missing_group is None else missing_group)
            unseen = None
        child_of = np.full(size + 1, -1, dtype=np.intp)
        for i, g in enumerate(groups):
            child_of[g] = i
        child = child_of[self.codes[f, rows]]
        order = np.argsort(child, kind="stable")
        parts = np.split(rows[order], np.cumsum(np.bincount(child, minlength=len(groups)))[:-1])
        info = {"feature": f, "statistic": res.statistic, "df": res.df, "p_value": res.p_value,
                "multiplier": res.multiplier, "adjusted_p_value": res.adjusted_p,
                "groups": groups}
        return Chosen(test, missing, unseen, parts, info)


_PARAMS = ("alpha_merge", "alpha_split", "alpha_resplit", "bonferroni", "max_depth",
           "min_parent_size", "min_child_size", "max_bins")


class _CHAID(Estimator):
    _multi_output = False  # CHAIDRegressor fits one output
    def _check_params(self):
        am = self.alpha_merge
        if not (is_real(am) and 0 < am <= 1):
            bad("alpha_merge", am, "a number in (0, 1] (1: never merge)")
        a_s = self.alpha_split
        if not (is_real(a_s) and 0 < a_s <= 1):
            bad("alpha_split", a_s, "a number in (0, 1]")
        ar = self.alpha_resplit
        if ar is not None and not (is_real(ar) and 0 < ar <= am):
            bad("alpha_resplit", ar, f"None (never re-split merged groups) or a number in "
                f"(0, alpha_merge={am!r}] (a larger one could undo its own merges)")
        if not isinstance(self.bonferroni, (bool, np.bool_)):
            bad("bonferroni", self.bonferroni, "True or False")
        md = self.max_depth
        if md is not None and not (is_int(md) and md >= 1):
            bad("max_depth", md, "None or an integer >= 1")
        for name in ("min_parent_size", "min_child_size"):
            v = getattr(self, name)
            if not (is_real(v) and math.isfinite(v) and v >= 0):
                bad(name, v, "a finite number >= 0 (a total sample weight)")
        mb = self.max_bins
        if not (is_int(mb) and mb >= 2):
            bad("max_bins", mb, "an integer >= 2")

    def _fit(self, X, y, sample_weight, feature_names, categorical_features, categories):
        self._check_params()
        X32, names = self._check_X(X, feature_names)
        n, p = X32.shape
        cat_labels = self._check_categorical(X32, names, categorical_features, categories)
        T, target, fitted = self._encode_y(y, n)
        w, _ = self._check_weights(sample_weight, n)
        sizes, cuts, codes = [], [], np.empty((p, n), dtype=np.intp)
        for j in range(p):
            x = X32[:, j]
            if j in cat_labels:
                size, cut = len(cat_labels[j]), None
                codes[j] = np.where(np.isnan(x), size, np.nan_to_num(x))
            else:
                cut = quantile_cuts(x, w, int(self.max_bins))
                size = len(cut) + 1
                codes[j] = np.where(np.isnan(x), size, np.searchsorted(cut, x, side="left"))
            sizes.append(size)
            cuts.append(cut)
        tables, summary, y_fit, k = self._tables(T, w, target)
        params = (float(self.alpha_merge), float(self.alpha_split),
                  None if self.alpha_resplit is None else float(self.alpha_resplit),
                  bool(self.bonferroni), self.max_depth, float(self.min_parent_size),
                  float(self.min_child_size), k)
        search = _Search(codes, sizes, cuts, y_fit, w, tables, params)
        tree, infos = grow(np.flatnonzero(w > 0), summary, search.choose)
        self.model_ = make_model(names, cat_labels, target, tree, "chaid", self.get_params(), n)
        self.splits_ = {nid: {"name": names[i["feature"]], **i} for nid, i in infos.items()}
        self._set_fitted(fitted, names)
        return self


class CHAIDClassifier(ClassifierMixin, _CHAID):
    """CHAID classifier (see the module docstring); ``criterion`` is "pearson" (chi-square)
    or "likelihood_ratio"."""

    _params = ("criterion",) + _PARAMS

    def __init__(self, criterion="pearson", alpha_merge=0.05, alpha_split=0.05,
                 alpha_resplit=None, bonferroni=True, max_depth=3, min_parent_size=20,
                 min_child_size=7, max_bins=10):
        self.criterion = criterion
        self.alpha_merge = alpha_merge
        self.alpha_split = alpha_split
        self.alpha_resplit = alpha_resplit
        self.bonferroni = bonferroni
        self.max_depth = max_depth
        self.min_parent_size = min_parent_size
        self.min_child_size = min_child_size
        self.max_bins = max_bins

    def _check_params(self):
        if self.criterion not in ("pearson", "likelihood_ratio"):
            bad("criterion", self.criterion, "'pearson' or 'likelihood_ratio'")
        super()._check_params()

    def _tables(self, T, w, target):
        k = len(target.classes)
        return (CountTables(self.criterion == "likelihood_ratio"), class_summary(T, w, k), T, k)

    def fit(self, X, y, sample_weight=None, feature_names=None, categorical_features=None,
            categories=None):
        """Fit on ``X`` (n_samples, n_features), NaN for missing; categorical columns
        (``categorical_features``, indices or names) hold codes 0..m-1, labelled by
        ``categories``. ``sample_weight`` are frequency weights."""
        return self._fit(X, y, sample_weight, feature_names, categorical_features, categories)


class CHAIDRegressor(RegressorMixin, _CHAID):
    """CHAID regressor with the F test (see the module docstring); one output."""

    _params = _PARAMS

    def __init__(self, alpha_merge=0.05, alpha_split=0.05, alpha_resplit=None,
                 bonferroni=True, max_depth=3, min_parent_size=20, min_child_size=7,
                 max_bins=10):
        self.alpha_merge = alpha_merge
        self.alpha_split = alpha_split
        self.alpha_resplit = alpha_resplit
        self.bonferroni = bonferroni
        self.max_depth = max_depth
        self.min_parent_size = min_parent_size
        self.min_child_size = min_child_size
        self.max_bins = max_bins

    def _tables(self, T, w, target):
        if T.shape[1] != 1:
            raise LearnerError(f"CHAIDRegressor predicts one output, but y has {T.shape[1]} "
                               "columns; fit one regressor per output")
        y = np.ascontiguousarray(T[:, 0])
        return MeanTables(), mean_summary(y, w), y, 0

    def fit(self, X, y, sample_weight=None, feature_names=None, categorical_features=None,
            categories=None):
        """Fit on ``X`` as :meth:`CHAIDClassifier.fit`; ``y`` is one numeric target."""
        return self._fit(X, y, sample_weight, feature_names, categorical_features, categories)
