"""SQLite (3.40 measured): no NaN (it stores NaN as NULL), no float32 type, no exp guard.

Limits, measured with this repository's own queries:

- The parser's stack (YYSTACKDEPTH 100) overflows past 18 CASE levels nested in THEN and
  23 in ELSE ("parser stack overflow"); ``max_case_depth`` keeps a margin for conditions
  that nest an expression of their own (surrogate routing).
- Literal thresholds are "factored" constants: each is compared with every earlier one
  while the statement is prepared, so preparing grows with the square of their number
  (19k distinct thresholds: 4 s). Leaf values are not factored.
- float32 rounding is emulated with doubles: Veltkamp's split
  ``c = x * (2**29 + 1); hi = c - (c - x)`` rounds x to 24 significant bits, ties to even
  (checked exhaustively over binades and ties in tests/test_target_sql.py); below 2**-126
  the float32 grid is fixed (2**-149) and ``(x + 1.5 * 2**-97) - 1.5 * 2**-97`` rounds to it.
  A float64 sum of two float32 values rounded once equals the float32 sum (53 >= 2*24 + 2),
  and never lands strictly between 0 and 2**-149, so accumulating needs no underflow guard.
"""

from __future__ import annotations

import math

from rulegen.codegen.literals import sqlite_float
from rulegen.targets.sql.dialects.base import F32_MIN_NORMAL, F32_OVERFLOW, Dialect

_F32_GRID = 1.5 * 2.0**-97  # adding it rounds |x| < 2**-126 to a multiple of 2**-149
_VELTKAMP = 2.0**29 + 1.0


class SQLite(Dialect):
    name = "sqlite"
    title = "SQLite"
    max_case_depth = 12
    # Its flattener copies a column's expression into every reference; OFFSET 0 with a
    # LIMIT is the documented way to stop it.
    fence = "LIMIT -1 OFFSET 0"
    # A fenced step (a co-routine) costs 0.18 us a row plus 0.02 us per column it passes on;
    # a tree level costs about 0.07 us (500 boosted trees, 20 features, 20k rows)
    fence_fixed, fence_per_column = 2.5, 0.3

    def float_literal(self, v: float) -> str:
        return sqlite_float(v)

    def infinity(self, positive: bool) -> str:
        return "9e999" if positive else "(-9e999)"  # overflow is SQLite's infinity

    def greatest(self, items: list[str]) -> str:
        # SQLite's max(a, b, ...) with several arguments is the scalar maximum
        return items[0] if len(items) == 1 else f"max({', '.join(items)})"

    def f32_sum(self, x: str) -> str:
        """Column-level (Veltkamp)."""
        k = self.num(_VELTKAMP)
        return f"(({x}) * {k} - (({x}) * {k} - ({x})))"

    def f32_round(self, x: str) -> str:
        x = f"({x})"
        grid = self.num(_F32_GRID)
        return (f"CASE WHEN abs({x}) < {self.num(F32_MIN_NORMAL)} THEN ({x} + {grid}) - {grid} "
                f"WHEN abs({x}) >= {self.num(F32_OVERFLOW)} THEN {x} * {self.num(math.inf)} "
                f"ELSE {self.f32_sum(x)} END")
