"""The query as a chain of steps: inputs, trees, accumulation, aggregation, link, outputs.

``Query(model, dialect, ...).build(raw)`` fills ``steps`` (:mod:`rulegen.targets.sql.plan`)
and returns the output columns. Trees are summed in IR order, ``dialect.trees_per_step`` a
step; in float32 every addition is rounded to float32 as docs/IR.md says (a CAST where the
engine has the type, Veltkamp's split in SQLite, which reads the sum three times and so
needs it as a column: one step per tree there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rulegen.codegen.literals import sql_comment
from rulegen.codegen.lower import (
    has_blend,
    leaf_contribution,
    leaf_outputs,
    split_tests,
    total_weight,
    vote_index,
)
from rulegen.errors import UnsupportedFeatureError
from rulegen.ir.nodes import (
    Blend,
    DefaultChild,
    IntervalTest,
    Leaf,
    Model,
    NumericTest,
    ObliqueTest,
    Split,
)
from rulegen.targets.sql.blend import Conditions, blend_phases, conjunction, leaf_note
from rulegen.targets.sql.dialects import Dialect
from rulegen.targets.sql.dialects.base import F32_OVERFLOW, exp_limits
from rulegen.targets.sql.overflow import tracked
from rulegen.targets.sql.plan import Col, Output, Step
from rulegen.targets.sql.routing import Router, oblique_key
from rulegen.targets.sql.trees import TreeWriter

MAX_PREP_COLUMNS = 400  # per step; SQLite allows 2000 result columns


@dataclass
class Part:
    """What one tree adds to one accumulator."""

    expr: str
    refs: frozenset
    rounded: bool = True  # already in the model's dtype
    cost: float = 1.0  # tree nodes a row visits (plan.py)
    plain: bool = False  # never -0.0: 0.0 + expr is expr itself, so a first sum needs no "+"


def internal_prefix(names: list[str]) -> str:
    """A prefix for internal names that no user name (case-insensitively) starts with."""
    lowered = [n.lower() for n in names]
    i = 0
    while True:
        prefix = "_rg_" if i == 0 else f"_rg{i}_"
        if not any(n.startswith(prefix) for n in lowered):
            return prefix
        i += 1


class Query:
    def __init__(self, model: Model, dialect: Dialect, names_in_use: list[str], comments: bool):
        self.m, self.d, self.comments = model, dialect, comments
        self.q = dialect.quote
        self.prefix = internal_prefix(names_in_use)
        self.f32 = model.dtype == "float32"
        self.steps: list[Step] = []
        self._check_range()
        names = [f.name for f in model.features]
        # NaN read as NULL: blended trees' paths test IS NULL, so they read these columns;
        # nested CASEs read the table's columns with NaN-safe comparisons (routing.py),
        # unless so many comparisons need a guard that NULLIF once a row is cheaper
        base = Step("inputs, NaN read as missing")
        self.nulled = []
        for i, f in enumerate(model.features):
            text = dialect.not_nan(self.q(f.name)) if f.kind == "numeric" else None
            if text is None:
                self.nulled.append(f.name)
            else:
                base.cols.append(Col(self.p(f"x{i}"), text, frozenset({f.name})))
                self.nulled.append(self.p(f"x{i}"))
        self.steps.append(base)
        self.obliques = self._obliques(names)
        quoted = {k: self.q(v) for k, v in self.obliques.items()}
        guards, guarded = _guarded(model)
        nan_free = frozenset(guarded) if dialect.nan_largest and dialect.prefer_nullif(
            guards, len(guarded)) else frozenset()
        cols = [self.nulled[i] if i in nan_free else n for i, n in enumerate(names)]
        self.writer = TreeWriter(Router(model, dialect, [self.q(n) for n in cols], quoted, nan_free),
                                 dialect, cols, self.obliques)
        self._blend_conds = None

    def p(self, name: str) -> str:
        return self.prefix + name

    def num(self, v: float) -> str:
        return self.d.num(v)

    def rnd(self, v: float) -> float:
        return float(np.float32(v)) if self.f32 else float(v)

    @property
    def nodes_written(self) -> int:
        return self.writer.nodes_written

    def _check_range(self):
        """Bound every score the model can reach (``self.bound``, rounding included). Overflow
        cannot be produced exactly by float32 casts that raise (DuckDB, PostgreSQL) or
        saturate (MariaDB), nor by arithmetic that raises (PostgreSQL, MariaDB): refuse
        models whose sums could overflow there."""
        bound = max(abs(b) for b in self.m.base_score)
        for tree in self.m.trees:
            if self.m.aggregation == "vote":
                bound += abs(tree.weight)
                continue
            # a leaf's blend weight p is at most the product of max(1, w) above it
            p = [1.0] * len(tree.nodes)
            for node_id, node in enumerate(tree.nodes):
                if isinstance(node, Split):
                    for i, child in enumerate(node.children):
                        w = node.missing.weights[i] if isinstance(node.missing, Blend) else 1.0
                        p[child] = p[node_id] * max(1.0, w)
            sizes = [p[i] * max(map(abs, n.value)) for i, n in enumerate(tree.nodes)
                     if isinstance(n, Leaf)]
            bound += abs(tree.weight) * (sum(sizes) if has_blend(tree) else max(sizes))
        self.bound = bound * (1 + (len(self.m.trees) + 2) * 2.0**-23)
        if not self.f32 and self.d.name != "postgres" and self.d.has_infinity:
            return
        limit = F32_OVERFLOW if self.f32 else 2.0**1022
        if self.f32 and not self.d.has_infinity and self.m.link == "softmax":
            limit /= 2  # the float32 differences x - max are rounded with a saturating cast
        if not self.bound < limit:
            raise UnsupportedFeatureError(
                "sql", f"a {self.m.dtype} sum that may overflow in dialect {self.d.name!r} "
                       "(it raises an error or saturates where the IR gives infinity)")

    def _exp_fits(self, f32: bool) -> bool:
        """Whether exp of any score stays finite (in float32 too, with ``f32``)."""
        top = math.log(F32_OVERFLOW) * (1 - 2.0**-20) if f32 else exp_limits()[0]
        return self.bound <= top

    def _obliques(self, names: list[str]) -> dict[tuple, str]:
        """One column per distinct oblique test: 0 holds, 1 does not, NULL if an input is
        missing (NaN too: the presence test is NaN-safe)."""
        found: dict[tuple, ObliqueTest] = {}
        for tree in self.m.trees:
            for t in split_tests(tree):
                if isinstance(t, ObliqueTest):
                    found.setdefault(oblique_key(t), t)
        if not self.d.has_infinity:  # overflow raises there: track it (overflow.py)
            out = {key: self.p(f"o{j}") for j, key in enumerate(found)}
            tests = [(out[key], t, [self.q(names[f]) for f in t.features],
                      frozenset(names[f] for f in t.features)) for key, t in found.items()]
            if tests:
                self.steps += tracked(tests, self.d, self.p)
            return out
        step = Step("oblique tests: 0 holds, 1 does not, NULL if an input is missing")
        out = {}
        for j, (key, t) in enumerate(found.items()):
            cols = [self.q(names[f]) for f in t.features]
            s = self.num(0.0)
            for col, w in zip(cols, t.weights):
                s = f"({s} + {self.d.product(w, col)})"
            present = " AND ".join(
                f"{c} <= {self.num(float('inf'))}" if self.d.has_nan else f"{c} IS NOT NULL"
                for c in dict.fromkeys(cols))
            expr = (f"CASE WHEN {present} THEN CASE WHEN {s} {t.op} {self.num(t.threshold)} "
                    f"THEN 0 ELSE 1 END END")
            out[key] = self.p(f"o{j}")
            step.cols.append(Col(out[key], expr, frozenset(names[f] for f in t.features)))
        if step.cols:
            self.steps.append(step)
        return out

    # --- trees ------------------------------------------------------------------------

    def _note(self, t: int, tree, leaf: int) -> str:
        if not self.comments:
            return ""
        return f" /* {sql_comment(leaf_note(t, leaf, tree.nodes[leaf]))} */"

    def tree_plan(self, t: int, tree):
        """(phases: lists of columns for successive steps, {k: Part})."""
        m, width = self.m, (1 if tree.output is not None else self.m.n_raw)
        out_k = (lambda k: k) if tree.output is None else (lambda k: tree.output)
        name = (lambda s: self.p(f"t{t}_{s}"))
        if has_blend(tree):
            return self._blend_plan(t, tree, width, out_k)
        leaves = [i for i, n in enumerate(tree.nodes) if isinstance(n, Leaf)]
        if m.aggregation == "vote":
            wins = {i: vote_index(tree.nodes[i], tree.weight) for i in leaves}
            w = self.num(self.rnd(tree.weight))
            if len(set(wins.values())) == 1:
                return [], {next(iter(wins.values())): Part(w, frozenset(), cost=0.0)}
            sql = self.writer.tree(tree, [lambda i: f"{wins[i]}{self._note(t, tree, i)}"], name)
            (expr, refs), = sql.exprs
            col = self.p(f"t{t}")
            return sql.phases + [[Col(col, expr, refs, f"tree {t}: class index voted for", sql.cost)]], {
                k: Part(f"CASE WHEN {self.q(col)} = {k} THEN {w} ELSE {self.num(-0.0)} END", frozenset({col}))
                for k in sorted(set(wins.values()))}
        values = {i: leaf_contribution(m, tree, tree.nodes[i]) for i in leaves}
        texts = [(lambda i, k=k: self.num(values[i][k]) + (self._note(t, tree, i) if k == 0 else ""))
                 for k in range(width)]
        sql = self.writer.tree(tree, texts, name)
        plain = [all(not _neg_zero(v[k]) for v in values.values()) for k in range(width)]
        return sql.phases, {out_k(k): Part(expr, refs, True, sql.cost, plain[k])
                            for k, (expr, refs) in enumerate(sql.exprs)}

    def _blend_plan(self, t, tree, width, out_k):
        if self._blend_conds is None:
            quoted = {k: self.q(v) for k, v in self.obliques.items()}
            self._blend_conds = Conditions(self.m, self.d, [self.q(n) for n in self.nulled], quoted)
        inputs = frozenset(self.nulled) | frozenset(self.obliques.values())
        phases, sums = blend_phases(self._blend_conds, t, tree, width, self.p, inputs)
        c = {k: (self.q(s) if tree.weight == 1.0 else f"{self.num(tree.weight)} * {self.q(s)}")
             for k, s in sums.items()}
        refs = {k: frozenset({s}) for k, s in sums.items()}
        if self.m.aggregation != "vote":
            return phases, {out_k(k): Part(c[k], refs[k], rounded=not self.f32) for k in range(width)}
        phases.append([Col(self.p(f"c{t}_{k}"), c[k], refs[k]) for k in range(width)])
        cs = [self.q(self.p(f"c{t}_{k}")) for k in range(width)]
        w = self.num(self.rnd(tree.weight))
        contrib = {k: Part(f"CASE WHEN {_first_max(cs, k)} THEN {w} ELSE {self.num(-0.0)} END",
                           frozenset(self.p(f"c{t}_{j}") for j in range(width)))
                   for k in range(width)}
        return phases, contrib

    def _finish_contrib(self, t, phases, contrib):
        """float32: round the contributions not yet in dtype (blends)."""
        extra = []
        for k, part in sorted(contrib.items()):
            if self.f32 and not part.rounded:
                if self.d.float32_type:
                    part.expr = self.d.f32_sum(part.expr)  # a CAST; the range was checked
                else:
                    name = self.p(f"c{t}_{k}r")
                    extra.append(Col(name, self.d.f32_round(part.expr), part.refs))
                    part.expr, part.refs = self.q(name), frozenset({name})
                part.rounded = True
        return phases + ([extra] if extra else []), contrib

    # --- the whole query ------------------------------------------------------------------

    @staticmethod
    def folds_outputs(model: Model) -> bool:
        """One tree without blends: every leaf's outputs are computed at generation."""
        return len(model.trees) == 1 and not has_blend(model.trees[0])

    def build(self, raw: bool) -> list[Output]:
        m, d = self.m, self.d
        if self.folds_outputs(m):
            return self._one_tree(raw)
        # acc[k]: (expression, refs, pending) -- pending: an unrounded float32 sum (SQLite)
        acc = {k: (self.num(self.rnd(b)), frozenset(), False) for k, b in enumerate(m.base_score)}
        plans = [self._finish_contrib(t, *self.tree_plan(t, tree)) for t, tree in enumerate(m.trees)]
        one_per_step = self.f32 and not d.float32_type
        per_step = 1 if one_per_step else d.trees_per_step
        many = len(plans) > per_step
        summed: set[int] = set()  # outputs whose sum holds a tree (a constant tree has no refs)
        t0 = 0
        while t0 < len(plans):
            t1, width = t0, 0
            while t1 < len(plans) and t1 - t0 < per_step and (
                    t1 == t0 or width + sum(map(len, plans[t1][0])) <= MAX_PREP_COLUMNS):
                width += sum(map(len, plans[t1][0]))
                t1 += 1
            batch = range(t0, t1)
            label = f"trees {t0}..{t1 - 1}" if t1 - t0 > 1 else f"tree {t0}"
            for j in range(max(len(plans[t][0]) for t in batch)):
                self.steps.append(Step(f"{label}: preparation {j + 1}",
                                       [c for t in batch if j < len(plans[t][0]) for c in plans[t][0][j]]))
            # a fence every step bounds the depth of the inlined sum over many trees
            step = Step(f"{label}: accumulate", fence=many)
            for k in sorted(set().union(*(plans[t][1] for t in batch))):
                expr, refs, pending = acc[k]
                cost = 1.0
                for t in batch:
                    if k in plans[t][1]:
                        part = plans[t][1][k]
                        base = float(self.rnd(m.base_score[k])).hex()
                        if k not in summed and (base == "-0x0.0p+0"
                                                or part.plain and base == "0x0.0p+0"):
                            expr = part.expr  # -0.0 + c is c, and 0.0 + c unless c is -0.0
                        else:
                            expr, pending = self._add(expr, pending, part.expr)
                        summed.add(k)
                        refs, cost = refs | part.refs, cost + part.cost
                step.cols.append(Col(self.p(f"a{k}"), expr, refs, cost=cost))
                acc[k] = (self.q(self.p(f"a{k}")), frozenset({self.p(f"a{k}")}), pending)
            self.steps.append(step)
            t0 = t1
        return self._post(acc, raw)

    def _one_tree(self, raw: bool) -> list[Output]:
        """One tree: every output is a function of the leaf a row reaches, so each output
        column is its own nested CASE over the values the evaluator folds per leaf (link
        and float32 rounding included). No column is read twice, so no step needs a fence
        and an engine computes only the columns the caller selects; where the engine shares
        a column between readers (no fence), the class is chosen from the probabilities
        instead of walking the tree once more."""
        m, d, tree = self.m, self.d, self.m.trees[0]
        leaves, raws, outs = leaf_outputs(m)
        row = {leaf: i for i, leaf in enumerate(leaves)}
        classes = m.target.classes if m.target.task == "classification" else ()
        names = ([f"prob_{c}" for c in classes] if classes else
                 ["prediction"] if outs.shape[1] == 1 else [f"prediction_{k}" for k in range(outs.shape[1])])
        texts = [(lambda i, k=k: self.num(float(outs[row[i], k])) + (self._note(0, tree, i) if k == 0 else ""))
                 for k in range(len(names))]
        derive = bool(classes) and not d.fence and len(classes) > 1
        if classes and not derive:
            names.insert(0, "prediction")
            texts.insert(0, lambda i: d.label(classes[int(np.argmax(outs[row[i]]))]))
        if raw:
            names += [f"raw_{k}" for k in range(raws.shape[1])]
            texts += [(lambda i, k=k: self.num(float(raws[row[i], k]))) for k in range(raws.shape[1])]
        sql = self.writer.tree(tree, texts, lambda s: self.p(f"t0_{s}"))
        for j, cols in enumerate(sql.phases):
            self.steps.append(Step(f"tree 0: node ids, step {j + 1}", cols))
        if not derive:
            return [Output(n, expr, refs) for n, (expr, refs) in zip(names, sql.exprs)]
        step = Step("tree 0: outputs", [Col(self.p(f"v{k}"), expr, refs, cost=sql.cost)
                                        for k, (expr, refs) in enumerate(sql.exprs)])
        self.steps.append(step)
        cols = [self.q(c.name) for c in step.cols]
        outputs = [Output("prediction", self._choose(cols[:len(classes)]),
                          frozenset(c.name for c in step.cols[:len(classes)]))]
        return outputs + [Output(n, self.q(c.name), frozenset({c.name})) for n, c in zip(names, step.cols)]

    def _choose(self, ps: list[str]) -> str:
        """The class label of the first largest probability (ps: quoted columns)."""
        labels = [self.d.label(c) for c in self.m.target.classes]
        if len(labels) == 1:
            return labels[0]
        arms = [f"WHEN {conjunction([f'{ps[i]} >= {ps[j]}' for j in range(i + 1, len(ps))])}"
                f" THEN {labels[i]}" for i in range(len(ps) - 1)]
        return "CASE " + " ".join(arms) + f" ELSE {labels[-1]} END"

    def _add(self, acc: str, pending: bool, c: str) -> tuple[str, bool]:
        if not self.f32:
            return f"{acc}\n    + {c}", False
        if self.d.float32_type:
            return self.d.f32_sum(f"{acc} + {c}"), False
        # SQLite: acc is a column; round the previous unrounded sum, add, round later
        return f"{self.d.f32_sum(acc) if pending else acc}\n    + {c}", True

    def _post(self, acc, raw: bool) -> list[Output]:
        m, d, p = self.m, self.d, self.p
        n = m.n_raw
        step = Step("aggregate")
        divisor = {"mean": float(len(m.trees)), "vote": self.rnd(total_weight(m))}.get(m.aggregation)
        for k in range(n):
            expr, refs, pending = acc[k]
            if pending:
                expr = d.f32_sum(expr)
            if divisor is not None:
                expr = f"{expr} / {self.num(divisor)}"
                expr = d.f32_round(expr) if self.f32 else expr
            elif refs and not pending:
                continue
            elif self.f32 and d.float32_type:
                expr = f"CAST({expr} AS {d.float32_type})"
            step.cols.append(Col(p(f"a{k}"), expr, refs))
        self.steps.append(step)
        a = [p(f"a{k}") for k in range(n)]
        r = [d.to_double(self.q(x)) if self.f32 else self.q(x) for x in a]
        out = self._link(a, r)
        double = (lambda x: d.to_double(self.q(x))) if self.f32 else self.q
        outputs = []
        t = m.target
        if t.task == "classification":
            probs = out
            if n == 1 and len(t.classes) == 2:
                one_minus = f"{self.num(1.0)} - {double(out[0])}"
                self.steps.append(Step("probability of the first class", [
                    Col(p("q0"), d.f32_round(one_minus) if self.f32 else one_minus,
                        frozenset({out[0]}))]))
                probs = [p("q0"), out[0]]
            outputs.append(Output("prediction", self._choose([self.q(x) for x in probs]), frozenset(probs)))
            names = [f"prob_{c}" for c in t.classes]
            outputs += [Output(nm, double(x), frozenset({x})) for nm, x in zip(names, probs)]
        elif n == 1:
            outputs.append(Output("prediction", double(out[0]), frozenset({out[0]})))
        else:
            outputs += [Output(f"prediction_{k}", double(x), frozenset({x})) for k, x in enumerate(out)]
        if raw:
            outputs += [Output(f"raw_{k}", double(x), frozenset({x})) for k, x in enumerate(a)]
        return outputs

    def _link(self, a: list[str], r: list[str]) -> list[str]:
        """Columns holding the link's outputs (in dtype)."""
        m, d, p, num = self.m, self.d, self.p, self.num
        if m.link == "identity":
            return a
        if self.f32:
            return self._link_f32(a, r)
        refs = frozenset(a)
        if m.link == "softmax":
            self.steps.append(Step("softmax: maximum", [Col(p("m"), d.greatest(r), refs)]))
            self.steps.append(Step("softmax: exponentials", [
                Col(p(f"e{k}"), d.exp(f"{x} - {self.q(p('m'))}"), refs | {p("m")})
                for k, x in enumerate(r)]))
            e = [self.q(p(f"e{k}")) for k in range(len(r))]
            total = " + ".join(e)
            cols = [Col(p(f"y{k}"), f"{x} / ({total})", frozenset(p(f"e{j}") for j in range(len(r))))
                    for k, x in enumerate(e)]
        elif m.link == "sigmoid":
            cols = [Col(p(f"y{k}"), f"{num(1.0)} / ({num(1.0)} + {d.exp('-' + x)})", refs)
                    for k, x in enumerate(r)]
            if not d.has_infinity and not self._exp_fits(False):
                # exp(-x) would overflow: 1 / (1 + inf) is 0.0, written without the inf
                low = num(-exp_limits()[0])
                for c, x in zip(cols, r):
                    c.expr = f"CASE WHEN {x} < {low} THEN {num(0.0)} ELSE {c.expr} END"
        elif m.link == "exp":
            self._refuse_exp_overflow(False)
            cols = [Col(p(f"y{k}"), d.exp(x), refs) for k, x in enumerate(r)]
        else:
            raise UnsupportedFeatureError("sql", f"link {m.link!r}")
        self.steps.append(Step(f"link: {m.link}", cols))
        return [c.name for c in cols]

    def _refuse_exp_overflow(self, f32: bool):
        if not self.d.has_infinity and not self._exp_fits(f32):
            raise UnsupportedFeatureError(
                "sql", f"link exp of a score up to {self.bound:.6g} in dialect {self.d.name!r}: "
                       f"exp {'rounded to float32 ' if f32 else ''}would overflow to infinity, "
                       f"which {self.d.title} cannot hold")

    def _link_f32(self, a: list[str], r: list[str]) -> list[str]:
        """XGBoost's float32 link (docs/IR.md). SQL has no expf: exp runs in double and is
        rounded to float32, which differs from glibc's expf on about 1 in 13,000 inputs
        (one float32 ulp). Every other operation is a float32 one, done exactly."""
        m, d, p, num = self.m, self.d, self.p, self.num
        link, n = m.link, len(a)
        step = lambda title, names, exprs, refs: self.steps.append(Step(title, [
            Col(p(nm), e, frozenset(rf)) for nm, e, rf in zip(names, exprs, refs)]))
        names = lambda c: [f"{c}{k}" for k in range(n)]
        dbl = lambda c: [d.to_double(self.q(p(x))) for x in names(c)]
        if link == "softmax":
            step("softmax: maximum", ["m"], [d.greatest(r)], [a])
            step("softmax: differences in float32", names("d"),
                 [d.f32_round(f"{x} - {self.q(p('m'))}") for x in r], [{x, p("m")} for x in a])
            exps = dbl("d")
        elif link == "sigmoid":  # expf(min(-x, 88.7f)); NaN stays NaN
            cap = num(float(np.float32(88.7)))
            exps = [f"CASE WHEN -{x} > {cap} THEN {cap} ELSE -{x} END" for x in r]
        else:
            self._refuse_exp_overflow(True)
            exps = r
        step(f"{link}: exponentials", names("t"), [d.exp(x) for x in exps],
             [{p(x)} for x in names("d")] if link == "softmax" else [{x} for x in a])
        step(f"{link}: exponentials in float32", names("e"),
             [d.f32_round(self.q(p(x))) for x in names("t")], [{p(x)} for x in names("t")])
        if link == "exp":
            return [p(x) for x in names("e")]
        e = dbl("e")
        if link == "sigmoid":
            step("sigmoid: 1 + e in float32", names("u"), [d.f32_sum(f"{x} + {num(1.0)}") for x in e],
                 [{p(x)} for x in names("e")])
            step("link: sigmoid", names("y"), [d.f32_round(f"{num(1.0)} / {x}") for x in dbl("u")],
                 [{p(x)} for x in names("u")])
        else:
            step("softmax: sum in double", ["s"], [" + ".join(e)], [{p(x) for x in names("e")}])
            step("softmax: sum in float32", ["s32"], [d.f32_round(self.q(p("s")))], [{p("s")}])
            s32 = d.to_double(self.q(p("s32")))
            step("link: softmax", names("y"), [d.f32_round(f"{x} / {s32}") for x in e],
                 [{p(x), p("s32")} for x in names("e")])
        return [p(x) for x in names("y")]


