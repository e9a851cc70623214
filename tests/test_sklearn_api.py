"""rulegen's estimators as scikit-learn citizens: every learner of the catalog through
scikit-learn's own ``check_estimator`` suite, and the tools people use them with (clone,
Pipeline, GridSearchCV, cross_val_score)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rulegen.learn.catalog import CATALOG

# the checks fit many times: few, shallow trees keep the module fast
_SMALL = {"n_estimators": 5}
# LightGBM itself scores R^2 0.49991 after 5 rounds on check_regressors_train's data, under
# its 0.5 bar; lightgbm_style is LightGBM's model there, so it gets 10 rounds
_ROUNDS = {"lightgbm_style": {"n_estimators": 10}}


def _instances():
    out = []
    for info in CATALOG.values():
        for task in info.tasks:
            cls = info.estimator_class(task)
            small = _ROUNDS.get(info.name, _SMALL)
            params = {k: v for k, v in small.items() if k in cls().get_params()}
            out.append(cls(**params))
    return out


ESTIMATORS = _instances()

# scikit-learn declares the same expected failure for its own forests, AdaBoost and
# gradient boosting (sklearn/utils/_test_common/instance_generator.py)
_BOOTSTRAP = {"check_sample_weight_equivalence_on_dense_data":
              "each tree's bootstrap sample draws rows by position, so a repeated row is not "
              "drawn as a weighted one is"}
_ROUNDING = {"check_sample_weight_equivalence_on_dense_data":
             "weighted sums and sums over repeated rows round differently; on the check's 15 "
             "rows of 30 random features many splits tie to the last bit, so a later round "
             "can pick another split (one round agrees to 1e-16)"}
_EXPECTED = {
    "RandomForestClassifier": _BOOTSTRAP, "RandomForestRegressor": _BOOTSTRAP,
    "AdaBoostClassifier": _ROUNDING, "GradientBoostingClassifier": _ROUNDING,
    "XGBoostStyleClassifier": _ROUNDING, "XGBoostStyleRegressor": _ROUNDING,
    # ID3 splits category codes only; its tag (input_tags.categorical) makes most checks give
    # it codes, but these three feed it continuous or negative values regardless
    "ID3Classifier": {
        "check_positive_only_tag_during_fit": "ID3 takes category codes (whole numbers >= 0); "
                                              "the check feeds negative fractions",
        "check_sample_weight_equivalence_on_dense_data": "ID3 takes category codes; the check "
                                                         "feeds uniform random numbers",
        "check_classifiers_one_label_sample_weights": "ID3 takes category codes; the check "
                                                      "feeds uniform random numbers",
    },
}


def expected_failures(est) -> dict[str, str]:
    return _EXPECTED.get(type(est).__name__, {})


def test_every_catalog_estimator_is_checked():
    names = {type(e).__name__ for e in ESTIMATORS}
    assert len(names) == len(ESTIMATORS) == sum(len(i.tasks) for i in CATALOG.values())
    assert set(_EXPECTED) <= names


def _checks():
    """parametrize_with_checks' cases, less check_array_api_input where scikit-learn would only
    skip it (SCIPY_ARRAY_API unset when scipy loaded): the test after this one runs those
    checks in a process that sets it, and under CI a skip counts as a failure."""
    import os

    marks = parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failures)
    names, cases = marks.args
    ids = [_check_id(c) for c in cases]
    keep = [(c, i) for c, i in zip(cases, ids)
            if os.environ.get("SCIPY_ARRAY_API") == "1" or "check_array_api_input" not in i]
    return pytest.mark.parametrize(names, [c for c, _ in keep], ids=[i for _, i in keep])


def _check_id(case) -> str:
    from sklearn.utils.estimator_checks import _get_check_estimator_ids

    est, check = case.values if hasattr(case, "values") else case
    return f"{_get_check_estimator_ids(est)}-{_get_check_estimator_ids(check)}"


@_checks()
def test_sklearn_check(estimator, check):
    check(estimator)


def test_array_api_checks_pass_with_dispatch_enabled():
    """scikit-learn skips check_array_api_input unless SCIPY_ARRAY_API=1 was set before scipy
    loaded; a fresh process with it set runs those checks, so the skips above hide nothing."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          __file__, "-k", "check_array_api_input"],
                         env={**os.environ, "SCIPY_ARRAY_API": "1"}, cwd=root,
                         capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-3000:]
    assert f"{len(ESTIMATORS)} passed" in run.stdout and "skipped" not in run.stdout


# --- scikit-learn's tools -----------------------------------------------------------------

def _data():
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :8].copy()
    X[::7, 2] = np.nan  # rulegen learns where missing values go; the tools pass NaN through
    return X, y


def test_clone_copies_parameters_not_the_fit():
    from sklearn.base import clone

    from rulegen.learn import GradientBoostingClassifier
    X, y = _data()
    est = GradientBoostingClassifier(n_estimators=7, max_depth=2, random_state=3).fit(X, y)
    copy = clone(est)
    assert copy is not est and copy.get_params() == est.get_params()
    assert not hasattr(copy, "model_") and not hasattr(copy, "n_features_in_")
    assert np.array_equal(copy.fit(X, y).predict_proba(X), est.predict_proba(X))


