"""C4.5 (release 8) classification trees, checkable against Weka's J48.

What the learner does (details and the differences from J48 in docs/learners/c45.md):

* Split choice: gain ratio among the candidates whose information gain is at least
  the average gain of all candidates; categorical features split multiway (one
  branch per category), numeric features binary ``x <= t`` with C4.5's minimum
  branch weight and the MDL charge ``log2(#cuts) / N`` on the gain.
* Thresholds are training values: the midpoint of the best cut is moved down to
  the largest value <= it in the whole training set. Numeric features are learned
  and compared in float64 (J48 reads doubles), so the IR test is
  ``x <= t`` with ``dtype="float64"``.
* Missing values: the gain is computed on the known rows and scaled by their
  fraction (rho); a row with a missing value goes down every branch with its
  weight times the branch's share of the known weight (r_v). At prediction the
  same shares become the IR ``Blend`` weights.
* After growing: collapse (a split that does not reduce training errors becomes a
  leaf), then pessimistic pruning at confidence ``confidence`` with optional
  subtree raising (:mod:`rulegen.learn.trees.c45_prune`).
* Leaves hold class probabilities (weighted class counts over their total); an
  empty leaf (no training weight) predicts its parent's distribution, as J48 does.
* An unseen category goes to the branch with the most training weight: the IR
  cannot blend on unseen values, and that branch is the blend's mode.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rulegen.errors import LearnerError
from rulegen.ir.nodes import Blend, Leaf, MultiwayTest, NumericTest, Split, Tree
from rulegen.learn import frames
from rulegen.learn.base import (
    ClassifierMixin,
    Estimator,
    bad,
    is_int,
    is_real,
    make_model,
)
from rulegen.learn.trees.c45_prune import ERROR_ESTIMATES, C45Tree, Node
from rulegen.learn.trees.c45_split import SMALL, class_totals, select_split

_PARAMS = ("confidence", "min_instances", "pruning", "subtree_raising", "collapse",
           "error_estimate", "mdl_correction")


class C45Classifier(ClassifierMixin, Estimator):
    """C4.5 decision tree classifier (J48's option names in brackets).

    confidence (-C): pruning confidence CF, in (0, 0.5]; smaller prunes more.
    min_instances (-M): a split needs two branches with at least this much weight.
    pruning (-U turns it off): pessimistic error pruning.
    subtree_raising (-S turns it off): let a split's largest branch replace it.
    collapse: before pruning, drop splits that do not lower the training error
        (J48 3.6 always does this and has no switch for it).
    error_estimate: "c45" (C4.5 release 8's normal deviate table; the default) or
        "weka" (J48's exact normal quantile); see c45_prune.added_errors.
    mdl_correction: charge numeric splits log2(#cuts)/N bits, as R8 and J48 do.
    """

    _params = _PARAMS
    # information from weight ratios, no squared sums: any finite weights (the deep-chain
    # test's weights span 1e74 to 1e250)
    _weight_range = None

    def __init__(self, confidence=0.25, min_instances=2, pruning=True, subtree_raising=True,
                 collapse=True, error_estimate="c45", mdl_correction=True):
        self.confidence = confidence
        self.min_instances = min_instances
        self.pruning = pruning
        self.subtree_raising = subtree_raising
        self.collapse = collapse
        self.error_estimate = error_estimate
        self.mdl_correction = mdl_correction

    def _check_params(self):
        cf = self.confidence
        if not (is_real(cf) and 0.0 < cf <= 0.5):
            bad("confidence", cf, "a number in (0, 0.5] (C4.5's CF; 0.25 by default)")
        m = self.min_instances
        if not (is_int(m) and m >= 1):
            bad("min_instances", m, "an integer >= 1")
        for name in ("pruning", "subtree_raising", "collapse", "mdl_correction"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                bad(name, getattr(self, name), "True or False")
        if self.error_estimate not in ERROR_ESTIMATES:
            bad("error_estimate", self.error_estimate, " or ".join(map(repr, ERROR_ESTIMATES)))

    def fit(self, X, y, sample_weight=None, feature_names=None, categorical_features=None,
            categories=None, classes=None):
        """Fit on ``X`` (n_samples, n_features), NaN for missing. ``categorical_features``
        lists the categorical columns (indices or names), whose values are codes 0..m-1;
        ``categories`` optionally maps a column to its labels (code i is ``labels[i]``)
        and so fixes its number of branches. ``classes`` optionally lists every class
        label in order, including classes y does not show (as an ARFF header declares
        them for J48): their number enters the minimum split weight, their order breaks
        ties, and ``classes_`` and the probability columns follow it."""
        X32, names = self._check_X(X, feature_names)
        n, _ = X32.shape
        cat_labels = self._check_categorical(X32, names, categorical_features, categories)
        self._check_params()
        codes, target, fitted = self._encode_y(y, n)
        if classes is not None:
            codes, target, fitted = _declare_classes(codes, target, classes)
        w, _ = self._check_weights(sample_weight, n)
        X64 = np.asarray(frames.as_numbers(X))
        X64 = X64.astype(np.float64) if X64.dtype != np.float64 else X64
        n_classes = len(target.classes)
        nominal = {j: len(labels) for j, labels in cat_labels.items()}
        tree = self._grow(X64, codes, w, n_classes, nominal)
        if self.collapse:
            tree.collapse()
        if self.pruning:
            tree.prune(bool(self.subtree_raising))
        self.model_ = make_model(names, cat_labels, target, _to_ir(tree, nominal), "c45",
                                 self.get_params(), n)
        self._set_fitted(fitted, names)
        return self

    def _grow(self, X, y, w, n_classes, nominal) -> C45Tree:
        n, p = X.shape
        # attributes with very many categories (>= 0.3 n) do not count towards the
        # average gain, unless every attribute is such
        many = [j in nominal and nominal[j] - 0.3 * n >= -SMALL for j in range(p)]
        counted = [True] * p if all(many) else [not m for m in many]
        values = {j: np.unique(X[:, j][~np.isnan(X[:, j])]) for j in range(p) if j not in nominal}
        keep_rows = bool(self.pruning and self.subtree_raising)
        tree = C45Tree(X, y, n_classes, nominal, float(self.confidence), self.error_estimate)
        tree.nodes.append(Node(np.arange(n), w.copy(), class_totals(y, w, n_classes)))
        stack = [0]
        while stack:  # depth first; node ids are creation order, fixed up in _to_ir
            node = tree.nodes[stack.pop()]
            cand = select_split(X, y, node.w, node.rows, n_classes, nominal,
                                int(self.min_instances), bool(self.mdl_correction), counted)
            if cand is None:
                continue
            threshold = None
            if cand.threshold is not None:
                threshold = _training_value(values[cand.feature], cand.threshold)
            parts = tree.set_split(node, cand.feature, threshold, node.rows, node.w)
            if not keep_rows:  # only subtree raising re-reads a split's rows
                node.rows = node.w = None
            for rows, ww in parts:
                node.children.append(len(tree.nodes))
                stack.append(len(tree.nodes))
                tree.nodes.append(Node(rows, ww, class_totals(y[rows], ww, n_classes)))
        return tree


def _declare_classes(codes, target, classes):
    """Codes, target and fitted attributes for the declared class list ``classes``."""
    declared = list(classes) if isinstance(classes, (list, tuple, np.ndarray)) else None
    if not declared or any(isinstance(c, (bool, np.bool_)) for c in declared):
        raise LearnerError(f"classes must be a non-empty list of class labels, got {classes!r}")
    labels = [int(c) if isinstance(c, (int, np.integer)) else c for c in declared]
    labels = [str(c) if isinstance(c, np.str_) else c for c in labels]
    kinds = {int if isinstance(c, int) else str if isinstance(c, str) else None for c in labels}
    if len(kinds) != 1 or None in kinds or len(set(labels)) != len(labels):
        raise LearnerError(f"classes must be distinct labels, all integers or all strings, "
                           f"got {classes!r}")
    where = {c: i for i, c in enumerate(labels)}
    absent = [c for c in target.classes if c not in where]
    if absent:
        raise LearnerError(f"y has the class {absent[0]!r}, which classes does not list "
                           f"({', '.join(map(repr, labels))})")
    remap = np.array([where[c] for c in target.classes], dtype=np.intp)
    target = replace(target, classes=tuple(labels))
    fitted = {"classes_": np.array(labels), "n_classes_": len(labels)}
    return remap[codes], target, fitted


def _training_value(values: np.ndarray, mid: float) -> float:
    """The largest training value not above the midpoint (C4.5 allows 1e-6 above it)."""
    k = int(np.searchsorted(values, mid, side="right")) - 1
    while k + 1 < len(values) and values[k + 1] - mid < SMALL:
        k += 1
    return float(values[k])


def _to_ir(tree: C45Tree, nominal: dict) -> Tree:
    """IR nodes in pre-order (children after parents, branch 0 first)."""
    order, parent, stack = [], {0: None}, [0]
    while stack:
        i = stack.pop()
        order.append(i)
        kids = tree.nodes[i].children
        for c in kids:
            parent[c] = i
        stack.extend(reversed(kids))
    new_id = {old: k for k, old in enumerate(order)}
    out = []
    for old in order:
        node = tree.nodes[old]
        total = float(node.per_class.sum())
        dist = tuple(float(v) for v in node.per_class)
        if node.is_leaf:
            source, up = node.per_class, parent[old]
            while abs(float(source.sum())) < SMALL and up is not None:
                # empty: the parent's distribution (further up only if raising emptied it too)
                source, up = tree.nodes[up].per_class, parent[up]
            s = float(source.sum())
            value = source / s if s > 0 else np.full(len(source), 1.0 / len(source))
            out.append(Leaf(value=tuple(float(v) for v in value), samples=total,
                            distribution=dist))
            continue
        f = node.feature
        if node.threshold is None:
            test = MultiwayTest(f, tuple((v,) for v in range(nominal[f])))
            unseen = int(np.argmax(node.dist.sum(axis=1)))
        else:
            test, unseen = NumericTest(f, "<=", node.threshold, "float64"), None
        out.append(Split(test=test, children=tuple(new_id[c] for c in node.children),
                         missing=Blend(tuple(float(s) for s in node.shares)), unseen=unseen,
                         samples=total, distribution=dist))
    return Tree(nodes=tuple(out))

