"""LightGBM's objectives as :class:`~rulegen.learn.ensembles.losses.Loss` objects, computed its way.

LightGBM keeps gradients and hessians in ``float`` (``score_t``), labels and weights in
``float`` too, and computes each gradient in double before rounding it to float; histograms
then sum those floats in double. Learning on the same numbers is what makes the trees its
trees (a float64 gradient moves a near-tie of gains, and a leaf value in the 8th digit). So
the gradients here are LightGBM's formulas, in double, rounded to float32 and handed on as
float64 holding float32 values, and *already weighted* (LightGBM rounds the weighted
product, not the gradient before the weight): the tree fitter must not weight them again.
The initial scores are LightGBM's ``BoostFromScore`` (``boost_from_average``), with its
sequential double sums:

* regression (L2): ``sum w y / sum w`` of the float32 labels; gradient ``f - y``, hessian 1;
* binary: ``log(p / (1 - p))``, p the positive share clamped to [1e-15f, 1 - 1e-15f];
  with label l = -1 / +1, response ``r = -l / (1 + exp(l f))``, gradient r, hessian
  ``|r| (1 - |r|)``;
* multiclass (softmax): ``log(max(1e-15f, p_k))`` per class; probabilities by LightGBM's
  Softmax (row max subtracted, exps summed in class order), gradient ``p - [y = k]``,
  hessian ``K/(K-1) p (1-p)``.

An initial score within 1e-15f of 0 is 0 (LightGBM then does not start from it).
``np.exp`` may differ from the C library's ``exp`` in the last bit; rounded to float32 that
almost never shows.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.errors import LearnerError
from rulegen.learn.compiled import kernels, lgbm_kernels
from rulegen.learn.ensembles.losses import BinaryLogLoss, SoftmaxLoss, SquaredError

K_EPSILON = float(np.float32(1e-15))  # LightGBM's kEpsilon, a float
F32_TARGET_LIMIT = 1e38  # f - y of two values within it stays below float32's 3.4e38


def _f32(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def _sequential_sum(a) -> float:
    """A sum in index order, as LightGBM's single-threaded loops add (np.sum pairs)."""
    a = np.asarray(a, dtype=np.float64)
    return float(np.cumsum(a)[-1]) if a.size else 0.0


def _start(score: float) -> float:
    return score if abs(score) > K_EPSILON else 0.0


class _Weighted:
    """Keeps the round's float32 weights (None: all 1) for the weighted gradients."""

    w32 = None

    def begin_round(self, Y, F, w):
        self.w32 = None if np.all(w == 1.0) else _f32(w)

    def value(self, Y, F, w) -> float:
        """:meth:`Loss.value` (``np.average`` of the per-row loss) to the bit, with one
        output computed on its column: the (n, 1) arrays' row sums and ``np.average``'s
        checks cost more than the loss (every round computes it for ``train_score_``)."""
        if F.shape[1] != 1:
            return super().value(Y, F, w)
        a = self.pointwise_one(Y[:, 0], F[:, 0])
        total = w.sum()
        if total == 0.0:
            return super().value(Y, F, w)  # (numpy's error)
        return float(np.multiply(a, w).sum() / total)


class LgbSquaredError(_Weighted, SquaredError):
    @staticmethod
    def pointwise_one(y, f):  # SquaredError.pointwise of one output
        return 0.5 * ((y - f) ** 2)

    def gradient_hessian(self, Y, F):
        y = _f32(Y)
        if self.w32 is None:
            return _f32(F - y), np.ones_like(F)
        w = self.w32[:, None]
        # float(float(f - y) * w): the product of two floats, rounded to float
        g = (F - y).astype(np.float32) * w.astype(np.float32)
        return g.astype(np.float64), np.broadcast_to(w, F.shape).copy()

    def init_score(self, Y, w):
        # LightGBM holds labels and weighted gradients (f - y) * w as float32: beyond its
        # range they would be inf and every split NaN
        big = np.flatnonzero(np.abs(Y[:, 0]) * float(w.max()) > F32_TARGET_LIMIT)
        if big.size:
            i = int(big[0])
            raise LearnerError(f"y[{i}] is {Y[i, 0]:g}: lightgbm_style keeps targets and "
                               f"gradients in float32, so |y| times the largest weight must "
                               f"stay within {F32_TARGET_LIMIT:g}; rescale the target")
        y = _f32(Y[:, 0])
        if np.all(w == 1.0):
            return np.array([_start(_sequential_sum(y) / float(len(y)))])
        w32 = _f32(w)
        return np.array([_start(_sequential_sum(y * w32) / _sequential_sum(w32))])


