"""The benchmark kernels' computations as plain ``numba.njit`` loops: the floor a simulator is measured
against ("within a few times of the kernel's own loop"). Each computes the same values as its kernel, with
the same roundings: a float32 multiply-add is the exact float64 product plus the addend, rounded to float32,
which is the GPU's fused multiply-add but for a rare double rounding (``benchmarks.bench_compiled`` checks
that each loop's outputs equal the compiled back end's)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def map_add(a, out):
    for i in range(a.size):
        out[i] = np.float32(np.float64(a[i]) + 10.0)


@njit(cache=True)
def matmul(a, b, c):
    """Row by row, k outer and columns inner (the usual loop order of a C matmul): every ``c[row, col]`` still
    adds its products in k order with one rounding each, as its thread does, but a row's columns are independent
    additions the CPU runs side by side. The loop order of the kernel's thread (k innermost) makes every step
    wait on the previous rounding: about 20x slower on this machine (96 ms vs 4.6 ms at 256^3), a floor no
    engineer would write."""
    n = a.shape[0]
    for row in range(n):
        for col in range(n):
            c[row, col] = np.float32(0.0)
        for k in range(n):
            x = np.float64(a[row, k])
            for col in range(n):
                c[row, col] = np.float32(x * np.float64(b[k, col]) + np.float64(c[row, col]))


@njit(cache=True)
def block_sum(a, out, tpb):
    sh = np.zeros(tpb, np.float32)
    for blk in range(out.size):
        for t in range(tpb):
            i = blk * tpb + t
            sh[t] = a[i] if i < a.size else np.float32(0.0)
        s = tpb // 2
        while s > 0:
            for t in range(s):
                sh[t] = sh[t] + sh[t + s]
            s //= 2
        out[blk] = sh[0]


def loop_of(name: str):
    """(function, how to call it on a case's arguments) for a benchmark case."""
    from benchmarks import kernels as K

    if name == "map":
        return lambda args: map_add(args[0], args[1])
    if name in ("matmul", "matmul16", "naive_matmul"):
        return lambda args: matmul(args[0], args[1], args[2])
    if name == "block_sum":
        return lambda args: block_sum(args[0], args[1], K.SUM_TPB)
    raise KeyError(name)
