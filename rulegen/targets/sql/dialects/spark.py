"""Spark SQL (4.x measured, local mode; the same SQL runs on a cluster): NaN sorts above every
number and equals itself; ``FLOAT`` is IEEE binary32 with Java's casts (round to nearest,
ties to even, subnormals kept, overflow to infinity, also under ANSI mode).

Traps, each measured in a local SparkSession:

- A literal like ``1.5`` is a DECIMAL; ``1.5D`` (or any literal with a ``D`` suffix) is a
  DOUBLE, parsed by Java's ``Double.parseDouble`` (correctly rounded).
- Double quotes delimit strings, not names: names are quoted with backticks. Backslash is an
  escape character inside string literals, so labels escape it.
- ANSI mode (on by default in Spark 4) raises on division by zero; the query divides only by
  constants and by sums that are at least 1.
- ``exp`` is Java's ``StrictMath.exp`` (fdlibm), not the C library's: it differs from glibc's
  on about 8% of arguments, by one ulp (500,000 arguments in [-700, 700]: 39,654 differ), so a
  model whose link computes ``exp`` in an ensemble can be one ulp away; the header says so.
- The parser (ANTLR) takes time exponential in the depth of CASEs nested alternately in
  THEN and ELSE, as a tree's CASE is, once a query sits in a WITH and the parser's shared
  cache has seen similar queries: 60 such levels took 47 s, 100 did not finish in 100 s, and
  a 2,500-deep chain in 200-level steps hung the test session for 25 minutes. A CASE nested in a
  THEN in parentheses takes it back to linear (140 levels: 0.3 s), so ``parenthesize_then``;
  with them the parser's stack holds 250 levels and fails at 300 ("too complex to parse"),
  and ``max_case_depth`` keeps a margin for a cluster driver's smaller thread stack.
- The analyzer resolves a chain of WITH steps in at most 100 iterations
  (``spark.sql.analyzer.maxIterations``): a 2,500-deep tree in 40-level steps hit it, in
  100-level steps it runs.
- The optimiser merges a step into the next (CollapseProject) when the next reads each of
  its columns once, so 1,000 trees summed over 50 steps became one expression 1,000 additions
  deep, and code generation overflowed the driver's stack. It never inlines an expression
  that is not deterministic, so a fenced step's columns are wrapped in a CASE whose condition
  is always true but not deterministic: ``rand() * 0.0D = 0.0D`` (rand() is finite). Simpler
  forms do not hold: ``rand() < 2.0D`` is proved true and removed (OptimizeRand), and a WHERE
  clause is pushed below the projections. It costs one random number a row and fenced column.
  Steps that would compute an expensive column twice need no fence (CollapseProject does not
  copy expensive expressions), hence the high fence cost: only accumulation steps, which
  force it, are fenced.
"""

from __future__ import annotations

from rulegen.targets.sql.dialects.base import Dialect


class Spark(Dialect):
    name = "spark"
    title = "Spark SQL"
    has_nan = nan_largest = True
    max_case_depth = 100
    parenthesize_then = True
    trees_per_step = 20
    float32_type = "FLOAT"
    fence_wrap = "CASE WHEN rand() * 0.0D = 0.0D THEN {} END"
    fence_fixed, fence_per_column = 1e9, 0.0  # only the accumulation steps, which force it
    exp_note = ("Spark's exp is Java's StrictMath.exp, which differs from the C library's exp "
                "(the reference) on about 8% of arguments by one ulp, so this link's outputs can "
                "be one ulp away from rulegen's evaluator and from the library that trained the model")

    def prefer_nullif(self, guards: float, features: int) -> bool:
        # Parsing, analysis and Java code generation grow with a Spark query's text (a
        # 20-tree forest: 13-40 s before the first row), so the shorter text wins: NULLIF
        # once a row instead of a second comparison per guarded node (that forest: 855 KB
        # to 729 KB of SQL; its first run 6-17 s instead of 8-26 s).
        return guards > 0

    def float_literal(self, v: float) -> str:
        text = repr(v) + "D"
        return f"({text})" if text.startswith("-") else text

    def infinity(self, positive: bool) -> str:
        return "CAST('Infinity' AS DOUBLE)" if positive else "CAST('-Infinity' AS DOUBLE)"

    def nan(self) -> str:
        return "CAST('NaN' AS DOUBLE)"

    def quote(self, name: str) -> str:
        if "\x00" in name:
            raise ValueError("identifiers cannot contain NUL")
        return "`" + name.replace("`", "``") + "`"

    def label(self, v) -> str:
        if isinstance(v, str):
            if "\x00" in v:
                raise ValueError("strings cannot contain NUL")
            return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return super().label(v)

    def f32_round(self, x: str) -> str:
        return f"CAST({x} AS FLOAT)"
