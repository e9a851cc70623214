"""Import LightGBM models (the text format of ``Booster.save_model`` / ``model_to_string``).

    from rulegen.importers import lightgbm
    model = lightgbm.load("model.txt")          # a path, or the model text itself
    model = lightgbm.from_booster(booster)       # a Booster or a fitted LGBMModel

The IR reproduces ``Booster.predict(X, raw_score=True)`` bit for bit on dense float64 rows, and
``predict(X)`` too (same ``exp``). How (see also ``lightgbm_tree.py``):

* raw scores: LightGBM starts every output at 0.0 and adds the trees in file order, in double;
  tree ``i`` feeds output ``i % num_tree_per_iteration``. Leaf values already hold the learning
  rate and, for the first tree, the initial score (``boost_from_average``), so ``base_score`` is
  0 and every ``Tree.weight`` is 1. ``average_output`` (``boosting=rf``) divides by the number of
  iterations before the link: aggregation ``"mean"`` (one output per iteration only), so the IR
  raw score is LightGBM's ``raw_score`` (the plain sum there) divided by the iterations.
* inputs: LightGBM's dense prediction path turns ``|x| <= kZeroThreshold`` into 0.0 first; the
  IR reproduces that (``lightgbm_tree.py``). Sparse (CSR) input skips that step in LightGBM, so
  it can differ from dense input for such tiny values; the IR follows the dense path.
* objectives: binary / cross_entropy -> sigmoid (only with ``sigmoid:1``: LightGBM computes
  ``1/(1+exp(-sigmoid*raw))`` and the IR has no scale), multiclass -> softmax (same formula and
  summation order as LightGBM's), multiclassova -> per-class sigmoid (``sigmoid:1``),
  poisson / gamma / tweedie -> exp, regression (not ``sqrt``) and the other regression or ranking
  objectives -> identity.
* categorical features, ``categorical="category"`` (default): a categorical IR feature whose
  labels are the integer codes ``0..max`` (``max`` = largest code in ``feature_infos`` or in any
  bitset); bitset codes go left, NaN, negative, unseen codes go right. Exact for every integer
  code; a non-integer value is *unseen* in the IR (right), whereas LightGBM truncates it to an
  integer. ``categorical="numeric"`` keeps such features numeric and compiles each bitset to
  interval tests on the truncated value: exact for every float64 input.
"""

from __future__ import annotations

import json
import math
import re
from itertools import pairwise
from pathlib import Path

from rulegen.errors import ModelFormatError, UnsupportedFeatureError
from rulegen.importers.lightgbm_tree import LgbTree, compile_tree
from rulegen.ir.nodes import Feature, Model, Provenance, Target
from rulegen.ir.validate import validate

__all__ = ["from_booster", "load", "loads"]

_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf", re.IGNORECASE)
_INT = re.compile(r"[+-]?\d+")
_IDENTITY = {"regression", "regression_l1", "huber", "fair", "quantile", "mape", "lambdarank",
             "rank_xendcg", "custom", "none"}
_EXP = {"poisson", "gamma", "tweedie"}
_TREE_KEYS = ("num_leaves", "split_feature", "threshold", "decision_type", "left_child",
              "right_child", "leaf_value")


class _Text:
    """The model text as numbered lines; every error names a line (1-based)."""

    def __init__(self, text: str, source: str):
        self.lines = text.splitlines()
        self.source = source

    def error(self, line: int, msg: str) -> ModelFormatError:
        where = f"{self.source}: " if self.source else ""
        return ModelFormatError(f"{where}line {line}: {msg}")

    def numbers(self, key: str, entry: tuple[int, str], kind: str) -> tuple:
        line, value = entry
        pattern, conv = (_INT, int) if kind == "int" else (_FLOAT, float)
        out = []
        for tok in value.split(" ") if value else ():
            if not pattern.fullmatch(tok):
                raise self.error(line, f"{key}: {tok!r} is not {'an integer' if kind == 'int' else 'a number'}")
            out.append(conv(tok))
        return tuple(out)


