"""Import XGBoost models (JSON and UBJSON, ``Booster.save_model`` / ``save_raw``).

    from rulegen.importers import xgboost
    model = xgboost.load("model.json")        # a path (.json or .ubj), or the file's bytes
    model = xgboost.from_booster(booster)      # a Booster or a fitted XGBModel (no pickle)

The IR reproduces ``Booster.predict(X, output_margin=True)`` bit for bit (rows as float64, NaN
missing), and the predicted classes. How (measured against XGBoost 3.2, see the tests):

* accumulation: ``dtype="float32"``; XGBoost starts every output at the base margin and adds the
  trees in model order, each leaf into output ``tree_info[i]``, in ``float``. Leaf values and
  thresholds are float32 (read exactly: JSON decimals are rounded once to float32).
* splits: ``x < threshold`` (the input rounded to float32) goes left; NaN follows
  ``default_left``. Categorical splits send the listed categories *right*: the IR test is
  ``code in set`` with children ``(right, left)``; codes outside the set, unseen codes and
  negative codes go left (``Split.unseen`` stays ``None``).
* base_score: stored as a float32 probability (3.x: a vector string ``"[5E-1]"``). Logistic
  objectives use ``-logf(1.0f / p - 1.0f)``, exp-link objectives ``logf(p)``, in float32 with the
  C library's ``logf`` (glibc's is not correctly rounded, so this matters); softmax and identity
  objectives use it unchanged.
* links: float32 models take XGBoost's float32 links (docs/IR.md), computed with the C
  library's ``expf`` as XGBoost does, so probabilities are bit-identical too.
* dart: ``weight_drop[i]`` becomes ``Tree.weight`` (XGBoost's ``float`` product ``leaf * w``
  equals the IR's float64 product rounded to float32).
* categorical labels: with a category encoder in the model (``cats.enc``, 3.1+, trained on a
  DataFrame) the labels are the training categories and an unseen label follows the missing
  direction, as XGBoost's re-coding makes it missing; otherwise the labels are the integer codes
  ``0..max``. XGBoost truncates a non-integer code (1.9 acts as 1); the IR treats it as unseen.
* outputs: ``multi:*`` -> one tree per class per round (``Tree.output``); ``num_target > 1`` ->
  regression with several outputs (multi-label ``binary:logistic`` too: per-label sigmoid);
  ``multi_output_tree`` leaves -> vector leaves. ``binary:logitraw`` is imported as identity
  regression (its ``predict`` is the margin). ``iteration_range`` selects boosting rounds.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np

from rulegen.errors import ModelFormatError, UnsupportedFeatureError
from rulegen.importers import xgboost_ubjson
from rulegen.importers.xgboost_trees import (
    Ambiguous,
    Context,
    Fail,
    array,
    convert_tree,
    f32_array,
)
from rulegen.ir import libm
from rulegen.ir.nodes import (
    CategoricalTest,
    Feature,
    Leaf,
    Model,
    Provenance,
    Split,
    Target,
    Tree,
)
from rulegen.ir.validate import validate

__all__ = ["from_booster", "from_dict", "load", "loads"]

# objective -> (task, link, base_score transform)
_OBJECTIVES = {
    "binary:logistic": ("binary", "sigmoid", "logit"),
    "binary:logitraw": ("regression", "identity", None),
    "reg:logistic": ("regression", "sigmoid", "logit"),
    "multi:softprob": ("multiclass", "softmax", None),
    "multi:softmax": ("multiclass", "softmax", None),
    **{name: ("regression", "identity", None) for name in (
        "reg:squarederror", "reg:linear", "reg:squaredlogerror", "reg:absoluteerror",
        "reg:pseudohubererror", "reg:quantileerror", "rank:pairwise", "rank:ndcg", "rank:map")},
    **{name: ("regression", "exp", "log") for name in (
        "count:poisson", "reg:gamma", "reg:tweedie", "survival:cox", "survival:aft")},
}
_WHO = "rulegen IR"
_LIMIT = 10_000_000  # sanity bound on num_feature / num_class / num_target


# --- float32 -------------------------------------------------------------------------------


def _f32_text(s: str) -> float:
    """Round a decimal string once, to nearest float32 (ties to even), as ``strtof`` does."""
    v = float(s)
    with np.errstate(over="ignore"):
        f = np.float32(v)
    if float(f) == v or not math.isfinite(float(f)):
        return float(f)
    with np.errstate(over="ignore"):  # FLT_MAX's next value up is infinity
        lo, hi = (f, np.nextafter(f, np.float32(np.inf))) if float(f) < v else \
            (np.nextafter(f, np.float32(-np.inf)), f)
    if v - float(lo) != float(hi) - v:
        return float(f)  # not a midpoint: the double rounding is harmless
    exact, mid = Fraction(s.strip()), Fraction(v)
    return float(hi) if exact > mid else float(lo) if exact < mid else float(f)


def _base_margin(p: float, transform: str | None, path: str) -> float:
    p32 = np.float32(p)
    if transform == "logit":  # XGBoost: -std::log(1.0f / base_score - 1.0f), all in float
        if not 0 < p32 < 1:
            raise Fail(path, f"a logistic objective needs a base_score in (0, 1), got {p!r}")
        with np.errstate(over="ignore", divide="ignore"):
            x = np.float32(np.float32(1) / p32) - np.float32(1)
        return -libm.logf(x)
    if transform == "log":  # std::log(base_score) in float
        if not p32 > 0:
            raise Fail(path, f"a log-link objective needs a positive base_score, got {p!r}")
        return libm.logf(p32)
    return float(p32)


# --- reading the document ------------------------------------------------------------------


def _key(obj, key: str, path: str, kind=None):
    if not isinstance(obj, dict):
        raise Fail(path or "document", "expected an object")
    if key not in obj:
        raise Fail(f"{path}.{key}" if path else key, "missing")
    value = obj[key]
    if kind is not None and not isinstance(value, kind):
        want = {str: "a string", dict: "an object", list: "an array"}.get(kind, str(kind))
        raise Fail(f"{path}.{key}" if path else key, f"expected {want}, got {type(value).__name__}")
    return value


def _int_param(obj, key: str, path: str, default=None) -> int:
    if default is not None and (not isinstance(obj, dict) or key not in obj):
        return default
    v = _key(obj, key, path)
    if not isinstance(v, (bool, float)):
        try:
            return int(v)
        except (TypeError, ValueError):
            pass
    raise Fail(f"{path}.{key}", f"expected an integer, got {v!r}")


def _base_scores(text, n_raw: int, path: str) -> list[float]:
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        text = repr(float(text))
    if not isinstance(text, str):
        raise Fail(path, f"expected a number as a string, got {text!r}")
    body = text.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    try:
        values = [_f32_text(part) for part in body.split(",")]
    except ValueError:
        raise Fail(path, f"expected a number or a list of numbers, got {text!r}") from None
    if len(values) == 1:
        values = values * n_raw
    if len(values) != n_raw or not all(math.isfinite(v) for v in values):
        raise Fail(path, f"expected {n_raw} finite value(s), got {text!r}")
    return values


def _objective(learner) -> tuple[str, tuple]:
    obj = _key(learner, "objective", "learner", dict)
    name = _key(obj, "name", "learner.objective", str)
    if name not in _OBJECTIVES:
        raise UnsupportedFeatureError(_WHO, f"the XGBoost objective {name!r} (learner.objective.name)")
    return name, _OBJECTIVES[name]


def _labels(enc, j: int, path: str) -> tuple | None:
    """Training categories of feature ``j`` from the model's category encoder, if any."""
    if not isinstance(enc, list) or j >= len(enc) or not isinstance(enc[j], dict):
        return None
    col, p = enc[j], f"{path}[{j}]"
    try:
        if "offsets" in col:  # strings: UTF-8 bytes (as int8) cut at the offsets
            offsets = np.asarray(_key(col, "offsets", p), dtype=np.int64)
            data = bytes((np.asarray(_key(col, "values", p), dtype=np.int64) & 0xFF).astype(np.uint8))
            if len(offsets) == 0:
                return None
            if offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] > len(data):
                raise Fail(f"{p}.offsets", "offsets must rise from 0 to at most the byte count")
            return tuple(data[a:b].decode("utf-8") for a, b in itertools.pairwise(offsets))
        values = np.asarray(_key(col, "values", p))
        if values.ndim != 1:
            raise ValueError
    except UnicodeDecodeError:
        raise Fail(f"{p}.values", "a category name is not valid UTF-8") from None
    except (TypeError, ValueError, OverflowError):
        raise Fail(p, "expected integer arrays \"offsets\" and \"values\"") from None
    if values.size and values.dtype.kind not in "iu":
        raise UnsupportedFeatureError(_WHO, f"non-integer XGBoost category values ({p}.values)")
    return tuple(int(v) for v in values) or None


