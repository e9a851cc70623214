"""PMML 4.4 out: one tree as a TreeModel, an ensemble as a MiningModel (docs/INTERCHANGE.md).

What is written is what PMML4S (pypmml) computes, read from its source and checked by
tests/test_export_pmml.py:

- One tree: every leaf carries the model's final outputs, computed here by the evaluator's
  own combine and link functions, so any link and either dtype is exact.
- Boosting: per raw output a MiningModel ``sum`` of regression trees (the base score as a first
  one-leaf tree; tree weights folded into the leaves), chained into a RegressionModel whose
  ``logit`` / ``softmax`` / ``exp`` normalisation is the IR's link. Softmax gets its inputs
  shifted by their maximum (DerivedFields), as the IR's softmax does.
- Forests: ``average`` of per-tree probabilities, ``majorityVote`` of unweighted votes.

Float32 accumulation (XGBoost-style ``dtype="float32"`` ensembles) is refused unless
``approximate``: PMML sums in double.
"""

from __future__ import annotations

import numpy as np

from rulegen.codegen.lower import leaf_contribution, vote_index
from rulegen.exporters.pmml_xml import (
    Writer,
    check_text,
    label_text,
    number,
    refuse,
    write_tree_nodes,
)
from rulegen.ir import evaluate
from rulegen.ir.nodes import Leaf, Model, Tree
from rulegen.ir.validate import validate

NS = "http://www.dmg.org/PMML-4_4"


def export(model: Model, *, approximate: bool = False) -> tuple[bytes, list[str]]:
    """PMML 4.4 for ``model`` and the notes about what was approximated."""
    validate(model)
    notes: list[str] = []
    _check_text(model)
    n_trees = len(model.trees)  # blends and the like are refused where their node is written
    if model.target.task == "regression" and model.n_raw != 1:
        raise refuse("target", f"{model.n_raw} regression outputs (a PMML model predicts one target)")
    if n_trees == 1:
        body = _SingleTree(model).write
    else:
        if model.dtype == "float32":
            if not approximate:
                raise refuse("dtype", "float32 accumulation (PMML sums in double); pass "
                             "--approximate to write double sums")
            notes.append(_measure_float64(model))
        body = _ensemble_writer(model, approximate, notes)
        if model.link != "identity":  # one tree's leaves hold the linked outputs: exact
            notes.append(f"link {model.link}: the scorer computes exp itself (PMML4S: the JVM's "
                         "Math.exp, within 3 ulps of rulegen's outputs in rulegen's tests); "
                         "raw scores exact")
    w = Writer()
    w.lines.append('<?xml version="1.0" encoding="UTF-8"?>')
    w.open("PMML", xmlns=NS, version="4.4")
    w.open("Header", description="written by rulegen")
    w.empty("Application", name="rulegen")
    w.close("Header")
    names = _Names(model)
    _data_dictionary(w, model, names)
    body(w, names)
    w.close("PMML")
    return w.getvalue(), notes


# --- names and the data dictionary -------------------------------------------------------------


class _Names:
    """Feature names as written, the target's, and fresh names for intermediate fields."""

    def __init__(self, model: Model):
        self.features = [f.name for f in model.features]
        taken = set(self.features)
        if len(taken) != len(self.features):
            raise refuse("features", "two features with the same name")
        self.target = self.fresh(model.target.name or "target", taken)
        self.taken = taken

    @staticmethod
    def fresh(base: str, taken: set) -> str:
        name, k = base, 1
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
        return name

    def new(self, base: str) -> str:
        return self.fresh(base, self.taken)


def _check_text(model: Model) -> None:
    for j, f in enumerate(model.features):
        check_text(f.name, f"features[{j}].name")
        kinds = {type(c) for c in f.categories}
        if f.categories and not (kinds == {str} or kinds == {int}):
            raise refuse(f"features[{j}] ({f.name!r})", "categories mixing types or not text/"
                         "integers (a PMML field has one data type)")
        for k, c in enumerate(f.categories):
            check_text(label_text(c), f"features[{j}].categories[{k}]")
            if isinstance(c, int) and not -2**63 <= c < 2**63:
                raise refuse(f"features[{j}].categories[{k}]", f"the integer {c} (beyond 64 bits)")
    check_text(model.target.name, "target.name")
    kinds = {type(c) for c in model.target.classes}
    if model.target.classes and not (kinds == {str} or kinds == {int}):
        raise refuse("target.classes", "class labels mixing types or not text/integers")
    for k, c in enumerate(model.target.classes):
        check_text(label_text(c), f"target.classes[{k}]")


