"""C4.5's blended trees in SQL: a weight per leaf, then the weighted sum in node-id order.

With a ``Blend`` split a row whose feature is missing follows every child, so the tree is
not one path: each possible leaf gets a column with its path weight ``p`` (0.0 where the
row cannot reach it), and the tree output is the sum over leaves in increasing node id of
``p * value``, as docs/IR.md defines it. A leaf's condition is its whole path, kept as a
small *state*, one constraint per variable, built top-down with an explicit stack:

- a numeric feature keeps one interval ``lo <(=) x <(=) hi`` over float64 values (float32
  tests are first turned into exact float64 ones by ``float64_bound``) and a flag "missing
  rows are allowed here";
- a categorical feature keeps the set of category codes still allowed (plus the marker
  ``UNSEEN`` for labels outside the feature's list) and the same missing flag;
- an oblique test is a variable with the two values 0 (holds) and 1 (does not hold), read
  from a column ``NULL`` when an input is missing.

Columns here read NaN as NULL (the query's first step does it), and conditions are built
only from atoms that are TRUE exactly when the intended predicate holds, combined with AND
and OR (never NOT). A path whose state becomes empty is impossible and its leaf is
dropped. Surrogate splits do not fit an interval: each becomes one atom ``(CASE ... END) =
i`` that computes the child the row takes. Text grows as leaves x depth, which suits the
small trees C4.5 grows; every other tree is a nested CASE (trees.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


from rulegen.codegen.lower import float64_bound
from rulegen.ir.nodes import (
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
from rulegen.targets.sql.dialects import Dialect
from rulegen.targets.sql.plan import Col
from rulegen.targets.sql.routing import oblique_key

UNSEEN = -1  # the "any label not in the feature's list" member of a categorical set
FULL = (-math.inf, True, math.inf, True)  # no restriction on a numeric value


@dataclass(frozen=True)
class Var:
    """Something a condition constrains: a column and how to read it."""

    column: str  # quoted SQL name of the (NaN-normalised) input or derived column
    kind: str  # "num" or "set"
    literals: tuple[str, ...] = ()  # "set": SQL literal of each code (oblique: "0", "1")
    has_unseen: bool = False  # "set": whether values outside ``literals`` can occur


@dataclass(frozen=True)
class Arm:
    leaf: int  # node id
    condition: str | None  # None: always true
    factors: tuple[tuple[str, float], ...]  # blend: (missing atom, weight) root to leaf


class Conditions:
    """Builds leaf conditions for one model in one dialect."""

    def __init__(self, model: Model, dialect: Dialect, feature_columns: list[str],
                 oblique_columns: dict[tuple, str]):
        self.model = model
        self.dialect = dialect
        self.vars: list[Var] = []
        for f, col in zip(model.features, feature_columns):
            if f.kind == "numeric":
                self.vars.append(Var(col, "num"))
            else:
                lits = tuple(dialect.label(c) for c in f.categories)
                self.vars.append(Var(col, "set", lits, True))
        self.oblique_var: dict[tuple, int] = {}
        for key, col in oblique_columns.items():
            self.oblique_var[key] = len(self.vars)
            self.vars.append(Var(col, "set", ("0", "1"), False))

    # --- what a test sends to each child (present values only) -------------------------

    def _var_of(self, test) -> int:
        if isinstance(test, ObliqueTest):
            return self.oblique_var[oblique_key(test)]
        return test.feature

    def _universe(self, v: int) -> frozenset:
        var = self.vars[v]
        codes = set(range(len(var.literals)))
        if var.has_unseen:
            codes.add(UNSEEN)
        return frozenset(codes)

    def child_constraint(self, test, i: int, unseen: int | None):
        """(variable index, constraint) for present values that go to child ``i``."""
        v = self._var_of(test)
        if isinstance(test, NumericTest):
            op, b = float64_bound(test.op, test.threshold, test.dtype)
            if i == 0:
                return v, (-math.inf, True, b, op == "<=")
            return v, (b, op == "<", math.inf, True)
        if isinstance(test, IntervalTest):
            lo, hi = (-math.inf, True), (math.inf, True)
            if i > 0:
                op, b = float64_bound(test.op, test.bounds[i - 1], test.dtype)
                lo = (b, op == "<")
            if i < len(test.bounds):
                op, b = float64_bound(test.op, test.bounds[i], test.dtype)
                hi = (b, op == "<=")
            return v, lo + hi
        if isinstance(test, ObliqueTest):
            return v, frozenset({i})
        universe = self._universe(v)
        if isinstance(test, CategoricalTest):
            inside = frozenset(test.categories)
            codes = inside if i == 0 else universe - inside - {UNSEEN}
            if unseen == i or (unseen is None and i == 1):
                codes = codes | {UNSEEN}
            return v, codes
        if isinstance(test, MultiwayTest):
            codes = frozenset(test.groups[i])
            if unseen == i:
                grouped = set().union(*map(set, test.groups))
                codes = codes | (universe - grouped)
            return v, codes
        raise TypeError(f"unknown test {test!r}")

    # --- atoms ------------------------------------------------------------------------

    def _missing_atom(self, v: int) -> str:
        return f"{self.vars[v].column} IS NULL"

    def atom(self, v: int, constraint, miss_ok: bool) -> str | None:
        """SQL for "variable v satisfies the constraint (or is missing, if miss_ok)";
        None if it always holds, "" if it never does."""
        var = self.vars[v]
        col = var.column
        if var.kind == "num":
            lo, lo_incl, hi, hi_incl = constraint
            if not self.dialect.has_infinity:  # every stored value is finite
                lo_incl, hi_incl = lo_incl or lo == -math.inf, hi_incl or hi == math.inf
                if lo == math.inf or hi == -math.inf:
                    lo, hi = math.inf, -math.inf  # empty
                constraint = (lo, lo_incl, hi, hi_incl)
            if lo > hi or (lo == hi and not (lo_incl and hi_incl)):
                body = ""
            elif constraint == FULL:
                body = None
            elif lo == hi:
                body = f"{col} = {self.dialect.num(lo)}"
            else:
                parts = []
                if (lo, lo_incl) != (-math.inf, True):
                    parts.append(f"{col} {'>=' if lo_incl else '>'} {self.dialect.num(lo)}")
                if (hi, hi_incl) != (math.inf, True):
                    parts.append(f"{col} {'<=' if hi_incl else '<'} {self.dialect.num(hi)}")
                body = " AND ".join(parts)
        else:
            universe = self._universe(v)
            codes = constraint
            if codes == universe:
                body = None
            elif not codes:
                body = ""
            elif UNSEEN in codes:
                rest = sorted(universe - codes)
                body = _membership(col, [var.literals[c] for c in rest], negate=True)
            else:
                body = _membership(col, [var.literals[c] for c in sorted(codes)], negate=False)
        if body is None:
            return None if miss_ok else f"{col} IS NOT NULL"
        if body == "":
            return f"{col} IS NULL" if miss_ok else ""
        if miss_ok:
            return f"({col} IS NULL OR {_group(body)})"
        return _group(body) if " OR " in body else body

    def _present_atom(self, test) -> str:
        return f"{self.vars[self._var_of(test)].column} IS NOT NULL"

    def _routes(self, test, i: int, unseen: int | None) -> str:
        v, c = self.child_constraint(test, i, unseen)
        text = self.atom(v, c, False)
        return "FALSE" if text == "" else (text if text is not None else "TRUE")

    def surrogate_atom(self, split: Split, i: int) -> str:
        """``(CASE ... END) = i``: the child a surrogate split sends the row to."""
        rule: Surrogates = split.missing
        arms = [f"WHEN {self._routes(split.test, 0, split.unseen)} THEN 0",
                f"WHEN {self._present_atom(split.test)} THEN 1"]
        for s in rule.surrogates:
            # a surrogate holds only for listed categories: unseen counts as "does not hold"
            arms.append(f"WHEN {self._routes(s.test, 0, 1)} THEN {s.child_if_true}")
            arms.append(f"WHEN {self._present_atom(s.test)} THEN {1 - s.child_if_true}")
        return f"(CASE {' '.join(arms)} ELSE {rule.default} END) = {i}"

    # --- paths ------------------------------------------------------------------------

    def arms(self, tree: Tree) -> list[Arm]:
        """One arm per possible leaf, in depth-first order, with its full path."""
        return self._walk(tree)

    def _walk(self, tree: Tree) -> list[Arm]:
        """Depth-first over the tree with an explicit stack; impossible leaves dropped."""
        out: list[Arm] = []
        # (node, {var: (constraint, miss_ok)}, opaque atoms, blend factors) -- cons lists
        stack = [(0, {}, None, None)]
        while stack:
            node_id, state, opaque, factors = stack.pop()
            node = tree.nodes[node_id]
            if isinstance(node, Leaf):
                out.append(self._finish(node_id, state, opaque, factors))
                continue
            rule = node.missing
            for i in reversed(range(len(node.children))):
                child = node.children[i]
                if isinstance(rule, Surrogates):
                    stack.append((child, state, (self.surrogate_atom(node, i), opaque), factors))
                    continue
                v, c = self.child_constraint(node.test, i, node.unseen)
                new_factors = factors
                if isinstance(rule, DefaultChild):
                    miss_ok = rule.child == i
                else:  # Blend: missing rows follow every child with a weight
                    w = float(rule.weights[i])
                    miss_ok = w != 0.0
                    if miss_ok and w != 1.0:
                        new_factors = ((self._missing_atom(v), w), factors)
                merged = _merge(state.get(v), c, miss_ok)
                if merged is None:
                    continue  # no row can take this child on this path
                new_state = dict(state)
                new_state[v] = merged
                stack.append((child, new_state, opaque, new_factors))
        return out

    def _finish(self, leaf: int, state, opaque, factors) -> Arm:
        atoms = []
        for v in sorted(state):
            c, miss_ok = state[v]
            text = self.atom(v, c, miss_ok)  # never "": _merge refused impossible states
            if text is not None:
                atoms.append(text)
        while opaque is not None:
            atoms.append(opaque[0])
            opaque = opaque[1]
        fl = []
        while factors is not None:
            fl.append(factors[0])
            factors = factors[1]
        return Arm(leaf, conjunction(atoms), tuple(reversed(fl)))


def _merge(old, new, miss_ok: bool):
    """Intersect a variable's (constraint, miss_ok) with a new step; None if impossible."""
    if old is None:
        merged = (new, miss_ok)
    else:
        c, m = old
        if isinstance(new, frozenset):
            merged = (c & new, m and miss_ok)
        else:
            lo, lo_incl, hi, hi_incl = c
            nlo, nlo_incl, nhi, nhi_incl = new
            if nlo > lo:
                lo, lo_incl = nlo, nlo_incl
            elif nlo == lo:
                lo_incl = lo_incl and nlo_incl
            if nhi < hi:
                hi, hi_incl = nhi, nhi_incl
            elif nhi == hi:
                hi_incl = hi_incl and nhi_incl
            merged = ((lo, lo_incl, hi, hi_incl), m and miss_ok)
    c, m = merged
    if not m:
        empty = (not c) if isinstance(c, frozenset) else (
            c[0] > c[2] or (c[0] == c[2] and not (c[1] and c[3])))
        if empty:
            return None
    return merged


