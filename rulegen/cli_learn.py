"""The learning commands: `fit` (a CSV to a model) and `prune` (a fitted tree, smaller).

Registered on the `rulegen` group by :mod:`rulegen.cli`; errors follow its rules (one
line, exit 2), raised as ``RulegenError`` or click usage errors.
"""

from __future__ import annotations

import inspect
import json
import sys
import time

import click
import numpy as np

from rulegen.cli_util import did_you_mean, say, summary, unknown_value
from rulegen.errors import DataError, RulegenError
from rulegen.ir.nodes import Leaf


def _learners():
    from rulegen.learn.catalog import CATALOG

    return CATALOG


class _FitCommand(click.Command):
    """`fit --help` ends with every learner and its parameters, read from the catalog so
    that the help cannot drift from the estimators."""

    def format_epilog(self, ctx, formatter):
        from rulegen.learn.catalog import describe

        formatter.write_paragraph()
        formatter.write_text("Algorithms and their parameters (--param NAME=VALUE):")
        with formatter.indentation():
            for line in describe(formatter.width - formatter.current_indent):
                formatter.write(f"{' ' * formatter.current_indent}{line}\n")


# --- fit ------------------------------------------------------------------------------------


def _parse_param(text: str):
    if "=" not in text:
        raise click.BadParameter(f"{text!r}: expected KEY=VALUE, e.g. max_depth=5",
                                 param_hint="--param")
    key, value = text.split("=", 1)
    key, value = key.strip(), value.strip()
    low = value.lower()
    if low in ("none", "null"):
        return key, None
    if low in ("true", "false"):
        return key, low == "true"
    for conv in (int, float):
        try:
            return key, conv(value)
        except ValueError:
            pass
    return key, value


@click.command(cls=_FitCommand)
@click.argument("data", type=click.Path(dir_okay=False))
@click.option("--target", "target_col", required=True, metavar="COLUMN",
              help="The column to predict.")
@click.option("--algorithm", default="cart", show_default=True, metavar="NAME",
              help="Learning algorithm (see the list below).")
@click.option("--task", type=click.Choice(["classification", "regression"]),
              help="Default: classification for a text column or one with at most 10 "
                   "distinct integers, regression otherwise.")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="A learner parameter, repeatable, e.g. --param max_depth=4.")
@click.option("--ignore", "ignored", multiple=True, metavar="COLUMN",
              help="Leave this column out of the features, repeatable (e.g. an id column).")
@click.option("--categorical", "declared", multiple=True, metavar="COLUMN",
              help="Treat this column as categorical even if it looks numeric, repeatable "
                   "(columns that are mostly text are categorical anyway).")
@click.option("--levels", "levels_path", type=click.Path(dir_okay=False), default=None,
              metavar="FILE", help="A JSON object {column: [level, ...]}: these columns are "
                   "categorical with exactly these levels in this order, including levels the "
                   "data does not show (as an ARFF header declares them); for the target, the "
                   "classes (c45 only).")
@click.option("--drop-missing-target", is_flag=True,
              help="Leave out rows whose target cell is empty (default: such a row is an error).")
@click.option("--progress/--no-progress", default=None,
              help="Show a progress bar while an ensemble trains (default: when stderr is a "
                   "terminal).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Where to write the model: a rules file (.rules) or rulegen IR JSON.")
