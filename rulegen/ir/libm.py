"""The C library's float32 ``expf`` and ``logf``, called through ctypes.

XGBoost computes its base margins with ``logf`` and its links with ``expf`` in float. Neither is
correctly rounded in glibc (``expf`` differs from exp(x) rounded to float32 on 170,648 of the
2.24e9 float32 inputs in (-104, 89), measured with glibc 2.36), so only the library's own
functions reproduce XGBoost bit for bit. Where no C library can be loaded, the functions fall
back to the float64 result rounded to float32 (``EXACT_LIBM`` is then False).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import sys

import numpy as np


def _load():
    names = ["libm.so.6", ctypes.util.find_library("m"), "libm.dylib", "libSystem.dylib"]
    if sys.platform == "win32":
        names = ["ucrtbase", "msvcrt"]
    for name in names:
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            fns = lib.expf, lib.logf
        except (OSError, AttributeError):
            continue
        for fn in fns:
            fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
        return fns
    return None


_FNS = _load()
EXACT_LIBM = _FNS is not None


def _f32(v: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float32(v))


def _exp_fallback(x: float) -> float:
    try:
        return _f32(math.exp(x))
    except OverflowError:
        return math.inf


def _log_fallback(x: float) -> float:
    return _f32(math.log(x)) if x > 0 else -math.inf if x == 0 else math.nan


if _FNS:
    _c_expf, _c_logf = _FNS

    def expf(x: float) -> float:
        """The C library's ``expf`` of a float32 value."""
        return _c_expf(float(x))

    def logf(x: float) -> float:
        """The C library's ``logf`` of a float32 value."""
        return _c_logf(float(x))
else:
    expf, logf = _exp_fallback, _log_fallback

_vexpf = np.frompyfunc(lambda v: expf(v), 1, 1)


def expf_array(a: np.ndarray) -> np.ndarray:
    """``expf`` of each element of a float32 array, as float32."""
    a = np.asarray(a, dtype=np.float32)
    if not a.size:
        return a.copy()
    return _vexpf(a.astype(np.float64)).astype(np.float32)


def exp_rounded_array(a: np.ndarray) -> np.ndarray:
    """exp in float64 rounded to float32, for each element of a float32 array: what a target
    without ``expf`` (SQL) computes for it."""
    a = np.asarray(a, dtype=np.float32)
    with np.errstate(over="ignore"):
        return np.exp(a.astype(np.float64)).astype(np.float32)
