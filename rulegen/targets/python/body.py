"""Python target: what the entry points compute, from the trees to each returned value.

Two shapes, both exact (the evaluator's own operations in its own order):

- *One tree* (no blends): the tree function returns the position of the leaf a row reaches,
  and every output is folded per leaf at generation (``leaf_outputs``): the raw scores, the
  probabilities or values, the predicted label. A row costs one tree walk and one lookup.
- *Several trees*: one function ``_raw(x)`` walks every tree in turn, inline (a call per tree
  cost more than the walk of a depth-6 tree), and adds each into locals ``a0, a1, ...`` (a
  list ``a`` for votes and for more than four outputs). A tree that needs parts (deeper than
  MAX_BLOCK_DEPTH) or blends keeps its own function and is called.

float32 sums round every addition, by Veltkamp's split (``c = y * (2**29 + 1); c - (c - y)``
rounds a float64 y to 24 significant bits, ties to even: three float operations, a third of
a one-element ``array("f")`` store and load) when no partial sum can leave the float32 range
(then the split's result, like C's, is always a float32 value; the bound is checked here from
the leaves); otherwise through the ``array("f")`` cell, which overflows to +-inf as C does.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.codegen.literals import py_float, py_str
from rulegen.codegen.lower import has_blend, leaf_contribution, leaf_outputs, node_depths, total_weight
from rulegen.ir.nodes import DefaultChild, Leaf, Model, NumericTest, Split
from rulegen.targets.python.tree import VAR, TreeWriter

# A one-tree model up to this size has its tree laid in each entry point (three copies): a
# call and a lookup less per row (about 110 of 940 ns on a depth-8 tree).
MAX_ENTRY_NODES = 4095
# Accumulators as locals a0..a3 (a list beyond): a local add is about half a list item's.
MAX_LOCALS = 4
# Converting a row costs about 48 ns an input (``list(map(float, row))``); converting where a
# test reads costs about 30 ns a read more than reading a float (CPython 3.11, this machine).
CONVERT_NS, READ_NS = 48.0, 30.0
# Below this bound on every partial sum (|base| + the largest leaf of each tree), rounded sums
# stay far inside float32's range (2**128), so Veltkamp's split never sees an overflow.
VELTKAMP_BOUND = 2.0**126
_SPLIT = "536870913.0"  # 2**29 + 1
# Rows wider than this stay lists in _raw (one local per input would make a long statement).
MAX_UNPACKED = 1024


def reads_directly(model: Model) -> bool:
    """Whether the trees can read the caller's row itself: a numeric model whose every test
    reads one input against a threshold and sends a missing value to one child."""
    return all(f.kind != "categorical" for f in model.features) and all(
        isinstance(n.test, NumericTest) and isinstance(n.missing, DefaultChild)
        for tree in model.trees for n in tree.nodes if isinstance(n, Split))


def lazy_reads_pay(model: Model) -> bool:
    """Whether trees should convert each value they read instead of the row up front: for
    numeric models whose tests read one input each and whose rows read few of the inputs."""
    if not reads_directly(model):
        return False
    return reads_per_row(model) * READ_NS < len(model.features) * CONVERT_NS


def reads_per_row(model: Model) -> float:
    """The inputs a row's tests read, summed over the trees: each tree's mean leaf depth."""
    reads = 0.0
    for tree in model.trees:
        d = node_depths(tree)
        leaves = [i for i, n in enumerate(tree.nodes) if isinstance(n, Leaf)]
        reads += sum(d[i] for i in leaves) / len(leaves)
    return reads


def unpack_pays(model: Model) -> bool:
    """Whether the trees summed in one function should read the row from locals: unpacking it
    (``x0, x1, ... = x``) costs about a store per input, and a local read saves two of the three
    steps of ``x[f]`` (load, constant, subscript) at every test on a row's path."""
    return len(model.features) <= MAX_UNPACKED and 2 * reads_per_row(model) > len(model.features)


