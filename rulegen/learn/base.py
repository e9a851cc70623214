"""What every learner shares: parameters by name, input checks, target encoding,
prediction through the reference evaluator, and the assembled IR model.

A learner subclasses :class:`Classifier` or :class:`Regressor` (through its own
mixin), lists its parameter names in ``_params`` and sets ``model_`` in ``fit``.
Input conventions are those of :mod:`rulegen.learn.trees.cart`: X is numeric with NaN
for missing; a categorical column holds codes 0..m-1, declared with
``categorical_features`` (labels optionally in ``categories``).
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np

from rulegen.errors import LearnerError, LearnerTypeError
from rulegen.ir import evaluate
from rulegen.ir.nodes import Feature, Leaf, Model, Provenance, Target, Tree
from rulegen.ir.validate import validate
from rulegen.learn import frames, sklearn_api
from rulegen.learn.importance import impurity_importances, score_of

# Positive sample weights accepted by every learner (see _check_weights).
WEIGHT_RANGE = (1e-30, 1e30)
# Largest regression target: with weights in range, sums of w * y**2 stay finite.
TARGET_LIMIT = 1e100


def library() -> str:
    try:
        from rulegen import __version__ as version
    except ImportError:
        version = "0.1.0"
    return f"rulegen {version}"


def is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def column_names(X):
    """A DataFrame's column names when all are strings (scikit-learn's rule for
    ``feature_names_in_``), else None: arrays and integer-labelled columns go by position."""
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    cols = list(cols)
    return cols if all(isinstance(c, str) for c in cols) else None


def bad(name, value, expected):
    raise LearnerError(f"{name}={value!r} is invalid: expected {expected}")




def check_seed(rs, name: str = "random_state") -> None:
    if rs is not None and not (is_int(rs) and rs >= 0):
        bad(name, rs, "None or an integer >= 0")


def check_open_fraction(value, name: str) -> float:
    """A share strictly between 0 and 1 (e.g. ``validation_fraction``)."""
    if not (is_real(value) and 0.0 < value < 1.0):
        bad(name, value, "a number in (0, 1)")
    return float(value)

class Growth(NamedTuple):
    """CART's growth parameters, checked and resolved for n rows and p features."""

    min_samples_split: int
    min_samples_leaf: int
    min_weight_fraction_leaf: float
    max_features: int


def resolve_max_features(mf, p: int, name: str = "max_features") -> int:
    """How many of ``p`` candidates a node draws: None (all), "sqrt", "log2", "log2+1"
    (Breiman's int(log2 p + 1)), a count (capped at p) or a fraction of p."""
    if mf is None:
        return p
    if isinstance(mf, str) and mf in ("sqrt", "log2", "log2+1"):
        k = {"sqrt": int(math.sqrt(p)), "log2": int(math.log2(p)),
             "log2+1": int(math.log2(p)) + 1}[mf]
        return max(1, min(k, p))
    if is_int(mf) and mf >= 1:
        return min(int(mf), p)
    if is_real(mf) and not is_int(mf) and 0.0 < mf <= 1.0:
        return max(1, int(mf * p))
    bad(name, mf, "None, 'sqrt', 'log2', 'log2+1', an integer >= 1 or a fraction in (0, 1]")


def check_growth(est, n: int, p: int) -> Growth:
    """The CART growth parameters every tree-growing estimator carries (``max_depth``,
    ``min_samples_split``, ``min_samples_leaf``, ``min_weight_fraction_leaf``,
    ``max_features``, ``max_leaf_nodes``, ``min_impurity_decrease``, ``random_state``),
    checked with scikit-learn's rules; fractions resolved for n rows and p features."""
    md = est.max_depth
    if md is not None and not (is_int(md) and md >= 1):
        bad("max_depth", md, "None or an integer >= 1")
    mss = est.min_samples_split
    if is_int(mss) and mss >= 2:
        mss = int(mss)
    elif is_real(mss) and not is_int(mss) and 0.0 < mss <= 1.0:
        mss = max(2, math.ceil(mss * n))
    else:
        bad("min_samples_split", mss, "an integer >= 2 or a fraction in (0, 1]")
    msl = est.min_samples_leaf
    if is_int(msl) and msl >= 1:
        msl = int(msl)
    elif is_real(msl) and not is_int(msl) and 0.0 < msl < 1.0:
        msl = math.ceil(msl * n)
    else:
        bad("min_samples_leaf", msl, "an integer >= 1 or a fraction in (0, 1)")
    mwf = est.min_weight_fraction_leaf
    if not (is_real(mwf) and 0.0 <= mwf <= 0.5):
        bad("min_weight_fraction_leaf", mwf, "a number in [0, 0.5]")
    mf = resolve_max_features(est.max_features, p)
    mln = est.max_leaf_nodes
    if mln is not None and not (is_int(mln) and mln >= 2):
        bad("max_leaf_nodes", mln, "None or an integer >= 2")
    mid = est.min_impurity_decrease
    if not (is_real(mid) and mid >= 0.0 and math.isfinite(mid)):
        bad("min_impurity_decrease", mid, "a finite number >= 0")
    check_seed(est.random_state)
    return Growth(mss, msl, float(mwf), mf)

