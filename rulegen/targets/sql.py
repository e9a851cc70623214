"""SQL target: one query (SQLite, DuckDB, PostgreSQL) that scores every row of a table.

``SqlTarget().generate(model, dialect=..., table=...)`` returns ``{"<name>.sql": text}``:
a ``WITH`` chain of steps (see :mod:`rulegen.targets.sql_plan`) ending in a SELECT that
returns the ``passthrough`` columns (e.g. a key) and the feature columns unchanged, then
``prediction`` (``prediction_<k>`` for multi-output regression), for classifiers
``prob_<label>`` per class, and with ``raw=True`` the accumulators ``raw_<k>`` before the
link (after mean / vote division), in the model's dtype. ``table`` is one name, or
a sequence of parts for a qualified name (``("analytics", "customers")``); every name is
quoted. NULL is missing; DuckDB and PostgreSQL also read NaN as missing.

``expressions_only=True`` returns instead a SELECT-list fragment with the same output
columns (without the inputs), one ``(<scalar subquery>) AS "<column>"`` per line, separated
by commas. Each subquery is self-contained: a ``WITH`` chain whose first step reads the
feature columns of the enclosing query's current row by their unqualified, quoted names, so
``SELECT t.*, <fragment> FROM my_table AS t`` works. Each item recomputes what it needs;
prefer the full query when selecting many columns.

Each tree is a flat ``CASE WHEN <path> THEN ...`` (no nested CASE) with simplified paths
(:mod:`rulegen.targets.sql_paths`); trees are summed in IR order, ``TREES_PER_STEP`` per step.
"""

from __future__ import annotations

import numpy as np

from rulegen.codegen.jinja import render
from rulegen.codegen.literals import sql_comment, sql_identifier, sql_label
from rulegen.codegen.lower import has_blend, leaf_contribution, total_weight, vote_index
from rulegen.errors import RulegenError, UnsupportedFeatureError
from rulegen.ir.nodes import Blend, Leaf, Model, ObliqueTest, Split, Surrogates
from rulegen.targets import sql_dialect as sd
from rulegen.targets.base import Target
from rulegen.targets.sql_paths import (
    Conditions,
    conjunction,
    leaf_note,
    oblique_key,
)
from rulegen.targets.sql_plan import Col, Output, Step, q, render_steps

TREES_PER_STEP = 50  # terms per accumulation expression: far below the depth cap of 1000
MAX_PREP_COLUMNS = 400  # per step; SQLite allows 2000 result columns
BLEND_CHUNK = 200  # leaves summed per step in a tree with blended (C4.5) missing values


class SqlTarget(Target):
    name = "sql"
    description = "a SELECT scoring every row of a table (SQLite, DuckDB, PostgreSQL)"
    dialects = sd.DIALECTS

    def generate(self, model: Model, *, name: str = "model", dialect: str = "sqlite",
                 table="data", expressions_only: bool = False, raw: bool = False,
                 comments: bool = True, passthrough=(), **options) -> dict[str, str]:
        if dialect not in sd.DIALECTS:
            raise RulegenError(f"unknown SQL dialect {dialect!r}; choose one of: "
                               f"{', '.join(sd.DIALECTS)}")
        if options:
            raise RulegenError(f"unknown SQL target option(s): {', '.join(sorted(options))}")
        passthrough = [str(p) for p in passthrough]
        originals = passthrough + [f.name for f in model.features]
        parts = [table] if isinstance(table, str) else [str(t) for t in table]
        b = _Builder(model, dialect, originals + parts, comments)
        outputs = b.build(raw)
        if not expressions_only:
            # SQLite and DuckDB compare column names without case; a clash would hide a column
            taken = {n.lower(): n for n in originals}
            for o in outputs:
                if o.alias.lower() in taken:
                    raise RulegenError(f"the output column {o.alias!r} would have the same name as "
                                       f"the input column {taken[o.alias.lower()]!r}; rename that "
                                       "feature, or use expressions_only and alias the outputs")
        header = _header(model, dialect) if comments else []
        if expressions_only:
            items = []
            for o in outputs:
                steps, finals = render_steps(b.steps, [o], originals, b.prefix, comments)
                items.append({"steps": steps, "expr": o.expr, "alias": q(o.alias)})
            text = render("sql/expressions.j2", {"header": header, "items": items,
                                                 "fence": sd.fence(dialect)})
        else:
            keep = [Output(n, q(n), frozenset({n})) for n in originals]
            steps, finals = render_steps(b.steps, keep + outputs, originals, b.prefix, comments)
            text = render("sql/query.j2", {"header": header, "steps": steps, "finals": finals,
                                           "table": ".".join(map(sql_identifier, parts)),
                                           "fence": sd.fence(dialect)})
        return {f"{name}.sql": text}


