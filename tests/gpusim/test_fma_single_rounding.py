"""A fused multiply-add rounds once, as the GPU's fma.rn does: float32 through float64 must not round twice.

The operands are chosen by hand: with a = 1 + 2^-23, b = 1 - 2^-24, c = 2^-47 (1 + 2^-23), the exact value is
a*b + c = 1 + 2^-24 + 2^-70, just above the float32 midpoint 1 + 2^-24 between 1 and 1 + 2^-23, so the fused
result is 1 + 2^-23. The float64 sum rounds to the midpoint itself (2^-70 is below float64's precision at 1),
and rounding that to float32 (ties to even) gives 1: the double-rounding answer.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

import gpusim

F = np.float32
A, B, C = F(1 + 2.0 ** -23), F(1 - 2.0 ** -24), F(2.0 ** -47 * (1 + 2.0 ** -23))


@cuda.jit
def fused(out, a, b, c):
    out[0] = cuda.fma(a[0], b[0], c[0])
    out[1] = a[0] * b[0] + c[0]          # contracted into an fma, as numba-cuda's compiler does


def test_float32_fma_and_its_contraction_round_once():
    out = np.zeros(2, F)
    report = gpusim.launch(fused, 1, 1, (out, np.array([A]), np.array([B]), np.array([C])))
    assert not report.faults
    assert out.tolist() == [F(1 + 2.0 ** -23)] * 2


def test_lanes_round_once_and_exact_results_are_kept():
    n = 32
    a, b, c = np.full(n, A), np.full(n, B), np.full(n, C)
    a[1:], b[1:], c[1:] = F(1.5), F(2.0), F(0.25)          # exact: 3.25, no rounding at all
    lanes = np.zeros(n, F)

    @cuda.jit
    def per_lane(res, x, y, z):
        i = cuda.threadIdx.x
        res[i] = cuda.fma(x[i], y[i], z[i])

    gpusim.launch(per_lane, 1, n, (lanes, a, b, c))
    assert lanes[0] == F(1 + 2.0 ** -23) and (lanes[1:] == F(3.25)).all()
