"""Tree bodies for the brace languages (C and Go): routing conditions and three flat emitters.

Every split becomes a *chain*: an ordered list of (condition, child position) pairs and an
``else`` child, with the missing and unseen routing folded into the conditions, so the
row takes the first child whose condition holds. Three emitters turn chains into lines:

- ``nested``: readable ``if / else if / else`` blocks, for trees whose nesting stays small;
- ``goto``: one label per jump target and no nesting at all, so any depth compiles (labels
  are written only for targets, since Go refuses a label nothing jumps to; jumps only go
  forward);
- ``blend``: a forward pass over node ids carrying path weights ``p[i]`` (C4.5 blends),
  which sums the reached leaves in increasing node id exactly as docs/IR.md defines.

The walks, the routing and the comments are the same in both languages; :class:`Emitter`
leaves to a subclass (``c_trees.Emitter``, ``go_trees.Emitter``) only how its language
spells things: literals, ``if`` conditions, jumps, oblique sums and the blend pass's
statements. Nothing here recurses: every walk is a loop or an explicit stack.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from rulegen.codegen import lower
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

NEG = {"<=": ">", "<": ">="}  # x op t fails (for a number) exactly when x NEG[op] t holds


# --- boolean expressions with their precedence ----------------------------------------
# prec: 3 primary or unary, 2 relational/equality, 1 &&, 0 ||, -1 ?: (C only)


class Cond(NamedTuple):
    text: str
    prec: int = 3
    neg: Cond | None = None  # the exact complement, when there is a nicer form than !(...)


def wrap(c: Cond, min_prec: int) -> str:
    return c.text if c.prec >= min_prec else f"({c.text})"


def cnot(c: Cond) -> Cond:
    if c.neg is not None:
        return c.neg._replace(neg=c._replace(neg=None))
    return Cond(f"!{wrap(c, 3)}", 3, c)


def show(v) -> str:
    """A name or label for a comment: strings JSON-quoted (ASCII), integers bare; the
    caller still passes the result through its language's comment escaping."""
    return str(v) if isinstance(v, int) else json.dumps(str(v))


def _nums(values) -> str:
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"