def fit(data, target_col, algorithm, task, params, ignored, declared, levels_path,
        drop_missing_target, progress, output):
    """Fit a tree on a CSV file and save it as a model.

    DATA is a CSV file with a header row; an empty cell is missing. Every column
    except --target is a feature: numeric if all its cells are numbers, categorical if
    most are text (categories: the distinct cells, sorted) or if named by --categorical
    or --levels (categories: exactly the levels given there, in their order).
    A mostly numeric column with a few text cells is an error naming the first one: it
    is more likely a typo than a category.

    \b
    Examples:
      rulegen fit examples/iris.csv --target class --param max_depth=3 -o iris.json
      rulegen fit penguins.csv --target species --ignore year -o penguins.rules
      rulegen fit weather.csv --target play --algorithm c45 -o weather.rules
    """
    from rulegen.data import design_matrix, read_csv, target_column
    from rulegen.modelio import save_model

    learners = _learners()
    if algorithm not in learners:
        raise click.BadParameter(unknown_value(algorithm, learners), param_hint="--algorithm")
    kwargs = dict(_parse_param(p) for p in params)
    table = read_csv(data)
    if drop_missing_target:
        empty = [i for i, v in enumerate(table.cells[table.index(target_col)]) if v is None]
        if empty:
            table = table.without_rows(empty)
            say(f"left out {len(empty)} of {table.n_rows + len(empty)} rows whose "
                f"{target_col!r} is empty")
    levels = _read_levels(levels_path, table) if levels_path else {}
    if target_col in levels:
        if task == "regression":
            raise click.BadParameter(f"{levels_path} declares levels for the target "
                                     f"{target_col!r}, which makes it a class", param_hint="--task")
        task = "classification"
    task, y, classes = target_column(table, target_col, task)
    for name in ignored:
        table.index(name)  # an unknown column is an error that lists the real ones
    cols = [j for j, c in enumerate(table.columns) if c != target_col and c not in ignored]
    if not cols:
        raise RulegenError(f"{data}: no feature columns besides the target {target_col!r}")
    for name in declared:
        if table.index(name) not in cols:
            raise click.BadParameter(f"{name!r} is the target or an ignored column, not a "
                                     "feature", param_hint="--categorical")
    for name in levels:
        if name != target_col and table.index(name) not in cols:
            raise click.BadParameter(f"{levels_path}: {name!r} is an ignored column",
                                     param_hint="--levels")
    X, names, categories = design_matrix(table, cols, (*declared, *levels))
    for k, j in enumerate(cols):
        if table.columns[j] in levels:
            categories[k], X[:, k] = _level_codes(table, j, levels, levels_path)
    with np.errstate(over="ignore"):
        beyond = ~np.isnan(X) & ~np.isfinite(X.astype(np.float32))
    if beyond.any():  # the learners would say so too, but by array index, not by line
        i, k = (int(v) for v in np.argwhere(beyond)[0])
        raise DataError(f"{table.source}:{table.line_of(i)}: column {names[k]!r}: "
                        f"{table.cells[cols[k]][i]!r} is infinite or beyond the float32 range "
                        "(3.4e38); trees learn on float32 values: remove or clip it")
    estimator = _make_estimator(learners[algorithm], task, kwargs)
    # always said, even when empty: ID3 would take undeclared whole-number columns as codes
    extra = {"categorical_features": sorted(categories), "categories": categories or None}
    bar = _Progress(progress if progress is not None else sys.stderr.isatty())
    if "progress" in inspect.signature(estimator.fit).parameters:
        extra["progress"] = bar
    if target_col in levels:
        if "classes" not in inspect.signature(estimator.fit).parameters:
            raise click.BadParameter(f"{levels_path} declares the classes of {target_col!r}, "
                                     f"but {algorithm} cannot take declared classes (c45 can); "
                                     "leave the target out of the file", param_hint="--levels")
        classes, y = _level_codes(table, table.index(target_col), levels, levels_path)
        y = y.astype(np.int64)
        extra["classes"] = list(classes)
    start = time.perf_counter()
    try:
        if task == "classification":
            estimator.fit(X, np.asarray(classes, dtype=object)[y], feature_names=names, **extra)
        else:
            estimator.fit(X, y, feature_names=names, **extra)
    finally:
        bar.close()
    model = estimator.model_
    from rulegen.ir.nodes import Target

    model = _with_target_name(model, target_col, Target)
    save_model(model, output)
    say(f"fitted {algorithm} ({task}) on {table.n_rows} rows x {len(names)} features in "
         f"{time.perf_counter() - start:.2f}s: {summary(model)}; wrote {output}")


