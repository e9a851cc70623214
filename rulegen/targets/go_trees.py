"""Tree bodies for the Go target: routing conditions and three flat emitters.

Every split becomes a *chain*, as in the C target: an ordered list of (condition, child
position) pairs and an ``else`` child, with missing and unseen routing folded into the
conditions. The emitters turn chains into Go statements:

- ``nested``: ``if / else if / else`` blocks, while the nesting stays within ``MAX_NESTING``;
- ``goto``: one label per jump target and no nesting at all, so any depth compiles (Go refuses
  a label nothing jumps to, so labels are written only for targets: jumps only go forward);
- ``blend``: a forward pass over node ids carrying path weights ``p[i]`` (C4.5 blends), which
  sums the reached leaves in increasing node id exactly as docs/IR.md defines.

Go has no ``?:``, so a surrogate chain ``P0 ? A0 : (P1 ? A1 : d)`` is written
``P0 && A0 || !P0 && (...)``: each P is a plain present-test, cheap to read twice. Nothing
here recurses: every walk is a loop or an explicit stack.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from rulegen.codegen import lower
from rulegen.codegen.literals import go_comment, go_float
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

INDENT = "\t"
MAX_NESTING = 32  # nested blocks up to this depth, the goto form beyond (as the C target)
_NEG = {"<=": ">", "<": ">="}  # x op t fails (for a number) exactly when x NEG[op] t holds

# Go precedence: 3 unary/primary, 2 comparison, 1 &&, 0 ||


class Cond(NamedTuple):
    text: str
    prec: int = 3
    neg: "Cond | None" = None  # the exact complement, when nicer than !(...)


TRUE, FALSE = Cond("true", 3, Cond("false")), Cond("false", 3, Cond("true"))


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
    return Cond(f" {op} ".join(_wrap(p, prec + 1) if p.prec != prec else p.text for p in parts), prec)


def cor(*conds: Cond) -> Cond:
    return _join("||", 0, TRUE, FALSE, conds)


def cand(*conds: Cond) -> Cond:
    return _join("&&", 1, FALSE, TRUE, conds)


def ctern(p: Cond, a: Cond, e: Cond) -> Cond:
    """``p ? a : e`` for a side-effect-free p."""
    if e.text == "true":
        return cor(cnot(p), a)
    if e.text == "false":
        return cand(p, a)
    return cor(cand(p, a), cand(cnot(p), e))


# --- tests ------------------------------------------------------------------------------


def _isnan(f: int) -> Cond:
    return Cond(f"x[{f}] != x[{f}]", 2, Cond(f"x[{f}] == x[{f}]", 2))


def _compare(f: int, op: str, t: float, dtype: str) -> Cond:
    op2, t2 = lower.float64_bound(op, t, dtype)
    return Cond(f"x[{f}] {op2} {go_float(t2)}", 2)


def _compare_or_nan(f: int, op: str, t: float, dtype: str) -> Cond:
    """``x op t`` or x missing: ``!(x NEG t)``, NaN-safe without a call."""
    op2, t2 = lower.float64_bound(op, t, dtype)
    return Cond(f"!(x[{f}] {_NEG[op2]} {go_float(t2)})", 3, Cond(f"x[{f}] {_NEG[op2]} {go_float(t2)}", 2))


def _integral(f: int) -> str:
    # only after a range test: the int conversion of a huge value is implementation-defined
    return f"x[{f}] == float64(int(x[{f}]))"


def _member(f: int, codes) -> Cond:
    """The value is one of ``codes`` (false for NaN and any non-code); runs of three or more
    consecutive codes become a range test."""
    parts, codes, i = [], list(codes), 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(Cond(f"x[{f}] >= {codes[i]} && x[{f}] <= {codes[j]} && {_integral(f)}", 1))
            i = j + 1
        else:
            parts.append(Cond(f"x[{f}] == {codes[i]}", 2))
            i += 1
    return cor(*parts)


def _known(f: int, n: int) -> Cond:
    return Cond(f"x[{f}] >= 0 && x[{f}] <= {n - 1} && {_integral(f)}", 1)


def show(v) -> str:
    """A name or label for a comment: strings JSON-quoted, integers bare (then go_comment)."""
    return str(v) if isinstance(v, int) else json.dumps(str(v))


class Emitter:
    """Builds the body of one tree function; ``tables`` collects package-level arrays (oblique
    features and weights), ``decls`` its local declarations."""

    def __init__(self, model, tree: Tree, index: int, comments: bool):
        self.model, self.tree, self.index, self.comments = model, tree, index, comments
        self.tables: list[str] = []
        self.decls: dict[str, None] = {}

    def _oblique(self, test: ObliqueTest, tag: str) -> tuple[Cond, Cond]:
        name = f"ob{self.index}_{tag}"
        feats = ", ".join(map(str, test.features))
        weights = ", ".join(go_float(w) for w in test.weights)
        self.tables += [f"var {name}F = [...]int{{{feats}}}", f"var {name}W = [...]float64{{{weights}}}"]
        holds = Cond(f"dot(x, {name}F[:], {name}W[:]) {test.op} {go_float(test.threshold)}", 2)
        return holds, cor(*(_isnan(f) for f in dict.fromkeys(test.features)))

    def _present_holds(self, test, tag: str, unseen) -> tuple[Cond, Cond, Cond]:
        """(missing, child-0 condition for a present value, the same or missing)."""
        if isinstance(test, NumericTest):
            args = (test.feature, test.op, test.threshold, test.dtype)
            return _isnan(test.feature), _compare(*args), _compare_or_nan(*args)
        if isinstance(test, ObliqueTest):
            holds, missing = self._oblique(test, tag)
            return missing, holds, cor(holds, missing)
        f = test.feature
        member = _member(f, test.categories)
        if unseen != 0:
            return _isnan(f), member, cor(member, _isnan(f))
        known = _known(f, len(self.model.features[f].categories))
        # a present value that is not a known code is unseen and goes to child 0; NaN is not known
        return _isnan(f), cor(member, cnot(known)), cor(member, cnot(known))

    def route(self, nid: int, with_missing: bool) -> tuple[list[tuple[Cond, int]], int]:
        """The chain of a split: [(condition, child position)], else position. With
        ``with_missing`` false the value is known to be present (blend splits)."""
        split: Split = self.tree.nodes[nid]
        test, rule = split.test, split.missing
        d = rule.child if with_missing and isinstance(rule, DefaultChild) else None
        if isinstance(test, IntervalTest):
            chain = [((_compare_or_nan if d == i else _compare)(test.feature, test.op, b, test.dtype), i)
                     for i, b in enumerate(test.bounds)]
            return chain, len(test.bounds)
        if isinstance(test, MultiwayTest):
            chain = []
            for k, group in enumerate(test.groups):
                if k != split.unseen:
                    c = _member(test.feature, group)
                    chain.append((cor(c, _isnan(test.feature)) if d == k else c, k))
            return chain, split.unseen
        unseen = 1 if split.unseen is None else split.unseen
        missing, present0, full0 = self._present_holds(test, str(nid), unseen)
        if not with_missing:
            return [(present0, 0)], 1
        if isinstance(rule, DefaultChild):
            if d == 0:
                return [(full0, 0)], 1
            nan_true = isinstance(test, CategoricalTest) and unseen == 0  # "not known" holds for NaN
            return [(cand(cnot(missing), present0) if nan_true else present0, 0)], 1
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

    def comment(self, nid: int) -> str | None:
        if not self.comments:
            return None
        node = self.tree.nodes[nid]
        if isinstance(node, Leaf):
            text = f"node {nid}: leaf {list(map(float, node.value))}"
        else:
            text = f"node {nid}: {self._describe(node.test)}; missing: {self._missing_text(node)}"
            if node.unseen is not None:
                text += f"; unseen -> node {node.children[node.unseen]}"
        if node.samples is not None:
            text += f"; samples {node.samples!r}"
        return "// " + go_comment(text)

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
            return f"blend {list(rule.weights)}"
        return f"{len(rule.surrogates)} surrogate(s), then node {node.children[rule.default]}"


# --- nesting and the three emitters --------------------------------------------------------


def nesting(tree: Tree) -> int:
    """Deepest block nesting of the nested form (each ``else if`` nests in its ``else``)."""
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
            todo += [f"{ind}{'if' if j == 0 else '} else if'} {c.text} {{", (node.children[k], lvl + 1)]
        todo += [f"{ind}}} else {{", (node.children[other], lvl + 1), f"{ind}}}"]
        stack.extend(reversed(todo))
    return out


def emit_goto(em: Emitter, leaf_lines) -> list[str]:
    order = [nid for nid, _d in lower.preorder(em.tree)]
    out: list[str] = []
    targets: set[int] = set()

    def jump(nid: int) -> str:
        targets.add(nid)
        return f"goto n{nid}"

    for pos, nid in enumerate(order):
        if nid in targets:
            out.append(f"n{nid}:")
        note = em.comment(nid)
        if note:
            out.append(INDENT + note)
        node = em.tree.nodes[nid]
        if isinstance(node, Leaf):
            out.extend(INDENT + s for s in leaf_lines(nid, node))
            out.append(INDENT + "return")  # also ends the function: Go wants no label at its end
            continue
        chain, other = em.route(nid, True)
        following = order[pos + 1]
        if len(chain) == 1 and node.children[chain[0][1]] == following:
            out += [f"{INDENT}if {cnot(chain[0][0]).text} {{", INDENT * 2 + jump(node.children[other]), INDENT + "}"]
            continue
        for c, k in chain:
            out += [f"{INDENT}if {c.text} {{", INDENT * 2 + jump(node.children[k]), INDENT + "}"]
        if node.children[other] != following:
            out.append(INDENT + jump(node.children[other]))
    return out


def emit_blend(em: Emitter, width: int, leaf_values) -> list[str]:
    """Forward pass over node ids: p[i] is the path weight of node i (0: not reached);
    o[k] sums p * value over reached leaves in increasing node id, from 0.0. Each product
    that feeds a sum is wrapped in float64(...), which the Go spec says prevents fusing
    it into an FMA."""
    tree, ind, ind2 = em.tree, INDENT, INDENT * 2
    out: list[str] = [f"{ind}var p [{len(tree.nodes)}]float64", f"{ind}var o [{width}]float64",
                      f"{ind}p[0] = 1"]
    for nid, node in enumerate(tree.nodes):
        note = em.comment(nid)
        if note:
            out.append(ind + note)
        if isinstance(node, Leaf):
            out.append(f"{ind}if p[{nid}] != 0 {{")
            out += [f"{ind2}o[{k}] = o[{k}] + float64(p[{nid}]*{v})" for k, v in enumerate(leaf_values(node))]
            out.append(f"{ind}}}")
            continue
        out.append(f"{ind}if p[{nid}] != 0 {{")
        kids = node.children
        if isinstance(node.missing, Blend):
            out.append(f"{ind2}if {em.missing_of(nid).text} {{")
            out += [f"{ind2}{INDENT}p[{c}] = p[{nid}] * {go_float(w)}" for c, w in zip(kids, node.missing.weights)]
            out.append(f"{ind2}}} else {{")
            chain, other = em.route(nid, False)
            out += [ind2 + INDENT + s for s in _route_lines(chain, other, kids, nid)]
            out.append(f"{ind2}}}")
        else:
            chain, other = em.route(nid, True)
            out += [ind2 + s for s in _route_lines(chain, other, kids, nid)]
        out.append(f"{ind}}}")
    return out


def _route_lines(chain, other, kids, nid) -> list[str]:
    if len(chain) == 1:
        (c, k), = chain
        return [f"if {c.text} {{", f"{INDENT}p[{kids[k]}] = p[{nid}]",
                "} else {", f"{INDENT}p[{kids[other]}] = p[{nid}]", "}"]
    lines = []  # first match wins
    for j, (c, k) in enumerate(chain):
        lines += [f"{'if' if j == 0 else '} else if'} {c.text} {{", f"{INDENT}p[{kids[k]}] = p[{nid}]"]
    return lines + ["} else {", f"{INDENT}p[{kids[other]}] = p[{nid}]", "}"]
