"""The IR of :mod:`rulegen.learn.compiled.lgbm_kernels`' trees (:func:`tree_from_arrays`).

A small fit's compiled trees cost less to grow than their IR nodes cost to make through the
frozen classes' ``__init__`` (credit-g: 100 trees of 61 nodes, ~0.25 ms each grown), so the
nodes are made in bulk, a field at a time (:func:`rulegen.ir.nodes.nodes_in_bulk`, as the
forest makes its own).
"""

from __future__ import annotations

import numpy as np

from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Leaf,
    NumericTest,
    Split,
    Tree,
    nodes_in_bulk,
)
from rulegen.learn.splits.binning import ZERO

_DEFAULT = {True: DefaultChild(0), False: DefaultChild(1)}  # where missing values go


def tree_from_arrays(grower, arrays, count, kids, loc, cut, table, value, seg, perm) -> Tree:
    """The builder's IR nodes of one tree from :func:`lgbm_kernels.grow_tree`'s arrays
    (``grower``: its :class:`~rulegen.learn.compiled.lgbm_kernels.TreeGrower`, whose fit-wide tests
    the trees share and which records the trees validate may take as ``plain``)."""
    feats, n_bins, is_cat = arrays[0], arrays[2], arrays[6]
    edges, tests = grower.bins.edges, grower.tests
    if grower.unit_weights:
        support = (seg[:count, 1] - seg[:count, 0]).astype(np.float64).tolist()
    else:
        # numpy's sum of the node's rows in the finder's order, for its bits: the root's
        # rows ascend and every division is stable, so a node's rows ascend there
        w = grower.w
        support = [float(w[np.sort(perm[a:b])].sum()) for a, b in seg[:count].tolist()]
    locs = loc[:count]
    split_at = kids[:count, 0] >= 0
    # plain (validate): numeric splits (thresholds: bounds or +inf, never NaN; children
    # after their parent, once each, by construction) and finite leaf values (supports
    # are counts or sums of finite weights)
    plain = (not is_cat[locs[split_at]].any()
             and bool(np.isfinite(value[:count][~split_at]).all()))
    split_feats = set(feats[locs[split_at]].tolist()) if plain else None
    # where missing values go: the goes-left table's last slot (the missing bin)
    miss = table[np.arange(count), n_bins[locs]].tolist()
    values, locs, cuts = value[:count].tolist(), locs.tolist(), cut[:count].tolist()
    feats, n_bins, is_cat = feats.tolist(), n_bins.tolist(), is_cat.tolist()
    leaf_at, split_at_ids, tests_of, kids_of, miss_of = [], [], [], [], []
    for n, (left, right) in enumerate(kids[:count].tolist()):
        if left < 0:
            leaf_at.append(n)
            continue
        i = locs[n]
        f, nb = feats[i], n_bins[i]
        if is_cat[i]:
            key = (f, table[n, :nb].tobytes())
            test = tests.get(key)
            if test is None:
                test = CategoricalTest(f, tuple(np.flatnonzero(table[n, :nb]).tolist()))
                tests[key] = test
        else:
            key = (f << 32) | cuts[n]
            test = tests.get(key)
            if test is None:  # bins <= cut go left; the last value bin: every value
                t = np.inf if cuts[n] == nb - 1 else float(edges[f][cuts[n]])
                # LightGBM reads |x| <= ZERO as 0: only the bound -ZERO tells them apart
                test = NumericTest(f, "<" if t == -ZERO else "<=", t, "float64")
                tests[key] = test
        split_at_ids.append(n)
        tests_of.append(test)
        kids_of.append((left, right))
        miss_of.append(_DEFAULT[miss[n]])
    nodes = [None] * count
    made = nodes_in_bulk(Leaf, len(leaf_at), value=[(values[n],) for n in leaf_at],
                         samples=[support[n] for n in leaf_at])
    for n, node in zip(leaf_at, made):
        nodes[n] = node
    made = nodes_in_bulk(Split, len(split_at_ids), test=tests_of, children=kids_of,
                         missing=miss_of, samples=[support[n] for n in split_at_ids])
    for n, node in zip(split_at_ids, made):
        nodes[n] = node
    nodes = tuple(nodes)
    if plain:
        grower.plain[id(nodes)] = (nodes, 1, split_feats)
    return Tree(nodes)
