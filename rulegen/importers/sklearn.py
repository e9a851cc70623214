"""Import fitted scikit-learn tree models from the live estimator objects (never unpickling).

    from rulegen.importers.sklearn import from_sklearn
    model = from_sklearn(fitted_estimator, feature_names=None)

Supported (scikit-learn 1.9): ``DecisionTree*`` / ``ExtraTree*``, ``RandomForest*`` /
``ExtraTrees*``, ``GradientBoosting*``, ``HistGradientBoosting*`` (in
:mod:`rulegen.importers.sklearn_hist`) and ``AdaBoostClassifier``, alone or at the end of a
``Pipeline`` of encoders and imputers (:mod:`rulegen.importers.sklearn_pipeline`). What each
maps to, and where the IR reproduces scikit-learn bit for bit and where it cannot:

* **Trees** compare ``float32(x) <= threshold`` (threshold float64, ``inf`` for "missing
  right, everything present left"); that is the float32 IR test of
  :func:`rulegen.learn.splits.builder.float32_test`, exact for every input. NaN goes to
  ``missing_go_to_left`` (scikit-learn stores it on every node; a node that saw no NaN in
  training sends NaN to the child with more training rows, ties right). Classifier leaves
  are ``tree_.value`` rows, which ``predict_proba`` returns as they are (already fractions).
* **Forests** add ``predict_proba`` / ``predict`` of each tree in order into zeros and
  divide by the number of trees: aggregation "mean", bit for bit (with ``n_jobs=1``; with
  several jobs scikit-learn's own summation order is not deterministic).
* **GradientBoosting**: ``raw = init + sum(learning_rate * value)``, per tree
  ``out = out + lr * value`` in float64: ``Tree.weight = learning_rate``, bit for bit. The
  constant of the init estimator (a ``Dummy*``, or ``"zero"``) is computed by
  scikit-learn's own ``_init_raw_predictions``. Links: log-loss binary -> sigmoid (scipy's
  ``expit`` is ``1 / (1 + exp(-x))``, bit for bit), multiclass -> softmax, regression
  losses -> identity. The exponential loss has ``p = expit(2 * raw)``: the IR model is
  scaled by 2 (base and weights; exact, a power of two), so probabilities are bit for bit
  and the IR's raw score is exactly ``2 * decision_function``. scikit-learn rejects NaN
  for GradientBoosting; the IR sends it where each fitted tree's ``predict`` would.
  A binary classifier's ``predict`` is ``raw >= 0``, the IR's the larger probability
  (class 0 on a tie): they differ only for ``0 <= raw <= 1.67e-16`` (``expit`` gives 0.5).
* **Softmax / exp links** use numpy's SIMD ``exp`` (and, from 8 classes, numpy's pairwise
  sum) in scikit-learn, the C library's ``exp`` and a left-to-right sum in the IR: those
  outputs may differ in the last bits (a few ulp); raw scores stay bit for bit.
* **AdaBoostClassifier** (SAMME): ``decision = sum_t w_t * code_t / sum(w)``, ``code`` = 1
  for the tree's class, ``-1/(K-1)`` otherwise; ``proba = softmax(decision / (K-1))``
  (binary: ``sigmoid(decision)``). The IR has no final division, so the normalisation is
  folded into the tree weights (``w_t / W / (K-1)``; binary ``2 * w_t / W`` with leaves
  +-1): raw scores and probabilities agree to a few ulp, not bit for bit, and the IR's
  raw score is ``decision / (K-1)`` for multiclass, ``decision`` for binary.

Class labels come from ``classes_`` (numpy scalars become ``int`` / ``str``; booleans and
integral floats become ``int``, other floats are unsupported), feature names
from the ``feature_names`` argument, else ``feature_names_in_``, else ``x0, x1, ...``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from rulegen.errors import RulegenError, UnsupportedFeatureError
from rulegen.ir.nodes import (
    DefaultChild,
    Feature,
    Leaf,
    Model,
    Node,
    Provenance,
    Split,
    Target,
    Tree,
)
from rulegen.ir.validate import validate
from rulegen.learn.splits.builder import float32_test

WHO = "rulegen IR"  # the "target" named by UnsupportedFeatureError messages

SUPPORTED = ("DecisionTreeClassifier, DecisionTreeRegressor, ExtraTreeClassifier, "
             "ExtraTreeRegressor, RandomForestClassifier, RandomForestRegressor, "
             "ExtraTreesClassifier, ExtraTreesRegressor, GradientBoostingClassifier, "
             "GradientBoostingRegressor, HistGradientBoostingClassifier, "
             "HistGradientBoostingRegressor, AdaBoostClassifier")


def unsupported(what: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(WHO, what)


# --- entry point ------------------------------------------------------------------------


def from_sklearn(estimator, feature_names=None) -> Model:
    """The IR of a fitted scikit-learn tree model (see the module docstring)."""
    try:
        from sklearn import ensemble, tree
    except ImportError as exc:  # pragma: no cover - the estimator itself needs sklearn
        raise RulegenError("importing a scikit-learn model needs scikit-learn installed") from exc
    kind = type(estimator).__name__
    from sklearn.pipeline import Pipeline
    if isinstance(estimator, Pipeline):
        from rulegen.importers.sklearn_pipeline import from_pipeline
        return from_pipeline(estimator, feature_names)
    trees = (tree.DecisionTreeClassifier, tree.DecisionTreeRegressor)
    forests = (ensemble.RandomForestClassifier, ensemble.RandomForestRegressor,
               ensemble.ExtraTreesClassifier, ensemble.ExtraTreesRegressor)
    gbs = (ensemble.GradientBoostingClassifier, ensemble.GradientBoostingRegressor)
    hgbs = (ensemble.HistGradientBoostingClassifier, ensemble.HistGradientBoostingRegressor)
    if isinstance(estimator, type) or not isinstance(
            estimator, trees + forests + gbs + hgbs + (ensemble.AdaBoostClassifier,)):
        if isinstance(estimator, type):
            what = f"the class {estimator.__name__} itself (pass a fitted instance)"
        elif type(estimator).__module__.split(".")[0] == "sklearn":
            what = f"scikit-learn {kind}"
            if isinstance(estimator, ensemble.AdaBoostRegressor):
                what += " (its prediction is a weighted median of the trees, not a sum)"
        else:
            what = f"a {type(estimator).__module__}.{kind} object (not a scikit-learn estimator)"
        raise unsupported(f"{what}; supported: {SUPPORTED}")
    _check_fitted(estimator)
    if isinstance(estimator, trees):
        model = _single_tree(estimator, feature_names)
    elif isinstance(estimator, forests):
        model = _forest(estimator, feature_names)
    elif isinstance(estimator, gbs):
        model = _gradient_boosting(estimator, feature_names)
    elif isinstance(estimator, hgbs):
        from rulegen.importers.sklearn_hist import hist_gradient_boosting
        model = hist_gradient_boosting(estimator, feature_names)
    else:
        model = _adaboost(estimator, feature_names)
    return validate(model)


def _check_fitted(estimator) -> None:
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        raise RulegenError(f"this {type(estimator).__name__} is not fitted yet; "
                           "call fit() before importing it") from None


# --- shared pieces ----------------------------------------------------------------------


def feature_list(estimator, feature_names, categories=None) -> tuple[Feature, ...]:
    """Features in the estimator's input order; ``categories`` maps index -> labels."""
    n = int(estimator.n_features_in_)
    if feature_names is not None:
        names = [str(x) for x in feature_names]
        if len(names) != n:
            raise RulegenError(f"{len(names)} feature names given, but the "
                               f"{type(estimator).__name__} has {n} features")
    elif getattr(estimator, "feature_names_in_", None) is not None:
        names = [str(x) for x in estimator.feature_names_in_]
    else:
        names = [f"x{i}" for i in range(n)]
    categories = categories or {}
    return tuple(Feature(name, "categorical", categories[i]) if i in categories
                 else Feature(name) for i, name in enumerate(names))


