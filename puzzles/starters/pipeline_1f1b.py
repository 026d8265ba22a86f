"""Puzzle 69 — A pipeline schedule: 1F1B.

make_schedule: thread m places micro-batch m's ops in this stage's row: sched[t] = m + 1 (forward of m) and
sched[t'] = -(m + 1) (its backward); every other tick stays 0 (idle).
pipeline_tick: runs at every tick on every stage; op = sched[tick]; thread i handles feature i.
  forward of m:   h = prev[m, i]; stash[m, i] = h; act[m, i] = w[i] * h + b[i]
  backward of m:  h = stash[m, i]; g = nxt[m, i] (last stage: g = w[i] * h + b[i] - nxt[m, i]);
                  dw[i] += g * h; db[i] += g; grad[m, i] = g * w[i]
Row m of every buffer a means row m % a.shape[0]: stash, act and grad are rings of a few slots.
"""
from numba import cuda


@cuda.jit
def make_schedule(sched, stage, stages, micro):
    m = cuda.threadIdx.x
    # FILL ME IN (about 8 lines)
    pass


@cuda.jit
def pipeline_tick(sched, tick, prev, act, stash, nxt, grad, w, b, dw, db, stage, stages):
    i = cuda.threadIdx.x
    op = sched[tick]
    # FILL ME IN (about 16 lines)
    pass