def _data_type(labels) -> str:
    return "integer" if labels and isinstance(labels[0], int) else "string"


def _data_dictionary(w: Writer, model: Model, names: _Names) -> None:
    w.open("DataDictionary", numberOfFields=str(len(model.features) + 1))
    for f, name in zip(model.features, names.features):
        if f.kind == "categorical":
            # No <Value> list on purpose: PMML4S encodes a listed field's other values as
            # missing, which would send unseen categories down the missing branch. Unlisted, a
            # new value gets a fresh code and is simply "not in" every set, as in the IR.
            w.empty("DataField", name=name, optype="categorical", dataType=_data_type(f.categories))
        else:
            w.empty("DataField", name=name, optype="continuous", dataType="double")
    if model.target.task == "classification":
        w.open("DataField", name=names.target, optype="categorical",
               dataType=_data_type(model.target.classes))
        for c in model.target.classes:
            w.empty("Value", value=label_text(c))
        w.close("DataField")
    else:
        w.empty("DataField", name=names.target, optype="continuous", dataType="double")
    w.close("DataDictionary")


def _mining_schema(w: Writer, model: Model, names: _Names, target: bool = True) -> None:
    w.open("MiningSchema")
    for f, name in zip(model.features, names.features):
        w.empty("MiningField", name=name,
                invalidValueTreatment="asIs" if f.kind == "categorical" else None)
    if target:
        w.empty("MiningField", name=names.target, usageType="target")
    w.close("MiningSchema")


# --- one tree: leaves hold the final outputs ---------------------------------------------------


class _SingleTree:
    def __init__(self, model: Model):
        self.model = model
        tree = model.trees[0]
        ids = [i for i, n in enumerate(tree.nodes) if isinstance(n, Leaf)]
        width = 1 if tree.output is not None else model.n_raw
        c = np.array([tree.nodes[i].value for i in ids], dtype=np.float64).reshape(len(ids), width)
        with np.errstate(over="ignore", invalid="ignore"):
            out = evaluate.outputs_of(model, evaluate.combine(model, [c], len(ids)))
            if model.target.task == "classification":
                out = evaluate.proba_of(model, out)
        self.final = {i: [float(v) for v in row] for i, row in zip(ids, out)}

    def leaf(self, node_id: int, leaf: Leaf, where: str):
        values = self.final[node_id]
        model = self.model
        if model.target.task == "regression":
            return {"score": number(values[0], where)}, lambda w: None
        classes = model.target.classes
        best = int(np.argmax(values))  # lowest index on ties, as the evaluator
        dist = leaf.distribution if leaf.distribution and len(leaf.distribution) == len(classes) \
            else None
        probs = [number(v, f"{where} (class {classes[k]!r})") for k, v in enumerate(values)]

        def body(w: Writer) -> None:
            for k, c in enumerate(classes):
                count = dist[k] if dist else 0.0
                w.empty("ScoreDistribution", value=label_text(c), recordCount=number(count, where),
                        probability=probs[k])

        return {"score": label_text(classes[best])}, body

    def write(self, w: Writer, names: _Names) -> None:
        model = self.model
        function = model.target.task
        w.open("TreeModel", functionName=function, missingValueStrategy="defaultChild",
               noTrueChildStrategy="returnNullPrediction", splitCharacteristic="multiSplit")
        _mining_schema(w, model, names)
        write_tree_nodes(w, model.trees[0], names.features, model.features, "trees[0]", self.leaf,
                         names.new)
        w.close("TreeModel")


# --- ensembles ------------------------------------------------------------------------------


def _regression_tree(w: Writer, model: Model, names: _Names, tree: Tree, values: dict, where: str):
    """A regression TreeModel whose leaf ``i`` scores ``values[i]``."""
    w.open("TreeModel", functionName="regression", missingValueStrategy="defaultChild",
           noTrueChildStrategy="returnNullPrediction", splitCharacteristic="multiSplit")
    _mining_schema(w, model, names, target=False)

    def leaf(node_id, _leaf, here):
        return {"score": number(values[node_id], here)}, lambda w: None

    write_tree_nodes(w, tree, names.features, model.features, where, leaf, names.new)
    w.close("TreeModel")


