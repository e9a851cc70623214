"""Gradient boosting, first order (Friedman 2001; scikit-learn's GradientBoosting*).

Each round fits, per output, a CART regression tree (squared error, the shared
:class:`~rulegen.learn.splits.builder.TreeBuilder` with scikit-learn's split semantics) to the
negative gradient of the loss on the round's subsample, then replaces every leaf value by the
loss's line search over the subsample rows in that leaf (:meth:`Loss.line_search`): the mean
residual (squared error), the median residual (absolute error), Friedman's Huber step, one
Newton step ``sum(w (y - p)) / sum(w p (1 - p))`` for the log-loss, and ``(K-1)/K`` times
that for the softmax, as scikit-learn does. Trees enter the IR with ``Tree.weight =
learning_rate`` and the initial score as ``base_score`` (mean, median, logit of the positive
rate, symmetric log-priors); binary log-loss has the sigmoid link, multiclass softmax with
one tree per class per round (``Tree.output = k``). Accumulation is float64.

Categorical columns are split by category subsets exactly as CART does
(:mod:`rulegen.learn.splits.categorical`); missing values as CART (both sides tried; a node that saw
none sends them to the child with more rows).

Differences from scikit-learn: early stopping uses the rule of :func:`boosting.boost` (stop
after ``n_iter_no_change`` rounds without beating the best validation loss by ``tol``) and
its own seeded split; scikit-learn's random feature order for exact ties and its subsample
draw come from a different generator, so with ``subsample < 1`` or tied candidate splits the
trees differ. Out-of-bag rows are not part of the subsample's tree at all (scikit-learn keeps
them at weight 0, which can move a threshold between two training values).
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.ir.nodes import Leaf, Tree
from rulegen.learn.base import (
    ClassifierMixin,
    RegressorMixin,
    bad,
    check_growth,
    check_open_fraction,
    is_real,
)
from rulegen.learn.ensembles.boosting import (
    BoostingEstimator,
    check_count,
    check_fraction,
    leaf_index,
)
from rulegen.learn.ensembles.losses import (
    CLASSIFICATION_LOSSES,
    REGRESSION_LOSSES,
    make_loss,
)
from rulegen.learn.splits.builder import (
    GrowthLimits,
    NumericSplitFinder,
    TreeBuilder,
    missing_rows,
    presort,
    presorted_subset,
)
from rulegen.learn.splits.categorical import CartSplitFinder
from rulegen.learn.splits.criteria import SquaredError

# presorted orders (features x rows) from which trees divide them in place: 4 MB of int32
IN_PLACE_MIN = 1 << 20

_PARAMS = ("loss", "learning_rate", "n_estimators", "subsample", "max_depth",
           "min_samples_split", "min_samples_leaf", "min_weight_fraction_leaf", "max_features",
           "max_leaf_nodes", "min_impurity_decrease", "validation_fraction",
           "n_iter_no_change", "tol", "random_state")


def set_leaf_values(tree: Tree, leaf_ids, values) -> Tree:
    """``tree`` with leaf ``leaf_ids[i]`` holding the scalar ``values[i]``."""
    nodes = list(tree.nodes)
    for nid, v in zip(leaf_ids, values):
        old = nodes[nid]
        nodes[nid] = Leaf((float(v),), samples=old.samples, impurity=old.impurity)
    return Tree(tuple(nodes))


class _GradientBoosting(BoostingEstimator):
    _params = _PARAMS
    _algorithm = "gradient_boosting"
    _losses: tuple = ()
    _by_feature = True

    def __init__(self, loss, learning_rate=0.1, n_estimators=100, subsample=1.0, max_depth=3,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=None, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 validation_fraction=0.1, n_iter_no_change=None, tol=1e-4, random_state=None):
        self.loss = loss
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state

    def _settings(self, n, p):
        if self.loss not in self._losses:
            bad("loss", self.loss, " or ".join(map(repr, self._losses)))
        lr = self.learning_rate
        if not (is_real(lr) and 0.0 < lr and math.isfinite(lr)):
            bad("learning_rate", lr, "a finite number > 0")
        g = check_growth(self, n, p)
        tol = self.tol
        if not (is_real(tol) and tol >= 0.0 and math.isfinite(tol)):
            bad("tol", tol, "a finite number >= 0")
        vf = check_open_fraction(self.validation_fraction, "validation_fraction")
        return {"n_estimators": check_count("n_estimators", self.n_estimators),
                "tree_weight": float(lr), "subsample": check_fraction("subsample", self.subsample),
                "patience": check_count("n_iter_no_change", self.n_iter_no_change, none_ok=True),
                "tol": float(tol), "validation_fraction": float(vf), "keep_best": False,
                "base_score": None, "min_samples_split": g.min_samples_split,
                "min_samples_leaf": g.min_samples_leaf,
                "max_features": g.max_features}

    def _tree_fitter(self, data, loss, rng, settings):
        msl, mf = settings["min_samples_leaf"], settings["max_features"]
        w = data.w
        criterion = SquaredError(1)
        finder_class = CartSplitFinder if data.categorical else NumericSplitFinder
        extra = {"categorical": data.categorical} if data.categorical else {}
        order = presort(data.X32)  # each feature sorted once, filtered for every tree
        n = len(w)
        mask = np.zeros(n, dtype=bool)
        # every tree's splits reorder its root's presorted orders in place (in_place below):
        # with all rows that is ``order`` itself, restored after the tree (no copy of it).
        # Not with categorical columns: CartSplitFinder divides a node for its best numeric
        # split before it compares it with the best categorical one. Nor on small data,
        # where copies cost little memory and less time (the same trees either way)
        in_place = not data.categorical and order.size >= IN_PLACE_MIN
        missing = missing_rows(np.asarray(data.X32).T)  # the same for every tree's finder

        def fit_tree(stage):
            rows = stage.rows  # sorted, all of positive weight
            if len(rows) == n:
                wt, S = w, order  # (not reordered unless in place, then restored)
            else:
                wt = np.zeros_like(w)
                wt[rows] = w[rows]  # the tree sees only the subsample
                S = presorted_subset(order, mask, rows)
            # as scikit-learn: a fraction of the weight the tree is grown on
            min_weight_leaf = self.min_weight_fraction_leaf * float(wt.sum())
            limits = GrowthLimits(max_depth=self.max_depth,
                                  min_samples_split=max(settings["min_samples_split"], 2 * msl),
                                  min_samples_leaf=msl, min_weight_leaf=min_weight_leaf,
                                  min_impurity_decrease=float(self.min_impurity_decrease),
                                  max_leaf_nodes=self.max_leaf_nodes)
            finder = finder_class(data.X32, -stage.grad[:, None], wt, criterion, splitter="best",
                                  max_features=mf, min_samples_leaf=msl,
                                  min_weight_leaf=min_weight_leaf, rng=rng, in_place=in_place,
                                  leaf_depth=self.max_depth, missing=missing, **extra)
            root = finder.root(rows, S)
            reached = []  # every node's rows, by node id (the builder summarizes in id order)
            tree = TreeBuilder(finder, _recording(finder.summarize, reached.append),
                               limits).build(root)
            if in_place and S is order:
                finder.restore()
            del root, finder
            if len(rows) == n:  # the leaves' rows are every row: no need to route them again
                leaf = np.empty(n, dtype=np.intp)
                for nid, nd in enumerate(tree.nodes):
                    if isinstance(nd, Leaf):
                        leaf[reached[nid]] = nid
            else:
                leaf = leaf_index(tree, data.X32, data.features)
            del reached
            ids = np.flatnonzero([isinstance(nd, Leaf) for nd in tree.nodes])
            compact = np.zeros(len(tree.nodes), dtype=np.intp)
            compact[ids] = np.arange(len(ids))
            k = stage.output
            values = loss.line_search(data.Y[rows, k], stage.raw[rows, k], stage.grad[rows],
                                      stage.hess[rows], w[rows], compact[leaf[rows]], len(ids))
            full = np.zeros(len(tree.nodes))
            full[ids] = values
            return set_leaf_values(tree, ids, values), full[leaf]

        return fit_tree


def _recording(summarize, record):
    """``summarize`` that also records each node's rows."""
    def summarize_and_record(node):
        record(node.rows)
        return summarize(node)
    return summarize_and_record