def veltkamp_safe(model: Model) -> bool:
    """No float32 partial sum can come near the float32 range's end (nor be inf or NaN)."""
    bound = max((abs(b) for b in model.base_score), default=0.0)
    for tree in model.trees:
        if has_blend(tree):
            return False
        bound += max(abs(c) for n in tree.nodes if isinstance(n, Leaf)
                     for c in leaf_contribution(model, tree, n))
    return math.isfinite(bound) and bound < VELTKAMP_BOUND


def _list(values) -> str:
    return f"[{', '.join(py_float(float(v)) for v in values)}]"


def _value(model: Model, v: float) -> str:
    return py_float(float(np.float32(v)) if model.dtype == "float32" else float(v))


class RawBody:
    """Functions, constants and helpers of the trees, and each entry point's lines (reading
    the row as ``x``, ending in a return): ``entries["raw" | "proba" | "predict"]``."""

    def __init__(self, model: Model, comments: bool, lazy: bool, floats: bool = False):
        self.model, self.comments, self.lazy, self.floats = model, comments, lazy, floats
        self.functions: list[dict] = []
        self.constants: list[tuple[str, str]] = []
        self.helpers: set[str] = set()
        self.entries: dict[str, list[str]] = {}

    def _add_code(self, code) -> None:
        self.helpers |= code.helpers
        self.constants += code.constants
        self.functions += [{"name": f.name, "params": f.params, "comment": f.comment,
                            "body": "\n".join("    " + line for line in f.body)} for f in code.functions]

    # --- one tree: a leaf's position, everything else looked up -----------------------------

    def one_tree(self) -> None:
        model = self.model
        leaves, raw, out = leaf_outputs(model)
        classifier = model.target.task == "classification"
        values = {"raw": [_list(r) for r in raw]}
        if classifier:
            values["proba"] = [_list(r) for r in out]
            values["predict"] = [py_str(model.target.classes[int(np.argmax(r))]) for r in out]
        else:
            values["predict"] = [py_float(float(r[0])) if model.target.n_outputs == 1 else _list(r) for r in out]
        if len(model.trees[0].nodes) <= MAX_ENTRY_NODES:  # the tree in each entry point
            for entry, exprs in values.items():
                code = TreeWriter(model, 0, self.comments, leaf_values=dict(zip(leaves, exprs)),
                                  lazy=self.lazy, floats=self.floats, inline=True).write()
                if code is None:  # too deep for one function
                    self.entries = {}
                    break
                self.helpers |= code.helpers
                self.constants += [c for c in code.constants if c not in self.constants]
                self.entries[entry] = code.body
        if self.entries:
            return
        # the tree function returns the leaf's position; the entry points look it up
        code = TreeWriter(model, 0, self.comments, leaf_values={nid: str(i) for i, nid in enumerate(leaves)},
                          lazy=self.lazy, floats=self.floats).write()
        self._add_code(code)
        leaf = f"{code.name}(x)"
        for entry, exprs in values.items():
            name = "_" + entry.upper()
            self.constants.append((name, "(\n" + "".join(f"    {e},\n" for e in exprs) + ")"))
            get = f"{name}[{leaf}]"
            self.entries[entry] = [f"return [*{get}]" if exprs[0].startswith("[") else f"return {get}"]

    # --- several trees: one function walks them all ----------------------------------------

    def trees(self) -> None:
        model = self.model
        f32 = model.dtype == "float32"
        n = model.n_raw
        vector = any(t.output is None and n > 1 for t in model.trees)
        self.locals = model.aggregation != "vote" and n <= MAX_LOCALS and not (f32 and vector)
        # votes and vector trees add through the cell (float32 ones are rare)
        self.veltkamp = f32 and self.locals and veltkamp_safe(model)
        base = [_value(model, b) for b in model.base_score]
        lines = [f"a{k} = {b}" for k, b in enumerate(base)] if self.locals else [f"a = [{', '.join(base)}]"]
        unpacked = unpack_pays(model)
        if unpacked:  # a row of the wrong length raises ValueError here
            names = ", ".join(f"x{j}" for j in range(len(model.features)))
            lines.insert(0, f"{names}{',' if len(model.features) == 1 else ''} = x")
        if f32 and not self.veltkamp:
            lines.append("f = _cell()")
            self.helpers |= {"cell", "f32"}
        for i, tree in enumerate(model.trees):
            # a one-output tree's leaves start the sum themselves (a0 += 0.25): no v to store and load
            first, rest = None, []
            if model.aggregation != "vote" and (tree.output is not None or n == 1):
                first, *rest = self._add(self._acc(tree.output or 0), "{}")
            code = TreeWriter(model, i, self.comments, lazy=self.lazy, floats=self.floats, inline=True,
                              unpacked=unpacked, leaf_into=first).write()
            if code is not None:
                self.helpers |= code.helpers
                self.constants += code.constants
                lines += code.body
                if first is not None:
                    lines += rest
                    continue
                value = VAR[code.returns]
            else:  # parts or blends: its own function
                code = TreeWriter(model, i, self.comments, lazy=self.lazy, floats=self.floats).write()
                self._add_code(code)
                value = f"{code.name}(x)"
            lines += self._accumulate(tree, code.returns, value)
        lines.append(self._finish())
        note = "# every tree in turn, each added to the accumulators" if self.comments else ""
        self.functions.append({"name": "_raw", "params": "x", "comment": note,
                               "body": "\n".join("    " + line for line in lines)})
        if model.link != "identity":
            self.helpers.add("expf" if f32 else "exp")
        if f32:
            self.helpers.add("f32")  # the float32 links round with _f32
        plain = model.link == "identity" and not f32
        get = "out = _raw(x)" if plain else "out = _outputs(_raw(x))"
        self.entries["raw"] = ["return _raw(x)"]
        if model.target.task == "classification":
            self.helpers.add("argmax")
            binary = n == 1 and len(model.target.classes) == 2
            proba = ("[_f32(1.0 - out[0]), out[0]]" if f32 else "[1.0 - out[0], out[0]]") if binary else "out"
            self.entries["proba"] = [get, f"return {proba}"]
            self.entries["predict"] = [get, f"return _CLASSES[_argmax({proba})]"]
        else:
            self.entries["predict"] = [get, "return out[0]" if model.target.n_outputs == 1 else "return out"]

    def _acc(self, k) -> str:
        return f"a{k}" if self.locals else f"a[{k}]"

    def _add(self, acc: str, value: str) -> list[str]:
        """acc += value, rounded to float32 for float32 models."""
        if self.model.dtype != "float32":
            return [f"{acc} += {value}"]
        if self.veltkamp:
            return [f"y = {acc} + {value}", f"c = y * {_SPLIT}", f"{acc} = c - (c - y)"]
        return [f"f[0] = {acc} + {value}", f"{acc} = f[0]"]

    def _accumulate(self, tree, returns: str, value: str) -> list[str]:
        """The lines adding one tree's ``value`` (a variable or a call) to the accumulators."""
        model = self.model
        if returns == "vote":
            if model.dtype == "float32":
                self.helpers |= {"cell", "f32"}
                return [f"k = {value}", f"f[0] = a[k] + {_value(model, tree.weight)}", "a[k] = f[0]"]
            return [f"a[{value}] += {_value(model, tree.weight)}"]
        if returns == "scalar":
            return self._add(self._acc(tree.output or 0), value)
        out = [] if value == "t" else [f"t = {value}"]
        if model.dtype == "float32":
            self.helpers.add("add32")
            return out + ["_add32(a, t, f)"]
        if not self.locals and model.n_raw > MAX_LOCALS:
            self.helpers.add("add")
            return out + ["_add(a, t)"]
        return out + [f"{self._acc(k)} += t[{k}]" for k in range(model.n_raw)]

    def _finish(self) -> str:
        model = self.model
        acc = [self._acc(k) for k in range(model.n_raw)] if self.locals else None
        if model.aggregation == "sum":
            return f"return [{', '.join(acc)}]" if acc else "return a"
        d = len(model.trees) if model.aggregation == "mean" else total_weight(model)
        d = _value(model, d)
        if model.dtype == "float32":
            self.helpers.add("f32")
            each = [f"_f32({v} / {d})" for v in acc] if acc else None
            return f"return [{', '.join(each)}]" if acc else f"return [_f32(v / {d}) for v in a]"
        return f"return [{', '.join(f'{v} / {d}' for v in acc)}]" if acc else f"return [v / {d} for v in a]"
