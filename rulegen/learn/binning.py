"""Feature binning for histogram boosting: every value becomes a small integer bin.

A numeric feature gets at most ``max_bin`` bins: value bins, and one *missing bin* for NaN if
it has missing values (LightGBM's count). The missing bin sits at the fixed position
``width - 1`` for every feature, so that histograms of all features line up as one
(features, width) array.

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
* **Categorical.** The bin is the category code (0..m-1); the width grows to ``m + 1`` if a
  feature has more than ``max_bin`` categories (every histogram then widens with it).

Binning looks at no more than ``sample`` rows (a seeded random subset, as LightGBM's
``bin_construct_sample_cnt`` and scikit-learn's ``subsample``); values outside the sample still
get a bin by the rule above. LightGBM's ``min_data_in_bin`` (3 by default) is not applied: every
distinct value may have a bin of its own (LightGBM's ``min_data_in_bin=1``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BIN_SAMPLE = 200_000
ZERO = 1e-35  # |x| <= ZERO is zero (LightGBM's kZeroThreshold)


@dataclass
class Bins:
    """The binned training matrix and how to read it back.

    ``codes`` (p, n): the bin of every value, uint8 when ``width <= 256``; ``n_bins[f]`` the
    number of value bins of feature f (categorical: its number of categories); ``edges[f]``
    the float64 upper edges of value bins 0..n_bins[f]-2 (empty for categorical features);
    ``missing_bin = width - 1``."""

    codes: np.ndarray
    n_bins: np.ndarray
    edges: list
    width: int
    is_categorical: np.ndarray

    @property
    def missing_bin(self) -> int:
        return self.width - 1


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
    width = max([max_bin] + [int(m) for m in categorical.values()]) + 1
    dtype = np.uint8 if width <= 256 else np.uint16 if width <= 65536 else np.int32
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
            codes[f] = np.where(nan, width - 1, np.where(nan, 0, x)).astype(dtype)
            edges.append(np.zeros(0))
            continue
        xs = x if pick is None else x[pick]
        # as LightGBM: with missing values, they take one of the max_bin bins
        e = numeric_edges(xs, max_bin - 1 if np.isnan(xs).any() else max_bin)
        n_bins[f] = len(e) + 1
        codes[f] = assign(x, e, width - 1, dtype)
        edges.append(e)
    return Bins(codes, n_bins, edges, width, is_cat)
