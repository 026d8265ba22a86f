"""Where ncu's "bank conflicts" in conflict-free kernels come from: one ncu run that separates the causes.

    python3 benchmarks/gpu/ncu_bank_excess.py --profile OUTDIR     # ncu.csv, table.txt (also printed)
    python3 benchmarks/gpu/ncu_bank_excess.py --run                # what ncu profiles: each launch once

In many-block launches the H200's ncu reads a few more shared-memory wavefronts than shared instructions
(0.07-0.5 %, docs/metrics.md) for kernels whose every warp request touches 32 distinct banks, and reports
them as ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}``; two-to-four-block launches read none.
The L1 data cache and shared memory are one SRAM with one set of banks, so the suspicion (see docs/graduate.md)
is that the counter also takes in shared wavefronts that lose arbitration for the banks to other L1 traffic
of the SM — global loads filling L1 lines — rather than conflicts within a request.

Every kernel here has 256 threads per block. Warps 0-3 read shared memory conflict-free (``s[(t + k) % 256]``:
32 consecutive words per request, ``SHARED_REPS`` times); warps 4-7 at the same time do one of:

* ``idle``  nothing (they exit);
* ``alu``   a dependent float chain (no memory);
* ``ldg``   coalesced global loads of a 64 MiB array (each fills L1 lines: the suspected cause);
* ``stg``   coalesced global stores (no L1 fill on sm_90);
* ``atom``  global atomic adds of 0 (served in L2: no L1 fill);

each at 1 block, 132 blocks (one per SM) and 1,056 blocks (8 per SM, all resident together). If the
suspicion holds, only ``ldg`` reads conflicts, and more with more blocks per SM; if the counter counted the
access pattern alone, every row would read 0. ``conflicts = wavefronts - instructions`` is checked too.
Needs ncu, NumPy and numba-cuda; about a minute on an H200. ``NUMBA_ENABLE_CUDASIM=1 ... --run`` checks the
kernels on a CPU.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30.4 with NumPy >= 2.5
    np.row_stack = np.vstack
os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")

from numba import cuda, float32  # noqa: E402

TPB = 256
HALF = TPB // 2
SHARED_REPS = 2048               # long enough to overlap the other warps' whole global phase
GLOBAL_REPS = 256
N = 1 << 24                      # float32: 64 MiB, past the L2, so every ldg sector comes from DRAM into L1
MODES = ("idle", "alu", "ldg", "stg", "atom")
GRIDS = (1, 132, 1056)


def make(mode: str):
    """The kernel for one mode (``mode`` is a closure constant: numba compiles only its branch)."""
    @cuda.jit
    def kernel(out, a):
        s = cuda.shared.array(TPB, float32)
        t = cuda.threadIdx.x
        s[t] = float32(t)
        cuda.syncthreads()
        acc = float32(0)
        if t < HALF:
            for k in range(SHARED_REPS):
                acc += s[(t + k) % TPB]
        elif mode != "idle":
            i = cuda.blockIdx.x * HALF + (t - HALF)
            step = cuda.gridDim.x * HALF
            for k in range(GLOBAL_REPS):
                j = (i + k * step) % N
                if mode == "ldg":
                    acc += a[j]
                elif mode == "stg":
                    a[j] = acc
                elif mode == "atom":
                    cuda.atomic.add(a, j, float32(0))
                else:
                    acc = acc * float32(1.0001) + float32(1)
        out[cuda.blockIdx.x * TPB + t] = acc
    return kernel


KERNELS = {m: make(m) for m in MODES}
LAUNCHES = [(m, g) for m in MODES for g in GRIDS]

METRICS = [
    *(f"smsp__sass_inst_executed_op_shared_{op}.sum" for op in ("ld", "st")),
    *(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum" for op in ("ld", "st")),
    *(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum" for op in ("ld", "st")),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
]
EXTRA = ["l1tex__m_xbar2l1tex_read_sectors.sum", "l1tex__data_bank_reads.sum", "l1tex__data_bank_writes.sum"]


def run_all() -> None:
    a = cuda.to_device(np.ones(N, np.float32))
    out = cuda.device_array(max(GRIDS) * TPB, np.float32)
    sim = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    for mode, grid in LAUNCHES:
        KERNELS[mode][(min(grid, 2) if sim else grid), TPB](out, a)
        cuda.synchronize()
        print(f"launched {mode} x {grid} blocks", file=sys.stderr)


def ncu_path() -> str | None:
    found = shutil.which("ncu")
    if found:
        return found
    for folder in ("/usr/local/cuda/bin", "/opt/nvidia/nsight-compute"):
        if os.access(os.path.join(folder, "ncu"), os.X_OK):
            return os.path.join(folder, "ncu")
    return None


def available(ncu: str, names: list[str]) -> list[str]:
    """The metrics of ``names`` this ncu knows for the device (its ``--query-metrics`` list)."""
    r = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True)
    return [n for n in names if n.rsplit(".", 1)[0] in r.stdout]


def parse(text: str) -> dict[int, dict[str, float]]:
    rows = [ln for ln in text.splitlines() if ln.startswith('"')]
    out: dict[int, dict[str, float]] = {}
    reader = csv.reader(io.StringIO("\n".join(rows)))
    header = next(reader, None)
    if not header:
        return out
    col = {h: i for i, h in enumerate(header)}
    for row in reader:
        if len(row) != len(header) or not row[col["ID"]].isdigit():
            continue
        value = row[col["Metric Value"]].replace(",", "")
        try:
            out.setdefault(int(row[col["ID"]]), {})[row[col["Metric Name"]]] = float(value)
        except ValueError:
            pass
    return out


def table(launches: dict[int, dict[str, float]], extra: list[str]) -> list[str]:
    short = {"l1tex__m_xbar2l1tex_read_sectors.sum": "L1 fill sect", "l1tex__data_bank_reads.sum": "bank reads",
             "l1tex__data_bank_writes.sum": "bank writes"}
    head = (f"{'mode':<5} {'blocks':>6} {'sh ld inst':>10} {'ld wavefr':>10} {'ld confl':>9} {'wf-inst':>8} "
            f"{'sh st inst':>10} {'st confl':>9} {'glob ld sect':>12} " + " ".join(f"{short[m]:>12}" for m in extra))
    lines = [head, "-" * len(head)]
    for i, (mode, grid) in enumerate(LAUNCHES):
        m = launches.get(i, {})

        def v(name: str, m=m) -> str:
            x = m.get(name)
            return "?" if x is None else f"{x:.0f}"
        ld_i = m.get("smsp__sass_inst_executed_op_shared_ld.sum")
        ld_w = m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
        excess = "?" if ld_i is None or ld_w is None else f"{ld_w - ld_i:.0f}"
        lines.append(
            f"{mode:<5} {grid:>6} {v(METRICS[0]):>10} {v(METRICS[2]):>10} {v(METRICS[4]):>9} {excess:>8} "
            f"{v(METRICS[1]):>10} {v(METRICS[5]):>9} {v(METRICS[6]):>12} " + " ".join(f"{v(x):>12}" for x in extra))
    conflicts = {(mode, grid): launches.get(i, {}).get(METRICS[4], 0) + launches.get(i, {}).get(METRICS[5], 0)
                 for i, (mode, grid) in enumerate(LAUNCHES)}
    with_conflicts = [f"{mode} x {grid}" for (mode, grid), c in conflicts.items() if c]
    lines.append("")
    lines.append("launches with any shared conflict counted: " + (", ".join(with_conflicts) or "none"))
    only_fills = with_conflicts and all(k.startswith("ldg") for k in with_conflicts)
    lines.append("verdict: " + (
        "only launches whose other warps fill L1 (global loads) read conflicts: the counter takes in arbitration "
        "with L1 traffic, not the access pattern" if only_fills else
        "no launch reads conflicts: the excess needs something these kernels lack" if not with_conflicts else
        "conflicts also without L1 fills: read the rows (the L1-fill account does not explain them all)"))
    return lines


def profile(outdir: str) -> int:
    ncu = ncu_path()
    if ncu is None:
        print("ncu not found (PATH, /usr/local/cuda/bin): nothing profiled")
        return 1
    os.makedirs(outdir, exist_ok=True)
    extra = available(ncu, EXTRA)
    cmd = [ncu, "--clock-control", "none", "--csv", "--print-units", "base", "--metrics", ",".join(METRICS + extra),
           sys.executable, os.path.abspath(__file__), "--run"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(outdir, "ncu.csv"), "w") as f:
        f.write("\n".join(ln for ln in r.stdout.splitlines() if ln.startswith('"')) + "\n")
    lines = [f"cmd: {' '.join(cmd)}", f"rc: {r.returncode}", "launch order: " +
             ", ".join(f"{i}={m}x{g}" for i, (m, g) in enumerate(LAUNCHES)), "",
             *table(parse(r.stdout), extra)]
    if r.returncode:
        lines += ["", "ncu stderr (tail):", r.stderr[-3000:]]
    text = "\n".join(lines)
    with open(os.path.join(outdir, "table.txt"), "w") as f:
        f.write(text + "\n")
    print(text)
    return 0 if r.returncode == 0 else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--profile"] and len(sys.argv) > 2:
        sys.exit(profile(sys.argv[2]))
    elif sys.argv[1:2] == ["--run"]:
        run_all()
    else:
        print(__doc__)