def _guarded(model: Model) -> tuple[float, set[int]]:
    """About how many comparisons a row makes that need a NaN guard (a numeric split whose
    missing values go to its lower side: ``x > t`` must keep NaN out), and their features."""
    total, features = 0.0, set()
    for tree in model.trees:
        depth = [0] * len(tree.nodes)
        splits, guarded, leaves = 0, 0, []
        for i, node in enumerate(tree.nodes):
            if isinstance(node, Leaf):
                leaves.append(depth[i])
                continue
            for c in node.children:
                depth[c] = depth[i] + 1
            splits += 1
            t, rule = node.test, node.missing
            if isinstance(rule, DefaultChild) and isinstance(t, (NumericTest, IntervalTest)):
                if rule.child < (len(t.bounds) if isinstance(t, IntervalTest) else 1):
                    guarded += 1
                    features.add(t.feature)
        if splits:
            total += guarded / splits * sum(leaves) / len(leaves)
    return total, features


def _neg_zero(v: float) -> bool:
    return v == 0.0 and np.signbit(v)


def _first_max(cols: list[str], k: int) -> str:
    """Condition: column k is the first largest (lowest index on ties)."""
    parts = [f"{cols[k]} > {cols[j]}" for j in range(k)] + \
            [f"{cols[k]} >= {cols[j]}" for j in range(k + 1, len(cols))]
    return conjunction(parts) or "TRUE"
