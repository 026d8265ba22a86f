"""Kernels using cuda.libdevice and dim3 locals, shared by tests/gpusim/test_libdevice_and_dim3.py and the GPU
check benchmarks/gpu/judge_validity.py (which runs them on the GPU and on gpusim, bit for bit)."""

from __future__ import annotations

from numba import cuda
from numba.cuda import libdevice


@cuda.jit
def rounded_arithmetic(out, a, b, c):
    i = cuda.threadIdx.x
    out[0, i] = cuda.libdevice.fmul_rn(a[i], b[i]) + c[i]
    out[1, i] = cuda.libdevice.fadd_rn(a[i] * b[i], c[i])
    out[2, i] = a[i] * b[i] + c[i]
    out[3, i] = cuda.libdevice.fmaf(a[i], b[i], c[i])
    out[4, i] = cuda.libdevice.fdiv_rn(a[i], b[i])
    out[5, i] = cuda.libdevice.frcp_rn(b[i])
    out[6, i] = cuda.libdevice.fsub_rn(a[i], 10.0)        # the literal narrows to float32, as in numba-cuda


@cuda.jit
def math_functions(out, x, y):
    i = cuda.threadIdx.x
    out[0, i] = cuda.libdevice.expf(x[i])
    out[1, i] = libdevice.exp(float(x[i]))
    out[2, i] = cuda.libdevice.atan2f(x[i], y[i])
    out[3, i] = cuda.libdevice.fmaxf(x[i], y[i])
    out[4, i] = cuda.libdevice.fminf(x[i], y[i])
    out[5, i] = cuda.libdevice.isnanf(y[i])
    out[6, i] = cuda.libdevice.fsqrt_rn(abs(x[i]))


@cuda.jit
def bit_functions(out, v):
    i = cuda.threadIdx.x
    out[0, i] = cuda.libdevice.popc(v[i])
    out[1, i] = cuda.libdevice.clz(v[i])
    out[2, i] = cuda.libdevice.ffs(v[i])
    out[3, i] = cuda.libdevice.brev(v[i])
    out[4, i] = cuda.libdevice.max(v[i], 7)


@cuda.jit
def dim3_locals(out):
    tid = cuda.threadIdx
    bid = cuda.blockIdx
    size = cuda.blockDim
    i = bid.x * size.x + tid.x
    out[0, i] = tid.x
    out[1, i] = bid.x
    out[2, i] = tid.y + size.y
