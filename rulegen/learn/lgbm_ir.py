"""IR leaves and splits made quickly, for :mod:`rulegen.learn.lgbm_kernels`' trees.

The IR's nodes are frozen dataclasses: their ``__init__`` sets every field through
``object.__setattr__``, ~1.9 us a leaf and ~2.9 us a split here. A small fit's compiled trees
cost less than that (credit-g: 100 trees of 61 nodes, ~0.25 ms each grown, ~0.2 ms each
made into IR), so :func:`leaf` and :func:`split` set the slots directly through their
descriptors (~0.5 us): the same objects, equal to and hashing as the class's own. They
are used only while the classes are what they were written for (slots, these fields with
None defaults, no ``__post_init__``); otherwise they are the classes' constructors.
"""

from __future__ import annotations

import dataclasses

from rulegen.ir.nodes import Leaf, Split

_LEAF = ("value", "samples", "distribution", "impurity", "comment")
_SPLIT = ("test", "children", "missing", "unseen", "samples", "distribution", "impurity",
          "comment")


def _direct(cls, names, given: int) -> bool:
    """Whether setting ``cls``'s slots directly makes what ``cls(...)`` makes: its fields are
    ``names`` in order, every one past the first ``given`` None by default, and nothing runs
    after they are set."""
    fields = dataclasses.fields(cls)
    return (tuple(f.name for f in fields) == names
            and getattr(cls, "__slots__", None) == names
            and all(f.default is None for f in fields[given:])
            and not hasattr(cls, "__post_init__")
            and cls.__new__ is object.__new__)


def _makers():
    new = object.__new__
    if _direct(Leaf, _LEAF, 1):
        lv, ls, ld, li, lc = (getattr(Leaf, n).__set__ for n in _LEAF)

        def leaf(value, samples):
            o = new(Leaf)
            lv(o, value)
            ls(o, samples)
            ld(o, None)
            li(o, None)
            lc(o, None)
            return o
    else:
        def leaf(value, samples):
            return Leaf(value, samples)

    if _direct(Split, _SPLIT, 3):
        st, sk, sm, su, ss, sd, si, sc = (getattr(Split, n).__set__ for n in _SPLIT)

        def split(test, children, missing, samples):
            o = new(Split)
            st(o, test)
            sk(o, children)
            sm(o, missing)
            su(o, None)
            ss(o, samples)
            sd(o, None)
            si(o, None)
            sc(o, None)
            return o
    else:
        def split(test, children, missing, samples):
            return Split(test, children, missing, None, samples)

    return leaf, split


leaf, split = _makers()  # leaf(value, samples), split(test, children, missing, samples)
