"""Feature binning for histogram boosting: LightGBM's bins, value for value.

A numeric feature gets at most ``max_bin`` bins: value bins, and one *missing bin* for NaN if
its sample has missing values (LightGBM's count). The missing bin comes right after a
feature's value bins (code ``n_bins[f]``), so a feature's histogram is exactly
``n_bins[f] + 1`` long and histograms of many features pack end to end without padding.

* **Numeric**: LightGBM's ``BinMapper::FindBin`` on the float64 values (LightGBM bins doubles;
  tests/test_lgbm_parity.py compares every row's bin with its ``Dataset``):
  - ``|x| <= ZERO`` is zero, ``ZERO`` being LightGBM's kZeroThreshold, the *float* 1e-35
    (1.0000000180025095e-35 as a double); a value at most one double above the previous one
    joins it (the larger stands for both); zero is a distinct value between the negative and
    the positive ones (its count possibly 0);
  - zero's bin is ``(-ZERO, ZERO]``; the negative values take a share of the other
    ``max_bin - 1`` bins by rows, the positive ones what is left (FindBinWithZeroAsOneBin);
  - on each side (GreedyFindBin), with no more distinct values than bins, a bound after each
    value once ``min_data_in_bin`` rows have gathered; otherwise at most
    ``min(bins, rows // min_data_in_bin)`` bins of about equal counts: a value holding at
    least a bin's share of rows gets a bin of its own, a bin closes once it holds the
    remaining rows divided by the remaining bins, or half that just before a big value;
  - a bound between values u < v is ``nextafter((u + v) / 2, +inf)`` in double;
  - a feature on which no cut leaves ``min_data_in_leaf`` sample rows on both sides gets a
    single bin (LightGBM's feature_pre_filter drops it).
  A value goes to the first bin whose bound it does not exceed: ``#{bounds e : e < x}``,
  after ``|x| <= ZERO`` became 0, NaN to the missing bin (or, without one, as 0: LightGBM's
  missing type None). A split "bins <= b left" is then LightGBM's own test ``x <= bound_b``
  in double, for every value; only the bound ``-ZERO`` needs ``x < -ZERO`` (LightGBM reads
  ``x = -ZERO`` as 0).
* **Categorical.** The bin is the category code (0..m-1); missing is bin m.

A node's **histogram** (:func:`build_histograms`) sums the gradients, hessians and rows of
its rows per bin, every feature's bins packed end to end (:class:`Layout`).

Binning looks at no more than ``sample`` rows (as LightGBM's ``bin_construct_sample_cnt``):
up to 200,000 rows every row decides, as in LightGBM; above, a seeded random subset of
rulegen's own (LightGBM draws another), and values outside it still get a bin by the rule above.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from rulegen.learn.compiled import kernels

BIN_SAMPLE = 200_000
ZERO = float(np.float32(1e-35))  # LightGBM's kZeroThreshold: the float 1e-35f, as a double
MIN_DATA_IN_BIN = 3  # LightGBM's default


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
    # (p,) LightGBM's most_freq_bin (-1: categorical). Its histograms leave bin 0 out when
    # that is 0 (``offset`` 1), and otherwise hold the node's sums less the other bins there
    most_freq: np.ndarray | None = None




def _div(a, b) -> float:
    """a / b as C++ divides doubles (x/0 is +-inf or NaN, no exception): :func:`_ratio`."""
    return float(_ratio(float(a), float(b)))


def _upper(a: float, b: float) -> float:
    """LightGBM's bin bound between distinct values a < b: the double just above their
    midpoint, (a + b) / 2 computed in double (GetDoubleUpperBound)."""
    return math.nextafter((a + b) / 2.0, math.inf)


def _close(a: float, b: float) -> bool:
    """LightGBM's CheckDoubleEqualOrdered: b is at most one double above a."""
    return b <= math.nextafter(a, math.inf)