def test_pipeline_fits_and_predicts_as_the_steps_by_hand():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from rulegen.learn import CARTRegressor
    X, y = _data()
    target = X[:, 0] * 2.0 + y  # a regression target
    Xr = X[:, 1:]
    pipe = make_pipeline(StandardScaler(), CARTRegressor(max_depth=4, random_state=0))
    pipe.fit(Xr, target)
    scaled = StandardScaler().fit(Xr).transform(Xr)  # NaN passes through the scaler
    by_hand = CARTRegressor(max_depth=4, random_state=0).fit(scaled, target)
    assert np.array_equal(pipe.predict(Xr), by_hand.predict(scaled))
    assert pipe.score(Xr, target) == by_hand.score(scaled, target) > 0.5


def test_grid_search_picks_by_cv_and_refits_as_a_manual_fit():
    from sklearn.model_selection import GridSearchCV

    from rulegen.learn import CARTClassifier
    X, y = _data()
    grid = {"max_depth": [1, 3, 8], "criterion": ["gini", "entropy"]}
    search = GridSearchCV(CARTClassifier(random_state=0), grid, cv=4).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    best = search.cv_results_["params"][int(np.argmax(scores))]
    assert search.best_params_ == best and len(set(np.round(scores, 12))) > 1
    manual = CARTClassifier(random_state=0, **best).fit(X, y)
    assert np.array_equal(search.predict_proba(X), manual.predict_proba(X))
    assert search.best_estimator_.model_ == manual.model_


def test_grid_search_scores_an_invalid_parameter_as_a_failed_fit():
    from sklearn.exceptions import FitFailedWarning
    from sklearn.model_selection import GridSearchCV

    from rulegen.learn import CARTClassifier
    X, y = _data()
    search = GridSearchCV(CARTClassifier(), {"max_depth": [0, 2]}, cv=3)
    with pytest.warns(FitFailedWarning, match="max_depth=0 is invalid"):
        search.fit(X, y)  # LearnerError is a ValueError: scored NaN, not a crash
    assert np.isnan(search.cv_results_["mean_test_score"][0])
    assert search.best_params_ == {"max_depth": 2}


def test_cross_val_score_is_the_score_of_each_stratified_fold():
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from rulegen.learn import CHAIDClassifier
    X, y = _data()
    est = CHAIDClassifier(max_depth=3)
    got = cross_val_score(est, X, y, cv=5)  # a classifier: stratified folds, accuracy
    want = [CHAIDClassifier(max_depth=3).fit(X[tr], y[tr]).score(X[te], y[te])
            for tr, te in StratifiedKFold(5).split(X, y)]
    assert np.array_equal(got, want) and 0.8 < got.mean() < 1.0


def test_dataframe_names_in_scikit_learn_form():
    import pandas as pd  # a test dependency: fail, never skip

    from rulegen.learn import CARTClassifier
    X, y = _data()
    df = pd.DataFrame(X[:, :3], columns=["a", "b", "c"])
    est = CARTClassifier(max_depth=3).fit(df, y)
    assert est.feature_names_in_.dtype == object and list(est.feature_names_in_) == ["a", "b", "c"]
    assert [f.name for f in est.model_.features] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="(?s)should match those that were passed during fit.*"
                                         "unseen at fit time:\n- z\n"):
        est.predict(df.rename(columns={"b": "z"}))
    # names that look like the defaults are names all the same
    x_named = CARTClassifier(max_depth=3).fit(df.set_axis(["x0", "x1", "x2"], axis=1), y)
    assert list(x_named.feature_names_in_) == ["x0", "x1", "x2"]
    # fitted on an array (or integer-labelled columns): no names, X read by position
    plain = CARTClassifier(max_depth=3).fit(pd.DataFrame(X[:, :3]), y)
    assert not hasattr(plain, "feature_names_in_") and plain.n_features_in_ == 3
    assert np.array_equal(plain.predict(df), est.predict(df))
    with pytest.raises(ValueError, match="X has 2 features, but CARTClassifier is "
                                         "expecting 3 features as input"):
        plain.predict(X[:, :2])


# --- one public name per learner ------------------------------------------------------------

def test_python_names_are_the_command_line_names():
    """``--algorithm xgboost_style`` is XGBoostStyleClassifier / XGBoostStyleRegressor: the
    class name less its task suffix is the CLI name without underscores, and every class is
    exported by rulegen.learn."""
    from rulegen import learn
    seen = set()
    for name, info in CATALOG.items():
        for task in info.tasks:
            cls = info.estimator_class(task)
            suffix = "Classifier" if task == "classification" else "Regressor"
            assert cls.__name__.endswith(suffix)
            assert cls.__name__[:-len(suffix)].lower() == name.replace("_", ""), cls.__name__
            assert getattr(learn, cls.__name__) is cls and cls.__name__ in learn.__all__
            seen.add(cls.__name__)
    assert set(learn.__all__) == seen | {"CATALOG"}


@pytest.mark.parametrize("old,new", [("DecisionTreeClassifier", "CARTClassifier"),
                                     ("DecisionTreeRegressor", "CARTRegressor"),
                                     ("NewtonBoostingClassifier", "XGBoostStyleClassifier"),
                                     ("NewtonBoostingRegressor", "XGBoostStyleRegressor")])
def test_old_names_still_work_with_a_deprecation_warning(old, new):
    import importlib

    from rulegen import learn
    module = importlib.import_module(getattr(learn, new).__module__)
    for where in (learn, module):
        with pytest.warns(DeprecationWarning, match=f"{old} is deprecated: use {new}"):
            assert getattr(where, old) is getattr(learn, new)
