"""LightGBM-style boosting: bins, histograms, the subtraction trick, categorical splits,
leaf-wise growth, LightGBM parity, exact IR.

The learner bins, computes gradients and scans as LightGBM does (float64 bins, float32
gradients, its sums and kEpsilon terms), so the comparisons with LightGBM here are bit for
bit; tests/test_lgbm_parity.py compares tree by tree on four public data sets.
"""

from __future__ import annotations

import itertools

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_classification, make_friedman1
from sklearn.model_selection import train_test_split
from targetcheck import assert_targets_exact

import rulegen.learn.splits.histogram as histogram_module
from rulegen.errors import LearnerError
from rulegen.ir import evaluate, serialize
from rulegen.ir.nodes import CategoricalTest, DefaultChild, Feature, Leaf, Split, Tree
from rulegen.learn.compiled import kernels, lgbm_kernels
from rulegen.learn.ensembles.lgbm import LightGBMStyleClassifier, LightGBMStyleRegressor
from rulegen.learn.ensembles.newton import split_gain
from rulegen.learn.splits import binning
from rulegen.learn.splits.binning import Layout, bin_features, build_histograms
from rulegen.learn.splits.builder import float32_test
from rulegen.learn.splits.histogram import HistogramSplitFinder
from rulegen.learn.splits.histogram_scan import SplitParams, best_categorical_rows

LGB = {"n_jobs": 1, "verbose": -1}
ONE_TREE = {"n_estimators": 1, "learning_rate": 1.0, "min_child_samples": 1, "min_data_in_bin": 1}


def splits(model, t=0):
    return [nd for nd in model.trees[t].nodes if isinstance(nd, Split)]


def leaves(model, t=0):
    return [nd.value[0] for nd in model.trees[t].nodes if isinstance(nd, Leaf)]


def rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


@pytest.fixture(scope="module")
def mixed():
    """Numeric columns with missing values and a categorical column of 12 codes."""
    rng = np.random.default_rng(5)
    n = 600
    X = rng.normal(size=(n, 4))
    X[:, 2] = rng.integers(0, 12, n)
    effect = rng.normal(size=12) * 2
    y = X[:, 0] + effect[X[:, 2].astype(int)] + 0.3 * rng.normal(size=n)
    X[rng.random((n, 4)) < 0.1] = np.nan
    return X, y


# --- bins -------------------------------------------------------------------------------


def test_bins_hold_each_distinct_value_whole_and_missing_apart():
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=6000), 3).astype(np.float32)  # ~2400 distinct values
    x[:1500] = 0.25  # a heavy value: a bin of its own
    x[1500:1600] = 0.0
    x[rng.random(6000) < 0.05] = np.nan
    bins = bin_features(x[:, None], {}, max_bin=255)
    codes, nb = bins.codes[0].astype(int), int(bins.n_bins[0])
    nan = np.isnan(x)
    assert nb == 254 and bins.width == 255  # with missing values: 254 value bins + missing
    assert (codes[nan] == nb).all() and (codes[~nan] < nb).all()  # missing: right after
    pairs = np.unique(np.stack([x[~nan], codes[~nan]]), axis=1)
    assert pairs.shape[1] == len(np.unique(x[~nan]))  # every distinct value in one bin
    order = np.argsort(x[~nan], kind="stable")
    assert (np.diff(codes[~nan][order]) >= 0).all()  # bins follow the values
    e = bins.edges[0]
    assert len(e) == nb - 1 and (np.diff(e) > 0).all() and not np.isin(e, x).any()
    sizes = np.bincount(codes[~nan], minlength=nb)
    heavy, zero = codes[x == np.float32(0.25)][0], codes[x == 0][0]
    rest = np.delete(sizes, [heavy, zero])
    assert rest.max() <= 2 * np.median(rest)  # the others are filled evenly
    # the heavy value's bin: it, and at most a few values below it that no bin took
    assert 0 <= sizes[heavy] - (x == np.float32(0.25)).sum() < np.median(rest)
    assert sizes[zero] == (x == 0).sum()
    assert e[zero - 1] == -binning.ZERO and e[zero] == binning.ZERO  # zero's own bin
    assert binning.ZERO == float(np.float32(1e-35))  # LightGBM's kZeroThreshold, a float
    few = np.array([[3.0], [1.0], [2.0], [1.0], [np.nan]])
    one = bin_features(few, {}, 255, min_data_in_bin=1)
    assert one.n_bins[0] == 4 and one.codes[0].tolist() == [3, 1, 2, 1, 4]  # bin 0: zero's
    # LightGBM's bound: the double just above the midpoint
    assert one.edges[0].tolist() == [binning.ZERO, np.nextafter(1.5, 2), np.nextafter(2.5, 3)]
    three = bin_features(few, {}, 255)  # min_data_in_bin 3: 1, 1, 2 share a bin
    assert three.codes[0].tolist() == [2, 1, 1, 1, 3] and three.edges[0][1] == np.nextafter(2.5, 3)
    cat = bin_features(np.array([[0.0, 1.0], [4.0, 2.0], [np.nan, 3.0]]), {0: 300}, 255,
                       min_data_in_bin=1)
    assert cat.width == 301 and cat.codes.dtype == np.uint16
    assert cat.codes[0].tolist() == [0, 4, 300] and cat.n_bins.tolist() == [300, 4]


