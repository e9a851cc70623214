"""A saved Spark ML ``PipelineModel`` whose last stage is a tree model (``sparkml.load`` calls
this for the pipeline's directory).

The directory holds ``metadata/part-*`` (class ``PipelineModel``, ``paramMap.stageUids``) and
``stages/<i>_<uid>/``, one saved stage each. Read here, and what Spark 4 computes with them:

* ``VectorAssembler`` (exactly one): its ``inputCols`` name the tree model's features, in order;
  each must be one number (a vector input would spread over several features: refused). With
  ``handleInvalid`` "error" or "skip" Spark fails on, or drops, a row with a missing number; the
  IR predicts such a row as "keep" does (NaN into the trees).
* ``StringIndexerModel``: maps each string of ``inputCol(s)`` to its index in the saved
  ``labelsArray`` (the order ``stringOrderType`` chose when fitting). An indexed column that the
  assembler passes on becomes an IR categorical feature named after the *string* column, whose
  categories are the labels, so the category code is the index Spark computes. With
  ``handleInvalid="keep"`` an unseen string and a null both become index ``len(labels)``, a code
  the trees split on like any other: each split on the feature then sends unseen and missing
  values where it sends that code. With "error"/"skip" Spark fails on, or drops, such rows; the
  IR routes them as the tree model alone does (``sparkml``). An indexer of the tree model's
  ``labelCol`` gives the classes their strings (Spark's ``prediction`` is the index into them).
* Any other stage, or an indexer whose output neither feeds the assembler nor is the label, is
  refused naming the stage.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rulegen.errors import ModelFormatError, UnsupportedFeatureError
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Feature,
    Model,
    Split,
    Target,
    Tree,
)
from rulegen.ir.validate import validate

_FEATURE = "org.apache.spark.ml.feature."
ASSEMBLER = _FEATURE + "VectorAssembler"
INDEXER = _FEATURE + "StringIndexerModel"


def load(path: Path, meta: dict, forest: str) -> Model:
    from rulegen.importers import sparkml

    uids = sparkml._dict(meta.get("paramMap")).get("stageUids")
    if not isinstance(uids, list) or not uids or not all(isinstance(u, str) for u in uids):
        raise ModelFormatError(f"{path / 'metadata'}: paramMap.stageUids should list the stages")
    stages = []
    for i, uid in enumerate(uids):
        where = path / "stages" / f"{i}_{uid}"
        stages.append((where, sparkml._metadata(where)))
    last, last_meta = stages[-1]
    if last_meta.get("class") not in sparkml.CLASSES:
        raise _refuse(path, len(stages) - 1, last_meta, "the last stage is not a tree model "
                      "rulegen reads (DecisionTree, RandomForest or GBT)")
    model = sparkml.load(last, forest=forest)
    params = {**sparkml._dict(last_meta.get("defaultParamMap")),
              **sparkml._dict(last_meta.get("paramMap"))}
    features_col, label_col = params.get("featuresCol"), params.get("labelCol")

    assembler = None
    indexed: dict[str, tuple] = {}  # output column -> (input column, labels, keep, stage index)
    for i, (where, m) in enumerate(stages[:-1]):
        cls = m.get("class")
        p = sparkml._dict(m.get("paramMap"))
        if cls == ASSEMBLER:
            if assembler is not None:
                raise _refuse(path, i, m, "a second VectorAssembler")
            assembler = (i, m, p)
        elif cls == INDEXER:
            for out, entry in _indexer_columns(where, i, m, path).items():
                if out in indexed:
                    raise _refuse(path, i, m, f"column {out!r} is indexed twice")
                indexed[out] = entry
        else:
            raise _refuse(path, i, m, "only VectorAssembler and StringIndexer stages can come "
                          "before the tree model")
    if assembler is None:
        raise UnsupportedFeatureError("rulegen IR", "a pipeline without a VectorAssembler (its "
                                      "inputCols name the features)", str(path))
    i, m, p = assembler
    cols = p.get("inputCols")
    if p.get("outputCol") != features_col:
        raise _refuse(path, i, m, f"its outputCol {p.get('outputCol')!r} is not the tree model's "
                      f"featuresCol {features_col!r}")
    if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
        raise ModelFormatError(f"{path}: stages[{i}] (VectorAssembler): no inputCols list")
    if len(cols) != len(model.features):
        raise _refuse(path, i, m, f"{len(cols)} input columns for {len(model.features)} "
                      "features (a vector column among them spreads over several)")
    for out, (_src, _labels, _keep, k) in indexed.items():
        if out not in cols and out != label_col:
            raise _refuse(path, k, stages[k][1], f"its output {out!r} feeds neither the "
                          "VectorAssembler nor the tree model's label")
    return _rename(model, cols, indexed, label_col, path, stages)


def _refuse(path: Path, i: int, meta: dict, why: str) -> UnsupportedFeatureError:
    cls = str(meta.get("class", "?")).rsplit(".", 1)[-1]
    return UnsupportedFeatureError("rulegen IR", f"stages[{i}] ({cls} {meta.get('uid', '?')}): "
                                   f"{why}", str(path))


def _indexer_columns(where: Path, i: int, meta: dict, path: Path) -> dict[str, tuple]:
    from rulegen.importers import sparkml

    p = {**sparkml._dict(meta.get("defaultParamMap")), **sparkml._dict(meta.get("paramMap"))}
    keep = p.get("handleInvalid", "error") == "keep"
    pm = sparkml._dict(meta.get("paramMap"))
    if "inputCols" in pm:
        ins, outs = pm.get("inputCols"), pm.get("outputCols")
    else:
        ins, outs = [p.get("inputCol")], [p.get("outputCol")]
    rows = sparkml._parquet_rows(where / "data")
    row = rows[0] if len(rows) == 1 else {}
    arrays = row.get("labelsArray", [row["labels"]] if isinstance(row.get("labels"), list) else None)
    ok = (isinstance(ins, list) and isinstance(outs, list) and isinstance(arrays, list)
          and len(ins) == len(outs) == len(arrays)
          and all(isinstance(c, str) for c in ins + outs)
          and all(isinstance(a, list) and a and all(isinstance(s, str) for s in a)
                  and len(set(a)) == len(a) for a in arrays))
    if not ok:
        raise ModelFormatError(f"{where}: a StringIndexer needs input and output columns and one "
                               "list of distinct labels per column")
    return {o: (c, tuple(a), keep, i) for c, o, a in zip(ins, outs, arrays)}


def _rename(model: Model, cols: list, indexed: dict, label_col, path: Path, stages) -> Model:
    features = list(model.features)
    keep_bucket: dict[int, int] = {}  # feature -> the code unseen strings and nulls get
    for j, col in enumerate(cols):
        if col not in indexed:
            features[j] = dataclasses.replace(features[j], name=col)
            continue
        src, labels, keep, k = indexed[col]
        want = len(labels) + keep
        f = features[j]
        if f.kind == "categorical" and len(f.categories) != want:
            raise _refuse(path, k, stages[k][1], f"the tree model splits {col!r} into "
                          f"{len(f.categories)} categories, the indexer gives {want}")
        if f.kind != "categorical" and _splits_on(model, j):
            raise _refuse(path, k, stages[k][1], f"the tree model splits {col!r} as a number "
                          "(it lost the indexer's nominal metadata)")
        features[j] = Feature(src, "categorical", labels)
        if keep:
            keep_bucket[j] = len(labels)
    names = [f.name for f in features]
    if len(set(names)) != len(names):
        raise UnsupportedFeatureError("rulegen IR", f"two features named alike in {names}",
                                      str(path))
    target = model.target
    if label_col in indexed and target.task == "classification":
        src, labels, _keep, k = indexed[label_col]
        if len(labels) != len(target.classes):
            raise _refuse(path, k, stages[k][1], f"{len(labels)} labels for "
                          f"{len(target.classes)} classes")
        target = Target("classification", src, labels)
    elif isinstance(label_col, str):
        target = dataclasses.replace(target, name=label_col)
    trees = tuple(_route_bucket(t, keep_bucket) for t in model.trees) if keep_bucket else model.trees
    return validate(dataclasses.replace(model, features=tuple(features), target=target,
                                        trees=trees))


def _splits_on(model: Model, j: int) -> bool:
    return any(isinstance(n, Split) and getattr(n.test, "feature", None) == j
               for t in model.trees for n in t.nodes)


def _route_bucket(tree: Tree, bucket: dict[int, int]) -> Tree:
    """Splits on a "keep" feature: its extra code leaves the set, and unseen and missing values
    go where that code went."""
    nodes = list(tree.nodes)
    for i, n in enumerate(nodes):
        if not (isinstance(n, Split) and isinstance(n.test, CategoricalTest)
                and n.test.feature in bucket):
            continue
        extra = bucket[n.test.feature]
        side = 0 if extra in n.test.categories else 1
        codes = tuple(c for c in n.test.categories if c != extra)
        test, children = CategoricalTest(n.test.feature, codes), n.children
        if not codes:  # only the extra code went left: test the labels, sides swapped
            test = CategoricalTest(n.test.feature, tuple(range(extra)))
            children, side = children[::-1], 1
        nodes[i] = dataclasses.replace(n, test=test, children=children,
                                       missing=DefaultChild(side), unseen=side)
    return dataclasses.replace(tree, nodes=tuple(nodes))
