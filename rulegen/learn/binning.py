"""Feature binning for histogram boosting: every value becomes a small integer bin.

A numeric feature gets at most ``max_bin`` bins: value bins, and one *missing bin* for NaN if
it has missing values (LightGBM's count). The missing bin comes right after a feature's value
bins (code ``n_bins[f]``), so a feature's histogram is exactly ``n_bins[f] + 1`` long and
histograms of many features pack end to end without padding.

* **Numeric**, from the distinct float32 values (the learners train on float32, as
  scikit-learn does) and their row counts, with LightGBM's rules (so that the bins, and with
  them the trees, are LightGBM's):
  - zero has a bin of its own, ``(-1e-35, 1e-35]``; of the other ``max_bin - 1`` bins the
    negative values may use a share in proportion to their rows, the positive values get the
    rest;
  - on each side, if there are no more distinct values than bins, each value has its own bin;
    otherwise the bins are filled to equal counts (quantiles): a value holding at least
    ``rows / bins`` rows gets a bin of its own, and the other bins close once they hold the
    remaining rows divided by the remaining bins (:func:`_greedy_cuts`);
  - so a distinct value is never split across bins, and a bin may be empty (zero's when no
    value is zero).
  The upper edge of a bin is the float64 midpoint ``u/2 + v/2`` of the last value in it and
  the first value of the next (exact: a float32 midpoint needs 25 bits, and strictly between
  them), or -1e-35 / 1e-35 around zero's bin. A value goes to the first bin whose edge it does
  not exceed: ``bin(x) = #{edges e : e < float32(x)}``. That rule is defined for *every* value,
  so a split "bins <= b left" is the IR test ``float32(x) <= edges[b]``
  (:func:`~rulegen.learn.builder.float32_test`): it routes training rows exactly as their
  bins did, and any unseen value by the same comparison.
* **Categorical.** The bin is the category code (0..m-1); missing is bin m.

A node's **histogram** (:func:`build_histograms`) sums the gradients, hessians and rows of
its rows per bin, every feature's bins packed end to end (:class:`Layout`).

Binning looks at no more than ``sample`` rows (a seeded random subset, as LightGBM's
``bin_construct_sample_cnt`` and scikit-learn's ``subsample``); values outside the sample still
get a bin by the rule above. LightGBM's ``min_data_in_bin`` (3 by default) is not applied: every
distinct value may have a bin of its own (LightGBM's ``min_data_in_bin=1``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from rulegen.learn import kernels

BIN_SAMPLE = 200_000
ZERO = 1e-35  # |x| <= ZERO is zero (LightGBM's kZeroThreshold)


@dataclass
class Bins:
    """The binned training matrix and how to read it back.

    ``codes`` (p, n): the bin of every value, uint8 when ``width <= 256``; ``n_bins[f]`` the
    number of value bins of feature f (categorical: its number of categories), and its
    missing bin; ``edges[f]`` the float64 upper edges of value bins 0..n_bins[f]-2 (empty for
    categorical features); ``width``: one more than the largest code."""

    codes: np.ndarray
    n_bins: np.ndarray
    edges: list
    width: int
    is_categorical: np.ndarray
    has_missing: np.ndarray  # (p,) the column has NaN (LightGBM's missing type)


def _greedy_cuts(counts: np.ndarray, max_bin: int) -> np.ndarray:
    """Where equal-count bins end: indices i such that a bin closes after distinct value i.

    A value holding at least ``n / max_bin`` rows is *big* and gets a bin of its own; the
    other bins share the remaining rows: a bin closes once it holds the remaining small rows
    divided by the remaining bins (re-computed after every bin), or just before a big value
    if it already holds half that. The loop is over bins (at most ``max_bin``), each found by
    a search in the cumulative counts."""
    d = len(counts)
    if d <= max_bin:
        return np.arange(d - 1)
    n = float(counts.sum())
    big = counts >= n / max_bin
    bins_left = max_bin - int(big.sum())
    small_total = n - float(counts[big].sum())
    small_cum = np.cumsum(np.where(big, 0, counts))  # small rows up to and including i
    cum = np.cumsum(counts)
    big_at = np.flatnonzero(big)
    size = small_total / bins_left if bins_left > 0 else np.inf
    cuts, start = [], 0
    while start < d - 1 and len(cuts) < max_bin - 1:
        before = float(cum[start - 1]) if start else 0.0
        i = int(np.searchsorted(cum, before + size, side="left"))  # where the bin is full
        k = int(np.searchsorted(big_at, start))
        nxt = int(big_at[k]) if k < len(big_at) else d  # the next big value closes its own bin
        i = min(i, nxt)
        if start <= nxt - 1 < d - 1 and cum[nxt - 1] - before >= max(1.0, 0.5 * size):
            i = min(i, nxt - 1)
        if i >= d - 1:
            break
        cuts.append(i)
        if not big[i]:
            bins_left -= 1
            size = (small_total - small_cum[i]) / bins_left if bins_left > 0 else np.inf
        start = i + 1
    return np.asarray(cuts, dtype=np.intp)


def _side_edges(u, counts, max_bin):
    cut = _greedy_cuts(counts, max_bin)
    return u[cut] / 2.0 + u[cut + 1] / 2.0


def numeric_edges(x32: np.ndarray, max_bin: int) -> np.ndarray:
    """Upper bin edges (float64, increasing) of one numeric column (float32, NaN ignored)."""
    v = x32[~np.isnan(x32)]
    if v.size == 0:
        return np.zeros(0)
    u, counts = np.unique(v, return_counts=True)
    u = u.astype(np.float64)
    neg, pos = u < -ZERO, u > ZERO
    n_neg, n_pos = int(counts[neg].sum()), int(counts[pos].sum())
    # zero has a bin of its own, (-ZERO, ZERO]; the negative values may use their share of
    # the other bins (by rows), the positive ones whatever the negative ones left unused
    parts, used = [], 0
    if n_neg:
        left = _side_edges(u[neg], counts[neg], max(1, int(n_neg / (n_neg + n_pos) * (max_bin - 1))))
        parts, used = [left, [-ZERO]], len(left) + 1
    if n_pos:
        parts += [[ZERO], _side_edges(u[pos], counts[pos], max_bin - 1 - used)]
    return np.concatenate(parts) if parts else np.zeros(0)


def assign(x32: np.ndarray, edges: np.ndarray, missing_bin: int, dtype) -> np.ndarray:
    """Bins of one numeric column: ``#{e < x}``, NaN to the missing bin."""
    b = np.searchsorted(edges, x32.astype(np.float64), side="left")
    b[np.isnan(x32)] = missing_bin
    return b.astype(dtype)