class GradientBoostingRegressor(RegressorMixin, _GradientBoosting):
    """Gradient boosting for regression: loss squared_error, absolute_error or huber
    (``alpha``: the quantile of |residual| that sets Huber's delta)."""

    _params = _PARAMS + ("alpha",)
    _losses = REGRESSION_LOSSES

    def __init__(self, loss="squared_error", learning_rate=0.1, n_estimators=100, subsample=1.0,
                 max_depth=3, min_samples_split=2, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_features=None, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, validation_fraction=0.1, n_iter_no_change=None,
                 tol=1e-4, random_state=None, alpha=0.9):
        super().__init__(loss, learning_rate, n_estimators, subsample, max_depth,
                         min_samples_split, min_samples_leaf, min_weight_fraction_leaf,
                         max_features, max_leaf_nodes, min_impurity_decrease,
                         validation_fraction, n_iter_no_change, tol, random_state)
        self.alpha = alpha

    def _settings(self, n, p):
        if not (is_real(self.alpha) and 0.0 < self.alpha < 1.0):
            bad("alpha", self.alpha, "a number in (0, 1)")
        return super()._settings(n, p)

    def _make_loss(self, n_classes):
        return make_loss(self.loss, alpha=float(self.alpha))


class GradientBoostingClassifier(ClassifierMixin, _GradientBoosting):
    """Gradient boosting for classification with the log-loss: one tree per round and a
    sigmoid link for two classes, one tree per class per round and softmax for more."""

    _losses = CLASSIFICATION_LOSSES

    def __init__(self, loss="log_loss", learning_rate=0.1, n_estimators=100, subsample=1.0,
                 max_depth=3, min_samples_split=2, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_features=None, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, validation_fraction=0.1, n_iter_no_change=None,
                 tol=1e-4, random_state=None):
        super().__init__(loss, learning_rate, n_estimators, subsample, max_depth,
                         min_samples_split, min_samples_leaf, min_weight_fraction_leaf,
                         max_features, max_leaf_nodes, min_impurity_decrease,
                         validation_fraction, n_iter_no_change, tol, random_state)

    def _make_loss(self, n_classes):
        return make_loss(self.loss, n_classes)
