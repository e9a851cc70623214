"""Where a split sends a row, as the arms of one SQL ``CASE``: ``WHEN c1 THEN <child a> WHEN
c2 THEN <child b> ... ELSE <default child>``.

Every arm's condition is TRUE exactly for the present values its child takes, and FALSE or
NULL otherwise, so missing rows (NULL, and NaN where the engine has it) always fall through
to the ELSE. The default child is therefore the one that takes missing values, and each
child appears once: the text of a tree stays proportional to its nodes. Conditions are
built from comparisons, IN lists and AND, never NOT, so SQL's three-valued logic cannot
send a NULL anywhere but the ELSE.

Numeric tests compare the table's column itself. ``x <= t`` is false for NaN, which sorts
above every number in PostgreSQL and DuckDB; its complement ``x > t`` is not, so it is
written ``dialect.at_least(x, next_up(t))``, exact for every double (and for float32 and
integer columns, which the engines compare as doubles). Where NaN compares as in IEEE
(ClickHouse: false both ways) at_least needs no guard. Either way ``x <= inf`` is the
presence test: false for NULL and NaN, true for every number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rulegen.codegen.lower import float64_bound
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    IntervalTest,
    Model,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Split,
    Surrogates,
)
from rulegen.targets.sql.dialects import Dialect

ALWAYS = "TRUE"  # a condition every present value meets
NEVER = ""  # a condition no value meets


@dataclass(frozen=True)
class Route:
    arms: tuple[tuple[str, int], ...]  # (condition, child index); the first true arm wins
    default: int  # the child of every other row, missing ones included


def oblique_key(test: ObliqueTest) -> tuple:
    """Identity of an oblique test; float.hex keeps -0.0 and 0.0 weights apart."""
    return (test.features, tuple(float(w).hex() for w in test.weights), test.op,
            float(test.threshold).hex())


class Router:
    """Routes for one model in one dialect. ``columns[f]`` is the quoted column of feature
    f; ``obliques`` maps :func:`oblique_key` to a column holding 0 (the test holds), 1 (it
    does not) or NULL (an input is missing)."""

    def __init__(self, model: Model, dialect: Dialect, columns: list[str], obliques: dict[tuple, str],
                 nan_free: frozenset = frozenset()):
        """``nan_free``: features whose column has NaN read as NULL already (no guard)."""
        self.model, self.d, self.columns, self.obliques = model, dialect, columns, obliques
        self.labels = [[dialect.label(c) for c in f.categories] for f in model.features]
        self.nan_free = nan_free

    # --- conditions on one test ---------------------------------------------------------

    def _column(self, test) -> str:
        if isinstance(test, ObliqueTest):
            return self.obliques[oblique_key(test)]
        return self.columns[test.feature]

    def _nan(self, f: int) -> bool:
        return self.d.has_nan and f not in self.nan_free

    def below(self, f: int, op: str, bound: float) -> str:
        """Present values of numeric feature f with ``x op bound`` (float64)."""
        if op == "<" and bound == -math.inf:
            return NEVER
        if op == "<=" and bound == math.inf:
            return self.present_number(f)
        if math.isinf(bound) and not self.d.has_infinity:  # every stored value is finite
            return self.present_number(f) if bound > 0 else NEVER
        return f"{self.columns[f]} {op} {self.d.num(bound)}"

    def above(self, f: int, op: str, bound: float) -> str:
        """Present values of numeric feature f that fail ``x op bound``."""
        if op == "<=":
            if bound == math.inf:
                return NEVER
            bound = math.nextafter(bound, math.inf)
        if bound == -math.inf:
            return self.present_number(f)
        if bound == math.inf and not self.d.has_infinity:
            return NEVER
        col = self.columns[f]
        return self.d.at_least(col, bound) if self._nan(f) else f"{col} >= {self.d.num(bound)}"

    def present_number(self, f: int) -> str:
        col = self.columns[f]
        return f"{col} <= {self.d.num(math.inf)}" if self._nan(f) else f"{col} IS NOT NULL"

    def present(self, test) -> str:
        if isinstance(test, NumericTest):
            return self.present_number(test.feature)
        return f"{self._column(test)} IS NOT NULL"

    def member(self, test, codes: set[int], unseen: bool, others: set[int]) -> str:
        """A categorical column takes one of ``codes`` (or, with ``unseen``, any label the
        feature does not list); ``others`` are the listed codes that go elsewhere."""
        col, labels = self._column(test), self.labels[test.feature]
        if unseen:
            if not others:
                return f"{col} IS NOT NULL"
            return _in(col, [labels[c] for c in sorted(others)], negate=True)
        if not codes:
            return NEVER
        return _in(col, [labels[c] for c in sorted(codes)], negate=False)

    def holds(self, test, child: int, unseen: int | None) -> str:
        """Present values a binary test sends to ``child`` (0: the test holds)."""
        if isinstance(test, NumericTest):
            op, bound = float64_bound(test.op, test.threshold, test.dtype)
            f = test.feature
            return self.below(f, op, bound) if child == 0 else self.above(f, op, bound)
        if isinstance(test, ObliqueTest):
            return f"{self._column(test)} = {child}"
        if isinstance(test, CategoricalTest):
            inside = set(test.categories)
            rest = set(range(len(self.labels[test.feature]))) - inside
            unseen = 1 if unseen is None else unseen
            mine, theirs = (inside, rest) if child == 0 else (rest, inside)
            return self.member(test, mine, unseen == child, theirs)
        raise TypeError(f"not a binary test: {test!r}")

    # --- routes -----------------------------------------------------------------------------

    def route(self, split: Split) -> Route:
        rule, test = split.missing, split.test
        if isinstance(rule, Surrogates):
            return Route(((f"{self.surrogate_routing(split)} = 0", 0),), 1)
        if not isinstance(rule, DefaultChild):
            raise TypeError(f"no single route for missing rule {rule!r}")
        m = rule.child
        if isinstance(test, IntervalTest):
            return self._interval(test, m)
        if isinstance(test, MultiwayTest):
            return self._multiway(test, split.unseen, m)
        other = 1 - m
        return _route([(self.holds(test, other, split.unseen), other)], m)

    def _interval(self, test: IntervalTest, m: int) -> Route:
        f = test.feature
        bounds = [float64_bound(test.op, b, test.dtype) for b in test.bounds]
        arms = [(self.below(f, op, b), i) for i, (op, b) in enumerate(bounds[:m])]
        # above every bound first, then down to the one just above the default child
        arms += [(self.above(f, *bounds[k - 1]), k) for k in range(len(bounds), m, -1)]
        return _route(arms, m)

    def _multiway(self, test: MultiwayTest, unseen: int, m: int) -> Route:
        codes = [set(g) for g in test.groups]
        listed = set(range(len(self.labels[test.feature])))
        codes[unseen] |= listed - set().union(*codes)  # listed in no group: as unseen
        arms = [(self.member(test, codes[i], False, set()), i)
                for i in range(len(codes)) if i not in (m, unseen)]
        if unseen != m:  # after the other arms: what is present and not the default's
            arms.append((self.member(test, set(), True, codes[m]), unseen))
        return _route(arms, m)

    def surrogate_routing(self, split: Split) -> str:
        """``CASE ... END``: the child (0 or 1) a split with surrogates sends the row to."""
        rule: Surrogates = split.missing
        arms = [(self.holds(split.test, 0, split.unseen), "0"), (self.present(split.test), "1")]
        for s in rule.surrogates:
            # a surrogate holds only for listed categories: unseen counts as "does not hold"
            arms.append((self.holds(s.test, 0, 1), str(s.child_if_true)))
            arms.append((self.present(s.test), str(1 - s.child_if_true)))
        whens = " ".join(f"WHEN {c} THEN {v}" for c, v in arms if c != NEVER)
        return f"(CASE {whens} ELSE {rule.default} END)"


def _route(arms, default: int) -> Route:
    kept = []
    for cond, child in arms:
        if cond == NEVER or child == default:
            continue
        kept.append((cond, child))
        if cond == ALWAYS:
            break
    return Route(tuple(kept), default)


def _in(col: str, literals: list[str], negate: bool) -> str:
    if len(literals) == 1:
        return f"{col} {'<>' if negate else '='} {literals[0]}"
    return f"{col} {'NOT IN' if negate else 'IN'} ({', '.join(literals)})"