def bin_features(X32: np.ndarray, categorical: dict, max_bin: int = 255,
                 rng=None, sample: int = BIN_SAMPLE) -> Bins:
    """Bin every column of ``X32`` (n, p) float32; ``categorical`` maps a column to its
    number of categories (its values are codes or NaN)."""
    n, p = X32.shape
    # codes go up to max_bin (a numeric feature's missing bin) or m (a categorical one's)
    top = max([max_bin] + [int(m) for m in categorical.values()])
    dtype = np.uint8 if top < 256 else np.uint16 if top < 65536 else np.int32
    pick = None
    if n > sample:
        rng = rng if rng is not None else np.random.default_rng(0)
        pick = np.sort(rng.choice(n, sample, replace=False))
    codes = np.empty((p, n), dtype=dtype)
    n_bins = np.zeros(p, dtype=np.intp)
    edges = []
    is_cat = np.zeros(p, dtype=bool)
    for f in range(p):  # a loop over features; every row is handled by numpy
        x = X32[:, f]
        if f in categorical:
            is_cat[f] = True
            n_bins[f] = int(categorical[f])
            nan = np.isnan(x)
            codes[f] = np.where(nan, n_bins[f], np.where(nan, 0, x)).astype(dtype)
            edges.append(np.zeros(0))
            continue
        xs = x if pick is None else x[pick]
        # as LightGBM: with missing values, they take one of the max_bin bins
        e = numeric_edges(xs, max_bin - 1 if np.isnan(xs).any() else max_bin)
        n_bins[f] = len(e) + 1
        codes[f] = assign(x, e, n_bins[f], dtype)
        edges.append(e)
    has_missing = np.array([bool((codes[f] == n_bins[f]).any()) for f in range(p)])
    return Bins(codes, n_bins, edges, int(n_bins.max(initial=0)) + 1, is_cat, has_missing)


# --- histograms of binned rows -----------------------------------------------------------

SMALL_BLOCK = 1 << 15  # rows x features below which one bincount serves many nodes
_GROUPS = (16, 64)  # numeric features may be scanned in groups of similar bin counts


