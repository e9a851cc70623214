"""The forest's compiled grower builds the IR in bulk from the kernel's arrays, checks those
arrays at once (forest._plain_arrays) and has validate skip the per-node checks of those
trees: the models must be the ones the full validation accepts, and what it refuses (a
non-finite impurity, a broken tree) must still be refused."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from rulegen.errors import IRValidationError, LearnerError
from rulegen.ir import validate as validation
from rulegen.ir.nodes import Leaf, Split
from rulegen.learn.compiled import cart_kernels
from rulegen.learn.ensembles import forest
from rulegen.learn.ensembles.forest import RandomForestClassifier, RandomForestRegressor


@pytest.fixture(autouse=True)
def _always_compiled(monkeypatch):
    monkeypatch.setattr(forest, "MIN_COMPILED_WORK", 0)


def spy(monkeypatch):
    """The ``plain`` argument of every validate call the learners make."""
    from rulegen.learn import base

    seen = []
    real = validation.validate

    def recording(model, plain=None):
        seen.append(plain)
        return real(model, plain)

    monkeypatch.setattr(base, "validate", recording)
    return seen


def data(seed, n=240):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 1] = np.round(X[:, 1])
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, np.nan_to_num(X[:, 0]) + rng.normal(size=n) * 0.5


@pytest.mark.parametrize("cls,target", [(RandomForestClassifier, "class"),
                                        (RandomForestRegressor, "value")])
def test_plain_trees_pass_the_full_check(monkeypatch, cls, target):
    """Every compiled tree is vouched for, and the per-node check accepts each of them."""
    X, y = data(1)
    if target == "class":
        y = np.digitize(y, [-0.5, 0.5])
    seen = spy(monkeypatch)
    model = cls(n_estimators=5, random_state=0).fit(X, y).model_
    assert seen and sorted(seen[-1]) == list(range(5))
    for i, (width, feats) in seen[-1].items():
        assert width == model.n_raw and feats
        assert feats == {n.test.feature for n in model.trees[i].nodes if isinstance(n, Split)}
    assert validation.validate(model) is model  # no plain: every node checked


def test_numpy_trees_are_checked_node_by_node(monkeypatch):
    X, y = data(2)
    seen = spy(monkeypatch)
    monkeypatch.setattr(cart_kernels, "USE", False)
    RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    assert seen[-1] == {}


def test_targets_whose_sums_overflow_are_refused_before_growing(monkeypatch):
    """Targets whose squared sums overflow made NaN impurities that only the IR check caught;
    they are refused at the boundary now, with the same line on both paths."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] > 0, 1.5e308, -1e308) * rng.uniform(0.9, 1.0, 200)
    messages = []
    for use in (True, False):
        monkeypatch.setattr(cart_kernels, "USE", use)
        with pytest.raises(LearnerError) as err:
            RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and messages[0].startswith("y[0] is 1.45")


def test_bulk_check_refuses_broken_arrays():
    #       0
    #     1   2
    #        3 4
    feat = np.array([0, -1, 1, -1, -1])
    kids = np.array([[1, 2], [-1, -1], [3, 4], [-1, -1], [-1, -1]])
    vals = np.ones((5, 2))
    ok = feat >= 0
    assert forest._plain_arrays(5, ok, kids, vals)
    for bad_kids in ([[1, 2], [-1, -1], [3, 3], [-1, -1], [-1, -1]],  # one child twice
                     [[1, 2], [-1, -1], [1, 4], [-1, -1], [-1, -1]],  # two parents, 3 orphan
                     [[1, 2], [-1, -1], [2, 4], [-1, -1], [-1, -1]],  # own child
                     [[1, 2], [-1, -1], [3, 5], [-1, -1], [-1, -1]]):  # past the end
        assert not forest._plain_arrays(5, ok, np.array(bad_kids), vals)
    for bad in (np.inf, -np.inf, np.nan):
        v = vals.copy()
        v[3, 1] = bad
        assert not forest._plain_arrays(5, ok, kids, vals, v)
    assert forest._plain_threshold(0.5) and forest._plain_threshold(float("inf"))
    assert not forest._plain_threshold(0.1)  # not a float32
    assert not forest._plain_threshold(float("nan"))


def test_validate_still_checks_width_and_kinds():
    """A vouched tree under a model of another width, or splitting a categorical feature,
    gets the per-node check."""
    import dataclasses

    X, y = data(3)
    model = RandomForestRegressor(n_estimators=1, random_state=0).fit(X, y).model_
    used = {n.test.feature for n in model.trees[0].nodes if isinstance(n, Split)}
    wide = dataclasses.replace(model, base_score=(0.0, 0.0),
                               target=dataclasses.replace(model.target, n_outputs=2))
    with pytest.raises(IRValidationError, match="value"):
        validation.validate(wide, {0: (1, used)})
    f = min(used)
    cats = list(model.features)
    cats[f] = dataclasses.replace(cats[f], kind="categorical", categories=("a", "b"))
    with pytest.raises(IRValidationError):
        validation.validate(dataclasses.replace(model, features=tuple(cats)), {0: (1, used)})
    assert validation.validate(model, {0: (1, used)}) is model


def test_bulk_built_nodes_equal_constructed_ones():
    """object.__new__ plus the slots' setters: equal to (and hashing as) the dataclass's
    own constructor, every field set."""
    X, y = data(4)
    model = RandomForestClassifier(n_estimators=1, random_state=0).fit(
        X, np.digitize(y, [0.0])).model_
    for node in model.trees[0].nodes:
        if isinstance(node, Leaf):
            again = Leaf(node.value, node.samples, node.distribution, node.impurity)
        else:
            again = Split(node.test, node.children, node.missing, None, node.samples,
                          node.distribution, node.impurity)
        assert node == again and hash(node) == hash(again) and repr(node) == repr(again)