def _membership(col: str, literals: list[str], negate: bool) -> str:
    if len(literals) == 1:
        return f"{col} {'<>' if negate else '='} {literals[0]}"
    return f"{col} {'NOT IN' if negate else 'IN'} ({', '.join(literals)})"


def _group(text: str) -> str:
    return f"({text})"


_CHUNK = 4


def conjunction(atoms: list[str]) -> str | None:
    """AND of atoms, grouped as a balanced tree so the expression depth grows with
    log(len) (SQLite and DuckDB cap expression depth at 1000)."""
    if not atoms:
        return None
    parts = list(atoms)  # every atom is safe to AND: ORs inside atoms are parenthesised
    while len(parts) > 2 * _CHUNK:
        parts = [_group(" AND ".join(parts[i:i + _CHUNK])) if len(parts[i:i + _CHUNK]) > 1
                 else parts[i] for i in range(0, len(parts), _CHUNK)]
    return " AND ".join(parts)


def leaf_note(tree_index: int, node_id: int, leaf: Leaf) -> str:
    """Provenance of a leaf (plain text): tree, node id, support."""
    text = f"tree {tree_index} leaf {node_id}"
    if leaf.samples is not None:
        text += f" samples={leaf.samples:g}"
    if leaf.distribution is not None:
        text += " dist=[" + ", ".join(f"{d:g}" for d in leaf.distribution) + "]"
    return text


