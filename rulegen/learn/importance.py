"""Feature importances of fitted ensembles: impurity decrease (read from the IR) and
permutation importance (measured on data).

**Impurity importance** of a tree: each split credits its feature with
``samples * impurity - sum(child.samples * child.impurity)`` (the weighted decrease the
builder recorded on the nodes), the tree's credits are normalised to sum to 1, and the
ensemble averages the trees that have at least one split (weighted by ``weights`` when
given, e.g. AdaBoost's estimator weights) and normalises again -- scikit-learn's
definition. An oblique split shares its decrease among its inputs in proportion to
``|weight_i| * scale_i`` (each input's spread in the combination).

**Permutation importance**: the drop of the estimator's score (accuracy, or R^2 for
regression) when one column is shuffled, over ``n_repeats`` shuffles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rulegen.errors import LearnerError
from rulegen.ir.nodes import Model, ObliqueTest, Split, Tree


def tree_importances(tree: Tree, n_features: int, scale=None) -> np.ndarray:
    """Impurity decrease per feature of one tree, normalised to sum to 1 (zeros if none)."""
    out = np.zeros(n_features)
    nodes = tree.nodes
    for node in nodes:
        if not isinstance(node, Split) or node.impurity is None or node.samples is None:
            continue
        dec = node.samples * node.impurity
        for c in node.children:
            dec -= nodes[c].samples * nodes[c].impurity
        test = node.test
        if isinstance(test, ObliqueTest):
            f = np.asarray(test.features)
            share = np.abs(np.asarray(test.weights)) * (1.0 if scale is None else scale[f])
            total = share.sum()
            share = share / total if total > 0 else np.full(len(f), 1.0 / len(f))
            np.add.at(out, f, dec * share)
        else:
            out[test.feature] += dec
    total = out.sum()
    return out / total if total > 0 else out


def impurity_importances(model: Model, scale=None, weights=None) -> np.ndarray:
    """Mean of the trees' normalised importances over trees with a split, normalised."""
    p = len(model.features)
    acc, wsum = np.zeros(p), 0.0
    for i, tree in enumerate(model.trees):
        if len(tree.nodes) < 2:
            continue
        w = 1.0 if weights is None else float(weights[i])
        acc += w * tree_importances(tree, p, scale)
        wsum += w
    if wsum == 0:
        return acc
    acc /= wsum
    total = acc.sum()
    return acc / total if total > 0 else acc


def r2(Y, P, sample_weight=None) -> float:
    """Coefficient of determination averaged over outputs (as scikit-learn's r2_score)."""
    Y = np.asarray(Y, dtype=np.float64).reshape(len(Y), -1)
    P = np.asarray(P, dtype=np.float64).reshape(len(Y), -1)
    w = np.ones(len(Y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    ss_res = (w[:, None] * (Y - P) ** 2).sum(axis=0)
    mean = (w @ Y) / w.sum()
    ss_tot = (w[:, None] * (Y - mean) ** 2).sum(axis=0)
    safe = np.where(ss_tot > 0, ss_tot, 1.0)
    scores = np.where(ss_tot > 0, 1.0 - ss_res / safe, np.where(ss_res == 0, 1.0, 0.0))
    return float(scores.mean())


def score_of(task: str, y, pred, sample_weight=None) -> float:
    """Accuracy (classification) or R^2 (regression) of predictions."""
    if task == "classification":
        hit = (np.asarray(pred) == np.asarray(y)).astype(np.float64)
        return float(np.average(hit, weights=sample_weight))
    return r2(y, pred, sample_weight)


@dataclass
class PermutationImportance:
    importances_mean: np.ndarray  # (n_features,)
    importances_std: np.ndarray  # (n_features,)
    importances: np.ndarray  # (n_features, n_repeats): baseline score minus shuffled score


_BLOCK = 1 << 22  # floats per batch of shuffled copies


def permutation_importance(estimator, X, y, n_repeats=5, random_state=None,
                           sample_weight=None) -> PermutationImportance:
    """Score drop of a fitted rulegen estimator when each column of ``X`` is shuffled.

    Each of the ``n_repeats`` shuffles of a column is an independent permutation of the
    rows (numpy's generator seeded by ``random_state``); the shuffled copies of one
    column are predicted in one batch."""
    if not hasattr(estimator, "model_"):
        raise LearnerError("permutation_importance needs a fitted estimator")
    if not (isinstance(n_repeats, (int, np.integer)) and n_repeats >= 1):
        raise LearnerError(f"n_repeats={n_repeats!r} is invalid: expected an integer >= 1")
    X = np.array(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or len(y) != len(X):
        raise LearnerError(f"X must be 2-D with one row per label, got {X.shape} and {len(y)} labels")
    n, p = X.shape
    rng = np.random.default_rng(random_state)
    task = estimator.model_.target.task
    base = score_of(task, y, estimator.predict(X), sample_weight)
    out = np.zeros((p, n_repeats))
    per_batch = max(1, _BLOCK // max(1, n * p))
    for j in range(p):
        for start in range(0, n_repeats, per_batch):
            k = min(per_batch, n_repeats - start)
            Xs = np.tile(X, (k, 1))
            Xs[:, j] = np.concatenate([X[rng.permutation(n), j] for _ in range(k)])
            pred = estimator.predict(Xs)
            for r in range(k):
                out[j, start + r] = base - score_of(task, y, pred[r * n:(r + 1) * n], sample_weight)
    return PermutationImportance(out.mean(axis=1), out.std(axis=1), out)
