"""best_categorical_rows (batched) against best_categorical (one row at a time): the same
gains bit for bit, the same sets, the same None cases."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from categorical_oracle import best_categorical

from rulegen.learn.splits.histogram_scan import SplitParams, best_categorical_rows

# (one-vs-rest below max_cat_to_onehot bins, LightGBM's NaN bin counted: m + 1 <= it)
PARAMS = [
    SplitParams(),
    # no smoothing, no limits: every cut of the order, guard on (lambda = 0)
    SplitParams(cat_smooth=0.0, cat_l2=0.0, reg_lambda=0.0, min_data_per_group=0,
                min_child_samples=1, min_child_weight=0.0, max_cat_to_onehot=3),
    SplitParams(reg_lambda=1.0, cat_smooth=5.0, cat_l2=1.0, min_data_per_group=10,
                min_child_samples=5, max_cat_threshold=3, max_cat_to_onehot=7),
    SplitParams(reg_lambda=0.5, cat_smooth=1.0, cat_l2=0.0, min_data_per_group=1,
                min_child_samples=2, min_child_weight=1.0, max_cat_threshold=2,
                max_cat_to_onehot=9),
    SplitParams(reg_lambda=0.0, cat_smooth=2.0, cat_l2=3.0, min_data_per_group=30,
                min_child_samples=10, min_child_weight=0.5, max_cat_threshold=64,
                max_cat_to_onehot=4),
]


def random_rows(rng, r, width, hessian):
    """r consistent histograms from simulated rows: integer counts, h >= 0, empty bins 0."""
    hist = np.zeros((3, r, width))
    m = np.empty(r, dtype=np.intp)
    G, H, C = np.empty(r), np.empty(r), np.empty(r)
    for i in range(r):
        big = width > 13 and rng.random() < 0.3
        m[i] = rng.integers(13, width) if big else rng.integers(2, min(13, width))
        scale = rng.choice([2, 5, 20, 60, 200])  # tiny counts bind the limits, large do not
        counts = np.zeros(width, dtype=np.intp)
        counts[:m[i]] = rng.integers(0, scale + 1, m[i])
        counts[:m[i]][rng.random(m[i]) < rng.random() * 0.6] = 0  # absent categories
        counts[-1] = 0 if rng.random() < 0.5 else rng.integers(1, scale + 1)  # missing
        codes = np.repeat(np.arange(width), counts)
        n = len(codes)
        if hessian == "const":  # squared-error like: integer g, h == count, ratios collide
            g = rng.integers(-1, 2, n).astype(float)
            h = np.ones(n)
        else:  # log-loss: hessians vary; some categories with h == 0 exactly
            mu = rng.normal(0.0, 2.0, width)
            prob = 1 / (1 + np.exp(-(mu[codes] + rng.normal(0.0, 0.5, n))))
            y = rng.random(n) < rng.random(width)[codes]
            g, h = prob - y, prob * (1 - prob)
            flat = rng.random(width) < 0.05
            h[flat[codes]] = 0.0
        hist[0, i] = np.bincount(codes, g, width)
        hist[1, i] = np.bincount(codes, h, width)
        hist[2, i] = counts
        G[i], H[i], C[i] = g.sum(), h.sum(), float(n)
    return hist, m, G, H, C


def sorted_order(hf, m, p):
    """The scalar version's sorted used categories (for telling the scan directions apart)."""
    Gc, Hc, Cc = hf[0, :m], hf[1, :m], hf[2, :m]
    used = np.flatnonzero((Cc > 0) & (Cc >= p.cat_smooth))
    key = Gc[used] / (Hc[used] + p.cat_smooth)
    return used[np.lexsort((used, key))], key


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the scalar version's 0/0 keys
@pytest.mark.parametrize("hessian", ["const", "logloss"])
@pytest.mark.parametrize("pi", range(len(PARAMS)))
def test_batched_equals_scalar(pi, hessian):
    p = PARAMS[pi]
    rng = np.random.default_rng(1000 * pi + (hessian == "const"))
    tally = {"rows": 0, "finite": 0, "onehot": 0, "forward": 0, "reverse": 0, "ties": 0}
    for width in (13, 256, 301):
        # big batches mix both kinds; single rows scan alone (no other row's positions)
        for r in (40, 40, 40, 1, 1, 1, 1, 3, 3):
            hist, m, G, H, C = random_rows(rng, r, width, hessian)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # the batched version warns about nothing
                gain, sets = best_categorical_rows(hist, m, G, H, C, p)
            assert gain.shape == (r,) and len(sets) == r
            for i in range(r):
                want = best_categorical(hist[:, i], int(m[i]), G[i], H[i], C[i], p)
                tally["rows"] += 1
                if m[i] + 1 > p.max_cat_to_onehot:
                    order, key = sorted_order(hist[:, i], int(m[i]), p)
                    tally["ties"] += len(np.unique(key)) < len(key)
                if want is None:
                    assert gain[i] == -np.inf and sets[i] is None, i
                    continue
                assert gain[i] == want[0], (i, gain[i], want[0])
                assert np.array_equal(sets[i], want[1]), (i, sets[i], want[1])
                assert sets[i].dtype == np.intp and not want[2]
                tally["finite"] += 1
                if m[i] + 1 <= p.max_cat_to_onehot:
                    tally["onehot"] += 1
                elif len(order) >= 2:
                    tally["forward"] += order[0] in want[1]
                    tally["reverse"] += order[-1] in want[1]
    # the comparison must have had something to compare
    assert 0.25 * tally["rows"] < tally["finite"] < tally["rows"], tally
    assert tally["onehot"] > 5 and tally["forward"] > 10 and tally["reverse"] > 10, tally
    assert hessian == "logloss" or tally["ties"] > 10, tally  # integer g, h: ratios collide


def test_no_rows():
    gain, sets = best_categorical_rows(np.zeros((3, 0, 9)), np.zeros(0, dtype=np.intp),
                                       np.zeros(0), np.zeros(0), np.zeros(0), SplitParams())
    assert gain.shape == (0,) and gain.dtype == np.float64 and sets == []


def test_early_none_cases():
    """No present category; one category and no missing rows; one category with missing
    rows is a split (missing rows form the other side)."""
    p = SplitParams(min_child_samples=1, min_data_per_group=1, cat_smooth=1.0)
    hist = np.zeros((3, 3, 8))
    hist[:, 1, 2] = (3.0, 5.0, 5.0)
    hist[:, 2, 2] = (3.0, 5.0, 5.0)
    hist[:, 2, -1] = (-2.0, 4.0, 4.0)
    m = np.array([7, 7, 7])
    G, H, C = hist[0].sum(axis=1), hist[1].sum(axis=1), hist[2].sum(axis=1)
    gain, sets = best_categorical_rows(hist, m, G, H, C, p)
    assert gain[0] == gain[1] == -np.inf and sets[0] is None and sets[1] is None
    want = best_categorical(hist[:, 2], 7, G[2], H[2], C[2], p)
    assert gain[2] == want[0] and sets[2].tolist() == [2] == want[1].tolist()
    # counts estimated from hessians (find_split with varying h) need not add up to C: the
    # lone category is still no split, though its other side would look admissible
    C[1] = 20.0
    p = SplitParams(min_child_samples=1, min_data_per_group=1, cat_smooth=1.0,
                    min_child_weight=0.0)
    gain, sets = best_categorical_rows(hist, m, G, H, C, p)
    assert best_categorical(hist[:, 1], 7, G[1], H[1], C[1], p) is None
    assert gain[1] == -np.inf and sets[1] is None
