"""Kernels launched through numba's simulator API, for test_cudasim_dropin.py to run in a child process.

    GPUSIM_CUDASIM=strict python cudasim_scenarios.py api OUT.json

Each group is a function below; it launches its kernels through ``numba.cuda`` exactly as a numba-cuda test
does and writes a JSON object: each scenario's outputs (as lists) and, at the end, ``stats``, what
``gpusim.cudasim.stats()`` counted. The expected values are computed by the test, with NumPy. numba's
simulator replaces ``numba.cuda`` when it is imported, so none of this may run inside the test process.
"""

from __future__ import annotations

import json
import sys

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still calls np.row_stack, removed in NumPy 2.5
    np.row_stack = np.vstack

GROUP = sys.argv[1]
if GROUP == "install":  # the one group that turns the drop-in on from code instead of the environment
    import gpusim

    gpusim.install("strict")

from numba import cuda  # noqa: E402

import gpusim.cudasim  # noqa: E402

F32 = np.float32


@cuda.jit(device=True)
def twice(x):
    return 2 * x


@cuda.jit
def add_one(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = twice(a[i]) + 1


@cuda.jit("void(float64[:], float32)")
def times_three(out, x):
    out[0] = x * 3


@cuda.jit
def dyn_shared_reverse(a):
    buf = cuda.shared.array(0, dtype=np.float32)
    t = cuda.threadIdx.x
    buf[t] = a[t]
    cuda.syncthreads()
    a[t] = buf[cuda.blockDim.x - 1 - t]


@cuda.jit
def warp_sum(a, out):
    t = cuda.threadIdx.x
    v = a[t]
    for d in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, d)
    if t == 0:
        out[0] = v


