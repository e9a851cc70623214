"""PostgreSQL (15 measured): NaN sorts above every number and equals itself; ``real`` is
binary32, but its cast raises when a finite value rounds to infinity or a non-zero value
to zero, and ``exp()`` and ``*`` raise "value out of range" where C gives inf or 0.

Limits, measured with this repository's own queries:

- The grammar's stack holds about 2,000 nested CASE levels ("memory exhausted" past 1,999
  in THEN position); ``max_case_depth`` keeps it far below.
- JIT: with ``jit = on`` (the default) a query whose planned cost passes
  ``jit_above_cost`` is compiled node by node before the first row: 0.17 ms a tree node,
  and 1.5-2.1 ms once the cost passes ``jit_optimize_above_cost`` (a 10-tree forest of
  depth 8 on 100k rows: 11 s of compiling for 0.5 s of work). The compiled query runs at
  most 1.6x faster, so it pays back only past millions of rows. No query shape avoids it:
  the cost is per node of every expression, and the planner counts every node. The remedy
  needs no server change: ``SET jit = off`` for the session (the header says so).
"""

from __future__ import annotations

import math
import sys

from rulegen.targets.sql.dialects.base import F32_OVERFLOW, F32_ZERO, Dialect, exp_limits, last_true

JIT_MS_PER_NODE = 2.0  # optimising JIT, measured above
JIT_NOTE_NODES = 500  # below this the JIT costs about a second or less: no advice


class PostgreSQL(Dialect):
    name = "postgres"
    title = "PostgreSQL"
    has_nan = nan_largest = True
    max_case_depth = 400
    fence = "OFFSET 0"  # stops the planner pulling a subquery up into its reader
    # Each nested subquery level makes the planner copy everything below it: 1,000 boosted
    # trees (95k nodes) plan in 1.0 GB with 50 trees a step, 560 MB with 250, 480 MB in one
    trees_per_step = 250
    # A fenced step (a subquery scan) costs about 0.3 us a row with 22 columns; a tree
    # level about 0.06 us (a depth-8 tree, 100k rows, JIT off)
    fence_fixed, fence_per_column = 1.0, 0.2
    float32_type = "real"
    double_type = "double precision"

    def float_literal(self, v: float) -> str:
        # 0.1 and 1e-1 alike read as exact NUMERIC; a string cast parses the digits straight
        # to the nearest double, once, when the query is planned.
        return f"'{v!r}'::float8"

    def infinity(self, positive: bool) -> str:
        return "'Infinity'::float8" if positive else "'-Infinity'::float8"

    def nan(self) -> str:
        return "'NaN'::float8"

    def column_name(self, name: str) -> str:
        """Names of 64 bytes or more are cut to at most 63 (NAMEDATALEN), at a character."""
        data = name.encode("utf-8")
        if len(data) < 64:
            return name
        return data[:63].decode("utf-8", errors="ignore")

    def prefer_nullif(self, guards: float, features: int) -> bool:
        # a guard is an AND and one more comparison, about 25 ns (a depth-8 tree: +20%);
        # NULLIF is one call a feature, about 15 ns, plus the fenced step holding the
        # result, about 300 ns
        return guards * 25 > features * 15 + 300

    def exp(self, x: str) -> str:
        """Column-level: exp() raises on overflow and on underflow to zero."""
        top, bottom = exp_limits()
        x = f"({x})"
        return (f"CASE WHEN {x} > {self.num(top)} THEN {self.num(math.inf)} "
                f"WHEN {x} < {self.num(bottom)} THEN {self.num(0.0)} ELSE exp({x}) END")

    def product(self, w: float, x: str) -> str:
        """Column-level. Inputs whose product with w would underflow to zero or overflow
        are routed first, with bounds found by bisection (Python's float multiply is the
        IEEE one): ``|x| <= z`` gives 0.0 (its sign cannot matter in a sum that starts at
        0.0) and ``|x| >= o`` the signed infinity."""
        text = f"{self.num(w)} * {x}"
        a = abs(w)
        if a == 0.0:
            return text
        arms = []
        if a * 5e-324 == 0.0:
            z = last_true(lambda v: a * v == 0.0, 0.0, sys.float_info.max)
            arms.append(f"WHEN abs({x}) <= {self.num(z)} THEN {self.num(0.0)}")
        if math.isinf(a * sys.float_info.max):
            o = math.nextafter(last_true(lambda v: not math.isinf(a * v), 0.0, sys.float_info.max),
                               math.inf)
            inf = math.copysign(math.inf, w)
            arms.append(f"WHEN {x} >= {self.num(o)} THEN {self.num(inf)} "
                        f"WHEN {x} <= {self.num(-o)} THEN {self.num(-inf)}")
        return f"CASE {' '.join(arms)} ELSE {text} END" if arms else text

    def f32_round(self, x: str) -> str:
        x = f"({x})"
        inf = f"CAST({x} * {self.num(math.inf)} AS real)"
        return (f"CASE WHEN abs({x}) <= {self.num(F32_ZERO)} THEN CAST({x} * {self.num(0.0)} AS real) "
                f"WHEN abs({x}) >= {self.num(F32_OVERFLOW)} THEN {inf} ELSE CAST({x} AS real) END")

    def notes(self, n_nodes: int) -> list[str]:
        if n_nodes < JIT_NOTE_NODES:
            return []
        seconds = n_nodes * JIT_MS_PER_NODE / 1000
        return [f"PostgreSQL's JIT (on by default) compiles each of this query's {n_nodes:,} tree "
                f"nodes before the first row once a table is large (about {seconds:,.0f} s here), "
                "and pays that back only past millions of rows: run SET jit = off; first "
                "(or SET LOCAL jit = off; inside a transaction)."]