def _sections(doc: _Text) -> tuple[dict, list[tuple[int, dict]]]:
    """Header {key: (line, value)} and the ``Tree=`` sections [(line, {key: (line, value)})]."""
    lines = doc.lines
    if not lines or lines[0].strip() != "tree":
        raise doc.error(1, "not a LightGBM text model (the first line should be 'tree')")
    header: dict[str, tuple[int, str]] = {}
    trees: list[tuple[int, dict]] = []
    current = header
    for i, raw in enumerate(lines[1:], start=2):
        line = raw.strip()
        if line == "end of trees":
            break
        if not line:
            continue
        key, eq, value = line.partition("=")
        if key == "Tree":
            if not _INT.fullmatch(value) or int(value) != len(trees):
                raise doc.error(i, f"expected 'Tree={len(trees)}', got {line!r}")
            current = {}
            trees.append((i, current))
        elif key in current:
            raise doc.error(i, f"{key!r} appears twice")
        else:
            current[key] = (i, value if eq else "")
    else:
        raise doc.error(len(lines), "the text ends before 'end of trees' (truncated model?)")
    if not trees:
        raise doc.error(i, "the model has no 'Tree=' sections")
    return header, trees


def _get(doc: _Text, section: dict, key: str, line: int, what: str) -> tuple[int, str]:
    if key not in section:
        raise doc.error(line, f"{what} has no '{key}=' line")
    return section[key]


def _one_int(doc: _Text, section: dict, key: str, line: int, what: str) -> int:
    vals = doc.numbers(key, _get(doc, section, key, line, what), "int")
    if len(vals) != 1:
        raise doc.error(section[key][0], f"{key}: expected one integer")
    return vals[0]


def _parse_tree(doc: _Text, line: int, sec: dict, n_features: int, index: int) -> LgbTree:
    what = f"Tree={index}"
    n_leaves = _one_int(doc, sec, "num_leaves", line, what)
    if n_leaves < 1:
        raise doc.error(sec["num_leaves"][0], "num_leaves must be at least 1")
    if "is_linear" in sec and doc.numbers("is_linear", sec["is_linear"], "int") not in ((), (0,)):
        raise UnsupportedFeatureError("rulegen IR", "LightGBM linear trees (linear_tree=true)")
    arrays = {}
    for key in _TREE_KEYS[1:]:
        kind = "float" if key in ("threshold", "leaf_value") else "int"
        entry = sec.get(key, (line, "")) if n_leaves == 1 else _get(doc, sec, key, line, what)
        vals = doc.numbers(key, entry, kind)
        want = n_leaves if key == "leaf_value" else n_leaves - 1
        if len(vals) != want:
            raise doc.error(entry[0], f"{key}: expected {want} values for {n_leaves} leaves, "
                                         f"got {len(vals)}")
        arrays[key] = vals
    for k, v in enumerate(arrays["leaf_value"]):
        if not math.isfinite(v):
            raise doc.error(sec["leaf_value"][0], f"leaf_value[{k}] is {v!r}")
    counts = {}
    for key, want in (("leaf_count", n_leaves), ("internal_count", n_leaves - 1)):
        vals = doc.numbers(key, sec[key], "int") if key in sec else ()
        counts[key] = vals if len(vals) == want else None
    num_cat = _one_int(doc, sec, "num_cat", line, what) if "num_cat" in sec else 0
    cat_sets: list[tuple[int, ...]] = []
    if num_cat:
        bounds = doc.numbers("cat_boundaries", _get(doc, sec, "cat_boundaries", line, what), "int")
        words = doc.numbers("cat_threshold", _get(doc, sec, "cat_threshold", line, what), "int")
        bl = sec["cat_boundaries"][0]
        if len(bounds) != num_cat + 1 or bounds[0] != 0 or bounds[-1] != len(words) or any(
                b > c for b, c in pairwise(bounds)):
            raise doc.error(bl, f"cat_boundaries: {num_cat + 1} increasing offsets from 0 to "
                                f"{len(words)} expected")
        if any(not 0 <= w < 2 ** 32 for w in words):
            raise doc.error(sec["cat_threshold"][0], "cat_threshold: words must be 32-bit unsigned")
        for c in range(num_cat):
            chunk = words[bounds[c]:bounds[c + 1]]
            cat_sets.append(tuple(32 * j + b for j, w in enumerate(chunk) for b in range(32) if w >> b & 1))
    seen = [False] * (2 * n_leaves)
    for node in range(n_leaves - 1):
        dl = sec["decision_type"][0]
        dt = arrays["decision_type"][node]
        if not 0 <= dt < 16 or (dt >> 2) & 3 == 3:
            raise doc.error(dl, f"decision_type[{node}]: {dt} is not a LightGBM decision type")
        f = arrays["split_feature"][node]
        if not 0 <= f < n_features:
            raise doc.error(sec["split_feature"][0], f"split_feature[{node}]: feature {f} out of range")
        thr = arrays["threshold"][node]
        if dt & 1 and not (math.isfinite(thr) and thr == int(thr) and 0 <= thr < num_cat):
            raise doc.error(sec["threshold"][0], f"threshold[{node}]: {thr!r} is not a bitset index "
                                                 f"(num_cat={num_cat})")
        for key in ("left_child", "right_child"):
            c = arrays[key][node]
            slot = c if c >= 0 else n_leaves - 1 + ~c
            if not (0 < c < n_leaves - 1 or 0 <= ~c < n_leaves) or seen[slot]:
                raise doc.error(sec[key][0], f"{key}[{node}]: {c} is not a fresh node "
                                             "(out of range or reached twice)")
            seen[slot] = True
    if n_leaves > 1 and not all(seen[1:2 * n_leaves - 1]):
        raise doc.error(line, f"{what}: some nodes are not reachable from the root")
    return LgbTree(arrays["split_feature"], arrays["threshold"], arrays["decision_type"],
                   arrays["left_child"], arrays["right_child"], arrays["leaf_value"],
                   tuple(cat_sets), counts["leaf_count"], counts["internal_count"])


