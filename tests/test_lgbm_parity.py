"""lightgbm_style against LightGBM itself, tree by tree: iris, penguins, breast_cancer and
diabetes, 40 rounds, LightGBM's default parameters and ``min_child_samples=5``.

Every tree has LightGBM's shape, split features and thresholds (the double LightGBM writes),
the missing direction of every feature that has a NaN bin (a feature without one reads NaN
as 0 in LightGBM: the IR sends NaN where 0 goes), and its leaf values (LightGBM folds the
initial score into the first round's leaves; here it is ``base_score``). The bins are
LightGBM's row by row (``Dataset._dump_text``), and the IR predicts LightGBM's raw scores bit
for bit on adversarial rows: every threshold and its float64 and float32 neighbours, zeros of
both signs, LightGBM's zero threshold, NaN and infinities.

tests/data/penguins.csv: the Palmer penguins data (Horst, Hill and Gorman; CC0), as in
/work/shared/data; the species is the target, the numeric columns the features (island and
sex, text, are left out).
"""

from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from targetcheck import assert_targets_exact

from rulegen.ir import evaluate
from rulegen.ir.nodes import Leaf
from rulegen.learn.ensembles.lgbm import LightGBMStyleClassifier, LightGBMStyleRegressor
from rulegen.learn.splits.binning import ZERO, bin_features

lgb = pytest.importorskip("lightgbm")

ROUNDS = 40
QUIET = {"n_jobs": 1, "verbose": -1}


def penguins():
    with open(Path(__file__).parent / "data" / "penguins.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    cols = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "year"]
    X = np.array([[float(r[c]) if r[c] else np.nan for c in cols] for r in rows])
    species = sorted({r["species"] for r in rows})
    return X, np.array([species.index(r["species"]) for r in rows])


DATA = {"iris": lambda: load_iris(return_X_y=True), "penguins": penguins,
        "breast_cancer": lambda: load_breast_cancer(return_X_y=True),
        "diabetes": lambda: load_diabetes(return_X_y=True)}


@pytest.fixture(scope="module", params=[(name, mcs) for name in DATA for mcs in (20, 5)],
                ids=lambda p: f"{p[0]}-min_child_samples={p[1]}")
def pair(request):
    """(X, rulegen's model, LightGBM's fitted estimator) on one data set."""
    name, mcs = request.param
    X, y = DATA[name]()
    regression = name == "diabetes"
    ours = (LightGBMStyleRegressor if regression else LightGBMStyleClassifier)(
        n_estimators=ROUNDS, min_child_samples=mcs).fit(X, y)
    ref = (lgb.LGBMRegressor if regression else lgb.LGBMClassifier)(
        n_estimators=ROUNDS, min_child_samples=mcs, **QUIET).fit(X, y)
    return X, ours.model_, ref


def ir_preorder(tree):
    """(feature, op, threshold, NaN goes left) per split, ("leaf", value) per leaf; left first."""
    out, stack = [], [0]
    while stack:
        nd = tree.nodes[stack.pop()]
        if isinstance(nd, Leaf):
            out.append(("leaf", nd.value[0]))
        else:
            out.append((nd.test.feature, nd.test.op, nd.test.threshold, nd.missing.child == 0))
            stack += [nd.children[1], nd.children[0]]
    return out


def lgb_preorder(info):
    """The same from LightGBM's dump (thresholds printed with 17 digits: exact doubles);
    NaN's side: ``default_left`` with a NaN bin, else where 0 goes."""
    out, stack = [], [info["tree_structure"]]
    while stack:
        nd = stack.pop()
        if "leaf_value" in nd:
            out.append(("leaf", nd["leaf_value"]))
            continue
        t = nd["threshold"]
        t = np.inf if t == 1e300 else t  # the JSON dump writes +inf as 1e300 (the model: inf)
        nan_left = nd["default_left"] if nd["missing_type"] == "NaN" else 0.0 <= t
        # LightGBM reads |x| <= kZeroThreshold as 0: its "x <= -ZERO" is the IR's "x < -ZERO"
        out.append((nd["split_feature"], "<" if t == -ZERO else "<=", t, nan_left))
        stack += [nd["right_child"], nd["left_child"]]
    return out


def test_every_tree_is_lightgbms(pair):
    X, model, ref = pair
    info = ref.booster_.dump_model()["tree_info"]
    K = len(model.base_score)
    assert len(model.trees) == len(info) == ROUNDS * K
    leaves = 0
    for t, (tree, lt) in enumerate(zip(model.trees, info)):
        ours, theirs = ir_preorder(tree), lgb_preorder(lt)
        assert [n[:1] if n[0] == "leaf" else n for n in ours] == \
            [n[:1] if n[0] == "leaf" else n for n in theirs], f"tree {t}"
        for a, b in zip(ours, theirs):
            if a[0] == "leaf":
                # LightGBM adds the initial score to the first round's leaves
                value = a[1] + model.base_score[t] if t < K and model.base_score[t] else a[1]
                assert value == pytest.approx(b[1], rel=1e-12, abs=0), f"tree {t}"
                assert value == b[1], f"tree {t}: not bit for bit"  # what holds today
                leaves += 1
    assert leaves > 2 * len(info)  # trees that split


def probe_rows(X, model):
    """For every split, a data row that reaches it with the split's feature set to the
    threshold, one double either side, its float32 rounding and that float's neighbours,
    zeros of both signs, LightGBM's zero threshold and its neighbours, tiny values, NaN,
    infinities and 1e300 (LightGBM's written +inf)."""
    special = [0.0, -0.0, ZERO, -ZERO, np.nextafter(ZERO, 1), np.nextafter(-ZERO, -1), 1e-40,
               -1e-40, np.nan, np.inf, -np.inf, 1e300, -1e300, np.nextafter(1e300, np.inf)]
    rows = []
    for tree in model.trees:
        reach = [None] * len(tree.nodes)
        reach[0] = np.arange(len(X))
        for i, nd in enumerate(tree.nodes):  # children have larger ids than their parent
            if isinstance(nd, Leaf) or reach[i] is None or not len(reach[i]):
                continue
            r, test = reach[i], nd.test
            x = X[r, test.feature]
            left = np.where(np.isnan(x), nd.missing.child == 0,
                            x <= test.threshold if test.op == "<=" else x < test.threshold)
            reach[nd.children[0]], reach[nd.children[1]] = r[left], r[~left]
            t = test.threshold
            with np.errstate(over="ignore"):
                t32 = np.float32(t)  # (1e300 is inf in float32)
            values = special + [t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf), float(t32),
                                float(np.nextafter(t32, np.float32(np.inf))),
                                float(np.nextafter(t32, np.float32(-np.inf)))]
            block = np.repeat(X[r[:1]], len(values), axis=0)
            block[:, test.feature] = values
            rows.append(block)
    return np.vstack(rows)


