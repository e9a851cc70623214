"""The Java target's tables: every tree of a model as flat node arrays, and the whole set
encoded as printable string literals that the generated class decodes once at class load.

Why strings: a Java method holds at most 64 KB of bytecode and a class 65,535 constants,
and an array initialiser costs several bytes of ``<clinit>`` bytecode per element, so a
model of a few thousand nodes written as array literals would not compile. A string
literal costs one constant and no bytecode per element (up to 65,535 bytes each).

Node arrays (global node id g; a tree's nodes are contiguous, root first):

- ``N[4g .. 4g+3]`` = feature, left, right, missing (one array, so that a step reads one
  cache line for its ints and one for ``THR[g]``). The feature is -1 for a leaf, -2 for a
  split other than a numeric one with a default child;
- leaf: left is the offset of its values in ``V``;
- numeric split: go to left when ``x[feature] <= THR[g]``, to missing when x is NaN, else
  to right (every test is rewritten to ``<=``: see :func:`le_bound`);
- other split: left is the offset of a record in ``P`` (ints; doubles in ``D``):
  ``test, n, child ids..., rule, ...`` where rule 0 is a default child position, 1 a blend
  (offset of its weights in ``D``), 2 surrogates (count, default position, then per
  surrogate its child-if-true and test offset). A test record is ``1 f bound`` (numeric),
  ``2 f n bounds`` (interval), ``3 f n positions... unseen`` (categorical: the child
  position of every code) or ``4 n weights f...`` (oblique, weights then bound in D).
"""

from __future__ import annotations

import math
import struct

import numpy as np

from rulegen.codegen import lower
from rulegen.ir.nodes import (
    Blend,
    CategoricalTest,
    DefaultChild,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    Surrogates,
)

CHUNK = 60000  # characters per string literal (ASCII: one byte each, under 65,535)
NUMERIC, INTERVAL, CATEGORICAL, OBLIQUE = 1, 2, 3, 4


def le_bound(op: str, t: float, dtype: str = "float64") -> float:
    """A bound b with ``x <= b`` in float64 equal to the IR test for every double x (NaN
    fails both). ``x < b`` is ``x <= nextDown(b)``; ``x < -inf`` never holds: b = NaN."""
    op2, b = lower.float64_bound(op, t, dtype)
    if op2 == "<":
        b = math.nan if b == -math.inf else math.nextafter(b, -math.inf)
    return b


