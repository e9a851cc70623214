"""Per-dialect arithmetic for the SQL target: types, NaN, exp and float32 rounding.

Each function returns SQL text. Functions documented as *column-level* mention their
argument several times, so the argument must be a column reference or a tiny expression
(never a tree), or the text would grow with every nesting.

float32, by dialect:

- DuckDB has ``FLOAT`` (IEEE binary32); ``CAST(double AS FLOAT)`` rounds to nearest, ties to
  even, subnormals included, but *raises* for finite values that round to infinity.
- PostgreSQL has ``real``; its cast raises when a finite value rounds to infinity or a
  non-zero value rounds to zero.
- SQLite has no float32. Rounding is emulated with doubles: Veltkamp's split
  ``c = x * (2**29 + 1); hi = c - (c - x)`` rounds x to 24 significant bits, ties to even
  (checked exhaustively over binades and ties in tests/test_target_sql.py); below 2**-126 the
  float32 grid is fixed (2**-149) and ``(x + 1.5 * 2**-97) - 1.5 * 2**-97`` rounds to it.

A float64 sum of two float32 values rounded once to float32 equals the float32 sum (53 >=
2 * 24 + 2, so double rounding is innocuous), and such a sum never lands strictly between 0
and 2**-149, so accumulating ``round32(acc + c)`` needs neither an underflow nor (given the
static bound checked in sql.py) an overflow guard.
"""

from __future__ import annotations

import functools
import math
import struct
import sys

from rulegen.codegen.literals import sql_float, sql_nan

DIALECTS = ("sqlite", "duckdb", "postgres")

F32_MIN_NORMAL = 2.0**-126
F32_OVERFLOW = 2.0**128 - 2.0**103  # float32 rounding of |x| >= this is infinity
F32_ZERO = 2.0**-150  # float32 rounding of |x| <= this is zero
_F32_GRID = 1.5 * 2.0**-97  # adding it rounds |x| < 2**-126 to a multiple of 2**-149
_VELTKAMP = 2.0**29 + 1.0


def fence(dialect: str) -> str:
    """Appended to every step's SELECT so the engine cannot inline it into the next step:
    SQLite's flattener (and PostgreSQL's subquery pull-up) copy a column's expression into
    every reference, which multiplies the work (exponentially along a chain of steps).
    ``OFFSET 0`` is the documented way to stop both; DuckDB never copies expressions."""
    return {"sqlite": "\n  LIMIT -1 OFFSET 0", "postgres": "\n  OFFSET 0"}.get(dialect, "")


_LITERALS: dict[tuple[str, str], str] = {}


def num(v: float, dialect: str) -> str:
    """sql_float, memoised (by float.hex, which keeps -0.0 and 0.0 apart)."""
    key = (float(v).hex(), dialect)
    text = _LITERALS.get(key)
    if text is None:
        text = _LITERALS[key] = sql_float(v, dialect)
    return text


def not_nan(col: str, dialect: str) -> str | None:
    """A numeric input with NaN read as missing (NULL); None when the engine has no NaN
    (SQLite stores NaN as NULL). DuckDB and PostgreSQL order NaN above every number."""
    if dialect == "sqlite":
        return None
    return f"NULLIF({col}, {sql_nan(dialect)})"


def greatest(items: list[str], dialect: str) -> str:
    if len(items) == 1:
        return items[0]
    fn = "max" if dialect == "sqlite" else "greatest"  # SQLite's max(a, b, ...) is scalar
    return f"{fn}({', '.join(items)})"


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


def exp(x: str, dialect: str) -> str:
    """exp(x) that gives inf / 0.0 where C does. Column-level in PostgreSQL, whose exp()
    raises "value out of range" on overflow and on underflow to zero."""
    if dialect != "postgres":
        return f"exp({x})"
    top, bottom = exp_limits()
    x = f"({x})"
    return (f"CASE WHEN {x} > {num(top, dialect)} THEN {num(math.inf, dialect)} "
            f"WHEN {x} < {num(bottom, dialect)} THEN {num(0.0, dialect)} ELSE exp({x}) END")