def test_ir_predicts_lightgbms_raw_scores_bit_for_bit(pair):
    X, model, ref = pair
    P = np.vstack([X, probe_rows(X, model)])
    want = ref.predict(P, raw_score=True).reshape(len(P), -1)
    assert np.array_equal(evaluate.raw_scores(model, P), want)
    # float32 input: LightGBM widens it to double, as the IR does
    with np.errstate(over="ignore"):
        P32 = P.astype(np.float32)
    want32 = ref.predict(P32, raw_score=True).reshape(len(P), -1)
    assert np.array_equal(evaluate.raw_scores(model, P32.astype(np.float64)), want32)


@pytest.mark.parametrize("kw", [
    # 31 leaves reached with pure nodes: equal gains between leaves fall as in LightGBM
    # (the lower feature, then the lower leaf index)
    {"min_data_in_bin": 1, "min_child_samples": 1},
    {"max_depth": 3, "reg_lambda": 1.0}, {"num_leaves": 7, "min_split_gain": 0.1},
    {"max_bin": 15, "min_child_weight": 1.0, "learning_rate": 0.3}])
def test_other_parameters_are_lightgbms(kw):
    X, y = DATA["breast_cancer"]()
    model = LightGBMStyleClassifier(n_estimators=ROUNDS, **kw).fit(X, y).model_
    ref = lgb.LGBMClassifier(n_estimators=ROUNDS, **kw, **QUIET).fit(X, y)
    info = ref.booster_.dump_model()["tree_info"]
    for t, (tree, lt) in enumerate(zip(model.trees, info)):
        assert structure(ir_preorder(tree)) == structure(lgb_preorder(lt)), f"tree {t}"
    P = np.vstack([X, probe_rows(X, model)[::3]])
    assert np.array_equal(evaluate.raw_scores(model, P), ref.predict(P, raw_score=True)[:, None])


