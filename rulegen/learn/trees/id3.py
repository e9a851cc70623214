"""ID3 (Quinlan 1986): multiway splits on categorical features by information gain.

At each node, as the study notes give it:

1. if the node's rows are all one class, or no feature is left, it is a leaf;
2. otherwise the gain ``g(D, A) = H(D) - sum_v |D_v|/|D| H(D_v)`` (entropy in bits,
   weighted counts) is computed for every feature not yet used on the path;
3. if the best gain is below ``epsilon``, the node is a leaf; otherwise it splits on
   that feature, one child per value seen at the node, and the feature is not
   offered again below it.

Leaves hold the class probabilities (weighted frequencies), so the predicted class
is the majority class, the lowest class index on ties. Choices beyond the notes:

* **Ties** between gains (within 1e-12 bits, which absorbs rounding) go to the
  feature with the lowest column index.
* **Missing values** count as one more value of the feature: if a node has rows
  with the feature missing, they get their own branch (an empty group of the
  ``MultiwayTest`` that ``DefaultChild`` points at), and its gain counts that
  branch like any other. Where a node saw no missing value, a missing value goes
  to the child with the largest training weight.
* **Unseen categories** (absent from the node's rows, or outside the feature's
  list) go to the largest child holding categories (``Split.unseen``).
* A split needs at least two values seen at the node (else nothing is divided);
  a zero gain is a split when ``epsilon`` is 0, as the notes' rule "gain <
  epsilon gives a leaf" says. ``max_depth`` and ``min_samples_split`` are
  optional pre-pruning.

Numeric features are refused: declare them categorical (their values must be
codes 0..m-1), drop them, or use a learner that thresholds numbers (c45, cart).
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.errors import LearnerError
from rulegen.learn.base import (
    ClassifierMixin,
    Estimator,
    bad,
    is_int,
    is_real,
    make_model,
)
from rulegen.learn.trees.multiway import (
    Chosen,
    class_summary,
    entropy_bits,
    grow,
    multiway_split,
)

_TIE = 1e-12  # bits: gains closer than this are equal
_BLOCK = 1 << 22  # elements per (features x rows) work array


class _GainSearch:
    """Chooses each node's split. ``state`` of a node is a boolean mask of the features
    still unused on its path. Counts come from one ``bincount`` per block of features:
    every (feature, code) pair has a slot, code ``size`` being "missing"."""

    def __init__(self, X32, y, w, sizes, n_classes, epsilon, max_depth, min_samples_split):
        self.y, self.w, self.k = y, w, n_classes
        self.sizes = np.asarray(sizes, dtype=np.intp)
        XT = X32.T
        # codes are whole numbers (checked by _check_categorical); NaN takes the last slot
        self.codes = np.where(np.isnan(XT), self.sizes[:, None], np.nan_to_num(XT)).astype(np.intp)
        slots = self.sizes + 1
        self.offset = np.concatenate([[0], np.cumsum(slots)[:-1]]).astype(np.intp)
        self.n_slots = int(slots.sum())
        self.slot_feature = np.repeat(np.arange(len(slots)), slots)
        self.epsilon, self.max_depth, self.mss = epsilon, max_depth, min_samples_split

    def _slot_counts(self, rows, feats) -> np.ndarray:
        """Weighted class counts of every slot of ``feats`` at the node, (n_slots, k)."""
        counts = np.zeros(self.n_slots * self.k)
        yr, wr = self.y[rows], self.w[rows]
        step = max(1, _BLOCK // max(len(rows), 1))
        for start in range(0, len(feats), step):
            F = feats[start:start + step]
            cell = (self.offset[F][:, None] + self.codes[F][:, rows]) * self.k + yr[None, :]
            counts += np.bincount(cell.ravel(), weights=np.broadcast_to(wr, cell.shape).ravel(),
                                  minlength=self.n_slots * self.k)
        return counts.reshape(self.n_slots, self.k)

    def gains(self, rows, feats):
        """(gain per feature, values seen per feature, slot counts) for ``feats``; the
        arrays are indexed by column, zero for columns not in ``feats``."""
        p = len(self.sizes)
        V = self._slot_counts(rows, feats)
        Wv = V.sum(axis=1)
        total = float(self.w[rows].sum())
        node = np.bincount(self.y[rows], weights=self.w[rows], minlength=self.k)
        cond = np.bincount(self.slot_feature, weights=Wv * entropy_bits(V), minlength=p) / total
        seen = np.bincount(self.slot_feature, weights=(Wv > 0), minlength=p).astype(np.intp)
        gain = np.maximum(float(entropy_bits(node)[0]) - cond, 0.0)
        mask = np.zeros(p, dtype=bool)
        mask[feats] = True
        return np.where(mask, gain, 0.0), np.where(mask, seen, 0), V

    def choose(self, rows, depth, unused) -> Chosen | None:
        if self.max_depth is not None and depth >= self.max_depth:
            return None
        if len(rows) < self.mss or np.unique(self.y[rows]).size < 2:
            return None
        feats = np.flatnonzero(unused)
        if feats.size == 0:
            return None
        gain, seen, V = self.gains(rows, feats)
        cands = feats[seen[feats] >= 2]
        if cands.size == 0:
            return None
        best = float(gain[cands].max())
        f = int(cands[np.argmax(gain[cands] >= best - _TIE)])
        if gain[f] < self.epsilon:
            return None
        info = {"feature": f, "gain": float(gain[f]),
                "gains": {int(j): float(gain[j]) for j in cands}}
        return self._partition(rows, f, info, V, unused)

    def _partition(self, rows, f, info, V, unused) -> Chosen:
        size = int(self.sizes[f])
        Wv = V[self.offset[f]:self.offset[f] + size + 1].sum(axis=1)
        present = np.flatnonzero(Wv > 0)  # codes seen here, in order; ``size`` = missing
        groups = [(int(c),) if c < size else () for c in present]
        missing_group = len(groups) - 1 if present[-1] == size else None
        test, missing, unseen = multiway_split(f, groups, missing_group, Wv[present])
        child_of = np.full(size + 1, -1, dtype=np.intp)
        child_of[present] = np.arange(len(present))
        child = child_of[self.codes[f, rows]]
        order = np.argsort(child, kind="stable")
        bounds = np.cumsum(np.bincount(child, minlength=len(present)))[:-1]
        parts = np.split(rows[order], bounds)
        # each child sees one value of f, so f could not split it anyway; the mask states
        # the rule outright and spares the children counting f
        below = unused.copy()
        below[f] = False
        return Chosen(test, missing, unseen, parts, info, [below] * len(parts))


def _codes_only(x) -> bool:
    v = x[~np.isnan(x)]
    return bool(((v >= 0) & (v == np.floor(v))).all())


class ID3Classifier(ClassifierMixin, Estimator):
    """ID3 decision tree for categorical features (see the module docstring).

    ``epsilon``: a node whose best information gain (bits) is below it is a leaf.
    ``max_depth``: deepest level a node may have (None: no limit).
    ``min_samples_split``: fewest training rows a node needs to be split.

    After ``fit``: ``model_`` (the IR), ``classes_``, ``splits_`` ({node id: {"feature":
    column, "name": feature name, "gain": bits, "gains": {name: bits} of every candidate}}),
    ``n_features_in_``, ``feature_names_in_``.
    """

    _params = ("epsilon", "max_depth", "min_samples_split")

    def __init__(self, epsilon=0.0, max_depth=None, min_samples_split=2):
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True  # scikit-learn's checks then give category codes
        return tags

    def _check_params(self):
        eps = self.epsilon
        if not (is_real(eps) and math.isfinite(eps) and eps >= 0):
            bad("epsilon", eps, "a finite number >= 0 (an information gain in bits)")
        md = self.max_depth
        if md is not None and not (is_int(md) and md >= 1):
            bad("max_depth", md, "None or an integer >= 1")
        mss = self.min_samples_split
        if not (is_int(mss) and mss >= 2):
            bad("min_samples_split", mss, "an integer >= 2")

    def fit(self, X, y, sample_weight=None, feature_names=None, categorical_features=None,
            categories=None):
        """Fit on ``X`` (n_samples, n_features) of category codes 0..m-1 (NaN for missing).
        Every column must be categorical: listed in ``categorical_features`` (indices or
        names) or, when that is None, holding whole numbers >= 0 only (ID3 splits nothing
        else, so such a column can only mean codes); ``categories`` optionally maps a column
        to its labels, code i meaning labels[i]."""
        self._check_params()
        X32, names = self._check_X(X, feature_names)
        n, p = X32.shape
        if categorical_features is None:
            categorical_features = [j for j in range(p) if _codes_only(X32[:, j])]
        cat_labels = self._check_categorical(X32, names, categorical_features, categories)
        numeric = [f"{names[j]!r} (column {j})" for j in range(p) if j not in cat_labels]
        if numeric:
            raise LearnerError(
                f"ID3 splits on categorical features only, but {', '.join(numeric)} "
                f"{'is' if len(numeric) == 1 else 'are'} numeric: declare "
                f"{'it' if len(numeric) == 1 else 'them'} categorical if the values are "
                "categories (--categorical NAME; categorical_features in Python), leave "
                f"{'it' if len(numeric) == 1 else 'them'} out (--ignore NAME), or use a learner "
                "that thresholds numbers (c45 or cart)")
        T, target, fitted = self._encode_y(y, n)
        w, _ = self._check_weights(sample_weight, n)
        k = len(target.classes)
        search = _GainSearch(X32, T, w, [len(cat_labels[j]) for j in range(p)], k,
                             float(self.epsilon), self.max_depth, int(self.min_samples_split))
        rows = np.flatnonzero(w > 0)  # zero-weight rows take no part
        tree, infos = grow(rows, class_summary(T, w, k), search.choose, np.ones(p, dtype=bool))
        self.model_ = make_model(names, cat_labels, target, tree, "id3", self.get_params(), n)
        self.splits_ = {nid: {"feature": i["feature"], "name": names[i["feature"]],
                              "gain": i["gain"],
                              "gains": {names[j]: g for j, g in i["gains"].items()}}
                        for nid, i in infos.items()}
        self._set_fitted(fitted, names)
        return self