def test_bins_are_lightgbms():
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.random(2000), rng.normal(size=2000), -rng.exponential(size=2000),
                         np.round(rng.normal(size=2000), 1), rng.integers(0, 3, 2000) * 1.5,
                         # few negative values, many positive: the positives get the bins
                         # the negatives leave unused
                         np.where(rng.random(2000) < 0.2, -rng.integers(1, 4, 2000),
                                  rng.random(2000))])
    X[:300, 1] = 0.0
    for mdb in (1, 3, 10):
        ds = lgb.Dataset(X, params={"verbose": -1, "min_data_in_bin": mdb}).construct()
        bins = bin_features(X, {}, max_bin=255, min_data_in_bin=mdb)
        assert bins.n_bins.tolist() == [ds.feature_num_bin(f) for f in range(X.shape[1])]


def test_a_cut_between_bins_is_an_ir_test_that_routes_every_value_as_its_bin():
    rng = np.random.default_rng(1)
    x32 = rng.normal(size=3000).astype(np.float32)
    bins = bin_features(x32[:, None], {}, max_bin=64)
    edges = bins.edges[0]
    # float64 probes: training values, edges and their float64/float32 neighbours
    near = [edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf),
            np.float32(edges).astype(np.float64),
            np.nextafter(np.float32(edges), np.float32(np.inf)).astype(np.float64)]
    probes = np.concatenate([x32.astype(np.float64), rng.normal(size=2000), *near])
    probe_bins = np.searchsorted(edges, probes.astype(np.float32).astype(np.float64), side="left")
    assert (probe_bins[:3000] == bins.codes[0]).all()
    feats = (Feature("x"),)
    for b in range(0, len(edges), 7):
        tree = Tree((Split(float32_test(0, float(edges[b])), (1, 2), DefaultChild(1)),
                     Leaf((1.0,)), Leaf((0.0,))))
        goes_left = evaluate.tree_output(tree, probes[:, None], feats, 1)[:, 0] == 1.0
        assert np.array_equal(goes_left, probe_bins <= b)


# --- histograms and the subtraction trick -------------------------------------------------


def direct_histogram(codes, feats, rows, g, h, n_bins):
    """Every feature's bins (0..n_bins[f], the missing bin last), packed end to end, and
    the zero pad slot: summed row by row."""
    out = [[], [], []]
    for f in feats:
        for b in range(int(n_bins[f]) + 1):
            sel = rows[codes[f, rows] == b]
            for k, v in enumerate((g[sel].sum(), h[sel].sum(), len(sel))):
                out[k].append(v)
    return np.array([o + [0.0] for o in out])


def test_histograms_equal_direct_sums():
    rng = np.random.default_rng(2)
    n_bins = np.array([16, 3, 9, 16])
    codes = (rng.random((4, 500)) * (n_bins[:, None] + 1)).astype(np.uint8)  # incl. missing
    g, h = rng.normal(size=500), rng.random(500)
    rows = np.sort(rng.choice(500, 180, replace=False))
    for feats in (np.arange(4), np.array([1, 3])):
        layout = Layout(n_bins[feats], np.zeros(len(feats), dtype=bool))
        for r in (rows, np.arange(500)):
            for small in (True, False):  # one bincount for all, or one per feature
                old, binning.SMALL_BLOCK = binning.SMALL_BLOCK, (1 << 30 if small else 0)
                try:
                    got = build_histograms(codes, feats, [r, rows[:50]], g, h, layout)
                finally:
                    binning.SMALL_BLOCK = old
                for k, rr in enumerate((r, rows[:50])):
                    want = direct_histogram(codes, feats, rr, g, h, n_bins)
                    assert np.allclose(got[:, k], want, rtol=1e-12, atol=1e-12)
                    assert np.array_equal(got[2, k], want[2])
    layout = Layout(n_bins, np.zeros(4, dtype=bool))
    const = build_histograms(codes, np.arange(4), [rows], g, np.full(500, 0.5), layout,
                             h_const=0.5)
    assert np.array_equal(const[1], 0.5 * const[2])