@pytest.mark.parametrize("name", ["iris", "diabetes"])
def test_weighted_fits_are_lightgbms(name):
    """Sample weights: LightGBM rounds each weighted gradient to float32 and sums the float32
    weights in row order for its start; so does the learner."""
    X, y = DATA[name]()
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    est, ref = ((LightGBMStyleRegressor, lgb.LGBMRegressor) if name == "diabetes"
                else (LightGBMStyleClassifier, lgb.LGBMClassifier))
    model = est(n_estimators=ROUNDS).fit(X, y, sample_weight=w).model_
    fitted = ref(n_estimators=ROUNDS, **QUIET).fit(X, y, sample_weight=w)
    P = np.vstack([X, probe_rows(X, model)[::3]])
    assert np.array_equal(evaluate.raw_scores(model, P),
                          fitted.predict(P, raw_score=True).reshape(len(P), -1))


def categorical_data(seed=11, n=1200):
    """Categorical features of 2, 3, 4, 5, 12 and 30 codes, two numeric ones, 5% NaN."""
    rng = np.random.default_rng(seed)
    sizes = (2, 3, 4, 5, 12, 30)
    cols = [rng.integers(0, m, n).astype(float) for m in sizes]
    X = np.column_stack(cols + [rng.normal(size=n), rng.normal(size=n)])
    z = sum(rng.normal(size=m)[c.astype(int)] for m, c in zip(sizes, cols)) + X[:, 6]
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, z + 0.5 * rng.normal(size=n), list(range(len(sizes)))


def structure(nodes):
    """(feature, threshold or category set) per split, "leaf" per leaf, in pre-order."""
    return [n[0] if n[0] == "leaf" else n[:2] for n in nodes]


@pytest.mark.parametrize("kind", ["regression", "multiclass"])
def test_categorical_splits_are_lightgbms_to_the_last_bits(kind):
    """Categorical scans are rulegen's, not LightGBM's arithmetic (no kEpsilon terms, its own
    bin order): leaf values differ in the last bits, and where two numeric cuts tie to
    rounding the other one can win. Measured: regression, the same 40 trees and category
    sets; multiclass, from tree 14 on a numeric threshold in the next bin (a cut between
    the same training rows), raw scores on the training rows within 2.7e-15."""
    X, z, cats = categorical_data()
    kw = {"n_estimators": ROUNDS, "min_child_samples": 5, "min_data_per_group": 20,
          "cat_smooth": 5}
    if kind == "regression":
        model = LightGBMStyleRegressor(**kw).fit(X, z, categorical_features=cats).model_
        ref = lgb.LGBMRegressor(**kw, **QUIET).fit(X, z, categorical_feature=cats)
    else:
        y = np.digitize(z, [-1, 1])
        model = LightGBMStyleClassifier(**kw).fit(X, y, categorical_features=cats).model_
        ref = lgb.LGBMClassifier(**kw, **QUIET).fit(X, y, categorical_feature=cats)
    info = ref.booster_.dump_model()["tree_info"]
    K = len(model.base_score)
    assert len(model.trees) == len(info)
    n_cat = 0
    for t, (tree, lt) in enumerate(zip(model.trees, info)):
        ours, theirs, stack = [], [], [0]
        while stack:
            nd = tree.nodes[stack.pop()]
            if isinstance(nd, Leaf):
                ours.append(("leaf", nd.value[0] + (model.base_score[t] if t < K else 0.0)))
                continue
            key = getattr(nd.test, "categories", None)
            ours.append((nd.test.feature, frozenset(key) if key is not None else nd.test.threshold))
            stack += [nd.children[1], nd.children[0]]
        stack = [lt["tree_structure"]]
        while stack:
            nd = stack.pop()
            if "leaf_value" in nd:
                theirs.append(("leaf", nd["leaf_value"]))
                continue
            t_ = nd["threshold"]
            if nd["decision_type"] == "==":
                t_ = frozenset(int(c) for c in str(t_).split("||"))
                n_cat += 1
            theirs.append((nd["split_feature"], t_))
            stack += [nd["right_child"], nd["left_child"]]
        if kind == "regression" or t < 14:
            assert structure(ours) == structure(theirs), f"tree {t}"
            for a, b in zip(ours, theirs):
                if a[0] == "leaf":
                    assert a[1] == pytest.approx(b[1], rel=1e-12, abs=1e-15), f"tree {t}"
    assert n_cat > len(info)  # categorical splits were made, many-vs-many ones among them
    P = np.vstack([X, np.where(np.isnan(X), 99.0, X)])  # unseen codes too
    got, want = evaluate.raw_scores(model, P), ref.predict(P, raw_score=True).reshape(len(P), -1)
    assert np.abs(got - want).max() < 1e-13  # measured: 2.7e-15


