"""The IR of :mod:`rulegen.learn.compiled.lgbm_kernels`' trees (:func:`tree_from_arrays`), with
leaves and splits made quickly.

The IR's nodes are frozen dataclasses: their ``__init__`` sets every field through
``object.__setattr__``, ~1.9 us a leaf and ~2.9 us a split here. A small fit's compiled trees
cost less than that (credit-g: 100 trees of 61 nodes, ~0.25 ms each grown, ~0.2 ms each
made into IR), so :func:`leaf` and :func:`split` set the slots directly through their
descriptors (~0.5 us): the same objects, equal to and hashing as the class's own. They
are used only while the classes are what they were written for (slots, these fields with
None defaults, no ``__post_init__``); otherwise they are the classes' constructors.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Leaf,
    NumericTest,
    Split,
    Tree,
)
from rulegen.learn.splits.binning import ZERO

_DEFAULT = {True: DefaultChild(0), False: DefaultChild(1)}  # where missing values go
_LEAF = ("value", "samples", "distribution", "impurity", "comment")
_SPLIT = ("test", "children", "missing", "unseen", "samples", "distribution", "impurity",
          "comment")


def _direct(cls, names, given: int) -> bool:
    """Whether setting ``cls``'s slots directly makes what ``cls(...)`` makes: its fields are
    ``names`` in order, every one past the first ``given`` None by default, and nothing runs
    after they are set."""
    fields = dataclasses.fields(cls)
    return (tuple(f.name for f in fields) == names
            and getattr(cls, "__slots__", None) == names
            and all(f.default is None for f in fields[given:])
            and not hasattr(cls, "__post_init__")
            and cls.__new__ is object.__new__)


def _makers():
    new = object.__new__
    if _direct(Leaf, _LEAF, 1):
        lv, ls, ld, li, lc = (getattr(Leaf, n).__set__ for n in _LEAF)

        def leaf(value, samples):
            o = new(Leaf)
            lv(o, value)
            ls(o, samples)
            ld(o, None)
            li(o, None)
            lc(o, None)
            return o
    else:
        def leaf(value, samples):
            return Leaf(value, samples)

    if _direct(Split, _SPLIT, 3):
        st, sk, sm, su, ss, sd, si, sc = (getattr(Split, n).__set__ for n in _SPLIT)

        def split(test, children, missing, samples):
            o = new(Split)
            st(o, test)
            sk(o, children)
            sm(o, missing)
            su(o, None)
            ss(o, samples)
            sd(o, None)
            si(o, None)
            sc(o, None)
            return o
    else:
        def split(test, children, missing, samples):
            return Split(test, children, missing, None, samples)

    return leaf, split


leaf, split = _makers()  # leaf(value, samples), split(test, children, missing, samples)


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
    nodes = []
    for n, (left, right) in enumerate(kids[:count].tolist()):
        if left < 0:
            nodes.append(leaf((values[n],), support[n]))
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
        nodes.append(split(test, (left, right), _DEFAULT[miss[n]], support[n]))
    nodes = tuple(nodes)
    if plain:
        grower.plain[id(nodes)] = (nodes, 1, split_feats)
    return Tree(nodes)