def _objective(doc: _Text, header: dict, n_per_iter: int, classes) -> tuple[Target, str]:
    line, value = header.get("objective", (0, "custom"))
    name, *args = value.split(" ") if value else ("custom",)
    opts = dict(a.partition(":")[::2] for a in args)
    sigmoid = opts.get("sigmoid", "1")
    if name in ("binary", "multiclassova") and (not _FLOAT.fullmatch(sigmoid) or float(sigmoid) != 1.0):
        raise UnsupportedFeatureError(
            "rulegen IR", f"LightGBM objective {value!r}: the IR sigmoid has no scale parameter "
                          "(only sigmoid:1 is exact)")
    multi = name in ("multiclass", "softmax", "multiclassova")
    if multi != (n_per_iter > 1) or (multi and opts.get("num_class", str(n_per_iter)) != str(n_per_iter)):
        raise doc.error(line, f"objective {value!r} does not fit num_tree_per_iteration={n_per_iter}")
    if name == "binary":
        return Target("classification", classes=tuple(classes or (0, 1))), "sigmoid"
    if multi:
        return (Target("classification", classes=tuple(classes or range(n_per_iter))),
                "softmax" if name != "multiclassova" else "sigmoid")
    if name == "cross_entropy":
        return Target("regression"), "sigmoid"
    if name in _EXP:
        return Target("regression"), "exp"
    if name in _IDENTITY and "sqrt" not in args:
        return Target("regression"), "identity"
    raise UnsupportedFeatureError("rulegen IR", f"the LightGBM objective {value!r} (line {line})")


def _features(doc: _Text, header: dict, n_features: int, trees: list[LgbTree], categorical: str):
    line = header.get("max_feature_idx", (0, ""))[0]
    if "feature_names" in header:
        fl, value = header["feature_names"]
        names = value.split(" ")
        if len(names) != n_features:
            raise doc.error(fl, f"feature_names: {len(names)} names for {n_features} features")
    else:
        names = [f"Column_{i}" for i in range(n_features)]
    infos = header.get("feature_infos", (0, ""))[1].split(" ")
    cat_features: dict[int, int] = {}
    for i, info in enumerate(infos if len(infos) == n_features else ()):
        if info and info != "none" and not info.startswith("["):
            codes = [int(c) for c in info.split(":") if _INT.fullmatch(c)]
            cat_features[i] = max([c for c in codes if c >= 0], default=0)
    numeric_split = set()
    for t in trees:
        for node, f in enumerate(t.split_feature):
            if t.decision_type[node] & 1:
                codes = t.cat_sets[int(t.threshold[node])]
                cat_features[f] = max(cat_features.get(f, 0), max(codes, default=0))
            else:
                numeric_split.add(f)
    if numeric_split & set(cat_features):
        f = min(numeric_split & set(cat_features))
        raise doc.error(line, f"feature {names[f]!r} has both numeric and categorical splits")
    labels = _pandas_categories(doc, names, cat_features)
    if categorical == "numeric":
        if labels:
            f = min(labels)
            raise UnsupportedFeatureError(
                "rulegen IR", f"categorical='numeric' for a model trained on pandas categories "
                              f"(feature {names[f]!r} reads labels such as {labels[f][0]!r}, not numbers)")
        return tuple(Feature(n) for n in names), {}
    codes = {f: tuple(range(m + 1)) for f, m in cat_features.items()}
    feats = tuple(Feature(n, "categorical", labels.get(i, codes[i])) if i in codes else Feature(n)
                  for i, n in enumerate(names))
    return feats, codes


