"""Sample weights at and beyond the range every learner computes with (base.WEIGHT_RANGE)."""
import inspect

import numpy as np
import pytest

import rulegen.learn as learn
from rulegen.errors import LearnerError
from rulegen.learn.base import WEIGHT_RANGE

_WEIGHTED = sorted(name for name in dir(learn)
                   if name[0].isupper() and name != "CATALOG"
                   and "sample_weight" in inspect.signature(getattr(learn, name).fit).parameters)


def _data(name):
    rng = np.random.default_rng(0)
    if name.startswith("ID3"):  # categorical codes only
        X = rng.integers(0, 3, size=(60, 3)).astype(float)
        return X, (X[:, 0] > 0).astype(int), {"categorical_features": [0, 1, 2]}
    X = rng.normal(size=(60, 3))
    y = X[:, 1] * 1e3 if name.endswith("Regressor") else (X[:, 0] > 0).astype(int)
    return X, y, {}


def test_every_weighted_learner_is_covered():
    assert len(_WEIGHTED) >= 14, _WEIGHTED


_RANGED = [n for n in _WEIGHTED if getattr(learn, n)._weight_range is not None]


def test_only_c45_takes_any_finite_weight():
    assert set(_WEIGHTED) - set(_RANGED) == {"C45Classifier"}
    X, y, _ = _data("C45Classifier")
    w = np.where(np.arange(len(y)) % 2, 1e-300, 1e300)
    assert np.isfinite(learn.C45Classifier().fit(X, y, sample_weight=w).predict_proba(X)).all()


@pytest.mark.parametrize("name", _RANGED)
@pytest.mark.parametrize("bad", [1e-300, 5e-324, 1e300, WEIGHT_RANGE[1] * 2])
def test_weights_out_of_range_are_refused_naming_the_row(name, bad):
    X, y, kw = _data(name)
    w = np.ones(len(y))
    w[7] = bad
    # Before the check, 1e-300 divided by zero in gini and 1e300 made a NaN impurity.
    with pytest.raises(LearnerError, match=r"^sample_weight\[7\] is .*between 1e-30 and 1e\+30"):
        getattr(learn, name)().fit(X, y, sample_weight=w, **kw)


@pytest.mark.parametrize("name", _WEIGHTED)
@pytest.mark.parametrize("scale", WEIGHT_RANGE)
def test_weights_at_the_range_ends_fit_finite_models(name, scale):
    X, y, kw = _data(name)
    for w in (np.full(len(y), scale), np.where(np.arange(len(y)) % 7 == 0, 1.0, scale)):
        est = getattr(learn, name)().fit(X, y, sample_weight=w, **kw)
        assert np.isfinite(np.asarray(est.predict(X), dtype=float)).all()


# Entropy skips empty classes, so there the side scores 0, as in scikit-learn.
@pytest.mark.parametrize("criterion", ["gini", "squared_error", "absolute_error"])
def test_a_side_whose_weight_vanishes_in_the_total_never_scores(criterion):
    from rulegen.learn.splits.criteria import CRITERIA
    crit = CRITERIA[criterion](2) if criterion == "gini" else CRITERIA[criterion](1)
    T = np.array([0, 1, 1]) if criterion == "gini" else np.array([[0.0], [1.0], [5.0]])
    w = np.array([1.0, 1.0, 1e-30])
    # "first two rows left": the right side's weight is 2 + 1e-30 - 2 == 0, its impurity 0/0
    wl, wr, proxy = crit.prefix_proxy(T, w, np.array([[0, 1, 2]]))
    assert wr[0, 1] == 0.0 and proxy[0, 1] == -np.inf
    assert np.isfinite(proxy[0, 0])


@pytest.mark.parametrize("name", [n for n in _WEIGHTED if n.endswith("Regressor")])
def test_regression_targets_beyond_the_limit_are_refused(name):
    from rulegen.learn.base import TARGET_LIMIT
    from rulegen.learn.ensembles.lgbm_losses import F32_TARGET_LIMIT
    # LightGBM keeps targets and gradients in float32: its limit is float32's
    limit = F32_TARGET_LIMIT if name.startswith("LightGBM") else TARGET_LIMIT
    X, y, _ = _data(name)
    y = np.where(X[:, 0] > 0, 1.0, -1.0) * limit
    est = getattr(learn, name)().fit(X, y)  # at the limit: a finite model
    assert np.isfinite(est.predict(X)).all()
    y[3] = -2 * limit
    with pytest.raises(LearnerError, match=rf"^y\[3\] is -2e\+{int(np.log10(limit))}: "):
        getattr(learn, name)().fit(X, y)
    if name.startswith("LightGBM"):  # the weight counts: (f - y) * w is a float32 too
        y[3] = limit
        w = np.ones(len(y))
        w[5] = 2.0
        with pytest.raises(LearnerError, match=r"times the largest weight"):
            getattr(learn, name)().fit(X, y, sample_weight=w)


def test_a_bootstrap_of_zero_weight_rows_draws_again():
    # scikit-learn's one-label check: half the rows weigh 0; seed 162 draws tree 0's first
    # sample from those alone (about 1 fit in 300), which failed the fit at random before
    X = np.random.default_rng(0).uniform(size=(10, 10))
    y = np.arange(10) % 2
    w = y.astype(float)
    est = learn.RandomForestClassifier(5, random_state=162).fit(X, y, sample_weight=w)
    assert est._draws == {0: 2}
    assert (est.predict(X) == 1).all()
    for i in range(5):  # the counts reported are the ones each tree grew from
        counts = est.sample_counts(i)
        assert (w * counts > 0).any()
        assert est.model_.trees[i].nodes[0].samples == float((w * counts).sum())
    again = learn.RandomForestClassifier(5, random_state=162, n_jobs=2).fit(X, y, sample_weight=w)
    assert again.model_ == est.model_
    # one weighted row among 10,000 and samples of one row: every draw misses it
    Xb = np.zeros((10_000, 1))
    wb = np.zeros(10_000)
    wb[0] = 1.0
    with pytest.raises(LearnerError, match="100 bootstrap samples of tree 0 held only rows"):
        learn.RandomForestClassifier(1, max_samples=1, random_state=0).fit(
            Xb, np.arange(10_000) % 2, sample_weight=wb)
