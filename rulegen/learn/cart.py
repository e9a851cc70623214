"""CART (binary trees; gini/entropy or squared/absolute error), scikit-learn style.

The estimators validate input, encode targets and emit the IR; the search itself
is :class:`rulegen.learn.builder.NumericSplitFinder` grown by the shared
:class:`~rulegen.learn.builder.TreeBuilder`. Semantics follow scikit-learn 1.9:

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

Deliberate differences: negative sample weights are refused; a node whose
target is constant has impurity exactly 0 (sklearn's one-pass variance may leave
noise above its tolerance and split it, without changing predictions).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from rulegen.errors import LearnerError
from rulegen.ir import evaluate
from rulegen.ir.nodes import Feature, Leaf, Model, Provenance, Target
from rulegen.ir.validate import validate
from rulegen.learn.builder import GrowthLimits, NumericSplitFinder, TreeBuilder
from rulegen.learn.categorical import CartSplitFinder
from rulegen.learn.criteria import CLASSIFICATION_CRITERIA, REGRESSION_CRITERIA


def _library() -> str:
    try:
        from rulegen import __version__ as version
    except ImportError:
        version = "0.1.0"
    return f"rulegen {version}"


# --- estimators ---------------------------------------------------------------------

_PARAMS = ("criterion", "splitter", "max_depth", "min_samples_split", "min_samples_leaf",
           "min_weight_fraction_leaf", "max_features", "random_state", "max_leaf_nodes",
           "min_impurity_decrease")


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _bad(name, value, expected):
    raise LearnerError(f"{name}={value!r} is invalid: expected {expected}")


class _BaseTree:
    _criteria: dict = {}

    def __init__(self, criterion, splitter="best", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features=None,
                 random_state=None, max_leaf_nodes=None, min_impurity_decrease=0.0):
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

    def get_params(self, deep=True) -> dict:
        return {name: getattr(self, name) for name in _PARAMS}

    def set_params(self, **params):
        for name, value in params.items():
            if name not in _PARAMS:
                raise LearnerError(f"{type(self).__name__} has no parameter {name!r}; "
                                   f"valid parameters: {', '.join(_PARAMS)}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = type(self)().get_params()
        changed = [f"{k}={v!r}" for k, v in self.get_params().items() if v != defaults[k]]
        return f"{type(self).__name__}({', '.join(changed)})"

    # -- checks ------------------------------------------------------------------

    def _check_params(self, n_samples, n_features):
        if self.criterion not in self._criteria:
            _bad("criterion", self.criterion, " or ".join(map(repr, self._criteria)))
        if self.splitter not in ("best", "random"):
            _bad("splitter", self.splitter, "'best' or 'random'")
        md = self.max_depth
        if md is not None and not (_is_int(md) and md >= 1):
            _bad("max_depth", md, "None or an integer >= 1")
        mss = self.min_samples_split
        if _is_int(mss) and mss >= 2:
            mss = int(mss)
        elif _is_real(mss) and not _is_int(mss) and 0.0 < mss <= 1.0:
            mss = max(2, math.ceil(mss * n_samples))
        else:
            _bad("min_samples_split", mss, "an integer >= 2 or a fraction in (0, 1]")
        msl = self.min_samples_leaf
        if _is_int(msl) and msl >= 1:
            msl = int(msl)
        elif _is_real(msl) and not _is_int(msl) and 0.0 < msl < 1.0:
            msl = math.ceil(msl * n_samples)
        else:
            _bad("min_samples_leaf", msl, "an integer >= 1 or a fraction in (0, 1)")
        mwf = self.min_weight_fraction_leaf
        if not (_is_real(mwf) and 0.0 <= mwf <= 0.5):
            _bad("min_weight_fraction_leaf", mwf, "a number in [0, 0.5]")
        mf = self.max_features
        if mf is None:
            mf = n_features
        elif isinstance(mf, str) and mf in ("sqrt", "log2"):
            mf = max(1, int((np.sqrt if mf == "sqrt" else np.log2)(n_features)))
        elif _is_int(mf) and mf >= 1:
            mf = int(mf)
        elif _is_real(mf) and not _is_int(mf) and 0.0 < mf <= 1.0:
            mf = max(1, int(mf * n_features))
        else:
            _bad("max_features", mf, "None, 'sqrt', 'log2', an integer >= 1 or a fraction in (0, 1]")
        rs = self.random_state
        if rs is not None and not (_is_int(rs) and rs >= 0):
            _bad("random_state", rs, "None or an integer >= 0")
        mln = self.max_leaf_nodes
        if mln is not None and not (_is_int(mln) and mln >= 2):
            _bad("max_leaf_nodes", mln, "None or an integer >= 2")
        mid = self.min_impurity_decrease
        if not (_is_real(mid) and mid >= 0.0 and math.isfinite(mid)):
            _bad("min_impurity_decrease", mid, "a finite number >= 0")
        return mss, msl, mf

    @staticmethod
    def _check_X(X, feature_names):
        if feature_names is None and hasattr(X, "columns"):
            feature_names = [str(c) for c in X.columns]
        try:
            A = np.asarray(X)
            if A.dtype.kind not in "biuf":
                A = A.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise LearnerError(f"X must be numeric (NaN for missing values): {exc}") from None
        if A.ndim != 2:
            hint = " (use X.reshape(-1, 1) for a single feature)" if A.ndim == 1 else ""
            raise LearnerError(f"X must be a 2-D array (n_samples, n_features), got shape {A.shape}{hint}")
        n, p = A.shape
        if n < 1 or p < 1:
            raise LearnerError(f"X needs at least one sample and one feature, got shape {A.shape}")
        with np.errstate(over="ignore", invalid="ignore"):
            X32 = A.astype(np.float32)
        if np.isinf(X32).any():
            r, c = np.argwhere(np.isinf(X32))[0]
            raise LearnerError(f"X[{r}, {c}] = {A[r, c]!r} is infinite or beyond the float32 range; "
                               "trees learn on float32 values (as scikit-learn does)")
        if feature_names is None:
            names = tuple(f"x{i}" for i in range(p))
        else:
            names = tuple(feature_names)
            if len(names) != p or not all(isinstance(s, str) and s for s in names):
                raise LearnerError(f"feature_names must be {p} non-empty strings, got {names!r}")
            if len(set(names)) != p:
                raise LearnerError(f"feature_names must be unique, got {names!r}")
        return X32, names

    @staticmethod
    def _check_weights(sample_weight, n):
        if sample_weight is None:
            return np.ones(n), False
        try:
            w = np.asarray(sample_weight, dtype=np.float64)
        except (TypeError, ValueError):
            raise LearnerError("sample_weight must be numbers") from None
        if w.ndim == 0:
            w = np.full(n, float(w))
        if w.shape != (n,):
            raise LearnerError(f"sample_weight must have shape ({n},), got {w.shape}")
        if not np.isfinite(w).all() or (w < 0).any():
            raise LearnerError("sample_weight must be finite and non-negative")
        if not (w > 0).any():
            raise LearnerError("sample_weight is zero for every sample; nothing to learn from")
        return w, True

    # -- fit / predict -------------------------------------------------------------

    def fit(self, X, y, sample_weight=None, feature_names=None, categorical_features=None,
            categories=None):
        """Fit on ``X`` (n_samples, n_features). ``categorical_features`` lists the columns
        (indices or names) that are categorical: their values are category codes 0..m-1
        (NaN for missing), split by subsets (see :mod:`rulegen.learn.categorical`).
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
        finder_kw = {"splitter": self.splitter, "max_features": mf, "min_samples_leaf": msl,
                     "min_weight_leaf": min_weight_leaf,
                     "rng": np.random.default_rng(self.random_state)}
        if cat_labels:
            finder = CartSplitFinder(X32, T, w, criterion,
                                     categorical={j: len(v) for j, v in cat_labels.items()},
                                     **finder_kw)
        else:
            finder = NumericSplitFinder(X32, T, w, criterion, **finder_kw)
        limits = GrowthLimits(max_depth=self.max_depth, min_samples_split=max(mss, 2 * msl),
                              min_samples_leaf=msl, min_weight_leaf=min_weight_leaf,
                              min_impurity_decrease=float(self.min_impurity_decrease),
                              max_leaf_nodes=self.max_leaf_nodes)
        # rows of zero weight take no part in any node (as in sklearn)
        root = finder.root(np.flatnonzero(w > 0))
        tree = TreeBuilder(finder, finder.summarize, limits).build(root)
        params = tuple(sorted((k, v if not isinstance(v, np.generic) else v.item())
                              for k, v in self.get_params().items()))
        self.model_ = validate(Model(
            features=tuple(Feature(name, "categorical", cat_labels[j]) if j in cat_labels
                           else Feature(name) for j, name in enumerate(names)),
            target=target, trees=(tree,),
            base_score=(0.0,) * width, aggregation="sum", link="identity", dtype="float64",
            provenance=Provenance(algorithm="cart", params=params, library=_library(),
                                  n_samples=n, n_features=p)))
        for name, value in fitted.items():
            setattr(self, name, value)
        self.n_features_in_ = p
        self.feature_names_in_ = names
        return self

    @staticmethod
    def _check_categorical(X32, names, categorical_features, categories) -> dict:
        """{column index: tuple of labels} for the categorical columns, codes checked."""
        p = X32.shape[1]

        def column(key, what):
            if _is_int(key) and 0 <= key < p:
                return int(key)
            if isinstance(key, str) and key in names:
                return names.index(key)
            raise LearnerError(f"{what}: {key!r} is neither a column index in 0..{p - 1} "
                               f"nor a feature name ({', '.join(names)})")

        cols = []
        for key in (categorical_features or ()):
            j = column(key, "categorical_features")
            if j not in cols:
                cols.append(j)
        given = {}
        for key, labels in (categories or {}).items():
            j = column(key, "categories")
            if j not in cols:
                raise LearnerError(f"categories given for column {names[j]!r}, which is not "
                                   "in categorical_features")
            labels = tuple(labels)
            if not labels or len(set(labels)) != len(labels):
                raise LearnerError(f"categories of {names[j]!r} must be distinct labels, "
                                   f"at least one, got {labels!r}")
            given[j] = labels
        out = {}
        for j in sorted(cols):
            x = X32[:, j]
            v = x[~np.isnan(x)]
            if ((v != np.floor(v)) | (v < 0)).any():
                bad = v[(v != np.floor(v)) | (v < 0)][0]
                raise LearnerError(f"categorical feature {names[j]!r}: {bad!r} is not a category "
                                   "code (a whole number >= 0; NaN for missing)")
            top = int(v.max()) + 1 if v.size else 0
            if j in given:
                if top > len(given[j]):
                    raise LearnerError(f"categorical feature {names[j]!r}: code {top - 1} but "
                                       f"only {len(given[j])} categories")
                out[j] = given[j]
            else:
                out[j] = tuple(range(max(top, 1)))
        return out

    def _fitted(self) -> Model:
        if not hasattr(self, "model_"):
            raise LearnerError(f"this {type(self).__name__} is not fitted yet; call fit(X, y) first")
        return self.model_

    def _rows(self, X):
        self._fitted()
        try:
            A = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            raise LearnerError("X must be numeric (NaN or None for missing values)") from None
        if A.ndim != 2 or A.shape[1] != self.n_features_in_:
            raise LearnerError(f"X must have shape (n_samples, {self.n_features_in_}), got {A.shape}")
        return A

    def get_depth(self) -> int:
        nodes = self._fitted().trees[0].nodes
        depth = [0] * len(nodes)
        for i, node in enumerate(nodes):  # parents come before children
            if not isinstance(node, Leaf):
                for c in node.children:
                    depth[c] = depth[i] + 1
        return max(depth)

    def get_n_leaves(self) -> int:
        return sum(isinstance(nd, Leaf) for nd in self._fitted().trees[0].nodes)


