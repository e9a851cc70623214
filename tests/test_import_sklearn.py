"""scikit-learn importer: sklearn == evaluator == Python == C == SQL on training rows, rows on and
around every threshold (the float64 and float32 neighbours), NaN rows and unseen categories.

Bit for bit everywhere except where scikit-learn itself uses numpy's SIMD ``exp`` (softmax,
exp links: a few ulp, ``ULP_TOL``) and AdaBoost (the IR has no final division by the weight
sum: ``ADA_TOL``); the raw scores of the softmax models stay bit for bit. See the docstring
of rulegen/importers/sklearn.py. The targets always equal the evaluator bit for bit.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from irfixtures import labels_for
from run_c import run_c
from run_python import run_python
from sklearn import ensemble, tree
from threadpoolctl import threadpool_limits

from rulegen.codegen.registry import generate
from rulegen.errors import RulegenError, UnsupportedFeatureError
from rulegen.importers.sklearn import from_sklearn
from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import CategoricalTest, Split
from rulegen.ir.serialize import dumps, loads

import run_sql

# measured on these cases: softmax probabilities 1.1e-16 abs, poisson 8.9e-16 abs (1.4e-16 rel)
ULP_TOL = 1e-15  # relative (and absolute): numpy's SIMD exp vs the C library's exp
# measured: probabilities 1.1e-16 abs, decision 2.2e-16 abs (grows with the number of trees)
ADA_TOL = 1e-14  # relative (and absolute): AdaBoost's weight normalisation folded into weights
ENGINES = ("sqlite", "duckdb", "postgres")


# --- data -------------------------------------------------------------------------------


def _data(seed: int = 0, n: int = 240):
    rng = np.random.default_rng(seed)
    X = np.column_stack([
        rng.integers(0, 6, n).astype(float),          # integer values: thresholds at x.5, ties
        np.round(rng.normal(size=n), 3),              # decimals: float32 rounding matters
        rng.normal(size=n) * 1e3,
        np.array([0.0, 1.0, 2.0, 7.0])[rng.integers(0, 4, n)],  # categorical for HGB
    ])
    noise = rng.normal(size=n)
    yb = np.where((X[:, 0] > 2) ^ (X[:, 1] + 0.3 * noise > 0.2) | (X[:, 3] == 7), 7, 3)
    y3 = np.array(["setosa", "b", "c c"])[(X[:, 0] + (X[:, 1] > 0) + (X[:, 3] == 2)).astype(int) % 3]
    yr = 1.5 * X[:, 0] + np.sin(X[:, 1]) + 0.001 * X[:, 2] + (X[:, 3] == 1) + 0.1 * noise
    Xn = X.copy()
    Xn[:, :3][rng.random((n, 3)) < 0.08] = np.nan
    Xn[rng.random(n) < 0.05, 3] = np.nan
    return X, Xn, yb, y3, yr


X, XN, YB, Y3, YR = _data()
Y2 = np.column_stack([YR, np.cos(X[:, 1]) * 3])
NUMERIC = slice(0, 3)  # estimators other than HGB-with-categories see features 0..2 only

T, E = tree, ensemble
CASES = {
    # name: (estimator, X, y, NaN allowed by sklearn)
    "dtc-binary": (lambda: T.DecisionTreeClassifier(max_depth=7, random_state=0), XN, YB, True),
    "dtc-3-clean": (lambda: T.DecisionTreeClassifier(random_state=0), X, Y3, True),
    "dtr": (lambda: T.DecisionTreeRegressor(max_depth=6, random_state=0), XN, YR, True),
    "dtr-2-outputs": (lambda: T.DecisionTreeRegressor(max_depth=5, random_state=0), XN, Y2, True),
    "etc-3": (lambda: T.ExtraTreeClassifier(max_depth=8, random_state=0), XN, Y3, True),
    "etr": (lambda: T.ExtraTreeRegressor(max_depth=6, random_state=0), XN, YR, True),
    "rfc-binary": (lambda: E.RandomForestClassifier(8, max_depth=5, random_state=0), XN, YB, True),
    "rfc-3-clean": (lambda: E.RandomForestClassifier(8, max_depth=5, random_state=1), X, Y3, True),
    "rfr-2-outputs": (lambda: E.RandomForestRegressor(8, max_depth=4, random_state=0), XN, Y2, True),
    "etsc-3": (lambda: E.ExtraTreesClassifier(8, max_depth=5, random_state=0), XN, Y3, True),
    "etsr": (lambda: E.ExtraTreesRegressor(8, max_depth=5, random_state=0), XN, YR, True),
    "gbc-binary": (lambda: E.GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0),
                   X, YB, False),
    "gbc-exponential": (lambda: E.GradientBoostingClassifier(loss="exponential", n_estimators=15,
                                                             random_state=0), X, YB, False),
    "gbc-3": (lambda: E.GradientBoostingClassifier(n_estimators=8, max_depth=2, subsample=0.8,
                                                   random_state=0), X, Y3, False),
    "gbr-squared": (lambda: E.GradientBoostingRegressor(n_estimators=15, random_state=0), X, YR, False),
    "gbr-absolute": (lambda: E.GradientBoostingRegressor(loss="absolute_error", n_estimators=10,
                                                         random_state=0), X, YR, False),
    "gbr-huber": (lambda: E.GradientBoostingRegressor(loss="huber", n_estimators=10, max_leaf_nodes=6,
                                                      random_state=0), X, YR, False),
    "gbr-quantile": (lambda: E.GradientBoostingRegressor(loss="quantile", alpha=0.8, n_estimators=10,
                                                         learning_rate=0.3, random_state=0), X, YR, False),
    "hgbc-binary": (lambda: E.HistGradientBoostingClassifier(max_iter=15, random_state=0), XN, YB, True),
    "hgbc-3-categorical": (lambda: E.HistGradientBoostingClassifier(
        max_iter=8, categorical_features=[3], random_state=0), XN, Y3, True),
    "hgbr-categorical": (lambda: E.HistGradientBoostingRegressor(
        max_iter=15, categorical_features=[0, 3], random_state=0), XN, YR, True),
    "hgbr-poisson": (lambda: E.HistGradientBoostingRegressor(loss="poisson", max_iter=10,
                                                             random_state=0), XN, np.abs(YR), True),
    "ada-binary": (lambda: E.AdaBoostClassifier(n_estimators=25, random_state=0), X, YB, False),
    "ada-3": (lambda: E.AdaBoostClassifier(n_estimators=20, random_state=0), X, Y3, False),
    "ada-3-deeper": (lambda: E.AdaBoostClassifier(T.DecisionTreeClassifier(max_depth=3), n_estimators=10,
                                                  learning_rate=0.5, random_state=0), X, Y3, False),
}


def _fit(name):
    make, Xfit, y, _nan_ok = CASES[name]
    est = make()
    if not isinstance(getattr(est, "categorical_features", None), list):
        Xfit = Xfit[:, NUMERIC]
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xfit, y)
    return est, Xfit


# --- probe rows -------------------------------------------------------------------------


def _f32_neighbours(t: float) -> list[float]:
    t32 = np.float32(t)
    if not np.isfinite(t32):
        return []
    return [float(t32), float(np.nextafter(t32, np.float32(-np.inf))),
            float(np.nextafter(t32, np.float32(np.inf)))]


def _thresholds(est) -> dict[int, set[float]]:
    """Finite thresholds per input feature, read from scikit-learn's own structures."""
    found: dict[int, set[float]] = {}
    if hasattr(est, "_predictors"):
        pre = est._preprocessor
        source = np.arange(est.n_features_in_)
        if pre is not None:
            source = np.concatenate([np.flatnonzero(est.is_categorical_),
                                     np.flatnonzero(~est.is_categorical_)])
        for it in est._predictors:
            for p in it:
                for nd in p.nodes:
                    if not nd["is_leaf"] and not nd["is_categorical"] and np.isfinite(nd["num_threshold"]):
                        found.setdefault(int(source[nd["feature_idx"]]), set()).add(float(nd["num_threshold"]))
        return found
    if hasattr(est, "tree_"):
        trees = [est]
    elif isinstance(est.estimators_, np.ndarray):
        trees = list(est.estimators_.ravel())
    else:
        trees = list(est.estimators_)
    for e in trees:
        t = e.tree_
        for f, thr in zip(t.feature, t.threshold):
            if f >= 0 and np.isfinite(thr):
                found.setdefault(int(f), set()).add(float(thr))
    return found


