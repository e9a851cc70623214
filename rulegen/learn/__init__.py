"""Learners that fit trees and emit the IR (:class:`rulegen.ir.nodes.Model`)."""

from rulegen.learn.cart import DecisionTreeClassifier, DecisionTreeRegressor

# name -> (classifier class, regressor class)
LEARNERS = {"cart": (DecisionTreeClassifier, DecisionTreeRegressor)}

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor", "LEARNERS"]
