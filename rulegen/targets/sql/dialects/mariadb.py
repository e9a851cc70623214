"""MariaDB (10.11 measured; MySQL untested): no NaN, no infinity, and arithmetic that raises
where IEEE would overflow.

Numbers, measured in the server:

- ``DOUBLE`` holds no NaN and no infinity (a client sending NaN or inf gets an error), and a
  column stores -0.0 as 0.0; there is no way to write either in a query. Missing is NULL
  only. ``1e308 * 10``, ``1e308 + 1e308`` and ``exp(710)`` raise "DOUBLE value is out of
  range"; underflow gives 0 (or a subnormal) silently; ``1e0 / 0e0`` is NULL with a warning.
  So the query must never produce an infinity: the sums a model can reach are bounded first
  (query.py) and a model whose scores, exp or float32 rounding could overflow is refused;
  oblique sums, whose inputs are unbounded, track overflow explicitly (overflow.py).
- A literal with an exponent (``1e-1``) is a DOUBLE parsed to the nearest double: 6,000
  random values and bit patterns, 5e-324 and 1.7976931348623157e308 read back exactly;
  ``0.1`` without one is an exact DECIMAL. ``-0e0`` is -0.0 inside an expression
  (``atan2(-0e0, -1e0)`` is -pi) but prints as ``0``. Doubles print as their shortest
  round-trip decimal, so the text protocol loses nothing.
- ``CAST(x AS FLOAT)`` rounds to binary32, to nearest, ties to even, subnormals included (the
  33,786 cases of tests/test_target_sql.py), but *saturates* at FLT_MAX where binary32
  overflows. The query keeps every rounded value below overflow (query.py), so it rounds
  with the cast alone. A FLOAT result prints with 6 digits: outputs are cast to DOUBLE.
- ``exp`` is the C library's (100,000 values identical to Python's math.exp).
- ``greatest`` is NULL when any argument is NULL; the accumulators it reads never are.

Text and names:

- Identifiers are quoted with backticks (a backtick doubled); without ANSI_QUOTES a double
  quote starts a string. A column name has at most 64 characters, of the Basic
  Multilingual Plane, not ending in a space; column names compare without case. A result
  column's name is cut to 255 bytes at a character.
- A string's backslash is an escape unless sql_mode has NO_BACKSLASH_ESCAPES, so a label
  holding one is written in hex (``_utf8mb4 X'..'``), which reads the same in every mode.
  Comparisons take the collation of the literal, ``utf8mb4_nopad_bin``: case, accents and
  trailing spaces count whatever the column's collation (the server default
  ``utf8mb4_general_ci`` finds ``'A' = 'a'``, ``'É' = 'e'`` and ``'a ' = 'a'``).

Limits:

- The parser recurses per CASE level and checks its stack: with the default 292 KiB
  ``thread_stack`` a chain of 551 CASE levels runs (547 with surrogate conditions) and one more
  fails with "Thread stack overrun". ``max_case_depth`` keeps a wide margin for the sums,
  casts and parentheses around a tree (the inlined expressions-only form nests 100 trees' sum
  around one).
- A CTE referenced once is merged into its reader, and a merged column is recomputed at every
  reference (a step read twice: 0.5 -> 1.0 us/row); a LIMIT keeps the step a materialised
  temporary table (the fence). One WITH holds at most 64 steps ("Too many WITH elements");
  longer chains nest as derived tables (templates/sql/group.j2).
- A subquery cannot read the outer row inside a WITH or a derived table ("Unknown column"),
  so the expressions-only form inlines its steps into one expression (inline.py).
- MySQL is not tested: it has no ``utf8mb4_nopad_bin`` (the query then fails, loudly).
"""

from __future__ import annotations

from rulegen.errors import UnsupportedFeatureError
from rulegen.targets.sql.dialects.base import Dialect

MAX_COLUMN_CHARS = 64
RESULT_NAME_BYTES = 255
COLLATE = "COLLATE utf8mb4_nopad_bin"


class MariaDB(Dialect):
    name = "mariadb"
    title = "MariaDB / MySQL"
    has_infinity = False
    correlated_steps = False
    max_inline_trees = 100  # measured in inline.py
    max_with_steps = 64  # "Too many WITH elements in WITH clause" past 64
    max_case_depth = 150
    fence = "LIMIT 18446744073709551615"
    # A fenced step costs about 140 ns a row plus 80 per column it passes on; a tree level
    # about 50 ns (100k rows of 20 FLOAT columns, whose scan alone costs 570 ns a row)
    fence_fixed, fence_per_column = 3.0, 1.6
    # Every accumulation step is materialised, so its expression is run over all rows before
    # the next: small steps stay in cache (200 boosted trees of depth 6, 20k rows: 120-165
    # us/row with 10 to 30 trees a step, 200-230 with 50, 460 in one step)
    trees_per_step = 20
    float32_type = "FLOAT"

    def float_literal(self, v: float) -> str:
        text = repr(v)
        if "e" not in text:
            text += "e0"  # without an exponent MariaDB reads an exact DECIMAL
        return f"({text})" if text.startswith("-") else text

    def infinity(self, positive: bool) -> str:
        raise UnsupportedFeatureError(
            "sql", f"{'+' if positive else '-'}infinity in dialect 'mariadb' (MariaDB has no "
                   "infinity: its DOUBLE cannot hold one and its arithmetic raises instead)")

    def quote(self, name: str) -> str:
        if "\x00" in name:
            raise ValueError("identifiers cannot contain NUL")
        return "`" + name.replace("`", "``") + "`"

    def label(self, v) -> str:
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        text = str(v)
        if "\x00" in text:
            raise ValueError("strings cannot contain NUL")
        if "\\" in text:  # read the same with and without NO_BACKSLASH_ESCAPES
            return f"_utf8mb4 X'{text.encode('utf-8').hex().upper()}' {COLLATE}"
        return "_utf8mb4'" + text.replace("'", "''") + f"' {COLLATE}"

    def column_name(self, name: str) -> str:
        data = name.encode("utf-8")
        if len(data) <= RESULT_NAME_BYTES:
            return name
        return data[:RESULT_NAME_BYTES].decode("utf-8", errors="ignore")

    def column_problem(self, name: str) -> str | None:
        if len(name) > MAX_COLUMN_CHARS:
            return f"longer than {MAX_COLUMN_CHARS} characters"
        if name.endswith(" "):
            return "ending in a space"
        if any(ord(ch) > 0xFFFF for ch in name):
            return "holding a character beyond U+FFFF"
        return None

    def exp(self, x: str) -> str:
        """exp(x); raises where C gives inf, so the query only passes x it has bounded."""
        return f"exp({x})"

    def f32_round(self, x: str) -> str:
        """Exact below float32 overflow, which the query rules out (the cast saturates)."""
        return f"CAST({x} AS FLOAT)"

    def notes(self, n_nodes: int) -> list[str]:
        return ["MariaDB has no NaN or infinity: a model whose scores could overflow is refused "
                "at generation; -0.0 comes back as 0",
                "labels compare with COLLATE utf8mb4_nopad_bin (case, accents and trailing spaces "
                "count) whatever the columns' collation; send the query as UTF-8 "
                "(SET NAMES utf8mb4)"]
