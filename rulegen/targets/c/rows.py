"""Tables read straight from the rows: the C target's batch kernel for a one-tree model.

The table form of :mod:`rulegen.targets.c.table` builds ``xx`` (every feature, and its
negation where a test needs it) once per row and shares it across many trees. With one tree
that copy costs more than the descent (a depth-8 tree: 55 ns/row with ``xx``, 26 without,
gcc 12 -O2 on this 2-core EPYC), so these tables name the feature and a sign instead:

- A split row ``{t, c, f, s}`` goes to row ``c`` when ``x[f] * s <= t`` and to ``c + 1``
  otherwise (NaN too); ``s = +-1``, and ``x * -1`` is ``-x`` exactly, so the test is the same
  ``s*x <= t'`` as in the table form (:func:`rulegen.targets.c.table._numeric`; in the float
  profile ``t'`` is the largest float not above it, and in the double profile a float row is
  widened first, which is exact).
- A leaf has ``s = 0`` and ``c`` its own row: a step is ``c + ((x[f] * s <= t) ^ 1) & s``, so
  a leaf stays put whatever ``x[f] * 0`` is (NaN for an infinite or missing value). Its ``t``
  is what it adds, as in the table form.
- A test that sends numbers and NaN alike to one child has no row of its own: its row is a copy
  of that child's (a leaf's, with its own row as ``c``), so a row reaching it goes on as if it
  had reached the child.

**Descent.** Blocks of ``ROWS`` rows go down the tree together, one step of each row per
turn, for as many steps as the tree is deep, so the rows hide each other's latency; then each
row adds its leaf. A single row (``NAME_predict``) takes the branchy descent of the table form
with a leaf test instead. Measured on the depth-8 tree (505 nodes) over 100,000 float rows:
8 / 16 / 32 rows per block 26.3 / 26.2 / ~29 ns/row (the table form 96 ns, nested code 46);
two leaf rows per leaf instead of the ``& s`` mask 22.9 ns (but half as many rows again); the
sign as a select instead of a multiply 68 ns. Several trees are better served by the table
form's chains of trees, which share ``xx``: 10 trees of depth 8, 176 ns/row there against 271
as row tables.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from rulegen.codegen import lower
from rulegen.codegen.literals import c_double, c_float
from rulegen.ir.nodes import CategoricalTest, Model, Split, Tree
from rulegen.targets.c import table as c_table
from rulegen.targets.c import trees as c_trees

ROWS = 8  # rows descending together in a block
_SHORT = 32767


def supports(model: Model) -> bool:
    """Whether the model is one tree that row tables can write: a numeric tree of the table
    form, balanced enough that descending every row as deep as the deepest leaf costs little
    more than each row's own path (a chain of 2,500 splits is not: most rows leave early)."""
    if len(model.trees) != 1 or len(model.features) > _SHORT:
        return False
    tree = model.trees[0]
    return c_table.supports(tree) and _balanced(tree) and not any(
        isinstance(n, Split) and isinstance(n.test, CategoricalTest) for n in tree.nodes)


def _balanced(tree: Tree) -> bool:
    """Depth at most twice that of a complete tree with as many leaves, plus 4."""
    leaves = sum(1 for n in tree.nodes if not isinstance(n, Split))
    return lower.depth(tree) <= 2 * math.ceil(math.log2(max(leaves, 2))) + 4


