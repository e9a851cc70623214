"""How the C target spells tree bodies: :class:`Emitter` for :mod:`rulegen.targets.brace_trees`.

The chains and the three emitters (nested, goto, blend) are shared with Go; what is C's own
is here: double or float literals (the float profile reads a float row, so its bounds are
float bounds), conditions in parentheses, ``goto nN;``, ``&&`` bracketed inside ``||``
(gcc's -Wparentheses), the ``?:`` of surrogate chains, oblique sums through a helper whose
products pass a volatile (no FMA), and the blend pass's declarations.
"""

from __future__ import annotations

import functools
import math

from rulegen.codegen import lower
from rulegen.codegen.literals import c_comment, c_double, c_float
from rulegen.ir.nodes import ObliqueTest, Tree
from rulegen.targets import brace_trees
from rulegen.targets.brace_trees import Cond, wrap

INDENT = "    "


def _bound(op: str, t: float, dtype: str, f32: bool) -> tuple[str, str]:
    # the sign of zero is part of the key: -0.0 == 0.0, so a plain cache would write whichever
    # came first, and the same model would give different text in different processes
    return _cached_bound(op, t, math.copysign(1.0, t), dtype, f32)


@functools.lru_cache(maxsize=65536)
def _cached_bound(op: str, t: float, _sign: float, dtype: str, f32: bool) -> tuple[str, str]:
    op2, t2 = lower.float64_bound(op, t, dtype)
    if f32:
        op2, t2 = lower.float32_bound(op2, t2)
        return op2, c_float(t2)
    return op2, c_double(t2)


class Emitter(brace_trees.Emitter):
    """A C tree body; ``decls`` collects its local declarations, ``uses_dot`` says whether
    it calls the oblique helper ``PREFIX_dot``."""

    INDENT = INDENT
    TRUE, FALSE = Cond("1", 3, Cond("0")), Cond("0", 3, Cond("1"))
    AND_IN_OR_BRACKETED = True
    RANGE_BRACKETED = True
    FULL_NOTES = True

    def __init__(self, model, tree: Tree, prefix: str, comments: bool, f32: bool = False):
        """``f32``: the float profile, where ``x`` is a float row (see ``_bound``)."""
        super().__init__(model, tree, comments)
        self.prefix, self.f32 = prefix, f32
        self.uses_dot = False

    def bound(self, op: str, t: float, dtype: str) -> tuple[str, str]:
        return _bound(op, t, dtype, self.f32)

    def code(self, v: int) -> str:
        return c_float(float(v)) if self.f32 else c_double(float(v))

    def integral(self, f: int) -> str:
        return f"x[{f}] == ({'float' if self.f32 else 'double'})(int)x[{f}]"

    def oblique(self, test: ObliqueTest, tag: str) -> Cond:
        self.uses_dot = True
        n = len(test.features)
        self.decls[f"static const int of{tag}[{n}] = {{{', '.join(map(str, test.features))}}};"] = None
        self.decls[f"static const double ow{tag}[{n}] = "
                   f"{{{', '.join(c_double(w) for w in test.weights)}}};"] = None
        return Cond(f"{self.prefix}_dot(x, of{tag}, ow{tag}, {n}) {test.op} {c_double(test.threshold)}", 2)

    def ternary(self, p: Cond, a: Cond, e: Cond) -> Cond:
        return Cond(f"{wrap(p, 2)} ? {wrap(a, 2)} : {wrap(e, 2)}", -1)

    def note(self, text: str) -> str:
        return f"/* {c_comment(text)} */"

    def if_test(self, c: Cond) -> str:
        return f"({c.text})"

    def jump_if(self, c: Cond, jump: str) -> list[str]:
        return [f"{INDENT}if ({c.text}) {jump}"]

    def goto(self, nid: int) -> str:
        return f"goto n{nid};"

    def leaf_return(self, last: bool) -> list[str]:
        return [] if last else ["return;"]

    # the blend pass: a leaf's products go through the volatile q, so none fuses into its sum
    def blend_start(self, n_nodes: int, width: int) -> list[str]:
        for d in (f"double p[{n_nodes}] = {{1.0}};", f"double o[{width}] = {{0.0}};", "volatile double q;"):
            self.decls[d] = None
        return []

    def reached(self, nid: int) -> Cond:
        return Cond(f"p[{nid}] != 0.0", 2)

    def blend_leaf(self, nid: int, values: list[str]) -> list[str]:
        body = " ".join(f"q = p[{nid}] * {v}; o[{k}] = o[{k}] + q;" for k, v in enumerate(values))
        return [f"{INDENT}if (p[{nid}] != 0.0) {{ {body} }}"]

    def blend_weight(self, child: int, nid: int, w: float) -> str:
        return f"p[{child}] = p[{nid}] * {c_double(w)};"

    def blend_route(self, chain, other: int, kids, nid: int) -> list[str]:
        if len(chain) == 1:
            (c, k), = chain
            return [f"if ({c.text}) p[{kids[k]}] = p[{nid}];", f"else p[{kids[other]}] = p[{nid}];"]
        # first match wins: assign from the last condition to the first, then route flat
        self.decls["int k;"] = None
        lines = [f"k = {other};"] + [f"if ({c.text}) k = {k};" for c, k in reversed(chain)]
        return lines + [f"if (k == {i}) p[{c}] = p[{nid}];" for i, c in enumerate(kids)]