def _constant_tree(w: Writer, model: Model, names: _Names, value: float, where: str) -> None:
    w.open("TreeModel", functionName="regression")
    _mining_schema(w, model, names, target=False)
    w.open("Node", id="0", score=number(value, where))
    w.empty("True")
    w.close("Node")
    w.close("TreeModel")


def _sum_model(w: Writer, model: Model, names: _Names, k: int, output: str | None,
               top: bool = False) -> None:
    """MiningModel ``sum`` of raw output ``k``: the base score, then each tree feeding ``k``
    in IR order (PMML4S adds the segments' predictions left to right in double)."""
    w.open("MiningModel", functionName="regression")
    _mining_schema(w, model, names, target=top)
    if output:
        w.open("Output")
        w.empty("OutputField", name=output, optype="continuous", dataType="double",
                feature="predictedValue", isFinalResult="false")
        w.close("Output")
    w.open("Segmentation", multipleModelMethod="sum")
    dt = np.float32 if model.dtype == "float32" else np.float64
    w.open("Segment", id="base")
    w.empty("True")
    _constant_tree(w, model, names, float(dt(model.base_score[k])), f"base_score[{k}]")
    w.close("Segment")
    for t, tree in enumerate(model.trees):
        if tree.output is not None and tree.output != k:
            continue
        col = 0 if tree.output is not None else k
        if model.aggregation == "vote":
            # the tree's weight where it votes for k, else -0.0, which adds nothing to any sum
            values = {i: tree.weight if vote_index(n, tree.weight) == k else -0.0
                      for i, n in enumerate(tree.nodes) if isinstance(n, Leaf)}
        else:
            values = {i: leaf_contribution(model, tree, n)[col] for i, n in enumerate(tree.nodes)
                      if isinstance(n, Leaf)}
        w.open("Segment", id=f"{t}" if model.n_raw == 1 else f"{t}.{k}")
        w.empty("True")
        _regression_tree(w, model, names, tree, values, f"trees[{t}]")
        w.close("Segment")
    w.close("Segmentation")
    w.close("MiningModel")


def _ensemble_writer(model: Model, approximate: bool, notes: list):
    agg, link, task = model.aggregation, model.link, model.target.task
    classes = model.target.classes
    if agg == "sum":
        if task == "regression" and link == "identity":
            return lambda w, names: _boosted(w, model, names, None)
        if task == "regression" and link == "exp":
            return lambda w, names: _boosted(w, model, names, "exp")
        if task == "classification" and link == "sigmoid" and model.n_raw == 1 and len(classes) == 2:
            return lambda w, names: _boosted(w, model, names, "logit")
        if task == "classification" and link == "softmax" and model.n_raw == len(classes):
            return lambda w, names: _boosted(w, model, names, "softmax")
        raise refuse("link", f"a {task} ensemble summed with the {link!r} link and {model.n_raw} "
                     "raw output(s) (PMML's normalisations cover identity and exp regression, "
                     "binary sigmoid and softmax over every class)")
    if link != "identity":
        raise refuse("link", f"the {link!r} link on a {agg!r} ensemble")
    if any(b != 0.0 or np.signbit(b) for b in model.base_score):
        raise refuse("base_score", f"a nonzero base score on a {agg!r} ensemble (PMML's average "
                     "and vote have no constant term)")
    for t, tree in enumerate(model.trees):
        if tree.output is not None:
            raise refuse(f"trees[{t}].output", f"a tree feeding one output of a {agg!r} ensemble")
    if task == "classification" and model.n_raw != len(classes):
        raise refuse("base_score", f"{model.n_raw} raw output(s) for {len(classes)} classes in a "
                     f"{agg!r} ensemble (PMML averages or counts one probability per class)")
    weighted = [t for t, tree in enumerate(model.trees) if tree.weight != 1.0]
    if agg == "vote" and weighted:
        if not approximate:
            raise refuse(f"trees[{weighted[0]}].weight", "a weighted vote exactly (PMML4S divides "
                         "weightedMajorityVote totals by the number of trees; each class's total "
                         "over the totals' sum differs from the IR's over the weights' sum in the "
                         "last place); pass --approximate to write the latter")
        notes.append(_measure_weighted_vote(model))
        return lambda w, names: _weighted_vote(w, model, names)
    return lambda w, names: _forest(w, model, names)