def features_of(names, cat_labels: dict) -> tuple[Feature, ...]:
    """The IR features: ``cat_labels`` maps a categorical column to its labels."""
    return tuple(Feature(name, "categorical", cat_labels[j]) if j in cat_labels else Feature(name)
                 for j, name in enumerate(names))


def check_progress(progress) -> None:
    if progress is not None and not callable(progress):
        raise LearnerError(f"progress must be None or a function progress(done, total), "
                           f"got {progress!r}")

def make_model(names, cat_labels: dict, target: Target, trees, algorithm: str, params: dict,
               n_samples: int, plain: dict | None = None, **model_fields) -> Model:
    """The validated IR model of a fitted learner (a single tree unless ``trees`` has more);
    ``plain``: trees whose nodes the learner checked in bulk (``validate``'s)."""
    width = len(target.classes) if target.task == "classification" else target.n_outputs
    if isinstance(trees, Tree):
        trees = (trees,)
    fields = {"base_score": (0.0,) * width, "aggregation": "sum", "link": "identity",
              "dtype": "float64"}
    fields.update(model_fields)
    clean = tuple(sorted((k, v.item() if isinstance(v, np.generic) else v)
                         for k, v in params.items()))
    return validate(Model(
        features=features_of(names, cat_labels),
        target=target, trees=tuple(trees), **fields,
        provenance=Provenance(algorithm=algorithm, params=clean, library=library(),
                              n_samples=n_samples, n_features=len(names))), plain)


