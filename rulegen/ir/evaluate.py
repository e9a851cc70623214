"""The reference evaluator: vectorised numpy over the IR, the oracle for every test.

It implements ``docs/IR.md`` literally. Rows move down a tree in groups (an
explicit stack of (node, rows, path weight)), so the cost is O(rows x depth)
numpy work and nothing recurses.

Input is a float64 array of shape (n_rows, n_features): numeric values, and
category *codes* for categorical features (see :mod:`rulegen.data` to encode
labels). NaN is missing.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.errors import DataError
from rulegen.ir import libm
from rulegen.ir.nodes import (
    Blend,
    CategoricalTest,
    DefaultChild,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Split,
    Surrogates,
    Tree,
)

_NP_DTYPE = {"float64": np.float64, "float32": np.float32}


def as_matrix(model: Model, X) -> np.ndarray:
    """``X`` as the (rows, features) float64 matrix every function here takes."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X.reshape(1, -1)
    if X.ndim != 2 or X.shape[1] != len(model.features):
        raise DataError(
            f"expected rows of {len(model.features)} features, got an array of shape {X.shape}"
        )
    return X


def _compare(x: np.ndarray, op: str, t, dtype: str) -> np.ndarray:
    """``x op t`` in the comparison type; NaN compares false."""
    if dtype == "float32":
        with np.errstate(over="ignore", invalid="ignore"):
            x = x.astype(np.float32)
        t = np.float32(t)
    return x < t if op == "<" else x <= t