def _features(learner, n_features: int, ctx: Context, cats) -> tuple[tuple[Feature, ...], set[int]]:
    """The features, and the categorical ones whose labels come from the model's encoder."""
    names, types = learner.get("feature_names", []), learner.get("feature_types", [])
    for key, value in (("feature_names", names), ("feature_types", types)):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise Fail(f"learner.{key}", "expected an array of strings")
    if len(names) not in (0, n_features) or not all(isinstance(n, str) and n for n in names):
        raise Fail("learner.feature_names", f"expected {n_features} non-empty names")
    if len(set(names)) != len(names):
        raise Fail("learner.feature_names", "duplicate feature names")
    if len(types) not in (0, n_features):
        raise Fail("learner.feature_types", f"expected {n_features} types, got {len(types)}")
    enc = cats.get("enc") if isinstance(cats, dict) else None
    feats, encoded = [], set()
    for j in range(n_features):
        name = names[j] if names else f"f{j}"
        t = types[j] if types else ("c" if j in ctx.cat_max else "q")
        if t not in ("q", "float", "int", "i", "c"):
            raise Fail(f"learner.feature_types[{j}]", f"unknown feature type {t!r}")
        if t != "c":
            if j in ctx.cat_max:
                raise Fail(ctx.cat_where[j], f"a categorical split on numeric feature {name!r}")
            feats.append(Feature(name))
            continue
        if j in ctx.numeric_used:
            raise UnsupportedFeatureError(_WHO, f"a numeric split on categorical feature {name!r} "
                                                f"({ctx.numeric_used[j]})")
        labels = _labels(enc, j, "learner.gradient_booster.model.cats.enc")
        top = ctx.cat_max.get(j, 0)
        if labels is None:
            labels = tuple(range(top + 1))
        else:
            encoded.add(j)
        if top >= len(labels):
            raise Fail(ctx.cat_where[j], f"category code {top} but feature {name!r} has "
                                         f"{len(labels)} categories")
        if len(set(labels)) != len(labels):
            raise Fail(f"learner.gradient_booster.model.cats.enc[{j}]", "duplicate category labels")
        feats.append(Feature(name, "categorical", labels))
    return tuple(feats), encoded