class Emitter:
    """Builds the body of one tree function; ``decls`` collects its local declarations.

    A subclass sets the class attributes and the methods below that raise
    ``NotImplementedError``: they are where C and Go are spelled differently."""

    INDENT: str
    TRUE: Cond
    FALSE: Cond
    AND_IN_OR_BRACKETED: bool  # C brackets && inside || (gcc's -Wparentheses); Go need not
    RANGE_BRACKETED: bool  # a code-range test is written "(a && b && c)" as one primary
    FULL_NOTES: bool  # comments list distributions and surrogates (Go's count surrogates)

    def __init__(self, model, tree: Tree, comments: bool):
        self.model, self.tree, self.comments = model, tree, comments
        self.decls: dict[str, None] = {}  # ordered and free of repeats

    # --- the language's spelling ------------------------------------------------------

    def bound(self, op: str, t: float, dtype: str) -> tuple[str, str]:
        """(operator, literal) that test ``x op t`` exactly on the row's type."""
        raise NotImplementedError

    def code(self, v: int) -> str:
        """A category code as a literal compared with ``x[f]``."""
        raise NotImplementedError

    def integral(self, f: int) -> str:
        """``x[f]`` is a whole number (only after a range test: the int conversion of a huge
        value is implementation-defined)."""
        raise NotImplementedError

    def oblique(self, test: ObliqueTest, tag: str) -> Cond:
        """The oblique sum's comparison (declaring what it needs)."""
        raise NotImplementedError

    def ternary(self, p: Cond, a: Cond, e: Cond) -> Cond:
        """``p ? a : e`` for a side-effect-free p, once neither constant case applies."""
        raise NotImplementedError

    def note(self, text: str) -> str:
        raise NotImplementedError

    def if_test(self, c: Cond) -> str:
        """What stands between ``if`` and ``{``."""
        raise NotImplementedError

    def jump_if(self, c: Cond, jump: str) -> list[str]:
        raise NotImplementedError

    def goto(self, nid: int) -> str:
        raise NotImplementedError

    def leaf_return(self, last: bool) -> list[str]:
        """What ends a leaf in the goto form (``last``: the leaf ends the function)."""
        raise NotImplementedError

    def blend_start(self, n_nodes: int, width: int) -> list[str]:
        raise NotImplementedError

    def reached(self, nid: int) -> Cond:
        """Node ``nid`` has a path weight (the blend pass skips it otherwise)."""
        raise NotImplementedError

    def blend_leaf(self, nid: int, values: list[str]) -> list[str]:
        raise NotImplementedError

    def blend_weight(self, child: int, nid: int, w: float) -> str:
        raise NotImplementedError

    def blend_route(self, chain, other: int, kids, nid: int) -> list[str]:
        raise NotImplementedError

    # --- and, or, not -----------------------------------------------------------------

    def _join(self, op: str, prec: int, absorb: Cond, unit: Cond, conds) -> Cond:
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
        # only same-operator chains stay flat, and && inside || where the language allows it
        least = 2 if self.AND_IN_OR_BRACKETED else prec + 1
        return Cond(f" {op} ".join(p.text if p.prec >= least or p.prec == prec else f"({p.text})"
                                   for p in parts), prec)

    def cor(self, *conds: Cond) -> Cond:
        return self._join("||", 0, self.TRUE, self.FALSE, conds)

    def cand(self, *conds: Cond) -> Cond:
        return self._join("&&", 1, self.FALSE, self.TRUE, conds)

    def ctern(self, p: Cond, a: Cond, e: Cond) -> Cond:
        if e.text == self.TRUE.text:
            return self.cor(cnot(p), a)
        if e.text == self.FALSE.text:
            return self.cand(p, a)
        return self.ternary(p, a, e)

    # --- tests --------------------------------------------------------------------------

    @staticmethod
    def isnan(f: int) -> Cond:
        return Cond(f"x[{f}] != x[{f}]", 2, Cond(f"x[{f}] == x[{f}]", 2))

    def compare(self, f: int, op: str, t: float, dtype: str) -> Cond:
        op2, lit = self.bound(op, t, dtype)
        return Cond(f"x[{f}] {op2} {lit}", 2)

    def compare_or_nan(self, f: int, op: str, t: float, dtype: str) -> Cond:
        """``x op t`` or x missing: ``!(x NEG t)``, NaN-safe without an isnan call."""
        op2, lit = self.bound(op, t, dtype)
        return Cond(f"!(x[{f}] {NEG[op2]} {lit})", 3, Cond(f"x[{f}] {NEG[op2]} {lit}", 2))

    def _in_range(self, f: int, lo: int, hi: int) -> Cond:
        text = f"x[{f}] >= {self.code(lo)} && x[{f}] <= {self.code(hi)} && {self.integral(f)}"
        return Cond(f"({text})", 3) if self.RANGE_BRACKETED else Cond(text, 1)

    def member(self, f: int, codes) -> Cond:
        """The value is one of ``codes`` (false for NaN and for any non-code); runs of three or
        more consecutive codes become a range test."""
        parts, codes, i = [], list(codes), 0
        while i < len(codes):
            j = i
            while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
                j += 1
            if j - i >= 2:
                parts.append(self._in_range(f, codes[i], codes[j]))
                i = j + 1
            else:
                parts.append(Cond(f"x[{f}] == {self.code(codes[i])}", 2))
                i += 1
        return self.cor(*parts)

    def known(self, f: int, n: int) -> Cond:
        """The value is one of the feature's codes 0..n-1 (false for NaN)."""
        return self._in_range(f, 0, n - 1)

    def _present_holds(self, test, tag: str, unseen) -> tuple[Cond, Cond, Cond]:
        """(missing, child-0 condition for a present value, the same or missing) of a binary
        test; ``unseen`` is where an unseen category goes (0 or 1)."""
        if isinstance(test, NumericTest):
            args = (test.feature, test.op, test.threshold, test.dtype)
            return self.isnan(test.feature), self.compare(*args), self.compare_or_nan(*args)
        if isinstance(test, ObliqueTest):
            holds = self.oblique(test, tag)
            missing = self.cor(*(self.isnan(f) for f in dict.fromkeys(test.features)))
            return missing, holds, self.cor(holds, missing)
        f = test.feature
        member = self.member(f, test.categories)
        if unseen != 0:
            return self.isnan(f), member, self.cor(member, self.isnan(f))
        known = self.known(f, len(self.model.features[f].categories))
        # a present value that is not a known code is unseen and goes to child 0
        either = self.cor(member, cnot(known))
        return self.isnan(f), either, either

    def route(self, nid: int, with_missing: bool) -> tuple[list[tuple[Cond, int]], int]:
        """The chain of a split: [(condition, child position)], else position. With
        ``with_missing`` false the value is known to be present (blend splits)."""
        split: Split = self.tree.nodes[nid]
        test, rule = split.test, split.missing
        d = rule.child if with_missing and isinstance(rule, DefaultChild) else None
        if isinstance(test, IntervalTest):
            chain = [((self.compare_or_nan if d == i else self.compare)(test.feature, test.op, b, test.dtype), i)
                     for i, b in enumerate(test.bounds)]
            return chain, len(test.bounds)
        if isinstance(test, MultiwayTest):
            chain = []
            for k, group in enumerate(test.groups):
                if k != split.unseen:
                    c = self.member(test.feature, group)
                    chain.append((self.cor(c, self.isnan(test.feature)) if d == k else c, k))
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
            return [(self.cand(cnot(missing), present0) if nan_true else present0, 0)], 1
        # surrogates: (P0 ? A0 : (P1 ? A1 : ... default == 0))
        steps = [(cnot(missing), present0)]
        for j, sur in enumerate(rule.surrogates):
            s_missing, s_holds, _ = self._present_holds(sur.test, f"{nid}s{j}", 1)
            steps.append((cnot(s_missing), s_holds if sur.child_if_true == 0 else cnot(s_holds)))
        expr = self.TRUE if rule.default == 0 else self.FALSE
        for p, a in reversed(steps):
            expr = self.ctern(p, a, expr)
        return [(expr, 0)], 1

    def missing_of(self, nid: int) -> Cond:
        test = self.tree.nodes[nid].test
        if isinstance(test, ObliqueTest):
            return self.cor(*(self.isnan(f) for f in dict.fromkeys(test.features)))
        return self.isnan(test.feature)

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
        if node.distribution is not None and self.FULL_NOTES:
            text += f"; distribution {_nums(node.distribution)}"
        return self.note(text)

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
            return f"blend {_nums(rule.weights) if self.FULL_NOTES else list(rule.weights)}"
        if not self.FULL_NOTES:
            return f"{len(rule.surrogates)} surrogate(s), then node {node.children[rule.default]}"
        surs = ", ".join(self._describe(s.test) for s in rule.surrogates)
        return f"surrogates [{surs}], then node {node.children[rule.default]}"


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