def _chain_of_sums(w: Writer, model: Model, names: _Names, prefix: str, last: str,
                   normalization: str) -> list[str]:
    """A MiningModel chaining one sum per raw output (fields ``prefix_k``) into a RegressionModel
    (segment ``last``) with ``normalization``, written up to that model's MiningSchema; the
    caller writes its tables and closes it. Returns the sums' field names."""
    task = model.target.task
    raws = [names.new(f"{prefix}_{k}") for k in range(model.n_raw)]
    w.open("MiningModel", functionName=task)
    _mining_schema(w, model, names)
    w.open("Segmentation", multipleModelMethod="modelChain")
    for k, raw in enumerate(raws):
        w.open("Segment", id=f"{prefix}_{k}")
        w.empty("True")
        _sum_model(w, model, names, k, raw)
        w.close("Segment")
    w.open("Segment", id=last)
    w.empty("True")
    w.open("RegressionModel", functionName=task, normalizationMethod=normalization)
    w.open("MiningSchema")
    for raw in raws:
        w.empty("MiningField", name=raw)
    w.empty("MiningField", name=names.target, usageType="target")
    w.close("MiningSchema")
    return raws


def _boosted(w: Writer, model: Model, names: _Names, normalization: str | None) -> None:
    if normalization is None:
        _sum_model(w, model, names, 0, None, top=True)
        return
    raws = _chain_of_sums(w, model, names, "raw", "link", normalization)
    if normalization == "exp":
        _table(w, raws[0], None)
    elif normalization == "logit":
        # PMML4S: the class whose table is not the constant 0 gets 1/(1+exp(-y)), the other 1 - it
        _table(w, raws[0], model.target.classes[1])
        _table(w, None, model.target.classes[0])
    else:
        # The IR's softmax subtracts the largest raw score before exp; so do these fields.
        top = names.new("raw_max")
        shifted = [names.new(f"shifted_{k}") for k in range(len(raws))]
        w.open("LocalTransformations")
        w.open("DerivedField", name=top, optype="continuous", dataType="double")
        w.open("Apply", function="max")
        for raw in raws:
            w.empty("FieldRef", field=raw)
        w.close("Apply")
        w.close("DerivedField")
        for raw, s in zip(raws, shifted):
            w.open("DerivedField", name=s, optype="continuous", dataType="double")
            w.open("Apply", function="-")
            w.empty("FieldRef", field=raw)
            w.empty("FieldRef", field=top)
            w.close("Apply")
            w.close("DerivedField")
        w.close("LocalTransformations")
        for s, c in zip(shifted, model.target.classes):
            _table(w, s, c)
    w.close("RegressionModel")
    w.close("Segment")
    w.close("Segmentation")
    w.close("MiningModel")


def _weighted_vote(w: Writer, model: Model, names: _Names) -> None:
    """Per class the sum of the weights of the trees voting for it (exact, in tree order), then
    ``simplemax``: each total over the totals' sum (the IR divides by the weights' sum)."""
    raws = _chain_of_sums(w, model, names, "votes", "share", "simplemax")
    for raw, c in zip(raws, model.target.classes):
        _table(w, raw, c)
    w.close("RegressionModel")
    w.close("Segment")
    w.close("Segmentation")
    w.close("MiningModel")


def _table(w: Writer, field: str | None, category) -> None:
    """A RegressionTable y = 0 + 1 * field (PMML4S: intercept, then coefficient * value)."""
    cat = None if category is None else label_text(category)
    if field is None:
        w.empty("RegressionTable", intercept="0.0", targetCategory=cat)
        return
    w.open("RegressionTable", intercept="0.0", targetCategory=cat)
    w.empty("NumericPredictor", name=field, coefficient="1.0")
    w.close("RegressionTable")


def _forest(w: Writer, model: Model, names: _Names) -> None:
    task = model.target.task
    method = {"mean": "average", "vote": "majorityVote"}[model.aggregation]
    w.open("MiningModel", functionName=task)
    _mining_schema(w, model, names)
    w.open("Segmentation", multipleModelMethod=method)
    for t, tree in enumerate(model.trees):
        where = f"trees[{t}]"
        w.open("Segment", id=str(t))
        w.empty("True")
        if task == "regression":
            values = {i: _no_negative_zero(leaf_contribution(model, tree, n))[0]
                      for i, n in enumerate(tree.nodes) if isinstance(n, Leaf)}
            _regression_tree(w, model, names, tree, values, where)
        else:
            _classification_tree(w, model, names, tree, where)
        w.close("Segment")
    w.close("Segmentation")
    w.close("MiningModel")


