"""Choosing ``ccp_alpha`` by k-fold cross-validation (rpart's xval, with its 1-SE rule),
and :func:`post_prune`, the fit-time step CART and QUEST share: prune the grown tree at
``ccp_alpha`` (a number, or ``"cv"`` to choose it here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rulegen.errors import LearnerError
from rulegen.ir.nodes import Leaf, Model, Split
from rulegen.learn import frames
from rulegen.learn.base import bad, is_int, is_real
from rulegen.learn.trees.pruning import (
    _node_outputs,
    _node_values,
    _rounds,
    _route,
    _weakest_links,
    prune_tree,
)


@dataclass(frozen=True)
class AlphaSearch:
    """Cross-validated choice of ``ccp_alpha``. Candidates are the distinct alphas of the
    full tree's pruning path (ascending, so later candidates are smaller trees)."""

    ccp_alphas: np.ndarray
    n_leaves: np.ndarray  # leaves of the full tree pruned at each candidate
    cv_error: np.ndarray  # mean held-out loss: misclassified weight share, or squared error
    cv_se: np.ndarray  # standard error of that mean
    best_index: int  # the lowest cv_error (the smallest such tree on ties)
    index: int  # the candidate chosen (best_index, or the 1-SE rule's)
    one_se: bool

    @property
    def alpha(self) -> float:
        return float(self.ccp_alphas[self.index])


def select_alpha(cv_error, cv_se, one_se: bool = False) -> tuple[int, int]:
    """(best, chosen) candidate indices. Candidates are ordered from the largest tree to
    the smallest; best has the lowest error (the smallest tree on ties); with ``one_se``,
    chosen is the smallest tree whose error is within one standard error of best's
    (rpart's 1-SE rule), otherwise best."""
    err = np.asarray(cv_error, dtype=np.float64)
    best = int(np.flatnonzero(err == err.min())[-1])
    if not one_se:
        return best, best
    limit = err[best] + float(np.asarray(cv_se, dtype=np.float64)[best])
    return best, int(np.flatnonzero(err <= limit)[-1])


def _folds(n: int, k: int, rng, codes=None) -> np.ndarray:
    """Fold of each row: a random permutation dealt round-robin; for classes (``codes``),
    each class's rows are dealt in turn, so every fold has its share of each class."""
    perm = rng.permutation(n)
    if codes is not None:
        perm = perm[np.argsort(codes[perm], kind="stable")]
    fold = np.empty(n, dtype=np.intp)
    fold[perm] = np.arange(n) % k
    return fold


def _check_cv(cv, n) -> int:
    if not (is_int(cv) and 2 <= cv <= n):
        raise LearnerError(f"cv={cv!r} is invalid: expected an integer in 2..{n} (the number of rows)")
    return int(cv)


def _fold_losses(est, probes, X, y, classification) -> np.ndarray:
    """Held-out loss of every row of X (n_probes, n_rows) for the fold's tree pruned at each
    probe alpha. Rows are routed once: a row ends at the first node of its path that is a
    leaf after k rounds, i.e. at node u for k in [made_leaf[u], min over u's ancestors)."""
    tree = est.model_.trees[0]
    nodes = tree.nodes
    links = _weakest_links(tree)
    k = np.array([_rounds(links, a) for a in probes])
    made_leaf = np.array([0.0 if isinstance(nd, Leaf) else np.inf for nd in nodes])
    for r, v in enumerate(links.pruned[1:], start=1):
        made_leaf[v] = min(made_leaf[v], r)
    until = np.full(len(nodes), np.inf)
    for i, nd in enumerate(nodes):  # parents first
        if isinstance(nd, Split):
            until[list(nd.children)] = min(until[i], made_leaf[i])
    value_of = _node_values(tree, est.node_values_)
    out = _node_outputs(est.model_, [value_of(i) for i in range(len(nodes))])
    if classification:
        out = est.classes_[out]
    loss = np.zeros((len(probes), X.shape[0]))
    for u, rows, _ in _route(tree, est.model_.features, X):
        sel = np.flatnonzero((k >= made_leaf[u]) & (k < until[u]))
        if sel.size and rows.size:
            if classification:
                lu = (out[u] != y[rows]).astype(np.float64)
            else:
                lu = ((y[rows] - out[u]) ** 2).mean(axis=1)
            loss[np.ix_(sel, rows)] = lu
    return loss