@kernels._jit
def _ratio(a, b):
    """a / b as C++ divides doubles, compiled or not (x/0 is +-inf or NaN, where Python's
    float division raises)."""
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


@kernels._jit
def _reach_bin(cum, cumf, start, base, size):
    """The first i >= start with ``cum[i] - base >= size`` (LightGBM compares the bin's
    integer count with the double ``size``; ``base + size`` may round, so the search's
    answer is checked exactly on both sides). ``cumf``: ``cum`` as floats (exact: counts
    of rows)."""
    i = max(start, np.searchsorted(cumf, base + size))
    while i > start and cum[i - 1] - base >= size:
        i -= 1
    while i < cum.size and cum[i] - base < size:
        i += 1
    return i


@kernels._jit
def greedy_cuts(cum, cumf, small_cum, big, big_at, before_big, max_bin, rest_rows, rest_bins,
                mean, cuts):
    """The loop of :func:`greedy_bounds` over bins (LightGBM's GreedyFindBin with many
    values): each bin's last value into ``cuts``; returns how many. A bin closes at the
    first i >= start where value i is big, or the bin holds ``mean`` rows, or value i+1 is
    big and the bin holds max(1, mean/2) rows. Compiled with numba, plain Python without
    (the same steps: counts are far below 2^53, so comparing them with doubles is exact)."""
    d = cum.size
    nc = 0
    start = 0
    while start < d - 1:
        base = cum[start - 1] if start > 0 else 0
        i = d - 1
        k = np.searchsorted(big_at, start)
        if k < big_at.size:
            i = min(i, big_at[k])
        if not math.isnan(mean):  # (NaN: no bin is ever full)
            i = min(i, _reach_bin(cum, cumf, start, base, mean))
            j = _reach_bin(cum, cumf, start, base, max(1.0, mean * 0.5))
            k = np.searchsorted(before_big, j)
            if k < before_big.size:
                i = min(i, before_big[k])
        if i >= d - 1:
            break
        cuts[nc] = i
        nc += 1
        if nc >= max_bin - 1:
            break
        if not big[i]:
            rest_bins -= 1
            mean = _ratio(float(rest_rows - small_cum[i]), float(rest_bins))
        start = i + 1
    return nc


