"""Learners that fit trees and emit the IR (:class:`rulegen.ir.nodes.Model`).

One public name per learner, the command line's: ``--algorithm xgboost_style`` is
``XGBoostStyleClassifier`` / ``XGBoostStyleRegressor``, ``cart`` is ``CARTClassifier`` /
``CARTRegressor``, and so on (``CATALOG`` in :mod:`rulegen.learn.catalog` is the table).
Every estimator is importable from here; modules load on first use, so that importing
the package (as ``rulegen --help`` does) pays for neither scipy nor any learner.
"""

from __future__ import annotations

import importlib
import warnings

# name -> module, for the lazy imports below (a test checks this against CATALOG)
_ESTIMATORS = {
    "CARTClassifier": "trees.cart", "CARTRegressor": "trees.cart",
    "C45Classifier": "trees.c45",
    "ID3Classifier": "trees.id3",
    "CHAIDClassifier": "trees.chaid", "CHAIDRegressor": "trees.chaid",
    "QUESTClassifier": "trees.quest",
    "RandomForestClassifier": "ensembles.forest", "RandomForestRegressor": "ensembles.forest",
    "AdaBoostClassifier": "ensembles.adaboost",
    "GradientBoostingClassifier": "ensembles.gbdt", "GradientBoostingRegressor": "ensembles.gbdt",
    "XGBoostStyleClassifier": "ensembles.xgb", "XGBoostStyleRegressor": "ensembles.xgb",
    "LightGBMStyleClassifier": "ensembles.lgbm", "LightGBMStyleRegressor": "ensembles.lgbm",
}
# the names before the command line's became the Python names too
_DEPRECATED = {
    "DecisionTreeClassifier": "CARTClassifier", "DecisionTreeRegressor": "CARTRegressor",
    "NewtonBoostingClassifier": "XGBoostStyleClassifier",
    "NewtonBoostingRegressor": "XGBoostStyleRegressor",
}

__all__ = ["CATALOG", "AdaBoostClassifier", "C45Classifier", "CARTClassifier", "CARTRegressor",
           "CHAIDClassifier", "CHAIDRegressor", "GradientBoostingClassifier",
           "GradientBoostingRegressor", "ID3Classifier", "LightGBMStyleClassifier",
           "LightGBMStyleRegressor", "QUESTClassifier", "RandomForestClassifier",
           "RandomForestRegressor", "XGBoostStyleClassifier", "XGBoostStyleRegressor"]


def __getattr__(name):
    if name == "CATALOG":
        from rulegen.learn.catalog import CATALOG
        return CATALOG
    if name in _DEPRECATED:
        warnings.warn(f"{name} is deprecated: use {_DEPRECATED[name]} (the same class)",
                      DeprecationWarning, stacklevel=2)
        name = _DEPRECATED[name]
    if name in _ESTIMATORS:
        return getattr(importlib.import_module(f"rulegen.learn.{_ESTIMATORS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *__all__])
