"""Presorted row orders for the CART-like split finders: every feature's rows sorted once
per fit (:func:`presort`), filtered to a tree's rows, divided between a split's children
(into new arrays, or in place and undone after the tree), and which rows miss which
feature. :mod:`rulegen.learn.splits.builder` re-exports these names."""

from __future__ import annotations

import numpy as np

from rulegen.learn.compiled import kernels


def presorted_subset(order, mask, rows) -> np.ndarray:
    """The presorted ``order`` (features, N) of every training row, kept to ``rows``, each
    feature's row in order (``order`` itself when ``rows`` are all of them). ``mask`` (every
    training row, False) is scratch, False again on return."""
    if len(rows) == order.shape[1]:
        return order  # nothing to filter (nor to copy)
    mask[rows] = True
    out = order[mask[order]].reshape(len(order), -1)
    mask[rows] = False
    return out


def split_presorted(S, mask, rows_l, n_right, compiled=False) -> tuple[np.ndarray, np.ndarray]:
    """A split node's presorted orders ``S`` (features, n) divided between its children,
    each row in order: the rows ``rows_l`` to the left. ``mask`` (every training row,
    False) is scratch, False again on return. ``compiled``: in one pass of
    :func:`rulegen.learn.compiled.kernels.split_sorted` (the same arrays); CART and the forests do
    not ask (no gain measured there, and a single tree should not load numba)."""
    mask[rows_l] = True
    if compiled:  # one pass, no (features, n) temporary
        S_l = np.empty((len(S), len(rows_l)), dtype=S.dtype)
        S_r = np.empty((len(S), n_right), dtype=S.dtype)
        kernels.split_sorted(S, mask, S_l, S_r)
        mask[rows_l] = False
        return S_l, S_r
    m = mask[S]
    mask[rows_l] = False
    S_l = S[m].reshape(len(S), -1)
    return S_l, S[np.logical_not(m, out=m)].reshape(len(S), -1)  # in place: (p, n) bools


def partition_presorted(S, mask, n_left, block) -> list:
    """Divide a node's presorted orders ``S`` (features, n; a view into a larger buffer is
    fine) in place: in every feature's row, the rows marked in ``mask`` (the ``n_left``
    left rows) first, then the others, each side in its order -- the arrays
    :func:`split_presorted` gives, written over the parent's instead of into new ones.
    Features are taken a block of ``block`` elements at a time, so the temporaries stay
    small whatever the node. Returns what :func:`unpartition_presorted` needs to undo it:
    per block, which positions held left rows, one bit each."""
    p, n = S.shape
    step = max(1, block // max(n, 1))
    undo = []
    for f in range(0, p, step):
        B = S[f:f + step]
        m = mask[B]
        undo.append(np.packbits(m, axis=1))
        left = B[m]
        right = B[np.logical_not(m, out=m)]
        B[:, :n_left] = left.reshape(len(B), n_left)
        B[:, n_left:] = right.reshape(len(B), n - n_left)
    return undo


def unpartition_presorted(S, n_left, undo, block) -> None:
    """Undo :func:`partition_presorted` of ``S`` (its result, in place)."""
    p, n = S.shape
    step = max(1, block // max(n, 1))
    for f, packed in zip(range(0, p, step), undo):
        B = S[f:f + step]
        m = np.unpackbits(packed, axis=1, count=n).view(bool)
        parent = np.empty_like(B)
        parent[m] = B[:, :n_left].ravel()  # row by row: every row has n_left left rows
        parent[np.logical_not(m, out=m)] = B[:, n_left:].ravel()
        B[...] = parent


def missing_rows(XT) -> tuple[np.ndarray, np.ndarray]:
    """The features (rows of ``XT``, (features, n)) with a missing value, and which of the n
    rows miss each of them (bool, (those features, n)): a split finder's ``missing``, shared
    by finders of the same X."""
    feats = np.flatnonzero([np.isnan(x).any() for x in XT])  # (no (features, n) temporary)
    return feats, np.isnan(XT[feats])


def presort(X32) -> np.ndarray:
    """Every feature's rows in sorted order, (n_features, n) (NaN last, ties by row id):
    trees grown on the same X pass it to ``NumericSplitFinder.root``, which filters it
    instead of sorting again. Row ids are int32 when they fit: half the memory of intp,
    and every node's presorted orders are filtered from these (same dtype)."""
    XT = np.asarray(X32, dtype=np.float32).T
    p, n = XT.shape
    out = np.empty((p, n), dtype=np.int32 if n < 2**31 else np.intp)
    for f in range(p):  # one feature at a time: no (p, n) intp temporary
        out[f] = np.argsort(XT[f], kind="stable")
    return out
