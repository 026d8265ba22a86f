"""Kernels whose memory metrics were read with Nsight Compute on a real GPU, and the script that reads them.

Each ``Case`` is a plain numba-cuda kernel, a launch and its arguments (fixed seeds). The same cases run
through gpusim in ``tests/gpusim/test_metrics_ncu.py``, which asserts gpusim's metrics equal the numbers ncu
read (``tests/gpusim/data/ncu_h200.csv``).

The kernels are written so that one source access is one SASS instruction: every loaded value is used, no
two accesses of one thread touch neighbouring elements the compiler could merge into a vector load, and a
``syncthreads`` sits between a shared store and the loads that read it. ``sass.txt`` from the run (the
SASS of every kernel) and the ``smsp__sass_inst_executed_op_*`` counts confirm it.

On a machine with a GPU, ncu and numba-cuda::

    python3 tests/gpusim/ncu_cases.py --profile OUTDIR   # writes ncu_h200.csv, sass.txt, meta.txt, log.txt

``--run`` only launches every case once (that is what ncu profiles); ncu counts per kernel launch, so the
CSV's launch ``ID`` n is ``CASES[n]``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30.4 still calls np.row_stack, removed in NumPy 2.5
    np.row_stack = np.vstack
os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")

from numba import cuda, float32, float64, uint8  # noqa: E402

SH_N = 2112     # words of the shared stride kernels: 64 threads x stride 33 fit
SH_U8 = 8192    # bytes of the uint8 shared kernel: 64 threads x stride 128 fit
TILE = 32       # transpose tile
TILE_PAD = 33   # padded transpose tile row (numba needs a literal constant, not TILE + 1)
TPB = 64        # dot product threads per block


# ---------------------------------------------------------------- global memory
@cuda.jit
def g_copy(a, out):
    i = cuda.grid(1)
    out[i] = a[i]


@cuda.jit
def g_stride(a, out, s):
    i = cuda.grid(1)
    out[i] = a[i * s]


@cuda.jit
def g_offset(a, out, k):
    i = cuda.grid(1)
    out[i] = a[i + k]


@cuda.jit
def g_per_warp(a, out):
    i = cuda.grid(1)
    out[i] = a[i // 32]


@cuda.jit
def g_guarded(a, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i]


@cuda.jit
def g_half_warps(a, out):
    i = cuda.grid(1)
    if cuda.threadIdx.x % 32 < 16:
        out[i] = a[i]


@cuda.jit
def g_rows(a, out):
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if r < a.shape[0] and c < a.shape[1]:
        out[r, c] = a[r, c]


@cuda.jit
def g_store_stride(a, out, s):
    i = cuda.grid(1)
    out[i * s] = a[i]


@cuda.jit
def g_gather(a, idx, out):
    i = cuda.grid(1)
    out[i] = a[idx[i]]


@cuda.jit
def g_scatter(a, idx, out):
    i = cuda.grid(1)
    out[idx[i]] = a[i]


@cuda.jit
def g_loop4(a, out, n):
    i = cuda.grid(1)
    acc = a[i]
    for k in range(1, 4):
        acc += a[k * n + i]
    out[i] = acc


@cuda.jit
def g_if_else(a, b, out):
    i = cuda.grid(1)
    if i % 2 == 0:
        v = a[i]
    else:
        v = b[i]
    out[i] = v


@cuda.jit
def g_loop_divergent(a, out, n):
    i = cuda.grid(1)
    acc = a[i]
    for k in range(1, 1 + cuda.threadIdx.x % 4):
        acc += a[k * n + i]
    out[i] = acc


# ---------------------------------------------------------------- atomics
@cuda.jit
def atomic_discard(a, acc, s):
    i = cuda.grid(1)
    cuda.atomic.add(acc, i * s, a[i])


@cuda.jit
def atomic_used(a, acc, out, s):
    i = cuda.grid(1)
    out[i] = cuda.atomic.add(acc, i * s, a[i])


@cuda.jit
def atomic_count_discard(cnt):
    cuda.atomic.add(cnt, 0, 1)


@cuda.jit
def atomic_count_used(cnt, out):
    i = cuda.grid(1)
    out[i] = cuda.atomic.add(cnt, 0, 1)


@cuda.jit
def atomic_hist(bins, hist):
    i = cuda.grid(1)
    cuda.atomic.add(hist, bins[i], 1)


# ---------------------------------------------------------------- shared memory
@cuda.jit
def sh_stride_f32(a, out, ss, ls):
    sm = cuda.shared.array(SH_N, float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    sm[t * ss] = a[i]
    cuda.syncthreads()
    out[i] = sm[t * ls]


@cuda.jit
def sh_stride_f64(a, out, ss, ls):
    sm = cuda.shared.array(SH_N, float64)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    sm[t * ss] = a[i]
    cuda.syncthreads()
    out[i] = sm[t * ls]


@cuda.jit
def sh_stride_u8(a, out, ss, ls):
    sm = cuda.shared.array(SH_U8, uint8)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    sm[t * ss] = a[i]
    cuda.syncthreads()
    out[i] = sm[t * ls]


@cuda.jit
def sh_gather_f32(a, idx, out):
    sm = cuda.shared.array(SH_N, float32)
    i = cuda.grid(1)
    sm[cuda.threadIdx.x] = a[i]
    cuda.syncthreads()
    out[i] = sm[idx[i]]


@cuda.jit
def sh_gather_f64(a, idx, out):
    sm = cuda.shared.array(SH_N, float64)
    i = cuda.grid(1)
    sm[cuda.threadIdx.x] = a[i]
    cuda.syncthreads()
    out[i] = sm[idx[i]]


@cuda.jit
def transpose_32(a, out):
    tile = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile[ty, tx] = a[cuda.blockIdx.y * TILE + ty, cuda.blockIdx.x * TILE + tx]
    cuda.syncthreads()
    out[cuda.blockIdx.x * TILE + ty, cuda.blockIdx.y * TILE + tx] = tile[tx, ty]


@cuda.jit
def transpose_33(a, out):
    tile = cuda.shared.array((TILE, TILE_PAD), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile[ty, tx] = a[cuda.blockIdx.y * TILE + ty, cuda.blockIdx.x * TILE + tx]
    cuda.syncthreads()
    out[cuda.blockIdx.x * TILE + ty, cuda.blockIdx.y * TILE + tx] = tile[tx, ty]


@cuda.jit
def dot_shared(a, b, out, n):
    cache = cuda.shared.array(TPB, float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    v = float32(0.0)
    if i < n:
        v = a[i] * b[i]
    cache[t] = v
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if t < s:
            cache[t] += cache[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]


# ---------------------------------------------------------------- the cases
@dataclass(frozen=True)
class Case:
    """One launch: ``make_args()`` gives fresh arguments (NumPy arrays and scalars) from a fixed seed."""

    name: str
    kernel: Callable
    grid: tuple
    block: tuple
    make_args: Callable[[], tuple]


def _f32(n, seed=1):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def _f64(n, seed=2):
    return np.random.default_rng(seed).standard_normal(n)


def _u8(n, seed=3):
    return np.random.default_rng(seed).integers(0, 256, n).astype(np.uint8)


def _zeros(shape, dtype=np.float32):
    return np.zeros(shape, dtype)


def _i32(values):
    return np.asarray(values, dtype=np.int32)


_rng = np.random.default_rng(33)
GATHER_IDX = _i32(_rng.integers(0, 4096, 256))
SCATTER_IDX = _i32(_rng.permutation(1024)[:256])
HIST_BINS = _i32(_rng.integers(0, 16, 256))
SH_IDX = _i32(_rng.integers(0, 128, 256))
_lane = np.arange(32)
_half = _lane >= 16
# One warp of float64 shared loads per case: which elements lanes 0-15 and 16-31 read (ncu: 8-byte accesses).
F64_PATTERNS = {
    "halves_same16": _lane % 16,                     # both halves read elements 0-15
    "two_elements": _half.astype(int),               # lanes 0-15 read element 0, lanes 16-31 element 1
    "halves_same_bank": 16 * _half,                  # element 0 and element 16: the same two banks
    "half_broadcast": np.where(_half, 0, _lane),     # lanes 0-15 read 0-15, lanes 16-31 all read element 0
    "uneven": np.where(_lane < 8, 0, 16) * ~_half,   # lanes 0-7: 0, lanes 8-15: 16, lanes 16-31: 0
    "even_then_low": np.where(_half, _lane - 16, 2 * _lane),
    "all_distinct": _lane,
    "broadcast": 0 * _lane,
}


def _shared(name, kernel, make, ss, ls, block=64, dtype=np.float32):
    return Case(name, kernel, (2,), (block,), lambda: (make(2 * block), _zeros(2 * block, dtype), ss, ls))


CASES: list[Case] = [
    Case("g_coalesced_f32", g_copy, (2,), (128,), lambda: (_f32(256), _zeros(256))),
    Case("g_stride2_f32", g_stride, (2,), (128,), lambda: (_f32(512), _zeros(256), 2)),
    Case("g_stride8_f32", g_stride, (2,), (128,), lambda: (_f32(2048), _zeros(256), 8)),
    Case("g_stride32_f32", g_stride, (2,), (128,), lambda: (_f32(8192), _zeros(256), 32)),
    Case("g_misaligned_f32", g_offset, (2,), (128,), lambda: (_f32(257), _zeros(256), 1)),
    Case("g_per_warp_word_f32", g_per_warp, (2,), (128,), lambda: (_f32(8), _zeros(256))),
    Case("g_partial_warps_f32", g_guarded, (4,), (48,), lambda: (_f32(192), _zeros(192), 168)),
    Case("g_half_warps_f32", g_half_warps, (2,), (64,), lambda: (_f32(128), _zeros(128))),
    Case("g_rows_pitch80_f32", g_rows, (2, 2), (16, 8),
         lambda: (_f32(320).reshape(16, 20), _zeros((16, 20)))),
    Case("g_rows_pitch104_f64", g_rows, (1, 2), (13, 6),
         lambda: (_f64(156).reshape(12, 13), _zeros((12, 13), np.float64))),
    Case("g_coalesced_f64", g_copy, (2,), (128,), lambda: (_f64(256), _zeros(256, np.float64))),
    Case("g_misaligned_f64", g_offset, (2,), (128,), lambda: (_f64(257), _zeros(256, np.float64), 1)),
    Case("g_coalesced_u8", g_copy, (2,), (128,), lambda: (_u8(256), _zeros(256, np.uint8))),
    Case("g_offset5_u8", g_offset, (2,), (128,), lambda: (_u8(261), _zeros(256, np.uint8), 5)),
    Case("g_store_stride2_f32", g_store_stride, (2,), (128,), lambda: (_f32(256), _zeros(512), 2)),
    Case("g_gather_random_f32", g_gather, (2,), (128,), lambda: (_f32(4096), GATHER_IDX.copy(), _zeros(256))),
    Case("g_scatter_random_f32", g_scatter, (2,), (128,),
         lambda: (_f32(256), SCATTER_IDX.copy(), _zeros(1024))),
    Case("g_if_else_f32", g_if_else, (2,), (128,), lambda: (_f32(256), _f32(256, 7), _zeros(256))),
    Case("g_loop_divergent_f32", g_loop_divergent, (2,), (128,), lambda: (_f32(1024), _zeros(256), 256)),
    Case("g_loop4_f32", g_loop4, (2,), (128,), lambda: (_f32(1024), _zeros(256), 256)),
    Case("atomic_discard_f32", atomic_discard, (2,), (128,), lambda: (_f32(256), _zeros(256), 1)),
    Case("atomic_used_f32", atomic_used, (2,), (128,), lambda: (_f32(256), _zeros(256), _zeros(256), 1)),
    Case("atomic_discard_f64", atomic_discard, (2,), (128,),
         lambda: (_f64(256), _zeros(256, np.float64), 1)),
    Case("atomic_discard_stride8_f32", atomic_discard, (2,), (128,), lambda: (_f32(256), _zeros(2048), 8)),
    Case("atomic_count_discard_i32", atomic_count_discard, (2,), (128,), lambda: (_zeros(1, np.int32),)),
    Case("atomic_count_used_i32", atomic_count_used, (2,), (128,),
         lambda: (_zeros(1, np.int32), _zeros(256, np.int32))),
    Case("atomic_hist_i32", atomic_hist, (2,), (128,), lambda: (HIST_BINS.copy(), _zeros(16, np.int32))),
    Case("atomic_hist_same_i32", atomic_hist, (2,), (128,),
         lambda: (_zeros(256, np.int32), _zeros(16, np.int32))),
    Case("atomic_hist_pairs_i32", atomic_hist, (2,), (128,),
         lambda: (_i32(np.arange(256) % 2), _zeros(16, np.int32))),
    Case("atomic_used_same_f32", atomic_used, (2,), (128,), lambda: (_f32(256), _zeros(1), _zeros(256), 0)),
    _shared("sh_stride1_f32", sh_stride_f32, _f32, 1, 1),
    _shared("sh_stride2_f32", sh_stride_f32, _f32, 2, 2),
    _shared("sh_stride32_f32", sh_stride_f32, _f32, 32, 32),
    _shared("sh_stride33_f32", sh_stride_f32, _f32, 33, 33),
    _shared("sh_broadcast_f32", sh_stride_f32, _f32, 1, 0),
    _shared("sh_stride32_partial_f32", sh_stride_f32, _f32, 32, 32, block=48),
    _shared("sh_stride1_f64", sh_stride_f64, _f64, 1, 1, dtype=np.float64),
    _shared("sh_stride2_f64", sh_stride_f64, _f64, 2, 2, dtype=np.float64),
    _shared("sh_stride16_f64", sh_stride_f64, _f64, 16, 16, dtype=np.float64),
    _shared("sh_stride17_f64", sh_stride_f64, _f64, 17, 17, dtype=np.float64),
    _shared("sh_stride32_f64", sh_stride_f64, _f64, 32, 32, dtype=np.float64),
    _shared("sh_broadcast_f64", sh_stride_f64, _f64, 1, 0, dtype=np.float64),
    _shared("sh_stride1_partial_f64", sh_stride_f64, _f64, 1, 1, block=48, dtype=np.float64),
    _shared("sh_stride1_u8", sh_stride_u8, _u8, 1, 1, dtype=np.uint8),
    _shared("sh_stride128_u8", sh_stride_u8, _u8, 128, 128, dtype=np.uint8),
    Case("sh_gather_random_f32", sh_gather_f32, (2,), (128,),
         lambda: (_f32(256), SH_IDX.copy(), _zeros(256))),
    Case("sh_gather_random_f64", sh_gather_f64, (2,), (128,),
         lambda: (_f64(256), SH_IDX.copy(), _zeros(256, np.float64))),
    *(Case(f"sh_f64_{k}", sh_gather_f64, (1,), (32,), lambda v=v: (_f64(32), _i32(v), _zeros(32, np.float64)))
      for k, v in F64_PATTERNS.items()),
    Case("transpose_unpadded_32", transpose_32, (2, 2), (32, 32),
         lambda: (_f32(4096).reshape(64, 64), _zeros((64, 64)))),
    Case("transpose_padded_33", transpose_33, (2, 2), (32, 32),
         lambda: (_f32(4096).reshape(64, 64), _zeros((64, 64)))),
    Case("dot_shared_f32", dot_shared, (4,), (TPB,), lambda: (_f32(200, 4), _f32(200, 5), _zeros(4), 200)),
]

# The ncu metric base names gpusim reports (".sum" appended), then extras read to check the kernels.
CONTRACT_METRICS = [
    *(f"l1tex__t_{w}_pipe_lsu_mem_global_op_{op}" for w in ("requests", "sectors")
      for op in ("ld", "st", "atom", "red")),
    *(f"smsp__sass_inst_executed_op_{sp}_{op}" for sp in ("global", "shared") for op in ("ld", "st")),
    *(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}" for op in ("ld", "st")),
    *(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}" for op in ("ld", "st")),
    "dram__bytes_read", "dram__bytes_write",
]
EXTRA_METRICS = [
    "smsp__sass_inst_executed_op_global_atom", "smsp__sass_inst_executed_op_global_red",
    "lts__t_sectors_op_read", "lts__t_sectors_op_write", "lts__t_sectors_op_atom", "lts__t_sectors_op_red",
    *(f"smsp__sass_thread_inst_executed_op_{op}_pred_on" for op in ("fadd", "fmul", "ffma", "dadd", "dmul",
                                                                     "dfma")),
]


def run_all(sass_path: str | None = None) -> None:
    """Launch every case once on the GPU, in order; optionally write each kernel's SASS to ``sass_path``."""
    for case in CASES:
        args = case.make_args()
        dev = [cuda.to_device(x) if isinstance(x, np.ndarray) else x for x in args]
        case.kernel[case.grid, case.block](*dev)
        cuda.synchronize()
    if sass_path:
        seen = set()
        with open(sass_path, "w") as f:
            for case in CASES:
                if case.kernel.py_func.__name__ in seen:
                    continue
                seen.add(case.kernel.py_func.__name__)
                try:
                    text = "\n".join(case.kernel.inspect_sass().values())
                except Exception as e:  # nvdisasm missing: keep going, the counters still say it
                    text = f"inspect_sass failed: {e!r}"
                f.write(f"##### {case.kernel.py_func.__name__}\n{text}\n")


