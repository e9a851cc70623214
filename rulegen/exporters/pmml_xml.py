"""PMML text: escaping, numbers, and one tree's nested <Node> elements written by a loop.

The writer is a list of lines rather than xml.etree because etree serialises recursively (a
2,500-deep tree would exceed Python's recursion limit) and because every attribute needs the
character references that keep newlines and tabs through XML attribute normalisation.
"""

from __future__ import annotations

import math
import re

import numpy as np

from rulegen.codegen.lower import float64_bound
from rulegen.errors import UnsupportedFeatureError
from rulegen.ir.nodes import (
    Blend,
    CategoricalTest,
    DefaultChild,
    IntervalTest,
    Leaf,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Split,
    Surrogates,
    Tree,
)

DBL_MAX = float(np.finfo(np.float64).max)

# Characters XML 1.0 cannot carry at all, not even as a character reference.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_ATTR_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                 "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
_ATTR_RE = re.compile('[&<>"\n\r\t]')


def refuse(where: str, what: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError("pmml", what, where)


def check_text(text: str, where: str) -> str:
    """``text`` if XML can hold it, else the refusal naming ``where``."""
    bad = _NOT_XML.search(text)
    if bad:
        raise refuse(where, f"the character U+{ord(bad.group()):04X} in {text!r} (XML 1.0 has no "
                     "way to write it); rename it")
    return text


def attr(value: str) -> str:
    """An attribute value, quotes included; newlines, tabs and CR survive as references."""
    return '"' + _ATTR_RE.sub(lambda m: _ATTR_ESCAPES[m.group()], value) + '"'


def number(v: float, where: str = "") -> str:
    """A double as the shortest text that reads back to the same double (Java's
    Double.parseDouble, which PMML4S uses, reads Python's repr exactly). PMML4S reads the XML
    Schema spelling INF as NaN, so non-finite values are refused where they would be written."""
    v = float(v)
    if not math.isfinite(v):
        raise refuse(where, f"the value {v!r} (PMML4S reads INF/NaN literals as NaN)")
    return repr(v)


def label_text(label) -> str:
    return str(label)


def _indent(depth: int) -> str:
    return "  " * min(depth, 16)


class Writer:
    """Indented lines of XML; indentation stops growing at 16 levels, so a deep tree's file
    stays linear in its size."""

    def __init__(self):
        self.lines: list[str] = []
        self.depth = 0

    def _tag(self, tag: str, attrs: dict) -> str:
        parts = [tag] + [f"{k}={attr(v)}" for k, v in attrs.items() if v is not None]
        return " ".join(parts)

    def open(self, tag: str, **attrs) -> None:
        self.lines.append(_indent(self.depth) + f"<{self._tag(tag, attrs)}>")
        self.depth += 1

    def close(self, tag: str) -> None:
        self.depth -= 1
        self.lines.append(_indent(self.depth) + f"</{tag}>")

    def empty(self, tag: str, **attrs) -> None:
        self.lines.append(_indent(self.depth) + f"<{self._tag(tag, attrs)}/>")

    def text(self, tag: str, body: str, **attrs) -> None:
        body = body.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        body = body.replace("\r", "&#13;")  # XML parsers turn a raw CR (and CR LF) into LF
        self.lines.append(_indent(self.depth) + f"<{self._tag(tag, attrs)}>{body}</{tag}>")

    def getvalue(self) -> bytes:
        return ("\n".join(self.lines) + "\n").encode("utf-8")


# --- predicates ---------------------------------------------------------------------------
# A predicate is a small tuple tree written by write_predicate: ("cmp", field, op, value),
# ("set", field, isIn?, labels), ("and"/"or"/"surrogate", [predicates]). Every predicate here is
# UNKNOWN when its field is missing, so a split's children all come out UNKNOWN and PMML4S
# takes the defaultChild: that is how missing values reach the IR's DefaultChild.

_OPS = {"<": "lessThan", "<=": "lessOrEqual", ">": "greaterThan", ">=": "greaterOrEqual",
        "==": "equal", "!=": "notEqual"}
_FLIP = {"<": ">=", "<=": ">"}


def _always(field: str):
    return ("or", [("cmp", field, "<=", DBL_MAX), ("cmp", field, ">", DBL_MAX)])


def _never(field: str):
    return ("and", [("cmp", field, "<=", DBL_MAX), ("cmp", field, ">", DBL_MAX)])


def numeric_pair(field: str, op: str, threshold: float, dtype: str):
    """(true side, false side) of ``x op threshold`` in ``dtype``, as float64 comparisons with
    finite literals only (float32 tests lowered to their exact float64 bound)."""
    op, b = float64_bound(op, threshold, dtype)
    if b == math.inf:
        return (("cmp", field, "<=", DBL_MAX), ("cmp", field, ">", DBL_MAX)) if op == "<" else (
            _always(field), _never(field))
    if b == -math.inf:
        return (_never(field), _always(field)) if op == "<" else (
            ("cmp", field, "<", -DBL_MAX), ("cmp", field, ">=", -DBL_MAX))
    return ("cmp", field, op, b), ("cmp", field, _FLIP[op], b)


def _set(field: str, is_in: bool, labels: list):
    return ("set", field, is_in, labels)


def binary_pair(test, names, features, unseen, where):
    """(predicate of child 0, predicate of child 1) for a binary test. ``unseen`` is the child
    that takes categories outside the feature's list (None: child 1, "not in the set")."""
    if isinstance(test, NumericTest):
        return numeric_pair(names[test.feature], test.op, test.threshold, test.dtype)
    if isinstance(test, CategoricalTest):
        f = features[test.feature]
        chosen = [f.categories[c] for c in test.categories]
        if unseen == 0:
            # PMML4S gives a value it has not seen a fresh code, so it is "not in" any listed set.
            rest = [c for i, c in enumerate(f.categories) if i not in set(test.categories)]
            return _set(names[test.feature], False, rest), _set(names[test.feature], True, rest)
        return _set(names[test.feature], True, chosen), _set(names[test.feature], False, chosen)
    raise refuse(where, "an oblique test as a surrogate")


def _oblique_pair(test: ObliqueTest, names, derived: str):
    """Child 0 when the derived sum compares true. PMML4S reads a NaN sum (from infinite
    inputs) as missing, so child 1 is "every input present" rather than the complement: a NaN
    sum then goes to child 1 as in the IR, and only a missing input leaves both UNKNOWN."""
    present = [_always(names[f]) for f in dict.fromkeys(test.features)]
    return (numeric_pair(derived, test.op, test.threshold, "float64")[0],
            present[0] if len(present) == 1 else ("and", present))


def child_predicates(split: Split, names, features, where, derived=None):
    """One predicate per child, in child order; PMML4S takes the first child whose predicate is
    true (the same order rule the PMML specification gives)."""
    test = split.test
    if isinstance(test, ObliqueTest):
        preds = list(_oblique_pair(test, names, derived))
    elif isinstance(test, (NumericTest, CategoricalTest)):
        preds = list(binary_pair(test, names, features, split.unseen, where))
    elif isinstance(test, IntervalTest):
        field = names[test.feature]
        pairs = [numeric_pair(field, test.op, b, test.dtype) for b in test.bounds]
        preds = [p[0] for p in pairs] + [pairs[-1][1]]
    elif isinstance(test, MultiwayTest):
        f = features[test.feature]
        field = names[test.feature]
        preds = []
        for i, group in enumerate(test.groups):
            if i == split.unseen:
                others = [f.categories[c] for j, g in enumerate(test.groups) if j != i for c in g]
                preds.append(_set(field, False, others))
            else:
                preds.append(_set(field, True, [f.categories[c] for c in group]))
    else:  # pragma: no cover - validate() admits no other test
        raise refuse(where, f"the test {type(test).__name__}")
    missing = split.missing
    if isinstance(missing, Blend):
        raise refuse(where, "a blended split (C4.5 fractional routing: PMML's aggregateNodes and "
                     "weightedConfidence do not compute the IR's weighted sum of leaves)")
    if isinstance(missing, Surrogates) and missing.surrogates:
        chains: list[list] = [[p] for p in preds]
        for k, s in enumerate(missing.surrogates):
            holds, fails = binary_pair(s.test, names, features, None, f"{where}.missing.surrogates[{k}]")
            # A surrogate sends the row to child_if_true when its test holds, else to the other.
            chains[s.child_if_true].append(holds)
            chains[1 - s.child_if_true].append(fails)
        preds = [("surrogate", c) for c in chains]
    return preds


def default_child(split: Split):
    m = split.missing
    if isinstance(m, DefaultChild):
        return split.children[m.child]
    if isinstance(m, Surrogates):
        return split.children[m.default]
    return None


def write_predicate(w: Writer, pred) -> None:
    stack = [pred]  # ("end", tag) items close compound predicates
    while stack:
        p = stack.pop()
        kind = p[0]
        if kind == "end":
            w.close("CompoundPredicate")
        elif kind == "cmp":
            w.empty("SimplePredicate", field=p[1], operator=_OPS[p[2]], value=number(p[3]))
        elif kind == "set":
            _write_set(w, p[1], p[2], p[3])
        elif kind == "true":
            w.empty("True")
        else:
            w.open("CompoundPredicate", booleanOperator=kind)
            stack.append(("end",))
            stack.extend(reversed(p[1]))


def _array_safe(label) -> bool:
    # PMML4S splits an Array's text itself and keeps backslash-quote pairs verbatim, so a value
    # with a quote or a backslash cannot go into an Array and read back the same.
    return '"' not in str(label) and "\\" not in str(label)


def _write_set(w: Writer, field: str, is_in: bool, labels: list) -> None:
    if not labels or all(_array_safe(v) for v in labels):
        kind = "int" if labels and all(isinstance(v, int) for v in labels) else "string"
        body = " ".join(str(v) if kind == "int" else '"' + str(v) + '"' for v in labels)
        w.open("SimpleSetPredicate", field=field, booleanOperator="isIn" if is_in else "isNotIn")
        w.text("Array", body, n=str(len(labels)), type=kind)
        w.close("SimpleSetPredicate")
        return
    # The same set as equal/notEqual comparisons: attribute values carry any text exactly.
    op = "==" if is_in else "!="
    w.open("CompoundPredicate", booleanOperator="or" if is_in else "and")
    for v in labels:
        w.empty("SimplePredicate", field=field, operator=_OPS[op], value=label_text(v))
    w.close("CompoundPredicate")


# --- one tree ------------------------------------------------------------------------------


def _oblique_fields(w: Writer, tree: Tree, names, new_name, where: str) -> dict[int, str]:
    """LocalTransformations holding each oblique split's sum, ((w0*x0 + w1*x1) + ...) in
    double, left to right: the IR's sum but for its leading 0.0 +, which only turns -0.0 into
    0.0 and so changes no comparison. Returns {node id: derived field name}."""
    found: dict[int, str] = {}
    for node_id, node in enumerate(tree.nodes):
        if not isinstance(node, Split) or not isinstance(node.test, ObliqueTest):
            continue
        here = f"{where}.nodes[{node_id}]"
        if isinstance(node.missing, Surrogates) and node.missing.surrogates:
            # PMML4S would read a NaN sum as missing and consult the surrogates; the IR does not
            raise refuse(here, "an oblique split with surrogates")
        found[node_id] = new_name(f"oblique_{node_id}")
    if not found:
        return found
    w.open("LocalTransformations")
    for node_id, name in found.items():
        test = tree.nodes[node_id].test
        here = f"{where}.nodes[{node_id}].test.weights"
        w.open("DerivedField", name=name, optype="continuous", dataType="double")
        for _ in range(len(test.features) - 1):
            w.open("Apply", function="+")
        for i, (f, weight) in enumerate(zip(test.features, test.weights)):
            w.open("Apply", function="*")
            w.text("Constant", number(weight, here), dataType="double")
            w.empty("FieldRef", field=names[f])
            w.close("Apply")
            if i:
                w.close("Apply")
        w.close("DerivedField")
    w.close("LocalTransformations")
    return found


def write_tree_nodes(w: Writer, tree: Tree, names, features, where: str, leaf_writer,
                     new_name) -> None:
    """The tree's LocalTransformations (oblique sums) and nested <Node> elements, root first,
    children in order, without recursion. ``leaf_writer(node_id, leaf, where)`` returns the
    leaf Node's attributes and a function writing its content; ``new_name(base)`` a field name
    used nowhere else."""
    derived = _oblique_fields(w, tree, names, new_name, where)
    preds: dict[int, object] = {0: ("true",)}
    stack: list = [("node", 0)]
    while stack:
        item = stack.pop()
        if item[0] == "close":
            w.close("Node")
            continue
        node_id = item[1]
        node = tree.nodes[node_id]
        here = f"{where}.nodes[{node_id}]"
        if isinstance(node, Leaf):
            attrs, body = leaf_writer(node_id, node, here)
            w.open("Node", id=str(node_id), **attrs)
            write_predicate(w, preds.pop(node_id))
            body(w)
            w.close("Node")
            continue
        child_preds = child_predicates(node, names, features, here, derived.get(node_id))
        default = default_child(node)
        w.open("Node", id=str(node_id), defaultChild=None if default is None else str(default))
        write_predicate(w, preds.pop(node_id))
        stack.append(("close",))
        for child, p in reversed(list(zip(node.children, child_preds))):
            preds[child] = p
            stack.append(("node", child))
