"""lightgbm_style's n_jobs (issue 20): the trees of one round's classes grow on threads,
each in its own grower buffers, and come back in class order. The model must be the same,
byte for byte, whatever n_jobs is. Also the softmax's exps, which a round's training loss
hands on to the next round's gradients."""

from __future__ import annotations

import numpy as np
import pytest

from rulegen.cli import main
from rulegen.errors import LearnerError
from rulegen.ir.serialize import dumps
from rulegen.learn import threads
from rulegen.learn.compiled import lgbm_kernels
from rulegen.learn.ensembles.lgbm import LightGBMStyleClassifier, LightGBMStyleRegressor
from rulegen.learn.ensembles.lgbm_losses import LgbSoftmaxLoss

pytest.importorskip("numba")  # the threads run the compiled grower (numpy: one thread)
pytestmark = pytest.mark.usefixtures("kernels_compiled")


@pytest.fixture
def slots(monkeypatch):
    """Every fit's rounds threaded however small the data (the size threshold off), and the
    set of buffer slots that grew a tree."""
    monkeypatch.setattr(threads, "MIN_CELLS", 1)
    seen = set()
    run = lgbm_kernels.TreeGrower.run

    def counted(self, job, slot):
        seen.add(slot)
        return run(self, job, slot)

    monkeypatch.setattr(lgbm_kernels.TreeGrower, "run", counted)
    return seen


def _case(seed):
    """A random multiclass data set and parameters: NaN, weights (some zero), a categorical
    feature, row and column sampling, early stopping."""
    rng = np.random.default_rng(seed)
    n, p, k = int(rng.integers(150, 600)), int(rng.integers(1, 7)), int(rng.integers(3, 8))
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, p)) + 0.4 * y[:, None]
    if rng.random() < 0.6:
        X[rng.random((n, p)) < rng.uniform(0.02, 0.3)] = np.nan
    fit = {}
    if p > 1 and rng.random() < 0.4:
        X[:, 1] = np.where(np.isnan(X[:, 1]), np.nan, (y + rng.integers(0, 3, n)) % 6)
        fit["categorical_features"] = [1]
    if rng.random() < 0.5:
        fit["sample_weight"] = rng.exponential(size=n) * (rng.random(n) > 0.1)
    kw = {"n_estimators": int(rng.integers(1, 6)), "num_leaves": int(rng.integers(2, 12)),
          "min_child_samples": int(rng.integers(1, 20)), "random_state": seed}
    if rng.random() < 0.5:
        kw.update(colsample_bytree=float(rng.uniform(0.3, 1)), subsample=float(rng.uniform(0.5, 1)))
    if rng.random() < 0.3:
        kw.update(early_stopping_rounds=2, validation_fraction=0.2)
    return kw, X, y, fit


def _fitted(kw, X, y, fit, **more):
    est = LightGBMStyleClassifier(**kw, **more).fit(X, y, **fit)
    raw = None if est.train_raw_ is None else est.train_raw_.tobytes()
    return dumps(est.model_), list(est.train_score_), raw


@pytest.mark.parametrize("start", range(0, 40, 10))
def test_same_model_whatever_n_jobs(slots, start):
    for seed in range(start, start + 10):
        kw, X, y, fit = _case(seed)
        ref = _fitted(kw, X, y, fit)
        slots.clear()
        for n_jobs in (2, 3, -1):
            assert _fitted(kw, X, y, fit, n_jobs=n_jobs) == ref, (seed, kw, n_jobs)
        assert slots >= {0, 1}, seed  # the trees really grew on more than one slot


def test_trees_the_compiled_grower_leaves_to_the_builder(slots, monkeypatch):
    """A tree whose histograms would take too much memory grows in Python (the builder),
    in its class's turn among the threaded ones."""
    kw, X, y, fit = _case(4)
    ref = _fitted(kw, X, y, fit)
    monkeypatch.setattr(lgbm_kernels, "POOL_LIMIT", 0)
    slots.clear()
    assert _fitted(kw, X, y, fit, n_jobs=2) == ref
    assert not slots


