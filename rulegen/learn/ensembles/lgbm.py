"""LightGBM-style boosting: histogram split finding on binned features, leaf-wise growth,
done as LightGBM does it (its trees, thresholds and leaf values, bit for bit, on the data of
tests/test_lgbm_parity.py).

Every round computes LightGBM's gradients and hessians at the current raw scores, rounded to
float32 as LightGBM keeps them and weighted its way (:mod:`rulegen.learn.ensembles.lgbm_losses`:
regression L2; binary log-loss; softmax with hessian ``K/(K-1) p (1-p)``), and grows one tree
per output:

* features are binned once per fit with LightGBM's rules from the float64 values
  (:mod:`rulegen.learn.splits.binning`: ``max_bin``, ``min_data_in_bin``, zero's own bin, one
  missing bin, categories by code);
* splits come from per-node gradient/hessian histograms with the parent-minus-sibling trick
  (:mod:`rulegen.learn.splits.histogram`) and LightGBM's scans with its arithmetic
  (:mod:`rulegen.learn.splits.histogram_scan`), gain ``GL^2/(HL+l) + GR^2/(HR+l) - G^2/(H+l)``;
* growth is **leaf-wise**: the shared :class:`~rulegen.learn.splits.builder.TreeBuilder` in best-first
  mode always splits the leaf with the largest gain, until ``num_leaves`` leaves, no split
  gains more than ``min_split_gain``, or ``max_depth``;
* leaves hold ``learning_rate * -G/(H+l)`` from the sums LightGBM's split computed (LightGBM
  folds the shrinkage into the leaves too; ``Tree.weight`` stays 1); a tree that never
  splits outputs 0, as LightGBM's.

The IR: ``base_score`` is LightGBM's initial score (``boost_from_average``: the mean of the
float32 labels; the logit of the positive rate; ``log p_k`` per class -- LightGBM folds it
into the first round's leaves, the IR keeps it apart: the same additions), links identity /
sigmoid / softmax, one tree per class per round (``Tree.output = k``), accumulation float64.
A numeric split between bins b and b+1 is LightGBM's ``x <= bound_b`` in double (``x <
-ZERO`` for the bound -ZERO, see :mod:`rulegen.learn.splits.binning`), +inf for "every value left,
missing right"; NaN goes the learned way for a feature with a NaN bin, where 0 goes for the
others. The booster's own training scores (``train_raw_``, accumulated from the rows as the
bins divided them, never from the IR) equal ``evaluate.raw_scores`` on the training rows bit
for bit.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.learn import threads as pool
from rulegen.learn.base import (
    ClassifierMixin,
    RegressorMixin,
    bad,
    check_open_fraction,
    check_seed,
    is_real,
)
from rulegen.learn.compiled import lgbm_kernels
from rulegen.learn.ensembles.boosting import (
    BoostingEstimator,
    check_count,
    check_fraction,
)
from rulegen.learn.ensembles.lgbm_losses import (
    LgbBinaryLogLoss,
    LgbSoftmaxLoss,
    LgbSquaredError,
)
from rulegen.learn.splits.binning import bin_features
from rulegen.learn.splits.builder import GrowthLimits, TreeBuilder
from rulegen.learn.splits.histogram import HistogramSplitFinder, SplitParams

_PARAMS = ("n_estimators", "learning_rate", "num_leaves", "max_depth", "min_child_samples",
           "min_child_weight", "reg_lambda", "min_split_gain", "max_bin", "subsample",
           "colsample_bytree", "cat_smooth", "cat_l2", "max_cat_threshold",
           "min_data_per_group", "max_cat_to_onehot", "min_data_in_bin", "validation_fraction",
           "early_stopping_rounds", "random_state", "n_jobs")


class _LightGBMStyle(BoostingEstimator):
    _params = _PARAMS
    _algorithm = "lightgbm_style"
    _float64 = True  # bins from the float64 values, as LightGBM's

    def __init__(self, n_estimators=100, learning_rate=0.1, num_leaves=31, max_depth=None,
                 min_child_samples=20, min_child_weight=1e-3, reg_lambda=0.0, min_split_gain=0.0,
                 max_bin=255, subsample=1.0, colsample_bytree=1.0, cat_smooth=10.0, cat_l2=10.0,
                 max_cat_threshold=32, min_data_per_group=100, max_cat_to_onehot=4,
                 min_data_in_bin=3, validation_fraction=0.1, early_stopping_rounds=None,
                 random_state=None, n_jobs=None):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_child_samples = min_child_samples
        self.min_child_weight = min_child_weight
        self.reg_lambda = reg_lambda
        self.min_split_gain = min_split_gain
        self.max_bin = max_bin
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.cat_smooth = cat_smooth
        self.cat_l2 = cat_l2
        self.max_cat_threshold = max_cat_threshold
        self.min_data_per_group = min_data_per_group
        self.max_cat_to_onehot = max_cat_to_onehot
        self.min_data_in_bin = min_data_in_bin
        self.validation_fraction = validation_fraction
        self.early_stopping_rounds = early_stopping_rounds
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None, feature_names=None, categorical_features=None,
            categories=None, progress=None):
        """As :meth:`BoostingEstimator.fit`; also sets ``train_raw_``: the raw scores of the
        training rows as the booster accumulated them (None with early stopping)."""
        self._raw = self._grower = None
        super().fit(X, y, sample_weight=sample_weight, feature_names=feature_names,
                    categorical_features=categorical_features, categories=categories,
                    progress=progress)
        # boost()'s own scores, which it updates in place tree by tree with each tree's
        # ``out``: the booster's, as the bins divided the rows
        raw = self._raw
        self.train_raw_ = None if self.early_stopping_rounds is not None or raw is None else raw.copy()
        del self._raw, self._grower
        return self

    def _plain_trees(self, trees):
        """The trees the compiled grower built from arrays it checked (validate's ``plain``):
        boost() keeps each tree's nodes, in a Tree of its own."""
        if self._grower is None:
            return None
        plain = {}
        for i, t in enumerate(trees):
            entry = self._grower.plain.get(id(t.nodes))
            if entry is not None and entry[0] is t.nodes:
                plain[i] = entry[1:]
        return plain

    def _settings(self, n, p):
        lr = self.learning_rate
        if not (is_real(lr) and lr > 0 and math.isfinite(lr)):
            bad("learning_rate", lr, "a finite number > 0")
        for name in ("min_child_weight", "reg_lambda", "min_split_gain", "cat_smooth", "cat_l2"):
            v = getattr(self, name)
            if not (is_real(v) and v >= 0 and math.isfinite(v)):
                bad(name, v, "a finite number >= 0")
        check_count("num_leaves", self.num_leaves, low=2)
        check_count("max_depth", self.max_depth, none_ok=True)
        check_count("min_child_samples", self.min_child_samples, low=0)
        check_count("max_bin", self.max_bin, low=2)
        check_count("max_cat_threshold", self.max_cat_threshold)
        check_count("min_data_per_group", self.min_data_per_group, low=0)
        check_count("max_cat_to_onehot", self.max_cat_to_onehot, low=0)
        check_count("min_data_in_bin", self.min_data_in_bin)
        check_seed(self.random_state)
        pool.threads(self.n_jobs)
        vf = check_open_fraction(self.validation_fraction, "validation_fraction")
        return {"n_estimators": check_count("n_estimators", self.n_estimators),
                "tree_weight": 1.0, "subsample": check_fraction("subsample", self.subsample),
                "colsample_bytree": check_fraction("colsample_bytree", self.colsample_bytree),
                "patience": check_count("early_stopping_rounds", self.early_stopping_rounds,
                                        none_ok=True),
                "tol": 0.0, "validation_fraction": float(vf), "keep_best": True,
                "stop_when_constant": True,  # as LightGBM's boosting
                "base_score": None}

    def _tree_fitter(self, data, loss, rng, settings):
        w = data.w
        n, p = data.X32.shape
        bins = bin_features(data.X64, data.categorical, int(self.max_bin), rng=rng,
                            min_data_in_bin=int(self.min_data_in_bin),
                            min_data_in_leaf=int(self.min_child_samples))
        params = SplitParams(float(self.reg_lambda), int(self.min_child_samples),
                             float(self.min_child_weight), float(self.min_split_gain),
                             float(self.cat_smooth), float(self.cat_l2),
                             int(self.max_cat_threshold), int(self.min_data_per_group),
                             int(self.max_cat_to_onehot))
        limits = GrowthLimits(max_depth=self.max_depth,
                              min_samples_split=max(2, 2 * int(self.min_child_samples)),
                              max_leaf_nodes=int(self.num_leaves))
        eta = float(self.learning_rate)
        frac = settings["colsample_bytree"]
        all_feats = np.arange(p)
        fit_cache = {}  # what every tree shares: the layout, the root's row counts
        positive = bool(np.all(w > 0))
        # with numba, a whole tree in one compiled call: the same tree (lgbm_kernels)
        grower = (lgbm_kernels.TreeGrower(bins, params, self.num_leaves, self.max_depth, eta, w)
                  if lgbm_kernels.available() else None)
        self._grower = grower

        def prepare(stage):
            """(the grower's job or None for the builder's path, the rows, the features): a
            tree's feature draw and rows, made in class order whatever runs the trees."""
            feats = all_feats
            if frac < 1.0:  # LightGBM's feature_fraction: a new draw for every tree
                feats = np.sort(rng.choice(p, max(1, int(frac * p)), replace=False))
            gw, hw = stage.grad, stage.hess  # weighted already (lgbm_losses)
            rows = stage.rows if positive else stage.rows[w[stage.rows] > 0]
            self._raw = stage.raw  # (read after boost() ends: a copy per tree costs a pass)
            ctx = None if grower is None else grower.context(feats)
            if ctx is not None and ctx[-1] <= lgbm_kernels.POOL_LIMIT:
                return grower.start(ctx, rows, gw, hw), rows, feats
            return None, rows, feats

        def fit_tree(stage, prepared=None):
            job, rows, feats = prepare(stage) if prepared is None else prepared
            if job is not None:
                if prepared is None:
                    grower.run(job, 0)
                return grower.finish(job)
            finder = HistogramSplitFinder(bins, feats, stage.grad, stage.hess, w, params,
                                          scale=eta, fit_cache=fit_cache)
            tree = TreeBuilder(finder, finder.summarize, limits).build(finder.root(rows))
            out = finder.leaf_values(tree, n)
            finder.release()
            return tree, out

        def fit_round(stages):
            """The trees of one round's classes, ``n_jobs`` at a time on threads (each its
            own grower buffers), handed on in class order: the same trees as one by one."""
            stages = list(stages)
            for b in range(0, len(stages), n_threads):
                batch = [(stage, prepare(stage)) for stage in stages[b:b + n_threads]]
                jobs = [prep[0] for _, prep in batch if prep[0] is not None]
                pool.run_all([lambda job=job, slot=slot: grower.run(job, slot)
                              for slot, job in enumerate(jobs)], n_threads)
                for stage, prep in batch:
                    yield fit_tree(stage, prep)

        n_threads = pool.threads(self.n_jobs) if grower is not None else 1
        if n_threads > 1 and data.Y.shape[1] > 1 and n * p >= pool.MIN_CELLS:
            fit_tree.fit_round = fit_round
        return fit_tree


class LightGBMStyleRegressor(RegressorMixin, _LightGBMStyle):
    """LightGBM-style boosting of the squared error (objective=regression)."""

    def _make_loss(self, n_classes):
        return LgbSquaredError()


class LightGBMStyleClassifier(ClassifierMixin, _LightGBMStyle):
    """LightGBM-style boosting of the log-loss: binary (sigmoid) for two classes, multiclass
    softmax (one tree per class per round, hessian ``K/(K-1) p (1-p)`` as LightGBM) for more."""

    def _make_loss(self, n_classes):
        return LgbBinaryLogLoss() if n_classes == 2 else LgbSoftmaxLoss(n_classes)
