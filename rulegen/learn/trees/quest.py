"""QUEST (Loh & Shih 1997): binary classification trees whose variable selection is
(nearly) unbiased, because the variable is chosen by significance tests and only then
is a split point found on it. The statistics live in :mod:`rulegen.learn.trees.quest_split`;
this module grows the tree with the shared :class:`~rulegen.learn.splits.builder.TreeBuilder`.

At each node:

* **Variable.** ANOVA F for each numeric variable, Pearson chi-square for each
  categorical one, on the rows where that variable is present. The smallest p-value
  wins if it is below ``alpha / K`` (K variables); otherwise Levene's test (F on
  |x - class mean|) for the numeric variables, whose smallest p-value wins if below
  ``alpha / (K + K1)`` (K1 numeric variables); otherwise the first-stage winner.
* **Split point.** With more than two classes present, the classes are grouped into
  two superclasses by 2-means clustering of their means on the variable. The split is
  ``x <= d`` with d the root of the quadratic-discriminant equation between the two
  superclass normals (priors: their shares of the node's present rows) closer to the
  mean of superclass A; see :func:`~rulegen.learn.trees.quest_split.split_point` for the
  equal-variance, no-root and zero-variance cases. If d leaves one side empty, the
  midpoint of the superclass means is used.
* **Categorical variables** are mapped to their largest discriminant coordinate
  (CRIMCOORD) first; ``xi(code) <= d`` becomes the category set of a CategoricalTest.

Decisions (see docs/learners/quest.md):

* X is learned as float64 (the shared check still refuses values beyond float32) and
  a numeric test is ``x <= d`` compared in float64 with d the split point itself, so the
  IR routes every input exactly as the learner routed its training rows.
* Missing values: the tests and the split point use the rows where the variable is
  present. For prediction, and for the training rows missing the split variable, the
  split carries up to ``max_surrogates`` surrogate splits (CART's: the split on another
  variable that best agrees with the primary one, kept only if it beats sending
  everything to the majority side), then the child with more present rows (ties:
  child 1). With no surrogate it is a ``DefaultChild`` to that child.
* Categories of the split variable not seen at the node (and unseen codes) go to that
  same larger child, through the test's set and ``Split.unseen``.
* ``min_samples_leaf`` (not in the paper): a cut leaving fewer present rows on a side
  is moved past as few rows as needed; a variable where no cut can satisfy it is
  passed over for the next one by first-stage p-value.
* No pruning: every node records ``samples``, ``distribution`` and Gini ``impurity``
  so cost-complexity pruning can be applied afterwards. Stopping: ``max_depth``,
  ``min_samples_split``, ``min_samples_leaf``, pure nodes, no testable variable (e.g.
  one row per class: the F test has no degrees of freedom within classes).
* ``fit`` takes no ``sample_weight``: the tests count rows.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.errors import LearnerError
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    NumericTest,
    Surrogate,
    Surrogates,
)
from rulegen.learn import frames
from rulegen.learn.base import (
    ClassifierMixin,
    Estimator,
    bad,
    is_int,
    is_real,
    make_model,
)
from rulegen.learn.splits.builder import GrowthLimits, NodeWork, Partition, TreeBuilder
from rulegen.learn.splits.criteria import Gini
from rulegen.learn.trees.pruning_cv import check_pruning, post_prune
from rulegen.learn.trees.quest_split import (
    anova_pvalues,
    chi2_pvalue,
    contingency,
    crimcoord,
    levene_pvalues,
    select_variable,
    split_point,
    superclasses,
)
from rulegen.learn.trees.surrogates import route

_BLOCK = 1 << 22  # elements per (features x rows) work array in the surrogate search


class QuestSplitFinder:
    """Chooses QUEST splits for the :class:`TreeBuilder`. ``categorical`` maps a column
    to its number of categories; the other columns are numeric."""

    def __init__(self, X: np.ndarray, y: np.ndarray, n_classes: int, categorical: dict,
                 alpha: float, min_samples_leaf: int, max_surrogates: int):
        self.XT = np.ascontiguousarray(np.asarray(X, dtype=np.float64).T)
        self.y, self.k = y, n_classes
        self.n_codes = dict(categorical)
        p = self.XT.shape[0]
        self.numeric = np.array([j for j in range(p) if j not in self.n_codes], dtype=np.intp)
        self.alpha = alpha
        self.min_samples_leaf, self.max_surrogates = min_samples_leaf, max_surrogates
        self.crit = Gini(n_classes)
        self.ones = np.ones(len(y))
        self.total = float(len(y))

    def root(self, rows) -> NodeWork:
        rows = np.asarray(rows, dtype=np.intp)
        st = self.crit.stats(self.y, self.ones, rows)
        return NodeWork(rows, self.ones[rows], st.impurity, 0, st)

    @staticmethod
    def summarize(node: NodeWork):
        st = node.state
        return st.value, st.weight, st.distribution, st.impurity

    # -- variable selection --------------------------------------------------------

    def _numeric_block(self, rows) -> np.ndarray:
        return self.XT[np.ix_(self.numeric, rows)]  # only the node's columns are copied

    def pvalues(self, rows, block=None) -> np.ndarray:
        """First-stage p-values of every variable at a node (NaN: not testable)."""
        y = self.y[rows]
        p = np.full(self.XT.shape[0], np.nan)
        if self.numeric.size:
            V = self._numeric_block(rows) if block is None else block
            p[self.numeric] = anova_pvalues(V, y, self.k)
        for j, m in self.n_codes.items():
            x = self.XT[j, rows]
            ok = ~np.isnan(x)
            p[j] = chi2_pvalue(contingency(x[ok], y[ok], m, self.k))
        return p

    def levene(self, rows, block=None) -> np.ndarray:
        p = np.full(self.XT.shape[0], np.nan)
        if self.numeric.size:
            V = self._numeric_block(rows) if block is None else block
            p[self.numeric] = levene_pvalues(V, self.y[rows], self.k)
        return p

    def select(self, rows) -> tuple[int, str] | None:
        return self.candidates(rows)[0]

    def candidates(self, rows) -> tuple[tuple[int, str] | None, list[int]]:
        """QUEST's choice, and the variables to fall back on, in order, should the
        chosen one have no admissible split: the others by first-stage p-value."""
        block = self._numeric_block(rows) if self.numeric.size else None
        p = self.pvalues(rows, block)
        choice = select_variable(p, lambda: self.levene(rows, block), len(self.numeric),
                                 self.alpha)
        if choice is None:
            return None, []
        rest = [int(j) for j in np.argsort(p, kind="stable") if j != choice[0] and p[j] == p[j]]
        return choice, [choice[0]] + rest

    # -- split point -----------------------------------------------------------------

    def _threshold(self, v: np.ndarray, y: np.ndarray) -> float | None:
        """d for values v (present rows) of classes y: the QDA split point, or the
        midpoint of the superclass means if that leaves a side empty, then moved as few
        rows as needed to leave min_samples_leaf present rows on each side (None if no
        cut can)."""
        _, y_idx, counts = np.unique(y, return_inverse=True, return_counts=True)
        means = np.bincount(y_idx, weights=v) / counts
        in_a = superclasses(means, counts)[y_idx]
        d = split_point(v[in_a], v[~in_a])
        n_left = int(np.count_nonzero(v <= d)) if math.isfinite(d) else 0
        if not 0 < n_left < len(v):
            d = float(v[in_a].mean()) / 2 + float(v[~in_a].mean()) / 2
            n_left = int(np.count_nonzero(v <= d))
        msl, n = self.min_samples_leaf, len(v)
        if msl <= n_left <= n - msl:
            return float(d)
        # cuts between distinct values: u[i] | u[i + 1] leaves cum[i] rows on the left
        u, cnt = np.unique(v, return_counts=True)
        cum = np.cumsum(cnt)[:-1]
        ok = np.flatnonzero((cum >= msl) & (cum <= n - msl))
        if ok.size == 0:
            return None
        i = int(ok[0] if n_left < msl else ok[-1])
        a, b = float(u[i]), float(u[i + 1])
        d = a / 2 + b / 2
        return d if a <= d < b else a

    def _numeric(self, f, v, y):
        d = self._threshold(v, y)
        if d is None:
            return None
        return NumericTest(f, "<=", d, "float64"), v <= d, None

    def _categorical(self, f, v, y):
        m = self.n_codes[f]
        codes = v.astype(np.intp)
        table = contingency(codes, y, m, self.k)
        seen = np.flatnonzero(table.sum(axis=1) > 0)
        if len(seen) < 2:
            return None
        xi = np.zeros(m)
        xi[seen] = crimcoord(table[seen])
        d = self._threshold(xi[codes], y)
        if d is None:
            return None
        in_set = np.zeros(m, dtype=bool)
        in_set[seen] = xi[seen] <= d
        left = in_set[codes]
        bigger = 0 if 2 * np.count_nonzero(left) > len(left) else 1
        if bigger == 0:  # categories absent here join the larger child
            absent = np.ones(m, dtype=bool)
            absent[seen] = False
            in_set |= absent
        test = CategoricalTest(f, tuple(int(c) for c in np.flatnonzero(in_set)))
        return test, left, bigger

    # -- surrogates ------------------------------------------------------------------

    def _numeric_surrogates(self, feats, rows, t):
        """(agreement, feature, test, child_if_true, rows compared) of the best split of
        each numeric feature in ``feats`` as a stand-in for the row sides ``t``, all
        features at once: rows sorted by value (NaN last), agreement counted by prefix
        sums for "x <= c -> child 0" and for its reverse."""
        out = []
        step = max(1, _BLOCK // max(len(rows), 1))
        for s in range(0, len(feats), step):
            F = feats[s:s + step]
            V = self.XT[np.ix_(F, rows)]
            ok = ~np.isnan(V)
            n = ok.sum(axis=1)
            n_left = (ok & t).sum(axis=1)
            n_right = n - n_left
            order = np.argsort(V, axis=1, kind="stable")
            xs = np.take_along_axis(V, order, axis=1)
            cl = np.cumsum(t[order], axis=1)[:, :-1]  # sent left by the primary, first i rows
            cr = np.arange(1, len(rows)) - cl
            valid = xs[:, 1:] > xs[:, :-1]  # False next to NaN: present rows only
            fwd = np.where(valid, cl + n_right[:, None] - cr, -1)
            rev = np.where(valid, cr + n_left[:, None] - cl, -1)
            j_f, j_r = fwd.argmax(axis=1), rev.argmax(axis=1)
            r = np.arange(len(F))
            a_f, a_r = fwd[r, j_f], rev[r, j_r]
            use_f = a_f >= a_r
            agree = np.where(use_f, a_f, a_r)
            j = np.where(use_f, j_f, j_r)
            for i in np.flatnonzero(agree > np.maximum(n_left, n_right)):
                a, b = float(xs[i, j[i]]), float(xs[i, j[i] + 1])
                c = a / 2 + b / 2
                if not a <= c < b:  # adjacent doubles: the midpoint rounds onto b
                    c = a
                out.append((int(agree[i]), int(F[i]), NumericTest(int(F[i]), "<=", c, "float64"),
                            0 if use_f[i] else 1, int(n[i])))
        return out

    def _categorical_surrogate(self, g, x, t, n_left, n_right):
        m = self.n_codes[g]
        codes = x.astype(np.intp)
        L = np.bincount(codes, weights=t.astype(np.float64), minlength=m)
        R = np.bincount(codes, minlength=m) - L
        majority = 0 if n_left > n_right else 1
        go_left = (L > R) | ((L == R) & (majority == 0))
        seen = (L + R) > 0
        # the set holds the minority side, so categories not in it (unseen ones too)
        # take the majority side: "does not hold" goes to the other child
        member = seen & (go_left if majority == 1 else ~go_left)
        if not member.any():
            return None
        agree = int(np.maximum(L, R).sum())
        test = CategoricalTest(g, tuple(int(c) for c in np.flatnonzero(member)))
        return agree, test, 1 - majority

    def surrogates(self, f, rows, left) -> list[Surrogate]:
        """Up to max_surrogates stand-ins for the split (rows: those with f present), each
        better than sending every row to the majority side; most agreeing rows first
        (ties: lower feature index)."""
        found = self._numeric_surrogates(self.numeric[self.numeric != f], rows, left)
        for g in self.n_codes:
            if g == f:
                continue
            x = self.XT[g, rows]
            ok = ~np.isnan(x)
            t = left[ok]
            n_left = int(np.count_nonzero(t))
            n_right = len(t) - n_left
            cand = self._categorical_surrogate(g, x[ok], t, n_left, n_right)
            if cand is not None and cand[0] > max(n_left, n_right):
                found.append((cand[0], g, cand[1], cand[2], len(t)))
        found.sort(key=lambda c: (-c[0], c[1]))
        return [Surrogate(test, child, agree / n)
                for agree, _, test, child, n in found[:self.max_surrogates]]

    # -- the split -------------------------------------------------------------------

    def find_split(self, node: NodeWork) -> Partition | None:
        rows = node.rows
        for f in self.candidates(rows)[1]:
            x = self.XT[f, rows]
            present = ~np.isnan(x)
            search = self._categorical if f in self.n_codes else self._numeric
            found = search(f, x[present], self.y[rows[present]])
            if found is not None:
                break
        else:
            return None
        test, left_p, unseen = found
        default = 0 if 2 * np.count_nonzero(left_p) > len(left_p) else 1
        surr = self.surrogates(f, rows[present], left_p) if self.max_surrogates else []
        left = np.empty(len(rows), dtype=bool)
        left[present] = left_p
        left[~present] = route(self.XT, rows[~present], surr, default) == 0
        missing = Surrogates(tuple(surr), default) if surr else DefaultChild(default)
        children, improvement = self._children(node, left)
        return Partition(test, missing, children, improvement, unseen)

    def _children(self, node, left):
        rows = node.rows
        parts = (rows[left], rows[~left])
        st = [self.crit.stats(self.y, self.ones, r) for r in parts]
        n = len(rows)
        improvement = (n / self.total) * (node.impurity - sum(len(r) / n * s.impurity
                                                              for r, s in zip(parts, st)))
        children = [NodeWork(r, self.ones[r], s.impurity, state=s) for r, s in zip(parts, st)]
        return children, improvement


class QUESTClassifier(ClassifierMixin, Estimator):
    """QUEST classification tree (binary splits, unbiased variable selection); leaves hold
    the class frequencies of their training rows."""

    _params = ("alpha", "max_depth", "min_samples_split", "min_samples_leaf", "max_surrogates",
               "ccp_alpha", "cv_folds", "one_se_rule", "random_state")

    def __init__(self, alpha=0.05, max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 max_surrogates=5, ccp_alpha=0.0, cv_folds=10, one_se_rule=False,
                 random_state=None):
        self.alpha = alpha
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_surrogates = max_surrogates
        self.ccp_alpha = ccp_alpha
        self.cv_folds = cv_folds
        self.one_se_rule = one_se_rule
        self.random_state = random_state

    def _check_params(self):
        a = self.alpha
        if not (is_real(a) and 0.0 < a < 1.0):
            bad("alpha", a, "a number strictly between 0 and 1")
        md = self.max_depth
        if md is not None and not (is_int(md) and md >= 1):
            bad("max_depth", md, "None or an integer >= 1")
        if not (is_int(self.min_samples_split) and self.min_samples_split >= 2):
            bad("min_samples_split", self.min_samples_split, "an integer >= 2")
        if not (is_int(self.min_samples_leaf) and self.min_samples_leaf >= 1):
            bad("min_samples_leaf", self.min_samples_leaf, "an integer >= 1")
        if not (is_int(self.max_surrogates) and self.max_surrogates >= 0):
            bad("max_surrogates", self.max_surrogates, "an integer >= 0")
        rs = self.random_state
        if rs is not None and not (is_int(rs) and rs >= 0):
            bad("random_state", rs, "None or an integer >= 0 (seeds the folds of ccp_alpha=cv)")

    def fit(self, X, y, feature_names=None, categorical_features=None, categories=None):
        """Fit on ``X`` (n_samples, n_features), NaN for missing. ``categorical_features``
        lists categorical columns (indices or names) holding codes 0..m-1; ``categories``
        optionally maps such a column to its labels. There is no ``sample_weight``: the
        F, chi-square and Levene tests count rows (repeat rows to weight them); without the
        parameter, scikit-learn's tools know not to pass weights (``has_fit_parameter``)."""
        self._check_params()
        X32, names = self._check_X(X, feature_names)
        n = X32.shape[0]
        check_pruning(self, n)
        cat_labels = self._check_categorical(X32, names, categorical_features, categories)
        codes, target, fitted = self._encode_y(y, n)
        X64 = np.asarray(frames.as_numbers(X))
        X64 = X64.astype(np.float64) if X64.dtype != np.float64 else X64
        for j in cat_labels:  # the float32 check above cannot see 3.0000001
            col = X64[:, j]
            off = ~np.isnan(col) & (col != np.floor(col))
            if off.any():
                raise LearnerError(f"categorical feature {names[j]!r}: {col[off][0]!r} is not "
                                   "a category code (a whole number >= 0; NaN for missing)")
        finder = QuestSplitFinder(X64, codes, len(target.classes),
                                  {j: len(v) for j, v in cat_labels.items()}, float(self.alpha),
                                  int(self.min_samples_leaf), int(self.max_surrogates))
        msl = int(self.min_samples_leaf)
        limits = GrowthLimits(max_depth=self.max_depth,
                              min_samples_split=max(int(self.min_samples_split), 2 * msl),
                              min_samples_leaf=msl)
        builder = TreeBuilder(finder, finder.summarize, limits)
        tree = builder.build(finder.root(np.arange(n)))
        # CART's minimal cost-complexity pruning, as Loh & Shih prune QUEST trees
        self.model_, values = post_prune(
            self, X, y, None, cat_labels, tree, builder.node_values,
            lambda t: make_model(names, cat_labels, target, t, "quest", self.get_params(), n))
        self.node_values_ = tuple(values)
        self._set_fitted(fitted, names)
        return self
