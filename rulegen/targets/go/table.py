"""The table form of the Go target: trees as package-level arrays, descended in a loop.

Branchy Go code for a big model compiles slowly (the compiler's time grows with function size)
and a deep one nests too far, so runs of consecutive trees that the table can express (binary
numeric and categorical splits with a default child: ``rulegen.targets.c.table.supports``) become
one array of rows ``{t, c, k}`` and a loop, as in the C target (``rulegen/targets/c/table.py``
documents the encoding, whose layout and numeric rewriting this reuses):

- a numeric split goes to row ``c`` when ``xx[k] <= t``, else to ``c + 1`` (NaN fails, so it
  always takes ``c + 1``); ``xx[0] = 0``, ``xx[1 + f] = x[f]`` and ``xx[1 + n + f] = -x[f]``, so
  every test of docs/IR.md becomes ``+-x <= t'`` exactly (negation is exact);
- a categorical split has ``k < 0``: it goes to ``c + `` the bit ``cc[-1 - k]`` of the bitset at
  byte ``t`` of ``B``, where ``cc[f]`` is the code when it is a known one, ``n`` for an unseen
  value and ``n + 1`` for NaN;
- a leaf has ``k = 0`` and its ``c`` is its own row, or one less when ``!(0 <= t)``, so a step
  from a leaf stays on it; its ``t`` is its contribution (scalar leaves), an offset into ``V``
  (vector leaves) or the class it votes for, with the tree weight folded in as elsewhere.

``CHAINS`` trees descend together, one step each per turn, for as many steps as the deepest of
them, without a branch, so their loads overlap (the 500-tree XGBoost model and the 100-tree
forest of the shared harness: 12.7 and 5.0 us/row against 48.6 and 14.6 one tree at a time with
branches, go 1.19 on a loaded 2-core machine); the trees left over descend one at a time until
their leaf (``c <= i``). Leaves are added in IR order, so the sums are those of the evaluator.
"""

from __future__ import annotations

from rulegen.codegen import lower
from rulegen.codegen.literals import go_float
from rulegen.ir.nodes import Leaf, Model, NumericTest, Tree
from rulegen.targets.c.table import numeric_tests, layout, leaf_kind, supports  # noqa: F401

_PER_LINE = 8
# Trees descended together, one step each per turn (as the C target's CHAINS): independent
# loads overlap. Go keeps 8 row numbers in registers.
CHAINS = 8


