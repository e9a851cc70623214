"""Post-pruning of IR trees: minimal cost-complexity pruning (CART's weakest link) and
reduced-error pruning (the choice of alpha by cross-validation is in ``pruning_cv``).

Everything here works on any learner's single tree through what the IR records:

* **Cost-complexity pruning** needs ``samples`` and ``impurity`` on every node. The
  weighted impurity of node t is ``R(t) = samples(t) * impurity(t) / samples(root)``;
  ``R(T_t)`` sums R over the leaves of t's subtree. Each round prunes the internal node
  with the smallest ``(R(t) - R(T_t)) / (leaves(T_t) - 1)``, the lowest node id on ties
  (one node per round, so tied nodes give repeated alphas). The sums are formed in
  scikit-learn's order (leaves by increasing id, and each pruning adds its difference to
  every ancestor), so on the same tree the path equals ``cost_complexity_pruning_path``
  of scikit-learn bit for bit. ``prune(tree, alpha)`` prunes while the weakest link's
  alpha is ``<= alpha``, as scikit-learn's ``ccp_alpha`` (and, as there, alpha 0 leaves
  the tree untouched, even a link of alpha 0).
* **Reduced-error pruning** (Quinlan) needs a validation set: bottom-up, a subtree
  becomes a leaf when that does not raise the validation error.

A pruned split becomes a leaf holding the split's own value: ``values[i]`` when given
(a learner's per-node values, e.g. ``estimator.node_values_``, since the IR keeps no
value on a split), else the class fractions of ``Split.distribution``, else the
``samples``-weighted mean of the leaf values below it (exact in real arithmetic for
means and class fractions, not for medians: pass ``values`` then). The new tree is
renumbered in pre-order (children after parents); every walk is a loop.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

from rulegen.errors import LearnerError
from rulegen.ir import evaluate
from rulegen.ir.nodes import (
    Blend,
    DefaultChild,
    IntervalTest,
    Leaf,
    Model,
    Split,
    Surrogates,
    Tree,
)
from rulegen.ir.validate import validate
from rulegen.learn.base import is_real


class PruningPath(NamedTuple):
    """scikit-learn's ``cost_complexity_pruning_path`` result: the effective alphas and
    the total leaf impurity of the subtree after each pruning (the first is the tree)."""

    ccp_alphas: np.ndarray
    impurities: np.ndarray


# --- inputs ------------------------------------------------------------------------------


def _unpack(source, values):
    """(model or None, tree, per-node values or None) of a Model, Tree or fitted estimator."""
    if hasattr(source, "model_"):
        if values is None:
            values = getattr(source, "node_values_", None)
        source = source.model_
    if isinstance(source, Tree):
        return None, source, values
    if not isinstance(source, Model):
        raise LearnerError(f"expected a rulegen Model, Tree or fitted estimator, got {type(source).__name__}")
    if len(source.trees) != 1:
        raise LearnerError(f"pruning works on a single tree; this model has {len(source.trees)}")
    return source, source.trees[0], values


def _check_alpha(alpha) -> float:
    if not is_real(alpha) or math.isnan(alpha) or alpha < 0:
        raise LearnerError(f"alpha={alpha!r} is invalid: expected a number >= 0")
    return float(alpha)


class _Shape:
    """Pre-order position and subtree size of every node: u is a proper ancestor of v iff
    pos[u] < pos[v] < pos[u] + size[u], so a subtree or a root path is one vector mask."""

    def __init__(self, nodes):
        n = len(nodes)
        self.leaf = np.array([isinstance(nd, Leaf) for nd in nodes], dtype=bool)
        size = [1] * n
        for i in range(n - 1, -1, -1):  # children have larger ids
            if not self.leaf[i]:
                size[i] = 1 + sum(size[c] for c in nodes[i].children)
        pos = [0] * n
        for i, nd in enumerate(nodes):
            if not self.leaf[i]:
                p = pos[i] + 1
                for c in nd.children:
                    pos[c] = p
                    p += size[c]
        self.size = np.array(size, dtype=np.intp)
        self.pos = np.array(pos, dtype=np.intp)

    def subtree(self, v) -> np.ndarray:
        return (self.pos >= self.pos[v]) & (self.pos < self.pos[v] + self.size[v])

    def ancestors(self, v) -> np.ndarray:
        return (self.pos < self.pos[v]) & (self.pos + self.size > self.pos[v])


def _node_values(tree: Tree, values):
    """A function node id -> the value that node has as a leaf (see the module docstring)."""
    nodes = tree.nodes
    if values is not None:
        if len(values) != len(nodes):
            raise LearnerError(f"values has {len(values)} entries for a tree of {len(nodes)} nodes")
        return lambda i: tuple(float(v) for v in values[i])
    width = len(next(nd for nd in nodes if isinstance(nd, Leaf)).value)
    mean = None

    def value(i):
        nonlocal mean
        nd = nodes[i]
        if isinstance(nd, Leaf):
            return nd.value
        if nd.distribution is not None and len(nd.distribution) == width:
            total = sum(nd.distribution)
            if total > 0:
                return tuple(c / total for c in nd.distribution)
        if mean is None:
            mean = _leaf_means(tree, width)
        return tuple(float(v) for v in mean[i])

    return value


def _leaf_means(tree: Tree, width: int) -> np.ndarray:
    nodes = tree.nodes
    sw = np.zeros(len(nodes))
    swv = np.zeros((len(nodes), width))
    for i in range(len(nodes) - 1, -1, -1):
        nd = nodes[i]
        if isinstance(nd, Leaf):
            if nd.samples is None:
                raise LearnerError("a leaf has no samples, so a pruned split's value cannot be "
                                   "derived; pass values= (one value per node)")
            sw[i] = nd.samples
            swv[i] = nd.samples * np.asarray(nd.value)
        else:
            sw[i] = sw[list(nd.children)].sum()
            swv[i] = swv[list(nd.children)].sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return swv / sw[:, None]


def _rebuild(tree: Tree, stop, value_of) -> tuple[Tree, list[int]]:
    """The tree with every split in ``stop`` made a leaf, renumbered in pre-order; also the
    old id of each new node."""
    nodes = tree.nodes
    order, stack = [], [0]
    while stack:
        i = stack.pop()
        order.append(i)
        if isinstance(nodes[i], Split) and i not in stop:
            stack.extend(reversed(nodes[i].children))
    new_id = {old: k for k, old in enumerate(order)}
    out = []
    for i in order:
        nd = nodes[i]
        if isinstance(nd, Leaf):
            out.append(nd)
        elif i in stop:
            out.append(Leaf(value_of(i), nd.samples, nd.distribution, nd.impurity))
        else:
            out.append(dataclasses.replace(nd, children=tuple(new_id[c] for c in nd.children)))
    return dataclasses.replace(tree, nodes=tuple(out)), order


def _result(model, tree):
    return tree if model is None else validate(dataclasses.replace(model, trees=(tree,)))


# --- minimal cost-complexity pruning --------------------------------------------------------


class _Links(NamedTuple):
    """The whole pruning sequence; entry 0 is the unpruned tree (alpha 0, no node)."""

    alphas: list  # effective alpha of each round
    impurities: list  # total leaf impurity after it
    pruned: list  # the node made a leaf
    leaves: list  # leaves left


def _weakest_links(tree: Tree) -> _Links:
    nodes = tree.nodes
    if any(nd.samples is None or nd.impurity is None for nd in nodes):
        raise LearnerError("cost-complexity pruning needs samples and impurity on every node")
    samples = np.array([nd.samples for nd in nodes], dtype=np.float64)
    impurity = np.array([nd.impurity for nd in nodes], dtype=np.float64)
    if not (np.isfinite(impurity).all() and np.isfinite(samples).all() and samples[0] > 0):
        raise LearnerError("cost-complexity pruning needs finite samples and impurity")
    shape = _Shape(nodes)
    r_node = samples * impurity / samples[0]
    r_branch = r_node.copy()
    n_leaves = np.zeros(len(nodes), dtype=np.intp)
    # a subtree's leaves are one run of the leaves taken in pre-order; summed by
    # increasing node id, sequentially (np.add.accumulate), as scikit-learn sums them
    leaf_ids = np.flatnonzero(shape.leaf)
    by_pos = leaf_ids[np.argsort(shape.pos[leaf_ids])]
    leaf_pos = shape.pos[by_pos]
    for u in np.flatnonzero(~shape.leaf):
        lo = np.searchsorted(leaf_pos, shape.pos[u])
        hi = np.searchsorted(leaf_pos, shape.pos[u] + shape.size[u])
        r_branch[u] = np.add.accumulate(r_node[np.sort(by_pos[lo:hi])])[-1]
        n_leaves[u] = hi - lo
    candidate = ~shape.leaf
    alphas, impurities, pruned = [0.0], [float(r_branch[0])], [None]
    leaves = [len(leaf_ids)]
    while candidate[0]:
        idx = np.flatnonzero(candidate)
        link = (r_node[idx] - r_branch[idx]) / (n_leaves[idx] - 1)
        k = int(np.argmin(link))  # first minimum: the lowest id wins ties
        v = int(idx[k])
        candidate[shape.subtree(v)] = False
        n_pruned = n_leaves[v] - 1
        n_leaves[v] = 0
        r_diff = r_node[v] - r_branch[v]
        r_branch[v] = r_node[v]
        up = shape.ancestors(v)
        n_leaves[up] -= n_pruned
        r_branch[up] += r_diff
        alphas.append(float(link[k]))
        impurities.append(float(r_branch[0]))
        pruned.append(v)
        leaves.append(max(int(n_leaves[0]), 1))
    return _Links(alphas, impurities, pruned, leaves)


def cost_complexity_pruning_path(model) -> PruningPath:
    """Effective alphas and subtree impurities of minimal cost-complexity pruning of a
    single-tree Model, a Tree or a fitted estimator (scikit-learn's definition)."""
    _, tree, _ = _unpack(model, None)
    links = _weakest_links(tree)
    return PruningPath(np.array(links.alphas), np.array(links.impurities))


def _rounds(links: _Links, alpha: float) -> int:
    """How many rounds pruning at alpha applies: scikit-learn stops at the first weakest
    link above alpha, and does nothing at alpha 0."""
    if alpha == 0.0:
        return 0
    above = np.flatnonzero(np.asarray(links.alphas[1:]) > alpha)
    return int(above[0]) if above.size else len(links.alphas) - 1


def _prune_to(tree: Tree, alpha: float, value_of, links=None) -> tuple[Tree, list[int]]:
    if alpha == 0.0:
        return tree, list(range(len(tree.nodes)))
    links = links if links is not None else _weakest_links(tree)
    return _rebuild(tree, set(links.pruned[1:1 + _rounds(links, alpha)]), value_of)


def prune_tree(tree: Tree, alpha: float, values=None) -> tuple[Tree, list[int]]:
    """:func:`prune` for a learner's own Tree: also the old id of every new node, so that
    per-node data (such as ``values``) can follow the renumbering."""
    return _prune_to(tree, _check_alpha(alpha), _node_values(tree, values))


def prune(model, alpha: float, values=None):
    """Minimal cost-complexity pruning at ``alpha`` (scikit-learn's ``ccp_alpha``): a new
    Model (or Tree, if given one). ``values``: optional per-node leaf values (see the
    module docstring); a fitted estimator supplies its own."""
    alpha = _check_alpha(alpha)
    model, tree, values = _unpack(model, values)
    new, _ = _prune_to(tree, alpha, _node_values(tree, values))
    return _result(model, new)


# --- reduced-error pruning --------------------------------------------------------------------


def _node_outputs(model: Model, node_values: list) -> np.ndarray:
    """What the model predicts when a row ends at each node: class index (classification)
    or outputs (regression). Computed by the evaluator itself on a stand-in tree whose
    interval split sends row i to a leaf holding node i's value, so it is exact."""
    k = len(node_values)
    tree = model.trees[0]
    if k == 1:
        nodes = (Leaf(node_values[0]),)
    else:
        bounds = tuple(i + 0.5 for i in range(k - 1))
        nodes = (Split(IntervalTest(0, "<", bounds), tuple(range(1, k + 1)), DefaultChild(0)),
                 *(Leaf(v) for v in node_values))
    stand_in = dataclasses.replace(model, trees=(dataclasses.replace(tree, nodes=nodes),))
    X = np.zeros((k, len(model.features)))
    X[:, 0] = np.arange(k)
    if model.target.task == "classification":
        return evaluate.predict_class_index(stand_in, X)
    return evaluate.predict_value(stand_in, X)


def _encode_labels(model: Model, y) -> np.ndarray:
    """Class index of each label (-1 for a label the model does not know)."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    lookup = {c: i for i, c in enumerate(model.target.classes)}
    uniq, inv = np.unique(y, return_inverse=True)
    codes = []
    for u in uniq.tolist():  # one per distinct label
        if isinstance(u, float) and u.is_integer():
            u = int(u)
        codes.append(lookup.get(u.decode() if isinstance(u, bytes) else u, -1))
    return np.asarray(codes, dtype=np.intp)[inv.reshape(-1)]


def _route(tree: Tree, features, X: np.ndarray):
    """Yield (node id, rows, path weight) for every node reached, parents first; a row
    meeting a missing value at a blend split follows every child with its weight."""
    stack = [(0, np.arange(X.shape[0]), np.ones(X.shape[0]))]
    while stack:
        i, rows, p = stack.pop()
        yield i, rows, p
        node = tree.nodes[i]
        if isinstance(node, Leaf) or rows.size == 0:
            continue
        # the evaluator's own routing, so validation rows go exactly where predictions go
        child, missing = evaluate.child_index(node, X, rows, features)
        rule = node.missing
        if isinstance(rule, DefaultChild):
            child[missing] = rule.child
        elif isinstance(rule, Surrogates):
            evaluate.resolve_surrogates(rule, X, rows, child, features)
        for c, cid in enumerate(node.children):
            sel = child == c
            if isinstance(rule, Blend) and missing.any():
                pc = np.where(missing, p * rule.weights[c], p)
                sel = sel | (missing & (pc != 0))
                stack.append((cid, rows[sel], pc[sel]))
            else:
                stack.append((cid, rows[sel], p[sel]))


def reduced_error_prune(model, X, y, sample_weight=None, values=None):
    """Reduced-error pruning on a validation set (X, y): visiting splits bottom-up, a
    subtree becomes a leaf when the validation error of that leaf is not larger than the
    subtree's (weighted misclassifications, or squared error summed over outputs). A
    subtree no validation row reaches is pruned too (its error is 0 either way).

    ``model``: a single-tree Model or a fitted estimator; returns the pruned Model. X
    holds category codes for categorical features and NaN for missing values, as the
    evaluator takes them. With blend splits (C4.5) a row with a missing value counts in
    every branch it follows with its path weight (C4.5's fractional cases), which is an
    approximation of the blended prediction's error."""
    model, tree, values = _unpack(model, values)
    if model is None:
        raise LearnerError("reduced-error pruning needs the Model (its target and link), not a bare Tree")
    X = evaluate.as_matrix(model, X)
    n = X.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,) or len(np.asarray(y)) != n:
        raise LearnerError(f"X has {n} rows; y and sample_weight must have as many")
    value_of = _node_values(tree, values)
    node_values = [value_of(i) for i in range(len(tree.nodes))]
    predicted = _node_outputs(model, node_values)
    if model.target.task == "classification":
        target = _encode_labels(model, y)
    else:
        target = np.asarray(y, dtype=np.float64).reshape(n, -1)
    leaf_error = np.zeros(len(tree.nodes))
    for i, rows, p in _route(tree, model.features, X):
        if model.target.task == "classification":
            wrong = (predicted[i] != target[rows]).astype(np.float64)
        else:
            wrong = ((target[rows] - predicted[i]) ** 2).sum(axis=1)
        leaf_error[i] = float(np.sum(w[rows] * p * wrong))
    error = leaf_error.copy()
    stop = set()
    for i in range(len(tree.nodes) - 1, -1, -1):  # children first
        nd = tree.nodes[i]
        if isinstance(nd, Split):
            below = float(sum(error[c] for c in nd.children))
            if leaf_error[i] <= below:
                stop.add(i)
            else:
                error[i] = below
    new, _ = _rebuild(tree, stop, value_of)
    return _result(model, new)


# --- alpha by cross-validation ----------------------------------------------------------------
