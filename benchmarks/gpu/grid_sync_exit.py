"""Grid syncs that some threads never reach because they leave the kernel: does the H200 pass them (no hang,
right values), and does compute-sanitizer's synccheck complain?
  python3 grid_sync_exit.py
  compute-sanitizer --tool synccheck python3 grid_sync_exit.py
Blocks of 64 threads, 4 blocks; threads whose flag is 0 leave; the others write, sync the grid, then read a
neighbour's value written before the sync (from a second array, so no thread reads what another writes after).
* returns_first: the leaving threads return before the sync (the guard pattern);
* sync_in_branch: the sync is inside `if flags[g] != 0:`, the kernel's last statement (numba-cuda's
  sessionize example): the other threads fall off the end of the kernel without reaching it."""
import numpy as np
np.row_stack = np.vstack
from numba import cuda


@cuda.jit
def returns_first(out, before, flags):
    g = cuda.grid(1)
    if g >= out.shape[0]:
        return
    if flags[g] == 0:
        return
    before[g] = g + 1
    cuda.cg.this_grid().sync()
    j = (g + 2) % out.shape[0]
    out[g] = before[g] + 1000 * before[j]


@cuda.jit
def sync_in_branch(out, before, flags):
    g = cuda.grid(1)
    if g < out.shape[0] and flags[g] != 0:
        before[g] = g + 1
        cuda.cg.this_grid().sync()
        j = (g + 2) % out.shape[0]
        out[g] = before[g] + 1000 * before[j]


n = 256
flags = (np.arange(n) % 2 == 0).astype(np.int32)
expect = np.zeros(n, np.int64)
even = np.arange(0, n, 2)
expect[even] = even + 1 + 1000 * (((even + 2) % n) + 1)
for kernel in (returns_first, sync_in_branch):
    out = np.zeros(n, np.int64)
    before = np.zeros(n, np.int64)
    kernel[4, 64](out, before, flags)
    print(kernel.__name__, "correct" if np.array_equal(out, expect) else f"WRONG {out[:8]} vs {expect[:8]}")