def _unseen_as_missing(tree: Tree, encoded: set[int]) -> Tree:
    """XGBoost re-codes a DataFrame's labels with the model's encoder; a label it does not know
    becomes missing (when XGBoost 3.2 accepts it at all), so it follows ``default_left``."""
    nodes = tuple(
        dataclasses.replace(nd, unseen=nd.missing.child)
        if isinstance(nd, Split) and isinstance(nd.test, CategoricalTest) and nd.test.feature in encoded
        else nd for nd in tree.nodes)
    return Tree(nodes, tree.output, tree.weight)


def _iteration_trees(model_doc, mpath: str, n_trees: int, per_iter: int, iteration_range,
                     attributes) -> range:
    indptr = []
    if "iteration_indptr" in model_doc:  # XGBoost 2.0+
        indptr = array(model_doc, "iteration_indptr", mpath, None, "int").tolist()
    if not indptr:
        indptr = list(range(0, n_trees + 1, max(per_iter, 1)))
    if indptr[0] != 0 or indptr[-1] != n_trees or any(b < a for a, b in itertools.pairwise(indptr)):
        raise Fail(f"{mpath}.iteration_indptr", f"expected a rising list from 0 to {n_trees} (the "
                                                f"number of trees), got {indptr[:3]}...{indptr[-1:]}")
    if iteration_range is None:
        return range(n_trees)
    if iteration_range == "best":
        best = (attributes or {}).get("best_iteration")
        if best is None:
            return range(n_trees)
        iteration_range = (0, int(best) + 1)
    begin, end = (int(v) for v in iteration_range)
    n_iter = len(indptr) - 1
    end = n_iter if end == 0 else end
    if not 0 <= begin < end <= n_iter:
        raise ModelFormatError(f"iteration_range {iteration_range!r} is outside 0..{n_iter}")
    return range(indptr[begin], indptr[end])