def test_parent_minus_smaller_sibling_equals_a_direct_build(mixed):
    X, y = mixed
    bins = bin_features(X.astype(np.float32), {2: 12}, max_bin=32)
    g, h, w = -(y - y.mean()), np.ones(len(y)), np.ones(len(y))
    feats = np.arange(4)
    finder = HistogramSplitFinder(bins, feats, g, h, w, SplitParams(min_child_samples=5))
    part = finder.find_split(finder.root(np.arange(len(y))))
    built = finder.histograms_built
    left, right = (c.state for c in part.children)
    finder.histogram(right)  # builds the smaller child's, derives the larger's
    small, large = sorted((left, right), key=lambda st: len(st.rows))
    assert finder.histograms_built - built == len(small.rows) * 4
    for st in (left, right):
        want = direct_histogram(bins.codes, feats, st.rows, g, h, bins.n_bins)
        assert np.allclose(st.hist, want, rtol=0, atol=1e-9)
        assert np.array_equal(st.hist[2], want[2])
    assert len(left.rows) + len(right.rows) == len(y)
    # one level down, below a derived histogram: still the direct sums; the larger child's
    # is the parent's minus the smaller's bin by bin, rounding residue and all (LightGBM's)
    node = part.children[[left, right].index(large)]
    parent = node.state.hist.copy()
    grand = [c.state for c in finder.find_split(node).children]
    finder.histogram(grand[0])
    for st in grand:
        want = direct_histogram(bins.codes, feats, st.rows, g, h, bins.n_bins)
        assert np.allclose(st.hist, want, rtol=0, atol=1e-9)
        assert np.array_equal(st.hist[2], want[2])
    small2, large2 = sorted(grand, key=lambda st: len(st.rows))
    assert np.array_equal(large2.hist, parent - small2.hist)


def test_the_chosen_split_is_the_best_over_every_cut_and_missing_side():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3))
    X[rng.random((400, 3)) < 0.2] = np.nan
    y = X[:, 1] + np.where(np.isnan(X[:, 1]), 2.0, 0.0) + rng.normal(size=400)
    y = np.nan_to_num(y, nan=2.0)
    lam = 2.0
    est = LightGBMStyleRegressor(num_leaves=2, reg_lambda=lam, max_bin=1000,
                                 **ONE_TREE).fit(X, y)  # every distinct value a bin
    g = est.model_.base_score[0] - y
    best = -np.inf
    for f in range(3):
        for t in np.unique(X[:, f][~np.isnan(X[:, f])]):
            for miss_left in (False, True):
                left = np.where(np.isnan(X[:, f]), miss_left, X[:, f] <= t)
                if 1 <= left.sum() <= 399:
                    best = max(best, 2 * split_gain(g[left].sum(), left.sum(), g[~left].sum(),
                                                    (~left).sum(), lam))
    (root,) = splits(est.model_)
    left = evaluate.tree_output(Tree(est.model_.trees[0].nodes), X, est.model_.features, 1)[:, 0]
    left = left == leaves(est.model_)[0]
    assert 2 * split_gain(g[left].sum(), left.sum(), g[~left].sum(), (~left).sum(), lam) == \
        pytest.approx(best, rel=1e-12)
    assert root.test.feature == 1 and root.missing == DefaultChild(1)  # missing joins the high side
    # trained without missing values, a split sends them where 0 goes (LightGBM reads NaN
    # as 0 for a feature without a NaN bin)
    full = LightGBMStyleRegressor(n_estimators=3).fit(np.nan_to_num(X), y)
    for t in full.model_.trees:
        for nd in t.nodes:
            if isinstance(nd, Split):
                t = nd.test.threshold
                zero_left = 0.0 <= t if nd.test.op == "<=" else 0.0 < t
                assert nd.missing.child == (0 if zero_left else 1)


