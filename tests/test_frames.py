"""pandas DataFrames in, as the command line reads a CSV: ``category`` and text columns
become categorical features without any encoding by the user, bool and numeric columns are
numbers, and NaN, None and pd.NA are all missing."""

from __future__ import annotations

import numpy as np
import pandas as pd  # a test dependency: fail, never skip
import pytest

from rulegen.data import design_matrix, parse_csv
from rulegen.ir import evaluate
from rulegen.learn import CATALOG, CARTClassifier, CHAIDRegressor

N = 240


def frame(seed=0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    color = rng.choice(["red", "green", "blue"], N)
    city = rng.choice(["Oslo", "Lima", "Pune", "Kyiv"], N).astype(object)
    city[::9] = None
    city[4::9] = np.nan
    word = pd.array(rng.choice(["a", "b"], N), dtype="string")
    word[::11] = pd.NA
    x = rng.standard_normal(N)
    x[::7] = np.nan
    n = pd.array(rng.integers(0, 5, N), dtype="Int64")
    n[::13] = pd.NA
    df = pd.DataFrame({
        "color": pd.Categorical(color, categories=["red", "green", "blue"]),
        "city": city, "word": word, "flag": rng.random(N) < 0.5, "x": x, "n": n})
    y = np.where((color == "blue") ^ (city == "Lima") ^ df["flag"].to_numpy(), "yes", "no")
    return df, y


def test_each_dtype_becomes_the_right_feature():
    df, y = frame()
    est = CARTClassifier(random_state=0).fit(df, y)
    kinds = {f.name: (f.kind, f.categories) for f in est.model_.features}
    assert kinds["color"] == ("categorical", ("red", "green", "blue"))  # the dtype's order
    assert kinds["city"] == ("categorical", ("Kyiv", "Lima", "Oslo", "Pune"))  # sorted, as CSV
    assert kinds["word"] == ("categorical", ("a", "b"))
    assert kinds["flag"][0] == kinds["x"][0] == kinds["n"][0] == "numeric"
    # the model's input by hand: codes of the labels, NaN for every kind of missing
    codes = lambda col, labels: np.array([labels.index(v) if isinstance(v, str) else np.nan
                                          for v in col], dtype=float)
    X = np.column_stack([
        df["color"].cat.codes.to_numpy().astype(float),
        codes(df["city"], ["Kyiv", "Lima", "Oslo", "Pune"]),
        codes(df["word"].astype(object).where(df["word"].notna(), None), ["a", "b"]),
        df["flag"].to_numpy(float), df["x"].to_numpy(), df["n"].to_numpy(float, na_value=np.nan)])
    assert np.isnan(X[:, 1]).sum() == 2 * len(range(0, N, 9)) and np.isnan(X[:, 5]).any()
    assert np.array_equal(est.predict_proba(df), evaluate.predict_proba(est.model_, X))
    assert est.score(df, y) == 1.0  # the rule is in the columns: the tree finds it


def test_a_frame_fits_as_the_same_table_read_from_csv():
    df, y = frame(1)
    df = df.drop(columns="color").assign(flag=df["flag"].astype(int))
    from_frame = CHAIDRegressor().fit(df, (y == "yes") * 1.0).model_
    csv = df.astype(object).where(df.notna(), None).to_csv(index=False, na_rep="")
    table = parse_csv(csv)
    X, names, cats = design_matrix(table, range(len(table.columns)))
    from_csv = CHAIDRegressor().fit(X, (y == "yes") * 1.0, feature_names=names,
                                    categorical_features=sorted(cats), categories=cats).model_
    assert from_frame.features == from_csv.features and from_frame.trees == from_csv.trees


def test_nullable_numbers_alone_are_numbers_with_missing_values():
    rng = np.random.default_rng(6)
    n = pd.array(rng.integers(0, 9, N), dtype="Int64")
    b = pd.array(rng.random(N) < 0.5, dtype="boolean")
    n[::5], b[::7] = pd.NA, pd.NA
    df = pd.DataFrame({"n": n, "b": b})
    y = np.where(df["n"].fillna(0).to_numpy(int) > 4, 1.0, 0.0)
    est = CHAIDRegressor().fit(df, y)
    assert [f.kind for f in est.model_.features] == ["numeric", "numeric"]
    X = np.column_stack([df["n"].to_numpy(float, na_value=np.nan),
                         df["b"].to_numpy(float, na_value=np.nan)])
    assert np.isnan(X).sum() == len(range(0, N, 5)) + len(range(0, N, 7))
    assert np.array_equal(est.predict(df), evaluate.predict_value(est.model_, X)[:, 0])
    assert est.model_ == CHAIDRegressor().fit(X, y, feature_names=["n", "b"]).model_


@pytest.mark.parametrize("missing", [None, np.nan, pd.NA])
def test_every_kind_of_missing_is_missing(missing):
    df, y = frame(2)
    want = CARTClassifier(random_state=0).fit(df.assign(city=df["city"].where(
        df["city"].notna(), None)), y).model_
    got = CARTClassifier(random_state=0).fit(df.assign(city=df["city"].where(
        df["city"].notna(), missing)), y).model_
    assert got == want


def test_predict_reads_labels_by_name_and_routes_unseen_ones():
    df, y = frame(3)
    est = CARTClassifier(random_state=0).fit(df, y)
    later = df[list(reversed(df.columns))].copy()
    later["city"] = later["city"].where(later.index % 5 != 0, "Quito")  # not seen in fit
    got = est.predict_proba(later)
    X = est._rows(df)
    X[::5, 1] = -1  # the evaluator's code for an unseen label
    assert np.array_equal(got, evaluate.predict_proba(est.model_, X))


def test_a_stray_word_in_a_column_of_numbers_is_refused_naming_the_row():
    df = pd.DataFrame({"x": [1.0, 2.0, "two", 4.0, 5.0], "c": list("ababa")})
    with pytest.raises(ValueError, match=r"DataFrame row 2: column 'x': 'two' is not a number"):
        CARTClassifier().fit(df, [0, 1, 0, 1, 0])


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_every_learner_takes_text_and_category_columns(name):
    df, y = frame(4)
    if name == "id3":  # categorical features only
        df = df[["color", "city", "word"]]
    task = "classification" if CATALOG[name].classifier else "regression"
    params = {"n_estimators": 5} if "n_estimators" in \
        CATALOG[name].estimator_class(task)().get_params() else {}
    est = CATALOG[name].estimator_class(task)(**params).fit(df, y)
    assert est.model_.features[0].categories == ("red", "green", "blue")
    assert list(est.predict(df)) == list(est.classes_[evaluate.predict_class_index(
        est.model_, est._rows(df))])