class Estimator:
    """Parameters by name (scikit-learn's get_params/set_params) and the input checks."""

    _params: tuple[str, ...] = ()
    _multi_output = True  # a regressor that fits one output only sets False

    def get_params(self, deep=True) -> dict:
        return {name: getattr(self, name) for name in self._params}

    def set_params(self, **params):
        for name, value in params.items():
            if name not in self._params:
                raise LearnerError(f"{type(self).__name__} has no parameter {name!r}; "
                                   f"valid parameters: {', '.join(self._params)}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = type(self)().get_params()
        changed = [f"{k}={v!r}" for k, v in self.get_params().items() if v != defaults[k]]
        return f"{type(self).__name__}({', '.join(changed)})"

    def _check_X(self, X, feature_names, float64=False):
        """X as float32 and the feature names (and with ``float64``, X as float64 too, last).
        A DataFrame's text and ``category`` columns become category codes
        (rulegen.learn.frames); ``_check_categorical`` adds them."""
        sklearn_api.check_not_sparse(X)
        frame_names = column_names(X)
        if feature_names is None and frame_names is not None:
            feature_names = frame_names
        self._named = feature_names is not None  # then fit sets feature_names_in_
        self._frame_categories = {}
        if frames.has_categories(X):
            X, self._frame_categories = frames.encode_for_fit(X)
        try:
            A = np.asarray(X)
            if A.dtype.kind == "c":
                raise LearnerError("Complex data not supported: X must be real numbers")
            if A.dtype.kind not in "biuf":
                A = A.astype(np.float64)
        except TypeError as exc:  # a dict or a list in a cell: not a number at all
            raise LearnerTypeError(f"X must be numeric (NaN for missing values): {exc}") from None
        except ValueError as exc:
            raise LearnerError(f"X must be numeric (NaN for missing values): {exc}") from None
        if A.ndim != 2:
            hint = " (use X.reshape(-1, 1) for a single feature)" if A.ndim == 1 else ""
            raise LearnerError(f"X must be a 2-D array (n_samples, n_features), got shape {A.shape}{hint}")
        n, p = A.shape
        if n < 1 or p < 1:  # in scikit-learn's words, which its checks match
            what = f"{p} feature(s)" if p < 1 else f"{n} sample(s)"
            raise LearnerError(f"X has {what} (shape={A.shape}) while a minimum of 1 is "
                               "required: it needs at least one sample and one feature")
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
        if float64:
            return X32, names, A.astype(np.float64, copy=False)
        return X32, names

    # Positive sample weights this learner computes with; None: any finite weight.
    _weight_range: tuple[float, float] | None = WEIGHT_RANGE

    def _check_weights(self, sample_weight, n):
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
        # The criteria square and subtract weighted sums: outside this range a node's
        # impurity underflows to 0/0 or overflows, and a fit fails late or splits on noise.
        lo, hi = self._weight_range or (0.0, np.inf)
        bad = np.flatnonzero((w > 0) & ((w < lo) | (w > hi)))
        if bad.size:
            i = int(bad[0])
            raise LearnerError(
                f"sample_weight[{i}] is {w[i]:g}: positive weights must lie between "
                f"{lo:g} and {hi:g}; multiply every weight by one constant to bring them "
                f"into range")
        return w, True

    def _check_categorical(self, X32, names, categorical_features, categories) -> dict:
        """{column index: tuple of labels} for the categorical columns, codes checked; a
        DataFrame's text and ``category`` columns are categorical with their own labels."""
        p = X32.shape[1]
        found = getattr(self, "_frame_categories", {})
        if found:
            clash = [names[j] for j in found for key in (categories or {})
                     if key in (j, names[j])]
            if clash:
                raise LearnerError(f"categories given for {clash[0]!r}, a text or category "
                                   "column: its labels come from the column")
            categorical_features = [*(categorical_features or ()), *found]
            categories = {**(categories or {}), **found}

        def column(key, what):
            if is_int(key) and 0 <= key < p:
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

    def _set_fitted(self, fitted: dict, names) -> None:
        """The attributes every fitted estimator has: the target's (``classes_``...),
        ``n_features_in_``, ``feature_importances_`` (a learner may set its own after) and,
        when fitted with names, ``feature_names_in_`` (as scikit-learn: an object array)."""
        for name, value in fitted.items():
            setattr(self, name, value)
        self.n_features_in_ = len(names)
        self.feature_importances_ = impurity_importances(self.model_)
        if not getattr(self, "_named", False):
            self.__dict__.pop("feature_names_in_", None)  # a refit without names
        else:
            self.feature_names_in_ = np.asarray(names, dtype=object)

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "model_")

    def _fitted(self) -> Model:
        if not hasattr(self, "model_"):
            raise sklearn_api.not_fitted(self)
        return self.model_

    def _rows(self, X):
        self._fitted()
        sklearn_api.check_not_sparse(X)
        order = self._column_order(X)
        if frames.has_categories(X):
            if order is not None:
                X = X[[X.columns[i] for i in order]]
                order = None
            if X.shape[1] != self.n_features_in_:
                raise LearnerError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                                   f"expecting {self.n_features_in_} features as input")
            return frames.encode_for_predict(X, self.model_.features)
        try:
            A = np.asarray(X, dtype=np.float64)
        except TypeError as exc:
            raise LearnerTypeError(f"X must be numeric (NaN or None for missing values): {exc}") from None
        except ValueError:
            raise LearnerError("X must be numeric (NaN or None for missing values)") from None
        if A.ndim != 2:
            raise LearnerError(f"X must be a 2-D array (n_samples, {self.n_features_in_}), "
                               f"got shape {A.shape}: Reshape your data (X.reshape(1, -1) "
                               "for a single row)")
        if A.shape[1] != self.n_features_in_:  # scikit-learn's words, which its checks match
            raise LearnerError(f"X has {A.shape[1]} features, but {type(self).__name__} is "
                               f"expecting {self.n_features_in_} features as input (X has shape {A.shape})")
        return A if order is None else A[:, order]

    def _column_order(self, X):
        """For a table with named columns (a DataFrame), the position of each fitted feature
        in it, so rows are read by name whatever the column order; None to read by position
        (an array, or a model fitted without names). Missing or unknown names are refused:
        reading them by position would predict from the wrong columns without a word."""
        cols = column_names(X)
        names = getattr(self, "feature_names_in_", None)
        if cols is None or names is None:
            return None
        names = list(names)
        if cols == names:
            return None
        missing = [n for n in names if n not in cols]
        extra = [c for c in cols if c not in names]
        # scikit-learn's wording (its checks match it), then what to do
        problems = (["Feature names unseen at fit time:\n" + "".join(f"- {c}\n" for c in extra)]
                    if extra else []) + \
                   (["Feature names seen at fit time, yet now missing:\n"
                     + "".join(f"- {c}\n" for c in missing)] if missing else []) + \
                   (["a name repeats\n"] if len(set(cols)) != len(cols) else [])
        if problems:
            raise LearnerError("The feature names should match those that were passed during "
                               "fit.\n" + "".join(problems)
                               + f"pass the columns {', '.join(map(repr, names))}")
        return [cols.index(n) for n in names]

    def __sklearn_tags__(self):
        return sklearn_api.estimator_tags(self)

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy (classifiers) or R^2 averaged over outputs (regressors), as scikit-learn."""
        return score_of(self._fitted().target.task, y, self.predict(X), sample_weight)

    def to_code(self, target: str, *, name: str = "model", **options) -> dict[str, str]:
        """The fitted model as code: exactly ``rulegen.generate(self.model_, target, ...)``,
        {file name: text}; ``options`` are the target's (e.g. ``dialect="duckdb"`` for sql)."""
        from rulegen import generate
        return generate(self._fitted(), target, name=name, **options)

    def to_rules(self, *, flat: bool = False) -> str:
        """The fitted model in the rules language (``rulegen.dsl.dumps``): parses back to
        ``model_``; ``flat=True`` gives the one-rule-per-leaf view, for reading only."""
        from rulegen.dsl import dumps
        return dumps(self._fitted(), flat=flat)

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




