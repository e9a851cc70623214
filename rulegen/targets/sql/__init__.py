"""SQL target: one query that scores every row of a table, exact in every engine.

``SqlTarget().generate(model, dialect=..., table=...)`` returns ``{"<name>.sql": text}``:
a ``WITH`` chain of steps ending in a SELECT that returns the ``passthrough`` columns (e.g.
a key) and the feature columns unchanged, then ``prediction`` (``prediction_<k>`` for
multi-output regression), for classifiers ``prob_<label>`` per class, and with ``raw=True``
the accumulators ``raw_<k>`` before the link (after mean / vote division). Numbers come
back as doubles (a float32 model's outputs hold its float32 values exactly). ``table`` is
one name, or a sequence of parts for a qualified name (``("analytics", "customers")``);
every name is quoted. NULL is missing; where the engine has NaN, NaN is missing too.

``expressions_only=True`` returns instead a SELECT-list fragment with the same output
columns (without the inputs), one ``(<scalar subquery>) AS "<column>"`` per line, separated
by commas. Each subquery is self-contained: a ``WITH`` chain whose first step reads the
feature columns of the enclosing query's current row by their unqualified, quoted names, so
``SELECT t.*, <fragment> FROM my_table AS t`` works. Each item recomputes what it needs;
prefer the full query when selecting many columns. ClickHouse refuses this form: its
correlated subqueries give NULL for rows with a NULL input (dialects/clickhouse.py).

A dialect may end a big full query with a clause of settings it needs
(``Dialect.settings``: ClickHouse's ``SETTINGS max_query_size = ...``); the header says so.

The shape, in the order a model goes through it: :mod:`.query` (inputs, accumulation,
link, outputs) -> :mod:`.trees` (one nested CASE per tree) -> :mod:`.routing` (each split's
arms) -> :mod:`.dialects` (the engine's spelling and limits) -> :mod:`.plan` (steps,
liveness, fences) -> ``templates/sql``. C4.5's blended trees take :mod:`.blend` instead.
"""

from __future__ import annotations

from rulegen.codegen.jinja import render
from rulegen.codegen.literals import sql_comment
from rulegen.errors import RulegenError, UnsupportedFeatureError
from rulegen.ir.nodes import Model
from rulegen.targets.base import Target
from rulegen.targets.sql.dialects import DIALECTS, Dialect
from rulegen.targets.sql.inline import inline
from rulegen.targets.sql.plan import Output, render_steps
from rulegen.targets.sql.query import Query


class SqlTarget(Target):
    name = "sql"
    description = "a SELECT scoring every row of a table (" + ", ".join(d.title for d in DIALECTS.values()) + ")"
    dialects = tuple(DIALECTS)

    def generate(self, model: Model, *, name: str = "model", dialect: str = "sqlite",
                 table="data", expressions_only: bool = False, raw: bool = False,
                 comments: bool = True, passthrough=(), **options) -> dict[str, str]:
        if dialect not in DIALECTS:
            raise RulegenError(f"unknown SQL dialect {dialect!r}; choose one of: "
                               f"{', '.join(DIALECTS)}")
        if options:
            raise RulegenError(f"unknown SQL target option(s): {', '.join(sorted(options))}")
        d = DIALECTS[dialect]
        if expressions_only and d.no_correlated_subqueries:
            raise UnsupportedFeatureError("sql", f"expressions_only in {d.title}: "
                                                 f"{d.no_correlated_subqueries}")
        passthrough = [str(p) for p in passthrough]
        originals = passthrough + [f.name for f in model.features]
        parts = [table] if isinstance(table, str) else [str(t) for t in table]
        query = Query(model, d, originals + parts, comments)
        outputs = query.build(raw)
        _check_names(d, originals, [o.alias for o in outputs], expressions_only)
        header = _header(model, d, query.nodes_written) if comments else []
        if expressions_only:
            items = []
            for o in outputs:
                if not d.correlated_steps:
                    items.append({"steps": [], "expr": inline(query.steps, o, d, len(model.trees)),
                                  "alias": d.quote(o.alias)})
                    continue
                steps, _ = render_steps(query.steps, [o], originals, query.prefix, comments, d.fence,
                                         d.fence_cost, d.quote, d.fence_wrap)
                items.append({"steps": steps, "expr": o.expr, "alias": d.quote(o.alias)})
            text = render("sql/expressions.j2", {"header": header, "items": items})
        else:
            keep = [Output(n, d.quote(n), frozenset({n})) for n in originals]
            steps, finals = render_steps(query.steps, keep + outputs, originals, query.prefix,
                                         comments, d.fence, d.fence_cost, d.quote, d.fence_wrap)
            source = ".".join(map(d.quote, parts))
            cap = d.max_with_steps
            while cap and len(steps) > cap:  # the first runs nest as derived tables
                source = render("sql/group.j2", {"steps": steps[:cap], "source": source}).strip()
                steps = steps[cap:]
            context = {"header": header, "steps": steps, "finals": finals,
                       "table": source, "settings": ""}
            text = render("sql/query.j2", context)
            # settings the engine needs for a query of this size (ClickHouse's max_query_size)
            settings = d.settings(len(text.encode("utf-8")), len(steps))
            if settings:
                notes = [sql_comment(x) for x in d.settings_notes(settings)] if comments else []
                text = render("sql/query.j2", dict(context, settings=settings, header=header + notes))
        return {f"{name}.sql": text}