def test_generated_code_is_the_ir():
    X, y = penguins()  # NaN, three classes
    model = LightGBMStyleClassifier(n_estimators=5, min_child_samples=5).fit(X, y).model_
    assert_targets_exact(model, np.vstack([X[:30], probe_rows(X, model)[::5]]), n_random=10)


def lgb_bins(X, params):
    """LightGBM's bin of every value (Dataset._dump_text); None for a feature it drops."""
    ds = lgb.Dataset(X, params={"verbose": -1, **params}).construct()
    fd, path = tempfile.mkstemp()
    os.close(fd)
    try:
        ds._dump_text(path)
        lines = Path(path).read_text().splitlines()[-len(X):]
    finally:
        os.remove(path)
    cells = [[c.strip() for c in line.split(",") if c.strip()] for line in lines]
    cols = list(zip(*cells))
    return [None if col[0] == "NA" else np.array(col, dtype=int) for col in cols]


def odd_columns():
    """Zeros, both signs, tiny values, values one double apart, a heavy value, NaN."""
    rng = np.random.default_rng(7)
    n = 3000
    a = np.round(rng.normal(size=n), 2)
    a[:400] = 0.0
    a[400:420] = 1e-36  # |x| <= kZeroThreshold: zero to LightGBM
    a[420:440] = -1.00000001e-35  # the same, though beyond the double 1e-35
    b = rng.exponential(size=n)
    b[::3] = np.nextafter(b[1::3], np.inf)[: len(b[::3])]  # neighbours one double apart
    c = np.where(rng.random(n) < 0.8, 2.5, rng.normal(size=n))  # one value holds 80%
    d = -rng.integers(1, 40, n) * 0.1
    X = np.column_stack([a, b, c, d, rng.random(n)])
    X[rng.random(X.shape) < 0.05] = np.nan
    return X


@pytest.mark.parametrize("params", [{}, {"min_data_in_bin": 1}, {"min_data_in_bin": 7},
                                    {"max_bin": 16, "min_data_in_leaf": 200},
                                    {"max_bin": 63, "min_data_in_leaf": 5}])
def test_bins_are_lightgbms_row_by_row(params):
    for X in [odd_columns(), *(DATA[name]()[0] for name in DATA)]:
        want = lgb_bins(X, params)
        got = bin_features(X, {}, params.get("max_bin", 255),
                           min_data_in_bin=params.get("min_data_in_bin", 3),
                           min_data_in_leaf=params.get("min_data_in_leaf", 20))
        for f, codes in enumerate(want):
            if codes is None:  # LightGBM drops it (feature_pre_filter): one bin here
                assert got.n_bins[f] == 1
            else:
                assert np.array_equal(got.codes[f], codes), f"feature {f}"


def test_boosting_stops_where_lightgbm_stops():
    """Three classes a single feature separates: after 17 rounds no tree can split, and
    LightGBM stops, dropping that round; so does the learner (n_estimators_ 17, not 30)."""
    X = np.repeat([[0.0], [1.0], [2.0]], 50, axis=0)
    y = np.repeat([0, 1, 2], 50)
    kw = {"n_estimators": 30, "min_child_samples": 5, "num_leaves": 4, "learning_rate": 0.5}
    est = LightGBMStyleClassifier(**kw).fit(X, y)
    ref = lgb.LGBMClassifier(**kw, **QUIET).fit(X, y)
    assert len(est.model_.trees) == ref.booster_.num_trees() == 3 * est.n_estimators_ < 90
    assert np.array_equal(evaluate.raw_scores(est.model_, X), ref.predict(X, raw_score=True))


