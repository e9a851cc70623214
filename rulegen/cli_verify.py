"""`rulegen verify`, `explain` and `show`: is the code I ship the model, and why this answer."""

from __future__ import annotations

import csv
import io
import shlex

import click
import numpy as np

from rulegen.cli_util import forest_option, say
from rulegen.errors import DataError


def _data_rows(model, path):
    from rulegen.data import feature_matrix, read_csv

    table = read_csv(path)
    return table, feature_matrix(model, table)


def _origin(report, table, model, i: int) -> str:
    """Where row i of the report came from: a data line or a probe."""
    if i < report.n_data:
        return f"{table.source}:{table.line_of(i)}"
    from rulegen.verify.probes import probe_values

    probes = probe_values(model)
    k = i - report.n_data
    if k >= len(probes):
        return "probe row: every feature missing"
    f, v = probes[k]
    base = k % max(report.n_data, 1)
    return (f"probe row: {model.features[f].name} = {v!r}, the other values from "
            f"{table.source}:{table.line_of(base) if report.n_data else '(none: zeros)'}")


@click.command()
@click.argument("model_path", metavar="MODEL", type=click.Path())
@forest_option
@click.argument("data", metavar="DATA.csv", type=click.Path(dir_okay=False))
@click.option("--target", type=click.Choice(["python", "c", "sql"]), required=True,
              help="The code to check: python (imported here), c (built with --cc) or sql "
                   "(run in --dialect).")
@click.option("--dialect", default="sqlite", type=click.Choice(["sqlite", "duckdb", "postgres"]),
              show_default=True, help="SQL: the engine to run the query in.")
@click.option("--database", default=None,
              help="SQL: a database file (SQLite, DuckDB; default: in memory) or a PostgreSQL "
                   "connection string, to run in with its own settings; the rows go in a "
                   "temporary table, nothing else is touched.")
@click.option("--cc", default=None, help="C compiler (default: $CC, else cc).")
@click.option("--cflags", default=None,
              help="Flags for every C file, as one string (default: "
                   "'-std=c99 -Wall -Wextra -Werror -pedantic -O2'). Give your build's own flags.")
@click.option("--form", default="auto", type=click.Choice(["auto", "nested", "goto", "table"]),
              help="C: the code form to build (as compile --form).")
@click.option("--no-probes", is_flag=True, help="Only the data's rows, not the probe rows.")
def verify(model_path, forest, data, target, dialect, database, cc, cflags, form, no_probes):
    """Build MODEL for a target with your toolchain and check it predicts as the model does.

    Runs the data's rows, and probe rows at every threshold of the model (on it, one float
    step either side in float64 and float32, NaN, +-inf, unseen categories), and compares the
    raw scores, the probabilities or values and the class with rulegen's evaluator bit for
    bit (SQL: float32 links take exp rounded to float32, as the SQL target documents). Exit 0
    when every row agrees; exit 1 at the first row that does not, printing the row, both
    outputs and the row's path through the model (as `rulegen explain`). For a model file
    XGBoost, LightGBM or CatBoost (.cbm) wrote, or an ONNX file, with that library (or
    onnxruntime) installed, the evaluator is also compared with the library's own raw scores
    on the same rows.

    \b
    Examples:
      rulegen verify iris.json examples/iris.csv --target python
      rulegen verify iris.json examples/iris.csv --target sql --dialect duckdb
      rulegen verify iris.json examples/iris.csv --target sql --dialect postgres \\
          --database "dbname=scoring host=localhost"
      rulegen verify iris.json examples/iris.csv --target c --cc clang --cflags "-std=c99 -O3"
      rulegen verify iris.json examples/iris.csv --target c --cflags "-O2 -ffast-math"   # exit 1

    The program is built and run on this machine: a cross compiler's output cannot run here.
    """
    from rulegen.modelio import load_model
    from rulegen.verify import verify as run_verify
    from rulegen.verify.explain import explain

    model = load_model(model_path, forest=forest)
    table, X = _data_rows(model, data)
    options = {"cc": cc, "generate": {"form": form}, "dialect": dialect, "database": database}
    if cflags is not None:
        options["cflags"] = shlex.split(cflags)
    if target != "c" and (cc or cflags or form != "auto"):
        raise click.UsageError("--cc, --cflags and --form are for --target c")
    if target != "sql" and (database or dialect != "sqlite"):
        raise click.UsageError("--dialect and --database are for --target sql")
    report = run_verify(model, X, target, probes=not no_probes, **options)
    n = report.n_data + report.n_probes
    if report.ok:
        click.echo(f"{model_path}: {target}: all {n} rows ({report.n_data} from {data}, "
                   f"{report.n_probes} probes) equal the evaluator bit for bit")
        _against_library(model_path, model, report)
        return
    i = report.first_bad
    click.echo(f"{model_path}: {target}: row {i + 1} of {n} differs ({_origin(report, table, model, i)})")
    click.echo("  " + report.what)
    for line in explain(model, report.rows[i]):
        click.echo("  " + line)
    raise click.exceptions.Exit(1)