# --- categorical splits ---------------------------------------------------------------------


def best_categorical(hf, m, G, H, C, p):
    """The batched scan on one row: (gain, set, missing_left) or None."""
    gain, sets = best_categorical_rows(hf[:, None], [m], [G], [H], [C], p)
    return None if gain[0] == -np.inf else (float(gain[0]), sets[0], False)


def brute_force(Gc, Hc, present, lam):
    G, H = Gc.sum(), Hc.sum()
    best = (-np.inf, None)
    for r in range(1, len(present)):
        for S in itertools.combinations(present, r):
            S = list(S)
            gl, hl = Gc[S].sum(), Hc[S].sum()
            v = 2 * split_gain(gl, hl, G - gl, H - hl, lam)
            if v > best[0]:
                best = (v, frozenset(S))
    return best


@pytest.mark.parametrize("seed", range(12))
def test_gradient_sorted_categories_find_the_best_subset(seed):
    """Two classes, log-loss gradients at the base score: with cat_smooth = cat_l2 = lambda = 0
    the scan over sorted prefixes (both ends) finds the best of all 2^(m-1)-1 subsets."""
    rng = np.random.default_rng(seed)
    m = 8
    codes = rng.choice(m, 300, p=rng.dirichlet(np.ones(m)))
    codes[:m] = np.arange(m)  # every category present
    rate = rng.random(m)
    y = (rng.random(300) < rate[codes]).astype(float)
    # a later round: raw scores differ by category, so do the hessian sums per row
    p = 1 / (1 + np.exp(-(3 * rng.normal(size=m)[codes] + rng.normal(size=300))))
    g, h = p - y, p * (1 - p)
    hf = np.zeros((3, m + 1))
    hf[0, :m], hf[1, :m] = np.bincount(codes, g, m), np.bincount(codes, h, m)
    hf[2, :m] = np.bincount(codes, minlength=m)
    params = SplitParams(cat_smooth=0.0, cat_l2=0.0, max_cat_to_onehot=0, min_data_per_group=1,
                         min_child_samples=1, min_child_weight=0.0, max_cat_threshold=64)
    gain, S, missing_left = best_categorical(hf, m, g.sum(), h.sum(), 300.0, params)
    want, best_set = brute_force(hf[0, :m], hf[1, :m], np.flatnonzero(hf[2, :m]), 0.0)
    assert gain == pytest.approx(want, rel=1e-9)
    assert frozenset(S.tolist()) in (best_set, frozenset(range(m)) - best_set)
    assert not missing_left
    # one-vs-rest below max_cat_to_onehot bins (LightGBM counts a NaN bin): the best single category
    one = best_categorical(hf, m, g.sum(), h.sum(), 300.0,
                           SplitParams(max_cat_to_onehot=m + 1, min_child_samples=1, reg_lambda=0.0))
    singles = [2 * split_gain(hf[0, c], hf[1, c], g.sum() - hf[0, c], h.sum() - hf[1, c], 0.0)
               for c in range(m)]
    assert one[0] == pytest.approx(max(singles), rel=1e-12) and one[1].tolist() == [int(np.argmax(singles))]
    # max_cat_threshold bounds the set; min_data_per_group keeps big groups
    small = best_categorical(hf, m, g.sum(), h.sum(), 300.0, SplitParams(
        cat_smooth=0.0, cat_l2=0.0, max_cat_to_onehot=0, max_cat_threshold=1,
        min_data_per_group=1, min_child_samples=1))
    assert len(small[1]) == 1
    grouped = best_categorical(hf, m, g.sum(), h.sum(), 300.0, SplitParams(
        cat_smooth=0.0, cat_l2=0.0, max_cat_to_onehot=0, min_data_per_group=100,
        min_child_samples=1))
    assert grouped is None or min(hf[2, grouped[1]].sum(), 300 - hf[2, grouped[1]].sum()) >= 100


# --- leaf-wise growth -----------------------------------------------------------------------


