"""Import CatBoost models (the JSON of ``model.save_model(path, format="json")``).

    from rulegen.importers import catboost
    model = catboost.load("model.json")              # a path, or the JSON text / bytes / dict
    model = catboost.from_catboost(cb_model, pool=train_pool)   # a live CatBoost model

The IR reproduces ``predict(X, prediction_type="RawFormulaVal")`` bit for bit. How CatBoost
computes it (``catboost/libs/model/cpu``: ``quantization.h``, ``evaluator_impl.cpp``,
``scale_and_bias.cpp``), and how the IR says the same (tree shapes in ``catboost_trees.py``):

* every float input is read as a C ``float`` (a float64 value rounded to float32 first); a
  numeric split holds when ``value > border`` in float32, so the IR test is
  ``NumericTest(f, "<=", border, "float32")`` whose child 0 is the split's "false" side.
* NaN: when the feature had NaN in training (``has_nans``) and ``nan_value_treatment`` is
  ``AsFalse`` / ``AsTrue``, NaN is replaced by -inf / +inf before the comparison; otherwise
  (``AsIs``, or no NaN in training) ``NaN > border`` is false.
* one-hot categorical splits hold when the category's hash equals the split's ``value``;
  CatBoost hashes the category's text (an integer category by its decimal text). The IR feature
  is categorical and its labels are the texts of the hashes the splits use, read from
  ``cat_features_hash`` (written only with ``save_model(..., pool=train_pool)``). Any other
  text routes as "not equal" at every split, which is the IR's unseen route.
* raw values: every output starts at 0.0, each tree's leaf is added in model order (double),
  then ``bias`` is added once when it is not all zero (``Scale * sum + Bias`` with Scale 1):
  the IR has ``base_score`` 0 and one last one-leaf tree holding the bias.
* objectives: RMSE and the other single-output regressions whose prediction is the raw value
  -> identity, MultiRMSE -> identity with vector leaves, Logloss / CrossEntropy -> sigmoid,
  MultiClass -> softmax, MultiClassOneVsAll -> sigmoid per class (vector leaves). CTR-based
  categorical splits, text and embedding features and ``scale != 1`` are refused.
* decimals are read correctly rounded (Python's ``json``); CatBoost's own JSON reader is not,
  so the IR matches the model that wrote the file, not always CatBoost's reload of it.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from itertools import pairwise
from pathlib import Path

import numpy as np

from rulegen.errors import ModelFormatError, UnsupportedFeatureError
from rulegen.importers import catboost_cbm
from rulegen.importers.catboost_trees import (
    Fail,
    Splits,
    number,
    oblivious_tree,
    symmetric_leaf_count,
    unbalanced_tree,
)
from rulegen.ir.nodes import Feature, Leaf, Model, Provenance, Target, Tree
from rulegen.ir.validate import validate

__all__ = ["from_catboost", "from_dict", "load", "loads"]

_WHO = "rulegen IR"
# single-output objectives whose RawFormulaVal is the prediction itself
_IDENTITY = {"RMSE", "MAE", "Quantile", "Expectile", "MAPE", "Huber", "Lq"}
_SIGMOID = {"Logloss", "CrossEntropy"}
_NAN_TREATMENTS = ("AsIs", "AsFalse", "AsTrue")


def _key(obj, key: str, path: str, kind=None, default=...):
    if not isinstance(obj, dict):
        raise Fail(path, "expected an object")
    if key not in obj:
        if default is not ...:
            return default
        raise Fail(f"{path}.{key}", "missing")
    value = obj[key]
    if kind is not None and not isinstance(value, kind):
        what = {list: "an array", dict: "an object", str: "a string"}.get(kind, "a number")
        raise Fail(f"{path}.{key}", f"expected {what}")
    return value


def _index(value, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Fail(path, "expected a non-negative integer")
    return value


def _float32_border(value, path: str) -> float:
    b = number(value, path)
    if math.isnan(b) or float(np.float32(b)) != b:
        raise Fail(path, f"border {b!r} is not a float32 value (CatBoost stores borders as float)")
    return b


class _Features:
    """Float and categorical features by their CatBoost indices, and their IR positions."""

    def __init__(self, info: dict, path: str):
        for key in ("text_features", "embedding_features", "estimated_features"):
            if info.get(key):
                raise UnsupportedFeatureError(_WHO, f"CatBoost {key.replace('_', ' ')} ({path}.{key})")
        floats = _key(info, "float_features", path, list, [])
        cats = _key(info, "categorical_features", path, list, [])
        self.flat: dict[int, tuple[str, str]] = {}  # flat index -> (kind, name)
        self.floats: dict[int, dict] = {}  # float feature index -> what a split needs
        self.cats: dict[int, dict] = {}
        for kind, entries, table in (("numeric", floats, self.floats), ("categorical", cats, self.cats)):
            key = "float_features" if kind == "numeric" else "categorical_features"
            for i, entry in enumerate(entries):
                p = f"{path}.{key}[{i}]"
                index = _index(_key(entry, "feature_index", p), f"{p}.feature_index")
                flat = _index(_key(entry, "flat_feature_index", p), f"{p}.flat_feature_index")
                if index in table or flat in self.flat:
                    raise Fail(p, "a feature index appears twice")
                name = _key(entry, "feature_id", p, str, "") or f"f{flat}"
                self.flat[flat] = (kind, name)
                table[index] = {"flat": flat, "path": p, "name": name}
                if kind == "numeric":
                    table[index].update(self._float_info(entry, p))
                else:
                    values = entry.get("values", [])
                    table[index]["values"] = values if isinstance(values, list) else []
        if sorted(self.flat) != list(range(len(self.flat))):
            raise Fail(path, "the features' flat_feature_index values are not 0, 1, ..., n-1")
        names = [n for _, n in self.flat.values()]
        if len(set(names)) != len(names):
            raise Fail(path, "duplicate feature names")
        self.n_flat = max(self.flat, default=-1) + 1
        self.ctrs = _key(info, "ctrs", path, list, [])
        self.hashes: dict[int, str] | None = None
        if "cat_features_hash" in info:
            self.hashes = {}
            for i, item in enumerate(_key(info, "cat_features_hash", path, list)):
                p = f"{path}.cat_features_hash[{i}]"
                h = _key(item, "hash", p)
                text = _key(item, "value", p, str)
                if isinstance(h, bool) or not isinstance(h, int):
                    raise Fail(f"{p}.hash", "expected an integer")
                self.hashes[h & 0xFFFFFFFF] = text

    @staticmethod
    def _float_info(entry: dict, p: str) -> dict:
        borders = [_float32_border(b, f"{p}.borders[{k}]")
                   for k, b in enumerate(_key(entry, "borders", p, list, []))]
        if any(a >= b for a, b in pairwise(borders)):
            # the evaluator counts the borders a value exceeds: that is "value > border"
            # only while the borders increase
            raise Fail(f"{p}.borders", "borders are not strictly increasing")
        treatment = _key(entry, "nan_value_treatment", p, str, "AsIs")
        if treatment not in _NAN_TREATMENTS:
            raise Fail(f"{p}.nan_value_treatment", f"unknown value {treatment!r}")
        has_nans = _key(entry, "has_nans", p, default=False)
        # CatBoost substitutes NaN only for features that had NaN in training
        nan_as = treatment if has_nans is True else "AsIs"
        return {"borders": set(borders), "nan": nan_as}

    def ctr_names(self, split: dict) -> list[str]:
        """The categorical features a CTR split reads. Binary features are numbered float
        borders first, then one-hot values, then each CTR's borders: ``split_index`` finds
        the CTR when its border is there; otherwise every CTR's features are named."""
        ctrs = [c for c in self.ctrs if isinstance(c, dict)]
        start = sum(len(f["borders"]) for f in self.floats.values())
        start += sum(len(c["values"]) for c in self.cats.values())
        index, border = split.get("split_index"), split.get("border")
        for ctr in ctrs:
            borders = ctr.get("borders", [])
            borders = borders if isinstance(borders, list) else []
            if isinstance(index, int) and start <= index < start + len(borders):
                if borders[index - start] == border:
                    ctrs = [ctr]
                break
            start += len(borders)
        names = []
        for ctr in ctrs:
            elements = ctr.get("elements", [])
            for el in elements if isinstance(elements, list) else ():
                c = self.cats.get(el.get("cat_feature_index")) if isinstance(el, dict) else None
                if c is not None and c["name"] not in names:
                    names.append(c["name"])
        return names


