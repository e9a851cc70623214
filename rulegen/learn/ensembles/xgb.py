"""XGBoost-style boosting: second-order trees (notes 000 and 003).

Every round computes the gradient g and hessian h of the loss at the current raw scores
(squared error: g = f - y, h = 1; binary log-loss: g = p - y, h = p(1-p); softmax:
g = p_k - y_k, h = 2 p_k (1 - p_k) as XGBoost's multi:softprob), multiplies them by the
sample weights and grows one tree per output with
:class:`~rulegen.learn.ensembles.newton.NewtonSplitFinder` (gain and leaf weight of the
note, lambda, min_child_weight, learned missing direction, column subsampling per tree and
per level, exact or hessian-quantile candidates), prunes it with gamma
(:func:`~rulegen.learn.ensembles.newton_prune.finish_tree`) and stores ``learning_rate * w*``
in the leaves (XGBoost folds eta in too; ``Tree.weight`` stays 1).

The IR: ``base_score`` is XGBoost's intercept (the weighted mean of y; the logit of the
positive rate; the symmetric log-priors ``log p_k - mean log p`` for K classes, which is what
XGBoost 3 estimates), links identity / sigmoid / softmax with one tree per class per round
(``Tree.output = k``), accumulation float64 (XGBoost accumulates in float32; we do not
reproduce that, so predictions agree with XGBoost's to float32 precision, not bit for bit,
and the IR agrees with this learner bit for bit).

Gamma follows the note: a split is kept when 1/2 [...] - gamma >= 0. XGBoost's code prunes
when the bracket *without* the 1/2 is below gamma (measured with xgboost 3.2), so XGBoost's
``gamma = 2 c`` matches ``gamma = c`` here.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.ir.nodes import Leaf
from rulegen.learn.base import (
    ClassifierMixin,
    RegressorMixin,
    bad,
    check_open_fraction,
    check_seed,
    is_real,
)
from rulegen.learn.compiled import kernels
from rulegen.learn.ensembles.boosting import (
    BoostingEstimator,
    check_count,
    check_fraction,
    leaf_index,
)
from rulegen.learn.ensembles.losses import make_loss
from rulegen.learn.ensembles.newton import (
    NewtonSplitFinder,
    quantile_bins,
    sorted_values,
)
from rulegen.learn.ensembles.newton_hist import fixed_bins
from rulegen.learn.ensembles.newton_prune import finish_tree
from rulegen.learn.sklearn_api import deprecated_names
from rulegen.learn.splits.builder import GrowthLimits, TreeBuilder, presort
from rulegen.learn.threads import FeatureThreads, threads

_PARAMS = ("n_estimators", "learning_rate", "max_depth", "reg_lambda", "gamma",
           "min_child_weight", "subsample", "colsample_bytree", "colsample_bylevel",
           "tree_method", "max_bin", "base_score", "validation_fraction",
           "early_stopping_rounds", "random_state", "n_jobs")


def _leaves(tree, finder, X32, features):
    """The leaf every row reaches: the rows that grew the tree where the finder divided them
    (by the IR's own tests: ``NewtonSplitFinder._partition``), the others by the evaluator."""
    leaf = np.full(len(X32), -1, dtype=np.intp)
    for i, nd in enumerate(tree.nodes):
        if isinstance(nd, Leaf) and finder.node_rows[i] is not None:
            leaf[finder.node_rows[i]] = i
    rest = np.flatnonzero(leaf < 0)
    if len(rest):
        leaf[rest] = leaf_index(tree, X32[rest], features)
    return leaf


def _draw(rng, feats, fraction):
    if fraction >= 1.0:
        return feats
    k = max(1, int(fraction * len(feats)))
    return np.sort(rng.choice(feats, k, replace=False))


class _NewtonBoosting(BoostingEstimator):
    _params = _PARAMS
    _algorithm = "xgboost_style"
    _by_feature = True

    def __init__(self, n_estimators=100, learning_rate=0.3, max_depth=6, reg_lambda=1.0,
                 gamma=0.0, min_child_weight=1.0, subsample=1.0, colsample_bytree=1.0,
                 colsample_bylevel=1.0, tree_method="exact", max_bin=256, base_score=None,
                 validation_fraction=0.1, early_stopping_rounds=None, random_state=None,
                 n_jobs=None):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.reg_lambda = reg_lambda
        self.gamma = gamma
        self.min_child_weight = min_child_weight
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.colsample_bylevel = colsample_bylevel
        self.tree_method = tree_method
        self.max_bin = max_bin
        self.base_score = base_score
        self.validation_fraction = validation_fraction
        self.early_stopping_rounds = early_stopping_rounds
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _settings(self, n, p):
        for name in ("learning_rate", "reg_lambda", "gamma", "min_child_weight"):
            v = getattr(self, name)
            low_ok = name != "learning_rate"
            if not (is_real(v) and math.isfinite(v) and (v >= 0 if low_ok else v > 0)):
                bad(name, v, "a finite number " + (">= 0" if low_ok else "> 0"))
        check_count("max_depth", self.max_depth, none_ok=True)
        if self.tree_method not in ("exact", "approx", "hist"):
            bad("tree_method", self.tree_method, "'exact', 'approx' or 'hist'")
        check_count("max_bin", self.max_bin, low=2)
        check_seed(self.random_state)
        threads(self.n_jobs)
        vf = check_open_fraction(self.validation_fraction, "validation_fraction")
        bs = self.base_score
        if bs is not None and not (is_real(bs) and math.isfinite(bs)):
            bad("base_score", bs, "None or a finite number")
        return {"n_estimators": check_count("n_estimators", self.n_estimators),
                "tree_weight": 1.0, "subsample": check_fraction("subsample", self.subsample),
                "colsample_bytree": check_fraction("colsample_bytree", self.colsample_bytree),
                "colsample_bylevel": check_fraction("colsample_bylevel", self.colsample_bylevel),
                "patience": check_count("early_stopping_rounds", self.early_stopping_rounds,
                                        none_ok=True),
                "tol": 0.0, "validation_fraction": float(vf), "keep_best": True,
                "base_score": None if bs is None else self._margin(float(bs))}

    def _tree_fitter(self, data, loss, rng, settings):
        w = data.w
        XT = np.ascontiguousarray(data.X32.T)  # no copy: X32 is a transposed view
        # once per fit; NaN sorts last (hist: only to cut by weighted quantiles)
        order = presort(data.X32) if self.tree_method != "hist" else None
        all_feats = np.arange(XT.shape[0])
        limits = GrowthLimits(max_depth=self.max_depth)
        lam, eta = float(self.reg_lambda), float(self.learning_rate)
        pool = FeatureThreads(threads(self.n_jobs) if kernels.enabled() else 1)  # numpy: one
        last = {}  # approx: the last tree's bins, and the rows and hessians they came from
        # the compiled quantile passes read each feature's values in sorted order
        XS = (sorted_values(XT, order) if self.tree_method == "approx" and kernels.enabled()
              else None)
        # hist: cut and bin once, from the sample weights (newton_hist)
        fixed = (fixed_bins(XT, w, int(self.max_bin), lambda: presort(data.X32))
                 if self.tree_method == "hist" else None)

        def approx_bins(rows, hw):
            # the same rows and hessians (squared error, no subsampling) give the same
            # cuts: reuse them; otherwise only features whose cuts changed are re-binned
            h_rows = hw[rows].view(np.int64)
            if ("bins" in last and np.array_equal(last["rows"], rows)
                    and np.array_equal(last["h"], h_rows)):
                return last["bins"]
            bins = quantile_bins(XT, order, rows, hw, int(self.max_bin), last.get("bins"), XS)
            last.update(bins=bins, rows=rows, h=h_rows)
            return bins

        def fit_tree(stage):
            tree_feats = _draw(rng, all_feats, settings["colsample_bytree"])
            levels = {}

            def features_at(depth):
                if depth not in levels:  # drawn when a level is first reached
                    levels[depth] = _draw(rng, tree_feats, settings["colsample_bylevel"])
                return levels[depth]

            gw, hw = stage.grad * w, stage.hess * w
            rows = stage.rows[w[stage.rows] > 0]
            search = {"order": order}
            if self.tree_method == "approx":  # candidates re-drawn every tree, as XGBoost
                search = {"bins": approx_bins(rows, hw)}
            elif fixed is not None:
                search = {"bins": fixed, "subtract": True, "leaf_depth": self.max_depth}
            finder = NewtonSplitFinder(XT, gw, hw, reg_lambda=lam,
                                       min_child_weight=float(self.min_child_weight),
                                       features_at=features_at, categorical=data.categorical,
                                       pool=pool, **search)
            tree = TreeBuilder(finder, finder.summarize, limits).build(finder.root(rows))
            leaf = _leaves(tree, finder, data.X32, data.features)
            tree, leaf, values = finish_tree(tree, leaf, rows, gw, hw, w, reg_lambda=lam,
                                             gamma=float(self.gamma), scale=eta)
            return tree, values[leaf]

        return fit_tree


class XGBoostStyleRegressor(RegressorMixin, _NewtonBoosting):
    """XGBoost-style boosting of the squared error (reg:squarederror)."""

    def _make_loss(self, n_classes):
        return make_loss("squared_error")

    @staticmethod
    def _margin(base):
        return np.array([base])


class XGBoostStyleClassifier(ClassifierMixin, _NewtonBoosting):
    """XGBoost-style boosting of the log-loss: binary:logistic for two classes,
    multi:softprob (one tree per class per round) for more. ``base_score`` is a
    probability for two classes (as XGBoost's), the raw score of every class otherwise."""

    def _make_loss(self, n_classes):
        return make_loss("log_loss", n_classes, hessian_scale=2.0)

    def _margin(self, base):
        def margin(loss, Y, w):
            if Y.shape[1] > 1:
                return np.full(Y.shape[1], base)
            if not 0.0 < base < 1.0:
                bad("base_score", base, "a probability in (0, 1) for two classes")
            return np.array([math.log(base / (1.0 - base))])
        return margin


# the names before the command line's became the Python names too
__getattr__ = deprecated_names(__name__, {"NewtonBoostingClassifier": "XGBoostStyleClassifier",
                                          "NewtonBoostingRegressor": "XGBoostStyleRegressor"})