class Group:
    """A run of consecutive table-form trees of one leaf kind."""

    def __init__(self, model: Model, kind: str, name: str, lit):
        self.model, self.kind, self.name, self.lit = model, kind, name, lit
        self.indices: list[int] = []
        self.trees: list[Tree] = []

    def add(self, index: int, tree: Tree) -> None:
        self.indices.append(index)
        self.trees.append(tree)

    def _encode(self):
        model, nf = self.model, len(self.model.features)
        rows, roots, bits, values = [], [], [], []
        bitsets: dict[tuple[int, ...], int] = {}
        shared: dict[tuple[str, ...], int] = {}
        for tree in self.trees:
            base = len(rows)
            roots.append(base)
            numeric = numeric_tests(tree)
            order = layout(tree, numeric)
            row_of = {nid: base + r for r, nid in enumerate(order)}
            for nid in order:
                node = tree.nodes[nid]
                if isinstance(node, Leaf):
                    t = self._payload(tree, node, values, shared)
                    # k = 0 tests xx[0] = 0 <= t, so a step from a leaf stays on it
                    rows.append((t, len(rows) - (not 0.0 <= t), 0))
                    continue
                test = node.test
                if isinstance(test, NumericTest):
                    sign, bound, swap = numeric[nid]
                    first = row_of[node.children[1] if swap else node.children[0]]
                    k = 0 if sign is None else 1 + test.feature + (0 if sign > 0 else nf)
                    rows.append((bound, first, k))
                    continue
                n = len(model.features[test.feature].categories)
                members = set(test.categories)
                right = [0 if code in members else 1 for code in range(n)]
                right.append(0 if node.unseen == 0 else 1)  # unseen; None means child 1
                right.append(node.missing.child)  # NaN
                pattern = tuple(sum(b << j for j, b in enumerate(right[i:i + 8])) for i in range(0, len(right), 8))
                if pattern not in bitsets:
                    bitsets[pattern] = len(bits)
                    bits.extend(pattern)
                rows.append((float(bitsets[pattern]), row_of[node.children[0]], -1 - test.feature))
        return rows, roots, bits, values

    def _payload(self, tree: Tree, leaf: Leaf, values: list, shared: dict) -> float:
        if self.kind == "vote":
            return float(lower.vote_index(leaf, tree.weight))
        contribution = lower.leaf_contribution(self.model, tree, leaf)
        if self.kind == "scalar":
            return float(contribution[0])
        key = tuple(self.lit(v) for v in contribution)  # as written: -0.0 and 0.0 stay apart
        if key not in shared:
            shared[key] = len(values)
            values.extend(contribution)
        return float(shared[key])

    def unit(self, comments: bool) -> dict:
        """The group as a record for the template: package-level tables and a function body."""
        rows, roots, bits, values = self._encode()
        p, ind = self.name, "\t"
        cats = sorted({-1 - k for _t, _c, k in rows if k < 0})
        tables = [f"var {p}T = [...]row{{"]
        starts = {r: i for i, r in enumerate(roots)}
        for r, (t, c, k) in enumerate(rows):
            if comments and r in starts:
                tables.append(f"{ind}// tree {self.indices[starts[r]]}")
            tables.append(f"{ind}{{{go_float(t)}, {c}, {k}}},")
        tables.append("}")
        tables += _array(f"{p}R", "int32", [str(r) for r in roots])
        if bits:
            tables += _array(f"{p}B", "uint8", [str(b) for b in bits])
        if values:
            tables += _array(f"{p}V", self.acc_type(), [self.lit(v) for v in values])
        if self.kind == "scalar" and len({t.output for t in self.trees}) > 1:
            tables += _array(f"{p}S", "int", [str(t.output or 0) for t in self.trees])
        if self.kind == "vote" and len({t.weight for t in self.trees}) > 1:
            tables += _array(f"{p}W", self.acc_type(), [self.lit(t.weight) for t in self.trees])
        n = len(self.trees)
        batches = n // CHAINS if n >= CHAINS else 0
        depths = [lower.depth(t) for t in self.trees]
        if batches > 1:
            tables += _array(f"{p}D", "int", [str(max(depths[b * CHAINS:(b + 1) * CHAINS])) for b in range(batches)])
        body = [f"{ind}var cc [{len(self.model.features)}]int" if cats else None,
                *(f"{ind}cc[{f}] = code(x[{f}], {len(self.model.features[f].categories)})" for f in cats)]
        if batches:  # CHAINS trees descend together: their loads overlap
            steps = f"{p}D[b]" if batches > 1 else str(max(depths[:CHAINS]))
            body += [f"{ind}for b := 0; b < {batches}; b++ {{",
                     *(f"{ind * 2}i{j} := {p}R[{_at(j)}]" for j in range(CHAINS)),
                     f"{ind * 2}for d := 0; d < {steps}; d++ {{"]
            for j in range(CHAINS):
                body += [ind * 3 + line for line in self._step(f"i{j}", p, bool(cats), chain=True)]
            body.append(f"{ind * 2}}}")
            for j in range(CHAINS):
                body += [ind + line for line in self._add(f"{p}T[i{j}].t", p, _at(j))]
            body.append(f"{ind}}}")
        if batches * CHAINS < n:  # the rest one at a time, each until it reaches its leaf
            body += [f"{ind}for j := {batches * CHAINS}; j < {n}; j++ {{",
                     f"{ind * 2}i := {p}R[j]",
                     f"{ind * 2}for {p}T[i].c > i {{",
                     *(ind * 3 + line for line in self._step("i", p, bool(cats))),
                     f"{ind * 2}}}",
                     *(ind + line for line in self._add(f"{p}T[i].t", p, "j")),
                     f"{ind}}}"]
        body = [line for line in body if line]
        what = {"scalar": "its contribution", "vector": "an offset into V", "vote": "the class it votes for"}
        first, last = self.indices[0], self.indices[-1]
        notes = [f"trees {first} to {last}: table form, {len(rows)} rows" if first != last
                 else f"tree {first}: table form, {len(rows)} rows",
                 f"(a leaf has k = 0 and c at itself, so it stays put; its t is {what[self.kind]})"]
        for i, tree in zip(self.indices, self.trees):
            notes.append(f"tree {i}: {len(tree.nodes)} nodes, depth {lower.depth(tree)}, table form")
        return {"name": f"{p}Trees", "tables": tables, "body": body, "comments": notes, "xx": True}

    def acc_type(self) -> str:
        return "float32" if self.model.dtype == "float32" else "float64"

    def _step(self, i: str, p: str, cats: bool, chain: bool = False) -> list[str]:
        """One step of a descent from row ``i`` (a leaf stays put). In a chain the choice is
        ``c + 1 - b2i(x <= t)``, which gc compiles to a SETcc, not a branch: the 500-tree XGBoost
        model ran 2.3x faster than with if/else, whose branches mispredict; a lone tree keeps
        the branch, so the processor can run ahead on its prediction (as the C target)."""
        if chain:
            num = [f"{i} = r.c + 1 - b2i(xx[r.k] <= r.t)"]
        else:
            num = ["if xx[r.k] <= r.t {", f"\t{i} = r.c", "} else {", f"\t{i} = r.c + 1", "}"]
        if not cats:
            return ["{", f"\tr := &{p}T[{i}]", *("\t" + line for line in num), "}"]
        return [f"if r := &{p}T[{i}]; r.k < 0 {{", "\to := cc[-1-r.k]",
                f"\t{i} = r.c + int32({p}B[int(r.t)+o>>3]>>(o&7)&1)", "} else {",
                *("\t" + line for line in num), "}"]

    def _add(self, t: str, p: str, j: str) -> list[str]:
        ind = "\t"
        cast = "float32" if self.model.dtype == "float32" else ""
        if self.kind == "scalar":
            outputs = {t_.output for t_ in self.trees}
            slot = f"{p}S[{j}]" if len(outputs) > 1 else str(outputs.pop() or 0)
            return [f"{ind}acc[{slot}] = acc[{slot}] + {cast}({t})" if cast else f"{ind}acc[{slot}] = acc[{slot}] + {t}"]
        if self.kind == "vote":
            weights = {t_.weight for t_ in self.trees}
            w = f"{p}W[{j}]" if len(weights) > 1 else self.lit(weights.pop())
            return [f"{ind}acc[int({t})] = acc[int({t})] + {w}"]
        n = self.model.n_raw
        return [f"{ind}for k, o := 0, int({t}); k < {n}; k++ {{",
                f"{ind}\tacc[k] = acc[k] + {p}V[o+k]", f"{ind}}}"]


def _at(j: int) -> str:
    return f"{CHAINS}*b+{j}" if j else f"{CHAINS}*b"


def _array(name: str, typ: str, items: list[str]) -> list[str]:
    lines = [f"var {name} = [...]{typ}{{"]
    for i in range(0, len(items), _PER_LINE):
        lines.append("\t" + ", ".join(items[i:i + _PER_LINE]) + ",")
    return lines + ["}"]
