"""CART (binary trees; gini/entropy or squared/absolute error), scikit-learn style.

The estimators validate input, encode targets and emit the IR; the search itself
is :class:`rulegen.learn.splits.builder.NumericSplitFinder` grown by the shared
:class:`~rulegen.learn.splits.builder.TreeBuilder`, or, for numeric gini / squared-error trees on
``forest.MIN_COMPILED_WORK`` rows or more with numba installed, the random forest's compiled
grower (:mod:`rulegen.learn.compiled.cart_kernels`), which grows the same tree node for node.
Semantics follow scikit-learn 1.9:

* X is cast to float32 and learning happens on those values; values closer than
  sklearn's FEATURE_THRESHOLD (1e-7, added in float32) count as equal.
* A threshold is the float64 ``a/2 + b/2`` of two adjacent distinct float32
  values a < b, and a row goes left when ``float32(x) <= threshold``. The IR
  test says exactly that, compared in float32 (see ``float32_test``).
* Missing values (NaN), best splitter: every candidate is tried with all missing
  rows sent left and sent right, plus "all present rows left, missing right"
  (threshold +inf). If a node saw no missing value on the chosen feature,
  missing goes to the child with more training rows, ties to the right child
  (sklearn: ``missing_go_to_left = n_left > n_right``).
* Missing values, random splitter: the side for missing rows is drawn at random
  per candidate (as sklearn); with none seen, the larger child as above.
* Candidate features are visited in a random order (``random_state``) and the
  first strictly best split wins, so ties break at random as in sklearn; the
  generator is numpy's, so a seed does not reproduce sklearn's choice.

Pruning and surrogates (docs/learners/cart.md):

* ``ccp_alpha`` prunes the grown tree by minimal cost-complexity pruning, exactly as
  sklearn (see :mod:`rulegen.learn.trees.pruning`); ``ccp_alpha="cv"`` chooses it by
  ``cv_folds``-fold cross-validation, with rpart's 1-SE rule if ``one_se_rule``.
  ``ccp_alpha_`` is the value applied, ``cv_results_`` the search.
* ``missing="surrogate"`` replaces the learned missing direction by rpart's surrogate
  splits (at most ``max_surrogates`` per split), see :mod:`rulegen.learn.trees.surrogates`.
* ``node_values_`` holds every node's value as a leaf (the IR stores none on splits), so
  the fitted tree can be pruned later (``pruning.prune(est, alpha)``).

Deliberate differences: negative sample weights are refused; a node whose
target is constant has impurity exactly 0 (sklearn's one-pass variance may leave
noise above its tolerance and split it, without changing predictions).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from rulegen.learn.base import (
    ClassifierMixin,
    Estimator,
    RegressorMixin,
    bad,
    check_growth,
    is_int,
    make_model,
)
from rulegen.learn.compiled import cart_kernels
from rulegen.learn.ensembles import forest
from rulegen.learn.sklearn_api import deprecated_names
from rulegen.learn.splits.builder import GrowthLimits, NumericSplitFinder, TreeBuilder
from rulegen.learn.splits.categorical import CartSplitFinder
from rulegen.learn.splits.criteria import CLASSIFICATION_CRITERIA, REGRESSION_CRITERIA
from rulegen.learn.trees import pruning
from rulegen.learn.trees.pruning_cv import check_pruning, post_prune
from rulegen.learn.trees.surrogates import SurrogateSplitFinder

# --- estimators ---------------------------------------------------------------------

_PARAMS = ("criterion", "splitter", "max_depth", "min_samples_split", "min_samples_leaf",
           "min_weight_fraction_leaf", "max_features", "random_state", "max_leaf_nodes",
           "min_impurity_decrease", "ccp_alpha", "missing", "max_surrogates", "cv_folds",
           "one_se_rule")


class _BaseTree(Estimator):
    _params = _PARAMS
    _criteria: ClassVar[dict] = {}

    def __init__(self, criterion, splitter="best", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features=None,
                 random_state=None, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 ccp_alpha=0.0, missing="learned", max_surrogates=5, cv_folds=10,
                 one_se_rule=False):
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.ccp_alpha = ccp_alpha
        self.missing = missing
        self.max_surrogates = max_surrogates
        self.cv_folds = cv_folds
        self.one_se_rule = one_se_rule

    # -- checks ------------------------------------------------------------------

    def _check_params(self, n_samples, n_features):
        if self.criterion not in self._criteria:
            bad("criterion", self.criterion, " or ".join(map(repr, self._criteria)))
        if self.splitter not in ("best", "random"):
            bad("splitter", self.splitter, "'best' or 'random'")
        g = check_growth(self, n_samples, n_features)
        check_pruning(self, n_samples)
        if self.missing not in ("learned", "surrogate"):
            bad("missing", self.missing, "'learned' or 'surrogate'")
        ms = self.max_surrogates
        if not (is_int(ms) and ms >= 0):
            bad("max_surrogates", ms, "an integer >= 0")
        return g.min_samples_split, g.min_samples_leaf, g.max_features

    # -- fit / predict -------------------------------------------------------------

    def fit(self, X, y, sample_weight=None, feature_names=None, categorical_features=None,
            categories=None):
        """Fit on ``X`` (n_samples, n_features). ``categorical_features`` lists the columns
        (indices or names) that are categorical: their values are category codes 0..m-1
        (NaN for missing), split by subsets (see :mod:`rulegen.learn.splits.categorical`).
        ``categories`` optionally maps a column (index or name) to its labels, code i
        meaning ``labels[i]``; by default a column's labels are the codes 0..max code."""
        X32, names = self._check_X(X, feature_names)
        n, p = X32.shape
        cat_labels = self._check_categorical(X32, names, categorical_features, categories)
        mss, msl, mf = self._check_params(n, p)
        T, target, fitted = self._encode_y(y, n)
        w, weighted = self._check_weights(sample_weight, n)
        min_weight_leaf = self.min_weight_fraction_leaf * (float(w.sum()) if weighted else n)
        width = len(target.classes) if target.task == "classification" else target.n_outputs
        criterion = self._criteria[self.criterion](width)
        rng = np.random.default_rng(self.random_state)
        limits = GrowthLimits(max_depth=self.max_depth, min_samples_split=max(mss, 2 * msl),
                              min_samples_leaf=msl, min_weight_leaf=min_weight_leaf,
                              min_impurity_decrease=float(self.min_impurity_decrease),
                              max_leaf_nodes=self.max_leaf_nodes)
        grown = None
        if (not cat_labels and self.missing == "learned" and min_weight_leaf == 0
                and forest.compiled_covers(criterion, self.splitter, n)):
            grown = _grow_compiled(X32, T, w, criterion, mf, msl, limits, rng)
        if grown is not None:
            tree, node_values = grown
        else:
            tree, node_values = self._grow_numpy(X32, T, w, criterion, cat_labels, mf, msl,
                                                 limits, rng)
        self.model_, values = post_prune(
            self, X, y, sample_weight, cat_labels, tree, node_values,
            lambda t: make_model(names, cat_labels, target, t, "cart", self.get_params(), n))
        # each node's value as a leaf (the IR keeps none on splits): for pruning later
        self.node_values_ = tuple(values)
        self._set_fitted(fitted, names)
        return self

    def _grow_numpy(self, X32, T, w, criterion, cat_labels, mf, msl, limits, rng):
        finder_kw = {"splitter": self.splitter, "max_features": mf, "min_samples_leaf": msl,
                     "min_weight_leaf": limits.min_weight_leaf, "rng": rng}
        if cat_labels:
            finder = CartSplitFinder(X32, T, w, criterion,
                                     categorical={j: len(v) for j, v in cat_labels.items()},
                                     **finder_kw)
        else:
            finder = NumericSplitFinder(X32, T, w, criterion, **finder_kw)
        if self.missing == "surrogate":
            finder = SurrogateSplitFinder(finder, self.max_surrogates)
        # rows of zero weight take no part in any node (as in sklearn)
        root = finder.root(np.flatnonzero(w > 0))
        builder = TreeBuilder(finder, finder.summarize, limits)
        return builder.build(root), builder.node_values

    def cost_complexity_pruning_path(self, X, y, sample_weight=None, **fit_params):
        """scikit-learn's ``cost_complexity_pruning_path``: a copy of this estimator with
        ``ccp_alpha=0`` is fitted on (X, y) and its path returned (``ccp_alphas``,
        ``impurities``). ``fit_params`` go to ``fit`` (e.g. ``categorical_features``)."""
        est = type(self)(**{**self.get_params(), "ccp_alpha": 0.0})
        est.fit(X, y, sample_weight=sample_weight, **fit_params)
        return pruning.cost_complexity_pruning_path(est.model_)

