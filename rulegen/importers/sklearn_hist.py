"""Import a fitted ``HistGradientBoostingClassifier`` / ``Regressor`` (scikit-learn 1.9).

What scikit-learn computes (``_raw_predict`` and ``_predictor.pyx``), and the IR for it:

* ``raw = zeros + _baseline_prediction``; then for each iteration, for each class ``k``,
  ``raw[:, k] += predictor_k(X)`` in float64. Leaf values already include the learning
  rate, so every tree has weight 1 and ``output = k`` when there are several classes; the
  base score is ``0.0 + baseline``. Bit for bit.
* A numeric node tests ``x <= num_threshold`` on the float64 input (``inf`` for "NaN right,
  everything else left"), NaN goes to ``missing_go_to_left``: a float64 ``NumericTest``.
* Categorical features go through an ``OrdinalEncoder`` (categories sorted, unknown and
  missing values encoded as NaN) inside a ``ColumnTransformer`` that moves categorical
  columns first; the predictor's ``feature_idx`` counts in that order and is mapped back
  to the input order here. The IR feature lists the encoder's categories (the codes are
  the encoded values); a node sends the categories of its ``raw_left_cat_bitsets`` row
  left, the other known ones right, and missing *and unseen* values (any value not among
  the categories, e.g. 2.5 next to integer categories) to ``missing_go_to_left``.
* Links from the loss: identity (squared / absolute error, quantile), exp (poisson, gamma;
  scikit-learn uses numpy's ``exp``: a few ulp apart), sigmoid (binary, scipy's ``expit``:
  bit for bit), softmax (multiclass: numpy's ``exp`` and sum, a few ulp apart).
* ``predict`` of a binary classifier is ``raw > 0``; the IR predicts the larger probability
  (class 0 on a tie), which differs only for ``0 < raw <= 1.67e-16`` where ``expit`` is 0.5.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.importers.sklearn import (
    assemble,
    class_target,
    feature_list,
    label,
    provenance,
    unsupported,
)
from rulegen.ir.nodes import CategoricalTest, DefaultChild, Leaf, Model, NumericTest, Split, Target, Tree


def _input_columns(est) -> tuple[np.ndarray, dict[int, tuple]]:
    """For the predictor's column j, the input feature ``source[j]``; and the category
    labels of each categorical input feature (by input index)."""
    n = int(est.n_features_in_)
    pre = getattr(est, "_preprocessor", None)
    if pre is None:
        return np.arange(n), {}
    source = np.full(n, -1, dtype=np.int64)
    categories: dict[int, tuple] = {}
    for name, transformer, columns in pre.transformers_:
        cols = np.asarray(columns)
        cols = np.flatnonzero(cols) if cols.dtype == bool else cols.astype(np.int64)
        if not len(cols):
            continue
        if name not in ("encoder", "numerical"):
            raise unsupported(f"a HistGradientBoosting preprocessor step {name!r}")
        positions = range(*pre.output_indices_[name].indices(n))
        if len(positions) != len(cols):
            raise unsupported("a HistGradientBoosting preprocessor that changes the column count")
        source[list(positions)] = cols
        if name == "encoder":
            for col, cats in zip(cols, transformer.categories_):
                known = [c for c in cats.tolist()
                         if not (isinstance(c, float) and math.isnan(c)) and c is not None]
                categories[int(col)] = tuple(label(c, "category") for c in known)
    if (source < 0).any():
        raise unsupported("a HistGradientBoosting preprocessor that drops columns")
    return source, categories


def _link(est, classifier: bool, n_raw: int) -> str:
    from sklearn._loss.link import IdentityLink, LogitLink, LogLink, MultinomialLogit
    link = est._loss.link
    if isinstance(link, MultinomialLogit) and classifier and n_raw > 1:
        return "softmax"
    if isinstance(link, LogitLink) and n_raw == 1:
        return "sigmoid"
    if isinstance(link, LogLink) and not classifier:
        return "exp"
    if isinstance(link, IdentityLink) and not classifier:
        return "identity"
    raise unsupported(f"{type(est).__name__} with the loss {type(est._loss).__name__} "
                      f"(link {type(link).__name__})")


def _tree(predictor, source, categories, n_categories) -> tuple:
    nodes = predictor.nodes
    bitsets = np.asarray(predictor.raw_left_cat_bitsets)
    value = nodes["value"].tolist()
    count = nodes["count"].tolist()
    leaf = nodes["is_leaf"].tolist()
    left = [-1 if leaf[i] else v for i, v in enumerate(nodes["left"].tolist())]
    right = nodes["right"].tolist()
    feature = nodes["feature_idx"].tolist()
    threshold = nodes["num_threshold"].tolist()
    go_left = nodes["missing_go_to_left"].tolist()
    categorical = nodes["is_categorical"].tolist()
    bitset_idx = nodes["bitset_idx"].tolist()

    def make_split(i, children):
        f = int(source[feature[i]])
        missing = 0 if go_left[i] else 1
        if categorical[i]:
            if f not in categories:
                raise unsupported("a categorical split on a feature without categories")
            row = bitsets[bitset_idx[i]] if bitset_idx[i] < len(bitsets) else np.zeros(8, np.uint32)
            codes = tuple(c for c in range(n_categories[f]) if (int(row[c >> 5]) >> (c & 31)) & 1)
            return Split(CategoricalTest(f, codes), children, DefaultChild(missing),
                         unseen=missing, samples=float(count[i]))
        return Split(NumericTest(f, "<=", float(threshold[i]), "float64"), children,
                     DefaultChild(missing), samples=float(count[i]))

    def make_leaf(i):
        return Leaf((float(value[i]),), samples=float(count[i]))

    return assemble(len(nodes), left, right, make_split, make_leaf)


def hist_gradient_boosting(est, feature_names) -> Model:
    from sklearn.base import is_classifier

    classifier = is_classifier(est)
    k = int(est.n_trees_per_iteration_)
    target = class_target(est) if classifier else Target("regression")
    link = _link(est, classifier, k)
    source, categories = _input_columns(est)
    features = feature_list(est, feature_names, categories)
    n_categories = {f: len(c) for f, c in categories.items()}
    baseline = np.asarray(est._baseline_prediction, dtype=np.float64).reshape(k)
    trees = []
    for iteration in est._predictors:
        for j, predictor in enumerate(iteration):
            trees.append(Tree(_tree(predictor, source, categories, n_categories),
                              output=j if k > 1 else None))
    return Model(features=features, target=target, trees=tuple(trees),
                 base_score=tuple(float(0.0 + b) for b in baseline), link=link,
                 provenance=provenance(est))
