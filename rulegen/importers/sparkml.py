"""Import Spark ML tree models from the directory ``model.save(path)`` writes, without a JVM.

    from rulegen.importers import sparkml
    model = sparkml.load("path/to/saved_model")   # a tree model, or a PipelineModel ending in one

The directory holds ``metadata/part-00000`` (one line of JSON: class, parameters, numFeatures,
numClasses) and ``data/*.parquet`` (one row per node, ``NodeData``); ensembles also hold
``treesMetadata/*.parquet`` (tree index, tree metadata, tree weight) and their node rows carry a
``treeID``. pyarrow reads the Parquet (an optional dependency, imported here only).

How Spark 4 predicts (``ml/tree/Split.scala``, ``Node.scala``, the model classes), and the IR:

* continuous split: ``x <= threshold`` in double goes left, so NaN goes right;
* categorical split: the node stores the categories that go left and the feature's
  ``numCategories``; Spark keeps the smaller side as a set (the left one when it holds at most
  ``numCategories / 2`` categories) and tests membership, so a value outside ``0..n-1`` (unseen,
  non-integer, NaN) goes *right* when the left side is the set and *left* otherwise. The IR
  says both with ``CategoricalTest`` + ``unseen`` + ``DefaultChild``;
* node ids are pre-order (children after parents), so they are the IR's ids unchanged;
* classification leaves hold class counts (``impurityStats``); a tree's probability is each count
  divided by their sum, summed left to right (all zeros when the sum is 0). That division is done
  here, once per leaf, with the same operations;
* decision tree classifier: probability = the leaf's normalised counts (IR ``sum`` of one tree);
* random forest classifier: ``rawPrediction`` adds each tree's normalised counts in tree order
  from 0.0 (IR ``sum`` with ``forest="votes"``: bit-exact raw); ``probability`` divides that by
  its own sum, which no IR link does; ``forest="probability"`` (the default) takes the IR
  ``mean`` instead (see docs/IMPORTERS.md for the measured difference);
* random forest regressor: the tree predictions summed in order, divided by the number of trees
  (IR ``mean``, exact);
* GBT: ``margin = ddot(treePredictions, treeWeights)`` through netlib's BLAS, which on Java 16+
  is a SIMD loop with fused multiply-adds once there are as many trees as vector lanes; the IR
  sums ``weight * prediction`` in tree order (equal when the loop is not entered). The classifier's
  probability is ``1 / (1 + exp(-2 * margin))``: the 2 is folded into the tree weights (a power
  of two: exact), so the IR's raw score is twice Spark's margin.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from rulegen.errors import ModelFormatError, UnsupportedFeatureError
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Feature,
    Leaf,
    Model,
    NumericTest,
    Provenance,
    Split,
    Target,
    Tree,
)
from rulegen.ir.validate import validate

__all__ = ["is_model_dir", "load"]

_PKG = "org.apache.spark.ml."
# class -> (kind, task)
CLASSES = {
    _PKG + "classification.DecisionTreeClassificationModel": ("tree", "classification"),
    _PKG + "regression.DecisionTreeRegressionModel": ("tree", "regression"),
    _PKG + "classification.RandomForestClassificationModel": ("forest", "classification"),
    _PKG + "regression.RandomForestRegressionModel": ("forest", "regression"),
    _PKG + "classification.GBTClassificationModel": ("gbt", "classification"),
    _PKG + "regression.GBTRegressionModel": ("gbt", "regression"),
}
_PARAMS = ("impurity", "maxDepth", "maxBins", "numTrees", "maxIter", "stepSize", "lossType",
           "featureSubsetStrategy", "subsamplingRate", "minInstancesPerNode", "seed")


def is_model_dir(path) -> bool:
    """Whether ``path`` is a directory with the ``metadata/part-*`` file Spark ML writes."""
    meta = Path(path) / "metadata"
    return meta.is_dir() and any(meta.glob("part-*"))


def load(path, *, forest: str = "probability") -> Model:
    """Model for the Spark ML model saved in directory ``path``. ``forest`` chooses what a
    random forest classifier's IR outputs are: ``"probability"`` (IR ``mean``, close to Spark's
    ``probability``) or ``"votes"`` (IR ``sum``, Spark's ``rawPrediction`` bit for bit)."""
    if forest not in ("probability", "votes"):
        raise ValueError("forest must be 'probability' or 'votes'")
    path = Path(path)
    meta = _metadata(path)
    cls = meta.get("class")
    if cls == _PKG + "PipelineModel":
        from rulegen.importers import sparkml_pipeline

        return sparkml_pipeline.load(path, meta, forest)
    if cls not in CLASSES:
        names = ", ".join(c.rsplit(".", 1)[1] for c in CLASSES)
        raise UnsupportedFeatureError(
            "rulegen IR", f"the Spark ML class {cls!r} (supported: {names}, and a "
                          "PipelineModel ending in one)", str(path))
    kind, task = CLASSES[cls]
    params = {**_dict(meta.get("defaultParamMap")), **_dict(meta.get("paramMap"))}
    if "thresholds" in _dict(meta.get("paramMap")):
        raise UnsupportedFeatureError(
            "rulegen IR", "a Spark classifier with 'thresholds' set (its prediction divides the "
                          "probabilities by them); save the model without thresholds", str(path))
    n_features = _count(meta, "numFeatures", path, 1)
    n_classes = 0
    if task == "classification":
        n_classes = 2 if kind == "gbt" else _count(meta, "numClasses", path, 2)
    if kind == "gbt" and task == "classification" and params.get("lossType", "logistic") != "logistic":
        raise UnsupportedFeatureError("rulegen IR", f"the GBT loss {params['lossType']!r}", str(path))
    node_tables = _node_rows(path, kind != "tree")
    weights = _tree_weights(path, len(node_tables)) if kind != "tree" else [1.0]
    categories: dict[int, int] = {}
    leaf = _leaf_value(kind, task, n_classes)
    trees = []
    for i, rows in enumerate(node_tables):
        where = f"{path / 'data'}: tree {i}" if kind != "tree" else f"{path / 'data'}"
        trees.append(_tree(rows, where, n_features, categories, leaf))
    if kind == "gbt":
        scale = 2.0 if task == "classification" else 1.0
        trees = [Tree(t.nodes, weight=scale * w) for t, w in zip(trees, weights)]
    features = tuple(Feature(f"f{i}", "categorical", tuple(range(categories[i])))
                     if categories.get(i, -1) > 0 else Feature(f"f{i}") for i in range(n_features))
    if task == "classification":
        target = Target("classification", classes=tuple(range(n_classes)))
    else:
        target = Target("regression")
    n_raw = n_classes if task == "classification" and kind != "gbt" else 1
    aggregation = "sum"
    if kind == "forest" and (task == "regression" or forest == "probability"):
        aggregation = "mean"
    model = Model(
        features=features, target=target, trees=tuple(trees), base_score=(0.0,) * n_raw,
        aggregation=aggregation, link="sigmoid" if kind == "gbt" and n_classes else "identity",
        provenance=Provenance(
            algorithm=f"spark {cls.rsplit('.', 1)[1]}",
            params=tuple(sorted((k, v) for k, v in params.items() if k in _PARAMS
                                and isinstance(v, (str, int, float)) and not isinstance(v, bool))),
            library=f"spark {meta.get('sparkVersion', '')}".strip(), n_features=n_features))
    return validate(model)


# --- files ------------------------------------------------------------------------------------


def _metadata(path: Path) -> dict:
    if not path.is_dir():
        raise ModelFormatError(f"{path}: not a directory (a Spark ML model is the directory "
                               "model.save() wrote)")
    parts = sorted((path / "metadata").glob("part-*")) if (path / "metadata").is_dir() else []
    if not parts:
        raise ModelFormatError(f"{path}: no metadata/part-00000 file (not a Spark ML model directory)")
    try:
        line = parts[0].read_text(encoding="utf-8").strip().splitlines()[0]
        meta = json.loads(line)
    except (OSError, UnicodeDecodeError, IndexError, ValueError) as e:
        raise ModelFormatError(f"{parts[0]}: not Spark ML metadata JSON ({e})") from None
    if not isinstance(meta, dict):
        raise ModelFormatError(f"{parts[0]}: not Spark ML metadata JSON (expected an object)")
    return meta


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _count(meta: dict, key: str, path: Path, least: int) -> int:
    v = meta.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v < least:
        raise ModelFormatError(f"{path / 'metadata'}: {key} should be an integer >= {least}, "
                               f"got {v!r}")
    return v


def _parquet_rows(folder: Path) -> list[dict]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ModelFormatError(f"{folder.parent}: reading a Spark ML model needs pyarrow "
                               "(pip install pyarrow)") from None
    files = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
    if not files:
        raise ModelFormatError(f"{folder}: no .parquet files (not a Spark ML model directory, or "
                               "saved in a format other than Parquet)")
    try:
        return pa.concat_tables([pq.read_table(f) for f in files]).to_pylist()
    except (pa.ArrowException, OSError) as e:
        raise ModelFormatError(f"{folder}: cannot read the Parquet files: {e}") from None


def _node_rows(path: Path, ensemble: bool) -> list[list[dict]]:
    """Node rows per tree, in tree order."""
    folder = path / "data"
    rows = _parquet_rows(folder)
    if not ensemble:
        return [rows]
    by_tree: dict[int, list[dict]] = {}
    for r in rows:
        tid, node = r.get("treeID"), r.get("nodeData")
        if not isinstance(tid, int) or not isinstance(node, dict):
            raise ModelFormatError(f"{folder}: expected columns treeID and nodeData (an ensemble's "
                                   "node rows)")
        by_tree.setdefault(tid, []).append(node)
    if sorted(by_tree) != list(range(len(by_tree))) or not by_tree:
        raise ModelFormatError(f"{folder}: tree ids should be 0..n-1, got {sorted(by_tree)[:10]}")
    return [by_tree[i] for i in range(len(by_tree))]


def _tree_weights(path: Path, n_trees: int) -> list[float]:
    """Tree weights from treesMetadata: columns (treeID, metadata, weights), which Spark 4
    writes unnamed as (_1, _2, _3)."""
    folder = path / "treesMetadata"
    weights: dict[int, float] = {}
    for r in _parquet_rows(folder):
        vals = list(r.values())
        tid = r.get("treeID", vals[0] if vals else None)
        w = r.get("weights", vals[2] if len(vals) > 2 else None)
        if not isinstance(tid, int) or not isinstance(w, float) or tid in weights:
            raise ModelFormatError(f"{folder}: expected one (treeID, metadata, weight) row per tree")
        if not math.isfinite(w):
            raise ModelFormatError(f"{folder}: tree {tid} has weight {w!r}")
        weights[tid] = w
    if sorted(weights) != list(range(n_trees)):
        raise ModelFormatError(f"{folder}: weights for trees {sorted(weights)[:10]}, the data has "
                               f"{n_trees} trees")
    return [weights[i] for i in range(n_trees)]


# --- trees ------------------------------------------------------------------------------------


def _normalised(stats: list[float]) -> tuple[float, ...]:
    """Each count over their sum, the sum taken left to right (Spark's normalisation)."""
    total = 0.0
    for s in stats:
        total += s
    if total == 0:
        return (0.0,) * len(stats)
    return tuple(s / total for s in stats)


def _leaf_value(kind: str, task: str, n_classes: int):
    """A function (node row, where) -> the IR leaf value."""
    if task == "regression" or kind == "gbt":
        def scalar(r, where):
            v = r.get("prediction")
            if not isinstance(v, float) or not math.isfinite(v):
                raise ModelFormatError(f"{where}: leaf prediction {v!r} is not a finite number")
            return (v,)
        return scalar

    def counts(r, where):
        stats = r.get("impurityStats")
        if (not isinstance(stats, list) or len(stats) != n_classes
                or not all(isinstance(s, float) and math.isfinite(s) and s >= 0 for s in stats)):
            raise ModelFormatError(f"{where}: impurityStats should be {n_classes} class counts, "
                                   f"got {stats!r}")
        probs = _normalised(stats)
        # Spark predicts the class with the largest count; the IR the largest probability
        if kind == "tree" and probs.index(max(probs)) != stats.index(max(stats)):
            raise UnsupportedFeatureError(
                "rulegen IR", f"{where}: class counts {stats} whose largest count and largest "
                              "probability differ after rounding")
        return probs
    return counts


def _tree(rows: list[dict], where: str, n_features: int, categories: dict[int, int], leaf) -> Tree:
    """IR tree from one tree's node rows (Spark's pre-order ids are the IR ids)."""
    ids = [r.get("id") for r in rows]
    if sorted(i for i in ids if isinstance(i, int)) != list(range(len(rows))):
        raise ModelFormatError(f"{where}: node ids should be 0..{len(rows) - 1}")
    rows = sorted(rows, key=lambda r: r["id"])
    parents = [0] * len(rows)
    nodes = []
    for i, r in enumerate(rows):
        at = f"{where} node {i}"
        left, right = r.get("leftChild"), r.get("rightChild")
        samples = float(r["rawCount"]) if isinstance(r.get("rawCount"), int) and r["rawCount"] >= 0 else None
        if left == -1:
            nodes.append(Leaf(leaf(r, at), samples=samples))
            continue
        for c in (left, right):
            if not isinstance(c, int) or not i < c < len(rows) or parents[c]:
                raise ModelFormatError(f"{at}: child {c!r} is not a fresh node after it")
            parents[c] = 1
        test, missing, unseen = _split(r.get("split"), at, n_features, categories)
        nodes.append(Split(test, (left, right), missing, unseen=unseen, samples=samples))
    if len(rows) > 1 and not all(parents[1:]):
        raise ModelFormatError(f"{where}: node {parents.index(0, 1)} is not reachable from the root")
    return Tree(tuple(nodes))


def _split(s, at: str, n_features: int, categories: dict[int, int]):
    """(test, missing, unseen) for a SplitData struct."""
    if not isinstance(s, dict):
        raise ModelFormatError(f"{at}: no split")
    f, vals, n_cat = s.get("featureIndex"), s.get("leftCategoriesOrThreshold"), s.get("numCategories")
    if not isinstance(f, int) or not 0 <= f < n_features:
        raise ModelFormatError(f"{at}: split feature {f!r} out of range (numFeatures={n_features})")
    if not isinstance(vals, list) or not isinstance(n_cat, int):
        raise ModelFormatError(f"{at}: split should have leftCategoriesOrThreshold and numCategories")
    if n_cat == -1:
        if categories.get(f, -1) != -1:
            raise ModelFormatError(f"{at}: feature {f} has both continuous and categorical splits")
        if len(vals) != 1 or not isinstance(vals[0], float) or math.isnan(vals[0]):
            raise ModelFormatError(f"{at}: a continuous split needs one threshold, got {vals!r}")
        categories.setdefault(f, -1)
        return NumericTest(f, "<=", vals[0] + 0.0), DefaultChild(1), None
    if categories.get(f, n_cat) == -1:
        raise ModelFormatError(f"{at}: feature {f} has both continuous and categorical splits")
    if categories.get(f, n_cat) != n_cat or n_cat < 1:
        raise ModelFormatError(f"{at}: feature {f} has numCategories {n_cat} here and "
                               f"{categories.get(f)} elsewhere")
    codes = sorted({int(v) for v in vals if isinstance(v, float) and v.is_integer() and 0 <= v < n_cat})
    if len(codes) != len(vals):
        raise ModelFormatError(f"{at}: left categories {vals!r} are not distinct codes "
                               f"0..{n_cat - 1}")
    categories[f] = n_cat
    # Spark tests membership in the smaller side: a value outside 0..n-1 goes to the other one
    other = 1 if len(codes) <= n_cat // 2 else 0
    return CategoricalTest(f, tuple(codes)), DefaultChild(other), other
