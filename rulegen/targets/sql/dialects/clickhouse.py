"""ClickHouse (26.9 measured, in process through chDB 4.4).

Types and literals:

- ``1.5``, ``0.1``, ``1e10`` and ``-0.0`` are Float64 literals (``1`` is UInt8); the shortest
  round-trip decimal (Python's repr) reads back as exactly the same double: 50,000 doubles
  checked, random bit patterns over every exponent plus 5e-324, 1.7976931348623157e308 and
  the smallest normal. ``-0.0`` keeps its sign, ``inf`` and ``nan`` are Float64 literals, and
  ``1e400`` is a syntax error (never written: infinities are ``inf``).
- Comparisons with NaN are IEEE's: ``nan > 1``, ``nan <= inf`` and ``nan = nan`` are all
  false, so NaN falls through every comparison to the ELSE like NULL, and ``x <= inf`` is
  the presence test; ``at_least`` needs no guard. ``NULLIF(x, nan)`` keeps NaN (it tests
  ``=``), so NaN is read as NULL with ``isNaN``. ``x IN (1, nan)`` is true for NaN (a set
  lookup): never written for numbers. ``greatest`` ignores NULL and, with NaN, returns its
  last argument when the comparison fails (``greatest(nan, 1) = 1``, ``greatest(1, nan) =
  nan``): the softmax maximum guards it.
- Double-quoted identifiers and single-quoted strings both take backslash escapes, so a
  backslash is doubled and the quote escaped with one. Names are case-sensitive and kept
  whole (5,000 bytes, newlines, quotes and unicode come back unchanged). Comments nest:
  ``/*`` inside one opens another (sql_comment breaks both markers).
- ``CAST(x AS Float32)`` is IEEE binary32 rounding, ties to even, subnormals included,
  overflow to +-inf, NaN kept; Float32 + Float32 is computed and typed as Float64 (exact),
  so a CAST of the sum is the float32 sum. ``/`` is always Float64 (``1/0 = inf``,
  ``0/0 = nan``, no error); ``intDiv`` is never written.
- ``exp`` is ClickHouse's own vectorised routine, not the C library's: on 401,019 inputs
  (uniform over [-745, 710] and N(0, 25)) it differs from glibc 2.36's exp on 372, each by
  one ulp, about 1 in 1,100 (ClickHouse's is the correctly rounded one at 366 of them). It
  is a function of x alone (the same in any row or block position), overflows to inf and
  underflows to 0 at the same inputs as the C library's, and never raises. The header says
  so when a query computes exp (EXP_NOTE).

Limits:

- ``max_ast_depth`` (1000) is checked while parsing, before a query's SETTINGS apply: 496
  CASE levels nest, in THEN or ELSE; a sum of 50 float32 trees (a CAST per addition) leaves
  395 to each tree. ``max_case_depth`` keeps a margin under that for surrogate conditions.
- ``max_query_size`` (262,144 bytes) and ``max_ast_elements`` (50,000; generated queries
  have 0.07 to 0.16 elements a byte) stop big models. A SETTINGS clause at the end of the
  query raises them (clickhouse-local, as in chDB, reads it before parsing), so big queries
  end with one and the header says what to do when the query is embedded in another.
- ``max_subquery_depth`` (100): each WITH step is a subquery of the next, so a query of 90
  steps or more raises it in the same clause (6,000 one-split trees, 120 steps: exact, 9 s).
- Analysis takes about 0.25 ms a tree node (a 1,000-tree ensemble, 40k nodes: 10 s). Merging
  the steps' expressions afterwards (``query_plan_merge_expressions``) grows with the number
  of steps times their size (27 to 66 s more there); big queries turn it off.
- CTEs are inlined once per reference, and an expression read several times is computed once
  (the expression DAG shares it): steps need no fence.
- A nested CASE costs every node for every row, not the depth of a path: a complete tree of
  depth 8 (511 nodes) takes as long as a chain of 255 splits, 20 times a chain of 8, both
  interpreted and compiled; a hand-written nested CASE is no different (bench_clickhouse.py).
- ClickHouse compiles an expression to native code (LLVM) the 4th time it runs it
  (``compile_expressions``, ``min_count_to_compile_expression = 3``): 40 s for 200 boosted
  trees of depth 6 (23,694 nodes, 1.7 ms a node; a hand-written single expression of the same
  trees: 311 s), 4 s for a 10-tree forest of depth 8, a minute for a 2,500-deep chain. Compiled,
  those run 3.4 to 5 times faster (1M rows, one thread: 52 -> 11.6 us a row; 10.6 -> 2.1; a
  depth-8 tree 0.90 -> 0.26). The compiled code gives the same bits (tests/test_clickhouse.py);
  the header of a big query says what this costs and how to choose.
- A correlated scalar subquery is turned into a join on the outer row's columns, and a NULL
  there never matches, so the subquery gives NULL for such rows (``(SELECT coalesce(x, 7))``
  is NULL where x is NULL; ClickHouse issue #112576): the expressions-only form is refused.
"""