def label(value, what: str = "class label"):
    """A numpy / Python label as an IR label (``int`` or ``str``)."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (str, np.str_)):
        return str(value)
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value) == int(value):
        return int(value)
    raise unsupported(f"the {what} {value!r} (labels must be strings or integers)")


def class_target(estimator) -> Target:
    classes = tuple(label(c) for c in np.asarray(estimator.classes_, dtype=object))
    if len({(type(c), c) for c in classes}) != len(classes):
        raise unsupported(f"class labels {list(estimator.classes_)!r} that coincide as "
                          "integers / strings")
    return Target("classification", classes=classes)


def provenance(estimator, n_samples: int | None = None) -> Provenance:
    import sklearn
    params = []
    for key, value in sorted(estimator.get_params(deep=False).items()):
        if value is None or isinstance(value, (bool, str)):
            params.append((key, value))
        elif isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
            params.append((key, int(value)))
        elif isinstance(value, (float, np.floating)) and math.isfinite(value):
            params.append((key, float(value)))
    return Provenance(algorithm=type(estimator).__name__, params=tuple(params),
                      library=f"scikit-learn {sklearn.__version__}", n_samples=n_samples,
                      n_features=int(estimator.n_features_in_))


def assemble(n: int, left, right, make_split, make_leaf) -> tuple[Node, ...]:
    """IR nodes for a binary tree given by child arrays (-1 or a negative id for a leaf).

    ``make_split(i, children)`` / ``make_leaf(i)`` build node ``i`` of the source. The
    source ids are kept when every child id exceeds its parent's (scikit-learn's trees and
    predictors always do: node i of the IR is node i of ``tree_``); otherwise the nodes
    are renumbered in pre-order."""
    is_leaf = [left[i] < 0 for i in range(n)]
    if all(is_leaf[i] or (left[i] > i and right[i] > i) for i in range(n)):
        return tuple(make_leaf(i) if is_leaf[i] else make_split(i, (left[i], right[i]))
                     for i in range(n))
    order, stack = [], [0]
    while stack:
        i = stack.pop()
        order.append(i)
        if not is_leaf[i]:
            stack += [right[i], left[i]]
    new = {old: k for k, old in enumerate(order)}
    return tuple(make_leaf(i) if is_leaf[i] else make_split(i, (new[left[i]], new[right[i]]))
                 for i in order)


def cart_nodes(tree_, leaf_value) -> tuple[Node, ...]:
    """IR nodes of a fitted ``sklearn.tree._tree.Tree``; ``leaf_value(i)`` gives leaf values."""
    left = tree_.children_left.tolist()
    right = tree_.children_right.tolist()
    feature = tree_.feature.tolist()
    threshold = tree_.threshold.tolist()
    go_left = np.asarray(tree_.missing_go_to_left).tolist()
    samples = tree_.weighted_n_node_samples.tolist()
    impurity = tree_.impurity.tolist()

    def imp(i):
        return impurity[i] if math.isfinite(impurity[i]) else None

    def make_split(i, children):
        return Split(float32_test(int(feature[i]), float(threshold[i])), children,
                     DefaultChild(0 if go_left[i] else 1), samples=float(samples[i]),
                     impurity=imp(i))

    def make_leaf(i):
        return Leaf(leaf_value(i), samples=float(samples[i]), impurity=imp(i))

    return assemble(tree_.node_count, left, right, make_split, make_leaf)


def _proba_leaves(tree_, n_classes: int):
    value = tree_.value  # (nodes, 1, max_n_classes): predict_proba returns [:, :n_classes]
    return lambda i: tuple(float(v) for v in value[i, 0, :n_classes])


def _regression_leaves(tree_):
    value = tree_.value  # (nodes, n_outputs, 1)
    return lambda i: tuple(float(v) for v in value[i, :, 0])


def _check_single_output(estimator) -> None:
    if int(getattr(estimator, "n_outputs_", 1)) != 1:
        raise unsupported(f"a multi-output {type(estimator).__name__} classifier "
                          "(the IR has one class list)")


# --- single trees and forests -----------------------------------------------------------


def _single_tree(est, feature_names) -> Model:
    from sklearn.base import is_classifier
    if is_classifier(est):
        _check_single_output(est)
        target = class_target(est)
        leaves = _proba_leaves(est.tree_, len(target.classes))
        n_raw = len(target.classes)
    else:
        n_raw = int(est.n_outputs_)
        target = Target("regression", n_outputs=n_raw)
        leaves = _regression_leaves(est.tree_)
    return Model(features=feature_list(est, feature_names), target=target,
                 trees=(Tree(cart_nodes(est.tree_, leaves)),), base_score=(0.0,) * n_raw,
                 provenance=provenance(est, int(est.tree_.n_node_samples[0])))


def _forest(est, feature_names) -> Model:
    from sklearn.base import is_classifier
    if is_classifier(est):
        _check_single_output(est)
        target = class_target(est)
        n_raw = len(target.classes)
        trees = tuple(Tree(cart_nodes(e.tree_, _proba_leaves(e.tree_, n_raw)))
                      for e in est.estimators_)
    else:
        n_raw = int(est.n_outputs_)
        target = Target("regression", n_outputs=n_raw)
        trees = tuple(Tree(cart_nodes(e.tree_, _regression_leaves(e.tree_)))
                      for e in est.estimators_)
    return Model(features=feature_list(est, feature_names), target=target, trees=trees,
                 base_score=(0.0,) * n_raw, aggregation="mean", provenance=provenance(est))


# --- gradient boosting ------------------------------------------------------------------


def _gb_base(est) -> np.ndarray:
    """The init estimator's raw prediction, a constant per row, computed by scikit-learn."""
    from sklearn.base import is_classifier
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.ensemble._gb import _init_raw_predictions

    k = int(est.n_trees_per_iteration_)
    init = est.init_
    if isinstance(init, str) and init == "zero":
        return np.zeros(k)
    constant = ((isinstance(init, DummyClassifier)
                 and init.strategy in ("prior", "most_frequent", "constant"))
                or isinstance(init, DummyRegressor))
    if not constant:
        raise unsupported(f"GradientBoosting with the init estimator {type(init).__name__} "
                          "(only constant Dummy* estimators or 'zero')")
    X0 = np.zeros((1, int(est.n_features_in_)), dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = _init_raw_predictions(X0, init, est._loss, is_classifier(est))
    return np.asarray(raw, dtype=np.float64).reshape(k)


def _gradient_boosting(est, feature_names) -> Model:
    from sklearn._loss.loss import (
        AbsoluteError,
        ExponentialLoss,
        HalfBinomialLoss,
        HalfMultinomialLoss,
        HalfSquaredError,
        HuberLoss,
        PinballLoss,
    )
    from sklearn.base import is_classifier

    loss = est._loss
    k = int(est.n_trees_per_iteration_)
    scale = 1.0
    if is_classifier(est):
        target = class_target(est)
        if isinstance(loss, HalfMultinomialLoss):
            link = "softmax"
        elif isinstance(loss, HalfBinomialLoss):
            link = "sigmoid"
        elif isinstance(loss, ExponentialLoss):
            link, scale = "sigmoid", 2.0  # p = expit(2 * raw): import 2 * raw, exactly
        else:
            raise unsupported(f"GradientBoostingClassifier with the loss {type(loss).__name__}")
    else:
        if not isinstance(loss, (HalfSquaredError, AbsoluteError, HuberLoss, PinballLoss)):
            raise unsupported(f"GradientBoostingRegressor with the loss {type(loss).__name__}")
        target, link = Target("regression"), "identity"
    base = _gb_base(est) * scale
    weight = float(scale * float(est.learning_rate))
    stages = est.estimators_
    trees = []
    for i in range(stages.shape[0]):
        for j in range(k):
            t = stages[i, j].tree_
            trees.append(Tree(cart_nodes(t, _regression_leaves(t)),
                              output=j if k > 1 else None, weight=weight))
    return Model(features=feature_list(est, feature_names), target=target, trees=tuple(trees),
                 base_score=tuple(float(b) for b in base), link=link,
                 provenance=provenance(est))


# --- AdaBoost ---------------------------------------------------------------------------


def _adaboost(est, feature_names) -> Model:
    from sklearn.tree import DecisionTreeClassifier

    target = class_target(est)
    n_classes = len(target.classes)
    if n_classes < 2:
        raise unsupported("an AdaBoostClassifier fitted on a single class")
    weights = np.asarray(est.estimator_weights_, dtype=np.float64)
    total = weights.sum()  # exactly scikit-learn's divisor (numpy's pairwise sum)
    if not total > 0:
        raise unsupported("an AdaBoostClassifier whose estimator weights sum to zero")
    other = -1 / (n_classes - 1)  # scikit-learn's code for "not this tree's class"
    position = {c: idx for idx, c in enumerate(target.classes)}
    trees = []
    for e, w in zip(est.estimators_, weights[:len(est.estimators_)]):
        if not isinstance(e, DecisionTreeClassifier) or int(getattr(e, "n_outputs_", 1)) != 1:
            raise unsupported(f"AdaBoostClassifier with the base estimator {type(e).__name__} "
                              "(only single-output decision trees)")
        index = [position[label(c)] for c in e.classes_]  # tree class -> model class index
        value = e.tree_.value
        n_e = len(index)

        def winner(i, value=value, n_e=n_e, index=index):
            return index[int(np.argmax(value[i, 0, :n_e]))]  # DecisionTree.predict's class

        if n_classes == 2:
            leaves = (lambda i, winner=winner: (1.0 if winner(i) == 1 else -1.0,))
            tree_weight = float(2.0 * w / total)
        else:
            leaves = (lambda i, winner=winner: tuple(1.0 if k == winner(i) else other
                                                     for k in range(n_classes)))
            tree_weight = float(w / total / (n_classes - 1))
        trees.append(Tree(cart_nodes(e.tree_, leaves), weight=tree_weight))
    n_raw = 1 if n_classes == 2 else n_classes
    return Model(features=feature_list(est, feature_names), target=target, trees=tuple(trees),
                 base_score=(0.0,) * n_raw, link="sigmoid" if n_classes == 2 else "softmax",
                 provenance=provenance(est))