class Layout:
    """Where every feature's bins sit in a node's histogram (3, size): feature i (local
    index) holds slots ``off[i]`` .. ``off[i] + n_bins[i]``, its value bins then its missing
    bin, packed end to end; the last slot (``pad``) is always zero. Packed, a node's
    histogram is as long as its features' bins, not features x the widest feature: the
    subtractions and scans of small nodes move that much less memory."""

    def __init__(self, n_bins, is_cat):
        self.n_bins = np.asarray(n_bins, dtype=np.intp)
        lengths = self.n_bins + 1
        self.off = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.intp)
        self.pad = int(lengths.sum())
        self.size = self.pad + 1
        # numeric features in groups of similar bin counts (ascending feature index within
        # each), each scanned as one (features, bins) block: padding to the widest feature
        # of all would make every feature as costly as the widest
        num = self.num = np.flatnonzero(~is_cat)
        bounds = np.searchsorted(_GROUPS, self.n_bins[num], side="left")
        groups = [F for F in (num[bounds == g] for g in range(len(_GROUPS) + 1)) if F.size]
        self.num_blocks = {False: [(num, self.block(num))] if num.size else [],
                           True: [(F, self.block(F)) for F in groups]}
        # a scan costs a fixed ~80 us of numpy calls plus ~40 ns per (node, feature, bin)
        # cell: for a few nodes one block of all features, for many the groups
        cells = [sum(F.size * b.shape[1] for F, b in self.num_blocks[k]) for k in (False, True)]
        self._grouped_above = ((len(self.num_blocks[True]) - 1) * 2000
                               / max(1, cells[0] - cells[1]))  # nodes per batch
        self.cat = np.flatnonzero(is_cat)
        self.cat_index = self.block(self.cat)
        self.cat_position = np.cumsum(is_cat) - 1  # feature i is cat[cat_position[i]]

    def numeric_blocks(self, nodes: int) -> list:
        """(features, slot index) blocks to scan the numeric features of ``nodes`` nodes in."""
        return self.num_blocks[nodes > self._grouped_above]

    def block(self, F) -> np.ndarray:
        """(len(F), w) slot indices reading features F as rows of w columns: value bins,
        zeros (the pad slot) up to the widest, the missing bin last."""
        nb = self.n_bins[F]
        w = int(nb.max(initial=0)) + 1
        j = np.arange(w)
        idx = np.where(j < nb[:, None], self.off[F, None] + j, self.pad)
        idx[:, -1] = self.off[F] + nb
        return idx

    def slots(self, i) -> slice:
        """Feature i's slots: its value bins, then its missing bin."""
        return slice(int(self.off[i]), int(self.off[i] + self.n_bins[i]) + 1)


def concatenated(rows_list) -> tuple[np.ndarray, np.ndarray]:
    """Several nodes' rows as one index, and where each node's start (len(rows_list) + 1):
    node n's rows are ``rows[starts[n]:starts[n + 1]]`` (the kernels' batch form)."""
    rows = rows_list[0] if len(rows_list) == 1 else np.concatenate(rows_list)
    starts = np.fromiter(itertools.accumulate(map(len, rows_list), initial=0), np.intp,
                         len(rows_list) + 1)
    return rows, starts


def build_histograms(codes, feats, rows_list, g, h, layout: Layout, h_const=None,
                     counts=None) -> np.ndarray:
    """(3, nodes, layout.size): per node of ``rows_list`` the sums of g, h and the row count
    in every bin of every feature of ``feats``. ``h_const``: every h equals it, so the
    hessian row is count * h_const. ``counts`` (nodes, layout.size): the row counts, known
    already (a node's rows, and so its counts, may be the same every round)."""
    q, size, P = len(feats), layout.size, len(rows_list)
    sizes = [len(r) for r in rows_list]
    total = sum(sizes)
    out = np.zeros((3, P, size))
    if counts is not None:
        out[2] = counts
    if kernels.enabled():
        rows, starts = concatenated(rows_list)
        kernels.build_histograms(codes, np.asarray(feats, dtype=np.intp), layout.off, rows,
                                 starts, g, g if h_const is not None else h, out,
                                 h_const is None, counts is None)
    elif total * q <= SMALL_BLOCK:
        # small nodes: numpy's call overhead dominates, so every (node, feature) gets its
        # own range of one index and one bincount per sum covers them all
        rows = rows_list[0] if P == 1 else np.concatenate(rows_list)
        block = np.take(codes, rows, axis=1) if q == codes.shape[0] else codes[np.ix_(feats, rows)]
        idx = block.astype(np.intp)
        idx += layout.off[:, None]
        if P > 1:
            idx += np.repeat(np.arange(P) * size, sizes)[None, :]
        idx = idx.ravel()
        flat = out.reshape(3, P * size)
        flat[0] = np.bincount(idx, weights=np.broadcast_to(g[rows], (q, total)).ravel(),
                              minlength=P * size)
        if counts is None:
            flat[2] = np.bincount(idx, minlength=P * size)
        if h_const is None:
            flat[1] = np.bincount(idx, weights=np.broadcast_to(h[rows], (q, total)).ravel(),
                                  minlength=P * size)
    else:
        for n, rows in enumerate(rows_list):
            every = len(rows) == codes.shape[1]  # rows are distinct: these are all the rows
            g_r = g if every else g[rows]
            h_r = None if h_const is not None else h if every else h[rows]
            for i, f in enumerate(feats):  # features, not rows: each bincount is vectorised
                b = codes[f] if every else np.take(codes[f], rows)  # (take: faster than [])
                sl, L = layout.slots(i), int(layout.n_bins[i]) + 1
                out[0, n, sl] = np.bincount(b, weights=g_r, minlength=L)
                if counts is None:
                    out[2, n, sl] = np.bincount(b, minlength=L)
                if h_r is not None:
                    out[1, n, sl] = np.bincount(b, weights=h_r, minlength=L)
    if h_const is not None:
        np.multiply(out[2], h_const, out=out[1])
    return out