class DecisionTreeClassifier(_BaseTree):
    """CART classifier; leaves hold class probabilities (weighted class frequencies)."""

    _criteria = CLASSIFICATION_CRITERIA

    def __init__(self, criterion="gini", splitter="best", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features=None,
                 random_state=None, max_leaf_nodes=None, min_impurity_decrease=0.0):
        super().__init__(criterion, splitter, max_depth, min_samples_split, min_samples_leaf,
                         min_weight_fraction_leaf, max_features, random_state, max_leaf_nodes,
                         min_impurity_decrease)

    def _encode_y(self, y, n):
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise LearnerError(f"y must be 1-D class labels, got shape {y.shape} "
                               "(multi-output classification is not supported)")
        if len(y) != n:
            raise LearnerError(f"y has {len(y)} labels but X has {n} rows")
        if y.dtype.kind == "f":
            if not np.isfinite(y).all() or (y != np.round(y)).any():
                raise LearnerError("float class labels must be finite whole numbers; "
                                   "for a continuous target use DecisionTreeRegressor")
        elif y.dtype.kind not in "biuUSO":
            raise LearnerError(f"y must hold integer or string class labels, got dtype {y.dtype}")
        try:
            classes, codes = np.unique(y, return_inverse=True)
        except TypeError:
            raise LearnerError("y mixes label types (e.g. numbers and strings); "
                               "use one type for all class labels") from None
        labels = []
        for c in classes:
            if isinstance(c, (bool, np.bool_, numbers.Integral, float, np.floating)):
                labels.append(int(c))
            elif isinstance(c, (str, np.str_)):
                labels.append(str(c))
            elif isinstance(c, bytes):
                labels.append(c.decode())
            else:
                raise LearnerError(f"class label {c!r} is neither an integer nor a string")
        target = Target(task="classification", name="target", classes=tuple(labels))
        fitted = {"classes_": classes, "n_classes_": len(classes)}
        return codes.reshape(-1).astype(np.intp), target, fitted

    def predict_proba(self, X) -> np.ndarray:
        X = self._rows(X)
        return evaluate.predict_proba(self.model_, X)

    def predict(self, X) -> np.ndarray:
        X = self._rows(X)
        index = evaluate.predict_class_index(self.model_, X)
        return self.classes_[index]