class Tables:
    def __init__(self, model: Model):
        self.model = model
        self.ints = {k: [] for k in ("N", "P", "TROOT", "TN", "TOUT", "TBLEND")}
        self.doubles = {k: [] for k in ("THR", "V", "D", "TW", "TVW")}
        for tree in model.trees:
            self._tree(tree)

    def _tree(self, tree) -> None:
        m, I, F = self.model, self.ints, self.doubles
        base = len(I["N"]) // 4
        blend = lower.has_blend(tree)
        I["TROOT"].append(base)
        I["TN"].append(len(tree.nodes))
        I["TOUT"].append(-1 if tree.output is None else tree.output)
        I["TBLEND"].append(int(blend))
        F["TW"].append(tree.weight)
        with np.errstate(over="ignore"):  # a vote weight beyond float32 is inf there, as in the evaluator
            F["TVW"].append(float(np.float32(tree.weight)) if m.dtype == "float32" else tree.weight)
        vote = m.aggregation == "vote"
        for node in tree.nodes:
            thr, right, miss = 0.0, 0, 0
            if isinstance(node, Leaf):
                feat, left = -1, len(F["V"])
                if blend:  # blended: raw values, weighted and accumulated at run time
                    F["V"].extend(node.value)
                elif vote:
                    F["V"].append(float(lower.vote_index(node, tree.weight)))
                else:
                    F["V"].extend(lower.leaf_contribution(m, tree, node))
            elif isinstance(node.test, NumericTest) and isinstance(node.missing, DefaultChild):
                t, kids = node.test, [base + c for c in node.children]
                feat, thr = t.feature, le_bound(t.op, t.threshold, t.dtype)
                left, right, miss = kids[0], kids[1], kids[node.missing.child]
            else:
                feat, left = -2, self._record(node, base)
            I["N"] += [feat, left, right, miss]
            F["THR"].append(thr)

    def _record(self, node, base: int) -> int:
        P = self.ints["P"]
        rule = node.missing
        rec = [self._test(node.test, node.unseen), len(node.children)]
        rec += [base + c for c in node.children]
        if isinstance(rule, DefaultChild):
            rec += [0, rule.child]
        elif isinstance(rule, Blend):
            rec += [1, self._doubles(rule.weights)]
        else:
            assert isinstance(rule, Surrogates)
            rec += [2, len(rule.surrogates), rule.default]
            for s in rule.surrogates:  # a surrogate's unseen category "does not hold": child 1
                rec += [s.child_if_true, self._test(s.test, None)]
        at = len(P)
        P.extend(rec)
        return at

    def _doubles(self, values) -> int:
        D = self.doubles["D"]
        at = len(D)
        D.extend(float(v) for v in values)
        return at

    def _test(self, test, unseen) -> int:
        """Append a test record to P; return its offset."""
        P = self.ints["P"]
        if isinstance(test, NumericTest):
            rec = [NUMERIC, test.feature, self._doubles([le_bound(test.op, test.threshold, test.dtype)])]
        elif isinstance(test, IntervalTest):
            bounds = [le_bound(test.op, b, test.dtype) for b in test.bounds]
            rec = [INTERVAL, test.feature, len(bounds), self._doubles(bounds)]
        elif isinstance(test, (CategoricalTest, MultiwayTest)):
            n = len(self.model.features[test.feature].categories)
            if isinstance(test, CategoricalTest):
                pos = [0 if c in test.categories else 1 for c in range(n)]
                other = 1 if unseen is None else unseen
            else:  # listed codes no group holds go where unseen ones go
                pos = [unseen] * n
                for k, group in enumerate(test.groups):
                    for c in group:
                        pos[c] = k
                other = unseen
            rec = [CATEGORICAL, test.feature, n, *pos, other]
        else:  # oblique: the sum runs in float64, so only "<" needs rewriting
            at = self._doubles([*test.weights, le_bound(test.op, test.threshold)])
            rec = [OBLIQUE, len(test.features), at, *test.features]
        at = len(P)
        P.extend(rec)
        return at


# --- the string encoding ------------------------------------------------------------------
# A stream of unsigned varints, 5 bits per character plus a continuation bit: 64 symbols,
# printable ASCII from '#' with the backslash skipped (so no escape can form, not even \u).
# Ints are zigzagged; doubles are their IEEE bits byte-reversed, so that round values (few
# significant bits, many trailing zero bits) take few characters.


def _char(d: int) -> str:
    c = 35 + d
    return chr(c + 1 if c >= 92 else c)


_DIGITS = [_char(d) for d in range(64)]


def _varint(v: int, out: list[str]) -> None:
    while v >= 32:
        out.append(_DIGITS[32 | (v & 31)])
        v >>= 5
    out.append(_DIGITS[v])


def _int(n: int, out: list[str]) -> None:
    _varint(2 * n if n >= 0 else -2 * n - 1, out)


def _double(v: float, out: list[str]) -> None:
    _varint(int.from_bytes(struct.pack("<d", v), "big"), out)


def encode(sections: list[tuple[str, list]]) -> list[str]:
    """("i", ints) / ("d", doubles) / ("s", strings) sections, each length-prefixed, as
    string literal contents of at most CHUNK characters. Strings travel as UTF-16 code
    units, so no user text ever appears in a literal."""
    out: list[str] = []
    for kind, values in sections:
        _int(len(values), out)
        for v in values:
            if kind == "i":
                _int(int(v), out)
            elif kind == "d":
                _double(float(v), out)
            else:
                units = str(v).encode("utf-16-le", "surrogatepass")
                _int(len(units) // 2, out)
                for j in range(0, len(units), 2):
                    _int(units[j] | units[j + 1] << 8, out)
    text = "".join(out)
    return [text[i:i + CHUNK] for i in range(0, len(text), CHUNK)] or [""]
