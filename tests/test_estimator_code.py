"""From a fitted estimator to code in one call: ``to_code`` returns what ``rulegen.generate``
returns for its model, and that code predicts as the estimator does (C built with the strict
flags, Python imported, SQL run in SQLite); ``to_rules`` parses back to the model."""

from __future__ import annotations

import numpy as np
import pandas as pd  # a test dependency: fail, never skip
import pytest
from irfixtures import labels_for
from run_c import STRICT, have_cc, run_c
from run_python import import_source, run_module
from run_sql import run_sql

import rulegen
from rulegen.dsl import parse
from rulegen.learn import CARTClassifier, GradientBoostingRegressor


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(5)
    n = 300
    df = pd.DataFrame({"size": rng.standard_normal(n),
                       "kind": rng.choice(["ash", "oak", "elm"], n).astype(object),
                       "age": rng.integers(0, 90, n).astype(float)})
    df.loc[::6, "size"] = np.nan
    df.loc[3::10, "kind"] = None
    y = np.where((df["kind"] == "oak") | (df["size"] > 0.5), "tall", "short")
    clf = CARTClassifier(max_depth=5, random_state=0).fit(df, y)
    reg = GradientBoostingRegressor(n_estimators=8, random_state=0).fit(df, df["age"] / 9.0)
    return df, clf, reg


def test_to_code_is_generate_of_the_model(fitted):
    _, clf, _ = fitted
    for target, opts in (("c", {}), ("python", {}), ("sql", {"dialect": "duckdb"})):
        assert clf.to_code(target, name="trees", **opts) == \
            rulegen.generate(clf.model_, target, name="trees", **opts)


def test_c_compiles_strictly_and_predicts_as_the_estimator(fitted):
    assert have_cc(), "a C compiler is part of the test environment"
    df, clf, reg = fitted
    files = clf.to_code("c", name="trees")
    assert set(files) == {"trees.h", "trees.c"}
    res = run_c(files, "trees", clf._rows(df), cflags=STRICT)
    assert np.array_equal(clf.classes_[res["class"]], clf.predict(df))
    assert np.array_equal(res["out"], clf.predict_proba(df))
    res = run_c(reg.to_code("c", name="boost"), "boost", reg._rows(df), cflags=STRICT)
    assert np.array_equal(res["out"][:, 0], reg.predict(df))


def test_python_runs_and_predicts_as_the_estimator(fitted, tmp_path):
    df, clf, _ = fitted
    module = import_source(clf.to_code("python", name="trees"), tmp_path)
    got = run_module(module, labels_for(clf.model_, clf._rows(df)))
    assert list(got.predictions) == list(clf.predict(df))
    assert np.array_equal(got.outputs, clf.predict_proba(df))


def test_sql_runs_and_predicts_as_the_estimator(fitted):
    df, clf, _ = fitted
    sql = clf.to_code("sql", name="trees", dialect="sqlite")["trees.sql"]
    res = run_sql(sql, clf.model_, labels_for(clf.model_, clf._rows(df)), "sqlite")
    assert list(res.column("prediction")) == list(clf.predict(df))


def test_to_rules_parses_back_to_the_model(fitted):
    _, clf, reg = fitted
    for est in (clf, reg):
        text = est.to_rules()
        assert text.startswith("rulegen rules") and parse(text) == est.model_
    assert "IF" in clf.to_rules(flat=True)


def test_unfitted_estimator_says_so():
    with pytest.raises(ValueError, match="not fitted"):
        CARTClassifier().to_code("c")
