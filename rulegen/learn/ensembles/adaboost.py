"""AdaBoost for classification, SAMME (Zhu, Zou, Rosset & Hastie 2009), over shallow
CART trees (stumps by default) grown by the shared builder.

With K classes and row weights ``w`` (the sample weights, normalised to sum to 1),
each round m

1. grows a tree ``h_m`` on the rows weighted by ``w``;
2. ``err = sum(w * [h_m(x) != y]) / sum(w)``;
3. stops early as scikit-learn does: ``err == 0`` keeps ``h_m`` with weight 1 and stops
   (a perfect tree, further rounds would learn nothing); ``err >= 1 - 1/K`` discards
   ``h_m`` and stops (no better than guessing; an error if it is the first tree);
4. ``alpha_m = learning_rate * (log((1 - err) / err) + log(K - 1))``;
5. ``w = w * exp(alpha_m * [h_m(x) != y])`` (computed as ``exp(log w + ...)``, as
   scikit-learn does, so exact ties fall the same way), normalised to sum to 1 again.

The model predicts ``argmax_k sum_m alpha_m * [h_m(x) == k]`` (lowest class on ties).

**IR form**: aggregation ``vote``, one tree per round with ``Tree.weight = alpha_m``
and one-hot leaves (1.0 for the class the tree predicts: the most probable class of
the CART leaf, lowest index on ties; the class distribution is kept as provenance).
The evaluator adds ``alpha_m`` to the voted class in round order, in float64, and
divides by the sum of the alphas, so ``predict_proba`` is the alpha-weighted share of
votes and its argmax is exactly the prediction above. (scikit-learn's
``predict_proba`` is a softmax of a rescaled decision; it has the same argmax.)
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.errors import LearnerError
from rulegen.ir import evaluate
from rulegen.ir.nodes import Leaf, Tree
from rulegen.learn.base import (
    ClassifierMixin,
    Estimator,
    bad,
    check_progress,
    features_of,
    is_int,
    is_real,
    make_model,
)
from rulegen.learn.ensembles.forest import TreeGrower, tree_spec
from rulegen.learn.importance import impurity_importances
from rulegen.learn.splits.criteria import CLASSIFICATION_CRITERIA

_PARAMS = ("n_estimators", "learning_rate", "criterion", "splitter", "max_depth",
           "min_samples_split", "min_samples_leaf", "min_weight_fraction_leaf", "max_features",
           "max_leaf_nodes", "min_impurity_decrease", "random_state")


def one_hot(tree: Tree, n_classes: int) -> Tree:
    """The tree with each leaf's value replaced by the one-hot vector of its class."""
    nodes = []
    for node in tree.nodes:
        if isinstance(node, Leaf):
            k = int(np.argmax(node.value))
            node = Leaf(tuple(1.0 if i == k else 0.0 for i in range(n_classes)), node.samples,
                        node.distribution, node.impurity)
        nodes.append(node)
    return Tree(tuple(nodes))


class AdaBoostClassifier(ClassifierMixin, Estimator):
    """SAMME AdaBoost over CART trees of depth ``max_depth`` (stumps by default)."""

    _params = _PARAMS

    def __init__(self, n_estimators=50, learning_rate=1.0, criterion="gini", splitter="best",
                 max_depth=1, min_samples_split=2, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_features=None, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, random_state=None):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None, feature_names=None, categorical_features=None,
            categories=None, progress=None):
        """Fit on ``X`` (n_samples, n_features); arguments as
        :meth:`rulegen.learn.trees.cart.CARTClassifier.fit`. ``progress(done, total)`` is
        called after each round when given (``total`` is ``n_estimators``; an early stop
        ends the calls before it)."""
        check_progress(progress)
        X32, names = self._check_X(X, feature_names)
        n, p = X32.shape
        cat_labels = self._check_categorical(X32, names, categorical_features, categories)
        ne, lr = self.n_estimators, self.learning_rate
        if not (is_int(ne) and ne >= 1):
            bad("n_estimators", ne, "an integer >= 1")
        if not (is_real(lr) and lr > 0 and math.isfinite(lr)):
            bad("learning_rate", lr, "a finite number > 0")
        T, target, fitted = self._encode_y(y, n)
        w, _ = self._check_weights(sample_weight, n)
        K = len(target.classes)
        spec = tree_spec(self, n, p, CLASSIFICATION_CRITERIA, K)
        X64 = np.asarray(X32, dtype=np.float64)  # trees test float32(x): the same answers
        features = features_of(names, cat_labels)
        grower = TreeGrower(X32, T, spec, {j: len(v) for j, v in cat_labels.items()})
        rng = np.random.default_rng(self.random_state)
        w = w / w.sum()
        trees, alphas, errors = [], [], []
        total = 1.0
        for m in range(ne):
            tree = one_hot(grower.grow(w, rng), K)
            h = np.argmax(evaluate.tree_output(tree, X64, features, K), axis=1)
            wrong = h != T
            err = float((w * wrong).sum() / w.sum())  # numpy's average, as scikit-learn
            if err <= 0.0:
                trees.append(tree)
                alphas.append(1.0)
                errors.append(0.0)
            elif err >= 1.0 - 1.0 / K:
                if not trees:
                    raise LearnerError(
                        f"the first tree's weighted error {err:.4g} is no better than guessing "
                        f"among {K} classes (1 - 1/K = {1 - 1 / K:.4g}); AdaBoost cannot start")
                break
            else:
                alpha = float(lr) * (math.log((1.0 - err) / err) + math.log(K - 1.0))
                trees.append(tree)
                alphas.append(alpha)
                errors.append(err)
                # in the log domain, as scikit-learn: the same weights to the last bit, so
                # exact ties between candidate splits fall the same way; zeros stay zero
                with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                    w = np.exp(np.log(w) + alpha * wrong)
                    total = float(w.sum())
                    w = w / total
            if progress is not None:
                progress(m + 1, ne)
            if errors[-1] == 0.0 or not (math.isfinite(total) and total > 0):
                break  # a perfect tree, or weights that overflowed (as scikit-learn)
        trees = [Tree(t.nodes, weight=a) for t, a in zip(trees, alphas)]
        self.model_ = make_model(names, cat_labels, target, trees, "adaboost", self.get_params(),
                                 n, aggregation="vote")
        self._set_fitted(fitted, names)
        self.estimator_weights_ = np.asarray(alphas)
        self.estimator_errors_ = np.asarray(errors)
        self.n_estimators_ = len(trees)
        self.feature_importances_ = impurity_importances(self.model_, weights=alphas)
        return self

    def decision_function(self, X) -> np.ndarray:
        """``D_k = sum_m alpha_m * [h_m(x) == k]`` per class, shape (n_samples, n_classes), the
        alphas added in round order (the IR's raw score is this over the sum of the alphas).
        For two classes, scikit-learn's shape: ``D_1 - D_0``, (n_samples,), positive for
        ``classes_[1]``."""
        X = self._rows(X)
        out = np.zeros((X.shape[0], len(self.classes_)))
        for tree in self.model_.trees:
            c = evaluate.tree_output(tree, X, self.model_.features, out.shape[1])
            out[np.arange(len(X)), np.argmax(c, axis=1)] += tree.weight
        return out[:, 1] - out[:, 0] if out.shape[1] == 2 else out
