"""The Rust target's node tables: every tree of a model as flat constant arrays.

Every split and leaf becomes one row of the ``N*`` arrays (trees one after another, node ids
kept, so a tree's rows are in node-id order: what a blended tree's forward pass needs). One
small walker in the template descends them. A row's kind says how it routes:

- ``K_LEAF``: ``NF`` is the payload: an offset into ``LV`` (contributions in the accumulation
  type, tree weight folded in), the class it votes for, or an offset into ``BV`` (a blended
  tree's raw leaf values).
- ``K_LT`` / ``K_LE``: a numeric split with a default child, the common case inlined in the
  walker: ``x[NF] < NV`` (or ``<=``, after :func:`rulegen.codegen.lower.float64_bound`) goes to
  position 0, another number to 1, NaN to ``NM``.
- ``K_TEST``: anything else; ``NF`` is a test id in the ``T*`` arrays (which also hold the
  surrogates' tests). ``NM`` is the missing rule: ``>= 0`` a child position, ``-1`` a blend
  (weights ``BW[NA..NA+NN]``), ``<= -2`` surrogates ``NA..NA+NN`` then child ``-2 - NM``.
  ``NU`` is the child position for an unseen category.

Children of a split are ``CH[NC + position]``. Nothing here recurses.

**Fast rows.** A tree whose splits are all numeric with a default child (XGBoost, LightGBM
and scikit-learn numeric trees) is written instead as 16-byte rows ``R(t, slot, c)`` of ``FR``,
laid out as the C target's table form lays them out (:mod:`rulegen.targets.c.table`): every
test becomes ``xx[slot] <= t`` where ``xx`` is ``[0.0, x..., -x...]``, a true test goes to row
``c`` and a false one or NaN to ``c + 1``, so a step has no branch. A leaf row steps to itself
(``slot`` 0, ``c`` = its row, or one less when ``!(0.0 <= t)``) and holds its payload in ``t``,
so ``CHAINS`` trees descend together for as many steps as the deepest of them. ``SG`` lists
the segments in tree order: a run of up to ``CHAINS`` fast trees, or one tree of node rows.
"""

from __future__ import annotations

import numpy as np

from rulegen.codegen import lower
from rulegen.errors import UnsupportedFeatureError
from rulegen.ir.nodes import (
    Blend,
    CategoricalTest,
    DefaultChild,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    Split,
)
from rulegen.targets.c import table as c_table

K_LEAF, K_LT, K_LE, K_TEST = 0, 1, 2, 3
# test kinds (T_K)
T_LT, T_LE, T_CAT, T_INTERVAL, T_OBL_LT, T_OBL_LE = 1, 2, 3, 4, 5, 6
# tree kinds (R_K): how a tree's leaf reaches the accumulator
R_SCALAR, R_VECTOR, R_VOTE, R_BLEND = 0, 1, 2, 3
UNSEEN = 65535  # a code no group takes, in CM
# Fast trees descended together. rustc 1.95 -O, big_ensemble(1000): see docs/targets/rust.md.
CHAINS = 8


def is_fast(tree) -> bool:
    """Whether a tree can be written as fast rows: numeric splits with a default child only."""
    return all(isinstance(n, Leaf) or (isinstance(n.test, NumericTest) and isinstance(n.missing, DefaultChild))
               for n in tree.nodes)


