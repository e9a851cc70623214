"""Small text helpers shared by the command modules: messages, suggestions, summaries."""

from __future__ import annotations

import difflib

import click


def forest_option(command):
    """``--forest`` for the commands that read a Spark ML model directory."""
    return click.option(
        "--forest", type=click.Choice(["probability", "votes"]), default=None,
        help="A Spark ML random forest classifier: 'probability' (default) averages the trees' "
             "probabilities (close to Spark's probability), 'votes' sums them (Spark's "
             "rawPrediction, bit for bit).")(command)


def say(msg: str) -> None:
    click.echo(msg, err=True)


def did_you_mean(value, choices) -> str:
    close = difflib.get_close_matches(str(value), list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_value(value, choices) -> str:
    return (f"unknown value {value!r}{did_you_mean(value, choices)}; "
            f"choose one of: {', '.join(sorted(choices))}")


def summary(model) -> str:
    from rulegen.codegen.lower import depth
    from rulegen.ir.nodes import Leaf

    leaves = sum(isinstance(n, Leaf) for t in model.trees for n in t.nodes)
    deepest = max(depth(t) for t in model.trees)
    t = model.target
    what = (f"classification ({len(t.classes)} classes)" if t.task == "classification"
            else f"regression ({t.n_outputs} output{'s' if t.n_outputs > 1 else ''})")
    trees = f"{len(model.trees)} tree{'s' if len(model.trees) > 1 else ''}"
    return f"{what}, {len(model.features)} features, {trees}, {leaves} leaves, depth {deepest}"


def one_line(text: str) -> str:
    return " ".join(str(text).split())
