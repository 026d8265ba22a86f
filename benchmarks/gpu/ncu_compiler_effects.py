"""Settle on the GPU what the compiler does to instruction counts that PTX alone cannot say.

    python3 benchmarks/gpu/ncu_compiler_effects.py --profile OUTDIR   # ncu.csv, sass.txt, log.txt
    python3 benchmarks/gpu/ncu_compiler_effects.py --run [SASS_FILE]  # what ncu profiles: each case once

Each case prints gpusim's prediction beside it (``PREDICT``); the CSV's launch ID n is ``CASES[n]``.

1. Runtime-unrolled loops (gpusim.ir.unroll, modelled): requests *and sectors* of a per-lane range loop
   regrouped by the prolog/epilog slots. ``unroll_prolog_163`` is the case where the regrouping changes the
   sectors (25, where one request per engine iteration gives 21).
2. Shared loads ptxas merges into LDS.128 (not modelled; matmul's bench reads 20 shared load instructions
   and 24 wavefronts per warp per tile where the PTX has 32 scalar ld.shared): a thread reading 4 neighbouring
   floats of a row whose start is a multiple of 16 bytes. Patterns of which lanes share a row tell how ncu
   counts wavefronts of 16-byte accesses; the SASS says whether LDS.128 was emitted.
3. An if/else storing to one shared address (not modelled): NVVM merges the two stores when the address is
   hoisted out of a loop (matmul's tile loads: 2 stores per warp per tile on ncu), not outside a loop (PTX of
   conv-1d: two st.shared). ``store_merge_loop`` / ``store_merge_flat`` diverge in every warp.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30.4 with NumPy >= 2.5
    np.row_stack = np.vstack
os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")

from numba import cuda, float32  # noqa: E402

ROWS = 64   # rows of 16 floats in the LDS.128 kernels' shared array


@cuda.jit
def stride_loop(out, a, n):
    t = cuda.threadIdx.x
    acc = 0.0
    for j in range(t, n, 32):
        acc += a[j]
    out[t] = acc


@cuda.jit
def from_zero(out, a, n):
    t = cuda.threadIdx.x
    acc = 0.0
    for j in range(n - t):
        acc += a[j * 32 + t]
    out[t] = acc


@cuda.jit
def row_of_four(out, rows):
    s = cuda.shared.array((ROWS, 16), float32)
    t = cuda.threadIdx.x
    for k in range(t, ROWS * 16, 32):
        s[k // 16, k % 16] = k
    cuda.syncthreads()
    r = rows[t]
    acc = 0.0
    for j in range(16):                    # unrolled whole: s[r, 0..15], 4 x LDS.128 if ptxas merges
        acc += s[r, j]
    out[t] = acc


@cuda.jit
def store_merge_loop(out, a, n, reps):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    acc = 0.0
    for k in range(reps):
        if t % 2 == 0 and k < n:
            s[t] = a[t]
        else:
            s[t] = 0.0
        cuda.syncthreads()
        acc += s[(t + 1) % 32]
        cuda.syncthreads()
    out[t] = acc


@cuda.jit
def store_merge_flat(out, a):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    if t % 2 == 0:
        s[t] = a[t]
    else:
        s[t] = 0.0
    cuda.syncthreads()
    out[t] = s[(t + 1) % 32]


def _rows(pattern):
    return np.array(pattern, np.int64)


LANES = np.arange(32)
#: (name, kernel, grid, block, args, what gpusim predicts or what is asked)
CASES = [
    ("unroll_prolog_37", stride_loop, 1, 32, lambda: (np.zeros(32, np.float32), np.ones(64, np.float32), 37),
     "PREDICT ld requests 2, sectors 5"),
    ("unroll_prolog_163", stride_loop, 1, 32, lambda: (np.zeros(32, np.float32), np.ones(256, np.float32), 163),
     "PREDICT ld requests 6, sectors 25 (engine order: 21)"),
    ("unroll_epilog_6", from_zero, 1, 32, lambda: (np.zeros(32, np.float32), np.ones(192, np.float32), 6),
     "PREDICT ld requests 7 (engine order: 6)"),
    ("lds128_half_warps", row_of_four, 1, 32, lambda: (np.zeros(32, np.float32), _rows(LANES // 16)),
     "ASK shared ld instructions (4 if LDS.128), wavefronts (matmul: 2 per LDS.128)"),
    ("lds128_same_row", row_of_four, 1, 32, lambda: (np.zeros(32, np.float32), _rows(LANES * 0)),
     "ASK wavefronts: every lane one 16-byte chunk"),
    ("lds128_quarter_warps", row_of_four, 1, 32, lambda: (np.zeros(32, np.float32), _rows(LANES // 8)),
     "ASK wavefronts: lanes 8k..8k+7 on one row, rows 16 words apart"),
    ("lds128_row_per_lane", row_of_four, 1, 32, lambda: (np.zeros(32, np.float32), _rows(LANES)),
     "ASK wavefronts: 32 distinct rows (64 bytes apart: 2-way per bank pair)"),
    ("lds128_odd_rows", row_of_four, 1, 32, lambda: (np.zeros(32, np.float32), _rows(LANES % 2)),
     "ASK wavefronts: even lanes row 0, odd lanes row 1"),
    ("store_merge_loop", store_merge_loop, 1, 32, lambda: (np.zeros(32, np.float32), np.ones(32, np.float32), 4, 4),
     "PREDICT shared st instructions 4 if merged (gpusim today: 8)"),
    ("store_merge_flat", store_merge_flat, 1, 32, lambda: (np.zeros(32, np.float32), np.ones(32, np.float32)),
     "PREDICT shared st instructions 2 (not merged, as the PTX)"),
]

METRICS = [
    *(f"l1tex__t_{w}_pipe_lsu_mem_global_op_ld.sum" for w in ("requests", "sectors")),
    *(f"smsp__sass_inst_executed_op_shared_{op}.sum" for op in ("ld", "st")),
    *(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum" for op in ("ld", "st")),
    *(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum" for op in ("ld", "st")),
]


def run_all(sass_path: str | None) -> None:
    for name, kernel, grid, block, make, note in CASES:
        args = [cuda.to_device(x) if isinstance(x, np.ndarray) else x for x in make()]
        kernel[grid, block](*args)
        cuda.synchronize()
        print(f"{name}: {note}", file=sys.stderr)
    if sass_path:
        with open(sass_path, "w") as f:
            for kernel in dict.fromkeys(c[1] for c in CASES):
                try:
                    text = "\n".join(kernel.inspect_sass().values())
                except Exception as e:  # nvdisasm missing: the counters still say it
                    text = f"inspect_sass failed: {e!r}"
                f.write(f"##### {kernel.py_func.__name__}\n{text}\n")


def profile(outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    cmd = ["ncu", "--clock-control", "none", "--csv", "--print-units", "base", "--metrics", ",".join(METRICS),
           sys.executable, os.path.abspath(__file__), "--run", os.path.join(outdir, "sass.txt")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith('"')]
    with open(os.path.join(outdir, "ncu.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    with open(os.path.join(outdir, "log.txt"), "w") as f:
        f.write(f"cmd: {' '.join(cmd)}\nrc: {r.returncode}, {len(rows)} rows\n")
        f.write("cases in launch order: " + ", ".join(c[0] for c in CASES) + "\n" + r.stderr[-8000:])
    print(f"{len(rows)} ncu rows in {outdir}/ncu.csv; predictions in {outdir}/log.txt")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--profile"]:
        profile(sys.argv[2])
    elif sys.argv[1:2] == ["--run"]:
        run_all(sys.argv[2] if len(sys.argv) > 2 else None)
    else:
        print(__doc__)
