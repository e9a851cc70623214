"""The versioned JSON form of the IR.

Floats are written with Python's shortest round-trip repr, so they read back
bit for bit; infinities are the strings "inf" / "-inf" (JSON has no literal for
them). Reading checks types and names the JSON path of the first problem;
:func:`rulegen.ir.validate.validate` then checks the model's meaning.
"""

from __future__ import annotations

import json
import math

from rulegen.errors import IRValidationError, ModelFormatError
from rulegen.ir.nodes import (
    FORMAT_VERSION,
    Blend,
    CategoricalTest,
    DefaultChild,
    Feature,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Provenance,
    Split,
    Surrogate,
    Surrogates,
    Target,
    Tree,
)
from rulegen.ir.validate import validate

FORMAT_NAME = "rulegen-ir"


# --- writing ---------------------------------------------------------------------


def _num(v: float):
    v = float(v)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _nums(vs) -> list:
    return [_num(v) for v in vs]


def _test_to_json(t) -> dict:
    if isinstance(t, NumericTest):
        return {"kind": "numeric", "feature": t.feature, "op": t.op,
                "threshold": _num(t.threshold), "dtype": t.dtype}
    if isinstance(t, CategoricalTest):
        return {"kind": "categorical", "feature": t.feature, "categories": list(t.categories)}
    if isinstance(t, IntervalTest):
        return {"kind": "interval", "feature": t.feature, "op": t.op,
                "bounds": _nums(t.bounds), "dtype": t.dtype}
    if isinstance(t, MultiwayTest):
        return {"kind": "multiway", "feature": t.feature, "groups": [list(g) for g in t.groups]}
    if isinstance(t, ObliqueTest):
        return {"kind": "oblique", "features": list(t.features), "weights": _nums(t.weights),
                "op": t.op, "threshold": _num(t.threshold)}
    raise TypeError(f"unknown test {t!r}")


def _missing_to_json(m) -> dict:
    if isinstance(m, DefaultChild):
        return {"kind": "default", "child": m.child}
    if isinstance(m, Blend):
        return {"kind": "blend", "weights": _nums(m.weights)}
    if isinstance(m, Surrogates):
        return {"kind": "surrogates", "default": m.default, "surrogates": [
            {"test": _test_to_json(s.test), "child_if_true": s.child_if_true,
             "agreement": None if s.agreement is None else _num(s.agreement)}
            for s in m.surrogates]}
    raise TypeError(f"unknown missing rule {m!r}")


def _node_to_json(n) -> dict:
    if isinstance(n, Leaf):
        d = {"value": _nums(n.value)}
    else:
        d = {"test": _test_to_json(n.test), "children": list(n.children),
             "missing": _missing_to_json(n.missing)}
        if n.unseen is not None:
            d["unseen"] = n.unseen
    if n.samples is not None:
        d["samples"] = _num(n.samples)
    if n.distribution is not None:
        d["distribution"] = _nums(n.distribution)
    if n.impurity is not None:
        d["impurity"] = _num(n.impurity)
    if n.comment is not None:
        d["comment"] = n.comment
    return d


def model_to_dict(model: Model) -> dict:
    t = model.target
    target = {"task": t.task, "name": t.name}
    if t.task == "classification":
        target["classes"] = list(t.classes)
    else:
        target["n_outputs"] = t.n_outputs
    p = model.provenance
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "features": [
            {"name": f.name, "kind": f.kind,
             **({"categories": list(f.categories)} if f.kind == "categorical" else {}),
             **({"description": f.description} if f.description else {})}
            for f in model.features
        ],
        "target": target,
        "aggregation": model.aggregation,
        "link": model.link,
        "dtype": model.dtype,
        "base_score": _nums(model.base_score),
        "provenance": {"algorithm": p.algorithm, "params": dict(p.params), "library": p.library,
                       "n_samples": p.n_samples, "n_features": p.n_features},
        **({"comment": model.comment} if model.comment is not None else {}),
        "trees": [
            {**({"output": tr.output} if tr.output is not None else {}),
             **({"weight": _num(tr.weight)} if tr.weight != 1.0 else {}),
             **({"comment": tr.comment} if tr.comment is not None else {}),
             "nodes": [_node_to_json(n) for n in tr.nodes]}
            for tr in model.trees
        ],
    }


