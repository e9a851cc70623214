"""The boosting loop shared by every boosted learner, and the estimator skeleton around it.

A boosted learner supplies a loss (:mod:`rulegen.learn.ensembles.losses`) and a *tree fitter*: a
function ``fit_tree(stage) -> (tree, out)`` that grows one IR tree for one output from the
gradients of a :class:`Stage` and returns it with its final leaf values and ``out``, the
tree's output on every training row. :func:`boost` owns everything else:

* the initial raw score (``loss.init_score`` unless the learner gives one);
* per round: ``loss.begin_round``, gradients and hessians of all rows at once, one row
  subsample (``subsample`` < 1: ``max(1, int(subsample * n))`` of the n rows of positive
  weight, drawn without replacement, seeded), then one tree per output (K per round for
  multiclass, all fitted to the gradients of the round's start, as scikit-learn and
  XGBoost do);
* raw score updates ``F[:, k] = F[:, k] + weight * out`` in float64 -- the evaluator's own
  arithmetic for ``Tree.weight`` and ``dtype="float64"``, so the training scores are
  exactly what the emitted IR computes on the training rows;
* early stopping on held-out rows, the progress callback, the training and validation loss
  of every round.

:class:`BoostingEstimator` is the fit() shared by the estimators: input checks, target
encoding, the validation split, calling :func:`boost` and assembling the IR model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rulegen.errors import LearnerError
from rulegen.ir import evaluate
from rulegen.ir.nodes import CategoricalTest, Leaf, NumericTest, Tree
from rulegen.learn.base import (
    Estimator,
    bad,
    check_progress,
    features_of,
    is_int,
    is_real,
    make_model,
)
from rulegen.learn.ensembles.losses import Loss


@dataclass
class Stage:
    """What a tree fitter sees: the round, the output it fits, the rows that grow the tree
    (the round's subsample, sorted), the gradient and hessian of that output for every
    training row (unweighted), and the current raw scores (n, K) -- read only."""

    round: int
    output: int
    rows: np.ndarray
    grad: np.ndarray
    hess: np.ndarray
    raw: np.ndarray


# (tree, each training row's output) of one stage. A fitter may also carry ``fit_round``: an
# iterable of a round's stages -> their (tree, output) pairs in output order, the same as
# fit_tree's one by one (lightgbm_style grows a round's classes on threads with it)
FitTree = Callable[[Stage], "tuple[Tree, np.ndarray]"]


@dataclass
class BoostResult:
    trees: list  # Tree, in model order: round by round, outputs 0..K-1 within a round
    base_score: np.ndarray
    n_rounds: int  # rounds kept
    train_loss: list = field(default_factory=list)  # after each fitted round
    validation_loss: list = field(default_factory=list)
    best_round: int | None = None  # 0-based, when early stopping watched a validation set


def sample_rows(rng, n: int, fraction: float) -> np.ndarray:
    """Sorted row ids of one subsample: all rows, or max(1, int(fraction * n)) without replacement."""
    if fraction >= 1.0:
        return np.arange(n)
    return np.sort(rng.choice(n, max(1, int(fraction * n)), replace=False))


def validation_split(rng, n: int, fraction: float, classes=None) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, validation rows), both sorted. With ``classes`` (codes) the split is
    stratified: each class gives round(fraction * count) rows, but always keeps one for
    training; a class with a single row stays in training."""
    perm = rng.permutation(n)
    if classes is None:
        n_val = min(max(1, round(fraction * n)), n - 1)
        return np.sort(perm[n_val:]), np.sort(perm[:n_val])
    c = np.asarray(classes)[perm]
    order = np.argsort(c, kind="stable")  # each class's rows, in random order
    counts = np.bincount(c)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    take = np.minimum(np.round(fraction * counts).astype(np.intp), np.maximum(counts - 1, 0))
    rank = np.arange(n) - np.repeat(starts, counts)  # position within its class
    is_val = np.zeros(n, dtype=bool)
    is_val[order] = rank < np.repeat(take, counts)
    return np.sort(perm[~is_val]), np.sort(perm[is_val])


def leaf_index(tree: Tree, X: np.ndarray, features) -> np.ndarray:
    """The leaf node id each row of ``X`` reaches, routed by the evaluator itself (so by
    exactly the IR's rules for thresholds, missing values and unseen categories). ``X`` may
    be float32: tests in float32 and category tests answer as on its float64 copy, which is
    made only for a tree with other tests."""
    if X.dtype != np.float64 and not all(
            isinstance(nd, Leaf) or isinstance(nd.test, CategoricalTest)
            or (isinstance(nd.test, NumericTest) and nd.test.dtype == "float32")
            for nd in tree.nodes):
        X = X.astype(np.float64)
    ids = Tree(tuple(Leaf((float(i),)) if isinstance(nd, Leaf) else nd
                     for i, nd in enumerate(tree.nodes)))
    return evaluate.tree_output(ids, X, features, 1)[:, 0].astype(np.intp)


def boost(loss: Loss, Y, w, fit_tree: FitTree, *, n_estimators: int, rng, features,
          tree_weight: float = 1.0, subsample: float = 1.0,
          base_score=None, validation=None, patience: int | None = None, tol: float = 0.0,
          keep_best: bool = False, progress=None, stop_when_constant: bool = False) -> BoostResult:
    """Run the rounds. ``Y`` (n, K) and ``w`` (n,) are the training targets and weights,
    ``features`` the IR Feature records (the evaluator routes validation rows with them);
    ``validation`` is ``(X_val float64, Y_val, w_val)`` or None; with ``patience`` the loop
    stops once that many rounds in a row failed to improve the best validation loss by more
    than ``tol``, keeping every fitted round, or only those up to the best one if
    ``keep_best``. ``progress(done, n_estimators)`` is called after every round. With
    ``stop_when_constant``, a round after the first whose trees are all single leaves is
    dropped and ends the loop (LightGBM: "no more leaves that meet the split requirements")."""
    n, K = Y.shape
    base = np.asarray(loss.init_score(Y, w) if base_score is None else base_score, dtype=np.float64)
    raw = np.empty((n, K), order=loss.score_order)
    raw[...] = base
    raw_val = None if validation is None else np.tile(base, (len(validation[0]), 1))
    result = BoostResult([], base, 0)
    live = np.flatnonzero(w > 0)  # zero-weight rows take no part in any tree
    best, since_best = np.inf, 0
    for r in range(n_estimators):
        loss.begin_round(Y, raw, w)
        grad, hess = loss.gradient_hessian(Y, raw)
        # (all of them: ``live`` itself, not a copy)
        rows = live if subsample >= 1.0 else live[sample_rows(rng, len(live), subsample)]
        stages = (Stage(r, k, rows, grad[:, k], hess[:, k], raw) for k in range(K))
        fit_round = getattr(fit_tree, "fit_round", None)
        for k, (tree, out) in enumerate(map(fit_tree, stages) if fit_round is None
                                        else fit_round(stages)):
            if tree_weight != 1.0:
                out = tree_weight * out
            raw[:, k] = raw[:, k] + out
            out = None  # (n,) float64: not held through the next tree's growth
            if raw_val is not None:
                out_val = evaluate.tree_output(tree, validation[0], features, 1)[:, 0]
                if tree_weight != 1.0:
                    out_val = tree_weight * out_val
                raw_val[:, k] = raw_val[:, k] + out_val
            result.trees.append(Tree(tree.nodes, output=k if K > 1 else None, weight=tree_weight))
        if stop_when_constant and r > 0 and all(len(t.nodes) == 1 for t in result.trees[-K:]):
            del result.trees[-K:]
            break
        result.n_rounds = r + 1
        # (raw stays as it is until the next round's gradients: round_value's promise)
        result.train_loss.append(loss.round_value(Y, raw, w))
        if progress is not None:
            progress(r + 1, n_estimators)
        if raw_val is None:
            continue
        current = loss.value(validation[1], raw_val, validation[2])
        result.validation_loss.append(current)
        if current < best - tol:
            best, since_best, result.best_round = current, 0, r
        else:
            since_best += 1
            if patience is not None and since_best >= patience:
                break
    loss.end_rounds()
    if keep_best and result.best_round is not None:
        result.n_rounds = result.best_round + 1
        result.trees = result.trees[:result.n_rounds * K]
    return result


# --- the estimator skeleton ------------------------------------------------------------


def check_fraction(name, value):
    if not (is_real(value) and 0.0 < value <= 1.0):
        bad(name, value, "a number in (0, 1]")
    return float(value)


def check_count(name, value, low=1, none_ok=False):
    if value is None and none_ok:
        return None
    if not (is_int(value) and value >= low):
        bad(name, value, ("None or " if none_ok else "") + f"an integer >= {low}")
    return int(value)


@dataclass
class TrainingData:
    """The training rows as a tree fitter needs them (after the validation split)."""

    X32: np.ndarray  # (n, p) float32, NaN missing, categorical columns as codes
    Y: np.ndarray  # (n, K) float64 loss targets
    w: np.ndarray  # (n,) sample weights
    features: tuple  # IR Feature records (categorical ones with their labels)
    categorical: dict  # column -> number of categories
    X64: np.ndarray | None = None  # (n, p) float64, for fitters with ``_float64``


class BoostingEstimator(Estimator):
    """fit() for boosted learners. A subclass sets ``_algorithm`` and implements
    ``_settings(n, p)`` (checks its parameters; returns a dict with ``n_estimators``,
    ``tree_weight``, ``subsample``, ``patience``, ``tol``, ``validation_fraction``,
    ``keep_best`` and ``base_score``: None for the loss's initial score, an array, or a
    function ``(loss, Y, w) -> array``), ``_make_loss(n_classes)`` (n_classes None for
    regression) and ``_tree_fitter(data, loss, rng, settings) -> fit_tree``."""

    _algorithm = ""
    _multi_output = False  # one regression output
    # tree fitters that read X by feature get TrainingData.X32 as the transpose of a
    # (p, n) array: their finders then use that array instead of copying X per tree
    _by_feature = False
    # tree fitters that bin the float64 values (as LightGBM does) get TrainingData.X64
    _float64 = False

    def fit(self, X, y, sample_weight=None, feature_names=None, categorical_features=None,
            categories=None, progress=None):
        """Fit on ``X`` (n_samples, n_features; NaN for missing). ``categorical_features``
        lists the categorical columns (indices or names; values are codes 0..m-1),
        ``categories`` optionally their labels; ``progress(done, total)`` is called after
        every boosting round."""
        check_progress(progress)
        X32, names, *X64 = self._check_X(X, feature_names, float64=self._float64)
        X64 = X64[0] if X64 else None
        n, p = X32.shape
        cat_labels = self._check_categorical(X32, names, categorical_features, categories)
        settings = self._settings(n, p)
        T, target, fitted = self._encode_y(y, n)
        w, _ = self._check_weights(sample_weight, n)
        if target.task == "classification":
            n_classes = len(target.classes)
            if n_classes < 2:  # nothing to boost: the constant model every learner gives
                return self._fit_constant(names, cat_labels, target, fitted, w, n)
            Y = (T[:, None] == np.arange(n_classes)).astype(np.float64)
            if n_classes == 2:
                Y = np.ascontiguousarray(Y[:, 1:])
            loss = self._make_loss(n_classes)
        else:
            if T.shape[1] != 1:
                raise LearnerError(f"boosting fits one regression output, y has {T.shape[1]}")
            Y, loss = T, self._make_loss(None)
        features = features_of(names, cat_labels)
        rng = np.random.default_rng(self.random_state)
        train = validation = None  # (None: every row trains)
        if settings["patience"] is not None:
            strata = T if target.task == "classification" else None
            train, val = validation_split(rng, n, settings["validation_fraction"], strata)
            if len(val) == 0 or not (w[val] > 0).any():
                raise LearnerError("early stopping needs validation rows: raise "
                                   "validation_fraction or give more rows")
            validation = (X32[val].astype(np.float64), Y[val], w[val])
        X32t = X32 if validation is None else X32[train]
        # C order as the fitters always got it (no copy if it is); or its transpose's
        X32t = np.ascontiguousarray(X32t.T).T if self._by_feature else np.ascontiguousarray(X32t)
        del X32  # only X32t from here: one copy of X for the whole fit
        if validation is not None:  # (without, every row trains: no copies of Y and w)
            Y, w = Y[train], w[train]
        data = TrainingData(X32t, Y, w, features,
                            {j: len(v) for j, v in cat_labels.items()},
                            None if X64 is None else X64 if validation is None else X64[train])
        if not (data.w > 0).any():
            raise LearnerError("every training row has zero weight")
        fit_tree = self._tree_fitter(data, loss, rng, settings)
        base = settings["base_score"]
        if callable(base):
            base = base(loss, data.Y, data.w)
        result = boost(loss, data.Y, data.w, fit_tree, n_estimators=settings["n_estimators"],
                       rng=rng, features=features, tree_weight=settings["tree_weight"],
                       subsample=settings["subsample"], base_score=base,
                       validation=validation, patience=settings["patience"],
                       tol=settings["tol"], keep_best=settings["keep_best"], progress=progress,
                       stop_when_constant=settings.get("stop_when_constant", False))
        self.model_ = make_model(names, cat_labels, target, result.trees, self._algorithm,
                                 self._model_params(), n, link=loss.link,
                                 base_score=tuple(float(b) for b in result.base_score),
                                 plain=self._plain_trees(result.trees))
        self._set_fitted(fitted, names)
        self.loss_ = loss  # as left by the last round (Huber: its last delta)
        self.n_estimators_ = result.n_rounds
        self.train_score_ = np.asarray(result.train_loss)
        self.validation_score_ = np.asarray(result.validation_loss)
        self.best_iteration_ = result.best_round
        return self

    def _model_params(self):
        """The parameters the model records: n_jobs decides the time only, not the model."""
        return {k: v for k, v in self.get_params().items() if k != "n_jobs"}

    def _plain_trees(self, trees) -> dict | None:
        """``validate``'s ``plain`` for ``trees`` (the model's): those whose nodes the tree
        fitter built from arrays it checked in bulk. None: every node is checked."""
        return None

    def _fit_constant(self, names, cat_labels, target, fitted, w, n):
        """One class in y: one leaf that gives it probability 1 (as CART, C4.5 and the forest
        do), no boosting rounds."""
        total = float(w.sum())
        leaf = Leaf((1.0,), samples=total, distribution=(total,), impurity=0.0)
        self.model_ = make_model(names, cat_labels, target, Tree((leaf,)), self._algorithm,
                                 self._model_params(), n)
        self._set_fitted(fitted, names)
        self.loss_ = None
        self.n_estimators_ = 0
        self.train_score_ = np.zeros(0)
        self.validation_score_ = np.zeros(0)
        self.best_iteration_ = None
        return self

    def get_depth(self) -> int:  # the deepest tree of the ensemble
        depth = 0
        for tree in self._fitted().trees:
            d = [0] * len(tree.nodes)
            for i, node in enumerate(tree.nodes):
                if not isinstance(node, Leaf):
                    for c in node.children:
                        d[c] = d[i] + 1
            depth = max(depth, max(d))
        return depth

    def get_n_leaves(self) -> int:  # over all trees
        return sum(isinstance(nd, Leaf) for t in self._fitted().trees for nd in t.nodes)
