"""A helper of the tests that compare numba kernels with the numpy code they replace (their
fixtures, ``kernels_compiled`` and ``numpy_only``, are in conftest.py)."""

from __future__ import annotations

import numpy as np


def bits(a):
    """An array's exact float64 bits (NaN, -0.0 and all)."""
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)