def probe_rows(est, Xfit: np.ndarray, nan_ok: bool, seed: int = 0, limit: int = 900) -> np.ndarray:
    """Training rows + one row per probe value (threshold, float64 and float32 neighbours),
    in scikit-learn's input domain; plus NaN rows and unknown categories."""
    rng = np.random.default_rng(seed)
    f32 = not hasattr(est, "_predictors")
    probes = []
    for f, ts in sorted(_thresholds(est).items()):
        for t in sorted(ts):
            vals = [t, float(np.nextafter(t, -np.inf)), float(np.nextafter(t, np.inf))]
            for v in vals + (_f32_neighbours(t) if f32 else []):
                probes.append((f, v))
    if len(probes) > limit:
        probes = [probes[i] for i in np.sort(rng.choice(len(probes), limit, replace=False))]
    clean = Xfit[~np.isnan(Xfit).any(axis=1)]
    rows = [Xfit]
    for i, (f, v) in enumerate(probes):
        row = clean[i % len(clean)].copy()
        row[f] = v
        rows.append(row[None, :])
    categorical = getattr(est, "is_categorical_", None)
    for f in np.flatnonzero(categorical) if categorical is not None else []:
        for v in (-1.0, 2.5, 3.0, 99.0, 1000.0, np.nan):  # unknown categories
            row = clean[int(v) % len(clean) if np.isfinite(v) else 0].copy()
            row[f] = v
            rows.append(row[None, :])
    nan_rows = clean[: 3 * Xfit.shape[1]].copy()
    for i in range(len(nan_rows)):
        nan_rows[i, i % Xfit.shape[1]] = np.nan
    nan_rows[-1] = np.nan
    rows.append(nan_rows)
    return np.vstack(rows)


