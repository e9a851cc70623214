"""Helpers of the tests that compare numba kernels with the numpy code they replace (their
fixtures, ``kernels_compiled`` and ``numpy_only``, are in conftest.py)."""

from __future__ import annotations

import numpy as np


def bits(a):
    """An array's exact float64 bits (NaN, -0.0 and all)."""
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def counting(monkeypatch, owner=None, method="grow_compiled") -> list:
    """A list that gets one item per tree a compiled grower grows from now on: by default
    the forest's (``forest.TreeGrower.grow_compiled``), else ``owner.method``."""
    if owner is None:
        from rulegen.learn.ensembles import forest
        owner = forest.TreeGrower

    calls = []
    grow = getattr(owner, method)

    def counted(self, *args, **kw):
        calls.append(1)
        return grow(self, *args, **kw)

    monkeypatch.setattr(owner, method, counted)
    return calls