def _split_reader(feats: _Features, used_labels: dict[int, dict[int, str]]):
    """A function (split JSON, path) -> Splits.Test for the tree builders."""

    def read(split, path: str):
        kind = _key(split, "split_type", path, str)
        if kind == "FloatFeature":
            index = _index(_key(split, "float_feature_index", path), f"{path}.float_feature_index")
            if index not in feats.floats:
                raise Fail(f"{path}.float_feature_index", f"no float feature {index}")
            f = feats.floats[index]
            border = _float32_border(_key(split, "border", path), f"{path}.border")
            if border not in f["borders"]:
                raise Fail(f"{path}.border", f"{border!r} is not one of feature {f['name']!r}'s borders")
            # NaN -> +inf holds for every border below +inf
            nan_true = f["nan"] == "AsTrue" and border < math.inf
            return Splits.numeric(f["flat"], border, nan_true)
        if kind == "OneHotFeature":
            index = _index(_key(split, "cat_feature_index", path), f"{path}.cat_feature_index")
            if index not in feats.cats:
                raise Fail(f"{path}.cat_feature_index", f"no categorical feature {index}")
            c = feats.cats[index]
            h = _key(split, "value", path)
            if isinstance(h, bool) or not isinstance(h, int):
                raise Fail(f"{path}.value", "expected an integer hash")
            h &= 0xFFFFFFFF
            if feats.hashes is None:
                raise ModelFormatError(
                    f"{path}: a one-hot split on {c['name']!r} but the file has no category "
                    "texts (features_info.cat_features_hash, only in JSON saved with pool=); "
                    "re-save with model.save_model(path, format='json', pool=train_pool)")
            if h not in feats.hashes:
                raise Fail(f"{path}.value", f"hash {h} of feature {c['name']!r} is not in "
                                            "features_info.cat_features_hash")
            labels = used_labels.setdefault(c["flat"], {})
            labels[h] = feats.hashes[h]
            return Splits.onehot(c["flat"], h)
        if kind == "OnlineCtr":
            names = feats.ctr_names(split)
            raise UnsupportedFeatureError(
                _WHO, f"CatBoost CTR (target statistics) splits on categorical feature(s) "
                      f"{', '.join(repr(n) for n in names) or '?'} ({path}); retrain with "
                      "one_hot_max_size above their number of categories")
        raise UnsupportedFeatureError(_WHO, f"CatBoost {kind!r} splits ({path})")

    return read


