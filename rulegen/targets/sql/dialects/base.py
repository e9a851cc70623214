"""What the SQL shape asks of an engine: literals, reading missing values, float32
arithmetic, ``exp``, and the engine's limits, each measured where it is set.

The shape (:mod:`rulegen.targets.sql.trees`, :mod:`~rulegen.targets.sql.query`) never
spells engine-specific SQL itself; a new engine is one subclass of :class:`Dialect` in this
folder and one line in :data:`rulegen.targets.sql.dialects.DIALECTS`.

Methods documented as *column-level* mention their argument several times, so the argument
must be a column reference or a tiny expression (never a tree), or the text would grow with
every nesting (and the engine would evaluate it several times).
"""

from __future__ import annotations

import functools
import math
import struct

from rulegen.codegen.literals import sql_identifier, sql_label

F32_MIN_NORMAL = 2.0**-126
F32_OVERFLOW = 2.0**128 - 2.0**103  # float32 rounding of |x| >= this is infinity
F32_ZERO = 2.0**-150  # float32 rounding of |x| <= this is zero


class Dialect:
    name = ""
    title = ""  # the engine's name in prose
    # Floats keep NaN, which is missing like NULL (True for every engine but SQLite).
    has_nan = False
    # NaN is ordered above every number and NaN = NaN (PostgreSQL, DuckDB, Spark). Then
    # ``x > t`` holds for NaN, so complements need a guard (see at_least). False with
    # has_nan: IEEE comparisons, false for NaN (ClickHouse).
    nan_largest = False
    # Doubles include +-inf (stored, computed, written as literals). Without them (MariaDB)
    # no value is infinite and arithmetic raises where IEEE overflows: query.py bounds what
    # the model can reach and refuses what it cannot write.
    has_infinity = True
    # A subquery's WITH steps can read the enclosing query's row (expressions-only form);
    # where they cannot, the fragment inlines its steps (inline.py).
    correlated_steps = True
    max_inline_trees = 0  # without correlated steps: trees one inlined expression may sum
    max_with_steps = 0  # steps one WITH may hold (0: no cap); longer chains nest (group.j2)
    # CASE levels one expression may nest; deeper trees advance a node id in steps
    # (trees.py). Each engine module says how it was measured.
    max_case_depth = 0
    # Put a CASE nested in a THEN in parentheses: Spark's parser takes time exponential in
    # the depth of CASEs nested alternately in THEN and ELSE without them (spark.py)
    parenthesize_then = False
    # Trees summed per accumulation step.
    trees_per_step = 50
    # Appended to a step's SELECT so the planner cannot copy the step's expressions into
    # each reference (exponential along a chain of steps); "" when the engine never does.
    fence = ""
    # What a fence costs per row, in tree nodes visited (plan.py weighs it against the work
    # it saves): a fixed part and a part per column the fenced step passes on.
    fence_fixed, fence_per_column = 0.0, 0.0
    # An engine with no such clause, whose optimiser never inlines an expression that is not
    # deterministic (Spark), gives a format string that wraps each column of a fenced step
    fence_wrap = ""
    # Why the engine cannot run the expressions-only form (its scalar subqueries read the
    # enclosing row), or "" when it can.
    no_correlated_subqueries = ""
    # A header line for queries that compute exp, when the engine's is not the C library's
    exp_note = ""
    float32_type: str | None = None  # None: no float32 type (rounding is emulated)
    double_type = "DOUBLE"

    def fence_cost(self, columns: int) -> float:
        return self.fence_fixed + self.fence_per_column * columns

    # --- literals -------------------------------------------------------------------------

    def float_literal(self, v: float) -> str:
        """A DOUBLE-typed literal that reads back as exactly ``v`` (v finite)."""
        raise NotImplementedError

    def infinity(self, positive: bool) -> str:
        raise NotImplementedError

    def nan(self) -> str:
        raise NotImplementedError(f"{self.title} has no NaN")

    def num(self, v: float) -> str:
        """A float literal, memoised (by float.hex, which keeps -0.0 and 0.0 apart)."""
        return _num(self, float(v).hex())

    def label(self, v) -> str:
        return sql_label(v)

    def quote(self, name: str) -> str:
        """A column or table name as the engine reads it (standard: double quotes)."""
        return sql_identifier(name)

    def column_name(self, name: str) -> str:
        """The name a column gets in this engine (some truncate long names)."""
        return name

    def column_problem(self, name: str) -> str | None:
        """Why no table of this engine can have a column of this name (None: it can)."""
        return None

    # --- reading inputs ---------------------------------------------------------------------

    def not_nan(self, col: str) -> str | None:
        """``col`` with NaN read as NULL, or None when the engine has no NaN."""
        if not self.has_nan:
            return None
        return f"NULLIF({col}, {self.nan()})"

    def prefer_nullif(self, guards: float, features: int) -> bool:
        """Whether to read ``features`` columns through NULLIF once a row rather than guard
        ``guards`` comparisons a row against NaN (see at_least)."""
        return False

    def at_least(self, col: str, bound: float) -> str:
        """True exactly for numbers ``>= bound``; false or NULL for NULL and NaN. Where NaN
        sorts above every number a second comparison keeps it out (cheaper, measured, than
        reading every input through NULLIF in a step of its own)."""
        text = f"{col} >= {self.num(bound)}"
        if self.nan_largest:
            text += f" AND {col} <= {self.num(math.inf)}"
        return text

    # --- arithmetic -------------------------------------------------------------------------

    def greatest(self, items: list[str]) -> str:
        return items[0] if len(items) == 1 else f"greatest({', '.join(items)})"

    def exp(self, x: str) -> str:
        """exp(x), giving inf / 0.0 where C does."""
        return f"exp({x})"

    def product(self, w: float, x: str) -> str:
        """``w * x`` with IEEE results."""
        return f"{self.num(w)} * {x}"

    def f32_sum(self, x: str) -> str:
        """float32 rounding of ``x``, a float64 sum of two float32 values within range."""
        return f"CAST({x} AS {self.float32_type})"

    def f32_round(self, x: str) -> str:
        """float32 rounding (to nearest, ties to even, overflow to +-inf) of any double.
        Column-level."""
        raise NotImplementedError

    def to_double(self, x: str) -> str:
        """A float32 value read as a double (exact)."""
        return f"CAST({x} AS {self.double_type})" if self.float32_type else x

    # --- what the header tells the user -----------------------------------------------------

    def notes(self, n_nodes: int) -> list[str]:
        """Lines for the header comment: how to run a query of ``n_nodes`` tree nodes."""
        return []

    def settings(self, size: int, steps: int) -> str:
        """A clause ending a full query of ``size`` bytes (UTF-8) and ``steps`` WITH steps
        that sets what the engine needs to run it, or ""."""
        return ""

    def settings_notes(self, settings: str) -> list[str]:
        """Header lines about the clause :meth:`settings` gave."""
        return []


