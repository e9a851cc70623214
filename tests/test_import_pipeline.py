"""scikit-learn Pipelines (ColumnTransformer of encoders and imputers, then a tree model) imported
onto the raw columns: the evaluator on raw rows equals the pipeline's own predict_proba / predict
bit for bit (training rows, every category, NaN in every column, unseen categories, numbers on
and around every threshold), and every target equals the evaluator (tests/targetcheck.py).
"""

from __future__ import annotations

import math
import warnings

import irfixtures
import numpy as np
import pandas as pd
import pytest
import run_sql
from sklearn import ensemble, tree
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    OneHotEncoder,
    OrdinalEncoder,
    StandardScaler,
)
from targetcheck import assert_targets_exact
from threadpoolctl import threadpool_limits

from rulegen.errors import RulegenError, UnsupportedFeatureError
from rulegen.importers.sklearn import from_sklearn
from rulegen.ir import evaluate as ev
from rulegen.ir.nodes import CategoricalTest, NumericTest, Split
from rulegen.ir.serialize import dumps, loads

COLOURS = ["red", "green", "blue", "it's", "grün"]
SIZES = ["S", "M", "L", "XL"]
F32MAX = float(np.finfo(np.float32).max)


def _frame(seed: int = 0, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    colour = np.array(COLOURS, dtype=object)[rng.integers(0, 5, n)]
    colour[rng.random(n) < 0.1] = np.nan
    age = np.round(rng.normal(40, 12, n), 1)
    age[rng.random(n) < 0.1] = np.nan
    income = np.round(rng.normal(size=n) * 1e3, 3)
    income[rng.random(n) < 0.08] = np.nan
    return pd.DataFrame({
        "colour": pd.Series(colour, dtype="str"),
        "size": pd.Series(np.array(SIZES)[rng.integers(0, 4, n)], dtype="str"),
        "flag": pd.Series(np.where(rng.random(n) < 0.4, "yes", "no"), dtype="str"),
        "age": age,
        "income": income,
        "n": rng.integers(0, 8, n),
        "junk": pd.Series([f"x{i % 7}" for i in range(n)], dtype="str"),
    })


DF = _frame()
_SCORE = (DF.colour.isin(["red", "it's"]).astype(int) + (DF.age.fillna(30) > 40)
          + (DF["size"] == "XL") + (DF.flag == "yes") + (DF.income.fillna(0) > 300) + (DF.n > 4))
Y2 = np.where(_SCORE % 2 == 1, "yes", "no")
Y3 = np.array(["a", "b", "c"])[_SCORE % 3]
YR = (_SCORE * 1.5 + DF.age.fillna(40) / 10 + DF.n).to_numpy()


def _onehot_ct(impute_income=False):
    return ColumnTransformer([
        ("oh", OneHotEncoder(handle_unknown="ignore"), ["colour", "size"]),
        ("flag", OneHotEncoder(drop="if_binary"), ["flag"]),
        ("age", SimpleImputer(strategy="median"), ["age"]),
        ("income", SimpleImputer(strategy="mean") if impute_income else "passthrough", ["income"]),
        ("junk", "drop", ["junk"]),
    ], remainder="passthrough")


def _ordinal_ct(impute=True):
    return ColumnTransformer([
        ("ord", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1,
                               encoded_missing_value=-2), ["colour", "size"]),
        ("num", SimpleImputer(strategy="mean", add_indicator=True) if impute else "passthrough",
         ["age", "income"]),
    ], remainder="drop")


def _chain_ct():
    return ColumnTransformer([
        ("colour", make_pipeline(SimpleImputer(strategy="constant", fill_value="none"),
                                 OneHotEncoder(drop="first", handle_unknown="ignore")), ["colour"]),
        ("size", make_pipeline(SimpleImputer(strategy="most_frequent"), OrdinalEncoder()), ["size"]),
        ("age", SimpleImputer(strategy="constant", fill_value=41.25), ["age"]),
        ("income", SimpleImputer(strategy="median"), ["income"]),
    ], remainder="drop")


def _infrequent_ct():
    return ColumnTransformer([
        ("oh", OneHotEncoder(min_frequency=60, handle_unknown="infrequent_if_exist"), ["colour"]),
        ("ord", OrdinalEncoder(max_categories=3, handle_unknown="use_encoded_value",
                               unknown_value=9), ["size"]),
        ("num", SimpleImputer(strategy="median"), ["age", "income"]),
        ("text", "drop", ["flag", "junk"]),
    ], remainder=SimpleImputer(strategy="most_frequent"))  # n


