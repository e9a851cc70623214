"""Loss functions for boosting: value, gradient, hessian, initial score, IR link, leaf line search.

Every loss works on float64 arrays of shape (n, K): targets ``Y`` and raw scores ``F`` (the
model's output before the link). K is 1 for regression and binary classification (``Y`` holds
0/1) and the number of classes for multiclass (``Y`` one-hot). Gradients and hessians are per
row and *unweighted*; a learner multiplies by sample weights where it needs to.

=================  =================================  ===============  ===========  ==========
loss               per-row value                      gradient         hessian      link
=================  =================================  ===============  ===========  ==========
squared_error      (y - f)^2 / 2                      f - y            1            identity
absolute_error     |y - f|                            sign(f - y)      1 (*)        identity
huber              r^2/2 if |r| <= d else             clip(f - y,      1 if |r|<=d  identity
                   d (|r| - d/2), r = y - f           -d, d)           else 0
log_loss (binary)  log(1 + e^f) - y f                 p - y            p (1 - p)    sigmoid
log_loss (K > 2)   log(sum_j e^f_j) - sum_k y_k f_k   p_k - y_k        p_k (1-p_k)  softmax
=================  =================================  ===============  ===========  ==========

(*) the absolute error has no curvature; 1 is the usual stand-in (XGBoost and scikit-learn's
histogram boosting use it). Huber's ``d`` is the ``alpha`` quantile of |y - f| over the
training rows, re-estimated at the start of every round (:meth:`Loss.begin_round`), as
scikit-learn does. The softmax hessian is the diagonal of the true hessian, times
``hessian_scale`` (XGBoost's multi:softprob uses 2).

:meth:`Loss.line_search` is the first-order (Friedman / scikit-learn) leaf value: given the
rows of each leaf, the constant that minimises (or, for the log-losses, one Newton step
towards minimising) the loss of ``F + constant`` in that leaf.
"""

from __future__ import annotations

import math

import numpy as np

_EPS = float(np.finfo(np.float64).eps)


