"""What the C target's options change before code is written: the float profile's limits and
error bounds, and the positive-only form of a binary classifier.

The float profile (``precision="float32"``) computes in float only. Routing stays exact for
every float input (:func:`rulegen.codegen.lower.float32_bound`); sums are exact where the
model itself accumulates in float32 (XGBoost); otherwise :func:`float_bounds` gives the bound
the header states and the tests check. Oblique sums and C4.5's blend weights are products
summed in double: the profile refuses them rather than round them silently.
"""

from __future__ import annotations

import dataclasses
import math

from rulegen.codegen import lower
from rulegen.errors import UnsupportedFeatureError
from rulegen.ir.nodes import Blend, Leaf, Model, ObliqueTest, Split, Surrogates, Tree

_U = 2.0**-24  # float's unit roundoff


def check_float_profile(model: Model) -> None:
    """Refuse, naming the first place, what float arithmetic cannot route exactly."""
    for t, tree in enumerate(model.trees):
        for n, node in enumerate(tree.nodes):
            if not isinstance(node, Split):
                continue
            where = f"trees[{t}].nodes[{n}]"
            tests = [node.test]
            if isinstance(node.missing, Surrogates):
                tests += [s.test for s in node.missing.surrogates]
            if any(isinstance(x, ObliqueTest) for x in tests):
                raise UnsupportedFeatureError(
                    "c", f"the oblique split at {where} in float (its weighted sum is in double); "
                         "compile with --precision float64")
            if isinstance(node.missing, Blend):
                raise UnsupportedFeatureError(
                    "c", f"the blended missing values at {where} in float (path weights are "
                         "products in double); compile with --precision float64")


def check_leaves(model: Model) -> None:
    """NAME_predict_leaves gives one leaf per tree: a blended tree reaches several."""
    for t, tree in enumerate(model.trees):
        if lower.has_blend(tree):
            raise UnsupportedFeatureError(
                "c", f"leaf ids for trees[{t}]: its blended missing values reach several leaves")


def _largest_leaf(model: Model, tree: Tree) -> float:
    biggest = 0.0
    for node in tree.nodes:
        if isinstance(node, Leaf):
            if model.aggregation == "vote":
                biggest = max(biggest, abs(tree.weight))
            else:
                biggest = max([biggest, *(abs(v) for v in lower.leaf_contribution(model, tree, node))])
    return biggest


def float_bounds(model: Model) -> dict:
    """The header's statements for the float profile: whether raw scores are exact, and
    otherwise a bound on |raw - evaluator's raw| and on each output's difference.

    Rounding n leaf values and the base score to float and summing them in float costs at
    most (2n + 1) * u * S with S = |base| + the sum of each tree's largest |leaf| (each
    rounding is within u of its value, each partial sum is at most S; the first-order bound
    is kept honest by the factor 1 / (1 - (2n + 1) u)); a mean divides it by n and rounds
    once more. Through the link: identity adds nothing; sigmoid is 1/4-Lipschitz and expf,
    the add and the divide add at most 4u; softmax is 1/2-Lipschitz per probability plus its
    float sum of K terms, (K + 4) u."""
    n = len(model.trees)
    exact = model.dtype == "float32" and model.aggregation != "vote"
    k = model.n_raw
    softmax = model.link == "softmax" and k > 1
    out = {"exact_f32": exact, "softmax_sum": exact and softmax, "bound_raw": "", "bound_out": ""}
    if exact and not softmax:
        return out
    if exact:  # only the softmax's sum differs
        out["bound_out"] = _show((k + 4) * _U)
        return out
    s = max(abs(b) for b in model.base_score) + sum(_largest_leaf(model, t) for t in model.trees)
    m = 2 * n + 1
    raw = m * _U * s / (1 - m * _U)
    if model.aggregation in ("mean", "vote"):
        div = lower.total_weight(model) if model.aggregation == "vote" else float(n)
        raw = raw / abs(div) + 2 * _U * (s / abs(div) + raw / abs(div))
    if model.link == "identity":
        bound_out = raw
    elif model.link == "sigmoid":
        bound_out = raw / 4 + 4 * _U
    elif softmax:
        bound_out = raw / 2 + (k + 4) * _U
    else:  # exp: relative to the output
        bound_out = math.nan
    out["bound_raw"] = _show(raw)
    out["bound_out"] = _show(bound_out) if not math.isnan(bound_out) else (
        f"a relative {_show(math.expm1(raw) + 4 * _U)} of its value")
    out["bound_raw_value"], out["bound_out_value"] = raw, bound_out
    return out


def _show(v: float) -> str:
    """A bound rounded up to two significant digits."""
    if v == 0:
        return "0"
    e = math.floor(math.log10(v)) - 1
    return f"{math.ceil(v / 10**e) * 10**e:.2g}"


def positive_only(model: Model) -> Model:
    """A binary classifier reduced to the one score that gives P(class 1): a model with one
    raw score already keeps it; two raw scores summed or averaged with no link (scikit-learn's
    forests and trees) keep only the second, which halves leaf data and additions and leaves
    P(class 1) exactly the evaluator's. Other models are refused: P(class 1) of a softmax or
    of votes needs every class's score."""
    what = "positive-only output"
    if model.target.task != "classification" or len(model.target.classes) != 2:
        raise UnsupportedFeatureError("c", f"{what} for a model that is not a binary classifier")
    if model.n_raw == 1:
        return model
    if model.n_raw != 2 or model.link != "identity" or model.aggregation == "vote":
        raise UnsupportedFeatureError(
            "c", f"{what} for this model (link {model.link}, aggregation {model.aggregation}): "
                 "P(class 1) needs every class's score")
    if model.aggregation == "mean" and any(t.output == 0 for t in model.trees):
        raise UnsupportedFeatureError("c", f"{what} for a mean over trees some of which score class 0 only")
    trees = []
    for tree in model.trees:
        if tree.output == 0:
            continue  # adds to class 0's score only
        if tree.output == 1:
            trees.append(dataclasses.replace(tree, output=0))
            continue
        nodes = tuple(dataclasses.replace(nd, value=(nd.value[1],),
                                          distribution=None) if isinstance(nd, Leaf) else nd
                      for nd in tree.nodes)
        trees.append(dataclasses.replace(tree, nodes=nodes, output=0))
    return dataclasses.replace(model, trees=tuple(trees), base_score=(model.base_score[1],))
