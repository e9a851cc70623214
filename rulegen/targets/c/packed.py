"""Packed split rows: the float profile's table for a one-tree model, as small as it is exact.

Firmware counts flash. Row tables (:mod:`rulegen.targets.c.rows`) give every node an 8-byte
row, leaves included, so that a block of rows can step through leaves without a branch. Here
only splits have rows, in two arrays: ``T[k]``, the float bound (the same ``s*x <= t'`` as row
tables, so routing is the same for every float input), and ``W[k]``, one 32-bit word holding
both children, the feature and the sign::

    bits:  [ left : b ][ right : b ][ feature : bf ][ negate : 1 ]   (from bit 0 up)

A child below ``NS`` (the number of split rows) is a split row; ``NS + p`` is a leaf whose
payload is ``p``: its vector's offset / N_RAW in ``V`` (class scores), its class (votes), or its
index in ``L`` (scalar contributions). Splits whose test sends numbers and NaN alike to one
child have no row: their parent points at that child. A row steps ``k = s*x <= T[k] ? left :
right`` while ``k < NS``; a block of rows takes the tree's depth in steps, a row at a leaf
keeps its place (without a branch: it reads split 0 and discards the step). The depth-8 CART
of bench_firmware (147 splits, 148 leaves): 1,176 bytes of rows against 2,360, the whole
Cortex-M4 object 2,528 bytes against 3,824 (docs/BENCHMARKS.md).

Used when ``2 * b + bf + 1 <= 32``; otherwise the row tables serve.
"""

from __future__ import annotations

import struct

from rulegen.codegen.literals import c_float
from rulegen.targets.c import rows as c_rows
from rulegen.targets.c import table as c_table
from rulegen.targets.c import trees as c_trees


def _bits(n: int) -> int:
    """Bits to write the numbers 0 .. n - 1."""
    return max(1, (n - 1).bit_length())


