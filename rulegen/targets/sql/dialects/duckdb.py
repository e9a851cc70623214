"""DuckDB (2.0 measured): NaN sorts above every number and equals itself; ``FLOAT`` is
IEEE binary32, and ``CAST(double AS FLOAT)`` rounds to nearest, ties to even, subnormals
included, but *raises* for finite values that round to infinity.

Limits, measured with this repository's own queries:

- ``max_expression_depth`` is 1000: 992 CASE levels nest, in THEN or ELSE. The bound
  leaves room for the accumulation chain and the conditions.
- A projection of many nested CASEs slows down with its size (500 boosted trees of depth
  6, 100k rows, one thread: 110 us/row with 5 trees per step, 200 with 50, 300 with 100);
  DuckDB never copies expressions between projections, so steps need no fence.
- Planning grows with the query's size, about 0.17 ms a tree node (500 boosted trees of
  depth 6, 31.5k nodes, 2.5 MB: 1.4 s parsing, 0.5 s binding, 2.8 s optimising, of which
  1.5 s is the common-subexpression pass, which finds nothing to share between trees).
  ``SET disabled_optimizers = 'common_subexpressions'`` takes the first row from 5.5 s to
  3.9 s and the run from 136 to 120 us/row there; the header says so for big queries.
"""

from __future__ import annotations

from rulegen.targets.sql.dialects.base import F32_OVERFLOW, Dialect

PLAN_MS_PER_NODE = 0.17  # measured above
CSE_NOTE_NODES = 5_000  # below this planning takes under a second: no advice


class DuckDB(Dialect):
    name = "duckdb"
    title = "DuckDB"
    has_nan = nan_largest = True
    max_case_depth = 400
    trees_per_step = 5
    float32_type = "FLOAT"

    def float_literal(self, v: float) -> str:
        # DuckDB reads 0.1 as an exact DECIMAL but any literal with an exponent as a DOUBLE,
        # parsed to the nearest double (which Python's repr guarantees round-trips).
        text = repr(v)
        if "e" not in text:
            text += "e0"
        return f"({text})" if text.startswith("-") else text

    def infinity(self, positive: bool) -> str:
        return "'inf'::DOUBLE" if positive else "'-inf'::DOUBLE"

    def at_least(self, col: str, bound: float) -> str:
        # one BETWEEN is one vectorised pass; "x >= a AND x <= inf" splits the selection
        # twice (a depth-8 tree: 0-5% over a bare comparison, against 25% for the AND)
        return f"{col} BETWEEN {self.num(bound)} AND {self.num(float('inf'))}"

    def nan(self) -> str:
        return "'NaN'::DOUBLE"

    def notes(self, n_nodes: int) -> list[str]:
        if n_nodes < CSE_NOTE_NODES:
            return []
        return [f"DuckDB plans this query's {n_nodes:,} tree nodes in about "
                f"{n_nodes * PLAN_MS_PER_NODE / 1000:,.0f} s, a third of it looking for common "
                "subexpressions that trees do not share: run SET disabled_optimizers = "
                "'common_subexpressions'; first (RESET disabled_optimizers; after) to plan "
                "faster and run about 10% faster."]

    def f32_round(self, x: str) -> str:
        x = f"({x})"
        inf = f"CAST({x} * {self.num(float('inf'))} AS FLOAT)"
        return f"CASE WHEN abs({x}) >= {self.num(F32_OVERFLOW)} THEN {inf} ELSE CAST({x} AS FLOAT) END"