def _objective(info: dict, dim: int) -> tuple[Target, str]:
    params = info.get("params", {}) if isinstance(info, dict) else {}
    loss = params.get("loss_function", {}) if isinstance(params, dict) else {}
    name = loss.get("type") if isinstance(loss, dict) else None
    if not isinstance(name, str):
        raise Fail("model_info.params.loss_function.type", "missing (cannot tell the objective)")
    classes = _classes(info.get("class_params"))
    if name in _SIGMOID and dim == 1:
        return Target("classification", classes=classes or (0, 1)), "sigmoid"
    if name in ("MultiClass", "MultiClassOneVsAll") and dim > 1:
        link = "softmax" if name == "MultiClass" else "sigmoid"  # OneVsAll: one sigmoid per class
        return Target("classification", classes=classes or tuple(range(dim))), link
    if name in _IDENTITY and dim == 1:
        return Target("regression"), "identity"
    if name == "MultiRMSE":
        return Target("regression", n_outputs=dim), "identity"
    raise UnsupportedFeatureError(_WHO, f"the CatBoost objective {name!r} with {dim} output(s) "
                                        "(supported: RMSE and other identity regressions, "
                                        "MultiRMSE, Logloss, CrossEntropy, MultiClass, "
                                        "MultiClassOneVsAll)")