def _grow_compiled(X32, T, w, criterion, mf, msl, limits, rng):
    """The forest's compiled grower (cart_kernels) for this one tree: the numpy finder's
    tree node for node and its node values, or None without numba."""
    if not cart_kernels.load():
        return None  # before the grower's presort, which the numpy finder would redo
    spec = forest.TreeSpec(criterion, "best", mf, msl, 0.0, limits)
    grower = forest.TreeGrower(X32, T, spec, {}, compiled=True)
    return grower.grow_compiled(w, rng)


class CARTClassifier(ClassifierMixin, _BaseTree):
    """CART classifier; leaves hold class probabilities (weighted class frequencies)."""

    _criteria = CLASSIFICATION_CRITERIA

    def __init__(self, criterion="gini", splitter="best", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features=None,
                 random_state=None, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 ccp_alpha=0.0, missing="learned", max_surrogates=5, cv_folds=10,
                 one_se_rule=False):
        super().__init__(criterion, splitter, max_depth, min_samples_split, min_samples_leaf,
                         min_weight_fraction_leaf, max_features, random_state, max_leaf_nodes,
                         min_impurity_decrease, ccp_alpha, missing, max_surrogates, cv_folds,
                         one_se_rule)

class CARTRegressor(RegressorMixin, _BaseTree):
    """CART regressor; leaves hold the weighted mean (squared_error) or sklearn's
    weighted median (absolute_error), one value per output."""

    _criteria = REGRESSION_CRITERIA

    def __init__(self, criterion="squared_error", splitter="best", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=None, random_state=None, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, ccp_alpha=0.0, missing="learned", max_surrogates=5,
                 cv_folds=10, one_se_rule=False):
        super().__init__(criterion, splitter, max_depth, min_samples_split, min_samples_leaf,
                         min_weight_fraction_leaf, max_features, random_state, max_leaf_nodes,
                         min_impurity_decrease, ccp_alpha, missing, max_surrogates, cv_folds,
                         one_se_rule)


# the names before the command line's became the Python names too
__getattr__ = deprecated_names(__name__, {"DecisionTreeClassifier": "CARTClassifier",
                                          "DecisionTreeRegressor": "CARTRegressor"})