class PackedGroup(c_rows.RowsGroup):
    """The tree of a one-tree float-profile model as packed split rows (see the module)."""

    KINDS = ("scalar", "vector", "vote")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._pack()

    def _pack(self) -> None:
        rows, roots, depths, values = self.rows()
        n_raw = self.model.n_raw
        splits: list[int] = []  # row of each split, in the order the walk meets them
        leaf_of: dict[int, int] = {}  # leaf row -> payload
        scalars: dict[bytes, int] = {}
        self.leaf_values: list[float] = []
        order = [roots[0]]
        seen = {roots[0]}
        while order:  # breadth first: the root is split 0 (or a leaf)
            r = order.pop(0)
            t, c, _f, s = rows[r]
            if s == 0:
                if self.kind == "vector":
                    p = int(t) // n_raw
                elif self.kind == "vote":
                    p = int(t)
                else:  # the contribution, written once for every leaf that adds it
                    key = struct.pack("<d", t)
                    if key not in scalars:
                        scalars[key] = len(self.leaf_values)
                        self.leaf_values.append(t)
                    p = scalars[key]
                leaf_of[r] = p
                continue
            splits.append(r)
            for child in (c, c + 1):
                if child not in seen:
                    seen.add(child)
                    order.append(child)
        n_payloads = {"vector": len(values) // max(n_raw, 1), "vote": len(self.model.target.classes),
                      "scalar": len(self.leaf_values)}[self.kind]
        ns = len(splits)
        self.b, self.bf = _bits(ns + max(n_payloads, 1)), _bits(len(self.model.features))
        self.fits = 2 * self.b + self.bf + 1 <= 32
        sid = {r: k for k, r in enumerate(splits)}

        def code(r: int) -> int:
            return sid[r] if r in sid else ns + leaf_of[r]

        self.ns, self.start, self.depth, self.values = ns, code(roots[0]), depths[0], values
        self.packed = []
        for r in splits:
            t, c, f, s = rows[r]
            word = code(c) | code(c + 1) << self.b | f << 2 * self.b | (s < 0) << (2 * self.b + self.bf)
            self.packed.append((t, word))
        self.split_nodes = [self.row_nodes[r] for r in splits]

    @classmethod
    def applies(cls, model, kind: str, f32: bool) -> bool:
        return f32 and kind in cls.KINDS and c_rows.supports(model)

    def unit(self, name: str) -> dict:
        ind = c_trees.INDENT
        t_name, w_name, v_name, l_name, s_name = (f"{name}_{s}" for s in ("T", "W", "V", "L", "S"))
        notes = None
        if self.comments and self.ns <= c_table.ROW_COMMENTS:
            emitter = c_trees.Emitter(self.model, self.trees[0], "", True)
            notes = [emitter.comment(nid) for _pos, nid in self.split_nodes]
        table = [f"static const float {t_name}[{max(self.ns, 1)}] = {{"]
        words = [f"static const uint32_t {w_name}[{max(self.ns, 1)}] = {{"]
        for k, (t, word) in enumerate(self.packed or [(0.0, 0)]):
            comma = "," if k + 1 < max(self.ns, 1) else ""
            table.append(f"{ind}{c_float(t)}{comma}" + (f"  {notes[k]}" if notes else ""))
            words.append(f"{ind}{word}u{comma}")
        table += ["};"] + words + ["};", f"static const float {s_name}[2] = {{1.0f, -1.0f}};"]
        if self.kind == "vector" and self.values:
            table += [line[len(ind):] for line in c_table._array(
                self.acc_type, v_name, [self.lit(v) for v in self.values], self.model.n_raw)]
        if self.kind == "scalar":
            table += [line[len(ind):] for line in c_table._array(
                self.acc_type, l_name, [self.lit(v) for v in self.leaf_values])]
        what = {"scalar": f"its index in {l_name}", "vector": f"its offset in {v_name} / N_RAW",
                "vote": "the class it votes for"}[self.kind]
        comments = [
            f"tree 0 as packed split rows: {self.ns} splits, bounds in {t_name}, and in {w_name} a word",
            f"  [left:{self.b}][right:{self.b}][feature:{self.bf}][negate:1] from bit 0. A split goes left",
            f"  when (negate ? -x[f] : x[f]) <= t (NaN fails), else right; a child k >= {self.ns} is a",
            f"  leaf whose payload k - {self.ns} is {what}. Rows descend {c_rows.ROWS} at a time.",
            f"tree 0: {len(self.trees[0].nodes)} nodes, depth {self.depth}, table form (packed rows)",
        ]
        return {"name": name, "index": 0, "first": 0, "last": 0, "comments": comments,
                "block": True, "globals": table, "functions": [self._walk(name, t_name, w_name, v_name, l_name, s_name)],
                "float_block": None, "stdint": True}

    def _walk(self, fname: str, t: str, w: str, v: str, lv: str, s_name: str) -> list[str]:
        """``(x, m, acc)``: add the tree's leaf to each of m float rows (row-major). One path for
        one row and many: a step is a few instructions, and one loop is less flash than two."""
        ind, ind2, ind3, ind4 = (c_trees.INDENT * k for k in range(1, 5))
        b, bf, ns = self.b, self.bf, self.ns
        mask, fmask = (1 << b) - 1, (1 << bf) - 1
        n_feat, n_raw = len(self.model.features), self.model.n_raw
        p = f"(i[r] - {ns})"
        if self.kind == "scalar":
            s = self._slots()[0]
            add = [f"a[{s}] = a[{s}] + {lv}[{p}];"]
        elif self.kind == "vote":
            add = [f"a[{p}] = a[{p}] + {self._slots()[0]};"]
        elif n_raw <= 4:
            add = [f"o = {p} * {n_raw}; " + " ".join(
                f"a[{k}] = a[{k}] + {v}[o{f' + {k}' if k else ''}];" for k in range(n_raw))]
        else:
            add = [f"o = {p} * {n_raw};", f"for (j = 0; j < {n_raw}; j++) a[j] = a[j] + {v}[o + j];"]
        body = [f"{ind}for (b = 0; b < m; b += {c_rows.ROWS}) {{",
                f"{ind2}n = m - b < {c_rows.ROWS} ? m - b : {c_rows.ROWS};",
                f"{ind2}for (r = 0; r < n; r++) i[r] = {self.start};",
                f"{ind2}for (d = 0; d < {self.depth}; d++)",
                f"{ind3}for (r = 0; r < n; r++) {{",
                # branch-free: a row at a leaf reads split 0 and keeps its place (measured on
                # the depth-8 tree, x86 -O2: 20.5 ns/row, against 56 with a branch per row
                # and 21.7 for the 8-byte rows of every node)
                f"{ind4}j = i[r]; q = j < {ns} ? j : 0;",
                f"{ind4}k = {w}[q];",
                f"{ind4}v = x[(b + r) * {n_feat} + ((k >> {2 * b}) & {fmask}u)] * {s_name}[k >> {2 * b + bf}];",
                f"{ind4}c = (int)((k >> (v <= {t}[q] ? 0 : {b})) & {mask}u);",
                f"{ind4}i[r] = j < {ns} ? c : j;",
                f"{ind3}}}",
                f"{ind2}for (r = 0; r < n; r++) {{",
                f"{ind3}a = acc + (b + r) * {n_raw};"]
        body += [ind3 + line for line in add]
        body += [f"{ind2}}}", f"{ind}}}"]
        text = "\n".join(body)
        ints = ["b", "n", "r", "d", "j", "q", "c"] + (["o"] if "o = " in text else [])
        head = [f"static void {fname}(const float *x, int m, {self.acc_type} *acc)", "{",
                f"{ind}{self.acc_type} *a;",
                f"{ind}uint32_t k;",
                f"{ind}float v;",
                f"{ind}int i[{c_rows.ROWS}];",
                f"{ind}int {', '.join(ints)};"]
        return head + body + ["}", ""]