class LgbBinaryLogLoss(_Weighted, BinaryLogLoss):
    @staticmethod
    def pointwise_one(y, f):  # BinaryLogLoss.pointwise of one output
        return np.logaddexp(0.0, f) - y * f

    def gradient_hessian(self, Y, F):
        label = np.where(Y > 0.5, 1.0, -1.0)
        with np.errstate(over="ignore"):
            r = -label / (1.0 + np.exp(label * F))
        a = np.abs(r)
        h = a * (1.0 - a)
        if self.w32 is not None:
            r, h = r * self.w32[:, None], h * self.w32[:, None]
        return _f32(r), _f32(h)

    def init_score(self, Y, w):
        pos = (Y[:, 0] > 0.5).astype(np.float64)
        if np.all(w == 1.0):
            p = _sequential_sum(pos) / float(len(pos))
        else:
            w32 = _f32(w)
            p = _sequential_sum(pos * w32) / _sequential_sum(w32)
        p = max(min(p, 1.0 - K_EPSILON), K_EPSILON)
        return np.array([_start(math.log(p / (1.0 - p)))])


FEW = 8  # numpy adds a row of fewer values than this in order (its pairwise sum's base case)


def _row_max(F):
    """``F.max(axis=1)``, column by column for few classes, where numpy's reduction along
    short rows costs more than the arithmetic. The maxima are the same (raw scores are
    never NaN); of a +0 and a -0 either may come back, which no use here can tell apart:
    ``x - max`` is x but for x = +-0, where exp(+-0) is 1 either way."""
    if F.shape[1] >= FEW:
        return F.max(axis=1)
    m = F[:, 0]
    for k in range(1, F.shape[1]):
        m = np.maximum(m, F[:, k])
    return m


def _row_sum(A):
    """``A.sum(axis=1)`` for fewer than FEW columns: their values added in order, as numpy
    does (and the same bits)."""
    s = A[:, 0].copy()
    for k in range(1, A.shape[1]):
        s += A[:, k]
    return s


