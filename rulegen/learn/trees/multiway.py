"""A small iterative grower for multiway trees (ID3, CHAID), and what they share.

:func:`grow` pops nodes off an explicit stack, asks a ``choose`` function for a split
and numbers nodes in pre-order, so every child id exceeds its parent's and nothing
recurses. It differs from :class:`rulegen.learn.splits.builder.TreeBuilder` in keeping
CART's stopping rules out (each learner brings its own) and in keeping a per-split
record (the gain, the p-value...) that the estimators expose as ``splits_``.

Routing conventions shared by the multiway learners:

* a child receives the rows of one or more category codes (``MultiwayTest``) or
  of one range of values (``IntervalTest``);
* a branch that only missing values reach is, for a ``MultiwayTest``, an empty
  group; for an ``IntervalTest``, the last child behind a final bound of ``+inf``
  (no value is above ``+inf``, and NaN never compares), reached through
  ``DefaultChild``;
* what the node never saw in training goes to the child with the largest training
  weight, the first one on ties: a missing value where none was seen, and a
  category absent from its rows or a code outside the feature's list (for these,
  the largest child that holds categories, never the missing-only branch).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rulegen.ir.nodes import (
    DefaultChild,
    Leaf,
    Missing,
    MultiwayTest,
    Split,
    Test,
    Tree,
)


@dataclass
class Chosen:
    """A split picked by a learner: its IR test, missing rule and unseen child, the
    row ids of each child (``Split.children`` order), and a record for ``splits_``.
    ``states`` optionally gives each child's private state (ID3: the unused features)."""

    test: Test
    missing: Missing
    unseen: int | None
    child_rows: list[np.ndarray]
    info: dict = field(default_factory=dict)
    states: list | None = None


# summarize(rows) -> (value, samples, distribution, impurity)
Summary = Callable[[np.ndarray], tuple]
# choose(rows, depth, state) -> Chosen | None
Chooser = Callable[[np.ndarray, int, object], "Chosen | None"]


def grow(rows: np.ndarray, summarize: Summary, choose: Chooser, state=None) -> tuple[Tree, dict]:
    """The tree grown from the root's rows, and {node id: info} of its splits."""
    records: list[list] = []  # [summary, chosen, child ids]
    infos: dict[int, dict] = {}
    stack = [(rows, 0, None, 0, state)]
    while stack:
        rows, depth, parent, slot, state = stack.pop()
        nid = len(records)
        if parent is not None:
            records[parent][2][slot] = nid
        chosen = choose(rows, depth, state)
        kids = [] if chosen is None else [None] * len(chosen.child_rows)
        records.append([summarize(rows), chosen, kids])
        if chosen is None:
            continue
        infos[nid] = chosen.info
        states = chosen.states or [state] * len(kids)
        for i in range(len(kids) - 1, -1, -1):  # reversed: child 0 is numbered first
            stack.append((chosen.child_rows[i], depth + 1, nid, i, states[i]))
        chosen.child_rows = chosen.states = None  # the stack holds them now
    nodes = []
    for (value, samples, distribution, impurity), chosen, kids in records:
        if chosen is None:
            nodes.append(Leaf(value=value, samples=samples, distribution=distribution,
                              impurity=impurity))
        else:
            nodes.append(Split(test=chosen.test, children=tuple(kids), missing=chosen.missing,
                               unseen=chosen.unseen, samples=samples, distribution=distribution,
                               impurity=impurity))
    return Tree(nodes=tuple(nodes)), infos


# --- leaf summaries -----------------------------------------------------------------------


def entropy_bits(counts: np.ndarray) -> np.ndarray:
    """Entropy in bits of each row of weighted class counts (0 for an empty row)."""
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    total = counts.sum(axis=1, keepdims=True)
    p = np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)
    logs = np.log2(p, out=np.zeros_like(p), where=p > 0)
    return np.maximum(-(p * logs).sum(axis=1), 0.0)


def class_summary(y: np.ndarray, w: np.ndarray, n_classes: int) -> Summary:
    """Leaves hold class probabilities (weighted frequencies); impurity is the entropy."""

    def summarize(rows):
        counts = np.bincount(y[rows], weights=w[rows], minlength=n_classes)
        total = float(counts.sum())
        value = tuple(float(c / total) for c in counts)
        return value, total, tuple(float(c) for c in counts), float(entropy_bits(counts)[0])

    return summarize


def mean_summary(y: np.ndarray, w: np.ndarray) -> Summary:
    """Leaves hold the weighted mean; impurity is the weighted variance."""

    def summarize(rows):
        ww, yy = w[rows], y[rows]
        total = float(ww.sum())
        mean = float(np.dot(ww, yy) / total)
        var = float(np.dot(ww, (yy - mean) ** 2) / total)
        return (mean,), total, None, var

    return summarize


# --- routing helpers ----------------------------------------------------------------------


def largest(weights) -> int:
    """Index of the heaviest child, the first one on ties."""
    return int(np.argmax(np.asarray(weights, dtype=np.float64)))


def multiway_split(feature: int, groups: list[tuple[int, ...]], missing_group: int | None,
                   weights) -> tuple[MultiwayTest, DefaultChild, int]:
    """Test, missing rule and unseen child for groups of codes (one may be empty: the
    missing-only branch). ``missing_group`` is the group holding missing values, None if
    the node saw none (they then go to the largest child, as unseen codes do)."""
    weights = np.asarray(weights, dtype=np.float64)
    big = largest(weights)
    with_codes = np.array([len(g) > 0 for g in groups])
    unseen = largest(np.where(with_codes, weights, -np.inf))
    test = MultiwayTest(feature, tuple(tuple(int(c) for c in g) for g in groups))
    return test, DefaultChild(big if missing_group is None else missing_group), unseen
