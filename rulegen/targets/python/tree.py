"""Python target, one tree: nested ``if``/``else`` functions, split where CPython's limits bite.

A tree becomes one function, or several *parts* when it is deeper than ``MAX_BLOCK_DEPTH``: a
subtree that would be nested deeper starts a new function. Parts never call each other, so the
call depth does not grow with the tree: in a tree without blends a part returns the next part
and the tree function follows them in a loop; in a tree with blends (C4.5) every part pushes the
parts it continues into onto a work list. Everything here walks with explicit stacks.

Inside a function ``x[f]`` is input f, read where a test needs it (unpacking every input a
tree uses into locals cost more than the few reads on a row's path: a depth-6 XGBoost tree reads
6 of its 11): floats with NaN for missing on numeric features, labels on categorical ones (NaN
when missing, the module's ``_UNSEEN`` for any other value). With ``lazy`` reads, x is the
caller's row itself and each test converts the one value it reads, ``float(x[f])``: cheaper
than converting the whole row when a row's path reads few of many inputs. With ``inline``, a
leaf assigns its value (``v``, ``t`` or ``k``) instead of returning it, so that the module can
lay the trees one after another in one function (or returns its ``leaf_values`` expression
from the function the body is laid in); ``write`` then gives None for a tree that needs parts
or blends. NaN fails every comparison and
every membership test, so a missing value falls to the ``else`` branch unless the condition
takes it: ``not (x[f] > t)`` for a numeric test (one read), ``or x[f] != x[f]`` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rulegen.codegen.literals import py_comment, py_float, py_str
from rulegen.codegen.lower import float64_bound, has_blend, leaf_contribution, vote_index
from rulegen.ir.nodes import (
    Blend,
    CategoricalTest,
    DefaultChild,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Split,
    Surrogates,
    Tree,
)

# CPython refuses a 100th indentation level ("too many levels of indentation", tokenizer
# MAXINDENT); a function body is level 1 and a split's dispatch can add a few levels for very
# wide splits, so 40 leaves ample room.
MAX_BLOCK_DEPTH = 40
# An ``elif`` is an ``If`` nested in the previous one's ``orelse``: about 2,500 of them exceed the
# compiler's recursion limit. Splits with more children dispatch on a child index in ranges.
MAX_CHAIN = 64
# ``0.0 + w0 * x0 + w1 * x1 + ...`` is a left-deep expression, and the compiler recurses on it
# too (about 2,500 terms fail); longer oblique sums loop over a constant table instead.
MAX_INLINE_TERMS = 64

_INDENT = "    "
_NEGATED = {"<=": ">", "<": ">="}  # x <= t or NaN  is  not (x > t)


@dataclass
class Function:
    name: str
    params: str
    comment: str  # one line, already sanitised ("" for none)
    body: list[str]  # lines, indented relative to the def


@dataclass
class TreeCode:
    """What the module needs from one tree: its functions, its constants, the helpers it uses
    and what its entry function ``name(x)`` returns: "scalar", "vector" or "vote"."""

    name: str
    returns: str  # or "leaf": each leaf returns its expression from ``leaf_values``
    functions: list[Function] = field(default_factory=list)
    constants: list[tuple[str, str]] = field(default_factory=list)
    helpers: set[str] = field(default_factory=set)
    body: list[str] | None = None  # inline: the tree's statements, leaves assigning VAR[returns]


# The variable an inline tree's leaf assigns, by what it yields.
VAR = {"scalar": "v", "vector": "t", "vote": "k"}


class TreeWriter:
    def __init__(self, model: Model, index: int, comments: bool = True, *,
                 leaf_values: dict[int, str] | None = None, lazy: bool = False, inline: bool = False,
                 floats: bool = False, unpacked: bool = False, leaf_into: str | None = None):
        self.model = model
        self.tree: Tree = model.trees[index]
        self.index = index
        self.comments = comments
        self.blend = has_blend(self.tree)
        self.width = 1 if self.tree.output is not None else model.n_raw
        self.leaf_values, self.lazy, self.inline = leaf_values, lazy, inline
        self.floats = floats and lazy  # rows of floats (--rows floats): see _numeric
        # inline trees of a function that unpacked the row into locals x0, x1, ... (body.py)
        self.unpacked = unpacked and inline
        # inline, one output: each leaf's statement with "{}" for its value (``a0 += {}``),
        # instead of assigning the value to v for a statement after the tree
        self.leaf_into = leaf_into if inline else None
        vote = model.aggregation == "vote"
        returns = "leaf" if leaf_values is not None else "vote" if vote else "scalar" if self.width == 1 else "vector"
        self.code = TreeCode(f"_tree_{index}", returns)
        self._queue: list[int] = []
        self._queue_used = False

    # --- expressions -----------------------------------------------------------------------

    def _x(self, f: int) -> str:
        # lazy: converted where read (binding it for the tests below was no faster: measured)
        return f"float({self._ref(f)})" if self.lazy else self._ref(f)

    def _ref(self, f: int) -> str:
        return f"x{f}" if self.unpacked else f"x[{f}]"

    def _numeric(self, test: NumericTest, bound: float) -> str:
        """Input f of a numeric test against its float64 ``bound``. With rows of floats it is
        read as it is wherever that gives float()'s answer for every value the contract allows:
        a float or numpy float64 compares in float64; an int compares exactly, float()'s answer
        while |bound| < 2**53; numpy compares a float32 scalar with the bound rounded to float32,
        which is exact when the bound is a float32 value or, in a float32 test, the midpoint of
        two float32 values (its tie rounds to the side the test's op keeps: lower.float64_bound)."""
        if self.floats and abs(bound) < 2.0**53 and (test.dtype == "float32" or float(np.float32(bound)) == bound):
            return self._ref(test.feature)
        return self._x(test.feature)

    def _name(self, f: int) -> str:
        return py_str(self.model.features[f].name)

    def _labels(self, f: int, codes) -> str:
        """``x in {...}`` for category codes, as their labels."""
        cats = self.model.features[f].categories
        x = self._x(f)
        if not codes:
            return "False"
        if len(codes) == 1:
            return f"{x} == {py_str(cats[codes[0]])}"
        return f"{x} in {{{', '.join(py_str(cats[c]) for c in codes)}}}"

    def _oblique_table(self, test: ObliqueTest, tag: str) -> str:
        name = f"_T{self.index}_{tag}"
        if all(c[0] != name for c in self.code.constants):
            terms = ", ".join(f"({f}, {py_float(w)})" for f, w in zip(test.features, test.weights))
            self.code.constants.append((name, f"({terms},)"))
        self.code.helpers.add("oblique")
        return name

    def _holds(self, test, tag: str) -> str:
        """A binary test's condition on present inputs."""
        if isinstance(test, NumericTest):
            op, bound = float64_bound(test.op, test.threshold, test.dtype)
            return f"{self._numeric(test, bound)} {op} {py_float(bound)}"
        if isinstance(test, CategoricalTest):
            return self._labels(test.feature, test.categories)
        if len(test.features) > MAX_INLINE_TERMS:
            return f"_dot(x, {self._oblique_table(test, tag)}) {test.op} {py_float(test.threshold)}"
        terms = " + ".join(f"{py_float(w)} * {self._x(f)}" for f, w in zip(test.features, test.weights))
        return f"0.0 + {terms} {test.op} {py_float(test.threshold)}"

    def _missing(self, test, tag: str) -> str:
        if isinstance(test, ObliqueTest):
            if len(test.features) > MAX_INLINE_TERMS:
                return f"_any_missing(x, {self._oblique_table(test, tag)})"
            return " or ".join(f"{self._x(f)} != {self._x(f)}" for f in dict.fromkeys(test.features))
        x = self._x(test.feature)
        return f"{x} != {x}"

    def _present(self, test, tag: str) -> str:
        if isinstance(test, ObliqueTest):
            if len(test.features) > MAX_INLINE_TERMS:
                return f"not _any_missing(x, {self._oblique_table(test, tag)})"
            return " and ".join(f"{self._x(f)} == {self._x(f)}" for f in dict.fromkeys(test.features))
        x = self._x(test.feature)
        return f"{x} == {x}"

    def _branches(self, split: Split, tag: str):
        """(conditions [(expr, child position)], else position) for a present input, or
        (None, lookup expression) for a split too wide for one if/elif chain."""
        test = split.test
        if isinstance(test, IntervalTest):
            pairs = [float64_bound(test.op, b, test.dtype) for b in test.bounds]
            if len(split.children) > MAX_CHAIN:
                name = f"_T{self.index}_{tag}"
                table = ", ".join(f"({py_float(b)}, {op == '<='})" for op, b in pairs)
                self.code.constants.append((name, f"({table},)"))
                self.code.helpers.add("interval")
                return None, f"_interval({self._x(test.feature)}, {name})"
            x = self._x(test.feature)
            return [(f"{x} {op} {py_float(b)}", i) for i, (op, b) in enumerate(pairs)], len(pairs)
        if isinstance(test, MultiwayTest):
            u = split.unseen
            if len(split.children) > MAX_CHAIN:
                name = f"_T{self.index}_{tag}"
                cats = self.model.features[test.feature].categories
                table = ", ".join(f"{py_str(cats[c])}: {i}" for i, g in enumerate(test.groups) for c in g)
                self.code.constants.append((name, f"{{{table}}}"))
                return None, f"{name}.get({self._x(test.feature)}, {u})"
            conds = [(self._labels(test.feature, g), i) for i, g in enumerate(test.groups) if i != u]
            return conds, u
        cond = self._holds(test, tag)
        if isinstance(test, CategoricalTest) and split.unseen == 0:
            cond += f" or {self._x(test.feature)} is _UNSEEN"
        return [(cond, 0)], 1

    # --- comments --------------------------------------------------------------------------

    def _describe(self, nid: int, split: Split) -> str:
        test, kids = split.test, split.children
        if isinstance(test, NumericTest):
            what = f"{self._name(test.feature)} {test.op} {py_float(test.threshold)}"
        elif isinstance(test, IntervalTest):
            what = f"{self._name(test.feature)} {test.op} each of {len(test.bounds)} bounds"
        elif isinstance(test, ObliqueTest):
            names = ", ".join(self._name(f) for f in test.features[:8]) + (", ..." if len(test.features) > 8 else "")
            what = f"weighted sum of {names} {test.op} {py_float(test.threshold)}"
        else:
            what = f"{self._name(test.feature)} by category"
        if getattr(test, "dtype", "float64") == "float32":
            what += " (compared in float32)"
        m = split.missing
        if isinstance(m, DefaultChild):
            what += f"; missing -> node {kids[m.child]}"
        elif isinstance(m, Surrogates):
            what += f"; missing -> {len(m.surrogates)} surrogate(s), then node {kids[m.default]}"
        else:
            what += "; missing -> every branch, weighted " + ", ".join(map(py_float, m.weights))
        if split.unseen is not None:
            what += f"; unseen -> node {kids[split.unseen]}"
        if split.samples is not None:
            what += f"; samples {py_float(split.samples)}"
        return py_comment(f"# node {nid}: {what}")

    def _leaf_comment(self, nid: int, leaf: Leaf) -> str:
        if not self.comments:
            return ""
        text = f"node {nid}"
        if leaf.samples is not None:
            text += f", samples {py_float(leaf.samples)}"
        if leaf.distribution is not None:
            text += ", distribution " + ", ".join(map(py_float, leaf.distribution))
        return "  " + py_comment("# " + text)

    # --- statements ------------------------------------------------------------------------

    def _leaf(self, nid: int, leaf: Leaf, b: int) -> str:
        note = self._leaf_comment(nid, leaf)
        if self.blend:
            values = ", ".join(map(py_float, leaf.value)) + ("," if len(leaf.value) == 1 else "")
            return f"hits.append(({nid}, p{b}, ({values})))" + note
        returns = self.code.returns
        if returns == "leaf":  # inline too: the body is then an entry point's
            return f"return {self.leaf_values[nid]}" + note
        if returns == "vote":
            k = vote_index(leaf, self.tree.weight)
            if self.comments:
                note = (note or "  #") + py_comment(f" votes {py_str(self.model.target.classes[k])}")
            value = str(k)
        else:
            c = leaf_contribution(self.model, self.tree, leaf)
            value = py_float(c[0]) if returns == "scalar" else f"({', '.join(map(py_float, c))})"
        if self.leaf_into is not None and returns == "scalar":
            return self.leaf_into.format(value) + note
        return (f"{VAR[returns]} = " if self.inline else "return ") + value + note

    def _split(self, nid: int, split: Split, ind: int, b: int) -> list[tuple]:
        """The statements for a split: ("line", indent, text), ("child", position, indent, b)
        and ("range", k variable, lo, hi, indent, b) items, in output order."""
        out: list[tuple] = []
        if self.comments:
            out.append(("line", ind, self._describe(nid, split)))
        test, rule, tag = split.test, split.missing, f"N{nid}"
        conds, other = self._branches(split, tag)
        direct = isinstance(rule, DefaultChild) and conds is not None
        if direct:  # if / elif / else on the conditions, missing folded into its branch
            for j, (cond, pos) in enumerate(conds):
                if pos == rule.child and isinstance(test, NumericTest):  # true or NaN: not the other side
                    op, bound = float64_bound(test.op, test.threshold, test.dtype)
                    cond = f"not ({self._numeric(test, bound)} {_NEGATED[op]} {py_float(bound)})"
                elif pos == rule.child:
                    cond += " or " + self._missing(test, tag)
                out += [("line", ind, f"{'elif' if j else 'if'} {cond}:"), ("child", pos, ind + 1, b)]
            return out + [("line", ind, "else:"), ("child", other, ind + 1, b)]
        k = f"k{ind}"  # the child position; named by depth so nested splits never clobber it
        if isinstance(rule, Surrogates):
            out += [("line", ind, f"if {self._present(test, tag)}:"),
                    ("line", ind + 1, f"{k} = 0 if {conds[0][0]} else 1")]
            for s_i, s in enumerate(rule.surrogates):
                s_tag = f"{tag}_S{s_i}"
                note = f"  # surrogate {s_i + 1}" if self.comments else ""
                out += [("line", ind, f"elif {self._present(s.test, s_tag)}:{note}"),
                        ("line", ind + 1, f"{k} = {s.child_if_true} if {self._holds(s.test, s_tag)} "
                                          f"else {1 - s.child_if_true}")]
            out += [("line", ind, "else:"), ("line", ind + 1, f"{k} = {rule.default}")]
        else:
            miss = -1 if isinstance(rule, Blend) else rule.child
            out += [("line", ind, f"if {self._missing(test, tag)}:"), ("line", ind + 1, f"{k} = {miss}")]
            if conds is None:
                out += [("line", ind, "else:"), ("line", ind + 1, f"{k} = {other}")]
            else:
                for cond, pos in conds:
                    out += [("line", ind, f"elif {cond}:"), ("line", ind + 1, f"{k} = {pos}")]
                out += [("line", ind, "else:"), ("line", ind + 1, f"{k} = {other}")]
        if not isinstance(rule, Blend):
            return out + [("range", k, 0, len(split.children), ind, b)]
        for pos, w in enumerate(rule.weights):  # a missing row follows every branch, weighted
            out += [("line", ind, f"p{b + 1} = p{b} * {py_float(w)} if {k} < 0 else p{b} if {k} == {pos} else 0.0"),
                    ("line", ind, f"if p{b + 1} != 0.0:"), ("child", pos, ind + 1, b + 1)]
        return out

    def _range(self, k: str, lo: int, hi: int, ind: int, b: int) -> list[tuple]:
        """Dispatch on child position ``k`` in [lo, hi): a chain of at most MAX_CHAIN branches."""
        n = hi - lo
        if n == 1:
            return [("child", lo, ind, b)]
        if n <= MAX_CHAIN:
            out: list[tuple] = []
            for pos in range(lo, hi - 1):
                out += [("line", ind, f"{'elif' if pos > lo else 'if'} {k} == {pos}:"), ("child", pos, ind + 1, b)]
            return out + [("line", ind, "else:"), ("child", hi - 1, ind + 1, b)]
        step = -(-n // MAX_CHAIN)
        starts = list(range(lo, hi, step))
        out = []
        for j, start in enumerate(starts):
            end = min(hi, start + step)
            head = "else:" if j == len(starts) - 1 else f"{'elif' if j else 'if'} {k} < {end}:"
            out += [("line", ind, head), ("range", k, start, end, ind + 1, b)]
        return out

    def _part_name(self, nid: int) -> str:
        return f"_tree_{self.index}_n{nid}"

    def _emit_part(self, root: int) -> Function:
        lines: list[str] = []
        nodes = self.tree.nodes
        stack: list[tuple] = [("node", root, 1, 0)]
        while stack:
            item = stack.pop()
            kind = item[0]
            if kind == "line":
                lines.append(_INDENT * (item[1] - 1) + item[2])
                continue
            if kind == "node":
                _, nid, ind, b = item
                node = nodes[nid]
                if isinstance(node, Leaf):
                    lines.append(_INDENT * (ind - 1) + self._leaf(nid, node, b))
                    continue
                items = self._split(nid, node, ind, b)
                parent = node
            else:  # "range": expand against the split that pushed it
                _, k, lo, hi, ind, b, parent = item
                items = self._range(k, lo, hi, ind, b)
            for it in reversed(items):
                if it[0] == "range":
                    stack.append(it + (parent,))
                elif it[0] == "child":
                    stack.append(self._child(parent.children[it[1]], it[2], it[3]))
                else:
                    stack.append(it)
        params = "x, p0, hits, todo" if self.blend else "x"
        return Function(self._part_name(root), params, "", lines)

    def _child(self, cid: int, ind: int, b) -> tuple:
        if isinstance(self.tree.nodes[cid], Leaf) or ind <= MAX_BLOCK_DEPTH:
            return ("node", cid, ind, b)
        self._queue.append(cid)
        self._queue_used = True
        note = f"  # continue at node {cid}" if self.comments else ""
        if self.blend:
            return ("line", ind, f"todo.append(({self._part_name(cid)}, p{b})){note}")
        return ("line", ind, f"return {self._part_name(cid)}{note}")

    # --- the whole tree --------------------------------------------------------------------

    def write(self) -> TreeCode | None:
        self._queue_used = False
        self._queue = [0]
        parts = []
        if self.inline and self.blend:
            return None
        while self._queue:
            parts.append(self._emit_part(self._queue.pop()))
        code = self.code
        about = ""
        if self.comments:
            t = self.tree
            about = f"# tree {self.index}: {len(t.nodes)} nodes, weight {py_float(t.weight)}"
            if t.output is not None:
                about += f", adds to raw[{t.output}]"
            about = py_comment(about)
        if self.inline:
            if self._queue_used:
                return None
            code.body = ([about] if about else []) + parts[0].body
            return code
        if self.blend:
            code.helpers.add("blend")
            code.functions.append(Function(code.name, "x", "", self._blend_driver()))
        elif self._queue_used:
            code.functions.append(Function(code.name, "x", "", [
                f"step = {parts[0].name}(x)",
                "while callable(step):  # a deep tree continues in its next part",
                _INDENT + "step = step(x)",
                "return step",
            ]))
        else:
            parts[0].name = code.name
        (code.functions[0] if code.functions else parts[0]).comment = about
        code.functions.extend(parts)
        return code

    def _blend_driver(self) -> list[str]:
        w, f32 = self.tree.weight, self.model.dtype == "float32"
        scaled = "v" if w == 1.0 else f"{py_float(w)} * v"
        if self.code.returns == "vote":
            self.code.helpers.add("argmax")
            result = "_argmax(c)" if w == 1.0 else f"_argmax([{scaled} for v in c])"
        elif self.code.returns == "scalar":
            v = "c[0]" if w == 1.0 else f"{py_float(w)} * c[0]"
            result = f"_f32({v})" if f32 else v
        elif w == 1.0 and not f32:
            result = "c"
        else:
            result = f"[{f'_f32({scaled})' if f32 else scaled} for v in c]"
        return [
            "hits = []",
            f"todo = [({self._part_name(0)}, 1.0)]",
            "while todo:  # parts still to walk, each with its path weight",
            _INDENT + "part, p = todo.pop()",
            _INDENT + "part(x, p, hits, todo)",
            f"c = _blend(hits, {self.width})",
            f"return {result}",
        ]
