"""The learners the CLI offers: name, what each is for, its estimators and what each
parameter means. ``rulegen fit --help`` prints this table; a test checks that every
parameter of every estimator is described here, so help and code cannot drift.

Classes are named as ``module:Class`` strings and imported on first use, so that
``rulegen --help`` does not pay for scipy.
"""

from __future__ import annotations

import importlib
import textwrap
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LearnerInfo:
    name: str
    title: str
    classifier: str | None  # "module:Class"
    regressor: str | None
    params: dict[str, str] = field(default_factory=dict)  # name -> one-line meaning

    def estimator_class(self, task: str):
        path = self.classifier if task == "classification" else self.regressor
        if path is None:
            return None
        module, name = path.split(":")
        return getattr(importlib.import_module(module), name)

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(t for t, p in (("classification", self.classifier),
                                    ("regression", self.regressor)) if p)


_CART_PARAMS = {
    "criterion": "split quality: gini, entropy, log_loss (classes); squared_error, "
                 "absolute_error (regression)",
    "splitter": "best, or random (a random threshold per candidate feature)",
    "max_depth": "deepest level a node may have (None: grow until pure)",
    "min_samples_split": "fewest rows (or a fraction of all rows) a node needs to be split",
    "min_samples_leaf": "fewest rows (or a fraction) each child must keep",
    "min_weight_fraction_leaf": "smallest share of the total weight in a leaf",
    "max_features": "features tried per split: None (all), sqrt, log2, a count or a fraction",
    "random_state": "seed for the feature order (ties) and the random splitter",
    "max_leaf_nodes": "grow best-first up to this many leaves (None: depth-first, no limit)",
    "min_impurity_decrease": "split only if the weighted impurity falls at least this much",
}

CATALOG: dict[str, LearnerInfo] = {
    "cart": LearnerInfo(
        "cart", "CART: binary splits, categorical subsets, scikit-learn's semantics",
        "rulegen.learn.cart:DecisionTreeClassifier", "rulegen.learn.cart:DecisionTreeRegressor",
        _CART_PARAMS),
}


def parameters(info: LearnerInfo) -> dict[str, dict[str, object]]:
    """Every parameter of the learner's estimators: name -> {task: default}."""
    out: dict[str, dict[str, object]] = {}
    for task in info.tasks:
        for key, value in info.estimator_class(task)().get_params().items():
            out.setdefault(key, {})[task] = value
    return out


def describe(width: int = 100) -> list[str]:
    """Help lines: each learner, its tasks, and its parameters with defaults."""
    lines = []
    for info in CATALOG.values():
        lines += textwrap.wrap(f"{info.name}: {info.title} ({', '.join(info.tasks)})", width,
                               subsequent_indent="      ")
        for key, defaults in parameters(info).items():
            values = list(defaults.values())
            if len(set(map(repr, values))) == 1:
                shown = f"{key}={values[0]!r}"
            else:
                shown = f"{key}=" + " / ".join(f"{v!r} ({t})" for t, v in defaults.items())
            text = f"{shown}: {info.params.get(key, '')}"
            lines += textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="      ")
    return lines