def test_leaf_wise_growth_stops_at_num_leaves_and_expands_the_best_leaf_first():
    X, y = make_friedman1(n_samples=2000, random_state=0)
    shapes = {}
    for nl in (2, 3, 4, 5, 8, 31):
        est = LightGBMStyleRegressor(n_estimators=3, num_leaves=nl).fit(X, y)
        assert all(len(leaves(est.model_, t)) == nl for t in range(3))
        shapes[nl] = {(s.test.feature, s.test.threshold, s.samples) for s in splits(est.model_)}
    for a, b in ((2, 3), (3, 4), (4, 5), (5, 8), (8, 31)):
        assert shapes[a] < shapes[b]  # a bigger tree only adds splits: best first
    deep = LightGBMStyleRegressor(n_estimators=1, num_leaves=31, max_depth=2).fit(X, y)
    assert deep.get_depth() == 2 and len(leaves(deep.model_)) == 4
    lopsided = LightGBMStyleRegressor(n_estimators=2, num_leaves=8).fit(X, y)
    assert lopsided.get_depth() > 3  # leaf-wise, not level-wise


def test_leaf_values_gain_threshold_and_limits_by_hand():
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    y = np.array([2.0, 1.0, -1.0, -2.0])  # g = f - y = -y at f = mean 0, h = 1
    est = LightGBMStyleRegressor(num_leaves=2, **ONE_TREE).fit(X, y)
    # -G/H, H holding LightGBM's kEpsilon (1e-15) terms
    assert leaves(est.model_) == pytest.approx([1.5, -1.5], rel=1e-14)
    assert LightGBMStyleRegressor(num_leaves=2, reg_lambda=1.0, **ONE_TREE).fit(X, y) \
        .model_.trees[0].nodes[1].value[0] == pytest.approx(1.0, rel=1e-14)  # -G/(H+1) = 3/3
    # gain 3^2/2 + 3^2/2 - 0 = 9: min_split_gain below keeps the split, above drops it
    assert len(splits(LightGBMStyleRegressor(num_leaves=2, min_split_gain=8.99, **ONE_TREE)
                      .fit(X, y).model_)) == 1
    assert splits(LightGBMStyleRegressor(num_leaves=2, min_split_gain=9.01, **ONE_TREE)
                  .fit(X, y).model_) == []
    # min_child_samples=3 leaves no admissible cut of 4 rows; the learning rate scales leaves
    assert splits(LightGBMStyleRegressor(num_leaves=2, n_estimators=1,
                                         min_child_samples=3).fit(X, y).model_) == []
    est = LightGBMStyleRegressor(num_leaves=2, n_estimators=1, learning_rate=0.1,
                                 min_child_samples=1, min_data_in_bin=1).fit(X, y)
    assert leaves(est.model_) == pytest.approx([0.1 * 1.5, 0.1 * -1.5], rel=1e-14)
    # min_child_weight on the hessian: 2 rows of h = 1 per side is not enough for 2.5
    assert splits(LightGBMStyleRegressor(num_leaves=2, min_child_weight=2.5, **ONE_TREE)
                  .fit(X, y).model_) == []


# --- against LightGBM ---------------------------------------------------------------------------


def test_same_trees_as_lightgbm_with_missing_values_and_categories(mixed):
    """Regression with missing values and a categorical feature, 30 rounds: the same model."""
    X, y = mixed
    kw = {"n_estimators": 30, "num_leaves": 12, "learning_rate": 0.2, "min_child_samples": 10,
          "reg_lambda": 0.5, "max_bin": 63, "min_data_per_group": 20}
    ours = LightGBMStyleRegressor(**kw).fit(X, y, categorical_features=[2])
    ref = lgb.LGBMRegressor(**LGB, **kw).fit(X, y, categorical_feature=[2])
    assert np.array_equal(evaluate.raw_scores(ours.model_, X)[:, 0], ref.predict(X, raw_score=True))
    Xq = X.copy()
    Xq[::4, 2] = 99.0  # unseen category codes go right in both
    assert np.array_equal(evaluate.raw_scores(ours.model_, Xq)[:, 0],
                          ref.predict(Xq, raw_score=True))
    # single tree: the same features and the same child sizes, split by split
    one = LightGBMStyleRegressor(**{**kw, "n_estimators": 1}).fit(X, y, categorical_features=[2])
    ref1 = lgb.LGBMRegressor(**LGB, **{**kw, "n_estimators": 1}).fit(X, y, categorical_feature=[2])
    theirs, stack = [], [ref1.booster_.dump_model()["tree_info"][0]["tree_structure"]]
    while stack:
        nd = stack.pop()
        if "split_feature" in nd:
            theirs.append((nd["split_feature"], nd["internal_count"]))
            stack += [nd["right_child"], nd["left_child"]]
    assert sorted(theirs) == sorted((s.test.feature, int(s.samples)) for s in splits(one.model_))


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_first_rounds_match_lightgbm_for_classification(kind):
    """LightGBM checks min_data_in_leaf on counts estimated from hessians and sums float32
    gradients; with both done as LightGBM does, the scores are its own."""
    if kind == "binary":
        X, y = load_breast_cancer(return_X_y=True)
    else:
        X, y = make_classification(n_samples=900, n_features=8, n_informative=5, n_classes=3,
                                   random_state=0)
    kw = {"n_estimators": 3, "num_leaves": 15, "learning_rate": 0.2, "min_child_samples": 10,
          "reg_lambda": 1.0}
    ours = LightGBMStyleClassifier(**kw).fit(X, y)
    ref = lgb.LGBMClassifier(**LGB, **kw).fit(X, y)
    # the same start (LightGBM's log p_k), gradients and sums: the same raw scores
    got, want = evaluate.raw_scores(ours.model_, X), ref.predict(X, raw_score=True).reshape(len(X), -1)
    assert np.array_equal(got, want)


