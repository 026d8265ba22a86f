"""Kernels with one planted fault each, to compare gpusim's findings with compute-sanitizer's on a GPU.

    python3 benchmarks/gpu/sanitizer_cases.py sim            # every case through gpusim (any machine)
    compute-sanitizer --tool racecheck python3 benchmarks/gpu/sanitizer_cases.py gpu shared_race

The results of one such run are recorded in docs/gpu-checks.md.
"""

import sys
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

import numba  # noqa: E402
from numba import cuda  # noqa: E402

N = 64


@cuda.jit(lineinfo=True)
def shared_race(a, out):
    sh = cuda.shared.array(N, numba.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    out[t] = sh[(t + 1) % N]  # no syncthreads: reads a neighbour's element another warp may not have written


@cuda.jit(lineinfo=True)
def global_oob(a, out):
    i = cuda.grid(1)
    out[i] = a[i]  # no guard: the last block runs past the end


@cuda.jit(lineinfo=True)
def row_overrun(a, out):
    r = cuda.blockIdx.x
    c = cuda.threadIdx.x
    out[r, c] = a[r, c]  # one column too many: lands inside the next row, memcheck cannot see it


@cuda.jit(lineinfo=True)
def divergent_barrier(a, out):
    t = cuda.threadIdx.x
    if t < 16:
        cuda.syncthreads()
    out[t] = a[t]


@cuda.jit(lineinfo=True)
def warp_exchange_no_syncwarp(a, out):
    sh = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    out[t] = sh[31 - t]  # same warp, but no syncwarp: not ordered since Volta


@cuda.jit(lineinfo=True)
def warp_exchange_syncwarp(a, out):
    sh = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncwarp()
    out[t] = sh[31 - t]


@cuda.jit(lineinfo=True)
def shfl_outside_mask(a, out):
    t = cuda.threadIdx.x
    out[t] = cuda.shfl_down_sync(0x0000FFFF, a[t], 1)  # all 32 lanes execute it, the mask names lanes 0-15


@cuda.jit(lineinfo=True)
def shfl_mask_names_idle_lanes(a, out):
    t = cuda.threadIdx.x
    if t < 16:
        out[t] = cuda.shfl_down_sync(0xFFFFFFFF, a[t], 1)  # the mask names 32 lanes, 16 execute it


def _vec(n):
    return np.arange(n, dtype=np.float32), np.zeros(n, np.float32)


CASES = {
    # name: (kernel, grid, block, args, compute-sanitizer tool, the gpusim fault expected or None)
    "shared_race": (shared_race, 1, N, lambda: _vec(N), "racecheck", "DataRace"),
    "global_oob": (global_oob, 2, 48, lambda: _vec(80), "memcheck", "OutOfBounds"),
    "row_overrun": (row_overrun, 4, 9, lambda: (np.ones((4, 8), np.float32), np.zeros((4, 8), np.float32)),
                    "memcheck", "OutOfBounds"),
    "divergent_barrier": (divergent_barrier, 1, 32, lambda: _vec(32), "synccheck", "BarrierDivergence"),
    "warp_exchange_no_syncwarp": (warp_exchange_no_syncwarp, 1, 32, lambda: _vec(32), "racecheck", "DataRace"),
    "warp_exchange_syncwarp": (warp_exchange_syncwarp, 1, 32, lambda: _vec(32), "racecheck", None),
    "shfl_outside_mask": (shfl_outside_mask, 1, 32, lambda: _vec(32), "synccheck", "BarrierDivergence"),
    "shfl_mask_names_idle_lanes": (shfl_mask_names_idle_lanes, 1, 32, lambda: _vec(32), "synccheck",
                                   "BarrierDivergence"),
}


def run_gpu(name: str) -> None:
    kern, grid, block, make, _, _ = CASES[name]
    args = make()
    dev = [cuda.to_device(x) for x in args]
    kern[grid, block](*dev)
    cuda.synchronize()
    print(f"{name}: ran on the GPU")


def run_sim() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import gpusim

    bad = 0
    for name, (kern, grid, block, make, tool, expect) in CASES.items():
        report = gpusim.launch(kern, grid, block, make())
        kinds = sorted({type(f).__name__ for f in report.faults})
        ok = (expect in kinds) if expect else not kinds
        bad += not ok
        first = report.faults[0].message.splitlines()[0] if report.faults else "no fault"
        print(f"{name:28s} sanitizer tool: {tool:10s} gpusim: {kinds or '-'}  {'ok' if ok else 'UNEXPECTED'}")
        print(f"    {first}")
    return bad


if __name__ == "__main__":
    if sys.argv[1] == "gpu":
        run_gpu(sys.argv[2])
    else:
        sys.exit(run_sim())