class ClassifierMixin:
    """Class labels (integers or strings) encoded as codes 0..k-1, predictions decoded."""

    def __sklearn_tags__(self):
        return sklearn_api.classifier_tags(super().__sklearn_tags__())

    def _encode_y(self, y, n):
        sklearn_api.check_y_given(self, y)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            sklearn_api.column_vector_warning()
            y = y[:, 0]
        if y.ndim != 1:
            raise LearnerError(f"y must be 1-D class labels, got shape {y.shape} "
                               "(multi-output classification is not supported)")
        if len(y) != n:
            raise LearnerError(f"y has {len(y)} labels but X has {n} rows")
        if y.dtype.kind == "f":
            if not np.isfinite(y).all() or (y != np.round(y)).any():
                # "Unknown label type" is scikit-learn's phrase, which its checks match
                raise LearnerError("Unknown label type: continuous. Float class labels must be "
                                   "finite whole numbers; for a continuous target use a regressor")
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




class RegressorMixin:
    """Numeric targets, one or more outputs (a learner that fits one says so with
    ``_multi_output = False``)."""

    def __sklearn_tags__(self):
        return sklearn_api.regressor_tags(super().__sklearn_tags__(), self._multi_output)

    def _encode_y(self, y, n):
        sklearn_api.check_y_given(self, y)
        try:
            Y = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise LearnerError("y must be numeric for regression") from None
        if Y.ndim == 1:
            Y = Y[:, None]
        elif Y.ndim == 2 and Y.shape[1] == 1 and not self._multi_output:
            sklearn_api.column_vector_warning()
        if Y.ndim != 2 or Y.shape[0] != n or Y.shape[1] < 1:
            raise LearnerError(f"y must have shape ({n},) or ({n}, n_outputs), got {np.shape(y)}")
        if not np.isfinite(Y).all():
            raise LearnerError("y contains NaN or infinity; regression targets must be finite")
        big = np.flatnonzero(np.abs(Y).max(axis=1) > TARGET_LIMIT)
        if big.size:  # weighted squared errors of such targets overflow to NaN impurities
            i = int(big[0])
            raise LearnerError(f"y[{i}] is {Y[i, 0] if Y.shape[1] == 1 else Y[i].max():g}: "
                               f"regression targets must lie within +-{TARGET_LIMIT:g}; "
                               f"rescale the target")
        target = Target(task="regression", name="target", n_outputs=Y.shape[1])
        return np.ascontiguousarray(Y), target, {"n_outputs_": Y.shape[1]}

    def predict(self, X) -> np.ndarray:
        X = self._rows(X)
        values = evaluate.predict_value(self.model_, X)
        return values[:, 0] if values.shape[1] == 1 else values