def _no_negative_zero(values):
    """-0.0 as 0.0: the IR's mean starts from +0.0, so a -0.0 contribution never shows, but
    PMML4S's sum starts from the first tree's value, where -0.0 would survive."""
    return tuple(0.0 if v == 0.0 else v for v in values)


def _classification_tree(w: Writer, model: Model, names: _Names, tree: Tree, where: str) -> None:
    classes = model.target.classes
    vote = model.aggregation == "vote"

    def leaf(node_id, node, here):
        if vote:
            return {"score": label_text(classes[vote_index(node, tree.weight)])}, lambda w: None
        values = _no_negative_zero(leaf_contribution(model, tree, node))
        probs = [number(v, here) for v in values]
        dist = node.distribution if node.distribution and len(node.distribution) == len(classes) \
            else (0.0,) * len(classes)

        def body(w: Writer) -> None:
            for c, n, p in zip(classes, dist, probs):
                w.empty("ScoreDistribution", value=label_text(c), recordCount=number(n, here),
                        probability=p)

        return {"score": label_text(classes[int(np.argmax(values))])}, body

    w.open("TreeModel", functionName="classification", missingValueStrategy="defaultChild",
           noTrueChildStrategy="returnNullPrediction", splitCharacteristic="multiSplit")
    _mining_schema(w, model, names)
    write_tree_nodes(w, tree, names.features, model.features, where, leaf, names.new)
    w.close("TreeModel")


# --- approximation: measured on probe rows with rulegen's evaluator -----------------------------


def _probe(model: Model) -> np.ndarray:
    from rulegen.verify.probes import probe_rows

    rng = np.random.default_rng(0)
    rows = rng.normal(size=(64, len(model.features))) * 2
    for j, f in enumerate(model.features):
        if f.kind == "categorical":
            rows[:, j] = rng.integers(0, max(len(f.categories), 1), size=64)
    return probe_rows(model, rows)


def _difference(what: str, a: np.ndarray, b: np.ndarray, n_rows: int) -> str:
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    diff = np.abs(a - b)[~same]
    diff = diff[np.isfinite(diff)]
    worst = float(diff.max()) if diff.size else 0.0
    differ = int(np.count_nonzero(~same.all(axis=1)))
    return (f"{what}: on {n_rows} probe rows the outputs of {differ} differ from the model's, by "
            f"at most {worst:.3g} (measured with rulegen's evaluator; the scorer's own exp is "
            "not included)")


def _measure_float64(model: Model) -> str:
    """The float32 model against the float64 one the file describes (its contributions and base
    already rounded to float32)."""
    trees = []
    for tree in model.trees:
        nodes = tuple(Leaf(leaf_contribution(model, tree, n)) if isinstance(n, Leaf) else n
                      for n in tree.nodes)
        trees.append(Tree(nodes, tree.output, 1.0 if model.aggregation != "vote" else tree.weight))
    base = tuple(float(np.float32(b)) for b in model.base_score)
    twin = Model(model.features, model.target, tuple(trees), base, model.aggregation, model.link,
                 "float64")
    X = _probe(model)
    with np.errstate(all="ignore"):
        a = evaluate.predict_outputs(model, X).astype(np.float64)
        b = evaluate.predict_outputs(twin, X)
    return _difference("float32 accumulation written as double sums", a, b, len(X))


def _measure_weighted_vote(model: Model) -> str:
    """Each class's vote total over the totals' sum (what the file says) against the IR's
    total over the weights' sum."""
    X = _probe(model)
    acc = np.zeros((len(X), model.n_raw))
    rows = np.arange(len(X))
    with np.errstate(all="ignore"):
        for tree in model.trees:
            c = evaluate.tree_output(tree, X, model.features, model.n_raw)
            acc[rows, np.argmax(tree.weight * c, axis=1)] += tree.weight
        total = acc[:, 0].copy()
        for k in range(1, acc.shape[1]):
            total = total + acc[:, k]
        a = evaluate.predict_outputs(model, X).astype(np.float64)
        b = acc / total[:, None]
    return _difference("a weighted vote written as each class's weight total over the totals' "
                       "sum", a, b, len(X))
