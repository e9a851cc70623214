"""Tree bodies for the C target: routing conditions and three flat emitters.

Every split becomes a *chain*: an ordered list of (condition, child position) pairs and an
``else`` child, with the missing and unseen routing folded into the conditions, so the
row takes the first child whose condition holds. Three emitters turn chains into C lines:

- ``nested``: readable ``if / else if / else`` blocks, for trees whose nesting stays small;
- ``goto``: one label per jump target and no nesting at all, so any depth compiles;
- ``blend``: a forward pass over node ids carrying path weights ``p[i]`` (C4.5 blends),
  which sums the reached leaves in increasing node id exactly as docs/IR.md defines.

Nothing here recurses: every walk is a loop or an explicit stack.
"""

from __future__ import annotations

import functools
import json
import math
from typing import NamedTuple


from rulegen.codegen import lower
from rulegen.codegen.literals import c_comment, c_double, c_float
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
    Tree,
)

INDENT = "    "
_NEG = {"<=": ">", "<": ">="}  # x op t fails (for a number) exactly when x NEG[op] t holds


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


def _num(v: float, f32: bool) -> str:
    """A small whole number (a category code) in the profile's type."""
    return c_float(v) if f32 else c_double(v)


# --- boolean expressions with their C precedence -------------------------------------
# prec: 3 primary or unary, 2 relational/equality, 1 &&, 0 ||, -1 ?:


class Cond(NamedTuple):
    text: str
    prec: int = 3
    neg: Cond | None = None  # the exact complement, when there is a nicer form than !(...)


TRUE, FALSE = Cond("1", 3, Cond("0")), Cond("0", 3, Cond("1"))


def _wrap(c: Cond, min_prec: int) -> str:
    return c.text if c.prec >= min_prec else f"({c.text})"


def cnot(c: Cond) -> Cond:
    if c.neg is not None:
        return c.neg._replace(neg=c._replace(neg=None))
    return Cond(f"!{_wrap(c, 3)}", 3, c)


def _join(op: str, prec: int, absorb: Cond, unit: Cond, conds) -> Cond:
    parts = []
    for c in conds:
        if c.text == absorb.text:
            return absorb
        if c.text != unit.text:
            parts.append(c)
    if not parts:
        return unit
    if len(parts) == 1:
        return parts[0]
    # -Wparentheses wants && inside || bracketed, so only same-operator chains stay flat
    return Cond(f" {op} ".join(p.text if p.prec >= 2 or p.prec == prec else f"({p.text})"
                               for p in parts), prec)


def cor(*conds: Cond) -> Cond:
    return _join("||", 0, TRUE, FALSE, conds)


def cand(*conds: Cond) -> Cond:
    return _join("&&", 1, FALSE, TRUE, conds)


def ctern(p: Cond, a: Cond, e: Cond) -> Cond:
    if e.text == "1":
        return cor(cnot(p), a)
    if e.text == "0":
        return cand(p, a)
    return Cond(f"{_wrap(p, 2)} ? {_wrap(a, 2)} : {_wrap(e, 2)}", -1)


# --- tests ----------------------------------------------------------------------------


def _isnan(f: int) -> Cond:
    return Cond(f"x[{f}] != x[{f}]", 2, Cond(f"x[{f}] == x[{f}]", 2))


def _compare(f: int, op: str, t: float, dtype: str, f32: bool) -> Cond:
    op2, lit = _bound(op, t, dtype, f32)
    return Cond(f"x[{f}] {op2} {lit}", 2)


def _compare_or_nan(f: int, op: str, t: float, dtype: str, f32: bool) -> Cond:
    """``x op t`` or x missing: ``!(x NEG t)``, NaN-safe without an isnan call."""
    op2, lit = _bound(op, t, dtype, f32)
    return Cond(f"!(x[{f}] {_NEG[op2]} {lit})", 3, Cond(f"x[{f}] {_NEG[op2]} {lit}", 2))


def _integral(f: int, f32: bool) -> str:
    return f"x[{f}] == ({'float' if f32 else 'double'})(int)x[{f}]"


