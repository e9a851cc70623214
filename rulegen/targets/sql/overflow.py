"""Oblique sums in an engine without infinity (MariaDB), with IEEE's overflow kept exactly.

The evaluator sums ``s = ((0.0 + w0*x0) + w1*x1) + ...`` in doubles: a product or a partial
sum may overflow to +-inf, inf - inf is NaN, and NaN compares false. MariaDB raises an error
instead of overflowing, so each term the sum could overflow at gets a step of two columns:
the partial sum while it is finite (NULL once it is not), and its state (NULL: finite; 1 or
-1: +inf or -inf; 0: NaN). The engine stores no infinity, so every input is finite, and

- ``w * x`` overflows exactly when ``|x| >= o(w)``, a bound found by bisection (Python's
  float multiply is the IEEE one), with the sign of ``w * x``;
- ``a + b`` of finite doubles overflows exactly when ``|a*0.5 + b*0.5| >= 2**1023``: halving
  commutes with rounding except for tiny operands, which cannot bring a sum near overflow.

Terms are written plainly while the weights so far cannot reach overflow (sum of ``|w|``
below 1 with a margin): most obliques need no step at all.
"""

from __future__ import annotations

import math
import sys

from rulegen.ir.nodes import ObliqueTest
from rulegen.targets.sql.dialects.base import Dialect, last_true
from rulegen.targets.sql.plan import Col, Step

HALF_OVERFLOW = 2.0**1023
SAFE_WEIGHT = 1.0 - 2.0**-40  # |sum| <= sum |w| * DBL_MAX, rounding included, stays finite


def _overflow_bound(w: float) -> float | None:
    """The least x >= 0 with w * x infinite, or None when no finite x gets there."""
    a = abs(w)
    if not math.isinf(a * sys.float_info.max):
        return None
    return math.nextafter(last_true(lambda v: not math.isinf(a * v), 0.0, sys.float_info.max), math.inf)


def _holds(v: float, op: str, t: float) -> bool:
    return v < t if op == "<" else v <= t


def tracked(tests: list[tuple[str, ObliqueTest, list[str], frozenset]], d: Dialect, name) -> list[Step]:
    """Steps computing each oblique test's column (0 holds, 1 does not, NULL if an input is
    missing). ``tests``: (output column, test, quoted input columns, unquoted input names);
    ``name(s)`` makes an internal column name."""
    q, num = d.quote, d.num
    terms: dict[int, list[Col]] = {}
    finals = []
    for j, (out, t, cols, refs) in enumerate(tests):
        value, state = num(0.0), None  # SQL of the partial sum and its state column
        v_refs, total = frozenset(), 0.0
        for i, (col, w) in enumerate(zip(cols, t.weights)):
            total += abs(w)
            product = d.product(w, col)
            if state is None and total < SAFE_WEIGHT:
                value = f"({value} + {product})"
                continue
            o = _overflow_bound(w)
            big = f"abs({col}) >= {num(o)}" if o is not None else None
            small = f"abs({col}) < {num(o)}" if o is not None else None  # no NOT: HIGH_NOT_PRECEDENCE
            sign = f"sign({col}) * {1 if w > 0 else -1}"
            half = f"{value} * {num(0.5)} + {product} * {num(0.5)}"
            arms = []
            if state is not None:  # +-inf stays, unless the opposite infinity makes NaN
                keep = f"CASE WHEN {big} AND {sign} = -{state} THEN 0 ELSE {state} END" if big else state
                arms.append(f"WHEN {state} IS NOT NULL THEN {keep}")
            if big:
                arms.append(f"WHEN {big} THEN {sign}")
            arms.append(f"WHEN abs({half}) >= {num(HALF_OVERFLOW)} THEN sign({half})")
            finite = " AND ".join(([f"{state} IS NULL"] if state else []) + ([small] if small else [])
                                  + [f"abs({half}) < {num(HALF_OVERFLOW)}"])
            v_name, k_name = name(f"o{j}v{i}"), name(f"o{j}k{i}")
            step_refs = refs | v_refs
            terms.setdefault(i, []).extend([
                Col(v_name, f"CASE WHEN {finite} THEN {value} + {product} END", step_refs),
                Col(k_name, f"CASE {' '.join(arms)} END", step_refs)])
            value, state = q(v_name), q(k_name)
            v_refs = frozenset({v_name, k_name})
        present = " AND ".join(f"{c} IS NOT NULL" for c in dict.fromkeys(cols))
        if math.isinf(t.threshold):
            finite_arm = "0" if _holds(0.0, t.op, t.threshold) else "1"
        else:
            finite_arm = f"CASE WHEN {value} {t.op} {num(t.threshold)} THEN 0 ELSE 1 END"
        body = finite_arm
        if state is not None:
            pos = "0" if _holds(math.inf, t.op, t.threshold) else "1"
            neg = "0" if _holds(-math.inf, t.op, t.threshold) else "1"
            body = (f"CASE WHEN {state} IS NULL THEN {finite_arm} WHEN {state} = 1 THEN {pos} "
                    f"WHEN {state} = -1 THEN {neg} ELSE 1 END")
        finals.append(Col(out, f"CASE WHEN {present} THEN {body} END", refs | v_refs))
    steps = [Step(f"oblique sums, term {i + 1}: value while finite, state (1 / -1: +-inf, 0: NaN)",
                  terms[i]) for i in sorted(terms)]
    return steps + [Step("oblique tests: 0 holds, 1 does not, NULL if an input is missing", finals)]
