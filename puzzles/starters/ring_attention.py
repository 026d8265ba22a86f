"""Puzzle 70 — Ring attention.

attend_block: merge the key/value block in kv[slot] (keys kv[slot, 0], values kv[slot, 1], R rows each)
into the running softmax of this device's queries: per query row y, m[y] (running max), l[y] (running sum
of exp(score - m)), acc[y, :] (running sum of exp(score - m) * v); scores are (q . k) * scale. In the last
step (step == steps - 1) also write out = acc / l. Thread (x, y): query row y; key x while scoring,
column x while merging. Stage q and the block in shared memory first; only thread x == 0 stores m and l.
pass_block: copy the left neighbour's current block left_kv[slot] into kv[(slot + 1) % 2], one element
per thread.
"""
import math  # noqa: F401

import numba  # noqa: F401
from numba import cuda

D = 16       # head dimension (= R_MAX: thread x is a key, then a column)
R_MAX = 16   # the most rows per device; the block is (R_MAX, R_MAX) threads


@cuda.jit
def attend_block(q, kv, slot, m, l, acc, out, scale, step, steps):
    x = cuda.threadIdx.x
    y = cuda.threadIdx.y
    keys = kv.shape[2]
    # FILL ME IN (about 35 lines)
    pass


@cuda.jit
def pass_block(kv, left_kv, slot):
    e = cuda.grid(1)
    # FILL ME IN (about 6 lines)
    pass