def _member(f: int, codes, f32: bool) -> Cond:
    """The value is one of ``codes`` (false for NaN and for any non-code); runs of three or
    more consecutive codes become a range test, where the int cast is in range."""
    parts, codes, i = [], list(codes), 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        if j - i >= 2:
            lo, hi = _num(float(codes[i]), f32), _num(float(codes[j]), f32)
            parts.append(Cond(f"(x[{f}] >= {lo} && x[{f}] <= {hi} && {_integral(f, f32)})", 3))
            i = j + 1
        else:
            parts.append(Cond(f"x[{f}] == {_num(float(codes[i]), f32)}", 2))
            i += 1
    return cor(*parts)


def _known(f: int, n: int, f32: bool) -> Cond:
    """The value is one of the feature's codes 0..n-1 (false for NaN)."""
    zero, top = _num(0.0, f32), _num(float(n - 1), f32)
    return Cond(f"(x[{f}] >= {zero} && x[{f}] <= {top} && {_integral(f, f32)})", 3)


class Emitter:
    """Builds the body of one tree function; ``decls`` collects its local declarations."""

    def __init__(self, model, tree: Tree, prefix: str, comments: bool, f32: bool = False):
        """``f32``: the float profile, where ``x`` is a float row (see ``_bound``)."""
        self.model, self.tree, self.prefix, self.comments = model, tree, prefix, comments
        self.f32 = f32
        self.decls: dict[str, None] = {}  # ordered and free of repeats
        self.uses_dot = False

    # the oblique sum goes through a helper whose products pass a volatile (no FMA)
    def _oblique(self, test: ObliqueTest, tag: str) -> tuple[Cond, Cond]:
        self.uses_dot = True
        n = len(test.features)
        self.decls[f"static const int of{tag}[{n}] = {{{', '.join(map(str, test.features))}}};"] = None
        self.decls[f"static const double ow{tag}[{n}] = "
                   f"{{{', '.join(c_double(w) for w in test.weights)}}};"] = None
        holds = Cond(f"{self.prefix}_dot(x, of{tag}, ow{tag}, {n}) {test.op} {c_double(test.threshold)}", 2)
        seen = list(dict.fromkeys(test.features))
        return holds, cor(*(_isnan(f) for f in seen))

    def _present_holds(self, test, tag: str, unseen) -> tuple[Cond, Cond, Cond]:
        """(missing, child-0 condition for a present value, the same or missing) of a binary
        test; ``unseen`` is where an unseen category goes (0 or 1)."""
        if isinstance(test, NumericTest):
            args = (test.feature, test.op, test.threshold, test.dtype, self.f32)
            return _isnan(test.feature), _compare(*args), _compare_or_nan(*args)
        if isinstance(test, ObliqueTest):
            holds, missing = self._oblique(test, tag)
            return missing, holds, cor(holds, missing)
        f = test.feature
        member = _member(f, test.categories, self.f32)
        if unseen != 0:
            return _isnan(f), member, cor(member, _isnan(f))
        known = _known(f, len(self.model.features[f].categories), self.f32)
        # a present value that is not a known code is unseen and goes to child 0
        return _isnan(f), cor(member, cnot(known)), cor(member, cnot(known))

    def route(self, nid: int, with_missing: bool) -> tuple[list[tuple[Cond, int]], int]:
        """The chain of a split: [(condition, child position)], else position. With
        ``with_missing`` false the value is known to be present (blend splits)."""
        split: Split = self.tree.nodes[nid]
        test, rule = split.test, split.missing
        d = rule.child if with_missing and isinstance(rule, DefaultChild) else None
        if isinstance(test, IntervalTest):
            chain = []
            for i, b in enumerate(test.bounds):
                chain.append((_compare_or_nan if d == i else _compare)(test.feature, test.op, b, test.dtype,
                                                                       self.f32))
            return [(c, i) for i, c in enumerate(chain)], len(test.bounds)
        if isinstance(test, MultiwayTest):
            chain = []
            for k, group in enumerate(test.groups):
                if k != split.unseen:
                    c = _member(test.feature, group, self.f32)
                    chain.append((cor(c, _isnan(test.feature)) if d == k else c, k))
            return chain, split.unseen
        unseen = 1 if split.unseen is None else split.unseen
        missing, present0, full0 = self._present_holds(test, str(nid), unseen)
        if not with_missing:
            return [(present0, 0)], 1
        if isinstance(rule, DefaultChild):
            if d == 0:
                return [(full0, 0)], 1
            # present0 is false for NaN, except "not a known code" when unseen goes to 0
            nan_true = isinstance(test, CategoricalTest) and unseen == 0
            return [(cand(cnot(missing), present0) if nan_true else present0, 0)], 1
        # surrogates: (P0 ? A0 : (P1 ? A1 : ... default == 0))
        steps = [(cnot(missing), present0)]
        for j, sur in enumerate(rule.surrogates):
            s_missing, s_holds, _ = self._present_holds(sur.test, f"{nid}s{j}", 1)
            steps.append((cnot(s_missing), s_holds if sur.child_if_true == 0 else cnot(s_holds)))
        expr = TRUE if rule.default == 0 else FALSE
        for p, a in reversed(steps):
            expr = ctern(p, a, expr)
        return [(expr, 0)], 1

    def missing_of(self, nid: int) -> Cond:
        test = self.tree.nodes[nid].test
        if isinstance(test, ObliqueTest):
            return cor(*(_isnan(f) for f in dict.fromkeys(test.features)))
        return _isnan(test.feature)

    # --- comments ---------------------------------------------------------------------

    def comment(self, nid: int) -> str | None:
        if not self.comments:
            return None
        node = self.tree.nodes[nid]
        if isinstance(node, Leaf):
            text = f"node {nid}: leaf {_nums(node.value)}"
        else:
            text = f"node {nid}: {self._describe(node.test)}; missing: {self._missing_text(node)}"
            if node.unseen is not None:
                text += f"; unseen -> node {node.children[node.unseen]}"
        if node.samples is not None:
            text += f"; samples {node.samples!r}"
        if node.distribution is not None:
            text += f"; distribution {_nums(node.distribution)}"
        return f"/* {c_comment(text)} */"

    def _name(self, f: int) -> str:
        return show(self.model.features[f].name)

    def _describe(self, test) -> str:
        if isinstance(test, NumericTest):
            return f"{self._name(test.feature)} {test.op} {test.threshold!r} ({test.dtype})"
        if isinstance(test, CategoricalTest):
            return f"{self._name(test.feature)} in codes {list(test.categories)}"
        if isinstance(test, IntervalTest):
            return f"{self._name(test.feature)} {test.op} first of {list(test.bounds)} ({test.dtype})"
        if isinstance(test, MultiwayTest):
            return f"{self._name(test.feature)} by code groups {[list(g) for g in test.groups]}"
        terms = " + ".join(f"{w!r}*{self._name(f)}" for f, w in zip(test.features, test.weights))
        return f"{terms} {test.op} {test.threshold!r}"

    def _missing_text(self, node: Split) -> str:
        rule = node.missing
        if isinstance(rule, DefaultChild):
            return f"node {node.children[rule.child]}"
        if isinstance(rule, Blend):
            return f"blend {_nums(rule.weights)}"
        surs = ", ".join(self._describe(s.test) for s in rule.surrogates)
        return f"surrogates [{surs}], then node {node.children[rule.default]}"