def _header(model: Model, dialect: str) -> list[str]:
    t = model.target
    lines = [(f"rulegen SQL ({dialect}): {t.task} of {t.name!r}, {len(model.trees)} tree(s), "
             f"aggregation {model.aggregation}, link {model.link}, dtype {model.dtype}"),
             "features: " + ", ".join(f"{f.name!r} ({f.kind})" for f in model.features)]
    if t.task == "classification":
        lines.append("classes: " + ", ".join(repr(c) for c in t.classes))
    lines.append("NULL is missing" + ("" if dialect == "sqlite" else "; NaN is missing too"))
    return [sql_comment(x) for x in lines]


def _prefix(names: list[str]) -> str:
    """A prefix for internal names that no user name (case-insensitively) starts with."""
    lowered = [n.lower() for n in names]
    i = 0
    while True:
        prefix = "_rg_" if i == 0 else f"_rg{i}_"
        if not any(n.startswith(prefix) for n in lowered):
            return prefix
        i += 1


class _Builder:
    def __init__(self, model: Model, dialect: str, names_in_use: list[str], comments: bool):
        self.m, self.d, self.comments = model, dialect, comments
        self.prefix = _prefix(names_in_use)
        self.f32 = model.dtype == "float32"
        self.steps: list[Step] = []
        self._check_range()
        base = Step("inputs" + ("" if dialect == "sqlite" else ", NaN read as missing"))
        cols, inputs = [], set()
        for i, f in enumerate(model.features):
            normal = sd.not_nan(q(f.name), dialect) if f.kind == "numeric" else None
            if normal is None:
                cols.append(q(f.name))
                inputs.add(f.name)
            else:
                base.cols.append(Col(self.p(f"x{i}"), normal, frozenset({f.name})))
                cols.append(q(self.p(f"x{i}")))
                inputs.add(self.p(f"x{i}"))
        self.steps.append(base)
        self.inputs = frozenset(inputs)
        obliques = self._obliques(cols)
        self.conds = Conditions(model, dialect, cols, obliques)

    def p(self, name: str) -> str:
        return self.prefix + name

    def num(self, v: float) -> str:
        return sd.num(v, self.d)

    def rnd(self, v: float) -> float:
        return float(np.float32(v)) if self.f32 else float(v)

    def _check_range(self):
        """Overflow cannot be produced exactly by DuckDB/PostgreSQL float32 casts or any
        PostgreSQL arithmetic (they raise): refuse models whose sums could overflow."""
        if not self.f32 and self.d != "postgres":
            return
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
        limit = sd.F32_OVERFLOW if self.f32 else 2.0**1022
        if not bound * (1 + (len(self.m.trees) + 2) * 2.0**-23) < limit:
            raise UnsupportedFeatureError(
                "sql", f"a {self.m.dtype} sum that may overflow in dialect {self.d!r} "
                       "(it raises an error where the IR gives infinity)")

    def _obliques(self, cols: list[str]) -> dict[tuple, str]:
        found: dict[tuple, ObliqueTest] = {}
        for tree in self.m.trees:
            for node in tree.nodes:
                if isinstance(node, Split):
                    tests = [node.test] + ([s.test for s in node.missing.surrogates]
                                           if isinstance(node.missing, Surrogates) else [])
                    for t in tests:
                        if isinstance(t, ObliqueTest):
                            found.setdefault(oblique_key(t), t)
        step = Step("oblique tests: 0 holds, 1 does not, NULL if an input is missing")
        names = {}
        for j, (key, t) in enumerate(found.items()):
            s = self.num(0.0)
            for f, w in zip(t.features, t.weights):
                s = f"({s} + {sd.product(w, cols[f], self.d)})"
            missing = " OR ".join(f"{cols[f]} IS NULL" for f in dict.fromkeys(t.features))
            expr = (f"CASE WHEN {missing} THEN NULL WHEN {s} {t.op} {self.num(t.threshold)} "
                    f"THEN 0 ELSE 1 END")
            names[key] = q(self.p(f"o{j}"))
            step.cols.append(Col(self.p(f"o{j}"), expr, self.inputs))
        if step.cols:
            self.steps.append(step)
            self.inputs = self.inputs | {self.p(f"o{j}") for j in range(len(found))}
        return names

    # --- trees ------------------------------------------------------------------------

    def _case(self, arms, value, tree_index: int, tree) -> str:
        """Flat CASE over leaf arms; the last possible arm (or one that always holds)
        becomes the ELSE, as the arms of a tree without blends are disjoint."""
        lines = []
        for arm in arms:
            note = (f"/* {sql_comment(leaf_note(tree_index, arm.leaf, tree.nodes[arm.leaf]))} */"
                    if self.comments else "")
            if arm.condition is None or arm is arms[-1]:
                lines.append(f"  ELSE {value(arm.leaf)}{' ' + note if note else ''}")
                break
            lines.append(f"  WHEN {arm.condition} THEN {value(arm.leaf)}{' ' + note if note else ''}")
        if len(lines) == 1:
            return lines[0][len("  ELSE "):]
        return "CASE\n" + "\n".join(lines) + "\nEND"

    def tree_plan(self, t: int, tree):
        """(phases: lists of prep columns, {k: (expr, refs, already in dtype)})."""
        m, width = self.m, (1 if tree.output is not None else self.m.n_raw)
        arms = self.conds.arms(tree, first_match=not has_blend(tree))
        out_k = (lambda k: k) if tree.output is None else (lambda k: tree.output)
        if has_blend(tree):
            return self._blend_plan(t, tree, arms, width, out_k)
        if m.aggregation == "vote":
            wins = {a.leaf: vote_index(tree.nodes[a.leaf], tree.weight) for a in arms}
            w = self.num(self.rnd(tree.weight))
            if len(set(wins.values())) == 1:
                return [], {next(iter(wins.values())): (w, frozenset(), True)}
            col = self.p(f"t{t}")
            expr = self._case(arms, lambda leaf: sql_label(wins[leaf], self.d), t, tree)
            return [[Col(col, expr, self.inputs, f"tree {t}: class index voted for")]], {
                k: (f"CASE WHEN {q(col)} = {k} THEN {w} ELSE {self.num(-0.0)} END",
                    frozenset({col}), True) for k in sorted(set(wins.values()))}
        values = {a.leaf: leaf_contribution(m, tree, tree.nodes[a.leaf]) for a in arms}
        if width == 1:
            expr = self._case(arms, lambda leaf: self.num(values[leaf][0]), t, tree)
            return [], {out_k(0): (expr, self.inputs, True)}
        col = self.p(f"t{t}")
        expr = self._case(arms, lambda leaf: sql_label(leaf, self.d), t, tree)
        contrib = {}
        for k in range(width):
            lines = [f"WHEN {a.leaf} THEN {self.num(values[a.leaf][k])}" for a in arms[:-1]]
            v = self.num(values[arms[-1].leaf][k])
            contrib[k] = ((f"CASE {q(col)} " + " ".join(lines) + f" ELSE {v} END") if lines else v,
                          frozenset({col}), True)
        return [[Col(col, expr, self.inputs, f"tree {t}: leaf node id")]], contrib

    def _blend_plan(self, t, tree, arms, width, out_k):
        """Leaf weights p (0.0 where a leaf is not reached), then per output the sum over
        leaves in node-id order of p * value, BLEND_CHUNK leaves per step."""
        arms = sorted(arms, key=lambda a: a.leaf)
        chunks = [arms[i:i + BLEND_CHUNK] for i in range(0, len(arms), BLEND_CHUNK)] or [[]]
        phases: list[list[Col]] = [[] for _ in range(len(chunks) + 1)]
        sums = {k: self.num(0.0) for k in range(width)}
        for j, chunk in enumerate(chunks):
            for a in chunk:
                p = self.num(1.0)
                for miss, w in a.factors:
                    p = f"{p} * CASE WHEN {miss} THEN {self.num(w)} ELSE {self.num(1.0)} END"
                expr = p if a.condition is None else (
                    f"CASE WHEN {a.condition} THEN {p} ELSE {self.num(0.0)} END")
                phases[j].append(Col(self.p(f"t{t}_{a.leaf}"), expr, self.inputs,
                                     leaf_note(t, a.leaf, tree.nodes[a.leaf])))
            for k in range(width):
                terms = [f"{q(self.p(f't{t}_{a.leaf}'))} * {self.num(tree.nodes[a.leaf].value[k])}"
                         for a in chunk]
                refs = {self.p(f"t{t}_{a.leaf}") for a in chunk} | ({self.p(f"b{t}_{k}")} if j else set())
                phases[j + 1].append(Col(self.p(f"b{t}_{k}"), " + ".join([sums[k]] + terms),
                                         frozenset(refs), f"tree {t}: blended output {k}"))
                sums[k] = q(self.p(f"b{t}_{k}"))
        c = {k: (sums[k] if tree.weight == 1.0 else f"{self.num(tree.weight)} * {sums[k]}")
             for k in range(width)}
        refs = {k: frozenset({self.p(f"b{t}_{k}")}) for k in range(width)}
        if self.m.aggregation != "vote":
            return phases, {out_k(k): (c[k], refs[k], not self.f32) for k in range(width)}
        phases.append([Col(self.p(f"c{t}_{k}"), c[k], refs[k]) for k in range(width)])
        cs = [q(self.p(f"c{t}_{k}")) for k in range(width)]
        w = self.num(self.rnd(tree.weight))
        contrib = {k: (f"CASE WHEN {_first_max(cs, k)} THEN {w} ELSE {self.num(-0.0)} END",
                       frozenset(self.p(f"c{t}_{j}") for j in range(width)), True)
                   for k in range(width)}
        return phases, contrib

    def _finish_contrib(self, t, phases, contrib):
        """float32: round contributions not yet in dtype; SQLite: make each a column."""
        extra = []
        for k, (expr, refs, rounded) in sorted(contrib.items()):
            name = self.p(f"c{t}_{k}r")
            if self.f32 and not rounded:
                if self.d == "duckdb":
                    expr = sd.f32_sum(expr, self.d)  # a CAST; the range was checked
                else:
                    extra.append(Col(name, sd.f32_round(expr, self.d), refs))
                    expr, refs = q(name), frozenset({name})
            elif self.f32 and self.d == "sqlite" and refs and expr != q(next(iter(refs))):
                extra.append(Col(name, expr, refs))
                expr, refs = q(name), frozenset({name})
            contrib[k] = (expr, refs, True)
        return phases + ([extra] if extra else []), contrib

    # --- the whole query ------------------------------------------------------------------

    def build(self, raw: bool) -> list[Output]:
        m, d = self.m, self.d
        acc = {k: (self.num(self.rnd(b)), frozenset()) for k, b in enumerate(m.base_score)}
        plans = [self._finish_contrib(t, *self.tree_plan(t, tree)) for t, tree in enumerate(m.trees)]
        t0 = 0
        while t0 < len(plans):
            t1, width = t0, 0
            while t1 < len(plans) and t1 - t0 < TREES_PER_STEP and (
                    t1 == t0 or width + sum(map(len, plans[t1][0])) <= MAX_PREP_COLUMNS):
                width += sum(map(len, plans[t1][0]))
                t1 += 1
            batch = range(t0, t1)
            label = f"trees {t0}..{t1 - 1}" if t1 - t0 > 1 else f"tree {t0}"
            for j in range(max(len(plans[t][0]) for t in batch)):
                self.steps.append(Step(f"{label}: preparation {j + 1}",
                                       [c for t in batch if j < len(plans[t][0]) for c in plans[t][0][j]]))
            groups = [[t] for t in batch] if (self.f32 and d == "sqlite") else [list(batch)]
            for g in groups:
                step = Step(f"{label}: accumulate" if len(g) > 1 else f"tree {g[0]}: accumulate")
                for k in sorted(set().union(*(plans[t][1] for t in g))):
                    expr, refs = acc[k]
                    for t in g:
                        if k in plans[t][1]:
                            cexpr, crefs, _ = plans[t][1][k]
                            expr, refs = self._add(expr, cexpr), refs | crefs
                    step.cols.append(Col(self.p(f"a{k}"), expr, refs))
                    acc[k] = (q(self.p(f"a{k}")), frozenset({self.p(f"a{k}")}))
                self.steps.append(step)
            t0 = t1
        return self._post(acc, raw)

    def _add(self, acc: str, c: str) -> str:
        if not self.f32:
            return f"{acc}\n+ {c}"
        return sd.f32_sum(f"{acc} + {c}", self.d)

    def _post(self, acc, raw: bool) -> list[Output]:
        m, d, p = self.m, self.d, self.p
        n = m.n_raw
        step = Step("aggregate")
        divisor = {"mean": float(len(m.trees)), "vote": self.rnd(total_weight(m))}.get(m.aggregation)
        for k in range(n):
            expr, refs = acc[k]
            if divisor is not None:
                expr = f"{expr} / {self.num(divisor)}"
                expr = sd.f32_round(expr, d) if self.f32 else expr
            elif refs:
                continue
            elif self.f32 and d != "sqlite":
                expr = f"CAST({expr} AS {sd.float32_type(d)})"
            step.cols.append(Col(p(f"a{k}"), expr, refs))
        self.steps.append(step)
        a = [p(f"a{k}") for k in range(n)]
        r = [sd.to_double(q(x), d) if self.f32 else q(x) for x in a]
        out = self._link(a, r)
        outputs = []
        t = m.target
        if t.task == "classification":
            probs = out
            if n == 1 and len(t.classes) == 2:
                one_minus = f"{self.num(1.0)} - {sd.to_double(q(out[0]), d) if self.f32 else q(out[0])}"
                self.steps.append(Step("probability of the first class", [
                    Col(p("q0"), sd.f32_round(one_minus, d) if self.f32 else one_minus,
                        frozenset({out[0]}))]))
                probs = [p("q0"), out[0]]
            labels = [sql_label(c, d) for c in t.classes]
            ps = [q(x) for x in probs]
            if len(labels) == 1:
                pred = labels[0]
            else:
                arms = [f"WHEN {conjunction([f'{ps[i]} >= {ps[j]}' for j in range(i + 1, len(ps))])}"
                        f" THEN {labels[i]}" for i in range(len(ps) - 1)]
                pred = "CASE " + " ".join(arms) + f" ELSE {labels[-1]} END"
            outputs.append(Output("prediction", pred, frozenset(probs)))
            names = [f"prob_{c}" for c in t.classes]
            if len({x.lower() for x in names}) < len(names):
                raise UnsupportedFeatureError("sql", "two classes whose probability columns "
                                                     "would have the same name")
            outputs += [Output(nm, q(x), frozenset({x})) for nm, x in zip(names, probs)]
        elif n == 1:
            outputs.append(Output("prediction", q(out[0]), frozenset({out[0]})))
        else:
            outputs += [Output(f"prediction_{k}", q(x), frozenset({x})) for k, x in enumerate(out)]
        if raw:
            outputs += [Output(f"raw_{k}", q(x), frozenset({x})) for k, x in enumerate(a)]
        return outputs

    def _link(self, a: list[str], r: list[str]) -> list[str]:
        """Columns holding the link's outputs (in dtype)."""
        m, d, p, num = self.m, self.d, self.p, self.num
        if m.link == "identity":
            return a
        refs = frozenset(a)
        if m.link == "softmax":
            self.steps.append(Step("softmax: maximum", [Col(p("m"), sd.greatest(r, d), refs)]))
            self.steps.append(Step("softmax: exponentials", [
                Col(p(f"e{k}"), sd.exp(f"{x} - {q(p('m'))}", d), refs | {p("m")})
                for k, x in enumerate(r)]))
            e = [q(p(f"e{k}")) for k in range(len(r))]
            total = " + ".join(e)
            cols = [Col(p(f"y{k}"), f"{x} / ({total})", frozenset(p(f"e{j}") for j in range(len(r))))
                    for k, x in enumerate(e)]
        elif m.link == "sigmoid":
            cols = [Col(p(f"y{k}"), f"{num(1.0)} / ({num(1.0)} + {sd.exp('-' + x, d)})", refs)
                    for k, x in enumerate(r)]
        elif m.link == "exp":
            cols = [Col(p(f"y{k}"), sd.exp(x, d), refs) for k, x in enumerate(r)]
        else:
            raise UnsupportedFeatureError("sql", f"link {m.link!r}")
        self.steps.append(Step(f"link: {m.link}", cols))
        y = [c.name for c in cols]
        if not self.f32:
            return y
        self.steps.append(Step("round the outputs to float32", [
            Col(p(f"z{k}"), sd.f32_round(q(x), d), frozenset({x})) for k, x in enumerate(y)]))
        return [p(f"z{k}") for k in range(len(y))]


def _first_max(cols: list[str], k: int) -> str:
    """Condition: column k is the first largest (lowest index on ties)."""
    parts = [f"{cols[k]} > {cols[j]}" for j in range(k)] + \
            [f"{cols[k]} >= {cols[j]}" for j in range(k + 1, len(cols))]
    return conjunction(parts) or "TRUE"