@cuda.jit
def copy_in(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


def group_api() -> dict:
    a = np.arange(100, dtype=F32)
    res = {}
    out = np.zeros_like(a)
    add_one[1, 128](a, out)                                   # host arrays, lazy compile, device function
    res["host"] = out.tolist()
    d_a = cuda.to_device(a)
    d_out = cuda.device_array_like(d_a)
    add_one[4, 32](d_a, d_out)                               # device arrays
    res["device"] = d_out.copy_to_host().tolist()
    d2 = cuda.device_array(100, dtype=F32)
    add_one[(2, 1), (64, 1, 1)](d_a, d2)                     # tuple grid and block
    res["device_array"] = d2.copy_to_host().tolist()
    stream = cuda.stream()
    d_s = cuda.to_device(a, stream=stream)
    d_o = cuda.device_array(100, dtype=F32, stream=stream)
    add_one[1, 128, stream](d_s, d_o)                        # a stream
    stream.synchronize()
    res["stream"] = d_o.copy_to_host(stream=stream).tolist()
    p = cuda.pinned_array(100, dtype=F32)
    p[:] = a
    m = cuda.mapped_array(100, dtype=F32)
    add_one[1, 128](p, m)                                    # pinned and mapped host memory
    res["pinned_mapped"] = np.asarray(m).tolist()
    f = np.zeros_like(a)
    add_one.forall(100)(a, f)                                # forall
    res["forall"] = f.tolist()
    s = np.zeros_like(a)
    add_one.specialize(a, s)[1, 128](a, s)                   # specialize
    res["specialize"] = s.tolist()
    t = np.zeros(1)
    times_three[1, 1](t, 0.1)                                # eager signature: 0.1 becomes a float32
    res["eager"] = t.tolist()
    r = np.arange(32, dtype=F32)
    dyn_shared_reverse[1, 32, 0, 32 * 4](r)                  # dynamic shared memory
    res["dynamic_shared"] = r.tolist()
    w = np.arange(32, dtype=F32)
    ws = np.zeros(1, dtype=F32)
    warp_sum[1, 32](w, ws)                                   # a warp shuffle: numba's simulator has none
    res["warp_sum"] = ws.tolist()
    hint_out = np.zeros_like(a)
    copy_in[1, 128](cuda.In(a), cuda.Out(hint_out))          # cuda.In / cuda.Out
    res["in_out"] = hint_out.tolist()
    res["twice_on_host"] = twice(21)                          # a device function called from host code
    return res


@cuda.jit
def take_first(d, out):
    out[0] = d[0]


def group_fallback() -> dict:
    d = np.array([7], dtype=">i4")   # gpusim takes arrays in the machine's byte order only
    out = np.zeros(1, dtype=">i4")
    take_first[1, 1](d, out)
    take_first[1, 1](d, out)
    return {"first": [int(out[0])]}


def group_restore() -> dict:
    """A Python error inside gpusim's code for a kernel, after it wrote to a device array: the array must be as
    before when numba's simulator runs the launch again. The error is made here, by wrapping gpusim.launch,
    so the test does not depend on which gpusim bug happens to exist."""
    from gpusim.cudasim import adapter
    from gpusim.faults import KernelError

    real_launch = adapter.launch

    def failing_launch(kernel, grid, block, args, *rest, **kw):
        args[0][...] = -7.0                                   # gpusim has written before it fails
        report = real_launch(kernel, grid, block, args, *rest, **kw)
        fault = KernelError("The kernel raised KeyError: 'x'.")
        fault.__cause__ = KeyError("x")
        report.faults.append(fault)
        return report

    adapter.launch = failing_launch
    d = cuda.to_device(np.arange(8, dtype=F32))
    dst = cuda.device_array(8, dtype=F32)

    @cuda.jit
    def accumulate(a, b):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1
            b[i] = a[i]

    accumulate[1, 8](d, dst)
    adapter.launch = real_launch
    return {"a": d.copy_to_host().tolist(), "b": dst.copy_to_host().tolist()}


@cuda.jit
def off_the_end(a):
    i = cuda.grid(1)
    a[i] = i


@cuda.jit
def racy_sum(out):
    out[0] += 1


def _caught(fn) -> dict:
    try:
        fn()
    except Exception as e:  # the test reads the type and the message
        return {"types": [c.__name__ for c in type(e).__mro__], "message": str(e)}
    return {"types": [], "message": ""}


def group_faults() -> dict:
    a = np.zeros(50, dtype=np.int64)
    return {
        "oob": _caught(lambda: off_the_end[1, 64](a)),
        "race": _caught(lambda: racy_sum[1, 64](np.zeros(1))),
    }


@cuda.jit(device=True)
def aligned_tile_sum(a, out):
    tile = cuda.shared.array(32, dtype=F32, alignment=128)
    i = cuda.threadIdx.x
    tile[i] = a[i]
    cuda.syncthreads()
    if i == 0:
        s = F32(0)
        for j in range(32):
            s += tile[j]
        out[0] = s


@cuda.jit
def shared_aligned(a, out):
    aligned_tile_sum(a, out)


@cuda.jit
def local_aligned(out):
    scratch = cuda.local.array(4, dtype=np.uint8, alignment=16)
    scratch[0] = 7
    out[cuda.threadIdx.x] = scratch[0]


def group_alignment() -> dict:
    """alignment= in a device function's shared array and in a kernel's local array."""
    out, small = np.zeros(1, dtype=F32), np.zeros(4, dtype=np.uint8)
    return {"shared": _caught(lambda: shared_aligned[1, 32](np.arange(32, dtype=F32), out)),
            "local": _caught(lambda: local_aligned[1, 4](small)), "out": out.tolist(), "small": small.tolist()}


GLOBAL_TABLE = np.array([1.0, 2.0, 3.0])


@cuda.jit
def read_global(out):
    out[0] = GLOBAL_TABLE[1]


def group_frozen() -> dict:
    first, second = np.zeros(1), np.zeros(1)
    read_global[1, 1](first)
    GLOBAL_TABLE[1] = 20.0                                   # numba compiled the old value in
    read_global[1, 1](second)
    prices = cuda.to_device(np.array([10.0, 25.0]))          # a captured device array: numba keeps its pointer

    @cuda.jit
    def read_prices(out):
        out[0] = prices[1]

    seen = np.zeros(2)
    read_prices[1, 1](seen[:1])
    prices.copy_to_device(np.array([20.0, 50.0]))
    read_prices[1, 1](seen[1:])
    return {"first": first.tolist(), "second": second.tolist(), "device": seen.tolist()}


def group_install() -> dict:
    import os
    import subprocess

    out = np.zeros(32, dtype=F32)
    add_one[1, 32](np.arange(32, dtype=F32), out)
    child = subprocess.run([sys.executable, __file__, "api", sys.argv[2] + ".child"], capture_output=True,
                           text=True, timeout=300)
    return {"out": out.tolist(), "env": os.environ.get("GPUSIM_CUDASIM"), "child_rc": child.returncode,
            "child_stderr": child.stderr[-2000:]}


def main() -> None:
    res = globals()[f"group_{GROUP}"]()
    st = gpusim.cudasim.stats()
    res["stats"] = {"gpusim": st.gpusim_launches, "fallback": st.fallback_launches, "fallbacks": st.fallbacks}
    with open(sys.argv[2], "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()