class LgbSoftmaxLoss(_Weighted, SoftmaxLoss):
    # the raw scores class by class in memory: a tree's update of its class's scores and
    # the exps' subtraction read them contiguously; no row sum here depends on the order
    # (maxima are exact, exps are added in class order, one-hot products are exact)
    score_order = "F"

    def __init__(self, n_classes: int):
        super().__init__(n_classes, n_classes / (n_classes - 1.0))
        self._y = None  # (Y, where Y is 1, each row's class): _classes
        self._kept = None  # (F, its exps) from round_value, for the next gradients
        # the (g, h) the last compiled gradient_hessian returned: round_value's promise
        # frees them, and the next round's exps and hessians are written there
        self._spare = None

    def value(self, Y, F, w) -> float:
        """:meth:`SoftmaxLoss.pointwise` averaged as :meth:`Loss.value`, with the exps of
        :meth:`exps` (every round computes it for ``train_score_``, and the next round's
        gradients take the same exps). Each row's exps are added in class order, as
        LightGBM's softmax adds them: with 8 classes or more, numpy's row sum of
        :meth:`SoftmaxLoss.pointwise` adds them pairwise, so the two may differ in the last
        bit."""
        return self._value(Y, F, w, keep=False)

    def round_value(self, Y, F, w) -> float:
        return self._value(Y, F, w, keep=True)

    def end_rounds(self):
        self._kept = self._spare = None

    def _value(self, Y, F, w, keep):
        total = w.sum()
        if total == 0.0:
            return super().value(Y, F, w)
        spare = self._spare if keep else None
        e, m = self._exps(F, None if spare is None else spare[0])
        lse = m + np.log(_row_sum(e))
        if keep:
            self._kept = (F, e)
        # each row's score of its class: Y is one-hot, so in any order the same sum
        yf = np.einsum("ij,ij->i", Y, F) if F.shape[1] >= FEW else _row_sum(np.multiply(Y, F))
        a = lse - yf
        return float(np.multiply(a, w).sum() / total)

    @staticmethod
    def _exps(F, out=None):
        """(:meth:`exps` of ``F``, each row's max), into ``out`` if given (F order)."""
        m = _row_max(F)
        e = np.empty(F.shape, order="F") if out is None or out.shape != F.shape else out
        np.subtract(F, m[:, None], out=e)
        return np.exp(e, out=e), m

    @classmethod
    def exps(cls, F):
        """``exp(F - max)`` of every row, in Fortran order (class by class in memory, as
        LightGBM keeps its gradients): a tree reads its class's column, which in a row-major
        array would take a cache line per row with many classes."""
        return cls._exps(F)[0]

    def _take_exps(self, F):
        """:meth:`exps` of ``F``: those :meth:`round_value` kept, if of this ``F``."""
        kept, self._kept = self._kept, None
        return kept[1] if kept is not None and kept[0] is F else self.exps(F)

    @staticmethod
    def _softmax(e):
        """LightGBM's softmax of every row from its :meth:`exps` (Fortran order), computed in
        place: with many classes each (n, K) array costs as much as its arithmetic."""
        total = e[:, 0].copy()
        for k in range(1, e.shape[1]):  # the classes in order, as LightGBM's loop
            total += e[:, k]
        e /= total[:, None]
        return e

    def _classes(self, Y):
        """(where Y is 1, each row's class or None), for the fit's targets (one array)."""
        if self._y is None or self._y[0] is not Y:
            where = np.nonzero(Y > 0.5)
            one_each = len(where[0]) == len(Y) and np.array_equal(where[0], np.arange(len(Y)))
            self._y = (Y, where, where[1].astype(np.intp) if one_each else None)
        return self._y[1], self._y[2]

    def gradient_hessian(self, Y, F):
        where, classes = self._classes(Y)
        if classes is not None and kernels.enabled():  # the same numbers, compiled
            # the gradients take the exps' place (each exp is read once, then overwritten):
            # a fresh (n, K) array costs its page faults, about as much as the arithmetic
            g, spare, self._spare = self._take_exps(F), self._spare, None
            h = (spare[1] if spare is not None and spare[1].shape == F.shape
                 else np.empty(F.shape, order="F"))
            w32 = np.zeros(0) if self.w32 is None else self.w32
            lgbm_kernels.softmax_gradients(g, classes, w32, self.hessian_scale, g, h)
            self._spare = (g, h)
            return g, h
        p = self._softmax(self._take_exps(F))
        # LightGBM's p - 1 for the row's class, p for the others (p - 0, the same bits)
        g = p.copy(order="F")
        g[where] -= 1.0
        h = self.hessian_scale * p
        h *= np.subtract(1.0, p, out=p)  # scale p (1 - p)
        if self.w32 is not None:
            g *= self.w32[:, None]
            h *= self.w32[:, None]
        g[...] = g.astype(np.float32)  # rounded to float32 as LightGBM keeps them
        h[...] = h.astype(np.float32)
        return g, h

    def init_score(self, Y, w):
        if np.all(w == 1.0):
            p = [_sequential_sum(Y[:, k]) / float(len(Y)) for k in range(Y.shape[1])]
        else:
            w32 = _f32(w)
            total = _sequential_sum(w32)
            p = [_sequential_sum(Y[:, k] * w32) / total for k in range(Y.shape[1])]
        return np.array([_start(math.log(max(K_EPSILON, pk))) for pk in p])