def to_codes(model, Xs: np.ndarray) -> np.ndarray:
    """scikit-learn inputs -> evaluator inputs: category values become codes (-1 unseen)."""
    Xc = Xs.copy()
    for j, f in enumerate(model.features):
        if f.kind == "categorical":
            index = {c: i for i, c in enumerate(f.categories)}
            Xc[:, j] = [v if math.isnan(v) else index.get(int(v), -1) if v == int(v) else -1
                        for v in Xs[:, j]]
    return Xc


# --- what scikit-learn says -------------------------------------------------------------


def _ada_decision(est, Xs):
    """AdaBoostClassifier.decision_function's own arithmetic, on rows sklearn's validation
    would reject (NaN): the trees route NaN by missing_go_to_left."""
    k = est.n_classes_
    classes = est.classes_[:, np.newaxis]
    pred = sum(np.where((e.predict(Xs) == classes).T, w, -1 / (k - 1) * w)
               for e, w in zip(est.estimators_, est.estimator_weights_))
    pred /= est.estimator_weights_.sum()
    if k == 2:
        pred[:, 0] *= -1
        return pred.sum(axis=1)
    return pred


def reference(est, Xs, nan_ok: bool) -> dict:
    """sklearn's outputs: 'out' (proba or 2-D values), 'pred', 'raw' (decision / raw) and
    'raw_scale' (what the IR's raw is as a multiple of it)."""
    clf = hasattr(est, "classes_")
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not nan_ok and np.isnan(Xs).any():
            return _reference_nan(est, Xs)
        ref = {"pred": est.predict(Xs)}
        if clf:
            ref["out"] = est.predict_proba(Xs)
            if hasattr(est, "decision_function"):
                ref["raw"] = est.decision_function(Xs)
        else:
            ref["out"] = ref["pred"].reshape(len(Xs), -1)
            if hasattr(est, "_predictors"):  # HGB: raw before the link (exp for poisson)
                ref["raw"] = est._raw_predict(Xs)
    return ref