def _classes(params) -> tuple:
    if not isinstance(params, dict) or not params.get("class_names"):
        return ()
    names = params["class_names"]
    if not isinstance(names, list):
        raise Fail("model_info.class_params.class_names", "expected an array")
    if params.get("class_to_label", list(range(len(names)))) != list(range(len(names))):
        raise Fail("model_info.class_params", "class_to_label is not 0, 1, ... (unsupported)")
    out = []
    for c in names:
        if isinstance(c, bool) or (isinstance(c, float) and c.is_integer()):
            c = int(c)  # False / True labels become 0 / 1 (equal in Python)
        if isinstance(c, bool) or not isinstance(c, (str, int)):
            raise UnsupportedFeatureError(_WHO, f"class label {c!r} (labels must be text or integers)")
        out.append(c)
    return tuple(out)


def _bias(doc: dict, dim: int) -> tuple[float, ...] | None:
    """The bias to add after the trees, or None when CatBoost adds nothing."""
    sb = doc.get("scale_and_bias", [1.0, [0.0]])
    if not (isinstance(sb, list) and len(sb) == 2):
        raise Fail("scale_and_bias", "expected [scale, bias]")
    scale = number(sb[0], "scale_and_bias[0]")
    bias = sb[1] if isinstance(sb[1], list) else [sb[1]]
    bias = [number(b, f"scale_and_bias[1][{k}]") for k, b in enumerate(bias)]
    if scale != 1.0:
        raise UnsupportedFeatureError(
            _WHO, f"CatBoost scale_and_bias with scale {scale!r}: CatBoost multiplies the sum "
                  "of all trees, which the IR's per-tree weights do not round the same way")
    if len(bias) not in (1, dim) or not all(math.isfinite(b) for b in bias):
        raise Fail("scale_and_bias[1]", f"expected 1 or {dim} finite numbers")
    if all(b == 0 for b in bias):
        return None
    return tuple(bias * dim if len(bias) == 1 else bias)


def from_dict(doc, *, source: str = "", library: str = "catboost") -> Model:
    """Model from the parsed CatBoost JSON document."""
    try:
        return _convert(doc, library)
    except Fail as e:
        where = f"{source}: " if source else ""
        raise ModelFormatError(f"{where}{e}") from None
    except UnsupportedFeatureError as e:
        raise e.at(source) from None
    except ModelFormatError as e:
        if source:
            raise ModelFormatError(f"{source}: {e}") from None
        raise