def _check_names(d: Dialect, inputs: list[str], outputs: list[str], expressions_only: bool):
    """Refuse names the engine would merge: SQLite and DuckDB compare them without case, and
    PostgreSQL cuts them at 63 bytes; a clash would hide a column or read the wrong one."""
    def key(n: str) -> str:
        return d.column_name(n).lower()

    seen: dict[str, str] = {}
    for n in inputs:
        problem = d.column_problem(n)
        if problem:
            raise RulegenError(f"the column {n!r} cannot exist in {d.title}: a column name "
                               f"{problem}; rename it")
        if key(n) in seen and seen[key(n)] != n:
            raise RulegenError(f"the columns {seen[key(n)]!r} and {n!r} have the same name in "
                               f"{d.title} ({d.column_name(n)!r}); rename one of them")
        seen[key(n)] = n
    outs: dict[str, str] = {}
    for n in outputs:
        if key(n) in outs:
            raise RulegenError(f"the output columns {outs[key(n)]!r} and {n!r} have the same name "
                               f"in {d.title} ({d.column_name(n)!r}); rename those classes")
        outs[key(n)] = n
        if not expressions_only and key(n) in seen:
            raise RulegenError(f"the output column {n!r} would have the same name as the input "
                               f"column {seen[key(n)]!r}; rename that feature, or use "
                               "expressions_only and alias the outputs")


def _header(model: Model, d: Dialect, n_nodes: int) -> list[str]:
    t = model.target
    lines = [(f"rulegen SQL ({d.name}): {t.task} of {t.name!r}, {len(model.trees)} tree(s), "
              f"aggregation {model.aggregation}, link {model.link}, dtype {model.dtype}"),
             "features: " + ", ".join(f"{f.name!r} ({f.kind})" for f in model.features)]
    if t.task == "classification":
        lines.append("classes: " + ", ".join(repr(c) for c in t.classes))
    lines.append("NULL is missing" + ("; NaN is missing too" if d.has_nan else ""))
    if rounded_exp(model):
        lines.append("the float32 link's exp is computed in double and rounded to float32: SQL has "
                     "no expf. glibc's expf differs from that on about 1 in 13,000 inputs, so a "
                     "probability can be one float32 ulp from XGBoost's (docs/IMPORTERS.md)")
    if d.exp_note and model.link != "identity" and not Query.folds_outputs(model):
        lines.append(d.exp_note)
    lines += d.notes(n_nodes)
    return [sql_comment(x) for x in lines]


def rounded_exp(model: Model) -> bool:
    """Whether the query computes a float32 link's ``expf`` as exp rounded to float32 (docs/IR.md):
    true for ensembles; one tree's outputs are the evaluator's, folded in at generation."""
    return (model.dtype == "float32" and model.link != "identity"
            and not Query.folds_outputs(model))