def _reference_nan(est, Xs) -> dict:
    """GradientBoosting / AdaBoost reject NaN: recompute their sums from the trees' own
    predict (which routes NaN by missing_go_to_left), with the same float64 operations."""
    if isinstance(est, E.AdaBoostClassifier):
        d = _ada_decision(est, Xs)
        dd = np.vstack([-d, d]).T / 2 if est.n_classes_ == 2 else d / (est.n_classes_ - 1)
        from sklearn.utils.extmath import softmax
        pred = est.classes_.take(d > 0 if est.n_classes_ == 2 else np.argmax(d, axis=1))
        return {"raw": d, "out": softmax(dd), "pred": pred}
    raw = est._raw_predict_init(Xs)
    for stage in est.estimators_:
        for k, e in enumerate(stage):
            raw[:, k] = raw[:, k] + est.learning_rate * e.predict(Xs)
    if not hasattr(est, "classes_"):
        return {"raw": raw, "out": raw, "pred": raw[:, 0]}
    out = est._loss.predict_proba(raw)
    enc = (raw[:, 0] >= 0).astype(int) if raw.shape[1] == 1 else np.argmax(raw, axis=1)
    return {"raw": raw[:, 0] if raw.shape[1] == 1 else raw, "out": out, "pred": est.classes_[enc]}


# --- the comparison ---------------------------------------------------------------------


def _exactness(est, model) -> tuple[float, float]:
    """(relative tolerance for outputs, for raw) of the IR against scikit-learn."""
    if isinstance(est, E.AdaBoostClassifier):
        return ADA_TOL, ADA_TOL
    if model.link in ("softmax", "exp"):
        return ULP_TOL, 0.0
    return 0.0, 0.0


def _raw_scale(est, model) -> float:
    if getattr(est, "loss", None) == "exponential":
        return 2.0  # the IR's raw is exactly 2 * decision_function
    if isinstance(est, E.AdaBoostClassifier) and est.n_classes_ > 2:
        return 1.0 / (est.n_classes_ - 1)
    return 1.0


def _close(name, got, want, rtol):
    got, want = np.asarray(got, float), np.asarray(want, float).reshape(np.shape(got))
    if rtol == 0:
        bad = got != want
        assert not bad.any(), (f"{name}: {bad.sum()} cells differ, max {np.abs(got - want).max()}; "
                               f"first {got[bad][:3]} vs {want[bad][:3]}")
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=name)


@pytest.fixture(scope="module", params=sorted(CASES))
def imported(request):
    name = request.param
    est, Xfit = _fit(name)
    model = from_sklearn(est)
    Xs = probe_rows(est, Xfit, CASES[name][3])
    return name, est, model, Xs, to_codes(model, Xs)


def test_sklearn_equals_evaluator(imported):
    name, est, model, Xs, Xc = imported
    nan_ok = CASES[name][3]
    rtol_out, rtol_raw = _exactness(est, model)
    present = ~np.isnan(Xs).any(axis=1)
    for label, rows in (("rows without NaN", present if not nan_ok else np.ones(len(Xs), bool)),
                        ("rows with NaN (sklearn recomputed)", ~present if not nan_ok else None)):
        if rows is None or not rows.any():
            continue
        ref = reference(est, Xs[rows], nan_ok)
        xc = Xc[rows]
        if model.target.task == "classification":
            _close(f"{name} proba, {label}", ev.predict_proba(model, xc), ref["out"], rtol_out)
            got = ev.predict(model, xc)
            assert [type(v) for v in got[:1]] in ([int], [str])
            assert np.array_equal(got.astype(str), np.asarray(ref["pred"]).astype(str)), (name, label)
        else:
            _close(f"{name} values, {label}", ev.predict_value(model, xc), ref["out"], rtol_out)
        if "raw" in ref:
            raw = ev.raw_scores(model, xc)
            _close(f"{name} raw, {label}", raw, np.asarray(ref["raw"]).reshape(raw.shape) * _raw_scale(est, model),
                   rtol_raw)