def _pandas_categories(doc: _Text, names: list[str], cat_features: dict[int, int]) -> dict:
    """{feature: its category labels} from the ``pandas_categorical:`` line LightGBM writes
    after a model trained on a DataFrame: one list per ``category`` column, in column order,
    where code i means the list's i-th label (LightGBM predicts on a DataFrame by those codes).
    Without the line (or ``null``) the features take their integer codes as labels."""
    found = [(i, ln) for i, ln in enumerate(doc.lines, start=1) if ln.startswith("pandas_categorical:")]
    if not found:
        return {}
    line, text = found[-1]
    try:
        lists = json.loads(text.partition(":")[2])
    except ValueError as e:
        raise doc.error(line, f"pandas_categorical: not JSON ({e})") from None
    if lists is None or lists == []:
        return {}
    if not isinstance(lists, list) or not all(isinstance(x, list) for x in lists):
        raise doc.error(line, "pandas_categorical: expected a list of category lists")
    feats = sorted(cat_features)
    if len(lists) != len(feats):
        # LightGBM keeps ordered category columns as numbers and takes int columns named in
        # categorical_feature: the file no longer says which column each list belongs to
        raise doc.error(line, f"pandas_categorical lists {len(lists)} category columns but the "
                              f"model has {len(feats)} categorical features, so rulegen cannot tell "
                              "which labels belong to which feature; retrain with every categorical "
                              "feature an unordered pandas 'category' column, or with integer codes")
    out = {}
    for f, cats in zip(feats, lists):
        if cat_features[f] >= len(cats):
            raise doc.error(line, f"pandas_categorical: feature {names[f]!r} uses code "
                                  f"{cat_features[f]} but lists {len(cats)} categories")
        out[f] = tuple(_category(c, names[f], line) for c in cats)
        if len(set(out[f])) != len(out[f]):
            raise doc.error(line, f"pandas_categorical: feature {names[f]!r} lists a category twice")
    return out


def _category(c, feature: str, line: int):
    if isinstance(c, float) and c.is_integer():
        c = int(c)
    if isinstance(c, str) or (isinstance(c, int) and not isinstance(c, bool)):
        return c
    raise UnsupportedFeatureError(
        "rulegen IR", f"category {c!r} of feature {feature!r} (line {line}): category labels must "
                      "be text or integers")


def loads(text: str, *, categorical: str = "category", classes=None, source: str = "",
          max_nodes: int = 200_000, library: str = "lightgbm") -> Model:
    """Model for the LightGBM model ``text``. ``classes`` overrides the class labels
    (default 0..k-1); ``max_nodes`` caps the IR nodes of one tree (see lightgbm_tree.py)."""
    if categorical not in ("category", "numeric"):
        raise ValueError("categorical must be 'category' or 'numeric'")
    try:
        return _loads(text, categorical, classes, source, max_nodes, library)
    except UnsupportedFeatureError as e:
        raise e.at(source) from None