def _against_library(model_path, model, report) -> None:
    """For a model file a library wrote (or onnxruntime scores): the evaluator against it."""
    from rulegen.ir import evaluate
    from rulegen.verify import same_bits
    from rulegen.verify.library import library_of, raw_scores

    if library_of(model_path) is None:
        return
    theirs, what = raw_scores(model_path, model, report.rows)
    if theirs is None:
        click.echo(f"{model_path}: not compared with the library: {what}")
        return
    ours = evaluate.raw_scores(model, report.rows).astype(np.float64)
    same = same_bits(ours, theirs, signed_zero=False)
    if same.all():
        click.echo(f"{model_path}: the evaluator equals {what} on all {len(same)} rows")
        return
    i = int(np.flatnonzero(~same)[0])
    click.echo(f"{model_path}: row {i + 1}: the evaluator gives {ours[i].tolist()}, {what} {theirs[i].tolist()}")
    raise click.exceptions.Exit(1)


def _row_from_items(model, items):
    """--row items: name=value pairs, or one CSV line of values in FEATURES order."""
    from rulegen.data import Table, feature_matrix

    names = [f.name for f in model.features]
    values: dict[str, str | None] = {}
    for item in items:
        name, eq, value = item.partition("=")
        if eq and name in names:
            values[name] = value
        elif eq:
            from rulegen.cli_util import did_you_mean

            raise DataError(f"--row {item!r}: the model has no feature {name!r}{did_you_mean(name, names)}")
        else:
            cells = next(csv.reader(io.StringIO(item)))
            if len(cells) != len(names):
                raise DataError(f"--row: {len(cells)} values, the model has {len(names)} features "
                                f"({', '.join(names)}); or give name=value pairs")
            values.update(zip(names, cells))
    missing = [n for n in names if n not in values]
    if missing:
        say(f"not given, so missing: {', '.join(missing)}")
    cells = [[None if values.get(n) in (None, "") else values[n]] for n in names]
    return feature_matrix(model, Table("--row", names, cells, [1]))[0]


@click.command()
@click.argument("model_path", metavar="MODEL", type=click.Path())
@forest_option
@click.option("--row", "row_items", multiple=True, metavar="NAME=VALUE|CSV-LINE",
              help="A feature's value (repeat for each), or all values in feature order as one "
                   "CSV line. An empty value is missing.")
@click.option("--data", type=click.Path(dir_okay=False), help="Take the row from this CSV file.")
@click.option("--index", type=int, default=0, show_default=True,
              help="Which data row of --data (0 is the first after the header).")
def explain(model_path, forest, row_items, data, index):
    """Show how MODEL reaches its prediction for one row.

    For each tree: each test on the row's path with the row's value, the branch taken (and
    why, for a missing or unseen value: default branch, surrogate, or every branch weighted),
    the leaf and what it adds; then the raw sums, the link, and the prediction. The numbers
    are the evaluator's, which every generated target reproduces.

    \b
    Examples:
      rulegen explain iris.json --row sepallength=5.1 --row sepalwidth=3.5 \\
          --row petallength=1.4 --row petalwidth=0.2
      rulegen explain iris.json --row "5.1,3.5,1.4,"          # petalwidth missing
      rulegen explain iris.json --data examples/iris.csv --index 7
    """
    from rulegen.modelio import load_model
    from rulegen.verify.explain import explain as explain_row

    model = load_model(model_path, forest=forest)
    if bool(row_items) == bool(data):
        raise click.UsageError("give the row with --row, or a file with --data (and --index)")
    x = _pick_row(model, row_items, data, index)
    for line in explain_row(model, np.asarray(x)):
        click.echo(line)


def _pick_row(model, row_items, data, index):
    """The row of --row items or of --data at --index (saying which line), or None."""
    if row_items and data:
        raise click.UsageError("give the row with --row or with --data, not both")
    if data:
        table, X = _data_rows(model, data)
        if not 0 <= index < len(X):
            raise DataError(f"--index {index}: {data} has {len(X)} data rows (0 to {len(X) - 1})")
        click.echo(f"{data}:{table.line_of(index)}")
        return X[index]
    return _row_from_items(model, row_items) if row_items else None


@click.command()
@click.argument("model_path", metavar="MODEL", type=click.Path())
@forest_option
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The HTML file to write (one file: no network, no other files).")
@click.option("--row", "row_items", multiple=True, metavar="NAME=VALUE|CSV-LINE",
              help="Highlight this row's path in every tree (as explain --row).")
@click.option("--data", type=click.Path(dir_okay=False), help="Take the row from this CSV file.")
@click.option("--index", type=int, default=0, show_default=True, help="Which data row of --data.")
def show(model_path, forest, output, row_items, data, index):
    """Draw MODEL's trees in one self-contained HTML page.

    Each node shows its test, support, class distribution or value and where a missing value
    goes; splits below depth 3 start closed (click to open), a search opens the way to every
    node whose test names a feature, and an ensemble has a tree picker and a summary (trees,
    depth, leaves, feature use). With a row, its path is highlighted in every tree and each
    tree's contribution is listed. The URL's hash picks a place: page.html#tree=3&search=age.

    \b
    Examples:
      rulegen show iris.json -o iris.html
      rulegen show model.json -o model.html --data data.csv --index 12
    """
    from pathlib import Path

    from rulegen.modelio import load_model, write_files
    from rulegen.show import page

    model = load_model(model_path, forest=forest)
    x = _pick_row(model, row_items, data, index)
    text = page(model, x, title=Path(model_path).name)
    write_files({Path(output): text})
    say(f"wrote {output} ({len(text.encode('utf-8')) // 1024 or 1} KB, {len(model.trees)} tree(s))")