def test_targets_equal_evaluator(imported):
    name, _est, model, _Xs, Xc = imported
    clf = model.target.task == "classification"
    raw = ev.raw_scores(model, Xc)
    out = ev.predict_proba(model, Xc) if clf else ev.predict_value(model, Xc)
    rows = labels_for(model, Xc)
    py = run_python(model, rows)
    _close(f"{name} python raw", py.raw, raw, 0)
    _close(f"{name} python out", py.outputs, out, 0)
    if clf:
        assert np.array_equal(py.class_index, ev.predict_class_index(model, Xc))
    res = run_c(generate(model, "c", name="m"), "m", Xc)
    _close(f"{name} C raw", res["raw"], raw, 0)
    _close(f"{name} C out", res["out"], out, 0)
    if clf:
        assert np.array_equal(res["class"], ev.predict_class_index(model, Xc))


@pytest.mark.parametrize("engine", ENGINES)
def test_sql_equals_evaluator(imported, engine):
    _name, _est, model, _Xs, Xc = imported
    run_sql.check_sql(model, Xc, engine)


def test_json_round_trip(imported):
    _name, _est, model, _Xs, _Xc = imported
    assert loads(dumps(model)) == model


# --- semantics worth pinning down ---------------------------------------------------------


def test_nan_without_training_nan_goes_to_the_larger_child():
    est, _ = _fit("dtc-3-clean")
    t = est.tree_
    inner = np.flatnonzero(t.children_left >= 0)
    bigger_left = t.n_node_samples[t.children_left[inner]] > t.n_node_samples[t.children_right[inner]]
    assert np.array_equal(t.missing_go_to_left[inner].astype(bool), bigger_left)
    model = from_sklearn(est)
    assert all(model.trees[0].nodes[i].missing.child == (0 if bigger_left[k] else 1)
               for k, i in enumerate(inner))


def test_inf_threshold_for_missing_only_right_split():
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    y = np.isnan(np.where(rng.random(200) < 0.3, np.nan, x)).astype(int)
    Xm = np.where(y == 1, np.nan, x)[:, None]
    est = T.DecisionTreeClassifier(max_depth=1).fit(Xm, y)
    assert est.tree_.threshold[0] == np.inf and not est.tree_.missing_go_to_left[0]
    model = from_sklearn(est)
    root = model.trees[0].nodes[0]
    assert (root.test.op, root.test.threshold, root.missing.child) == ("<=", math.inf, 1)
    Xq = np.array([[np.nan], [1e30], [-3.0], [0.0]])
    assert np.array_equal(ev.predict_proba(model, Xq), est.predict_proba(Xq))


def test_hgb_categories_and_feature_order():
    est, _ = _fit("hgbr-categorical")
    model = from_sklearn(est)
    assert [f.kind for f in model.features] == ["categorical", "numeric", "numeric", "categorical"]
    assert model.features[3].categories == (0, 1, 2, 7)
    assert all(type(c) is int for c in model.features[0].categories)
    splits = [nd for t in model.trees for nd in t.nodes if isinstance(nd, Split)]
    cat = [nd for nd in splits if isinstance(nd.test, CategoricalTest)]
    assert cat and all(nd.unseen == nd.missing.child for nd in cat)
    assert {nd.test.feature for nd in splits} >= {0, 1, 3}


def test_string_categories_in_object_arrays():
    rng = np.random.default_rng(5)
    n = 200
    Xo = np.empty((n, 2), dtype=object)
    Xo[:, 0] = rng.normal(size=n)
    Xo[:, 1] = np.array(["red", "green", "blue", "it's"])[rng.integers(0, 4, n)]
    y = np.where((Xo[:, 1] == "green") | (Xo[:, 1] == "it's"), "yes", "no")
    with threadpool_limits(1):
        est = E.HistGradientBoostingClassifier(max_iter=5, categorical_features=[1]).fit(Xo, y)
    model = from_sklearn(est, feature_names=["x", "colour"])
    assert model.features[1].categories == ("blue", "green", "it's", "red")
    Xq = np.array([[0.1, "green"], [0.2, "purple"], [0.3, None], [-1.0, "it's"]], dtype=object)
    codes = np.array([[0.1, 1], [0.2, -1], [0.3, np.nan], [-1.0, 2]])
    assert np.array_equal(ev.predict_proba(model, codes), est.predict_proba(Xq))
    py = run_python(model, [[0.1, "green"], [0.2, "purple"], [0.3, None], [-1.0, "it's"]])
    assert np.array_equal(py.outputs, est.predict_proba(Xq))
    assert [p for p in py.predictions] == list(est.predict(Xq))


