"""How the Go target spells tree bodies: :class:`Emitter` for :mod:`rulegen.targets.brace_trees`.

The chains and the three emitters (nested, goto, blend) are shared with C; what is Go's own
is here: float64 literals, conditions without parentheses, ``goto nN`` in a block, a
``return`` after every leaf of the goto form (Go wants no label at the end of a function),
oblique features and weights as package-level arrays, and the blend pass's statements.

Go has no ``?:``, so a surrogate chain ``P0 ? A0 : (P1 ? A1 : d)`` is written
``P0 && A0 || !P0 && (...)``: each P is a plain present-test, cheap to read twice.
"""

from __future__ import annotations

from rulegen.codegen import lower
from rulegen.codegen.literals import go_comment, go_float
from rulegen.ir.nodes import ObliqueTest, Tree
from rulegen.targets import brace_trees
from rulegen.targets.brace_trees import Cond, cnot

INDENT = "\t"
MAX_NESTING = 32  # nested blocks up to this depth, the goto form beyond (as the C target)


class Emitter(brace_trees.Emitter):
    """A Go tree body; ``tables`` collects package-level arrays (oblique features and
    weights)."""

    INDENT = INDENT
    TRUE, FALSE = Cond("true", 3, Cond("false")), Cond("false", 3, Cond("true"))
    AND_IN_OR_BRACKETED = False
    RANGE_BRACKETED = False
    FULL_NOTES = False

    def __init__(self, model, tree: Tree, index: int, comments: bool):
        super().__init__(model, tree, comments)
        self.index = index
        self.tables: list[str] = []

    def bound(self, op: str, t: float, dtype: str) -> tuple[str, str]:
        op2, t2 = lower.float64_bound(op, t, dtype)
        return op2, go_float(t2)

    def code(self, v: int) -> str:
        return f"{v}"

    def integral(self, f: int) -> str:
        return f"x[{f}] == float64(int(x[{f}]))"

    def oblique(self, test: ObliqueTest, tag: str) -> Cond:
        name = f"ob{self.index}_{tag}"
        feats = ", ".join(map(str, test.features))
        weights = ", ".join(go_float(w) for w in test.weights)
        self.tables += [f"var {name}F = [...]int{{{feats}}}", f"var {name}W = [...]float64{{{weights}}}"]
        return Cond(f"dot(x, {name}F[:], {name}W[:]) {test.op} {go_float(test.threshold)}", 2)

    def ternary(self, p: Cond, a: Cond, e: Cond) -> Cond:
        return self.cor(self.cand(p, a), self.cand(cnot(p), e))

    def note(self, text: str) -> str:
        return "// " + go_comment(text)

    def if_test(self, c: Cond) -> str:
        return c.text

    def jump_if(self, c: Cond, jump: str) -> list[str]:
        return [f"{INDENT}if {c.text} {{", INDENT * 2 + jump, INDENT + "}"]

    def goto(self, nid: int) -> str:
        return f"goto n{nid}"

    def leaf_return(self, last: bool) -> list[str]:
        return ["return"]  # also after the last leaf: Go wants no label at a function's end

    # the blend pass: each product that feeds a sum is wrapped in float64(...), which the Go
    # spec says prevents fusing it into an FMA
    def blend_start(self, n_nodes: int, width: int) -> list[str]:
        return [f"{INDENT}var p [{n_nodes}]float64", f"{INDENT}var o [{width}]float64", f"{INDENT}p[0] = 1"]

    def reached(self, nid: int) -> Cond:
        return Cond(f"p[{nid}] != 0", 2)

    def blend_leaf(self, nid: int, values: list[str]) -> list[str]:
        return [f"{INDENT}if p[{nid}] != 0 {{",
                *(f"{INDENT * 2}o[{k}] = o[{k}] + float64(p[{nid}]*{v})" for k, v in enumerate(values)),
                f"{INDENT}}}"]

    def blend_weight(self, child: int, nid: int, w: float) -> str:
        return f"p[{child}] = p[{nid}] * {go_float(w)}"

    def blend_route(self, chain, other: int, kids, nid: int) -> list[str]:
        if len(chain) == 1:
            (c, k), = chain
            return [f"if {c.text} {{", f"{INDENT}p[{kids[k]}] = p[{nid}]",
                    "} else {", f"{INDENT}p[{kids[other]}] = p[{nid}]", "}"]
        lines = []  # first match wins
        for j, (c, k) in enumerate(chain):
            lines += [f"{'if' if j == 0 else '} else if'} {c.text} {{", f"{INDENT}p[{kids[k]}] = p[{nid}]"]
        return lines + ["} else {", f"{INDENT}p[{kids[other]}] = p[{nid}]", "}"]
