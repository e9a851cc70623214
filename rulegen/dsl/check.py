"""``check``: what a person should look at after editing a rules file by hand.

Errors stop a file from compiling: syntax, unknown features or categories (all of them,
not just the first), and anything the IR validation rejects, such as a leaf with the
wrong number of values. Warnings do not: a branch no row can reach (a test that
contradicts the path to it, ``x <= 3`` under ``x > 5``), a redundant test (always true
on its path, so its else block is dead), leaf outputs that do not look like
probabilities where the model adds them up as probabilities, and a leaf whose label or
counts a hand edit left out of step (it predicts a class its ``dist`` does not favour, or
``dist`` does not add up to ``n``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rulegen.dsl.parser import analyse
from rulegen.dsl.paths import explore
from rulegen.dsl.printer import condition, label, state_condition
from rulegen.dsl.protos import PSplit
from rulegen.ir.nodes import CategoricalTest, Leaf, Model, NumericTest, Split

PROBABILITY_TOLERANCE = 1e-6  # how far a leaf's probabilities may sum from 1


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error" or "warning"
    message: str
    line: int
    column: int
    source: str = ""

    def __str__(self) -> str:
        where = f"{self.source}:" if self.source else ""
        return f"{where}{self.line}:{self.column}: {self.severity}: {self.message}"


def check(text: str, source: str = "") -> list[Diagnostic]:
    """Diagnostics for a rules file, in file order; an empty list means nothing to report."""
    model, info, problems = analyse(text)
    if problems:
        return [Diagnostic("error", p.message, p.line, p.column, source) for p in problems]
    out: list[Diagnostic] = []
    for t, tree in enumerate(model.trees):
        protos = info.nodes[t]
        for event in explore(model, tree):
            if event[0] == "split":
                _, nid, state, kids, f = event
                out += _split_warnings(model, tree.nodes[nid], protos[nid], state, kids, f, source)
        out += _leaf_warnings(model, t, protos, source)
    out.sort(key=lambda d: (d.line, d.column))
    return out


def _path(model: Model, state: dict, f: int) -> str:
    s = state.get(f)
    said = state_condition(model, f, s) if s is not None else ""
    return f", where the path has {said}" if said else ""


def _split_warnings(model, split: Split, proto: PSplit, state, kids, f, source):
    if f is None:
        return []
    out = []
    why = _path(model, state, f)
    if isinstance(split.test, (NumericTest, CategoricalTest)):
        test = condition(model, split.test)
        line, col = proto.test_pos
        if kids[0] is None:
            out.append(Diagnostic("warning", f"unreachable: '{test}' is never true here{why}, "
                                  "so its block can never run", line, col, source))
        elif kids[1] is None:
            out.append(Diagnostic("warning", f"redundant test: '{test}' always holds here{why}; "
                                  "its else block can never run", line, col, source))
        return out
    for i, kid in enumerate(kids):
        if kid is None:
            line, col = proto.arm_pos[i]
            out.append(Diagnostic("warning", f"unreachable arm: no row gets here{why}",
                                  line, col, source))
    return out


def _probabilities(model: Model) -> bool:
    """Whether leaves are probabilities that the model outputs as they are (or averages)."""
    t = model.target
    if t.task != "classification" or model.link != "identity" or model.aggregation == "vote":
        return False
    if model.aggregation == "sum" and (len(model.trees) != 1 or model.trees[0].weight != 1.0
                                       or any(model.base_score)):
        return False
    return all(tree.output is None for tree in model.trees)


def _leaf_warnings(model: Model, t: int, protos, source: str) -> list[Diagnostic]:
    if not _probabilities(model):
        return []
    out = []
    for nid, node in enumerate(model.trees[t].nodes):
        if not isinstance(node, Leaf):
            continue
        v = node.value
        outside = [x for x in v if not 0.0 <= x <= 1.0]
        total = math.fsum(v)
        if outside:  # (with one value: two classes, the probability of the second)
            what = f"{outside[0]!r} is not a probability (between 0 and 1)"
        elif len(v) > 1 and abs(total - 1.0) > PROBABILITY_TOLERANCE:
            what = f"these probabilities sum to {total!r}, not 1"
        else:
            what = None
        if what:
            line, col = protos[nid].pos
            out.append(Diagnostic("warning", f"leaf output does not fit the task: {what}",
                                  line, col, source))
        elif node.distribution is not None:
            stale = _stale_counts(model, node)
            if stale:
                line, col = protos[nid].pos
                out.append(Diagnostic("warning", stale, line, col, source))
    return out


def _stale_counts(model: Model, leaf: Leaf) -> str | None:
    """What contradicts between a leaf's output and the training counts recorded with it (a
    hand edit that changed one and not the other), or None."""
    classes, dist = model.target.classes, leaf.distribution
    if len(dist) != len(classes):
        return None
    probs = leaf.value if len(leaf.value) == len(classes) else (1.0 - leaf.value[0], leaf.value[0])
    top = max(dist)
    said = max(range(len(probs)), key=lambda k: (probs[k], -k))  # the class the leaf predicts
    counts = "[" + ", ".join(map(_count, dist)) + "]"
    if top > 0 and dist[said] < top:
        return (f"this leaf predicts {label(classes[said])} but its counts dist = {counts} "
                f"favour {label(classes[dist.index(top)])}: a hand edit changed one and not the "
                "other; correct the label or the counts")
    total = math.fsum(dist)
    if leaf.samples is not None and abs(total - leaf.samples) > 1e-9 * max(1.0, leaf.samples):
        return (f"the counts dist = {counts} add up to {_count(total)}, not n = "
                f"{_count(leaf.samples)}: correct n or dist")
    return None


def _count(v: float) -> str:
    """A count as the rules file writes it: 47, not 47.0."""
    return repr(int(v)) if float(v).is_integer() else repr(v)
