"""numpy's own sums for compiled code: ``a.sum()`` (numpy's pairwise summation) and
``a @ b`` of two float64 vectors (numpy hands it to its BLAS ``cblas_ddot``, whose SIMD
kernel sums in an order of its own, chosen by the CPU it runs on).

:mod:`rulegen.learn.compiled.cart_kernels` uses them for a regression node's statistics, which
``criteria.SquaredError.stats`` computes with those two numpy calls: written as a plain
loop they would round differently (and reaching numpy through numba's object mode costs
more than the rest of the tree). The sum is numpy's algorithm written out; the dot product
calls the very function numpy calls, found in the BLAS library numpy loaded, by its
address. Both are checked against numpy on probe vectors before first use
(:func:`dot_address`, :func:`agrees`, called by ``cart_kernels.numpy_blas``); anything missing or different leaves
``cart_kernels`` on object mode, which is numpy itself.
"""

from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

# cblas_ddot as numpy's BLAS builds name it: scipy-openblas wheels (64-bit integers), then
# OpenBLAS or reference CBLAS with a 64-bit suffix, then plain (32-bit integers)
_SYMBOLS = (("scipy_cblas_ddot64_", True), ("cblas_ddot64_", True),
            ("scipy_cblas_ddot", False), ("cblas_ddot", False))
_CHUNK = 1 << 30  # NPY_CBLAS_CHUNK: numpy's dot asks BLAS for at most this many at a time
ddot64 = ddot32 = None  # numba intrinsics (:func:`intrinsics`), set by cart_kernels.load


def block_sum(a, lo, n):
    """numpy's pairwise sum of at most 128 values ``a[lo:lo + n]``: under 8 in order from
    0.0, else in eight running sums combined as a tree, then the rest in order."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    end = lo + n - n % 8
    i = lo + 8
    while i < end:
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < lo + n:
        res += a[i]
        i += 1
    return res


def pairwise_sum(a, lo, n):
    """``a[lo:lo + n].sum()`` as numpy sums a contiguous float64 array (pairwise_sum in
    numpy's loops_utils): above 128 values, the sum of the two halves' sums (the first
    half a multiple of 8), each summed so. Walked with a stack (numba's cache mishandles
    recursion): a task is a range to sum, or (n = -1) "add the last two sums"."""
    if n <= 128:
        return block_sum(a, lo, n)
    tasks = np.empty((192, 2), dtype=np.int64)  # log2(n) levels, at most 3 tasks each
    sums = np.empty(64)
    tasks[0, 0], tasks[0, 1] = lo, n
    top, k = 1, 0
    while top > 0:
        top -= 1
        t_lo, t_n = tasks[top, 0], tasks[top, 1]
        if t_n < 0:
            k -= 1
            sums[k - 1] = sums[k - 1] + sums[k]
        elif t_n <= 128:
            sums[k] = block_sum(a, t_lo, t_n)
            k += 1
        else:
            n2 = t_n // 2
            n2 -= n2 % 8
            tasks[top, 0], tasks[top, 1] = 0, -1  # after both halves
            tasks[top + 1, 0], tasks[top + 1, 1] = t_lo + n2, t_n - n2
            tasks[top + 2, 0], tasks[top + 2, 1] = t_lo, n2  # the first half first
            top += 3
    return sums[0]


def dot(blas, int64, x, y, n):
    """``x[:n] @ y[:n]`` as numpy's DOUBLE_dot computes it: from 0.0, adding BLAS's
    ddot of each chunk. ``blas``: the address of numpy's cblas_ddot; ``int64``: whether
    it takes 64-bit integers."""
    total = 0.0
    lo = 0
    while lo < n:
        m = min(n - lo, _CHUNK)
        if int64:
            total += ddot64(blas, m, x, y, lo)
        else:
            total += ddot32(blas, m, x, y, lo)
        lo += m
    return total


KERNELS = (block_sum, pairwise_sum, dot)  # compiled by cart_kernels.load


def intrinsics(numba):
    """``ddot64`` and ``ddot32``: numba intrinsics calling a cblas_ddot by its address (a
    run-time argument, so the kernels that use them stay cacheable)."""
    from llvmlite import ir
    from numba.core import types

    def make(bits):
        @numba.extending.intrinsic
        def ddot(typingctx, addr, n, x, y, lo):
            sig = types.float64(addr, n, x, y, lo)

            def codegen(context, builder, signature, args):
                addr_, n_, x_, y_, lo_ = args
                it, dbl = ir.IntType(bits), ir.DoubleType()
                fnty = ir.FunctionType(dbl, [it, dbl.as_pointer(), it, dbl.as_pointer(), it])
                fn = builder.inttoptr(addr_, fnty.as_pointer())
                xp = context.make_array(signature.args[2])(context, builder, x_).data
                yp = context.make_array(signature.args[3])(context, builder, y_).data
                xp, yp = builder.gep(xp, [lo_]), builder.gep(yp, [lo_])
                one = ir.Constant(it, 1)
                return builder.call(fn, [builder.trunc(n_, it) if bits < 64 else n_, xp, one,
                                         yp, one])
            return sig, codegen
        return ddot

    return make(64), make(32)


def _libraries() -> list[str]:
    """Shared libraries that may be numpy's BLAS: those in numpy's wheel first, then any
    loaded library with "blas" in its name (Linux lists them in /proc/self/maps)."""
    root = os.path.dirname(os.path.dirname(np.__file__))
    found = sorted(glob.glob(os.path.join(root, "numpy.libs", "*blas*"))
                   + glob.glob(os.path.join(os.path.dirname(np.__file__), ".dylibs", "*blas*")))
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split(None, 5)[-1].strip()
                if "blas" in os.path.basename(path).lower() and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def dot_address() -> tuple[int, bool] | None:
    """(address, 64-bit integers?) of the cblas_ddot in numpy's BLAS library, or None."""
    for path in _libraries():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name, int64 in _SYMBOLS:
            fn = getattr(lib, name, None)
            if fn is not None:
                return ctypes.cast(fn, ctypes.c_void_p).value, int64
    return None


def probes():
    """Vectors on which a different summation order shows: every length to 160 (each
    block and tail of a SIMD kernel), then long ones, of mixed signs and magnitudes."""
    rng = np.random.default_rng(20)
    for n in [*range(1, 161), 1_000, 10_001, 33_333]:
        x = rng.normal(size=n) * 10.0 ** rng.integers(-8, 9, n)
        y = rng.normal(size=n) * 10.0 ** rng.integers(-8, 9, n)
        yield x, y


def agrees(compiled_sum, compiled_dot, blas, int64) -> bool:
    """Whether the compiled ``pairwise_sum`` and ``dot`` give numpy's bits on the probes
    (for ``x @ y`` numpy's matmul of a vector and an (n, 1) column, as the criterion's)."""
    def same(a, b):
        return np.float64(a).view(np.int64) == np.float64(b).view(np.int64)

    for x, y in probes():
        n, ax = x.size, np.abs(x)
        if not (same(x.sum(), compiled_sum(x, 0, n)) and same(ax.sum(), compiled_sum(ax, 0, n))
                and same((x @ y.reshape(-1, 1))[0], compiled_dot(blas, int64, x, y, n))):
            return False
    return True