class DecisionTreeRegressor(_BaseTree):
    """CART regressor; leaves hold the weighted mean (squared_error) or sklearn's
    weighted median (absolute_error), one value per output."""

    _criteria = REGRESSION_CRITERIA

    def __init__(self, criterion="squared_error", splitter="best", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=None, random_state=None, max_leaf_nodes=None,
                 min_impurity_decrease=0.0):
        super().__init__(criterion, splitter, max_depth, min_samples_split, min_samples_leaf,
                         min_weight_fraction_leaf, max_features, random_state, max_leaf_nodes,
                         min_impurity_decrease)

    def _encode_y(self, y, n):
        try:
            Y = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise LearnerError("y must be numeric for regression") from None
        if Y.ndim == 1:
            Y = Y[:, None]
        if Y.ndim != 2 or Y.shape[0] != n or Y.shape[1] < 1:
            raise LearnerError(f"y must have shape ({n},) or ({n}, n_outputs), got {np.shape(y)}")
        if not np.isfinite(Y).all():
            raise LearnerError("y contains NaN or infinity; regression targets must be finite")
        target = Target(task="regression", name="target", n_outputs=Y.shape[1])
        return np.ascontiguousarray(Y), target, {"n_outputs_": Y.shape[1]}

    def predict(self, X) -> np.ndarray:
        X = self._rows(X)
        values = evaluate.predict_value(self.model_, X)
        return values[:, 0] if values.shape[1] == 1 else values