def test_same_regression_model_as_lightgbm_at_255_bins_and_close_accuracy():
    kw = {"n_estimators": 60, "num_leaves": 15, "learning_rate": 0.1, "min_child_samples": 10}
    for seed, shift in ((0, 0.0), (1, 0.4)):  # one sign; both signs (zero's bin between)
        X, y = make_friedman1(n_samples=1500, random_state=seed)
        Xtr, Xte, ytr, yte = train_test_split(X - shift, y, random_state=0)
        ours = LightGBMStyleRegressor(**kw).fit(Xtr, ytr)
        ref = lgb.LGBMRegressor(**LGB, **kw).fit(Xtr, ytr)
        assert np.array_equal(ours.predict(Xte), ref.predict(Xte))
        assert rmse(ours.predict(Xte), yte) <= 1.03 * rmse(ref.predict(Xte), yte)
    for X, y in (load_breast_cancer(return_X_y=True),
                 make_classification(n_samples=1500, n_features=10, n_informative=6, n_classes=3,
                                     random_state=0)):
        acc = np.zeros(2)
        for seed in range(3):
            Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=seed)
            acc += [(m.fit(Xtr, ytr).predict(Xte) == yte).mean()
                    for m in (LightGBMStyleClassifier(**kw), lgb.LGBMClassifier(**LGB, **kw))]
        assert acc[0] / 3 >= acc[1] / 3 - 0.01, acc / 3



def test_binary_classification_is_lightgbms_model():
    # LightGBM estimates row counts from hessians (min_data_in_leaf, categorical groups) and
    # gives the rounding to the left side in its downward scan; counting rows exactly made the
    # models part after about 7 rounds
    X, y = load_breast_cancer(return_X_y=True)
    ours = LightGBMStyleClassifier(n_estimators=40).fit(X, y)
    ref = lgb.LGBMClassifier(**LGB, n_estimators=40).fit(X, y)
    raw = evaluate.raw_scores(ours.model_, X)[:, 0]
    assert np.array_equal(raw, ref.predict(X, raw_score=True))  # bit for bit

