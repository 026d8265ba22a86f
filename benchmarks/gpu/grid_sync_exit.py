"""A grid sync that some threads skip on their way out of the kernel: what a GPU does, beside what gpusim reports.

    python benchmarks/gpu/grid_sync_exit.py                  # the GPU (or numba's simulator), then gpusim
    python benchmarks/gpu/grid_sync_exit.py --sanitize       # and again under compute-sanitizer's synccheck:
        compute-sanitizer --tool synccheck --error-exitcode 9 python benchmarks/gpu/grid_sync_exit.py --gpu-only
    python benchmarks/gpu/grid_sync_exit.py --master-exits   # also with each block's thread 0 leaving

Two kernels, 4 blocks of 64 threads each: in ``return first`` the threads of odd index return before
``cuda.cg.this_grid().sync()``; in ``sync in an if`` the sync is inside ``if flags[g] != 0:`` and the other
threads skip it and leave the kernel. The threads that reach the sync write their element of ``out``, sync the
grid, then read the element two further on (written by another thread that stays, in the same block or the
next, before the sync) into ``res``: if the sync holds, ``res[g] = g + 1 + 1000 * (g + 3)`` (``case``, counted
by hand). ``--master-exits`` adds the cases where the odd threads stay and so each block's thread 0 leaves
(the thread that, in CUDA's cooperative-groups grid barrier, signals its block's arrival): a GPU may then
never finish the sync, so each runs in a child killed after 60 s.

Each line printed is one finding, ``[kernel, case]`` then ``gpu: correct|WRONG ...|hang`` (numba's simulator
instead where ``NUMBA_ENABLE_CUDASIM=1``: it cannot sync a grid), ``gpusim: <faults>; results correct|WRONG``
(``gpusim.launch`` on the same kernel, where gpusim is importable: run from the repository root), and with
``--sanitize`` synccheck's error summary. gpusim's position to check against the GPU: threads that returned do
not hold up a barrier (no fault for ``return first``); a barrier the other threads skip and then leave the
kernel is a ``BarrierDivergence`` with ``skipped_by_exiting`` set, which the drop-in reports and does not raise,
since a GPU passes it once they have exited (``gpusim/backends/lanes/barriers.py``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still calls np.row_stack, removed in NumPy 2.5
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

BLOCKS, THREADS = 4, 64
#: what ran the kernel through numba.cuda: numba's simulator cannot sync a grid (it runs one block at a time)
DEVICE = "numba's simulator" if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" else "gpu"
N = BLOCKS * THREADS


@cuda.jit
def skip_by_exit(out, res, flags):
    g = cuda.grid(1)
    if g >= out.shape[0]:
        return
    if flags[g] == 0:
        return
    out[g] = g + 1
    cuda.cg.this_grid().sync()
    j = (g + 2) % out.shape[0]
    res[g] = out[g] + 1000 * out[j]   # into another array: thread j does not write out[j] again


@cuda.jit
def sync_in_branch(out, res, flags):
    g = cuda.grid(1)
    if g < out.shape[0] and flags[g] != 0:  # the others skip the sync, then leave the kernel
        out[g] = g + 1
        cuda.cg.this_grid().sync()
        j = (g + 2) % out.shape[0]
        res[g] = out[g] + 1000 * out[j]


KERNELS = {"return first": skip_by_exit, "sync in an if": sync_in_branch}


def case(master_exits: bool) -> tuple[np.ndarray, np.ndarray]:
    """(flags, expected ``res``): the even threads stay (thread 0 of each block among them), or with
    ``master_exits`` the odd ones (thread 0 of each block leaves). ``res[g] = g + 1 + 1000 * (j + 1)`` for the
    threads that stay, ``j = (g + 2) % N`` staying too: counted by hand, it needs the sync to hold."""
    g = np.arange(N)
    stay = g % 2 == (1 if master_exits else 0)
    expect = np.where(stay, g + 1 + 1000 * ((g + 2) % N + 1), 0).astype(np.int64)
    return stay.astype(np.int32), expect


def verdict(out: np.ndarray, expect: np.ndarray) -> str:
    if np.array_equal(out, expect):
        return "correct"
    bad = np.flatnonzero(out != expect)
    return f"WRONG at {bad.size} elements, first {int(bad[0])}: {int(out[bad[0]])} (expected {int(expect[bad[0]])})"


def on_device(kernel: str, master_exits: bool) -> str:
    flags, expect = case(master_exits)
    out, res = np.zeros(N, np.int64), np.zeros(N, np.int64)
    KERNELS[kernel][BLOCKS, THREADS](out, res, flags)
    cuda.synchronize()
    return verdict(res, expect)


def on_gpusim(kernel: str, master_exits: bool) -> str:
    root = str(Path(__file__).resolve().parents[2])   # run as a script, sys.path[0] is benchmarks/gpu
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        import gpusim
    except ImportError:
        return "not importable here (run from the repository root)"
    flags, expect = case(master_exits)
    out, res = np.zeros(N, np.int64), np.zeros(N, np.int64)
    report = gpusim.launch(KERNELS[kernel], BLOCKS, THREADS, (out, res, flags), instrument=False, trace=False)
    faults = [f"{type(f).__name__}(skipped_by_exiting={getattr(f, 'skipped_by_exiting', None)}) at line "
              f"{f.where.rsplit(':', 1)[-1]}: {f.summary}" for f in report.faults] or ["no fault"]
    return "; ".join(faults) + f"; results {verdict(res, expect)}"


def sanitized() -> str:
    tool = shutil.which("compute-sanitizer")
    if tool is None:
        return "compute-sanitizer not found"
    cmd = [tool, "--tool", "synccheck", "--error-exitcode", "9", sys.executable, __file__, "--gpu-only"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    lines = (proc.stdout + proc.stderr).splitlines()
    keep = [ln for ln in lines if "ERROR SUMMARY" in ln or "Barrier" in ln or "barrier" in ln][:6]
    return f"exit {proc.returncode}: " + (" | ".join(keep) or " | ".join(lines[-3:]))


def main(argv: list[str]) -> None:
    if "--child" in argv:  # one case that may hang, in a child: --child KERNEL
        print(on_device(argv[argv.index("--child") + 1], True), flush=True)
        return
    for kernel in KERNELS:
        cases = [("thread 0 of each block stays", False)] + (
            [("thread 0 of each block leaves", True)] if "--master-exits" in argv else [])
        for label, master in cases:
            if master:  # a GPU may hang here: in a child, with a limit
                try:
                    proc = subprocess.run([sys.executable, __file__, "--child", kernel], capture_output=True,
                                          text=True, timeout=60)
                    lines = proc.stdout.strip().splitlines()
                    gpu = lines[-1] if lines else f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
                except subprocess.TimeoutExpired:
                    gpu = "hang (no result within 60 s; the child was killed)"
            else:
                gpu = on_device(kernel, False)
            print(f"[{kernel}, {label}] {DEVICE}: {gpu}", flush=True)
            if "--gpu-only" not in argv:
                print(f"[{kernel}, {label}] gpusim: {on_gpusim(kernel, master)}", flush=True)
    if "--sanitize" in argv:
        print(f"[both kernels, thread 0 stays] synccheck: {sanitized()}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
