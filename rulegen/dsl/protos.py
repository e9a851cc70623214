"""Proto-nodes: what the parse makes of trees and nodes before they get their ids.

Each keeps the position (line, column) where it starts, for comments, error messages and
``check``; :mod:`rulegen.dsl.build` turns them into IR nodes.
"""

from __future__ import annotations


class PLeaf:
    __slots__ = ("pos", "id", "value", "label", "support", "comment")

    def __init__(self, pos, value, label, support):
        self.pos, self.id, self.value, self.label = pos, None, value, label
        self.support, self.comment = support, None


class PSplit:
    __slots__ = ("pos", "id", "test", "children", "missing", "unseen", "support", "comment",
                 "test_pos", "missing_pos", "arm_pos")

    def __init__(self, pos, test, children, missing, unseen, support, test_pos, missing_pos,
                 arm_pos):
        self.pos, self.id, self.test, self.children = pos, None, test, children
        self.missing, self.unseen, self.support, self.comment = missing, unseen, support, None
        self.test_pos, self.missing_pos, self.arm_pos = test_pos, missing_pos, arm_pos


class PTree:
    __slots__ = ("pos", "output", "weight", "numbering", "root", "comment", "opt_pos")

    def __init__(self, pos, output, weight, numbering, root, opt_pos):
        self.pos, self.output, self.weight, self.numbering = pos, output, weight, numbering
        self.root, self.comment, self.opt_pos = root, None, opt_pos


class PLabel:
    """A leaf written as a class label, ``-> "setosa"``: a one-hot vector once the
    header says which classes there are."""

    __slots__ = ("label", "pos")

    def __init__(self, label, pos):
        self.label, self.pos = label, pos


UNSEEN = object()  # the pseudo-labels of a switch arm
MISSING = object()
