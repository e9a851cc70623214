"""The table-driven form of the C target: trees as constant arrays, descended in a loop.

A run of consecutive table-form trees in one translation unit becomes one function holding
``static const`` tables and one small loop. It compiles in about a second where branchy code
takes minutes (a 200k-node CART tree: 1.3 s, against over 17 minutes and 3.9 GB in the goto
form), and big ensembles run several times faster (numbers in ``rulegen/targets/c/target.py``).

**Rows.** ``T`` holds one 16-byte row ``{t, c, k}`` per node (double, int, int); in the
float profile 8 bytes (float, short, short) while row numbers fit a short, else 12. The double
profile uses the same float rows, with ``xx`` holding each input rounded to float, for trees
whose every test rounds its input to float32 first (:func:`float_rows_apply`: XGBoost's,
LightGBM's, scikit-learn's): the test's own rounding, so exact, and half the table (500
XGBoost trees of depth 6: 4.88 to 4.23 us/row in the batch; 100 forest trees of depth 10:
2.38 to 2.25 us/row):

- A numeric split goes to row ``c`` when ``xx[k] <= t`` and to row ``c + 1`` otherwise, so a
  NaN always goes to ``c + 1``. ``xx`` is built once per call: ``xx[0] = 0.0`` and the slots
  after it hold ``x[f]`` or ``-x[f]`` (``XF`` says which feature; positive slots come first).
  Every test of docs/IR.md, after :func:`rulegen.codegen.lower.float64_bound`, is one of
  ``x < t``, ``x <= t`` with the missing child either side; :func:`_numeric` rewrites each
  exactly as ``s*x <= t'`` with ``s = +-1`` (``x < t`` is ``x <= prev(t)`` in doubles) and
  the children ordered so that NaN takes the second (in the float profile ``t'`` then becomes
  the largest float not above it, :func:`rulegen.codegen.lower.float32_bound`, exact for
  every float x); tests that are constant for every number
  and NaN alike compare ``xx[0]`` with ``+-inf``. Negation is exact, so nothing is rounded.
- A categorical split has ``k < 0``: it looks up bit ``cc[-1 - k]`` of the bitset at byte
  ``(int)t`` of ``B``, and goes to row ``c + bit``. ``cc`` holds, per categorical feature, the
  code when it is a known one (integral, ``0 <= x <= n - 1``, tested before any int cast, as
  in the other forms), ``n`` for an unseen value and ``n + 1`` for NaN; the bitset gives the
  side for each: the code's membership, then ``Split.unseen``, then the default child.
- A leaf has ``k = 0``; its ``c`` is its own row, or one less when ``!(0.0 <= t)``, so a step
  from a leaf stays on it. Its ``t`` is what it adds: the contribution itself (scalar leaves,
  from :func:`rulegen.codegen.lower.leaf_contribution`), an offset into ``V`` (vector leaves)
  or the class it votes for.

**Layout.** Siblings are adjacent (one child index per row, no branch to choose it) and rows
follow a depth-first walk, so a subtree is contiguous; :func:`layout` gives the node id of
every row. Measured (gcc 12 -O2, this 2-core EPYC; 500 random depth-6 trees with 16 chains /
the 200k-node CART tree): these 16-byte rows 2.9 us / 255 ns per row; breadth-first order
3.0 us / 313 ns; three separate arrays 3.6 us / 263 ns; 24-byte rows with explicit left and
right children 20 us (gcc turns the choice into a branch) / 242 ns. Decoding a flags byte per
step instead (op, missing side, leaf bit) cost about twice the time of the ``xx`` slots:
big_ensemble(1000) with 8 chains 11.0 us against 5.3 us.

**Descent.** ``CHAINS`` trees descend together, one step each per loop turn, for as many
steps as the deepest of them (leaves stay put), then add their leaves in tree order; the
accumulation is exactly that of the other forms. The trees left after the last full batch
descend together the same way; a lone tree descends with a leaf test (see ``_step_numeric``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from rulegen.codegen import lower
from rulegen.codegen.literals import c_double, c_float
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Leaf,
    Model,
    NumericTest,
    Split,
    Tree,
)
from rulegen.targets.c import trees as c_trees
# chains: big_ensemble(1000) 20900 / 7400 / 5300 / 4700 / 5700; 500 depth-6 trees
# 8800 / 5500 / 3800 / 3000 / 3700 (32 spills the chain indices to the stack).
CHAINS = 16

# A function with at most this many rows gets the node each row holds as a comment on it
# (with comments on); bigger tables only mark where each tree starts.
ROW_COMMENTS = 2000

_INDENT = "    "
_INT_ROWS = 32767  # beyond this, row numbers need a 32-bit int: the function checks it
_F32_EXACT = 2**24  # offsets and indices kept in a float row's t stay exact below this
_PER_LINE = 16  # numbers per line in the small tables
_NAMES = {"T": "T", "V": "V"}  # function-local tables


def supports(tree: Tree) -> bool:
    """Whether the table form can express the tree: binary numeric and categorical tests
    with a default child for missing values (no surrogates, blends, interval, multiway or
    oblique splits)."""
    for node in tree.nodes:
        if isinstance(node, Split):
            if not isinstance(node.missing, DefaultChild):
                return False
            if not isinstance(node.test, (NumericTest, CategoricalTest)):
                return False
    return True


def leaf_kind(model: Model, tree: Tree) -> str:
    """How a tree's leaves reach the accumulator: ``vote`` (its weight to one class),
    ``scalar`` (one value to one slot) or ``vector`` (n_raw values)."""
    if model.aggregation == "vote":
        return "vote"
    return "scalar" if tree.output is not None or model.n_raw == 1 else "vector"


def _prev(t: float) -> float:
    return math.nextafter(t, -math.inf)


def _numeric(test: NumericTest, missing_first: bool):
    """The test as ``(sign, bound, swap)``: for every float64 x, the row goes to the split's
    ``children[1 if swap else 0]`` exactly when ``sign * x <= bound``, and NaN goes to the
    other child. Or ``(None, bound, False)`` for a test that sends numbers and NaN alike to
    one child: ``0.0 <= bound`` with bound = +inf (child 0) or -inf (child 1)."""
    op, t = lower.float64_bound(test.op, test.threshold, test.dtype)
    if not missing_first:  # NaN to child 1 already: child 0 takes x op t
        if op == "<=":
            return 1, t, False
        if t == -math.inf:  # x < -inf: never; everything goes to child 1
            return None, -math.inf, False
        return 1, _prev(t), False  # x < t is x <= prev(t) for every double (prev(inf) = max)
    # NaN to child 0: swap, so the first row takes what child 1 takes: !(x op t), NaN false
    if op == "<":  # x >= t  is  -x <= -t
        return -1, -t, True
    if t == math.inf:  # x > inf: never; everything goes to child 0
        return None, math.inf, False
    return -1, _prev(-t), True  # x > t  is  -x < -t  is  -x <= prev(-t)


def numeric_tests(tree: Tree) -> list:
    """:func:`_numeric` of every numeric split, by node id (None elsewhere)."""
    return [_numeric(node.test, node.missing.child == 0)
            if isinstance(node, Split) and isinstance(node.test, NumericTest) else None
            for node in tree.nodes]


def layout(tree: Tree, numeric: list | None = None) -> list[int]:
    """Node ids in table row order: depth first from the root, the two children of a split
    in adjacent rows (the one a failing test or NaN takes second); no recursion."""
    numeric = numeric_tests(tree) if numeric is None else numeric
    swaps = [n is not None and n[2] for n in numeric]
    order, stack = [0], [0]
    while stack:
        nid = stack.pop()
        node = tree.nodes[nid]
        if isinstance(node, Split):
            kids = node.children[::-1] if swaps[nid] else node.children
            order.extend(kids)
            stack.extend(reversed(kids))
    return order


class Group:
    """A run of consecutive table-form trees of one leaf kind, in one translation unit."""

    def __init__(self, model: Model, kind: str, acc_type: str, lit: Callable[[float], str],
                 comments: bool, f32: bool = False, rows32: bool = False):
        """``f32``: the float profile (float rows and inputs; see the module's notes).
        ``rows32``: float rows for double inputs, each rounded to float first, for trees
        whose every test reads its input rounded to float32 (see :func:`float_rows_apply`)."""
        self.model, self.kind, self.acc_type, self.comments = model, kind, acc_type, comments
        self.f32 = f32 or rows32  # float rows and xx
        self.real = "float" if self.f32 else "double"
        self.input = "float" if f32 else "double"
        self.rows32 = rows32
        self.lit = lit  # a value as a literal of the accumulation type, rounded to it
        self.indices: list[int] = []
        self.trees: list[Tree] = []
        self.names = _NAMES  # how statements name the tables

    def add(self, index: int, tree: Tree) -> None:
        self.indices.append(index)
        self.trees.append(tree)

    # --- tables -------------------------------------------------------------------------

    def _encode(self):
        """Rows (t, c, key) with key a slot key, a categorical feature key or None (leaf or
        constant), the root row and depth of each tree, and the side tables."""
        model = self.model
        rows: list[tuple[float, int, object]] = []
        self.row_nodes: list[tuple[int, int]] = []  # (tree position, node id) of each row
        roots, depths, spans = [], [], []
        bits: list[int] = []
        bitsets: dict[tuple[int, ...], int] = {}
        values: list[float] = []
        self._shared: dict[tuple[str, ...], int] = {}
        for pos, tree in enumerate(self.trees):
            base = len(rows)
            numeric = numeric_tests(tree)
            order = layout(tree, numeric)
            self.row_nodes += [(pos, nid) for nid in order]
            row_of = {nid: base + r for r, nid in enumerate(order)}
            for nid in order:
                node = tree.nodes[nid]
                row = row_of[nid]
                if isinstance(node, Leaf):
                    t = float(nid) if self.kind == "id" else self._leaf_payload(tree, node, values)
                    if self.f32:  # the float row holds t rounded; its sign picks c
                        t = float(np.float32(t))
                    rows.append((t, row - 1 + (0.0 <= t), None))
                    continue
                test = node.test
                if isinstance(test, NumericTest):
                    sign, bound, swap = numeric[nid]
                    if self.f32:  # s*x <= bound for a float s*x: the largest float not above it
                        bound = lower.float32_bound("<=", bound)[1]
                    first = row_of[node.children[1] if swap else node.children[0]]
                    rows.append((bound, first, None if sign is None else ("x", sign, test.feature)))
                    continue
                n = len(model.features[test.feature].categories)
                members = set(test.categories)
                right = [0 if code in members else 1 for code in range(n)]
                right.append(0 if node.unseen == 0 else 1)  # unseen: None means child 1
                right.append(node.missing.child)  # NaN
                pattern = tuple(int(sum(b << j for j, b in enumerate(right[i:i + 8])))
                                for i in range(0, len(right), 8))
                if pattern not in bitsets:
                    bitsets[pattern] = len(bits)
                    bits.extend(pattern)
                rows.append((float(bitsets[pattern]), row_of[node.children[0]], ("c", test.feature)))
            roots.append(base)
            depths.append(lower.depth(tree))
            spans.append((base, len(rows) - 1))
        return rows, roots, depths, spans, bits, values

    def _leaf_payload(self, tree: Tree, leaf: Leaf, values: list[float]) -> float:
        if self.kind == "vote":
            return float(lower.vote_index(leaf, tree.weight))
        contribution = lower.leaf_contribution(self.model, tree, leaf)
        if self.kind == "scalar":
            return float(contribution[0])
        # leaves with the same values share them in V (pure leaves of a forest mostly do);
        # the key is the value as written, so -0.0 and 0.0 stay apart
        written = tuple(self.lit(v) for v in contribution)
        offset = self._shared.get(written)
        if offset is None:
            offset = self._shared[written] = len(values)
            values.extend(contribution)
        return float(offset)

    # --- C --------------------------------------------------------------------------------

    def unit(self, name: str) -> dict:
        """The group as a tree-function record for the C templates."""
        rows, roots, depths, spans, bits, values = self._encode()
        x_keys = sorted({k for _t, _c, k in rows if k is not None and k[0] == "x"},
                        key=lambda k: (-k[1], k[2]))
        slot = {k: j + 1 for j, k in enumerate(x_keys)}
        n_pos = sum(1 for k in x_keys if k[1] > 0)
        cat_features = sorted({k[1] for _t, _c, k in rows if k is not None and k[0] == "c"})
        cat_slot = {f: j for j, f in enumerate(cat_features)}

        def key_code(k) -> int:
            if k is None:
                return 0
            return slot[k] if k[0] == "x" else -1 - cat_slot[k[1]]

        ind, ind2, ind3 = _INDENT, _INDENT * 2, _INDENT * 3
        n_trees = len(self.trees)
        batches = n_trees // CHAINS
        slots = self._slots()

        # the tables
        short = self.f32 and len(rows) <= _INT_ROWS and len(x_keys) + len(cat_features) <= _INT_ROWS
        index = "short" if short else "int"
        if self.f32 and (len(values) >= _F32_EXACT or len(bits) >= _F32_EXACT):
            raise ValueError("a float table's offsets must stay below 2**24")  # no such model fits a chip
        num = c_float if self.f32 else c_double
        tables = [f"{ind}static const struct {{ {self.real} t; {index} c, k; }} T[{len(rows)}] = {{"]
        tree_at = {span[0]: i for i, span in enumerate(spans)}
        notes = None
        if self.comments and len(rows) <= ROW_COMMENTS:
            emitters = [c_trees.Emitter(self.model, tree, "", True) for tree in self.trees]
            notes = [emitters[pos].comment(nid) for pos, nid in self.row_nodes]
        for r, (t, c, k) in enumerate(rows):
            if self.comments and r in tree_at:
                i = tree_at[r]
                tables.append(f"{ind2}/* tree {self.indices[i]}: rows {spans[i][0]}-{spans[i][1]} */")
            comma = "," if r + 1 < len(rows) else ""
            tables.append(f"{ind2}{{{num(t)}, {c}, {key_code(k)}}}{comma}"
                          + (f"  {notes[r]}" if notes else ""))
        tables.append(f"{ind}}};")
        if n_trees > 1:
            tables += _array("int", "R", _ints(roots))
        if batches > 1:
            tables += _array("int", "D", _ints(max(depths[b * CHAINS:(b + 1) * CHAINS]) for b in range(batches)))
        if x_keys:
            top = max(k[2] for k in x_keys)  # the float profile keeps flash small
            xf_type = "unsigned char" if self.f32 and top < 256 else "int"
            tables += _array(xf_type, "XF", _ints(k[2] for k in x_keys))
        if cat_features:
            tables += _array("int", "CF", _ints(cat_features))
            tables += _array("int", "CN", _ints(len(self.model.features[f].categories) for f in cat_features))
            tables += _array("unsigned char", "B", _ints(bits))
        if values:
            width = self.model.n_raw  # one line per leaf
            tables += _array(self.acc_type, "V", [self.lit(v) for v in values], width)
        typ, arr = ("int", "S") if self.kind == "scalar" else (self.acc_type, "W")
        per_tree = _array(typ, arr, slots)

        # the statements
        zero = num(0.0)
        stmts = [f"{ind}xx[0] = {zero};"] if x_keys or cat_features else [f"{ind}(void)x;", f"{ind}xx[0] = {zero};"]
        cast = "(float)" if self.rows32 else ""  # a float32 test's own rounding of its input
        if n_pos:
            stmts.append(f"{ind}for (j = 0; j < {n_pos}; j++) xx[1 + j] = {cast}x[XF[j]];")
        if len(x_keys) > n_pos:
            stmts.append(f"{ind}for (j = {n_pos}; j < {len(x_keys)}; j++) xx[1 + j] = -{cast}x[XF[j]];")
        if cat_features:
            stmts += [f"{ind}for (j = 0; j < {len(cat_features)}; j++) {{",
                      f"{ind2}v = x[CF[j]];",
                      f"{ind2}if (v != v) cc[j] = CN[j] + 1;",
                      (f"{ind2}else if (v >= 0 && v <= ({self.input})(CN[j] - 1) && v == ({self.input})(int)v)"
                       " cc[j] = (int)v;"),
                      f"{ind2}else cc[j] = CN[j];",
                      f"{ind}}}"]
        step = _step_categorical if cat_features else _step_numeric
        if batches:
            stmts.append(f"{ind}for (b = 0; b < {batches}; b++) {{")
            stmts += [f"{ind2}i{j} = R[{_at('b', j)}];" for j in range(CHAINS)]
            steps = "D[b]" if batches > 1 else str(max(depths[:CHAINS]))
            stmts.append(f"{ind2}for (d = 0; d < {steps}; d++) {{")
            stmts += [ind3 + s for j in range(CHAINS) for s in step(f"i{j}")]
            stmts.append(f"{ind2}}}")
            for j in range(CHAINS):
                stmts += [ind2 + s for s in self._add(f"i{j}", _at("b", j), None, slots)]
            stmts.append(f"{ind}}}")
        rest = list(range(batches * CHAINS, n_trees))
        if len(rest) > 1:
            stmts += [f"{ind}i{j} = R[{ti}];" for j, ti in enumerate(rest)]
            stmts.append(f"{ind}for (d = 0; d < {max(depths[ti] for ti in rest)}; d++) {{")
            stmts += [ind2 + s for j in range(len(rest)) for s in step(f"i{j}")]
            stmts.append(f"{ind}}}")
            for j, ti in enumerate(rest):
                stmts += [ind + s for s in self._add(f"i{j}", str(ti), ti, slots)]
        elif rest:
            ti = rest[0]
            stmts.append(f"{ind}i0 = {f'R[{ti}]' if n_trees > 1 else '0'};")
            stmts.append(f"{ind}while (T[i0].c > i0) {{")
            stmts += [ind2 + s for s in step("i0", branch=True)]
            stmts.append(f"{ind}}}")
            stmts += [ind + s for s in self._add("i0", str(ti), ti, slots)]

        # the per-tree slots or weights and the locals, each only where used
        text = "\n".join(stmts)
        if f"{arr}[" in text:
            tables += per_tree
        ints = [v for v in ("b", "d", "j") if f"for ({v} = " in text]
        ints += [f"i{j}" for j in range(min(CHAINS, n_trees))]
        if "o = " in text:
            ints.append("o")
        decls = [f"{ind}{self.real} xx[{1 + len(x_keys)}];"]
        if cat_features:
            decls += [f"{ind}int cc[{len(cat_features)}];", f"{ind}{self.input} v;"]
        decls.append(f"{ind}int {', '.join(ints)};")
        if len(rows) > _INT_ROWS and not short:
            decls.append(f"{ind}(void)sizeof(char[sizeof(int) >= 4 ? 1 : -1]);  /* rows need a 32-bit int */")

        first, last = self.indices[0], self.indices[-1]
        what = {"scalar": "its contribution", "vector": "an offset into V",
                "vote": "the class it votes for", "id": "its node id"}[self.kind]
        which = f"tree {first}" if first == last else f"trees {first} to {last}"
        comments = [
            f"{which}: table form, {len(rows)} rows {{t, c, k}} in T, one per node",
            "  (node ids by row: rulegen.targets.c.table.layout(tree)). A split goes to row c when",
            "  xx[k] <= t (xx[0] = 0.0, xx[1..] = x[XF[j]] then -x[XF[j]]; NaN fails), else to c + 1;",
            "  k < 0: to c + bit cc[-1 - k] of the bitset at B[(int)t] (code, unseen, missing).",
            f"  A leaf has k = 0 and stays put; its t is {what}. Up to {CHAINS} trees descend together.",
        ]
        for i, tree in enumerate(self.trees):
            note = (f"tree {self.indices[i]}: {len(tree.nodes)} nodes, depth {depths[i]}, "
                    f"table form, rows {spans[i][0]}-{spans[i][1]}")
            if tree.weight != 1.0:
                note += f", weight {tree.weight!r}"
            if tree.output is not None:  # never with "vote": validation refuses it
                note += f", adds to raw[{tree.output}]"
            comments.append(note)
        return {"name": name, "index": first, "first": first, "last": last, "comments": comments,
                "decls": [], "void_x": False, "body": tables + decls + stmts, "uses_dot": False,
                "acc": "int" if self.kind == "id" else None}

    def _slots(self) -> list[str]:
        """Per tree: the accumulator slot (scalar) or the vote weight literal (vote)."""
        if self.kind == "scalar":
            return [str(t.output if t.output is not None else 0) for t in self.trees]
        if self.kind == "id":
            return []
        if self.kind == "vote":
            return [self.lit(t.weight) for t in self.trees]
        return []

    def _add(self, var: str, tree_expr: str, tree_pos: int | None, slots: list[str]) -> list[str]:
        """Add the leaf at row ``var`` of tree ``tree_expr`` (``tree_pos`` when known)."""
        same = len(set(slots)) <= 1
        t, v = self.names["T"], self.names["V"]
        if self.kind == "id":  # acc is the int array of leaf ids, one per tree of the model
            at = f"{self.indices[0]} + {tree_expr}" if self.indices[0] else tree_expr
            return [f"acc[{at}] = (int){t}[{var}].t;"]
        if self.kind == "scalar":
            s = slots[0] if same else (slots[tree_pos] if tree_pos is not None else f"S[{tree_expr}]")
            cast = "(float)" if self.acc_type == "float" else ""
            return [f"acc[{s}] = acc[{s}] + {cast}{t}[{var}].t;"]
        if self.kind == "vote":
            w = slots[0] if same else (slots[tree_pos] if tree_pos is not None else f"W[{tree_expr}]")
            return [f"o = (int){t}[{var}].t; acc[o] = acc[o] + {w};"]
        n = self.model.n_raw
        if n <= 4:
            return [f"o = (int){t}[{var}].t; " + " ".join(
                f"acc[{k}] = acc[{k}] + {v}[o{f' + {k}' if k else ''}];" for k in range(n))]
        return [f"o = (int){t}[{var}].t;", f"for (j = 0; j < {n}; j++) acc[j] = acc[j] + {v}[o + j];"]


def float_rows_apply(model: Model, tree: Tree, kind: str, acc_type: str) -> bool:
    """Whether the double profile can hold the tree in float rows, halving the table: every
    test rounds its input to float32 first (XGBoost's, LightGBM's and scikit-learn's do), so
    ``(float)x`` against the float bound decides exactly as the test; and every leaf's payload
    is exact in a float (offsets, classes, node ids, or contributions summed in float)."""
    if kind == "scalar" and acc_type != "float":
        return False
    return len(tree.nodes) < _F32_EXACT and all(
        isinstance(n.test, NumericTest) and n.test.dtype == "float32"
        for n in tree.nodes if isinstance(n, Split))


def _step_numeric(i: str, branch: bool = False) -> list[str]:
    """One step of a descent. Many chains at once: branch-free, the chains hide each other's
    latency. One chain alone: a branch, so the processor can run ahead on its prediction
    (ns/row on CART trees of 20k / 200k nodes: 125 / 259 without, 105 / 224 with)."""
    if branch:
        return [f"if (xx[T[{i}].k] <= T[{i}].t) {i} = T[{i}].c; else {i} = T[{i}].c + 1;"]
    return [f"{i} = T[{i}].c + !(xx[T[{i}].k] <= T[{i}].t);"]


def _step_categorical(i: str, branch: bool = False) -> list[str]:
    return [(f"if (T[{i}].k < 0) {{ o = cc[-1 - T[{i}].k]; "
             f"{i} = T[{i}].c + ((B[(int)T[{i}].t + (o >> 3)] >> (o & 7)) & 1); }}"),
            *("else " + s for s in _step_numeric(i, branch))]


def _ints(values) -> list[str]:
    return [str(int(v)) for v in values]


def _array(ctype: str, name: str, items: list[str], per_line: int = _PER_LINE) -> list[str]:
    """A static const array, ``per_line`` items to a line."""
    head = f"{_INDENT}static const {ctype} {name}[{len(items)}] = {{"
    if len(items) <= per_line:
        return [f"{head}{', '.join(items)}}};"]
    lines = [head]
    for i in range(0, len(items), per_line):
        comma = "," if i + per_line < len(items) else ""
        lines.append(f"{_INDENT * 2}{', '.join(items[i:i + per_line])}{comma}")
    return lines + [f"{_INDENT}}};"]


def _at(batch: str, j: int) -> str:
    return f"{CHAINS} * {batch} + {j}" if j else f"{CHAINS} * {batch}"