def _hgb_ct():
    return ColumnTransformer([
        ("ord", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan),
         ["colour", "size"]),
        ("oh", OneHotEncoder(sparse_output=False), ["flag"]),
        ("num", "passthrough", make_column_selector(dtype_include="number")),  # age, income, n
    ])


T, E = tree, ensemble
CASES = {
    "dtc-onehot": (lambda: Pipeline([("pre", _onehot_ct()),
                                     ("m", T.DecisionTreeClassifier(max_depth=8, random_state=0))]), Y2),
    "dtc3-ordinal": (lambda: Pipeline([("pre", _ordinal_ct()),
                                       ("m", T.DecisionTreeClassifier(random_state=0))]), Y3),
    "dtr-chain": (lambda: Pipeline([("pre", _chain_ct()),
                                    ("m", T.DecisionTreeRegressor(max_depth=7, random_state=0))]), YR),
    "rfc-onehot": (lambda: Pipeline([("pre", _onehot_ct()),
                                     ("m", E.RandomForestClassifier(6, max_depth=6, random_state=0))]), Y3),
    "rfr-ordinal-nan": (lambda: Pipeline([("pre", _ordinal_ct(impute=False)),
                                          ("m", E.RandomForestRegressor(6, max_depth=6, random_state=0))]),
                        YR),
    "gbc-onehot": (lambda: Pipeline([("pre", _onehot_ct(impute_income=True)),
                                     ("m", E.GradientBoostingClassifier(n_estimators=12, random_state=0))]),
                   Y2),
    "gbr-chain": (lambda: Pipeline([("pre", _chain_ct()),
                                    ("m", E.GradientBoostingRegressor(n_estimators=12, random_state=0))]),
                  YR),
    "dtc-infrequent": (lambda: Pipeline([("pre", _infrequent_ct()),
                                         ("m", T.DecisionTreeClassifier(max_depth=8, random_state=0))]), Y3),
    "dtc-sparse": (lambda: Pipeline([("pre", _chain_ct().set_params(sparse_threshold=1.0)),
                                     ("m", T.DecisionTreeClassifier(max_depth=8, random_state=0))]), Y3),
    "rfr-pandas-output": (lambda: Pipeline([
        ("pre", _hgb_ct().set_output(transform="pandas")),
        ("m", E.RandomForestRegressor(5, max_depth=6, random_state=0))]), YR),
    "hgbc-categorical": (lambda: Pipeline([("pre", _hgb_ct()), ("m", E.HistGradientBoostingClassifier(
        max_iter=10, categorical_features=[0, 1], random_state=0))]), Y2),
    "hgbc-native-categories": (lambda: Pipeline([("pre", ColumnTransformer([
        ("num", SimpleImputer(strategy="median"), ["age", "income"]),
        ("text", "passthrough", ["colour", "size"])])),  # object array: text reaches HGB
        ("m", E.HistGradientBoostingClassifier(max_iter=10, categorical_features=[2, 3],
                                               random_state=0))]), Y2),
    "hgbr-from-dtype": (lambda: Pipeline([("pre", ColumnTransformer(
        [("num", SimpleImputer(strategy="mean"), ["age", "income"])],
        remainder="passthrough").set_output(transform="pandas")),
        ("m", E.HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype",
                                              random_state=0))]), YR, "categories"),
    "hgbr": (lambda: Pipeline([("pre", _hgb_ct()),
                               ("m", E.HistGradientBoostingRegressor(max_iter=10, random_state=0))]), YR),
}


# pandas category columns (HistGradientBoosting's categorical_features="from_dtype")
DFC = DF.drop(columns=["junk"]).astype({"colour": "category", "size": "category", "flag": "category"})


def _frame_of(name):
    return DFC if CASES[name][2:] == ("categories",) else DF


def _fit(name):
    make, y = CASES[name][:2]
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make().fit(_frame_of(name), y)
    if name == "dtc-sparse":
        assert hasattr(pipe[0].transform(DF), "toarray")  # the tree reads a sparse matrix
    return pipe


# --- raw probe rows and the evaluator's input ---------------------------------------------