def test_one_tree_a_round_takes_n_jobs():
    """Binary and regression grow one tree a round: n_jobs is accepted, nothing changes."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    z = X[:, 0] + rng.normal(size=300)
    for est, target in ((LightGBMStyleClassifier, z > 0), (LightGBMStyleRegressor, z)):
        a = est(n_estimators=3, n_jobs=2).fit(X, target)
        b = est(n_estimators=3).fit(X, target)
        assert dumps(a.model_) == dumps(b.model_)
        assert "n_jobs" not in dict(a.model_.provenance.params)


def test_numpy_path_takes_n_jobs(numpy_only):
    kw, X, y, fit = _case(2)
    compiled = _fitted(kw, X, y, fit)
    numpy_only()
    assert _fitted(kw, X, y, fit, n_jobs=2)[0] == compiled[0]


@pytest.mark.parametrize("n_jobs", [0, 1.5, "2", True])
def test_bad_n_jobs(n_jobs):
    with pytest.raises(LearnerError, match="n_jobs"):
        LightGBMStyleClassifier(n_estimators=2, n_jobs=n_jobs).fit([[0.0], [1.0]], [0, 1])


def test_cli_n_jobs(tmp_path, capsys):
    rng = np.random.default_rng(0)
    data = tmp_path / "d.csv"
    X = rng.normal(size=(300, 2))
    rows = "".join(f"{a},{b},{int(a > 0) + int(b > 0)}\n" for a, b in X)
    data.write_text("a,b,y\n" + rows)
    outs = []
    for n_jobs in ("1", "2"):
        out = tmp_path / f"m{n_jobs}.json"
        code = main(["fit", str(data), "--target", "y", "--algorithm", "lightgbm_style",
                     "--param", "n_estimators=3", "--param", f"n_jobs={n_jobs}",
                     "-o", str(out)])
        assert code == 0, capsys.readouterr().err
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


# --- the exps a round's training loss hands on ------------------------------------------


def test_kept_exps_give_the_same_model(monkeypatch):
    """round_value keeps the exps of the training scores for the next round's gradients:
    the same model as when every round computes them again, and nothing kept after."""
    rng = np.random.default_rng(7)
    y = rng.integers(0, 12, 900)
    X = rng.normal(size=(900, 5)) + 0.2 * y[:, None]
    kw = {"n_estimators": 6, "num_leaves": 7, "random_state": 0, "subsample": 0.8}
    taken = []
    take = LgbSoftmaxLoss._take_exps

    def counted(self, F):
        taken.append(self._kept is not None and self._kept[0] is F)
        return take(self, F)

    monkeypatch.setattr(LgbSoftmaxLoss, "_take_exps", counted)
    est = LightGBMStyleClassifier(**kw).fit(X, y)
    assert taken == [False] + [True] * 5  # every round but the first took the kept exps
    assert est.loss_._kept is None and est.loss_._spare is None
    monkeypatch.setattr(LgbSoftmaxLoss, "round_value", LgbSoftmaxLoss.value)
    again = LightGBMStyleClassifier(**kw).fit(X, y)
    assert dumps(again.model_) == dumps(est.model_)
    assert list(again.train_score_) == list(est.train_score_)


def test_exps_of_other_scores_are_not_taken():
    loss = LgbSoftmaxLoss(3)
    F = np.array([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]])
    Y = np.eye(3)[[2, 0]]
    loss.round_value(Y, F, np.ones(2))
    G = F + 1.0
    assert np.array_equal(loss._take_exps(G), loss.exps(G))  # not F's
    assert loss._kept is None
    loss.round_value(Y, F, np.ones(2))
    loss.end_rounds()
    assert loss._kept is None


@pytest.mark.parametrize("k", [3, 8, 30])
def test_softmax_value_is_the_log_loss(k):
    """The value from the kept exps (class-order sums) is the mean log-loss to rounding."""
    rng = np.random.default_rng(k)
    F = rng.normal(size=(50, k)) * 3
    Y = np.eye(k)[rng.integers(0, k, 50)]
    w = rng.random(50)
    p = np.exp(F) / np.exp(F).sum(axis=1, keepdims=True)
    want = np.average(-np.log((p * Y).sum(axis=1)), weights=w)
    assert LgbSoftmaxLoss(k).value(Y, F, w) == pytest.approx(want, rel=1e-13)