def show(v) -> str:
    """A name or label for a comment: strings JSON-quoted (ASCII), integers bare; the
    caller still passes the result through ``c_comment``."""
    return str(v) if isinstance(v, int) else json.dumps(str(v))


def _nums(values) -> str:
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"


# --- nesting and the three emitters -----------------------------------------------------------


def nesting(tree: Tree) -> int:
    """Deepest block nesting of the nested form (an ``else if`` nests inside its ``else``),
    from the shape of each split's chain alone."""
    level = [0] * len(tree.nodes)
    deepest = 0
    for nid, node in enumerate(tree.nodes):
        if isinstance(node, Split):
            test = node.test
            if isinstance(test, MultiwayTest):
                chain = [k for k in range(len(test.groups)) if k != node.unseen]
                other = node.unseen
            else:
                chain = list(range(len(test.bounds) if isinstance(test, IntervalTest) else 1))
                other = len(chain)
            for j, k in enumerate(chain):
                level[node.children[k]] = level[nid] + j + 1
            level[node.children[other]] = level[nid] + max(len(chain), 1)
            deepest = max(deepest, level[nid] + max(len(chain), 1))
    return deepest


def emit_nested(em: Emitter, leaf_lines) -> list[str]:
    out: list[str] = []
    stack: list = [(0, 1)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        nid, lvl = item
        ind = INDENT * lvl
        note = em.comment(nid)
        if note:
            out.append(ind + note)
        node = em.tree.nodes[nid]
        if isinstance(node, Leaf):
            out.extend(ind + s for s in leaf_lines(nid, node))
            continue
        chain, other = em.route(nid, True)
        todo: list = []
        for j, (c, k) in enumerate(chain):
            todo += [f"{ind}{'if' if j == 0 else '} else if'} ({c.text}) {{", (node.children[k], lvl + 1)]
        todo += [f"{ind}}} else {{", (node.children[other], lvl + 1), f"{ind}}}"]
        stack.extend(reversed(todo))
    return out


def emit_goto(em: Emitter, leaf_lines) -> list[str]:
    order = [nid for nid, _d in lower.preorder(em.tree)]
    out: list[str] = []
    targets: set[int] = set()

    def jump(nid: int) -> str:
        targets.add(nid)
        return f"goto n{nid};"

    for pos, nid in enumerate(order):
        if nid in targets:
            out.append(f"n{nid}:")
        note = em.comment(nid)
        if note:
            out.append(INDENT + note)
        node = em.tree.nodes[nid]
        if isinstance(node, Leaf):
            out.extend(INDENT + s for s in leaf_lines(nid, node))
            if pos + 1 < len(order):
                out.append(INDENT + "return;")
            continue
        chain, other = em.route(nid, True)
        following = order[pos + 1]
        if len(chain) == 1 and node.children[chain[0][1]] == following:
            out.append(f"{INDENT}if ({cnot(chain[0][0]).text}) {jump(node.children[other])}")
            continue
        for c, k in chain:
            out.append(f"{INDENT}if ({c.text}) {jump(node.children[k])}")
        if node.children[other] != following:
            out.append(INDENT + jump(node.children[other]))
    return out


def emit_blend(em: Emitter, width: int, leaf_values) -> list[str]:
    """Forward pass over node ids: p[i] is the path weight of node i (0: not reached);
    o[k] sums p * value over reached leaves in increasing node id, from 0.0."""
    tree, ind, ind2 = em.tree, INDENT, INDENT * 2
    n = len(tree.nodes)
    for d in (f"double p[{n}] = {{1.0}};", f"double o[{width}] = {{0.0}};", "volatile double q;"):
        em.decls[d] = None
    out: list[str] = []
    for nid, node in enumerate(tree.nodes):
        note = em.comment(nid)
        if note:
            out.append(ind + note)
        if isinstance(node, Leaf):
            body = " ".join(f"q = p[{nid}] * {v}; o[{k}] = o[{k}] + q;"
                            for k, v in enumerate(leaf_values(node)))
            out.append(f"{ind}if (p[{nid}] != 0.0) {{ {body} }}")
            continue
        out.append(f"{ind}if (p[{nid}] != 0.0) {{")
        kids = node.children
        if isinstance(node.missing, Blend):
            out.append(f"{ind2}if ({em.missing_of(nid).text}) {{")
            out += [f"{ind2}{INDENT}p[{c}] = p[{nid}] * {c_double(w)};"
                    for c, w in zip(kids, node.missing.weights)]
            out.append(f"{ind2}}} else {{")
            chain, other = em.route(nid, False)
            out += [ind2 + INDENT + s for s in _route_lines(em, chain, other, kids, nid)]
            out.append(f"{ind2}}}")
        else:
            chain, other = em.route(nid, True)
            out += [ind2 + s for s in _route_lines(em, chain, other, kids, nid)]
        out.append(f"{ind}}}")
    return out


def _route_lines(em: Emitter, chain, other, kids, nid) -> list[str]:
    if len(chain) == 1:
        (c, k), = chain
        return [f"if ({c.text}) p[{kids[k]}] = p[{nid}];", f"else p[{kids[other]}] = p[{nid}];"]
    # first match wins: assign from the last condition to the first, then route flat
    em.decls["int k;"] = None
    lines = [f"k = {other};"] + [f"if ({c.text}) k = {k};" for c, k in reversed(chain)]
    return lines + [f"if (k == {i}) p[{c}] = p[{nid}];" for i, c in enumerate(kids)]
