"""Learners that fit trees and emit the IR (:class:`rulegen.ir.nodes.Model`).

``CATALOG`` (in :mod:`rulegen.learn.catalog`) lists what the CLI offers by name.
"""

from rulegen.learn.cart import DecisionTreeClassifier, DecisionTreeRegressor
from rulegen.learn.catalog import CATALOG

__all__ = ["CATALOG", "DecisionTreeClassifier", "DecisionTreeRegressor"]