class Tables:
    """Every array the template writes, as Python lists (floats stay floats)."""

    def __init__(self, model: Model):
        self.model = model
        self.f32 = model.dtype == "float32"
        names = ["NK", "NF", "NV", "NC", "NM", "NU", "NA", "NN", "CH", "TK", "TF", "TT", "TA", "TN",
                 "CM", "IB", "IL", "OF", "OW", "ST", "SC", "BW", "LV", "BV", "RK", "RR", "RE", "RS",
                 "RW", "RV", "FR", "SG_FIRST", "SG_COUNT", "SG_STEPS"]
        self.a: dict[str, list] = {n: [] for n in names}
        self.a["FR"].append((0.0, 0, 0))  # row 0 steps to itself: idle chains wait there
        self._tests: dict = {}
        self._lv: dict = {}
        for i, tree in enumerate(model.trees):
            self._tree(i, tree)
        sg = self.a
        for i, tree in enumerate(model.trees):
            fast = is_fast(tree) and self.a["RK"][i] != R_BLEND
            run = (fast and sg["SG_FIRST"] and sg["SG_COUNT"][-1]
                   and 0 < sg["SG_COUNT"][-1] < CHAINS)
            if run:
                sg["SG_COUNT"][-1] += 1
                sg["SG_STEPS"][-1] = max(sg["SG_STEPS"][-1], lower.depth(tree))
            else:
                sg["SG_FIRST"].append(i)
                sg["SG_COUNT"].append(1 if fast else 0)
                sg["SG_STEPS"].append(lower.depth(tree) if fast else 0)

    def _acc(self, v: float) -> float:
        return float(np.float32(v)) if self.f32 else float(v)

    def _test(self, test) -> int:
        """The id of a test in the T* arrays (equal tests share one)."""
        key = repr(test)  # not the test itself: 0.0 == -0.0 would merge two weights
        if key in self._tests:
            return self._tests[key]
        a = self.a
        tid = self._tests[key] = len(a["TK"])
        if isinstance(test, NumericTest):
            op, b = lower.float64_bound(test.op, test.threshold, test.dtype)
            row = (T_LT if op == "<" else T_LE, test.feature, b, 0, 0)
        elif isinstance(test, (CategoricalTest, MultiwayTest)):
            n = len(self.model.features[test.feature].categories)
            if isinstance(test, CategoricalTest):
                where = [0 if c in set(test.categories) else 1 for c in range(n)]
            else:
                where = [UNSEEN] * n
                for g, group in enumerate(test.groups):
                    for c in group:
                        where[c] = g
            row = (T_CAT, test.feature, 0.0, len(a["CM"]), n)
            a["CM"].extend(where)
        elif isinstance(test, IntervalTest):
            pairs = [lower.float64_bound(test.op, b, test.dtype) for b in test.bounds]
            row = (T_INTERVAL, test.feature, 0.0, len(a["IB"]), len(pairs))
            a["IB"].extend(b for _op, b in pairs)
            a["IL"].extend(int(op == "<=") for op, _b in pairs)
        else:  # oblique: summed in float64, in order, as docs/IR.md says
            row = (T_OBL_LT if test.op == "<" else T_OBL_LE, 0, float(test.threshold),
                   len(a["OF"]), len(test.features))
            a["OF"].extend(test.features)
            a["OW"].extend(float(w) for w in test.weights)
        for name, v in zip(("TK", "TF", "TT", "TA", "TN"), row):
            a[name].append(v)
        return tid

    def _leaf(self, tree, leaf: Leaf, kind: int) -> int:
        a = self.a
        if kind == R_VOTE:
            return lower.vote_index(leaf, tree.weight)
        if kind == R_BLEND:
            a["BV"].extend(float(v) for v in leaf.value)
            return len(a["BV"]) - len(leaf.value)
        values = lower.leaf_contribution(self.model, tree, leaf)
        key = tuple((v, np.signbit(v)) for v in values)  # -0.0 and 0.0 stay apart
        if key not in self._lv:
            self._lv[key] = len(a["LV"])
            a["LV"].extend(values)
        return self._lv[key]

    def _tree(self, index: int, tree) -> None:
        a, m = self.a, self.model
        base = len(a["NK"])
        if lower.has_blend(tree):
            kind = R_BLEND
        elif m.aggregation == "vote":
            kind = R_VOTE
        else:
            kind = R_SCALAR if tree.output is not None or m.n_raw == 1 else R_VECTOR
        a["RK"].append(kind)
        # the slot a scalar tree adds to; a blended tree without one keeps n_raw there ("all")
        a["RS"].append(tree.output if tree.output is not None else m.n_raw if kind == R_BLEND else 0)
        a["RW"].append(float(tree.weight))
        a["RV"].append(self._acc(tree.weight))
        if kind != R_BLEND and is_fast(tree):
            a["RR"].append(len(a["FR"]))
            a["RE"].append(len(a["FR"]))
            self._fast_tree(tree, kind)
            return
        a["RR"].append(base)
        a["RE"].append(base + len(tree.nodes))
        for node in tree.nodes:
            if isinstance(node, Leaf):
                row = (K_LEAF, self._leaf(tree, node, kind), 0.0, 0, 0, 0, 0, 0)
            else:
                row = self._split(node, base)
            for name, v in zip(("NK", "NF", "NV", "NC", "NM", "NU", "NA", "NN"), row):
                a[name].append(v)

    def _split(self, node: Split, base: int) -> tuple:
        a = self.a
        if len(node.children) >= UNSEEN:  # positions are u16, UNSEEN marks "no group"
            raise UnsupportedFeatureError("rust", f"a split with {len(node.children)} children "
                                                  f"(up to {UNSEEN - 1})")
        first = len(a["CH"])
        a["CH"].extend(base + c for c in node.children)
        test, rule = node.test, node.missing
        if isinstance(test, NumericTest) and isinstance(rule, DefaultChild):
            op, b = lower.float64_bound(test.op, test.threshold, test.dtype)
            return (K_LT if op == "<" else K_LE, test.feature, b, first, rule.child, 0, 0, 0)
        unseen = node.unseen if node.unseen is not None else 1  # None: "not in the set"
        tid = self._test(test)
        if isinstance(rule, DefaultChild):
            return (K_TEST, tid, 0.0, first, rule.child, unseen, 0, 0)
        if isinstance(rule, Blend):
            start = len(a["BW"])
            a["BW"].extend(float(w) for w in rule.weights)
            return (K_TEST, tid, 0.0, first, -1, unseen, start, len(rule.weights))
        start = len(a["ST"])
        for s in rule.surrogates:
            a["ST"].append(self._test(s.test))
            a["SC"].append(s.child_if_true)
        return (K_TEST, tid, 0.0, first, -2 - rule.default, unseen, start, len(rule.surrogates))

    def _fast_tree(self, tree, kind: int) -> None:
        rows, nf = self.a["FR"], len(self.model.features)
        numeric = c_table.numeric_tests(tree)
        order = c_table.layout(tree, numeric)
        row_of = {nid: len(rows) + r for r, nid in enumerate(order)}
        for nid in order:
            node, row = tree.nodes[nid], row_of[nid]
            if isinstance(node, Leaf):
                if kind == R_SCALAR:  # the contribution itself, not an offset
                    t = float(lower.leaf_contribution(self.model, tree, node)[0])
                else:
                    t = float(self._leaf(tree, node, kind))
                rows.append((t, 0, row - 1 + (0.0 <= t)))
                continue
            sign, bound, swap = numeric[nid]
            slot = 0 if sign is None else 1 + node.test.feature + (nf if sign < 0 else 0)
            rows.append((bound, slot, row_of[node.children[1] if swap else node.children[0]]))