@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
def test_batching_and_searching_ahead_change_the_work_never_the_model(mixed, monkeypatch, kind):
    """Nodes are searched in batches, splits ahead of the builder (a guess), small nodes'
    histograms in one bincount, and the root's row counts once per fit. A node's best split
    depends on its rows alone, so every setting of those must give the same model, bit for
    bit -- here from one node at a time (no guessing, one bincount per feature, no cache)
    to guessing every node."""
    X, y = mixed
    X = np.vstack([X] * 3)  # 1,800 rows: nodes big and small
    y = np.concatenate([y, y + 0.5, y - 0.5])
    # leaves of at least 40 rows: the row counts (LightGBM's estimates) decide many cuts
    kw = {"n_estimators": 6, "num_leaves": 16, "min_child_samples": 40, "min_data_per_group": 30,
          "max_bin": 64}
    if kind == "regression":
        est, target = LightGBMStyleRegressor(**kw), y
    else:
        est = LightGBMStyleClassifier(**kw)
        target = (y > 0).astype(int) if kind == "binary" else np.digitize(y, [-0.5, 1.0])
    searched = []
    original = HistogramSplitFinder._search

    def counting(self, nodes, hist):
        searched.append(len(nodes))
        return original(self, nodes, hist)

    monkeypatch.setattr(HistogramSplitFinder, "_search", counting)
    # the finder's work (not the compiled tree grower's, which the end compares too)
    monkeypatch.setattr(lgbm_kernels, "USE", False)
    models = {}
    for name, guess, small, cache in (("one by one", 0, 0, False), ("default", None, None, True),
                                      ("guess all", 1 << 40, 1 << 40, True)):
        if guess is not None:
            monkeypatch.setattr(histogram_module, "GUESS_LIMIT", guess)
            monkeypatch.setattr(histogram_module, "GUESS_LIMIT_COMPILED", guess)
            monkeypatch.setattr(binning, "SMALL_BLOCK", small)
        monkeypatch.setattr(HistogramSplitFinder, "__init__", _with_cache(cache))
        searched.clear()
        models[name] = serialize.dumps(est.fit(X, target, categorical_features=[2]).model_)
        models[name + " batches"] = (len(searched), sum(searched))
        monkeypatch.undo()
        monkeypatch.setattr(HistogramSplitFinder, "_search", counting)
        monkeypatch.setattr(lgbm_kernels, "USE", False)
    assert models["one by one"] == models["default"] == models["guess all"]
    monkeypatch.setattr(lgbm_kernels, "USE", True)  # the whole tree compiled
    assert serialize.dumps(est.fit(X, target, categorical_features=[2]).model_) == \
        models["default"]
    # and from numpy alone, without the compiled kernels (tests/test_kernels.py)
    monkeypatch.setattr(kernels, "ENABLED", False)
    assert serialize.dumps(est.fit(X, target, categorical_features=[2]).model_) == \
        models["default"]
    # the settings did change the work: fewer, bigger batches when guessing
    (b1, n1), (b2, n2) = models["one by one batches"], models["guess all batches"]
    assert b2 < b1 and n2 / b2 > n1 / b1


_INIT = HistogramSplitFinder.__init__


def _with_cache(on):
    def init(self, *args, **kwargs):
        if not on:
            kwargs["fit_cache"] = None
        _INIT(self, *args, **kwargs)
    return init


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_classification_with_missing_values_is_lightgbms_model(kind):
    """Two rules of LightGBM's that only show with missing values and estimated counts: a
    node's few missing rows of small hessian round to an estimated count of 0, yet they
    are missing rows (they once made a split route them against its own gain); and a
    feature with missing values anywhere is scanned with missing right at every node, which
    can admit a cut the missing-left scan rejects (the two estimate the sides from opposite
    ends). Each made the models part after 10-30 rounds."""
    X, y = make_classification(n_samples=900, n_features=8, n_informative=5, n_classes=3,
                               random_state=0)
    X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    y = (y == 1).astype(int) if kind == "binary" else y
    kw = {"n_estimators": 40, "num_leaves": 15, "learning_rate": 0.2, "min_child_samples": 10,
          "reg_lambda": 1.0}
    ours = LightGBMStyleClassifier(**kw).fit(X, y)
    ref = lgb.LGBMClassifier(**LGB, **kw).fit(X, y)
    got = evaluate.raw_scores(ours.model_, X)
    want = ref.predict(X, raw_score=True).reshape(len(X), -1)
    assert np.array_equal(got, want)


# --- the IR is the model ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
def test_ir_reproduces_the_training_scores_and_compiles_exactly(mixed, kind):
    X, y = mixed
    X = X.copy()
    X[:, 0] = X[:, 0] * (1 + 1e-9)  # float64 values that float32 does not hold
    w = np.where(np.arange(len(y)) % 7 == 0, 0.0, 1.0 + (np.arange(len(y)) % 3))
    kw = {"n_estimators": 8, "num_leaves": 6, "min_child_samples": 5, "min_data_per_group": 10,
          "subsample": 0.8, "colsample_bytree": 0.75, "random_state": 0, "max_bin": 32}
    if kind == "regression":
        est = LightGBMStyleRegressor(**kw).fit(X, y, sample_weight=w, categorical_features=[2])
    else:
        labels = (y > 0).astype(int) if kind == "binary" else np.digitize(y, [-0.5, 1.0])
        est = LightGBMStyleClassifier(**kw).fit(X, labels, sample_weight=w,
                                                 categorical_features=[2])
    model = est.model_
    assert model.provenance.algorithm == "lightgbm_style"
    # the booster's own scores (rows routed by their bins) equal the IR's, bit for bit,
    # including the zero-weight and out-of-subsample rows that did not grow the trees
    assert np.array_equal(evaluate.raw_scores(model, X), est.train_raw_)
    kinds = {type(nd.test) for t in model.trees for nd in t.nodes if isinstance(nd, Split)}
    assert CategoricalTest in kinds and len(kinds) == 2
    assert all(nd.missing in (DefaultChild(0), DefaultChild(1)) for t in model.trees
               for nd in t.nodes if isinstance(nd, Split))
    assert_targets_exact(model, X[:40], n_random=20)