@functools.lru_cache(maxsize=1 << 16)
def _num(dialect: Dialect, key: str) -> str:
    v = float.fromhex(key)
    if math.isnan(v):
        raise ValueError("NaN has no SQL literal here")
    if math.isinf(v):
        return dialect.infinity(v > 0)
    return dialect.float_literal(v)


@functools.cache
def exp_limits() -> tuple[float, float]:
    """(largest x with a finite exp(x), smallest x with exp(x) > 0) for this C library,
    found with math.exp (which calls it) by bisection over doubles."""
    def finite(x):
        try:
            return math.isfinite(math.exp(x))
        except OverflowError:
            return False

    lo, hi = 709.0, 710.0
    while math.nextafter(lo, math.inf) < hi:
        mid = lo / 2 + hi / 2
        mid = mid if lo < mid < hi else math.nextafter(lo, math.inf)
        lo, hi = (mid, hi) if finite(mid) else (lo, mid)
    top = lo
    lo, hi = -746.0, -744.0  # exp(lo) == 0 < exp(hi)
    while math.nextafter(lo, math.inf) < hi:
        mid = lo / 2 + hi / 2
        mid = mid if lo < mid < hi else math.nextafter(lo, math.inf)
        lo, hi = (mid, hi) if math.exp(mid) == 0.0 else (lo, mid)
    return top, hi


def _bits(v: float) -> int:
    return struct.unpack("<q", struct.pack("<d", v))[0]


def _from_bits(b: int) -> float:
    return struct.unpack("<d", struct.pack("<q", b))[0]


def last_true(pred, lo: float, hi: float) -> float:
    """Largest non-negative double v in [lo, hi] with pred(v), pred monotone (true, then
    false) and pred(lo) true; bisection over the bit patterns, which order like the values."""
    a, b = _bits(lo), _bits(hi)
    if pred(hi):
        return hi
    while b - a > 1:
        mid = (a + b) // 2
        a, b = (mid, b) if pred(_from_bits(mid)) else (a, mid)
    return _from_bits(a)