def _loads(text: str, categorical: str, classes, source: str, max_nodes: int, library: str) -> Model:
    doc = _Text(text, source)
    header, sections = _sections(doc)
    hl = sections[0][0]
    n_features = _one_int(doc, header, "max_feature_idx", hl, "the header") + 1
    n_class = _one_int(doc, header, "num_class", hl, "the header") if "num_class" in header else 1
    n_per_iter = (_one_int(doc, header, "num_tree_per_iteration", hl, "the header")
                  if "num_tree_per_iteration" in header else n_class)
    if n_features < 1 or n_per_iter < 1 or n_per_iter != n_class:
        raise doc.error(hl, f"inconsistent header: {n_features} features, num_class={n_class}, "
                            f"num_tree_per_iteration={n_per_iter}")
    if len(sections) % n_per_iter:
        raise doc.error(hl, f"{len(sections)} trees is not a whole number of iterations of "
                            f"{n_per_iter} trees")
    if "tree_sizes" in header and len(header["tree_sizes"][1].split(" ")) != len(sections):
        raise doc.error(header["tree_sizes"][0], f"tree_sizes lists "
                        f"{len(header['tree_sizes'][1].split(' '))} trees, the file has {len(sections)}")
    lgb_trees = [_parse_tree(doc, line, sec, n_features, i) for i, (line, sec) in enumerate(sections)]
    target, link = _objective(doc, header, n_per_iter, classes)
    if target.task == "classification" and len(target.classes) != max(n_per_iter, 2):
        raise ValueError(f"{len(target.classes)} class labels for a model with "
                         f"{max(n_per_iter, 2)} classes")
    features, cat_codes = _features(doc, header, n_features, lgb_trees, categorical)
    aggregation = "sum"
    if "average_output" in header:
        if n_per_iter != 1:
            raise UnsupportedFeatureError("rulegen IR", "LightGBM random forests with several outputs "
                                          "(LightGBM divides by iterations, the IR by trees)")
        aggregation = "mean"
    trees = tuple(compile_tree(t, i % n_per_iter if n_per_iter > 1 else None, cat_codes, max_nodes)
                  for i, t in enumerate(lgb_trees))
    params = _params(doc)
    model = Model(
        features=features, target=target, trees=trees, base_score=(0.0,) * n_per_iter,
        aggregation=aggregation, link=link, dtype="float64",
        provenance=Provenance(algorithm=f"lightgbm {params.get('boosting', 'gbdt')}",
                              params=tuple(sorted(params.items())), library=library,
                              n_features=n_features))
    return validate(model)


def _params(doc: _Text) -> dict:
    """Scalar training parameters from the ``parameters:`` section (provenance only)."""
    out: dict[str, object] = {}
    for line in doc.lines:
        m = re.fullmatch(r"\[(\w+): (.*)\]", line.strip())
        if m and m.group(1) in ("boosting", "objective", "learning_rate", "num_leaves",
                                "num_iterations", "max_depth", "num_class"):
            v = m.group(2)
            out[m.group(1)] = (int(v) if _INT.fullmatch(v) else float(v) if _FLOAT.fullmatch(v)
                               and "inf" not in v.lower() else v)
    return out


def load(path_or_text, **options) -> Model:
    """Model from a LightGBM text model: a path (``str`` or ``Path``) or the text itself."""
    if isinstance(path_or_text, bytes):
        path_or_text = path_or_text.decode("utf-8")
    if isinstance(path_or_text, str) and "\n" in path_or_text:
        return loads(path_or_text, **options)
    path = Path(path_or_text)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ModelFormatError(f"cannot read LightGBM model {str(path)!r}: {e}") from None
    options.setdefault("source", str(path))
    return loads(text, **options)


def from_booster(obj, *, num_iteration: int | None = None, **options) -> Model:
    """Model from a ``lightgbm.Booster`` or a fitted ``LGBMModel`` (via ``model_to_string``;
    ``num_iteration`` as there: by default the best iteration if there is one, else all).
    An ``LGBMClassifier`` gives its ``classes_`` as the class labels."""
    import lightgbm

    booster = obj.booster_ if hasattr(obj, "booster_") else obj
    if not isinstance(booster, lightgbm.Booster):
        raise TypeError(f"expected a lightgbm Booster or LGBMModel, got {type(obj).__name__}")
    if hasattr(obj, "classes_") and "classes" not in options:
        options["classes"] = tuple(_label(c) for c in obj.classes_)
    options.setdefault("library", f"lightgbm {lightgbm.__version__}")
    return loads(booster.model_to_string(num_iteration=num_iteration), **options)


def _label(c):
    """A numpy class label as the str/int the IR takes (floats that are integers become int)."""
    if hasattr(c, "item"):
        c = c.item()
    if isinstance(c, float) and c.is_integer():
        return int(c)
    if isinstance(c, (str, int)) and not isinstance(c, bool):
        return c
    raise UnsupportedFeatureError("rulegen IR", f"class label {c!r} (labels must be str or int)")