BLEND_CHUNK = 200  # leaves summed per step


def blend_phases(conds: Conditions, t: int, tree: Tree, width: int, name, inputs: frozenset):
    """Columns for tree ``t``: leaf weights ``p`` (0.0 where a leaf is not reached), then per
    output the sum over leaves in node-id order of ``p * value``, BLEND_CHUNK leaves a step.

    ``name(s)`` makes an internal column name. Returns (phases: lists of columns for
    successive steps, {k: unquoted name of the column holding output k})."""
    num = conds.dialect.num
    arms = sorted(conds.arms(tree), key=lambda a: a.leaf)
    chunks = [arms[i:i + BLEND_CHUNK] for i in range(0, len(arms), BLEND_CHUNK)] or [[]]
    phases: list[list[Col]] = [[] for _ in range(len(chunks) + 1)]
    sums = {k: num(0.0) for k in range(width)}
    for j, chunk in enumerate(chunks):
        for a in chunk:
            p = num(1.0)
            for miss, w in a.factors:
                p = f"{p} * CASE WHEN {miss} THEN {num(w)} ELSE {num(1.0)} END"
            expr = p if a.condition is None else f"CASE WHEN {a.condition} THEN {p} ELSE {num(0.0)} END"
            phases[j].append(Col(name(f"t{t}_{a.leaf}"), expr, inputs,
                                 leaf_note(t, a.leaf, tree.nodes[a.leaf]),
                                 cost=1.0 + (a.condition or "").count(" AND ")))
        for k in range(width):
            terms = [f"{conds.dialect.quote(name(f't{t}_{a.leaf}'))} * {num(tree.nodes[a.leaf].value[k])}" for a in chunk]
            refs = {name(f"t{t}_{a.leaf}") for a in chunk} | ({name(f"b{t}_{k}")} if j else set())
            phases[j + 1].append(Col(name(f"b{t}_{k}"), " + ".join([sums[k]] + terms),
                                     frozenset(refs), f"tree {t}: blended output {k}"))
            sums[k] = conds.dialect.quote(name(f"b{t}_{k}"))
    return phases, {k: name(f"b{t}_{k}") for k in range(width)}