from __future__ import annotations

from rulegen.targets.sql.dialects.base import Dialect

SETTINGS_ABOVE = 192 * 1024  # bytes: max_query_size is 256 KiB, and AST elements < 0.25 a byte
STEPS_ABOVE = 90  # max_subquery_depth is 100
COMPILE_MS_PER_NODE = 1.7  # LLVM, measured below
COMPILE_NOTE_NODES = 2_000  # below this compiling takes a couple of seconds: no advice
EXP_NOTE = ("ClickHouse's exp is its own, not the C library's: it differs from glibc's by one ulp "
            "on about 1 input in 1,100 (measured), so a probability can be one ulp from what the "
            "C and Python targets give")


class ClickHouse(Dialect):
    name = "clickhouse"
    title = "ClickHouse"
    has_nan = True
    nan_largest = False
    max_case_depth = 300
    trees_per_step = 50
    float32_type = "Float32"
    double_type = "Float64"
    no_correlated_subqueries = (
        "ClickHouse runs a correlated subquery as a join on the outer row's columns, and rows "
        "with a NULL there get NULL (ClickHouse issue #112576); select the full query's "
        "outputs with passthrough=[<key>] and join them on the key instead")
    exp_note = EXP_NOTE

    def float_literal(self, v: float) -> str:
        text = repr(v)  # always has "." or "e": Float64
        return f"({text})" if text.startswith("-") else text

    def infinity(self, positive: bool) -> str:
        return "inf" if positive else "(-inf)"

    def nan(self) -> str:
        return "nan"

    def label(self, v) -> str:
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        return "'" + _escape(str(v), "'") + "'"

    def quote(self, name: str) -> str:
        return '"' + _escape(name, '"') + '"'

    def not_nan(self, col: str) -> str:
        return f"if(isNaN({col}), NULL, {col})"

    def at_least(self, col: str, bound: float) -> str:
        return f"{col} >= {self.num(bound)}"  # false for NaN already

    def greatest(self, items: list[str]) -> str:
        """Column-level: NaN in any argument gives NaN, as the evaluator's maximum."""
        if len(items) == 1:
            return items[0]
        nan = " OR ".join(f"isNaN({x})" for x in items)
        return f"if({nan}, {self.nan()}, greatest({', '.join(items)}))"

    def f32_round(self, x: str) -> str:
        return f"CAST({x} AS Float32)"

    def notes(self, n_nodes: int) -> list[str]:
        if n_nodes < COMPILE_NOTE_NODES:
            return []
        return [f"ClickHouse compiles an expression to native code the 4th time it runs it "
                f"(compile_expressions, min_count_to_compile_expression = 3): that run takes about "
                f"{n_nodes * COMPILE_MS_PER_NODE / 1000:,.0f} s more for this query's {n_nodes:,} tree "
                "nodes, and each later one runs several times faster (same results). SET "
                "min_count_to_compile_expression = 0; compiles on the first run, SET "
                "compile_expressions = 0; never."]

    def settings(self, size: int, steps: int) -> str:
        if size <= SETTINGS_ABOVE and steps < STEPS_ABOVE:
            return ""
        n = (size + (64 << 10) + (1 << 20) - 1) >> 20 << 20  # whole MiB, with room
        text = (f"SETTINGS max_query_size = {n}, max_ast_elements = {max(n, 50_000)}, "
                f"max_expanded_ast_elements = {max(n, 500_000)}, query_plan_merge_expressions = 0")
        if steps >= STEPS_ABOVE:  # each step is a subquery of the next
            text += f", max_subquery_depth = {steps + 100}"
        return text

    def settings_notes(self, settings: str) -> list[str]:
        return [f"this query is too big for ClickHouse's default limits and ends with {settings}, "
                "which ClickHouse reads before parsing. Inside another query, move that clause to "
                "the end of the outer query, or SET each of those settings for the session first."]


def _escape(text: str, quote: str) -> str:
    """Backslash starts an escape in ClickHouse's quoted names and strings alike."""
    if "\x00" in text:
        raise ValueError("names and strings cannot contain NUL")
    return text.replace("\\", "\\\\").replace(quote, "\\" + quote)