def _convert(doc, library: str) -> Model:
    if not isinstance(doc, dict):
        raise Fail("$", "expected a JSON object")
    feats = _Features(_key(doc, "features_info", "$", dict), "features_info")
    info = doc.get("model_info", {})
    used_labels: dict[int, dict[int, str]] = {}
    read = _split_reader(feats, used_labels)
    if "oblivious_trees" in doc:
        raw_trees = _key(doc, "oblivious_trees", "$", list)
        first = raw_trees[0] if raw_trees else {}
        n_leaves = symmetric_leaf_count(first, "oblivious_trees[0]")
        values = _key(first, "leaf_values", "oblivious_trees[0]", list, [])
        dim = max(1, len(values) // n_leaves) if n_leaves else 1
    elif "trees" in doc:
        raw_trees = _key(doc, "trees", "$", list)
        dim = _tree_dim(raw_trees)
    else:
        raise Fail("$", "neither 'oblivious_trees' nor 'trees': not a CatBoost JSON model")
    target, link = _objective(info, dim)
    trees = []
    for t, raw in enumerate(raw_trees):
        if "oblivious_trees" in doc:
            trees.append(oblivious_tree(raw, f"oblivious_trees[{t}]", dim, read))
        else:
            trees.append(unbalanced_tree(raw, f"trees[{t}]", dim, read))
    bias = _bias(doc, dim)
    if bias is not None:
        trees.append(Tree(nodes=(Leaf(bias),), comment="CatBoost scale_and_bias: the bias, added last"))
    features = []
    for flat in range(feats.n_flat):
        kind, name = feats.flat.get(flat, ("numeric", f"f{flat}"))
        if kind == "categorical":
            labels = tuple(sorted(used_labels.get(flat, {}).values()))
            features.append(Feature(name, "categorical", labels))
        else:
            features.append(Feature(name))
    for flat, hs in used_labels.items():
        if len(set(hs.values())) != len(hs):
            raise Fail("features_info.cat_features_hash", f"two hashes of feature "
                                                          f"{feats.flat[flat][1]!r} have one text")
    codes = {flat: {h: sorted(hs.values()).index(text) for h, text in hs.items()}
             for flat, hs in used_labels.items()}
    trees = [Splits.resolve(tree, codes) for tree in trees]
    params = _params(info)
    model = Model(
        features=tuple(features), target=target, trees=tuple(trees), base_score=(0.0,) * dim,
        aggregation="sum", link=link, dtype="float64",
        provenance=Provenance(algorithm="catboost", params=tuple(sorted(params.items())),
                              library=library, n_features=feats.n_flat))
    return validate(model)


def _tree_dim(raw_trees: list) -> int:
    """Outputs per leaf of a non-symmetric model: the length of its first leaf's value."""
    node = raw_trees[0] if raw_trees else {}
    for _ in range(100_000):
        if not isinstance(node, dict) or "split" not in node:
            break
        node = node.get("left")
    value = node.get("value") if isinstance(node, dict) else None
    return len(value) if isinstance(value, list) and value else 1


def _params(info) -> dict:
    out: dict[str, object] = {}
    params = info.get("params", {}) if isinstance(info, dict) else {}
    if not isinstance(params, dict):
        return out
    loss = params.get("loss_function", {})
    if isinstance(loss, dict) and isinstance(loss.get("type"), str):
        out["loss_function"] = loss["type"]
    boosting = params.get("boosting_options", {})
    tree = params.get("tree_learner_options", {})
    for src, key in ((boosting, "iterations"), (boosting, "learning_rate"), (tree, "depth"),
                     (tree, "grow_policy")):
        v = src.get(key) if isinstance(src, dict) else None
        if isinstance(v, (int, float, str)) and not isinstance(v, bool):
            out[key] = v
    return out


def loads(data, *, source: str = "", library: str = "catboost") -> Model:
    """Model from CatBoost JSON text (``str`` or ``bytes``)."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ModelFormatError(f"{source or 'CatBoost model'}: not UTF-8 JSON") from None
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as e:
        raise ModelFormatError(f"{source or 'CatBoost model'}: not JSON ({e})") from None
    except RecursionError:
        raise ModelFormatError(f"{source or 'CatBoost model'}: JSON nested too deeply") from None
    return from_dict(doc, source=source, library=library)


def load(source) -> Model:
    """Model from a CatBoost JSON or ``.cbm`` file (a path), its text or bytes, or the parsed
    JSON dict. ``.cbm`` files are read without the catboost library (``catboost_cbm.py``)."""
    if isinstance(source, dict):
        return from_dict(source)
    if isinstance(source, bytes):
        return _loads_checked(source, "")
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return loads(source)
    path = Path(source)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ModelFormatError(f"cannot read CatBoost model {str(path)!r}: {e.strerror or e}") from None
    return _loads_checked(raw, str(path))


def _loads_checked(raw: bytes, source: str) -> Model:
    if raw[:4] == catboost_cbm.MAGIC:
        return from_dict(catboost_cbm.to_document(raw, source), source=source)
    return loads(raw, source=source)


def from_catboost(model, *, pool=None) -> Model:
    """Model from a fitted CatBoost model (``CatBoost``, ``CatBoostClassifier``,
    ``CatBoostRegressor``), saved to a temporary JSON file. Models with one-hot categorical
    splits need ``pool`` (the training Pool, or any Pool holding every category the splits
    use) so that the file carries the category texts."""
    import catboost

    if not isinstance(model, catboost.CatBoost):
        raise TypeError(f"expected a fitted CatBoost model, got {type(model).__name__}")
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        model.save_model(tmp, format="json", pool=pool)
        raw = Path(tmp).read_bytes()
    finally:
        os.unlink(tmp)
    return loads(raw, library=f"catboost {catboost.__version__}")
