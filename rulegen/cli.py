"""The command line: a thin click layer over the library.

Every user mistake is one line on stderr and exit code 2; a bug is exit code 1
(set RULEGEN_DEBUG=1 for its traceback). Outputs are written atomically.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import sys
import warnings
from pathlib import Path

import click
import numpy as np

from rulegen import __version__
from rulegen.cli_util import forest_option, one_line, say, summary, unknown_value
from rulegen.errors import DSLSyntaxError, RulegenError
from rulegen.targets.sql.dialects import DIALECTS as _DIALECTS

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT = 0, 1, 2


def _targets():
    from rulegen.codegen.registry import TARGETS

    return TARGETS


@contextlib.contextmanager
def _notes_as_lines():
    """An importer's ImportNote warning (what it reproduces only within a measured bound) is
    printed as one ``note:`` line on stderr, every time, while a command runs."""
    from rulegen.errors import ImportNote

    with warnings.catch_warnings():
        warnings.simplefilter("always", ImportNote)
        shown = warnings.showwarning

        def show(message, category, *args, **kwargs):
            if issubclass(category, ImportNote):
                say(f"note: {one_line(str(message))}")
            else:
                shown(message, category, *args, **kwargs)

        warnings.showwarning = show
        yield


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="rulegen")
@click.pass_context
def cli(ctx):
    """rulegen: compile decision trees to exact, dependency-free Python, C, SQL, Go, Java,
    JavaScript and Rust.

    \b
    Typical use:
      rulegen fit data.csv --target species -o model.json
      rulegen compile model.json --target c -o build/
      rulegen predict model.json data.csv -o predictions.csv
      rulegen verify model.json data.csv --target c
      rulegen explain model.json --data data.csv --index 0
      rulegen show model.json -o model.html

    Exit codes: 0 success, 2 bad input or usage, 1 internal error.
    """
    ctx.with_resource(_notes_as_lines())


# --- fit, prune: rulegen/cli_learn.py ---------------------------------------------------------


def _add_learning_commands():
    from rulegen.cli_learn import fit, prune

    cli.add_command(fit)
    cli.add_command(prune)


_add_learning_commands()


def _add_verify_commands():  # rulegen/cli_verify.py
    from rulegen.cli_verify import explain, show, verify

    cli.add_command(verify)
    cli.add_command(explain)
    cli.add_command(show)


_add_verify_commands()


# --- compile ---------------------------------------------------------------------------------


@cli.command(name="compile")
@forest_option
@click.argument("model_path", metavar="MODEL", type=click.Path())
@click.option("--target", "target", required=True, metavar="TARGET",
              help="python, c, sql, go, java, javascript or rust.")
@click.option("--dialect", default=None, metavar="DIALECT",
              help="SQL dialect: " + ", ".join(f"{d}{' (default)' if i == 0 else ''}"
                                               for i, d in enumerate(_DIALECTS)) + ".")
@click.option("--name", default=None, help="Name of the generated function family / module "
              "(default: the model file's name).")
@click.option("--table", default="data", show_default=True, help="SQL: the table to select from.")
@click.option("--expressions-only", is_flag=True,
              help="SQL: emit only the output columns, one self-contained scalar subquery each, "
                   "to paste into your own SELECT (each computes only what its column needs).")
@click.option("--keep", "kept", multiple=True, metavar="COLUMN",
              help="SQL: also return this column of the table (a key, a label), repeatable.")
@click.option("--form", type=click.Choice(["auto", "nested", "goto", "table"]), default=None,
              help="C and Go: how trees are written. nested if/else reads best; goto handles any depth; "
                   "table (constant node arrays and a loop) compiles fastest and runs fastest for "
                   "big trees and ensembles. Default auto chooses by size (with --precision float32: "
                   "table wherever it applies, the smallest in flash).")
@click.option("--precision", type=click.Choice(["float64", "float32"]), default=None,
              help="C: float64 (default) reads double rows; float32 is the firmware profile: "
                   "float rows, float thresholds and sums, no double arithmetic (a single-"
                   "precision FPU runs it in hardware). Routing stays exact; a model that sums in "
                   "double gets a bound stated in NAME.h.")
@click.option("--positive-only", is_flag=True,
              help="C, binary classifiers: NAME_predict gives P(class 1) alone, computed from one "
                   "score (half the leaf data and additions for a scikit-learn forest).")
@click.option("--leaves", is_flag=True,
              help="C: also write NAME_predict_leaves(x, leaves), the node id of the leaf a row "
                   "reaches in each tree (exact in both precisions).")
@click.option("--batch-block", type=click.IntRange(1, 4096), default=None, metavar="ROWS",
              help="C: rows per block of NAME_predict_batch (default 64); its stack grows with "
                   "it. A one-tree model with categorical splits scores a row at a time.")
@click.option("--rows", type=click.Choice(["any", "floats"]), default=None,
              help="Python: what rows the functions take. any (default): a sequence or mapping "
                   "of any numbers, checked and converted with float(). floats: a list or tuple "
                   "of floats or ints (numpy float32/float64 scalars too) in FEATURES order, read "
                   "as it is with no length check: faster, as exact for those values (numeric "
                   "models; others keep any).")
@click.option("--no-comments", is_flag=True, help="Leave out provenance comments "
              "(leaf ids, support counts).")
@click.option("-o", "--output", default=None, type=click.Path(),
              help="Output file (python, sql, javascript, rust) or directory (c, go, java; a "
                   "path ending in .c or .h names the C files, one ending in .go or .java the "
                   "file). Default: NAME.py / NAME.sql / NAME.mjs / NAME.rs / the current directory.")
def compile_(model_path, forest, target, dialect, name, table, expressions_only, kept, form,
             precision, positive_only, leaves, batch_block, rows, no_comments, output):
    """Compile MODEL to standalone code with no runtime dependency.

    MODEL is a rules file, rulegen IR JSON (as written by `rulegen fit` or `rulegen
    convert`), an XGBoost model (JSON or UBJSON) or a LightGBM text model, detected from
    the content, or the directory a Spark ML tree model was saved to.

    \b
    Examples:
      rulegen compile iris.json --target python -o iris_model.py
      rulegen compile iris.json --target c -o build/        # build/iris.h, build/iris.c
      rulegen compile iris.json --target go -o iris/        # iris/iris.go, package iris
      rulegen compile xgb.json --target c --precision float32 -o fw/   # Cortex-M4F
      rulegen compile iris.json --target java -o src/Iris.java   # class Iris
      rulegen compile iris.json --target javascript -o iris.mjs  # an ES module
      rulegen compile iris.json --target sql --dialect duckdb --table flowers -o iris.sql
      rulegen compile iris.json --target rust -o src/iris.rs
      rulegen compile iris.json --target sql --dialect spark --expressions-only -o cols.sql
                                        # items for df.selectExpr(...) in PySpark

    \b
    C: NAME_predict(const double *x, double *out), NAME_predict_class(x) and
       NAME_predict_batch(X, n, out); missing is NaN, categories are codes (listed in
       NAME.h). Compile with any C99 compiler. --precision float32: the same with float.
    Python: predict(row), predict_proba(row); standard library only. --rows floats
       takes lists of floats as they are (m2cgen's contract), about 1.6x faster on one tree.
    Go: package NAME with Predict(x, out), PredictClass(x), PredictRaw(x, raw) and
       PredictBatch(X, out) on []float64 rows; NaN is missing, categories are codes.
       Links with exp use Go's math.Exp (within 2 ulps of the evaluator; raw is exact).
    Java: one class (NAME.java, Java 11): predict(x), predictProba(x), predictRaw(x) and batch
       forms; missing is NaN (or null in a Double[]), categories are codes.
    JavaScript: an ES module (NAME.mjs): predict(row), predictProba(row), predictRaw(row),
       predictBatch(rows); null, undefined or NaN is missing, categories are codes.
    Rust: NAME.rs, one module with no crates: predict(&x), predict_class(&x),
       predict_batch(xs, out); missing is NaN (predict_opt: None), categories are codes.
    SQL: SELECT <features>, prediction, prob_<class>... FROM TABLE (--keep adds other
    columns, such as a key); NULL is missing, and NaN where the engine has it. One nested
    CASE per tree; the header says how to run a big model (PostgreSQL: SET jit = off;
    DuckDB: SET disabled_optimizers = 'common_subexpressions').
    """
    from rulegen.codegen.literals import c_identifier
    from rulegen.codegen.registry import generate
    from rulegen.modelio import load_model, write_files

    targets = _targets()
    if target not in targets:
        raise click.BadParameter(unknown_value(target, targets), param_hint="--target")
    options: dict = {"comments": not no_comments}
    spec = targets[target]
    if spec.dialects:
        dialect = dialect or spec.dialects[0]
        if dialect not in spec.dialects:
            raise click.BadParameter(unknown_value(dialect, spec.dialects), param_hint="--dialect")
        options.update(dialect=dialect, table=table, expressions_only=expressions_only,
                       passthrough=list(kept))
    elif dialect or kept:
        flag = "--dialect" if dialect else "--keep"
        raise click.BadParameter(f"{flag} applies to the sql target only, not {target!r}",
                                 param_hint=flag)
    if form is not None and target == "go":
        options["form"] = form
        form = None
    c_only = {"--form": ("form", form), "--precision": ("precision", precision),
              "--positive-only": ("positive_only", positive_only or None),
              "--leaves": ("leaves", leaves or None),
              "--batch-block": ("batch_block", batch_block)}
    for flag, (key, value) in c_only.items():
        if value is None:
            continue
        if target != "c":
            which = "the c and go targets" if flag == "--form" else "the c target"
            raise click.BadParameter(f"{flag} applies to {which} only, not {target!r}",
                                     param_hint=flag)
        options[key] = value
    if rows is not None:
        if target != "python":
            raise click.BadParameter(f"--rows applies to the python target only, not {target!r}",
                                     param_hint="--rows")
        options["rows"] = rows
    model = load_model(model_path, forest=forest)
    out_dir, base = _output_place(target, output)
    name = name or base or c_identifier(Path(model_path).stem)
    files = generate(model, target, name=name, **options)
    if target not in _DIR_TARGETS and output and len(files) == 1:
        dests = {Path(output): next(iter(files.values()))}
    else:
        dests = {out_dir / fname: text for fname, text in files.items()}
    if target in _DIR_TARGETS and output and not _names_files(target, output):
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RulegenError(f"{out_dir}: cannot create directory: {e.strerror or e}") from None
    write_files(dests)
    say(f"wrote {', '.join(str(p) for p in dests)}")


# Targets that write into a directory, and the file endings that name their file(s) instead.
_DIR_TARGETS = {"c": (".c", ".h"), "go": (".go",), "java": (".java",)}


def _names_files(target: str, output: str) -> bool:
    return output.endswith(_DIR_TARGETS[target])


def _output_place(target: str, output: str | None) -> tuple[Path, str | None]:
    if output is None:
        return Path("."), None
    p = Path(output)
    if target in _DIR_TARGETS:  # a directory, or the file (java: named after its class)
        return (p.parent, p.stem) if _names_files(target, output) else (p, None)
    return p.parent, p.stem


# --- convert ---------------------------------------------------------------------------------


@cli.command()
@click.argument("source", metavar="IN", type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Where to write: a rules file (.rules), a standard model file that other "
              "runtimes score (docs/INTERCHANGE.md) or rulegen IR JSON (anything else).")
@click.option("--flat", is_flag=True, help="Rules output: one IF ... THEN rule per leaf, for "
              "reading (a view: rulegen cannot read it back).")
@click.option("--approximate", is_flag=True, help="Standard model files: write what the format "
              "can only approximate instead of refusing, and say what and by how much.")
@forest_option
def convert(source, output, flat, approximate, forest):
    """Convert a model between formats: to a rules file (.rules), to IR JSON, or to a standard
    model file that other runtimes score.

    IN may be a rules file, rulegen IR JSON, an XGBoost model (JSON or UBJSON) or a
    LightGBM text model; the format is detected from the content. The result predicts
    exactly what IN predicts (docs/IMPORTERS.md lists the few measured exceptions for
    imported models' probabilities); a standard format that cannot say something exactly is
    refused with the reason, unless --approximate is given.

    \b
    Examples:
      rulegen convert xgb_model.json -o model.rules     # read, review, edit by hand
      rulegen convert model.rules -o model.json
      rulegen convert model.json -o flat.rules --flat   # one rule per leaf
    """
    from rulegen.exporters import EXPORTERS
    from rulegen.modelio import load_model, save_model

    if flat and not output.endswith(".rules"):
        raise click.BadParameter("--flat writes the rules language; name the output *.rules",
                                 param_hint="--flat")
    exported = Path(output).suffix.lower() in EXPORTERS
    if approximate and not exported:
        raise click.BadParameter("only standard model files (" + ", ".join(sorted(EXPORTERS))
                                 + ") can be approximate; IR JSON and rules are always exact",
                                 param_hint="--approximate")
    model = load_model(source, forest=forest)
    notes = save_model(model, output, flat=flat, approximate=approximate)
    for note in notes:  # a link's line says what the scorer's own exp does: a note either way
        kind = "approximate" if approximate and not note.startswith("link ") else "note"
        say(f"{output}: {kind}: {note}")
    say(f"{source}: {summary(model)}; wrote {output}")


# --- predict ---------------------------------------------------------------------------------


@cli.command()
@click.argument("model_path", metavar="MODEL", type=click.Path())
@click.argument("data", type=click.Path(dir_okay=False))
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              help="Write predictions to this CSV file (default: standard output).")
@click.option("--strict-categories", is_flag=True,
              help="Refuse a category value the model does not list (default: predict with the "
                   "model's route for unseen values and say how many there were).")
@forest_option
def predict(model_path, data, output, strict_categories, forest):
    """Predict with MODEL on a CSV file using the reference evaluator.

    Writes one row per input row: `prediction`, then for classifiers one
    `prob_<class>` column per class. These are the numbers every generated
    target reproduces exactly. A category value the model never saw (a typo
    such as 'parnets') takes the model's route for unseen values; standard
    error gets one line per column that had any, or, with
    --strict-categories, the run stops there (exit 2).

    \b
    Example:
      rulegen predict iris.json examples/iris.csv -o predictions.csv
    """
    from rulegen.data import feature_matrix, read_csv
    from rulegen.errors import DataError
    from rulegen.ir import evaluate
    from rulegen.modelio import load_model, write_files

    model = load_model(model_path, forest=forest)
    table, unseen = read_csv(data), []
    X = feature_matrix(model, table, unseen)
    if unseen and strict_categories:
        raise DataError(unseen[0].message(table.source) + " (--strict-categories)")
    for u in unseen:
        say(u.message(table.source) + "; they take the model's route for unseen values")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    t = model.target
    if t.task == "classification":
        proba = evaluate.predict_proba(model, X)
        labels = np.asarray(t.classes, dtype=object)[np.argmax(proba, axis=1)]
        w.writerow(["prediction"] + [f"prob_{c}" for c in t.classes])
        for label, row in zip(labels, proba):
            w.writerow([label] + [repr(float(v)) for v in row])
    else:
        values = evaluate.predict_value(model, X)
        heads = ["prediction"] if values.shape[1] == 1 else [f"prediction_{k}"
                                                              for k in range(values.shape[1])]
        w.writerow(heads)
        for row in values:
            w.writerow([repr(float(v)) for v in row])
    if output:
        write_files({Path(output): buf.getvalue()})
        say(f"wrote {len(X)} predictions to {output}")
    else:
        click.echo(buf.getvalue(), nl=False)


# --- check -----------------------------------------------------------------------------------


@cli.command()
@click.argument("model_path", metavar="MODEL", type=click.Path())
@forest_option
def check(model_path, forest):
    """Validate MODEL and summarise it; for a rules file, also look for mistakes.

    For a rules file, every finding is printed as FILE:LINE:COLUMN: severity: message —
    errors (syntax, unknown features or categories, invalid values) and warnings
    (unreachable branches, tests that are always true on their path, leaf outputs that do
    not fit the task). Exit code 2 if there is any error, 0 otherwise.

    \b
    Examples:
      rulegen check model.json
      rulegen check model.rules
    """
    from rulegen.modelio import detect_format, load_model

    path = Path(model_path)
    text = None
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        pass
    if text is not None and detect_format(text) == "rules":
        from rulegen import dsl

        findings = dsl.check(text, source=str(path))
        for d in findings:
            click.echo(one_line(str(d)))
        errors = sum(d.severity == "error" for d in findings)
        if errors:
            raise click.exceptions.Exit(EXIT_BAD_INPUT)
        model = dsl.parse(text, source=str(path))
        warnings = len(findings)
        click.echo(f"{model_path}: ok{f' ({warnings} warnings)' if warnings else ''}: "
                   f"{summary(model)}")
        return
    model = load_model(model_path, forest=forest)
    click.echo(f"{model_path}: ok: {summary(model)}")


# --- entry point ------------------------------------------------------------------------------


_NO_ARGS = getattr(click.exceptions, "NoArgsIsHelpError", ())


def main(argv=None) -> int:
    prog = "rulegen"
    try:
        # without standalone mode click returns (not raises) the code of a ctx.exit / Exit
        code = cli.main(args=argv, prog_name=prog, standalone_mode=False)
        return code if isinstance(code, int) else EXIT_OK
    except _NO_ARGS as e:  # bare `rulegen` or `rulegen fit`: show the help
        click.echo(e.ctx.get_help() if e.ctx else str(e))
        return EXIT_OK
    except click.UsageError as e:
        cmd = f"{prog} {e.ctx.info_name}" if e.ctx and e.ctx.info_name != prog else prog
        say(f"{cmd}: error: {one_line(e.format_message())} (see '{cmd} --help')")
        return EXIT_BAD_INPUT
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.Abort:
        say(f"{prog}: aborted")
        return EXIT_BAD_INPUT
    except click.ClickException as e:
        say(f"{prog}: error: {one_line(e.format_message())}")
        return EXIT_BAD_INPUT
    except RulegenError as e:
        # the first line is the whole message; a rules-file error adds the source line and a
        # caret under the column, as compilers do
        first, *context = str(e).split("\n")
        say(f"{prog}: error: {one_line(first)}")
        if isinstance(e, DSLSyntaxError) and context:
            say("\n".join(line.rstrip() for line in context if line.strip()))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        say(f"{prog}: interrupted")
        return 130
    except Exception as e:  # a bug: say so plainly, keep the traceback for debugging
        if os.environ.get("RULEGEN_DEBUG"):
            raise
        say(f"{prog}: internal error: {type(e).__name__}: {one_line(str(e))} "
             "(this is a bug; rerun with RULEGEN_DEBUG=1 for the traceback and report it)")
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