def dumps(model: Model) -> str:
    """Deterministic JSON text: one key, feature or tree node per line, so diffs stay readable."""
    d = model_to_dict(model)
    trees = d.pop("trees")
    features = d.pop("features")
    lines = ["{"]
    for key, value in d.items():
        lines.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    lines.append(' "features": [')
    lines.append(",\n".join("  " + json.dumps(f, ensure_ascii=False) for f in features))
    lines.append(" ],")
    lines.append(' "trees": [')
    for i, tree in enumerate(trees):
        nodes = tree.pop("nodes")
        meta = json.dumps(tree, ensure_ascii=False)[1:-1]
        lines.append("  {" + meta + (", " if meta else "") + '"nodes": [')
        lines.append(",\n".join("   " + json.dumps(n, ensure_ascii=False) for n in nodes))
        lines.append("  ]}" + ("," if i + 1 < len(trees) else ""))
    lines.append(" ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- reading ---------------------------------------------------------------------


class _Reader:
    """Typed access to parsed JSON that reports the path of a bad value."""

    @staticmethod
    def fail(path: str, msg: str):
        raise IRValidationError(path, msg)

    def obj(self, v, path):
        if not isinstance(v, dict):
            self.fail(path, f"expected an object, got {_kind(v)}")
        return v

    def arr(self, v, path):
        if not isinstance(v, list):
            self.fail(path, f"expected a list, got {_kind(v)}")
        return v

    def get(self, d, key, path, default=...):
        if key not in d:
            if default is ...:
                self.fail(path, f"missing required key {key!r}")
            return default
        return d[key]

    def int_(self, v, path):
        if isinstance(v, bool) or not isinstance(v, int):
            self.fail(path, f"expected an integer, got {_kind(v)}")
        return v

    def num(self, v, path):
        if isinstance(v, str) and v in ("inf", "+inf", "-inf", "Infinity", "-Infinity"):
            return float(v.replace("Infinity", "inf"))
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(path, f"expected a number, got {_kind(v)}")
        return float(v)

    def str_(self, v, path):
        if not isinstance(v, str):
            self.fail(path, f"expected a string, got {_kind(v)}")
        return v

    def label(self, v, path):
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            self.fail(path, f"expected a string or an integer label, got {_kind(v)}")
        return v

    def nums(self, v, path):
        return tuple(self.num(x, f"{path}[{i}]") for i, x in enumerate(self.arr(v, path)))

    def ints(self, v, path):
        return tuple(self.int_(x, f"{path}[{i}]") for i, x in enumerate(self.arr(v, path)))

    def opt_num(self, d, key, path):
        v = d.get(key)
        return None if v is None else self.num(v, f"{path}.{key}")

    def opt_nums(self, d, key, path):
        v = d.get(key)
        return None if v is None else self.nums(v, f"{path}.{key}")


def _kind(v) -> str:
    if v is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(v), type(v).__name__)


def _read_test(r: _Reader, d, path):
    d = r.obj(d, path)
    kind = r.str_(r.get(d, "kind", path), f"{path}.kind")
    if kind == "numeric":
        return NumericTest(r.int_(r.get(d, "feature", path), f"{path}.feature"),
                           r.str_(r.get(d, "op", path), f"{path}.op"),
                           r.num(r.get(d, "threshold", path), f"{path}.threshold"),
                           r.str_(d.get("dtype", "float64"), f"{path}.dtype"))
    if kind == "categorical":
        return CategoricalTest(r.int_(r.get(d, "feature", path), f"{path}.feature"),
                               r.ints(r.get(d, "categories", path), f"{path}.categories"))
    if kind == "interval":
        return IntervalTest(r.int_(r.get(d, "feature", path), f"{path}.feature"),
                            r.str_(r.get(d, "op", path), f"{path}.op"),
                            r.nums(r.get(d, "bounds", path), f"{path}.bounds"),
                            r.str_(d.get("dtype", "float64"), f"{path}.dtype"))
    if kind == "multiway":
        groups = r.arr(r.get(d, "groups", path), f"{path}.groups")
        return MultiwayTest(r.int_(r.get(d, "feature", path), f"{path}.feature"),
                            tuple(r.ints(g, f"{path}.groups[{i}]") for i, g in enumerate(groups)))
    if kind == "oblique":
        return ObliqueTest(r.ints(r.get(d, "features", path), f"{path}.features"),
                           r.nums(r.get(d, "weights", path), f"{path}.weights"),
                           r.str_(r.get(d, "op", path), f"{path}.op"),
                           r.num(r.get(d, "threshold", path), f"{path}.threshold"))
    r.fail(f"{path}.kind", f"unknown test kind {kind!r} (expected numeric, categorical, "
                           "interval, multiway or oblique)")


def _read_missing(r: _Reader, d, path):
    d = r.obj(d, path)
    kind = r.str_(r.get(d, "kind", path), f"{path}.kind")
    if kind == "default":
        return DefaultChild(r.int_(r.get(d, "child", path), f"{path}.child"))
    if kind == "blend":
        return Blend(r.nums(r.get(d, "weights", path), f"{path}.weights"))
    if kind == "surrogates":
        items = r.arr(r.get(d, "surrogates", path), f"{path}.surrogates")
        surs = []
        for i, s in enumerate(items):
            sp = f"{path}.surrogates[{i}]"
            s = r.obj(s, sp)
            surs.append(Surrogate(_read_test(r, r.get(s, "test", sp), f"{sp}.test"),
                                  r.int_(r.get(s, "child_if_true", sp), f"{sp}.child_if_true"),
                                  r.opt_num(s, "agreement", sp)))
        return Surrogates(tuple(surs), r.int_(r.get(d, "default", path), f"{path}.default"))
    r.fail(f"{path}.kind", f"unknown missing rule {kind!r} (expected default, surrogates or blend)")