def _read_levels(path: str, table) -> dict:
    """--levels FILE: {column: levels}, each a list of distinct strings or integers."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as e:
        raise DataError(f"{path}: cannot read the levels file: {e.strerror}") from None
    except ValueError as e:
        raise DataError(f"{path}: not a JSON levels file ({e})") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object {{\"column\": [\"level\", ...]}}")
    out = {}
    for name, labels in data.items():
        table.index(name)  # an unknown column is an error that lists the real ones
        ok = isinstance(labels, list) and labels and all(
            isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool)) for v in labels)
        text = [str(v) for v in labels] if ok else []
        if not ok or len(set(text)) != len(text):
            raise DataError(f"{path}: the levels of {name!r} must be a list of distinct strings "
                            f"or integers, got {labels!r}")
        ints = all(isinstance(v, int) for v in labels)
        out[name] = tuple(labels) if ints else tuple(text)
    return out


def _level_codes(table, j: int, levels: dict, path: str):
    """(labels, codes) of column j by its declared levels; a cell not among them is an error."""
    labels = levels[table.columns[j]]
    index = {str(v): i for i, v in enumerate(labels)}
    codes = np.full(table.n_rows, np.nan)
    for i, v in enumerate(table.cells[j]):
        if v is None:
            continue
        if v not in index:
            raise DataError(f"{table.source}:{table.line_of(i)}: column {table.columns[j]!r}: "
                            f"{v!r} is not among its levels in {path}")
        codes[i] = index[v]
    return labels, codes


class _Progress:
    """A one-line bar on stderr for learners that report ``progress(done, total)`` (ensembles,
    one call per tree or round); silent when off, e.g. when stderr is not a terminal."""

    def __init__(self, enabled: bool):
        self.enabled, self.shown, self.start = enabled, False, time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        width = 30
        fill = width * done // total
        secs = time.perf_counter() - self.start
        eta = f", about {secs / done * (total - done):.0f}s left" if 0 < done < total else ""
        click.echo(f"\rfitting [{'#' * fill}{'.' * (width - fill)}] {done}/{total} "
                   f"({secs:.1f}s{eta})  ", err=True, nl=False)
        self.shown = True

    def close(self) -> None:
        if self.shown:
            click.echo(err=True)
            self.shown = False


def _make_estimator(info, task: str, kwargs: dict):
    """The learner's classifier or regressor, with parameters checked by name."""
    cls = info.estimator_class(task)
    if cls is None:
        able = [name for name, other in _learners().items() if task in other.tasks]
        raise click.BadParameter(f"{info.name} does {' and '.join(info.tasks)} only, but the "
                                 f"target calls for {task}; use one of {', '.join(able)} "
                                 f"(or --task {info.tasks[0]} if that is what you meant)",
                                 param_hint="--algorithm")
    known = cls().get_params()
    for key in kwargs:
        if key not in known:
            raise click.BadParameter(f"unknown parameter {key!r}{did_you_mean(key, known)}; "
                                     f"{cls.__name__} takes: {', '.join(sorted(known))}",
                                     param_hint="--param")
    return cls(**kwargs)


def _with_target_name(model, name, Target):
    import dataclasses

    t = model.target
    return dataclasses.replace(model, target=Target(t.task, name, t.classes, t.n_outputs))


# --- prune ------------------------------------------------------------------------------------


@click.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.option("--data", type=click.Path(dir_okay=False), default=None,
              help="Validation CSV for reduced-error pruning (rows the tree did not learn from).")
@click.option("--target", "target_col", default=None, metavar="COLUMN",
              help="The target column in --data (default: the model's target name).")
@click.option("--alpha", type=float, default=None,
              help="Cost-complexity pruning with this alpha instead (needs node impurities, "
                   "as CART and QUEST record them).")
@click.option("--path", "show_path", is_flag=True,
              help="Print the cost-complexity pruning path (alpha, impurity, leaves) and exit.")
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              help="Where to write the pruned model (.rules or .json).")
def prune(model_path, data, target_col, alpha, show_path, output):
    """Prune a single-tree MODEL: reduced-error pruning on a validation CSV, or minimal
    cost-complexity pruning at a given alpha.

    Reduced-error pruning turns a subtree into a leaf whenever that does not make the
    validation error (misclassified rows, or squared error) worse, from the leaves up.
    A pruned split predicts what it would as a leaf: its class distribution, or for
    regression the support-weighted mean of its leaves.

    \b
    Examples:
      rulegen prune model.rules --data validation.csv -o pruned.rules
      rulegen prune model.json --path
      rulegen prune model.json --alpha 0.01 -o pruned.json
    """
    from rulegen.data import feature_matrix, read_csv, target_column
    from rulegen.learn.trees import pruning
    from rulegen.modelio import load_model, save_model

    chosen = sum((data is not None, alpha is not None, show_path))
    if chosen != 1:
        raise click.UsageError("choose one of --data (reduced-error), --alpha or --path")
    if not show_path and output is None:
        raise click.UsageError("missing option '-o' / '--output'")
    model = load_model(model_path)
    if show_path:
        path = pruning.cost_complexity_pruning_path(model)
        click.echo("alpha,impurity,leaves")
        for a, imp in zip(path.ccp_alphas, path.impurities):
            leaves = sum(isinstance(n, Leaf) for n in pruning.prune(model, a).trees[0].nodes)
            click.echo(f"{float(a)!r},{float(imp)!r},{leaves}")
        return
    if alpha is not None:
        pruned = pruning.prune(model, alpha)
        how = f"cost-complexity pruning at alpha {alpha!r}"
    else:
        table = read_csv(data)
        name = target_col or model.target.name
        task, y, labels = target_column(table, name, model.target.task)
        X = feature_matrix(model, table)
        if task == "classification":
            y = np.asarray(labels, dtype=object)[y]
        pruned = pruning.reduced_error_prune(model, X, y)
        how = f"reduced-error pruning on {table.n_rows} rows of {data}"
    before = len(model.trees[0].nodes)
    save_model(pruned, output)
    say(f"{how}: {before} -> {len(pruned.trees[0].nodes)} nodes; {summary(pruned)}; "
        f"wrote {output}")