def from_dict(doc, *, iteration_range=None, exact_floats: bool = True, source: str = "") -> Model:
    """Build the IR from a decoded XGBoost model document (a dict as json.loads returns it)."""
    try:
        return _convert(doc, iteration_range, exact_floats)
    except Fail as e:
        where = f"{source}: " if source else ""
        raise ModelFormatError(f"{where}{e.path}: {e.message}") from None
    except UnsupportedFeatureError as e:
        raise e.at(source) from None


def _convert(doc, iteration_range, exact: bool) -> Model:
    learner = _key(doc, "learner", "", dict)
    name, (task, link, transform) = _objective(learner)
    params = _key(learner, "learner_model_param", "learner", dict)
    n_features = _int_param(params, "num_feature", "learner.learner_model_param")
    n_class = _int_param(params, "num_class", "learner.learner_model_param", 0)
    n_target = _int_param(params, "num_target", "learner.learner_model_param", 1)
    if task == "binary" and n_target > 1:  # multi-label: one independent probability per label
        task = "regression"
    n_raw = n_class if task == "multiclass" else n_target if task == "regression" else 1
    if not 0 < n_features <= _LIMIT:
        raise Fail("learner.learner_model_param.num_feature", f"expected 1..{_LIMIT}, got {n_features}")
    if task != "multiclass" and n_class > 1:
        # XGBoost then predicts num_class outputs, one link each, which no such objective means
        raise Fail("learner.learner_model_param.num_class",
                   f"num_class={n_class} with objective {name!r} (XGBoost would predict {n_class} "
                   "outputs, not one); the file is inconsistent: save the model again from XGBoost")
    if task == "multiclass" and n_class < 2 or not 1 <= n_raw <= _LIMIT:
        raise Fail("learner.learner_model_param", f"objective {name!r} with num_class={n_class}, "
                                                  f"num_target={n_target}")
    gb = _key(learner, "gradient_booster", "learner", dict)
    booster = gb.get("name")
    gpath = "learner.gradient_booster"
    if booster == "gbtree":
        model_doc, weights = _key(gb, "model", gpath, dict), None
        mpath = f"{gpath}.model"
    elif booster == "dart":
        model_doc = _key(_key(gb, "gbtree", gpath, dict), "model", f"{gpath}.gbtree", dict)
        mpath = f"{gpath}.gbtree.model"
        weights = f32_array(array(gb, "weight_drop", gpath, None, "float"), exact)
    else:
        raise UnsupportedFeatureError(_WHO, f"the XGBoost booster {booster!r} ({gpath}.name); "
                                            "only tree boosters (gbtree, dart) are trees")
    trees_doc = _key(model_doc, "trees", mpath, list)
    if weights is not None and len(weights) != len(trees_doc):
        raise Fail(f"{gpath}.weight_drop", f"expected {len(trees_doc)} weights, got {len(weights)}")
    if "tree_info" in model_doc:
        tree_info = array(model_doc, "tree_info", mpath, len(trees_doc), "int")
    else:
        tree_info = np.zeros(len(trees_doc), dtype=np.int64)
    n_parallel = _int_param(model_doc.get("gbtree_model_param", {}), "num_parallel_tree",
                            f"{mpath}.gbtree_model_param", 1)
    selected = _iteration_trees(model_doc, mpath, len(trees_doc), n_parallel * n_raw, iteration_range,
                                learner.get("attributes"))
    ctx = Context(n_features, n_raw, exact)
    trees = []
    for i in selected:
        out = int(tree_info[i])
        if not 0 <= out < n_raw:
            raise Fail(f"{mpath}.tree_info[{i}]", f"output {out} out of range 0..{n_raw - 1}")
        tree = convert_tree(trees_doc[i], f"{mpath}.trees[{i}]", ctx, out)
        if weights is not None:
            w = float(weights[i])
            if not math.isfinite(w):
                raise Fail(f"{gpath}.weight_drop[{i}]", f"expected a finite weight, got {w!r}")
            tree = Tree(tree.nodes, tree.output, w)
        trees.append(tree)
    if not trees:  # no boosting rounds: the prediction is the base margin
        trees.append(Tree((Leaf((0.0,) * n_raw),)))
    bpath = "learner.learner_model_param.base_score"
    base = [_base_margin(p, transform, bpath)
            for p in _base_scores(_key(params, "base_score", "learner.learner_model_param"), n_raw, bpath)]
    features, encoded = _features(learner, n_features, ctx, model_doc.get("cats"))
    if encoded:
        trees = [_unseen_as_missing(t, encoded) for t in trees]
    if task == "regression":
        target = Target("regression", "target", n_outputs=n_raw)
    else:
        target = Target("classification", "target", tuple(range(max(n_raw, 2))))
    version = learner_version(doc)
    prov = Provenance(
        algorithm=f"xgboost {booster}",
        params=tuple(sorted({"objective": name, "booster": booster, "num_class": n_class,
                             "num_target": n_target,
                             "base_score": str(params.get("base_score"))}.items())),
        library=f"xgboost {version}" if version else "xgboost",
        n_features=n_features,
    )
    return validate(Model(features, target, tuple(trees), tuple(base), "sum", link, "float32", prov))