def _read_node(r: _Reader, d, path):
    d = r.obj(d, path)
    samples = r.opt_num(d, "samples", path)
    dist = r.opt_nums(d, "distribution", path)
    impurity = r.opt_num(d, "impurity", path)
    comment = None if d.get("comment") is None else r.str_(d["comment"], f"{path}.comment")
    if "value" in d:
        return Leaf(r.nums(d["value"], f"{path}.value"), samples, dist, impurity, comment)
    if "test" not in d:
        r.fail(path, "a node needs 'value' (a leaf) or 'test' (a split)")
    unseen = d.get("unseen")
    return Split(_read_test(r, d["test"], f"{path}.test"),
                 r.ints(r.get(d, "children", path), f"{path}.children"),
                 _read_missing(r, r.get(d, "missing", path), f"{path}.missing"),
                 None if unseen is None else r.int_(unseen, f"{path}.unseen"),
                 samples, dist, impurity, comment)


def model_from_dict(d) -> Model:
    r = _Reader()
    d = r.obj(d, "$")
    if d.get("format") != FORMAT_NAME:
        r.fail("format", f"expected {FORMAT_NAME!r}, got {d.get('format')!r}")
    version = r.int_(r.get(d, "version", "$"), "version")
    if version > FORMAT_VERSION:
        r.fail("version", f"version {version} is newer than this rulegen reads "
                          f"({FORMAT_VERSION}); upgrade rulegen")
    features = []
    for i, f in enumerate(r.arr(r.get(d, "features", "$"), "features")):
        p = f"features[{i}]"
        f = r.obj(f, p)
        cats = f.get("categories", [])
        features.append(Feature(
            r.str_(r.get(f, "name", p), f"{p}.name"),
            r.str_(f.get("kind", "numeric"), f"{p}.kind"),
            tuple(r.label(c, f"{p}.categories[{j}]")
                  for j, c in enumerate(r.arr(cats, f"{p}.categories"))),
            r.str_(f.get("description", ""), f"{p}.description")))
    t = r.obj(r.get(d, "target", "$"), "target")
    task = r.str_(r.get(t, "task", "target"), "target.task")
    classes = tuple(r.label(c, f"target.classes[{j}]")
                    for j, c in enumerate(r.arr(t.get("classes", []), "target.classes")))
    n_out = r.int_(t.get("n_outputs", 1), "target.n_outputs")
    target = Target(task, r.str_(t.get("name", "target"), "target.name"), classes, n_out)
    trees = []
    for i, tr in enumerate(r.arr(r.get(d, "trees", "$"), "trees")):
        p = f"trees[{i}]"
        tr = r.obj(tr, p)
        nodes = r.arr(r.get(tr, "nodes", p), f"{p}.nodes")
        out = tr.get("output")
        trees.append(Tree(
            tuple(_read_node(r, n, f"{p}.nodes[{j}]") for j, n in enumerate(nodes)),
            None if out is None else r.int_(out, f"{p}.output"),
            r.num(tr.get("weight", 1.0), f"{p}.weight"),
            None if tr.get("comment") is None else r.str_(tr["comment"], f"{p}.comment")))
    prov = r.obj(d.get("provenance", {}), "provenance")
    params = r.obj(prov.get("params", {}), "provenance.params")
    provenance = Provenance(
        r.str_(prov.get("algorithm", ""), "provenance.algorithm"),
        tuple(sorted((str(k), v) for k, v in params.items() if not isinstance(v, (dict, list)))),
        r.str_(prov.get("library", ""), "provenance.library"),
        None if prov.get("n_samples") is None else r.int_(prov["n_samples"], "provenance.n_samples"),
        None if prov.get("n_features") is None else r.int_(prov["n_features"], "provenance.n_features"))
    model = Model(
        features=tuple(features), target=target, trees=tuple(trees),
        base_score=r.nums(r.get(d, "base_score", "$"), "base_score"),
        aggregation=r.str_(d.get("aggregation", "sum"), "aggregation"),
        link=r.str_(d.get("link", "identity"), "link"),
        dtype=r.str_(d.get("dtype", "float64"), "dtype"),
        provenance=provenance,
        comment=None if d.get("comment") is None else r.str_(d["comment"], "comment"))
    validate(model)
    return model


def loads(text: str, source: str = "") -> Model:
    """Parse IR JSON text; errors name ``source`` and the line or JSON path."""
    where = f"{source}: " if source else ""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ModelFormatError(f"{where}{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    except RecursionError:
        raise ModelFormatError(f"{where}invalid JSON: nested too deeply") from None
    try:
        return model_from_dict(data)
    except IRValidationError as e:
        raise IRValidationError(f"{where}{e.path}", e.message) from None