def test_labels_names_and_provenance():
    est, _ = _fit("dtc-binary")
    model = from_sklearn(est)
    assert model.target.classes == (3, 7) and all(type(c) is int for c in model.target.classes)
    assert [f.name for f in model.features] == ["x0", "x1", "x2"]
    assert model.provenance.algorithm == "DecisionTreeClassifier"
    assert model.provenance.library.startswith("scikit-learn ")
    assert dict(model.provenance.params)["max_depth"] == 7
    named = from_sklearn(est, feature_names=["a", "b", "c"])
    assert [f.name for f in named.features] == ["a", "b", "c"]
    est.feature_names_in_ = np.array(["p", "q", "r"], dtype=object)  # as a DataFrame fit sets it
    assert [f.name for f in from_sklearn(est).features] == ["p", "q", "r"]
    with pytest.raises(RulegenError, match="2 feature names given"):
        from_sklearn(est, feature_names=["a", "b"])
    est3, _ = _fit("gbc-3")
    assert from_sklearn(est3).target.classes == ("b", "c c", "setosa")


def test_gradient_boosting_structure():
    est, _ = _fit("gbc-3")
    model = from_sklearn(est)
    assert len(model.trees) == 3 * est.n_estimators_
    assert [t.output for t in model.trees[:4]] == [0, 1, 2, 0]
    assert all(t.weight == est.learning_rate for t in model.trees)
    exp_est, _ = _fit("gbc-exponential")
    exp_model = from_sklearn(exp_est)
    assert exp_model.trees[0].weight == 2 * exp_est.learning_rate
    zero = E.GradientBoostingRegressor(init="zero", n_estimators=3).fit(X[:, NUMERIC], YR)
    assert from_sklearn(zero).base_score == (0.0,)
    assert np.array_equal(ev.predict_value(from_sklearn(zero), X[:, NUMERIC])[:, 0], zero.predict(X[:, NUMERIC]))


# --- errors -----------------------------------------------------------------------------


@pytest.mark.parametrize("est", [T.DecisionTreeClassifier(), E.RandomForestRegressor(),
                                 E.HistGradientBoostingClassifier(), E.AdaBoostClassifier(),
                                 E.GradientBoostingRegressor()])
def test_unfitted_estimator_is_a_clear_error(est):
    with pytest.raises(RulegenError, match=f"{type(est).__name__} is not fitted"):
        from_sklearn(est)


def test_unsupported_estimators_are_named():
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    Xf = X[:, NUMERIC]
    cases = [
        (make_pipeline(StandardScaler(), T.DecisionTreeClassifier()).fit(Xf, YB), "Pipeline"),
        (E.AdaBoostRegressor(n_estimators=3).fit(Xf, YR), "AdaBoostRegressor"),
        (LinearRegression().fit(Xf, YR), "LinearRegression"),
        (E.IsolationForest(n_estimators=3).fit(Xf), "IsolationForest"),
        (T.DecisionTreeClassifier().fit(Xf, np.column_stack([YB, YB])), "multi-output"),
        (E.GradientBoostingClassifier(init=LogisticRegression(), n_estimators=2).fit(Xf, YB),
         "LogisticRegression"),
        (T.DecisionTreeClassifier, "class DecisionTreeClassifier itself"),
        ("a string", "builtins.str object"),
    ]
    for est, word in cases:
        with pytest.raises(UnsupportedFeatureError, match=word):
            from_sklearn(est)
