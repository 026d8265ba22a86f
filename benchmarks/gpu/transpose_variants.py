"""Puzzle 17's tiled transpose on the GPU: the reference beside the loop it replaced, with the copy bandwidth.

    python3 benchmarks/gpu/transpose_variants.py [--sizes 26 24] [--samples 15] [--json OUT]

For each size (log2 of the elements: 26 is 8192 x 8192 float32, the launch of ``Puzzle.bench``) it times,
in one run and the same way as ``copy_variants.py`` (CUDA events, L2 flushed before every sample, the
launch queued behind a spin kernel, median of the samples):

* ``device copy``: the same bytes copied device to device, the bandwidth every row is a share of;
* ``17 reference``: ``solutions/transpose_tiled.py`` as committed — each thread's four loads into a local
  array, then its four stores into the tile;
* ``17 load-store``: the reference before (the file until this script was written): a loop
  ``for y in range(ty, TILE, ROWS)`` that stores each element into the tile right after loading it;
* both again with an unpadded 32 x 32 tile (32-way bank conflicts on the column reads), and
  ``16 reference``, the naive transpose (``solutions/transpose_naive.py``): the numbers puzzle 17's
  description quotes;
* ``two tiles/block``: not a puzzle's kernel — two tiles per block, eight loads in flight per thread;

and for each kernel the order of its global loads and shared stores in the PTX numba-cuda generated
(``ld ld ld ld | st st st st`` means four loads in flight before the first store). Every output is
compared with ``a.T``. Needs NumPy, numba-cuda and this checkout (no textual, no platformdirs); under a
minute on an H200. ``NUMBA_ENABLE_CUDASIM=1 ... --sizes 10 --samples 2`` checks the script on a CPU (the
times then mean nothing, and there is no PTX).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import time
import types
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

import numba  # noqa: E402
from numba import cuda  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT)]

from copy_variants import SIM, Timer, device, finish, parse_args  # noqa: E402

from puzzles.ch03_memory import p16_transpose_naive, p17_transpose_tiled  # noqa: E402

TILE, ROWS = p17_transpose_tiled.TILE, p17_transpose_tiled.ROWS


def load_store_loop(padded: int):
    """Puzzle 17's reference until 2026-12-02: each element goes into the tile as soon as it is loaded. The
    tile's width is a global of the kernel's own (numba-cuda takes a shape from globals as constants, not
    from a closure's cell, which it types as a plain int64)."""
    def transpose_tiled(a, out, rows, cols):
        tile = cuda.shared.array((TILE, PADDED), numba.float32)  # noqa: F821 (each kernel's own global)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        r0 = cuda.blockIdx.y * TILE
        c0 = cuda.blockIdx.x * TILE
        for y in range(ty, TILE, ROWS):
            r = r0 + y
            c = c0 + tx
            if r < rows and c < cols:
                tile[y, tx] = a[r, c]
        cuda.syncthreads()
        for y in range(ty, TILE, ROWS):
            r = c0 + y
            c = r0 + tx
            if r < cols and c < rows:
                out[r, c] = tile[tx, y]
    return cuda.jit(types.FunctionType(transpose_tiled.__code__, {**globals(), "PADDED": padded},
                                       "transpose_tiled"))


def two_tiles():
    """Not a puzzle's kernel: each block moves two tiles side by side, eight loads in flight per thread
    (what more bytes in flight would give, if four per thread stay short of the copy)."""
    @cuda.jit
    def transpose_two_tiles(a, out, rows, cols):
        tile = cuda.shared.array((TILE, 2 * TILE + 1), numba.float32)
        vals = cuda.local.array(8, numba.float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        r0 = cuda.blockIdx.y * TILE
        c0 = cuda.blockIdx.x * 2 * TILE
        for k in range(8):
            r = r0 + ty + (k % 4) * ROWS
            c = c0 + tx + (k // 4) * TILE
            vals[k] = a[r, c] if r < rows and c < cols else numba.float32(0)
        for k in range(8):
            tile[ty + (k % 4) * ROWS, tx + (k // 4) * TILE] = vals[k]
        cuda.syncthreads()
        for k in range(8):
            y = ty + k * ROWS
            r = c0 + y
            c = r0 + tx
            if r < cols and c < rows:
                out[r, c] = tile[tx, y]
    return transpose_two_tiles


def load(path: Path, kernel: str, **constants):
    """A solution file's kernel, with module constants replaced (``PADDED=32``) before numba compiles it."""
    spec = importlib.util.spec_from_file_location(f"variant_{path.stem}_{len(constants)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    vars(module).update(constants)
    return getattr(module, kernel)


def variants():
    """(name, puzzle module, kernel, grid or None for the puzzle's)."""
    ref17 = ROOT / "solutions" / "transpose_tiled.py"
    return [
        ("17 reference", p17_transpose_tiled, load(ref17, "transpose_tiled"), None),
        ("17 load-store", p17_transpose_tiled, load_store_loop(TILE + 1), None),
        ("17 ref unpadded", p17_transpose_tiled, load(ref17, "transpose_tiled", PADDED=TILE), None),
        ("17 l-s unpadded", p17_transpose_tiled, load_store_loop(TILE), None),
        ("two tiles/block", p17_transpose_tiled, two_tiles(),
         lambda rows, cols: ((cols + 2 * TILE - 1) // (2 * TILE), (rows + TILE - 1) // TILE)),
        ("16 reference", p16_transpose_naive, load(ROOT / "solutions" / "transpose_naive.py", "transpose_naive"),
         None),
    ]


def memory_order(kernel) -> str:
    """The kernel's global loads (ld), shared stores (st) and barriers (|) in PTX order."""
    if SIM:
        return ""
    ptx = "\n".join(kernel.inspect_asm().values())
    ops = re.findall(r"^\s*(?:@!?%p\d+\s+)?(ld\.global|st\.shared|bar\.sync)", ptx, re.M)
    return " ".join({"ld.global": "ld", "st.shared": "st", "bar.sync": "|"}[o] for o in ops)


def run_size(log2n: int, timer: Timer) -> list[dict]:
    cases = {m: m.PUZZLE.bench(1 << log2n) for m in (p16_transpose_naive, p17_transpose_tiled)}
    a_host = cases[p17_transpose_tiled].buffers["a"]
    rows_n, cols_n = a_host.shape
    expect = np.ascontiguousarray(a_host.T)
    a = cuda.to_device(a_host)
    out = cuda.device_array((cols_n, rows_n), np.float32)
    moved = 2 * a_host.nbytes
    flat_a, flat_out = a.reshape(a_host.size), out.reshape(a_host.size)
    rows = [{"size": log2n, "variant": "device copy", "shape": [rows_n, cols_n], "bytes": moved,
             "seconds": timer.time(lambda s: flat_out.copy_to_device(flat_a, stream=s)), "order": ""}]
    for name, module, kernel, grid_of in variants():
        step = cases[module].steps[0]
        grid = grid_of(rows_n, cols_n) if grid_of else step.grid
        launch = kernel[grid, step.block]
        out[:] = np.float32(np.nan)
        launch(a, out, rows_n, cols_n)          # compile and check once
        cuda.synchronize()
        ok = bool(np.array_equal(out.copy_to_host(), expect))
        seconds = timer.time(lambda s, k=kernel, g=grid, b=step.block: k[g, b, s](a, out, rows_n, cols_n))
        rows.append({"size": log2n, "variant": name, "shape": [rows_n, cols_n], "bytes": moved,
                     "seconds": seconds, "correct": ok, "order": memory_order(kernel)})
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"{'n':>5} {'shape':>11} {'variant':<16} {'time':>10} {'GB/s':>7} {'% copy':>7}  ok   "
          "PTX order: global loads (ld), shared stores (st), barrier (|)")
    for size in sorted({r["size"] for r in rows}, reverse=True):
        sel = [r for r in rows if r["size"] == size]
        copy_bw = sel[0]["bytes"] / sel[0]["seconds"]
        for r in sel:
            bw = r["bytes"] / r["seconds"]
            ok = "" if "correct" not in r else ("yes" if r["correct"] else "NO")
            shape = "x".join(map(str, r["shape"]))
            print(f"2^{size:<3} {shape:>11} {r['variant']:<16} {r['seconds'] * 1e6:>8.1f}µs {bw / 1e9:>7.0f} "
                  f"{100 * bw / copy_bw:>6.1f}%  {ok:<4} {r['order']}")


def main(argv=None) -> int:
    args = parse_args(argv, __doc__)
    started = time.perf_counter()
    _, l2, name = device()
    print(f"device: {name}; float32; median of {args.samples} samples, L2 flushed, launch queued behind a spin")
    timer = Timer(l2, args.samples)
    rows = []
    for log2n in args.sizes:
        rows += run_size(log2n, timer)
    print_table(rows)
    return finish(rows, started, args.json)


if __name__ == "__main__":
    sys.exit(main())