def random_case(seed):
    """Numeric columns of several kinds (normal, rounded, small integers of both signs,
    zero-heavy, large negative, one value holding 80%), some with NaN, and a target; random
    parameters."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(60, 1500)), int(rng.integers(1, 7))
    cols = []
    for _ in range(p):
        c = [rng.normal(size=n), np.round(rng.normal(size=n), 1),
             rng.integers(-3, 4, n).astype(float),
             np.where(rng.random(n) < 0.6, 0.0, rng.exponential(size=n)),
             -rng.exponential(size=n) * 1e3,
             np.where(rng.random(n) < 0.8, 7.25, rng.normal(size=n))][int(rng.integers(0, 6))]
        if rng.random() < 0.5:
            c[rng.random(n) < rng.uniform(0, 0.3)] = np.nan
        cols.append(c)
    X = np.column_stack(cols)
    z = np.nan_to_num(X).sum(axis=1) + rng.normal(size=n)
    kw = {"n_estimators": 30, "min_child_samples": int(rng.choice([1, 3, 5, 20])),
          "num_leaves": int(rng.choice([4, 15, 31])), "max_bin": int(rng.choice([7, 63, 255])),
          "min_data_in_bin": int(rng.choice([1, 3, 5])),
          "reg_lambda": float(rng.choice([0.0, 1.0])),
          "learning_rate": float(rng.choice([0.1, 0.5]))}
    return X, z, kw


@pytest.mark.parametrize("seed", range(0, 40, 4))
def test_random_numeric_data_gets_lightgbms_model(seed):
    X, z, kw = random_case(seed)
    task = ("regression", "binary", "multiclass")[seed % 3]
    if task == "regression":
        est, ref, y = LightGBMStyleRegressor, lgb.LGBMRegressor, z
    else:
        edges = [np.median(z)] if task == "binary" else np.quantile(z, [0.3, 0.7])
        est, ref, y = LightGBMStyleClassifier, lgb.LGBMClassifier, np.digitize(z, edges)
    model = est(**kw).fit(X, y).model_
    fitted = ref(**kw, **QUIET).fit(X, y)
    assert len(model.trees) == fitted.booster_.num_trees()
    P = np.vstack([X, probe_rows(X, model)[::5]])
    assert np.array_equal(evaluate.raw_scores(model, P),
                          fitted.predict(P, raw_score=True).reshape(len(P), -1))


@pytest.mark.parametrize("task", ["regression", "binary"])
def test_the_benchmarks_100k_rows_get_lightgbms_model(task):
    """Issue 20's size: the ensembles benchmark's synthetic data (benchmarks/bench_ensembles.py,
    100,000 rows x 20 features, its 80/20 split), LightGBM's defaults, 100 rounds: the raw
    scores of the held-out rows are LightGBM's bit for bit. (Its bins come from all the rows:
    below LightGBM's 200,000-row bin sample.)"""
    rng = np.random.default_rng(20)  # bench_ensembles.synthetic
    X = rng.normal(size=(100_000, 20))
    y = X[:, 0] * 2 + np.sin(3 * X[:, 1]) + X[:, 2] * X[:, 3] + rng.normal(size=len(X)) * 0.3
    test = np.random.default_rng(0).random(len(X)) < 0.2  # bench_ensembles.split(n, 0)
    est, ref = LightGBMStyleRegressor, lgb.LGBMRegressor
    if task == "binary":
        y, est, ref = (y > 0).astype(float), LightGBMStyleClassifier, lgb.LGBMClassifier
    model = est(random_state=0).fit(X[~test], y[~test]).model_
    fitted = ref(random_state=0, **QUIET).fit(X[~test], y[~test])
    assert len(model.trees) == fitted.booster_.num_trees() == 100
    assert np.array_equal(evaluate.raw_scores(model, X[test])[:, 0],
                          fitted.predict(X[test], raw_score=True))