class RowsGroup(c_table.Group):
    """The tree of a one-tree model as a row table at file scope and a block function
    ``(x, m, acc)`` over m consecutive rows.

    ``one_row``: the function also serves ``NAME_predict`` (m = 1 descends with a branch);
    without it the table serves the batch only (when the one-row code is branchy).
    ``float_rows``: also a variant reading float rows (the double profile's
    ``NAME_predict_batch_f``) without converting them first."""

    def __init__(self, model: Model, kind: str, acc_type: str, lit: Callable[[float], str],
                 comments: bool, f32: bool = False, one_row: bool = True, float_rows: bool = False,
                 rows32: bool = False):
        super().__init__(model, kind, acc_type, lit, comments, f32, rows32)
        self.one_row, self.float_rows = one_row, float_rows
        self.add(0, model.trees[0])

    def rows(self):
        """Rows (t, c, f, s) and each tree's root row and depth."""
        rows, roots, depths, _spans, _bits, values = self._encode()
        out: list[tuple[float, int, int, int] | None] = [None] * len(rows)
        for r in range(len(rows) - 1, -1, -1):  # a copy's child comes later: already written
            t, c, key = rows[r]
            if key is not None:
                out[r] = (t, c, key[2], key[1])
            elif isinstance(self._node(r), Split):  # constant test: 0.0 <= t picks the child
                target = out[c if 0.0 <= t else c + 1]
                out[r] = (target[0], r, 0, 0) if target[3] == 0 else target
            else:
                out[r] = (t, r, 0, 0)
        return out, roots, depths, values

    def _node(self, r: int):
        pos, nid = self.row_nodes[r]
        return self.trees[pos].nodes[nid]

    def unit(self, name: str) -> dict:
        rows, roots, depths, values = self.rows()
        tree, root, depth = self.trees[0], roots[0], depths[0]
        ind, n_feat, n_raw = c_trees.INDENT, len(self.model.features), self.model.n_raw
        wide = not self.f32 or len(rows) > _SHORT or n_feat > 256
        fields = f"{'int' if wide else 'short'} c; {'short f, s' if wide else 'unsigned char f; signed char s'};"
        num = c_float if self.f32 else c_double
        self.names = {"T": f"{name}_T", "V": f"{name}_V"}
        notes = None
        if self.comments and len(rows) <= c_table.ROW_COMMENTS:
            emitter = c_trees.Emitter(self.model, tree, "", True)
            notes = [emitter.comment(nid) for _pos, nid in self.row_nodes]
        table = [f"static const struct {{ {self.real} t; {fields} }} {name}_T[{len(rows)}] = {{"]
        for r, (t, c, f, s) in enumerate(rows):
            comma = "," if r + 1 < len(rows) else ""
            table.append(f"{ind}{{{num(t)}, {c}, {f}, {s}}}{comma}" + (f"  {notes[r]}" if notes else ""))
        table.append("};")
        if values:
            table += [line[len(ind):] for line in c_table._array(
                self.acc_type, f"{name}_V", [self.lit(v) for v in values], n_raw)]
        add = self._add("i[r]", "0", 0, self._slots())
        functions = [self._block(name, self.input, self.one_row, root, depth, add)]
        if self.float_rows:
            functions.append(self._block(f"{name}_f", "float", False, root, depth, add))
        what = {"scalar": "its contribution", "vector": "an offset into V",
                "vote": "the class it votes for"}[self.kind]
        how = "table form (row tables)" if self.one_row else "row tables for the batch"
        note = f"tree 0: {len(tree.nodes)} nodes, depth {depth}, {how}"
        if tree.weight != 1.0:
            note += f", weight {tree.weight!r}"
        comments = [
            f"tree 0 as row tables: {len(rows)} rows {{t, c, f, s}} in {name}_T, one per node",
            "  (node ids by row: rulegen.targets.c.table.layout(tree)). A split goes to row c when",
            "  x[f] * s <= t (s = +-1; NaN fails), else to c + 1. A leaf has s = 0 and c its own",
            f"  row; its t is {what}. Rows descend {ROWS} at a time.",
            note,
        ]
        return {"name": name, "index": 0, "first": 0, "last": 0, "comments": comments,
                "block": True, "globals": table, "functions": functions,
                "float_block": f"{name}_f" if self.float_rows else None}

    def _block(self, fname: str, in_type: str, one_row: bool, root: int, depth: int,
               add: list[str]) -> list[str]:
        """A function adding the tree's leaf to each of m rows of x (row-major, in_type)."""
        ind, ind2, ind3, ind4 = (c_trees.INDENT * k for k in range(1, 5))
        t = self.names["T"]
        n_feat, n_raw = len(self.model.features), self.model.n_raw
        cast = f"({self.real})" if in_type != self.real else ""
        body: list[str] = []
        if one_row:  # NAME_predict: one row, a branch per step, no wasted steps at a leaf
            body += [f"{ind}if (m == 1) {{",
                     f"{ind2}i[0] = {root};",
                     f"{ind2}while ({t}[i[0]].c > i[0]) {{",
                     (f"{ind3}if ({cast}x[{t}[i[0]].f] * ({self.real}){t}[i[0]].s <= {t}[i[0]].t) "
                      f"i[0] = {t}[i[0]].c; else i[0] = {t}[i[0]].c + 1;"),
                     f"{ind2}}}"]
            body += [ind2 + line.replace("i[r]", "i[0]") for line in add]
            body += [f"{ind2}return;", f"{ind}}}"]
        step = (f"i[r] = {t}[i[r]].c + ((({cast}x[(b + r) * {n_feat} + {t}[i[r]].f] * ({self.real}){t}[i[r]].s"
                f" <= {t}[i[r]].t) ^ 1) & {t}[i[r]].s);")
        body += [f"{ind}for (b = 0; b < m; b += {ROWS}) {{",
                 f"{ind2}n = m - b < {ROWS} ? m - b : {ROWS};",
                 f"{ind2}for (r = 0; r < n; r++) i[r] = {root};",
                 f"{ind2}for (d = 0; d < {depth}; d++)",
                 f"{ind3}for (r = 0; r < n; r++)",
                 f"{ind4}{step}",
                 f"{ind2}for (r = 0; r < n; r++) {{",
                 f"{ind3}a = acc + (b + r) * {n_raw};"]
        body += [ind3 + line.replace("acc[", "a[") for line in add]
        body += [f"{ind2}}}", f"{ind}}}"]
        text = "\n".join(body)
        ints = ["b", "n", "r", "d"] + (["o"] if "o = " in text else []) + (["j"] if "for (j = " in text else [])
        head = [f"static void {fname}(const {in_type} *x, int m, {self.acc_type} *acc)", "{",
                f"{ind}{self.acc_type} *a;",
                f"{ind}int i[{ROWS}];",
                f"{ind}int {', '.join(ints)};"]
        return head + body + ["}", ""]