def cv_search(estimator, X, y, sample_weight, fit_params: dict, full: Model, full_values,
              cv: int, one_se: bool, random_state) -> AlphaSearch:
    """The search behind :func:`choose_alpha_cv`, given the tree already grown on all rows
    (``full``, with its per-node values); the estimator's own ``fit`` uses it for
    ``ccp_alpha="cv"``."""
    if frames.has_categories(X):  # the folds get the codes fit made (in fit_params)
        X = frames.encode_for_fit(X)[0]
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    n = X.shape[0]
    cv = _check_cv(cv, n)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    # every fold sees the full tree's feature names and category lists (a fold may lack
    # a category, and X is a plain array here even if it was a data frame)
    fit_params = {**fit_params, "feature_names": [f.name for f in full.features]}
    if fit_params.get("categorical_features") and not fit_params.get("categories"):
        fit_params["categories"] = {j: f.categories for j, f in enumerate(full.features)
                                    if f.kind == "categorical"}
    links = _weakest_links(full.trees[0])
    cand = np.unique(np.array(links.alphas))
    n_leaves = np.array([links.leaves[_rounds(links, a)] for a in cand])
    # each candidate is represented in the folds by the geometric mean of its alpha and the
    # next one (rpart's choice: a value inside the candidate's interval)
    lo = np.maximum(cand, 0.0)
    probes = np.append(np.sqrt(lo[:-1] * lo[1:]), np.inf)
    classification = full.target.task == "classification"
    if classification:
        codes = np.unique(y, return_inverse=True)[1].reshape(-1)
    else:
        y = y.reshape(n, -1).astype(np.float64)
        codes = None
    fold = _folds(n, cv, np.random.default_rng(random_state), codes)
    loss = np.zeros((len(cand), n))
    params = {**estimator.get_params(), "ccp_alpha": 0.0}
    for k in range(cv):
        train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
        # weights by keyword, and only when given: QUEST's fit has no sample_weight
        weights = {} if w is None else {"sample_weight": w[train]}
        est = type(estimator)(**params).fit(X[train], y[train], **weights, **fit_params)
        loss[:, test] = _fold_losses(est, probes, X[test], y[test], classification)
    ww = np.ones(n) if w is None else w
    total = ww.sum()
    err = loss @ ww / total
    var = ((loss - err[:, None]) ** 2) @ ww / total
    m = int((ww > 0).sum())
    se = np.sqrt(var / max(m - 1, 1))
    best, chosen = select_alpha(err, se, one_se)
    return AlphaSearch(cand, n_leaves, err, se, best, chosen, bool(one_se))


def choose_alpha_cv(estimator, X, y, *, cv: int = 10, one_se: bool = False, random_state=None,
                    sample_weight=None, **fit_params) -> AlphaSearch:
    """Choose ``ccp_alpha`` for ``estimator`` (a rulegen CART estimator; its other
    parameters are kept) by ``cv``-fold cross-validation, as rpart's xval does.

    The tree is grown on all rows and its pruning path gives the candidate alphas; each
    fold grows a tree on the other folds, prunes it at every candidate (the geometric mean
    of the candidate's alpha and the next) and scores the held-out rows. Folds are
    stratified by class for classifiers and drawn from ``random_state`` (an int makes the
    search deterministic). ``one_se`` applies rpart's 1-SE rule. ``fit_params`` go to
    ``fit`` (``categorical_features``, ``categories``, ``feature_names``). Returns an
    :class:`AlphaSearch`; ``.alpha`` is the chosen value for ``ccp_alpha``.
    """
    full = type(estimator)(**{**estimator.get_params(), "ccp_alpha": 0.0})
    full.fit(X, y, **({} if sample_weight is None else {"sample_weight": sample_weight}),
             **fit_params)
    return cv_search(estimator, X, y, sample_weight, fit_params, full.model_, full.node_values_,
                     cv, one_se, random_state)


def check_pruning(est, n: int) -> None:
    """The pruning parameters an estimator carries: ``ccp_alpha`` (a number >= 0 or
    ``"cv"``), ``cv_folds`` (at most the rows when used), ``one_se_rule``."""
    ca = est.ccp_alpha
    if not (ca == "cv" or (is_real(ca) and ca >= 0.0)):
        bad("ccp_alpha", ca, "a number >= 0 or 'cv'")
    cf = est.cv_folds
    if not (is_int(cf) and cf >= 2) or (ca == "cv" and cf > n):
        bad("cv_folds", cf, f"an integer in 2..{n} (the number of rows)")
    if not isinstance(est.one_se_rule, (bool, np.bool_)):
        bad("one_se_rule", est.one_se_rule, "True or False")


def post_prune(est, X, y, sample_weight, cat_labels: dict, tree, values, make):
    """The fit-time pruning of an estimator with ``ccp_alpha``, ``cv_folds``,
    ``one_se_rule`` and ``random_state``: returns (model, per-node values) after pruning
    ``tree`` at ``est.ccp_alpha`` (``"cv"``: chosen by cross-validation, the search kept
    as ``est.cv_results_``); sets ``est.ccp_alpha_``. ``make(tree)`` builds the Model."""
    model = make(tree)
    alpha = est.ccp_alpha
    if alpha == "cv":
        fit_params = {"categorical_features": sorted(cat_labels), "categories": cat_labels}
        est.cv_results_ = cv_search(est, X, y, sample_weight, fit_params, model, values,
                                    est.cv_folds, est.one_se_rule, est.random_state)
        alpha = est.cv_results_.alpha
    if alpha > 0.0:  # as sklearn: pruned after growth, nothing to do at 0
        tree, order = prune_tree(tree, alpha, values)
        model = make(tree)
        values = [values[i] for i in order]
    est.ccp_alpha_ = float(alpha)
    return model, values
