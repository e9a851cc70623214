"""After a Newton tree has grown: gamma pruning and the final leaf values (XGBoost's pruner
and leaf weights, :mod:`rulegen.learn.ensembles.newton`'s gain)."""

from __future__ import annotations

import numpy as np

from rulegen.ir.nodes import Leaf, Split, Tree
from rulegen.learn.ensembles.newton import leaf_weight


def _gain(GL, HL, GR, HR, lam, gamma):
    """:func:`rulegen.learn.ensembles.newton.split_gain` of Python floats, its operations in its order."""

    def score(G, H):
        D = H + lam
        if D > 0:
            return G * G / D
        if not lam > 0:
            return 0.0
        with np.errstate(divide="ignore", invalid="ignore"):  # numpy's x / 0
            return float(np.float64(G * G) / D)

    return 0.5 * (score(GL, HL) + score(GR, HR) - score(GL + GR, HL + HR)) - gamma


def finish_tree(tree: Tree, leaf_of_row, rows, g, h, w, *, reg_lambda, gamma, scale):
    """Prune and set leaf values from the rows that grew the tree.

    ``leaf_of_row`` is the leaf every training row reaches (by the evaluator); ``g``, ``h``,
    ``w`` are per global row (g and h weighted). Bottom-up, a split whose children are both
    leaves and whose :func:`split_gain` is negative becomes a leaf. Leaves get
    ``scale * leaf_weight(G, H)`` (scale: the learning rate). Returns the new tree, the new
    leaf of every row and the value of every new node (0-based new ids)."""
    nodes = tree.nodes
    n_nodes = len(nodes)
    lr = leaf_of_row[rows]
    G = np.bincount(lr, weights=g[rows], minlength=n_nodes)
    H = np.bincount(lr, weights=h[rows], minlength=n_nodes)
    W = np.bincount(lr, weights=w[rows], minlength=n_nodes)
    # in Python floats (a node at a time; numpy's scalars cost more than the arithmetic),
    # operation for operation as numpy's sums and split_gain: the same bits
    sums = [a.tolist() for a in (G, H, W)]
    leaf = [isinstance(nd, Leaf) for nd in nodes]
    parent = [0] * n_nodes
    for i in range(n_nodes - 1, -1, -1):  # children have larger ids: this is bottom-up
        if leaf[i]:
            continue
        cs = nodes[i].children
        for c in cs:
            parent[c] = i
        for a in sums:  # np.sum of two values adds them to 0.0 in order (0.0 for -0.0s)
            a[i] = (0.0 + a[cs[0]]) + a[cs[1]] if len(cs) == 2 else float(np.sum([a[c] for c in cs]))
        if all(leaf[c] for c in cs):
            l, r = cs
            Gs, Hs = sums[0], sums[1]
            if _gain(Gs[l], Hs[l], Gs[r], Hs[r], reg_lambda, gamma) < 0:
                leaf[i] = True
    G, H, W = (np.array(a) for a in sums)
    is_leaf, parent = np.array(leaf), np.array(parent, dtype=np.intp)
    keep = np.zeros(n_nodes, dtype=bool)
    rep = np.arange(n_nodes)  # the kept node standing for each old node
    keep[0] = True
    for i in range(1, n_nodes):
        keep[i] = keep[parent[i]] and not is_leaf[parent[i]]
        if not keep[i]:
            rep[i] = rep[parent[i]]
    new_id = np.cumsum(keep) - 1
    values = scale * leaf_weight(G, H, reg_lambda)
    out = []
    for i in np.flatnonzero(keep):
        nd = nodes[i]
        if is_leaf[i]:
            out.append(Leaf((float(values[i]),), samples=float(W[i])))
        else:
            out.append(Split(nd.test, tuple(int(new_id[c]) for c in nd.children), nd.missing,
                             unseen=nd.unseen, samples=float(W[i])))
    return Tree(tuple(out)), new_id[rep[leaf_of_row]], values[np.flatnonzero(keep)]