def _comment_and_leaf(em: Emitter, nid: int, ind: str, leaf_lines, out: list[str]) -> bool:
    """Writes node ``nid``'s comment and, for a leaf, its lines; true for a leaf."""
    note = em.comment(nid)
    if note:
        out.append(ind + note)
    node = em.tree.nodes[nid]
    if isinstance(node, Leaf):
        out.extend(ind + s for s in leaf_lines(nid, node))
        return True
    return False


def emit_nested(em: Emitter, leaf_lines) -> list[str]:
    out: list[str] = []
    stack: list = [(0, 1)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        nid, lvl = item
        ind = em.INDENT * lvl
        if _comment_and_leaf(em, nid, ind, leaf_lines, out):
            continue
        node = em.tree.nodes[nid]
        chain, other = em.route(nid, True)
        todo: list = []
        for j, (c, k) in enumerate(chain):
            todo += [f"{ind}{'if' if j == 0 else '} else if'} {em.if_test(c)} {{", (node.children[k], lvl + 1)]
        todo += [f"{ind}}} else {{", (node.children[other], lvl + 1), f"{ind}}}"]
        stack.extend(reversed(todo))
    return out


def emit_goto(em: Emitter, leaf_lines) -> list[str]:
    order = [nid for nid, _d in lower.preorder(em.tree)]
    out: list[str] = []
    targets: set[int] = set()
    ind = em.INDENT

    def jump(nid: int) -> str:
        targets.add(nid)
        return em.goto(nid)

    for pos, nid in enumerate(order):
        if nid in targets:
            out.append(f"n{nid}:")
        if _comment_and_leaf(em, nid, ind, leaf_lines, out):
            out.extend(ind + s for s in em.leaf_return(pos + 1 == len(order)))
            continue
        node = em.tree.nodes[nid]
        chain, other = em.route(nid, True)
        following = order[pos + 1]
        if len(chain) == 1 and node.children[chain[0][1]] == following:
            out += em.jump_if(cnot(chain[0][0]), jump(node.children[other]))
            continue
        for c, k in chain:
            out += em.jump_if(c, jump(node.children[k]))
        if node.children[other] != following:
            out.append(ind + jump(node.children[other]))
    return out


def emit_blend(em: Emitter, width: int, leaf_values) -> list[str]:
    """Forward pass over node ids: p[i] is the path weight of node i (0: not reached);
    o[k] sums p * value over reached leaves in increasing node id, from 0.0."""
    tree, ind = em.tree, em.INDENT
    ind2 = ind * 2
    out = em.blend_start(len(tree.nodes), width)
    for nid, node in enumerate(tree.nodes):
        note = em.comment(nid)
        if note:
            out.append(ind + note)
        if isinstance(node, Leaf):
            out += em.blend_leaf(nid, leaf_values(node))
            continue
        out.append(f"{ind}if {em.if_test(em.reached(nid))} {{")
        kids = node.children
        if isinstance(node.missing, Blend):
            out.append(f"{ind2}if {em.if_test(em.missing_of(nid))} {{")
            out += [ind2 + ind + em.blend_weight(c, nid, w) for c, w in zip(kids, node.missing.weights)]
            out.append(f"{ind2}}} else {{")
            chain, other = em.route(nid, False)
            out += [ind2 + ind + s for s in em.blend_route(chain, other, kids, nid)]
            out.append(f"{ind2}}}")
        else:
            chain, other = em.route(nid, True)
            out += [ind2 + s for s in em.blend_route(chain, other, kids, nid)]
        out.append(f"{ind}}}")
    return out