def probe_frame(model, df: pd.DataFrame = DF, seed: int = 0) -> pd.DataFrame:
    """Training rows; each category, NaN and an unseen label in each text column; NaN and
    values on and around every threshold (float64 and float32 steps) in each numeric column."""
    rng = np.random.default_rng(seed)
    df = df.astype({c: float for c in df.columns if df[c].dtype.kind in "iu"})  # room for NaN
    df = df.astype({c: object for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)})
    base = df.iloc[:150]
    rows = [base]

    def put(col, values):
        block = base.iloc[rng.integers(0, len(base), len(values))].copy()
        block[col] = pd.Series(values, index=block.index, dtype=block[col].dtype)
        rows.append(block)

    for col in df.columns:
        if df[col].dtype == object or str(df[col].dtype) == "str":  # text
            put(col, list(df[col].dropna().unique()) + [np.nan, "purple", ""])
        else:
            put(col, [np.nan] * 3)
    names = [f.name for f in model.features]
    for f, ts in irfixtures._thresholds(model).items():
        vals = [v for t in sorted(ts) for v in irfixtures._near(t) if abs(v) < F32MAX]
        if vals:
            put(names[f], vals)
    everything = base.iloc[:1].copy()
    for col in df.columns:
        everything[col] = pd.Series([np.nan], index=everything.index, dtype=float if
                                    df[col].dtype.kind in "fiu" else df[col].dtype)
    rows.append(everything)
    return pd.concat(rows, ignore_index=True)


def codes(model, df: pd.DataFrame) -> np.ndarray:
    """Raw rows as the evaluator's input: category labels -> codes (-1 unseen), missing -> NaN."""
    X = np.empty((len(df), len(model.features)))
    for j, f in enumerate(model.features):
        col = df[f.name].tolist()
        if f.kind == "categorical":
            index = {c: i for i, c in enumerate(f.categories)}
            X[:, j] = [math.nan if v is None or (isinstance(v, float) and math.isnan(v))
                       else index.get(v, -1) for v in col]
        else:
            X[:, j] = np.asarray(col, dtype=np.float64)
    return X