def test_a_value_that_float32_rounds_up_is_routed_as_its_bin():
    """The midpoint of two adjacent float32 values rounds to the even one: here the upper.
    Trained on float32, that row sat in the upper value's bin; a float64 test ``x <= edge``
    with the midpoint edge would send it left, the IR's float32 test sends it right."""
    lo = np.float32(1.0) + np.float32(2.0**-23)  # odd last bit
    hi = np.nextafter(lo, np.float32(2.0))  # even
    mid = float(lo) / 2 + float(hi) / 2
    assert np.float32(mid) == hi
    X = np.array([float(lo)] * 30 + [float(hi)] * 29 + [mid])[:, None]
    y = np.array([0.0] * 30 + [1.0] * 30)
    est = LightGBMStyleRegressor(num_leaves=2, **ONE_TREE).fit(X, y)
    raw = evaluate.raw_scores(est.model_, X)
    assert np.array_equal(raw, est.train_raw_) and raw[-1, 0] == raw[-2, 0] == 1.0


def test_a_fit_leaves_no_node_data_behind_for_the_cycle_collector():
    """Siblings and their family, a split and its children refer to one another; the
    finder breaks those cycles when a tree is done. With the cycle collector off, whatever
    a fit leaves behind stays: here, beyond the model and the training scores, very little
    (14 MB here before the cycles were broken)."""
    import gc
    import tracemalloc

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + rng.normal(size=20000) > 0).astype(int)
    gc.collect()
    gc.disable()
    try:
        tracemalloc.start()
        est = LightGBMStyleClassifier(n_estimators=10).fit(X, y)
        left_over, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        gc.enable()
    kept = est.train_raw_.nbytes + 1_000_000  # the training scores; the IR of 10 small trees
    assert left_over < kept, left_over


# --- the estimator ------------------------------------------------------------------------------


def test_progress_early_stopping_and_seeds():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = X[:, 0] + rng.normal(size=400)
    calls = []
    est = LightGBMStyleRegressor(n_estimators=300, early_stopping_rounds=4, random_state=0)
    est.fit(X, y, progress=lambda d, t: calls.append((d, t)))
    fitted = len(est.validation_score_)
    assert fitted < 300 and calls == [(i, 300) for i in range(1, fitted + 1)]
    assert est.n_estimators_ == est.best_iteration_ + 1 == len(est.model_.trees)
    assert est.train_raw_ is None
    kw = {"n_estimators": 4, "subsample": 0.5, "colsample_bytree": 0.5}
    a, b, c = (LightGBMStyleRegressor(random_state=s, **kw).fit(X, y) for s in (1, 1, 2))
    assert serialize.dumps(a.model_) == serialize.dumps(b.model_) != serialize.dumps(c.model_)
    assert a.model_.trees[0].nodes[0].samples == 200.0


def test_bad_parameters_are_one_clear_error():
    X, y = make_friedman1(n_samples=50, random_state=0)
    for kw in ({"num_leaves": 1}, {"reg_lambda": -1}, {"colsample_bytree": 0}, {"max_bin": 1},
               {"learning_rate": 0}, {"max_depth": 0}, {"min_child_samples": -1},
               {"cat_smooth": float("nan")}, {"min_data_in_bin": 0}, {"min_data_in_bin": 1.5}):
        with pytest.raises(LearnerError):
            LightGBMStyleRegressor(**kw).fit(X, y)


def test_a_bad_min_data_in_bin_on_the_command_line_is_one_line(tmp_path, capsys):
    from pathlib import Path

    from rulegen.cli import main

    labor = Path(__file__).parent / "data" / "labor.csv"
    for value in ("0", "-3", "many"):
        code = main(["fit", str(labor), "--target", "class", "--algorithm", "lightgbm_style",
                     "--param", f"min_data_in_bin={value}", "-o", str(tmp_path / "m.json")])
        err = capsys.readouterr().err
        assert code == 2 and "min_data_in_bin" in err, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
