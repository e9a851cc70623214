"""The intermediate representation: frozen, slotted records with no logic.

Every learner, importer and parser produces a :class:`Model`; every printer,
evaluator and code generator consumes one. The exact meaning of each field is
specified in ``docs/IR.md``; :mod:`rulegen.ir.evaluate` is its executable form.

A tree is a flat tuple of nodes addressed by integer id. Node 0 is the root and
every child id is greater than its parent's id, so any walk is a loop over ids,
never a recursion.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Union

FORMAT_VERSION = 1

# Vocabularies, spelled exactly as they appear in IR JSON.
TASKS = ("classification", "regression")
FEATURE_KINDS = ("numeric", "categorical")
OPS = ("<", "<=")
DTYPES = ("float64", "float32")
AGGREGATIONS = ("sum", "mean", "vote")
LINKS = ("identity", "sigmoid", "softmax", "exp")

Label = Union[str, int]


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    kind: str = "numeric"
    categories: tuple[Label, ...] = ()  # categorical only; code i means categories[i]
    description: str = ""


@dataclass(frozen=True, slots=True)
class Target:
    task: str
    name: str = "target"
    classes: tuple[Label, ...] = ()  # classification labels, in output order
    n_outputs: int = 1  # regression outputs; 1 for classifiers


# --- split tests: what a split asks of a row ---------------------------------


@dataclass(frozen=True, slots=True)
class NumericTest:
    """``x OP threshold`` compared in ``dtype``; true takes children[0]."""

    feature: int
    op: str
    threshold: float
    dtype: str = "float64"


@dataclass(frozen=True, slots=True)
class CategoricalTest:
    """``code(x) in categories``; true takes children[0] (the set side)."""

    feature: int
    categories: tuple[int, ...]  # sorted category codes


@dataclass(frozen=True, slots=True)
class IntervalTest:
    """Multiway numeric split: children[i] takes the first i with ``x OP bounds[i]``;
    the last child takes rows above every bound (so there are len(bounds)+1 children)."""

    feature: int
    op: str
    bounds: tuple[float, ...]  # strictly increasing
    dtype: str = "float64"


@dataclass(frozen=True, slots=True)
class MultiwayTest:
    """Multiway categorical split: children[i] takes the codes in groups[i]."""

    feature: int
    groups: tuple[tuple[int, ...], ...]  # disjoint, each sorted


@dataclass(frozen=True, slots=True)
class ObliqueTest:
    """``sum(weights[i] * x[features[i]]) OP threshold`` in float64, summed in order;
    true takes children[0]. Missing if any input is missing."""

    features: tuple[int, ...]
    weights: tuple[float, ...]
    op: str
    threshold: float


Test = Union[NumericTest, CategoricalTest, IntervalTest, MultiwayTest, ObliqueTest]
BinaryTest = Union[NumericTest, CategoricalTest, ObliqueTest]


# --- what a split does with a missing value -----------------------------------


@dataclass(frozen=True, slots=True)
class DefaultChild:
    """Missing goes to children[child] (XGBoost, LightGBM, scikit-learn; also
    CHAID's missing-as-its-own-branch, where that child receives only missing)."""

    child: int


@dataclass(frozen=True, slots=True)
class Surrogate:
    """A stand-in test (rpart): when it holds, go to children[child_if_true],
    otherwise to the other child. Skipped when its own feature is missing."""

    test: BinaryTest
    child_if_true: int
    agreement: float | None = None  # provenance only


@dataclass(frozen=True, slots=True)
class Surrogates:
    """Try each surrogate in order; if all are missing, go to children[default]."""

    surrogates: tuple[Surrogate, ...]
    default: int


@dataclass(frozen=True, slots=True)
class Blend:
    """C4.5: a missing row follows every child, weighted by weights[i]."""

    weights: tuple[float, ...]


Missing = Union[DefaultChild, Surrogates, Blend]


# --- nodes ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Split:
    test: Test
    children: tuple[int, ...]  # node ids, each greater than this node's id
    missing: Missing
    unseen: int | None = None  # child index for categories outside the feature's list
    samples: float | None = None  # support seen in training (provenance only)
    distribution: tuple[float, ...] | None = None
    impurity: float | None = None  # training impurity here (pruning needs it)
    comment: str | None = None  # a person's note (rules files keep it); never affects predictions


@dataclass(frozen=True, slots=True)
class Leaf:
    value: tuple[float, ...]  # length 1 if the tree has an ``output`` index, else n_raw
    samples: float | None = None  # training rows (weighted, may be fractional)
    distribution: tuple[float, ...] | None = None  # per-class weighted counts
    impurity: float | None = None
    comment: str | None = None


Node = Union[Split, Leaf]


@dataclass(frozen=True, slots=True)
class Tree:
    nodes: tuple[Node, ...]
    output: int | None = None  # scalar leaves add to raw[output]; None: full vector
    weight: float = 1.0  # contribution multiplier (learning rate, vote weight)
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class Provenance:
    algorithm: str = ""
    params: tuple[tuple[str, object], ...] = ()  # sorted (name, JSON scalar) pairs
    library: str = ""  # who trained it, e.g. "rulegen 0.1.0", "xgboost 3.0.2"
    n_samples: int | None = None
    n_features: int | None = None


@dataclass(frozen=True, slots=True)
class Model:
    features: tuple[Feature, ...]
    target: Target
    trees: tuple[Tree, ...]
    base_score: tuple[float, ...]  # one per raw output; its length is n_raw
    aggregation: str = "sum"
    link: str = "identity"
    dtype: str = "float64"  # accumulation (and final output) type
    provenance: Provenance = field(default_factory=Provenance)
    comment: str | None = None

    @property
    def n_raw(self) -> int:
        return len(self.base_score)


def nodes_in_bulk(cls, count: int, **columns) -> list:
    """``count`` new ``cls`` nodes (:class:`Leaf` or :class:`Split`), their fields set from
    ``columns`` (one sequence per field) a field at a time; a field left out is None in
    every node, its default. Equal to, and hashing as, ``cls(...)``'s nodes. For learners
    making thousands of nodes a tree: a frozen dataclass's ``__init__`` sets each field
    through ``object.__setattr__``, slower than all the rest of making a node."""
    objs = list(map(object.__new__, [cls] * count))
    for f in fields(cls):
        column = columns.get(f.name)
        setter = getattr(cls, f.name).__set__
        any(map(setter, objs, [None] * count if column is None else column))
    return objs