def greedy_bounds(u, counts, max_bin: int, total: int, min_data_in_bin: int) -> list:
    """LightGBM's GreedyFindBin: upper bounds of the bins of the sorted distinct values ``u``
    holding ``counts`` rows (``total`` in all), the last bound +inf. Few values: a bound
    after every value once ``min_data_in_bin`` rows have gathered. Many: at most
    ``min(max_bin, total // min_data_in_bin)`` bins of about equal counts, a value of at
    least a bin's share of rows in a bin of its own; the loop runs over bins, each end found
    by a search in the cumulative counts."""
    d = len(u)
    bounds = []
    if d <= max_bin:
        cur = 0
        for i in range(d - 1):
            cur += int(counts[i])
            if cur >= min_data_in_bin:
                v = _upper(u[i], u[i + 1])
                if not bounds or not _close(bounds[-1], v):
                    bounds.append(v)
                    cur = 0
        return bounds + [np.inf]
    if min_data_in_bin > 0:
        max_bin = max(1, min(max_bin, total // min_data_in_bin))
    big = counts >= _div(total, max_bin)
    rest_bins = max_bin - int(big.sum())
    rest_rows = total - int(counts[big].sum())
    mean = _div(rest_rows, rest_bins)
    cum = np.cumsum(counts)  # rows up to and including value i
    big_at = np.flatnonzero(big)
    before = big_at - 1  # values followed by a big one
    cuts = np.empty(d, dtype=np.intp)
    kernels.enabled()  # (the first call swaps numba's greedy_cuts in, where it can)
    nc = greedy_cuts(cum, cum.astype(np.float64), np.cumsum(np.where(big, 0, counts)), big,
                     big_at, before[before >= 0], max_bin, rest_rows, rest_bins, mean, cuts)
    for i in cuts[:nc].tolist():
        v = _upper(u[i], u[i + 1])
        if not bounds or not _close(bounds[-1], v):
            bounds.append(v)
    return bounds + [np.inf]


def distinct_values(x, total: int):
    """LightGBM's distinct values of one feature's sample (FindBin): values with
    ``|x| <= ZERO`` count as zero, a value at most one double above the previous one joins
    it (the larger stands for both), and zero is a value (with its count, possibly 0)
    between the negative and the positive ones. Returns (values, counts, NaN count)."""
    nan = np.isnan(x)
    na = int(nan.sum())
    v = np.sort(x[~nan & (np.abs(x) > ZERO)])
    zeros = total - len(v) - na
    if len(v):
        new = np.ones(len(v), dtype=bool)
        new[1:] = v[1:] > np.nextafter(v[:-1], np.inf)
        starts = np.flatnonzero(new)
        u = v[np.append(starts[1:], len(v)) - 1]  # each group's largest
        counts = np.diff(np.append(starts, len(v)))
    else:
        u, counts = v, np.zeros(0, dtype=np.int64)
    # zero: in front (all positive), between the signs, or last (all negative)
    at = int(np.searchsorted(u, 0.0))
    if len(u) == 0 or (at == 0 and zeros > 0) or (0 < at < len(u)) or (at == len(u) and zeros > 0):
        u, counts = np.insert(u, at, 0.0), np.insert(counts, at, zeros)
    return u.astype(np.float64), counts.astype(np.int64), na


def numeric_bounds(x, max_bin: int, min_data_in_bin: int = MIN_DATA_IN_BIN,
                   total: int | None = None) -> tuple[np.ndarray, bool, np.ndarray]:
    """LightGBM's bins of one numeric feature from its sample ``x`` (float64, NaN missing):
    (upper bounds of the value bins with the last +inf left out, whether NaN has a bin,
    rows per bin with the NaN bin last if it has one). ``total``: the sample's size
    (default len(x)). FindBinWithZeroAsOneBin: zero's bin (-ZERO, ZERO]; the negative values
    take their share of the other bins by rows, the positive ones what is left."""
    total = len(x) if total is None else total
    u, counts, na = distinct_values(x, total)
    if na:
        max_bin, total = max_bin - 1, total - na
    neg = int(np.searchsorted(u, -ZERO, side="right"))  # values <= -ZERO
    pos = int(np.searchsorted(u, ZERO, side="right"))  # first value > ZERO
    n_neg, n_zero = int(counts[:neg].sum()), int(counts[neg:pos].sum())
    bounds = []
    if neg > 0 and max_bin > 1:
        share = max(1, int(_div(n_neg, total - n_zero) * (max_bin - 1)))
        bounds = greedy_bounds(u[:neg], counts[:neg], share, n_neg, min_data_in_bin)
        bounds[-1] = -ZERO
    room = max_bin - 1 - len(bounds)
    if pos < len(u) and room > 0:
        bounds += [ZERO] + greedy_bounds(u[pos:], counts[pos:], room, int(counts[pos:].sum()),
                                         min_data_in_bin)
    else:
        bounds.append(np.inf)
    edges = np.array(bounds[:-1], dtype=np.float64)
    per_bin = np.bincount(np.searchsorted(edges, u, side="left"), weights=counts,
                          minlength=len(bounds)).astype(np.int64)
    if na:
        per_bin = np.append(per_bin, na)
    return edges, bool(na), per_bin


def splittable(per_bin, total: int, min_data_in_leaf: int) -> bool:
    """LightGBM's feature_pre_filter (NeedFilter): some cut between bins (the last bin
    aside) leaves ``min_data_in_leaf`` rows of the sample on both sides."""
    left = np.cumsum(per_bin[:-1])
    return len(per_bin) > 1 and bool(((left >= min_data_in_leaf)
                                      & (total - left >= min_data_in_leaf)).any())


def most_frequent_bin(edges, per_bin, total: int) -> int:
    """LightGBM's most_freq_bin: the fullest bin (NaN's included) if it holds 70% of the
    sample (kSparseThreshold), otherwise zero's bin."""
    top = int(np.argmax(per_bin))
    zero = int(np.searchsorted(edges, 0.0))
    return top if top == zero or not float(per_bin[top]) / total < 0.7 else zero


def assign(x, edges: np.ndarray, missing_bin: int | None, dtype) -> np.ndarray:
    """Bins of one numeric column as LightGBM's ValueToBin gives them: ``|x| <= ZERO`` is
    zero, then the first bin whose upper bound ``x`` does not exceed (``#{e < x}``); NaN to
    ``missing_bin``, or (None: the feature has no NaN bin) as zero."""
    x = np.asarray(x, dtype=np.float64)
    nan = np.isnan(x)
    v = np.where((np.abs(x) <= ZERO) | (nan & (missing_bin is None)), 0.0, x)
    b = np.searchsorted(edges, v, side="left")
    if missing_bin is not None:
        b[nan] = missing_bin
    return b.astype(dtype)


def bin_features(X: np.ndarray, categorical: dict, max_bin: int = 255, rng=None,
                 sample: int = BIN_SAMPLE, min_data_in_bin: int = MIN_DATA_IN_BIN,
                 min_data_in_leaf: int = 0) -> Bins:
    """Bin every column of ``X`` (n, p): numeric columns from their float64 values (LightGBM
    bins doubles), ``categorical`` maps a column to its number of categories (its values
    are codes or NaN). A numeric feature LightGBM's feature_pre_filter would drop (no cut
    leaves ``min_data_in_leaf`` sample rows on both sides) gets a single bin."""
    n, p = X.shape
    # codes go up to max_bin (a numeric feature's missing bin) or m (a categorical one's)
    top = max([max_bin] + [int(m) for m in categorical.values()])
    dtype = np.uint8 if top < 256 else np.uint16 if top < 65536 else np.int32
    pick = None
    if n > sample:
        rng = rng if rng is not None else np.random.default_rng(0)
        pick = np.sort(rng.choice(n, sample, replace=False))
    total = n if pick is None else sample
    filter_cnt = int(min_data_in_leaf * total / n)  # LightGBM's filter_cnt
    codes = np.empty((p, n), dtype=dtype)
    n_bins = np.zeros(p, dtype=np.intp)
    edges = []
    is_cat = np.zeros(p, dtype=bool)
    has_missing = np.zeros(p, dtype=bool)
    most_freq = np.full(p, -1, dtype=np.intp)
    for f in range(p):  # a loop over features; every row is handled by numpy
        x = X[:, f]
        if f in categorical:
            is_cat[f] = True
            n_bins[f] = int(categorical[f])
            nan = np.isnan(x)
            codes[f] = np.where(nan, n_bins[f], np.where(nan, 0, x)).astype(dtype)
            has_missing[f] = bool(nan.any())
            edges.append(np.zeros(0))
            continue
        xs = (x if pick is None else x[pick]).astype(np.float64)
        e, nan_bin, per_bin = numeric_bounds(xs, max_bin, min_data_in_bin)
        if not splittable(per_bin, total, filter_cnt):
            e, nan_bin = np.zeros(0), False  # one bin: never split
            codes[f] = 0
        else:
            codes[f] = assign(x, e, len(e) + 1 if nan_bin else None, dtype)
        n_bins[f] = len(e) + 1
        has_missing[f] = nan_bin
        most_freq[f] = most_frequent_bin(e, per_bin, total) if len(e) else 0
        edges.append(e)
    return Bins(codes, n_bins, edges, int(n_bins.max(initial=0)) + 1, is_cat, has_missing,
                most_freq)


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
