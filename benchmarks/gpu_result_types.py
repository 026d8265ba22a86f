"""Print the numba-cuda result type of each intrinsic and arithmetic expression gpusim must match.

Run on a GPU machine: ``python3 benchmarks/gpu_result_types.py``. Each expression is compiled in its own
kernel, so one that numba-cuda rejects is reported as such without hiding the others. The results are
recorded in docs/gpu-semantics.md.
"""

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

import math  # noqa: E402,F401

import numba  # noqa: E402,F401
from numba import cuda, types  # noqa: E402

EXPRS = {
    "threadIdx.x": "cuda.threadIdx.x",
    "grid(1)": "cuda.grid(1)",
    "blockDim.x": "cuda.blockDim.x",
    "laneid": "cuda.laneid",
    "warpsize": "cuda.warpsize",
    "popc(uint32)": "cuda.popc(u32a[0])",
    "popc(int64)": "cuda.popc(cuda.grid(1))",
    "brev(uint32)": "cuda.brev(u32a[0])",
    "clz(uint32)": "cuda.clz(u32a[0])",
    "ffs(uint32)": "cuda.ffs(u32a[0])",
    "ballot_sync": "cuda.ballot_sync(0xffffffff, cuda.threadIdx.x > 3)",
    "any_sync": "cuda.any_sync(0xffffffff, cuda.threadIdx.x > 3)",
    "all_sync": "cuda.all_sync(0xffffffff, cuda.threadIdx.x > 3)",
    "eq_sync": "cuda.eq_sync(0xffffffff, cuda.threadIdx.x)",
    "activemask": "cuda.activemask()",
    "lanemask_lt": "cuda.lanemask_lt()",
    "syncthreads_count(bool)": "cuda.syncthreads_count(cuda.threadIdx.x > 3)",
    "syncthreads_count(int)": "cuda.syncthreads_count(i32a[0])",
    "syncthreads_and(int)": "cuda.syncthreads_and(i32a[0])",
    "syncthreads_or(int)": "cuda.syncthreads_or(i32a[0])",
    "shfl_sync(float32)": "cuda.shfl_sync(0xffffffff, a32[0], 0)",
    "shfl_down_sync(int32 tid)": "cuda.shfl_down_sync(0xffffffff, cuda.threadIdx.x, 1)",
    "int32 + int32": "i32a[0] + i32a[1]",
    "float32 * 2.0": "a32[0] * 2.0",
    "float32 * 2": "a32[0] * 2",
    "float32 * int32": "a32[0] * i32a[0]",
    "math.exp(float32)": "math.exp(a32[0])",
    "math.exp(int)": "math.exp(cuda.threadIdx.x)",
    "math.floor(float32)": "math.floor(a32[0])",
    "math.sqrt(float32)": "math.sqrt(a32[0])",
    "round(float32)": "round(a32[0])",
    "int8 + 1": "i8a[0] + 1",
    "uint32 - 1": "u32a[0] - 1",
    "uint32 + uint32": "u32a[0] + u32a[1]",
    "atomic.add(int32)": "cuda.atomic.add(i32a, 0, 1)",
    "atomic.add(float32)": "cuda.atomic.add(a32, 0, 1.0)",
    "int32 // int32": "i32a[0] // i32a[1]",
    "int32 / int32": "i32a[0] / i32a[1]",
    "min(int32 tid, float32)": "min(cuda.threadIdx.x, a32[0])",
    "abs(int32)": "abs(i32a[0])",
    "float16 * float16": "f16a[0] * f16a[1]",
    "numba.float32(tid)": "numba.float32(cuda.threadIdx.x)",
    "fma(float32)": "cuda.fma(a32[0], a32[1], a32[2])",
    "float32 ** 2": "a32[0] ** 2",
    "a.size": "a32.size",
    "a.shape[0]": "a32.shape[0]",
}

SIG = (types.float32[:], types.int32[:], types.uint32[:], types.int8[:], types.float16[:], types.float32[:])


def result_type(expr: str) -> str:
    src = f"def k(a32, i32a, u32a, i8a, f16a, out):\n    r = {expr}\n    out[0] = 0\n"
    env = {"cuda": cuda, "math": math, "numba": numba}
    exec(src, env)
    try:
        kern = cuda.jit(SIG)(env["k"])
        return str(kern.overloads[SIG].fndesc.typemap["r"])
    except Exception as e:  # numba-cuda rejects it
        first = str(e).strip().splitlines()[0][:100]
        return f"rejected: {first}"


if __name__ == "__main__":
    for name, expr in EXPRS.items():
        print(f"{name:28s} {result_type(expr)}", flush=True)