def float32_type(dialect: str) -> str:
    return {"duckdb": "FLOAT", "postgres": "real"}[dialect]


def to_double(x: str, dialect: str) -> str:
    """A float32 column read as a double (exact); SQLite's emulated float32 is a double."""
    if dialect == "sqlite":
        return x
    return f"CAST({x} AS {'DOUBLE' if dialect == 'duckdb' else 'double precision'})"


def f32_sum(x: str, dialect: str) -> str:
    """float32 rounding of ``x``, a float64 sum of two float32 values within range.
    Inline (x once) in DuckDB and PostgreSQL; column-level in SQLite (Veltkamp)."""
    if dialect == "sqlite":
        k = num(_VELTKAMP, dialect)
        return f"({x}) * {k} - (({x}) * {k} - ({x}))"
    return f"CAST({x} AS {float32_type(dialect)})"


def f32_round(x: str, dialect: str) -> str:
    """float32 rounding (to nearest, ties to even, overflow to +-inf) of any double.
    Column-level in every dialect."""
    big = num(F32_OVERFLOW, dialect)
    x = f"({x})"
    if dialect == "sqlite":
        grid = num(_F32_GRID, dialect)
        return (f"CASE WHEN abs({x}) < {num(F32_MIN_NORMAL, dialect)} THEN ({x} + {grid}) - {grid} "
                f"WHEN abs({x}) >= {big} THEN {x} * {num(math.inf, dialect)} "
                f"ELSE {f32_sum(x, dialect)} END")
    t = float32_type(dialect)
    inf = f"CAST({x} * {num(math.inf, dialect)} AS {t})"
    if dialect == "duckdb":
        return f"CASE WHEN abs({x}) >= {big} THEN {inf} ELSE CAST({x} AS {t}) END"
    return (f"CASE WHEN abs({x}) <= {num(F32_ZERO, dialect)} THEN CAST({x} * {num(0.0, dialect)} AS {t}) "
            f"WHEN abs({x}) >= {big} THEN {inf} ELSE CAST({x} AS {t}) END")


def _bits(v: float) -> int:
    return struct.unpack("<q", struct.pack("<d", v))[0]


def _from_bits(b: int) -> float:
    return struct.unpack("<d", struct.pack("<q", b))[0]


def _last_true(pred, lo: float, hi: float) -> float:
    """Largest non-negative double v in [lo, hi] with pred(v), pred monotone (true, then
    false) and pred(lo) true; bisection over the bit patterns, which order like the values."""
    a, b = _bits(lo), _bits(hi)
    if pred(hi):
        return hi
    while b - a > 1:
        mid = (a + b) // 2
        a, b = (mid, b) if pred(_from_bits(mid)) else (a, mid)
    return _from_bits(a)


def product(w: float, x: str, dialect: str) -> str:
    """``w * x`` with IEEE results. PostgreSQL raises "value out of range" when a product of
    finite non-zero numbers underflows to zero or overflows, so there the inputs that would
    do so are routed first, with bounds found by bisection (Python's float multiply is the
    IEEE one): ``|x| <= z`` gives 0.0 (its sign cannot matter in a sum that starts at 0.0)
    and ``|x| >= o`` gives the signed infinity."""
    text = f"{num(w, dialect)} * {x}"
    a = abs(w)
    if dialect != "postgres" or a == 0.0:
        return text
    arms = []
    if a * 5e-324 == 0.0:
        z = _last_true(lambda v: a * v == 0.0, 0.0, sys.float_info.max)
        arms.append(f"WHEN abs({x}) <= {num(z, dialect)} THEN {num(0.0, dialect)}")
    if math.isinf(a * sys.float_info.max):
        o = math.nextafter(_last_true(lambda v: not math.isinf(a * v), 0.0, sys.float_info.max), math.inf)
        inf = math.copysign(math.inf, w)
        arms.append(f"WHEN {x} >= {num(o, dialect)} THEN {num(inf, dialect)} "
                    f"WHEN {x} <= {num(-o, dialect)} THEN {num(-inf, dialect)}")
    return f"CASE {' '.join(arms)} ELSE {text} END" if arms else text