def weighted_percentile(values, weights, q: float, groups=None, n_groups: int = 1) -> np.ndarray:
    """The ``q``-quantile (q in [0, 1]) of ``values`` per group, weighted ("inverted CDF": the
    smallest value whose cumulative weight reaches q times the group's total, as scikit-learn's
    ``_weighted_percentile``). ``groups`` (ints in 0..n_groups-1) defaults to one group.
    Empty groups get 0. Vectorised: one lexsort, no loop over groups."""
    values = np.asarray(values, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    if groups is None:
        groups = np.zeros(len(values), dtype=np.intp)
    out = np.zeros(n_groups)
    if len(values) == 0:
        return out
    order = np.lexsort((values, groups))
    g, v, w = groups[order], values[order], weights[order]
    counts = np.bincount(g, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    present = np.flatnonzero(counts)
    cw = np.cumsum(w)
    before = np.where(starts > 0, cw[np.maximum(starts - 1, 0)], 0.0)  # weight of earlier groups
    within = cw - before[g]
    total = np.bincount(g, weights=w, minlength=n_groups)
    target = q * total
    target = np.where(target == 0, np.nextafter(0.0, 1.0), target)  # q = 0: skip zero weights
    reached = within >= target[g]
    idx = np.arange(len(v))
    first = np.minimum.reduceat(np.where(reached, idx, len(v)), starts[present])
    last = starts[present] + counts[present] - 1
    out[present] = v[np.minimum(first, last)]  # rounding may leave the target unreached
    return out


def _group_sums(x, leaf, n_leaves):
    return np.bincount(leaf, weights=x, minlength=n_leaves)


def _safe_ratio(num, den):
    """num / den, 0 where the denominator is (nearly) 0: no improvement is possible there."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    ok = np.abs(den) >= 1e-150
    return np.where(ok, num / np.where(ok, den, 1.0), 0.0)


def _sigmoid(f):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-f))


class Loss:
    """The interface; see the module docstring for shapes and formulas."""

    name = ""
    link = "identity"  # the IR link that turns raw scores into outputs
    # the memory order of the (n, K) raw scores boost() keeps: "F" for a loss whose row sums
    # do not depend on it (numpy sums a C-order row pairwise, an F-order one in order)
    score_order = "C"

    def pointwise(self, Y, F) -> np.ndarray:
        """Per-row loss, shape (n,)."""
        raise NotImplementedError

    def value(self, Y, F, w) -> float:
        """Weighted mean of the per-row loss (what early stopping watches)."""
        return float(np.average(self.pointwise(Y, F), weights=w))

    def round_value(self, Y, F, w) -> float:
        """:meth:`value` of the training scores at the end of a round. The caller promises
        that the next :meth:`gradient_hessian` gets the same ``F``, unchanged, and that the
        arrays the last one returned are no longer read: a loss may keep what both compute
        (LightGBM's softmax keeps its exps) until then or :meth:`end_rounds`, and write into
        those arrays."""
        return self.value(Y, F, w)

    def end_rounds(self) -> None:
        """Called when the rounds end: drop whatever :meth:`round_value` kept."""

    def gradient_hessian(self, Y, F) -> tuple[np.ndarray, np.ndarray]:
        """d loss / d F and d^2 loss / d F^2 (diagonal), each (n, K)."""
        raise NotImplementedError

    def init_score(self, Y, w) -> np.ndarray:
        """The best constant raw score, shape (K,)."""
        raise NotImplementedError

    def begin_round(self, Y, F, w) -> None:
        """Called before the gradients of every round (Huber re-estimates its delta here)."""

    def line_search(self, y, f, g, h, w, leaf, n_leaves) -> np.ndarray:
        """Leaf values (n_leaves,) for one output: ``y``, ``f``, ``g``, ``h``, ``w`` are that
        output's target, raw score, gradient, hessian and sample weight on the rows that
        grew the tree, ``leaf`` the leaf (0..n_leaves-1) each row reached."""
        raise NotImplementedError


class SquaredError(Loss):
    name = "squared_error"

    def pointwise(self, Y, F):
        return 0.5 * ((Y - F) ** 2).sum(axis=1)

    def gradient_hessian(self, Y, F):
        return F - Y, np.ones_like(F)

    def init_score(self, Y, w):
        return np.average(Y, weights=w, axis=0)

    def line_search(self, y, f, g, h, w, leaf, n_leaves):
        # the mean residual: the tree's own leaf value
        return _safe_ratio(_group_sums(w * (y - f), leaf, n_leaves), _group_sums(w, leaf, n_leaves))


def _median_init(Y, w):
    if np.all(w == w[0]):
        return np.median(Y, axis=0)  # scikit-learn: unweighted fits take numpy's median
    return np.array([weighted_percentile(Y[:, k], w, 0.5)[0] for k in range(Y.shape[1])])


class AbsoluteError(Loss):
    name = "absolute_error"

    def pointwise(self, Y, F):
        return np.abs(Y - F).sum(axis=1)

    def gradient_hessian(self, Y, F):
        return np.sign(F - Y), np.ones_like(F)

    def init_score(self, Y, w):
        return _median_init(Y, w)

    def line_search(self, y, f, g, h, w, leaf, n_leaves):
        return weighted_percentile(y - f, w, 0.5, leaf, n_leaves)


class Huber(Loss):
    name = "huber"

    def __init__(self, alpha: float = 0.9):
        self.alpha = float(alpha)
        self.delta = 1.0

    def begin_round(self, Y, F, w):
        self.delta = float(weighted_percentile(np.abs(Y - F)[:, 0], w, self.alpha)[0])

    def pointwise(self, Y, F):
        a = np.abs(Y - F)
        d = self.delta
        return np.where(a <= d, 0.5 * a * a, d * (a - d / 2)).sum(axis=1)

    def gradient_hessian(self, Y, F):
        r = F - Y
        return np.clip(r, -self.delta, self.delta), (np.abs(r) <= self.delta).astype(np.float64)

    def init_score(self, Y, w):
        return _median_init(Y, w)

    def line_search(self, y, f, g, h, w, leaf, n_leaves):
        # Friedman's step: the leaf's median residual plus the mean of the deviations from it,
        # each clipped to delta
        r = y - f
        med = weighted_percentile(r, w, 0.5, leaf, n_leaves)
        dev = r - med[leaf]
        term = np.sign(dev) * np.minimum(self.delta, np.abs(dev))
        return med + _safe_ratio(_group_sums(w * term, leaf, n_leaves), _group_sums(w, leaf, n_leaves))


class BinaryLogLoss(Loss):
    name = "log_loss"
    link = "sigmoid"

    def pointwise(self, Y, F):
        return (np.logaddexp(0.0, F) - Y * F).sum(axis=1)

    def gradient_hessian(self, Y, F):
        p = _sigmoid(F)
        return p - Y, p * (1.0 - p)

    def init_score(self, Y, w):
        p = min(max(float(np.average(Y[:, 0], weights=w)), _EPS), 1.0 - _EPS)
        return np.array([math.log(p / (1.0 - p))])

    def line_search(self, y, f, g, h, w, leaf, n_leaves):
        # one Newton step: sum w (y - p) / sum w p (1 - p), with p = y + g
        p = y + g
        return _safe_ratio(_group_sums(-w * g, leaf, n_leaves),
                           _group_sums(w * p * (1.0 - p), leaf, n_leaves))


class SoftmaxLoss(Loss):
    name = "log_loss"
    link = "softmax"

    def __init__(self, n_classes: int, hessian_scale: float = 1.0):
        self.n_classes = int(n_classes)
        self.hessian_scale = float(hessian_scale)

    @staticmethod
    def probabilities(F):
        e = np.exp(F - F.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def pointwise(self, Y, F):
        m = F.max(axis=1)
        lse = m + np.log(np.exp(F - m[:, None]).sum(axis=1))
        return lse - (Y * F).sum(axis=1)

    def gradient_hessian(self, Y, F):
        p = self.probabilities(F)
        return p - Y, self.hessian_scale * p * (1.0 - p)

    def init_score(self, Y, w):
        # symmetric log-priors: log p_k - mean_j log p_j (scikit-learn's and XGBoost 3's start)
        p = np.clip(np.average(Y, weights=w, axis=0), _EPS, 1.0 - _EPS)
        lp = np.log(p)
        return lp - lp.mean()

    def line_search(self, y, f, g, h, w, leaf, n_leaves):
        # scikit-learn's multinomial step (Friedman 2001, algorithm 6): (K-1)/K times the
        # Newton step with the diagonal hessian p (1 - p)
        p = y + g
        k = self.n_classes
        num = _group_sums(-w * g, leaf, n_leaves) * ((k - 1) / k)
        return _safe_ratio(num, _group_sums(w * p * (1.0 - p), leaf, n_leaves))


REGRESSION_LOSSES = ("squared_error", "absolute_error", "huber")
CLASSIFICATION_LOSSES = ("log_loss",)


def make_loss(name: str, n_classes: int | None = None, alpha: float = 0.9,
              hessian_scale: float = 1.0) -> Loss:
    """The loss called ``name``; classifiers give ``n_classes`` (2: sigmoid, more: softmax)."""
    if n_classes is not None:
        if name != "log_loss":
            raise ValueError(f"unknown classification loss {name!r}")
        return BinaryLogLoss() if n_classes == 2 else SoftmaxLoss(n_classes, hessian_scale)
    if name == "squared_error":
        return SquaredError()
    if name == "absolute_error":
        return AbsoluteError()
    if name == "huber":
        return Huber(alpha)
    raise ValueError(f"unknown regression loss {name!r}")