def pipeline_says(pipe, df: pd.DataFrame, classifier: bool):
    """The pipeline's own outputs, and the rows it accepted (it rejects e.g. NaN for
    GradientBoosting, unknown categories with handle_unknown='error')."""
    method = pipe.predict_proba if classifier else pipe.predict
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok = np.ones(len(df), bool)
        chunks = [np.arange(len(df))]  # halve the chunks that fail: few rows are rejected
        while chunks:
            rows = chunks.pop()
            try:
                pipe.predict(df.iloc[rows])
            except ValueError:
                if len(rows) == 1:
                    ok[rows] = False
                else:
                    chunks += [rows[: len(rows) // 2], rows[len(rows) // 2:]]
        return method(df[ok]), pipe.predict(df[ok]), ok


@pytest.fixture(scope="module", params=sorted(CASES))
def imported(request):
    pipe = _fit(request.param)
    model = from_sklearn(pipe)
    df = probe_frame(model, _frame_of(request.param))
    return request.param, pipe, model, df, codes(model, df)


def test_pipeline_equals_evaluator(imported):
    name, pipe, model, df, X = imported
    classifier = model.target.task == "classification"
    out, pred, ok = pipeline_says(pipe, df, classifier)
    assert ok.sum() >= 150 + 20, name
    if classifier:
        got = ev.predict_proba(model, X[ok])
        assert np.array_equal(got, out), (name, np.flatnonzero((got != out).any(axis=1))[:5])
        assert np.array_equal(ev.predict(model, X[ok]).astype(str), pred.astype(str)), name
    else:
        got = ev.predict_value(model, X[ok])[:, 0]
        assert np.array_equal(got, out), (name, np.flatnonzero(got != out)[:5])


def test_targets_equal_evaluator(imported):
    _name, _pipe, model, _df, X = imported
    assert_targets_exact(model, X, n_random=20)


@pytest.mark.parametrize("engine", [e for e in run_sql.ENGINES if e not in ("sqlite", "duckdb")])
def test_sql_engines_equal_evaluator(imported, engine):
    run_sql.check_sql(imported[2], imported[4], engine)  # sqlite and duckdb: targetcheck


def test_json_round_trip(imported):
    assert loads(dumps(imported[2])) == imported[2]


# --- what the IR says -----------------------------------------------------------------------


def test_raw_columns_and_categorical_tests():
    pipe = _fit("dtc-onehot")
    model = from_sklearn(pipe)
    assert [(f.name, f.kind) for f in model.features] == [
        ("colour", "categorical"), ("size", "categorical"), ("flag", "categorical"),
        ("age", "numeric"), ("income", "numeric"), ("n", "numeric")]  # junk is dropped
    assert model.features[0].categories == tuple(sorted(COLOURS))
    splits = [nd for t in model.trees for nd in t.nodes if isinstance(nd, Split)]
    one_hot = [nd for nd in splits if isinstance(nd.test, CategoricalTest)
               and nd.test.feature in (0, 1)]
    # onehot_k <= 0.5 is "category != k": every other category goes left, unseen too (all
    # zeros); on the column of NaN (colour had NaN in training) every category goes left
    for nd in one_hot:
        n = len(model.features[nd.test.feature].categories)
        assert nd.unseen == 0
        assert len(nd.test.categories) == n - 1 or (len(nd.test.categories) == n
                                                    and nd.missing.child == 1)
    assert any(len(nd.test.categories) == 4 for nd in one_hot)
    assert all(isinstance(nd.test, NumericTest) for nd in splits if nd.test.feature >= 3)
    renamed = from_sklearn(pipe, feature_names=list("abcdefg"))
    assert [f.name for f in renamed.features] == list("abcdef")
    with pytest.raises(RulegenError, match="2 feature names given"):
        from_sklearn(pipe, feature_names=["a", "b"])


@pytest.mark.parametrize("estimator", [T.DecisionTreeClassifier(max_depth=1),
                                       E.HistGradientBoostingClassifier(max_iter=1, max_depth=2)])
def test_imputed_value_takes_the_float32_or_float64_way(estimator):
    """The fill value sits one float64 step above the split: float32(fill) equals the
    threshold, so a decision tree (float32) sends missing left, HGB (float64) right."""
    rng = np.random.default_rng(1)
    x = rng.integers(1, 9, 400).astype(float)
    df = pd.DataFrame({"x": x})
    y = (x > 4).astype(int)
    pipe = make_pipeline(SimpleImputer(strategy="constant", fill_value=0.0), estimator).fit(df, y)
    model = from_sklearn(pipe)
    root = model.trees[0].nodes[0]
    t = float(np.float32(root.test.threshold))
    fill = math.nextafter(4.5, math.inf)
    assert t == 4.5 and float(np.float32(fill)) == 4.5
    pipe.steps[0][1].statistics_ = np.array([fill])  # as if the training data had set it
    model = from_sklearn(pipe)
    want = 0 if isinstance(estimator, T.DecisionTreeClassifier) else 1
    assert model.trees[0].nodes[0].missing.child == want
    q = pd.DataFrame({"x": [np.nan, 4.5, fill, 5.0, 4.0]})
    assert np.array_equal(ev.predict_proba(model, q.to_numpy()), pipe.predict_proba(q))


def test_object_columns_with_none():
    """pandas' text columns hold NaN; in an object column None is a category of its own to an
    encoder. Where None and NaN were both learnt and go different ways, the import is refused."""
    df = pd.DataFrame({"c": pd.Series(["a", "b", None, np.nan] * 30, dtype=object)})
    y = np.array([0, 0, 1, 0] * 30)
    pipe = make_pipeline(OrdinalEncoder(), T.DecisionTreeClassifier()).fit(df, y)
    with pytest.raises(UnsupportedFeatureError, match="None and NaN"):
        from_sklearn(pipe)
    y = np.array([0, 0, 1, 1] * 30)
    pipe = make_pipeline(OrdinalEncoder(encoded_missing_value=3), T.DecisionTreeClassifier()).fit(df, y)
    model = from_sklearn(pipe)  # None (code 2) and NaN (3) go the same way here
    assert model.features[0].categories == ("a", "b")
    q = pd.DataFrame({"c": pd.Series(["a", "b", None, np.nan], dtype=object)})
    assert np.array_equal(ev.predict_proba(model, codes(model, q)), pipe.predict_proba(q))


def test_missing_indicator_becomes_present_or_missing():
    model = from_sklearn(_fit("dtc3-ordinal"))  # SimpleImputer(add_indicator=True) on age, income
    splits = [nd for t in model.trees for nd in t.nodes if isinstance(nd, Split)]
    indicator = [nd for nd in splits if isinstance(nd.test, NumericTest)
                 and math.isinf(nd.test.threshold)]
    assert indicator and all((nd.test.op, nd.test.threshold, nd.missing.child) == ("<=", math.inf, 1)
                             for nd in indicator)


def test_integer_categories_and_numpy_input():
    """Encoders over an integer column give integer labels; a pipeline fitted on a numpy array
    names its columns x0, x1, ..."""
    X = DF[["n", "age"]].to_numpy()
    pre = ColumnTransformer([("n", OneHotEncoder(handle_unknown="ignore", sparse_output=False), [0]),
                             ("age", SimpleImputer(), [1])])
    pipe = make_pipeline(pre, T.DecisionTreeRegressor(max_depth=6, random_state=0)).fit(X, YR)
    model = from_sklearn(pipe)
    assert [(f.name, f.kind) for f in model.features] == [("x0", "categorical"), ("x1", "numeric")]
    assert model.features[0].categories == tuple(range(8))
    q = np.array([[k, a] for k in (-1.0, 0.0, 3.0, 7.0, 8.0, 2.5, np.nan)
                  for a in (np.nan, 20.0, 40.0, 55.5)])
    Xc = q.copy()
    Xc[:, 0] = [v if np.isnan(v) or v in range(8) else -1 for v in q[:, 0]]
    assert np.array_equal(ev.predict_value(model, Xc)[:, 0], pipe.predict(q))
    assert_targets_exact(model, Xc, n_random=10)


def test_text_in_a_numpy_object_array():
    X = DF[["colour", "age"]].to_numpy(dtype=object)
    pre = ColumnTransformer([("c", OneHotEncoder(handle_unknown="ignore"), [0]),
                             ("a", SimpleImputer(), [1])])
    pipe = make_pipeline(pre, T.DecisionTreeClassifier(max_depth=6, random_state=0)).fit(X, Y2)
    model = from_sklearn(pipe)
    assert [(f.name, f.kind) for f in model.features] == [("x0", "categorical"), ("x1", "numeric")]
    q = pd.DataFrame([[c, a] for c in COLOURS + ["purple", np.nan] for a in (np.nan, 30.0, 45.0)],
                     columns=["x0", "x1"])
    assert np.array_equal(ev.predict_proba(model, codes(model, q)),
                          pipe.predict_proba(q.to_numpy(dtype=object)))


def test_bare_steps_and_no_column_transformer():
    pipe = Pipeline([("imp", SimpleImputer(strategy="median")), ("skip", "passthrough"),
                     ("m", T.DecisionTreeRegressor(max_depth=4, random_state=0))])
    num = DF[["age", "income", "n"]]
    pipe.fit(num, YR)
    model = from_sklearn(pipe)
    assert [f.name for f in model.features] == ["age", "income", "n"]
    df = probe_frame(model, num)
    assert np.array_equal(ev.predict_value(model, codes(model, df))[:, 0], pipe.predict(df))


# --- refused --------------------------------------------------------------------------------


def test_other_steps_are_refused_by_name():
    num = DF[["age", "income"]].fillna(0)
    text = DF[["colour", "age"]].fillna({"colour": "none", "age": 0.0})
    cases = [
        (make_pipeline(StandardScaler(), T.DecisionTreeClassifier()).fit(num, Y2),
         "Pipeline step StandardScaler"),
        (make_pipeline(ColumnTransformer([("s", StandardScaler(), ["age"]),
                                          ("o", OneHotEncoder(), ["colour"])]),
                       T.DecisionTreeClassifier()).fit(text, Y2),
         "StandardScaler \\(transformer 's' of the ColumnTransformer\\)"),
        (make_pipeline(ColumnTransformer([("f", FunctionTransformer(np.log1p), ["age"])]),
                       T.DecisionTreeClassifier()).fit(num.abs(), Y2), "FunctionTransformer"),
        (make_pipeline(SimpleImputer(missing_values=0.0), T.DecisionTreeClassifier()).fit(num, Y2),
         "missing_values=0.0"),
        (make_pipeline(ColumnTransformer([("o", OrdinalEncoder(), ["colour"])]),
                       OneHotEncoder(), T.DecisionTreeClassifier()).fit(text, Y2),
         "an encoder over an encoded"),
        (make_pipeline(ColumnTransformer([("o", OneHotEncoder(), ["n"]), ("p", "passthrough", ["n"])]),
                       T.DecisionTreeRegressor(max_depth=4)).fit(DF, YR),
         "column 'n', both encoded as categories and read as a number"),
        (make_pipeline(SimpleImputer(), make_pipeline(SimpleImputer(), T.DecisionTreeRegressor())
                       ).fit(num, YR), "flatten it"),
        (make_pipeline(SimpleImputer(), E.AdaBoostRegressor(n_estimators=2)).fit(num, YR),
         "AdaBoostRegressor"),
    ]
    for pipe, word in cases:
        with pytest.raises(UnsupportedFeatureError, match=word):
            from_sklearn(pipe)


def test_unfitted_pipeline_is_a_clear_error():
    with pytest.raises(RulegenError, match="not fitted"):
        from_sklearn(make_pipeline(SimpleImputer(), T.DecisionTreeClassifier()))