def learner_version(doc) -> str:
    v = doc.get("version") if isinstance(doc, dict) else None
    try:
        return ".".join(str(int(x)) for x in v) if isinstance(v, (list, np.ndarray)) else ""
    except (TypeError, ValueError, OverflowError):
        return ""


# --- entry points --------------------------------------------------------------------------


def _is_json(data: bytes) -> bool:
    head = data.lstrip()
    return head[:1] == b"{" and head[1:].lstrip()[:1] in (b'"', b"}", b"")


def loads(data, *, iteration_range=None, source: str = "") -> Model:
    """Import a model from its bytes (JSON or UBJSON, detected from the content) or JSON text."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    data = bytes(data)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    where = f"{source}: " if source else ""
    if not data.strip():
        raise ModelFormatError(f"{where}empty file; expected an XGBoost JSON or UBJSON model")
    if _is_json(data):
        try:
            doc = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
            msg = f"{e.msg} at line {e.lineno} column {e.colno}" if isinstance(e, json.JSONDecodeError) \
                else str(e)
            raise ModelFormatError(f"{where}not valid JSON: {msg}") from None
        try:
            return from_dict(doc, iteration_range=iteration_range, exact_floats=False, source=source)
        except Ambiguous:
            doc = json.loads(data, parse_float=_f32_text)
            return from_dict(doc, iteration_range=iteration_range, exact_floats=True, source=source)
    if data[:1] != b"{":
        raise ModelFormatError(f"{where}not an XGBoost model (expected JSON or UBJSON, which start "
                               "with '{')")
    try:
        doc = xgboost_ubjson.loads(data)
    except ModelFormatError as e:
        raise ModelFormatError(f"{where}{e}") from None
    return from_dict(doc, iteration_range=iteration_range, exact_floats=True, source=source)


def load(source, *, iteration_range=None) -> Model:
    """Import an XGBoost model file (a path), or its content (bytes, or JSON text).

    ``iteration_range=(begin, end)`` keeps the trees of those boosting rounds, as in XGBoost's
    ``predict(iteration_range=...)``; ``"best"`` keeps rounds ``0..best_iteration``. Default:
    every tree."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return loads(source, iteration_range=iteration_range)
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return loads(source, iteration_range=iteration_range)
    path = Path(source)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ModelFormatError(f"{path}: cannot read: {e.strerror or e}") from None
    return loads(data, iteration_range=iteration_range, source=str(path))


def from_booster(booster, *, iteration_range=None) -> Model:
    """Import an ``xgboost.Booster`` or a fitted scikit-learn wrapper (``XGBClassifier``, ...)
    through its JSON serialisation (``save_raw("json")``)."""
    if hasattr(booster, "get_booster"):
        try:
            booster = booster.get_booster()
        except Exception as e:  # noqa: BLE001 - sklearn's NotFittedError, XGBoostError
            raise ModelFormatError(f"cannot get the booster of {type(booster).__name__}: {e}") from None
    if not hasattr(booster, "save_raw"):
        raise ModelFormatError(f"expected an xgboost Booster or XGBModel, got {type(booster).__name__}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = booster.save_raw(raw_format="json")
    return loads(bytes(raw), iteration_range=iteration_range, source="<booster>")
