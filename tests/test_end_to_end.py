"""Learner to every target: models fitted by CART (with missing values, float32 thresholds and
adversarial names) compile to Python, C and SQL and predict exactly what the evaluator does."""

from __future__ import annotations

import irfixtures
import numpy as np
import pytest
from run_c import have_cc, run_c
from run_python import run_python
from sklearn.datasets import load_breast_cancer, load_diabetes

import rulegen
from rulegen.ir import evaluate
from rulegen.ir.serialize import dumps, loads
from rulegen.learn import CARTClassifier, CARTRegressor

NAMES = list(irfixtures.ADVERSARIAL_NAMES)


def _with_missing(X: np.ndarray, seed: int, rate: float = 0.08) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = X.copy()
    X[rng.random(X.shape) < rate] = np.nan
    return X


@pytest.fixture(scope="module")
def fitted() -> dict:
    bc = load_breast_cancer()
    Xc = _with_missing(bc.data[:, :7], 0)
    yc = np.where(bc.target == 1, "it's \"ok\"", "*/ bad")
    clf = CARTClassifier(max_depth=8, random_state=0).fit(Xc, yc, feature_names=NAMES)
    db = load_diabetes()
    Xr = _with_missing(db.data[:, :7], 1)
    reg = CARTRegressor(min_samples_leaf=3, random_state=0).fit(Xr, db.target,
                                                                        feature_names=NAMES)
    models = {"classifier": clf.model_, "regressor": reg.model_}
    # the models also survive a trip through JSON unchanged
    for m in models.values():
        assert loads(dumps(m)) == m
    return {"models": models, "rows": {"classifier": Xc, "regressor": Xr}}


def _probe(model, train: np.ndarray) -> np.ndarray:
    return np.vstack([train, irfixtures.probe_rows(model, n_random=100)])


def _expected(model, X):
    raw = evaluate.raw_scores(model, X)
    out = evaluate.predict_outputs(model, X)
    if model.target.task == "classification":
        out = evaluate.predict_proba(model, X)
    return raw, out


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_python_target_exact(fitted, kind):
    model = fitted["models"][kind]
    X = _probe(model, fitted["rows"][kind])
    raw, out = _expected(model, X)
    res = run_python(model, irfixtures.labels_for(model, X))
    assert np.array_equal(res.raw, raw, equal_nan=True)
    assert np.array_equal(res.outputs, out, equal_nan=True)


@pytest.mark.skipif(not have_cc(), reason="no C compiler on PATH")
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_c_target_exact(fitted, kind):
    model = fitted["models"][kind]
    X = _probe(model, fitted["rows"][kind])
    raw, out = _expected(model, X)
    res = run_c(rulegen.generate(model, "c", name="e2e"), "e2e", X, opt="-O2")
    assert np.array_equal(res["raw"], raw, equal_nan=True)
    assert np.array_equal(res["out"], out, equal_nan=True)
    if kind == "classifier":
        assert np.array_equal(res["class"], evaluate.predict_class_index(model, X))
        assert res["classes"] == list(model.target.classes)
    assert res["feature_names"] == NAMES


def test_learner_output_uses_float32_tests_like_sklearn(fitted):
    """CART thresholds compare in float32 as scikit-learn does, so the targets' lowering of
    float32 tests is exercised by real learner output, not only by hand-written IR."""
    tests = [n.test for n in fitted["models"]["classifier"].trees[0].nodes if hasattr(n, "test")]
    assert tests and all(t.dtype == "float32" for t in tests)