def _codes(x: np.ndarray, n_categories: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes and a mask of values that are a known code (not missing, not unseen)."""
    with np.errstate(invalid="ignore"):
        known = (x == np.floor(x)) & (x >= 0) & (x < n_categories)
    codes = np.where(known, x, 0).astype(np.int64)
    return codes, known


def _binary_outcome(test, X: np.ndarray, rows: np.ndarray, features) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(holds, missing, unseen) for a binary test on ``rows``."""
    if isinstance(test, NumericTest):
        x = X[rows, test.feature]
        missing = np.isnan(x)
        return _compare(x, test.op, test.threshold, test.dtype), missing, np.zeros_like(missing)
    if isinstance(test, CategoricalTest):
        x = X[rows, test.feature]
        missing = np.isnan(x)
        codes, known = _codes(x, len(features[test.feature].categories))
        holds = known & np.isin(codes, np.asarray(test.categories, dtype=np.int64))
        return holds, missing, ~known & ~missing
    if isinstance(test, ObliqueTest):
        s = np.zeros(len(rows))
        missing = np.zeros(len(rows), dtype=bool)
        for f, w in zip(test.features, test.weights):
            x = X[rows, f]
            missing |= np.isnan(x)
            with np.errstate(invalid="ignore"):
                s = s + w * x
        return _compare(s, test.op, test.threshold, "float64"), missing, np.zeros_like(missing)
    raise TypeError(f"not a binary test: {test!r}")


def child_index(split: Split, X: np.ndarray, rows: np.ndarray, features) -> tuple[np.ndarray, np.ndarray]:
    """Child position for each row (missing rows get -1) and the missing mask."""
    test = split.test
    if isinstance(test, (NumericTest, CategoricalTest, ObliqueTest)):
        holds, missing, unseen = _binary_outcome(test, X, rows, features)
        child = np.where(holds, 0, 1)
        if split.unseen is not None:
            child[unseen] = split.unseen
    elif isinstance(test, IntervalTest):
        x = X[rows, test.feature]
        missing = np.isnan(x)
        bounds = np.asarray(test.bounds, dtype=np.float64)
        if test.dtype == "float32":
            with np.errstate(over="ignore", invalid="ignore"):
                x = x.astype(np.float32)
            bounds = bounds.astype(np.float32)
        # first i with x op bounds[i]: "<=" -> first bound >= x; "<" -> first bound > x
        child = np.searchsorted(bounds, x, side="left" if test.op == "<=" else "right")
    elif isinstance(test, MultiwayTest):
        x = X[rows, test.feature]
        missing = np.isnan(x)
        n_cat = len(features[test.feature].categories)
        codes, known = _codes(x, n_cat)
        group_of = np.full(n_cat + 1, -1, dtype=np.int64)
        for g, group in enumerate(test.groups):
            group_of[list(group)] = g
        child = np.where(known, group_of[codes], -1)
        child[child < 0] = split.unseen
    else:
        raise TypeError(f"unknown test {test!r}")
    child = np.asarray(child, dtype=np.int64)
    child[missing] = -1
    return child, missing


def resolve_surrogates(missing_rule: Surrogates, X, rows, child, features) -> None:
    """Fill in ``child`` (-1 where missing) by the surrogate rule, in place."""
    pending = child < 0
    for sur in missing_rule.surrogates:
        idx = np.flatnonzero(pending)
        if idx.size == 0:
            return
        holds, miss, _unseen = _binary_outcome(sur.test, X, rows[idx], features)
        decided = idx[~miss]
        child[decided] = np.where(holds[~miss], sur.child_if_true, 1 - sur.child_if_true)
        pending[decided] = False
    child[pending] = missing_rule.default


def tree_output(tree: Tree, X: np.ndarray, features, width: int) -> np.ndarray:
    """Output of one tree for every row: shape (n_rows, width), float64."""
    n = X.shape[0]
    out = np.zeros((n, width))
    blended = any(isinstance(nd, Split) and isinstance(nd.missing, Blend) for nd in tree.nodes)
    reached: list[tuple[int, np.ndarray, np.ndarray | None]] = []
    stack: list[tuple[int, np.ndarray, np.ndarray | None]] = [(0, np.arange(n), None)]
    while stack:
        node_id, rows, p = stack.pop()
        node = tree.nodes[node_id]
        if isinstance(node, Leaf):
            reached.append((node_id, rows, p))
            continue
        child, missing = child_index(node, X, rows, features)
        rule = node.missing
        if isinstance(rule, DefaultChild):
            child[missing] = rule.child
        elif isinstance(rule, Surrogates):
            resolve_surrogates(rule, X, rows, child, features)
        for i, child_id in enumerate(node.children):
            sel = child == i
            if isinstance(rule, Blend) and missing.any():
                w = np.where(sel, 1.0, 0.0)
                w[missing] = rule.weights[i]
                p_child = w if p is None else np.where(missing, p * w, p)
                keep = sel | (missing & (p_child != 0))
                if keep.any():
                    stack.append((child_id, rows[keep], p_child[keep]))
            elif sel.any():
                stack.append((child_id, rows[sel], None if p is None else p[sel]))
    if not blended:
        for node_id, rows, _p in reached:
            out[rows] = tree.nodes[node_id].value
        return out
    for node_id, rows, p in sorted(reached, key=lambda r: r[0]):
        value = np.asarray(tree.nodes[node_id].value)
        weight = np.ones(len(rows)) if p is None else p
        out[rows] = out[rows] + weight[:, None] * value
    return out


def raw_scores(model: Model, X) -> np.ndarray:
    """Combined tree outputs before the link, shape (n_rows, n_raw), in ``model.dtype``."""
    X = as_matrix(model, X)
    with np.errstate(over="ignore", invalid="ignore"):  # IEEE overflow to inf is the semantics
        return _raw_scores(model, X)


def _raw_scores(model: Model, X: np.ndarray) -> np.ndarray:
    n_raw = model.n_raw
    outputs = (tree_output(tree, X, model.features, 1 if tree.output is not None else n_raw)
               for tree in model.trees)
    return combine(model, outputs, X.shape[0])


def combine(model: Model, outputs, n_rows: int) -> np.ndarray:
    """Raw scores from each tree's output (an iterable of (n_rows, width) arrays, in tree
    order): base score, tree weights, aggregation, all in ``model.dtype`` (docs/IR.md)."""
    dt = _NP_DTYPE[model.dtype]
    acc = np.tile(np.asarray(model.base_score, dtype=np.float64).astype(dt), (n_rows, 1))
    for tree, c in zip(model.trees, outputs):
        if tree.weight != 1.0:
            c = tree.weight * c
        if model.aggregation == "vote":
            winner = np.argmax(c, axis=1)
            acc[np.arange(len(acc)), winner] += dt(tree.weight)
        elif tree.output is not None:
            acc[:, tree.output] = acc[:, tree.output] + c[:, 0].astype(dt)
        else:
            acc = acc + c.astype(dt)
    if model.aggregation == "mean":
        acc = acc / dt(len(model.trees))
    elif model.aggregation == "vote":
        total = 0.0
        for tree in model.trees:
            total = total + tree.weight
        acc = acc / dt(total)
    return acc


def _exp(v: float) -> float:
    # math.exp calls the C library's exp; Python raises where C returns inf.
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


_vexp = np.frompyfunc(_exp, 1, 1)


def _exp_array(a: np.ndarray) -> np.ndarray:
    if not a.size:
        return a.copy()
    with np.errstate(over="ignore"):
        return _vexp(a).astype(np.float64)


def apply_link(link: str, raw: np.ndarray, exp=None) -> np.ndarray:
    """The link in float64 (docs/IR.md) with the C library's exp, or ``exp`` (a vectorised
    float64 function: what an engine with another exp computes)."""
    raw = np.asarray(raw, dtype=np.float64)
    exp = exp or _exp_array
    if link == "identity":
        return raw.copy()
    if link == "sigmoid":
        return 1.0 / (1.0 + exp(-raw))
    if link == "exp":
        return exp(raw)
    if link == "softmax":
        m = raw.max(axis=1, keepdims=True)
        e = exp(raw - m)
        s = e[:, 0].copy()
        for k in range(1, e.shape[1]):
            s = s + e[:, k]
        return e / s[:, None]
    raise ValueError(f"unknown link {link!r}")


_EXP_CAP = np.float32(88.7)


def apply_link_f32(link: str, raw: np.ndarray, expf=libm.expf_array) -> np.ndarray:
    """The link in float32 as XGBoost computes it (docs/IR.md): float arithmetic and the C
    library's ``expf`` (``expf=libm.exp_rounded_array`` gives what targets without one compute)."""
    r = np.asarray(raw, dtype=np.float32)
    one = np.float32(1)
    with np.errstate(all="ignore"):
        if link == "identity":
            return r.copy()
        if link == "exp":
            return expf(r)
        if link == "sigmoid":
            v = -r
            v = np.where(_EXP_CAP < v, _EXP_CAP, v)  # std::min(-x, 88.7f): NaN stays NaN
            # XGBoost then adds 1e-16f, which changes no float32 sum >= 1
            return one / (expf(v) + one)
        if link == "softmax":
            m = np.fmax.reduce(r, axis=1, keepdims=True)  # fmaxf: NaN scores are passed over
            e = expf(r - m)
            s = np.zeros(len(r))
            for k in range(e.shape[1]):  # summed in double, left to right
                s = s + e[:, k].astype(np.float64)
            return e / s.astype(np.float32)[:, None]
    raise ValueError(f"unknown link {link!r}")


def predict_outputs(model: Model, X) -> np.ndarray:
    """Link applied to the raw scores, shape (n_rows, n_raw), in ``model.dtype``."""
    return outputs_of(model, raw_scores(model, X))


def outputs_of(model: Model, raw: np.ndarray) -> np.ndarray:
    """The link applied to raw scores, in ``model.dtype``."""
    if model.dtype == "float32":
        return apply_link_f32(model.link, raw)
    return apply_link(model.link, raw).astype(_NP_DTYPE[model.dtype])


def predict_proba(model: Model, X) -> np.ndarray:
    """Class probabilities, shape (n_rows, n_classes)."""
    if model.target.task != "classification":
        raise DataError("predict_proba needs a classification model")
    return proba_of(model, predict_outputs(model, X))


def proba_of(model: Model, out: np.ndarray) -> np.ndarray:
    """Class probabilities from the link's outputs."""
    if out.shape[1] == 1 and len(model.target.classes) == 2:
        return np.hstack([1 - out, out])
    return out


def predict_class_index(model: Model, X) -> np.ndarray:
    """Index into ``model.target.classes`` of the predicted class (lowest index on ties)."""
    return np.argmax(predict_proba(model, X), axis=1)


def predict_value(model: Model, X) -> np.ndarray:
    """Regression outputs, shape (n_rows, n_outputs)."""
    if model.target.task != "regression":
        raise DataError("predict_value needs a regression model")
    return predict_outputs(model, X)


def predict(model: Model, X) -> np.ndarray:
    """Class labels for classifiers; values (1-D when there is one output) for regressors."""
    if model.target.task == "classification":
        classes = np.asarray(model.target.classes, dtype=object)
        return classes[predict_class_index(model, X)]
    values = predict_value(model, X)
    return values[:, 0] if values.shape[1] == 1 else values