def profile(outdir: str) -> None:
    """Run the cases under ncu; write ncu_h200.csv, sass.txt, meta.txt, log.txt and the metric list."""
    import subprocess

    q = subprocess.run(["ncu", "--query-metrics"], capture_output=True, text=True)
    avail = {line.split()[0] for line in q.stdout.splitlines() if line.strip()}
    with open(os.path.join(outdir, "ncu_query_metrics.txt"), "w") as f:
        f.write(q.stdout + q.stderr)
    wanted = CONTRACT_METRICS + EXTRA_METRICS
    names = CONTRACT_METRICS + [m for m in EXTRA_METRICS if m in avail]
    known = [m for m in CONTRACT_METRICS if m in avail] or CONTRACT_METRICS
    base = ["--print-units", "base"]  # units are in the CSV either way; base is easier to read
    script = [sys.executable, os.path.abspath(__file__), "--run", os.path.join(outdir, "sass.txt")]
    log = [f"metrics this ncu lacks: {sorted(set(wanted) - avail)}"]
    for units, ms in [(base, names), ([], names), (base, known)]:  # ncu refuses unknown names
        cmd = ["ncu", "--clock-control", "none", "--csv", *units,
               "--metrics", ",".join(m + ".sum" for m in ms), *script]
        r = subprocess.run(cmd, capture_output=True, text=True)
        rows = [ln for ln in r.stdout.splitlines() if ln.startswith('"')]
        log += [f"cmd: {' '.join(cmd)}", f"rc: {r.returncode}, {len(rows)} csv rows",
                *(ln for ln in r.stdout.splitlines() if not ln.startswith('"')),
                "--- stderr", r.stderr[-8000:]]
        if len(rows) > len(CASES):
            break
    with open(os.path.join(outdir, "ncu_h200.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    with open(os.path.join(outdir, "log.txt"), "w") as f:
        f.write("\n".join(log) + "\n")
    meta = [["ncu", "--version"], ["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,memory.total",
                                   "--format=csv"], ["date", "-u"]]
    with open(os.path.join(outdir, "meta.txt"), "w") as f:
        for m in meta:
            try:
                f.write(subprocess.run(m, capture_output=True, text=True).stdout)
            except OSError as e:
                f.write(f"{m[0]}: {e}\n")
        import numba_cuda
        py = sys.version.split()[0]
        f.write(f"numba-cuda {numba_cuda.__version__}, numpy {np.__version__}, python {py}\n")
        f.write("cases in launch order: " + ", ".join(c.name for c in CASES) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--profile"]:
        profile(sys.argv[2])
    elif sys.argv[1:2] == ["--run"]:
        run_all(sys.argv[2] if len(sys.argv) > 2 else None)
    else:
        print(__doc__)
