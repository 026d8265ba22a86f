# WRONG: pipeline-1f1b expect=OutOfBounds
# Stashes micro-batch m in row m: the stash has only min(M, P - p) rows.

from numba import cuda


@cuda.jit
def make_schedule(sched, stage, stages, micro):
    m = cuda.threadIdx.x
    if m < micro:
        if m < stages - stage:
            forward = stage + m
        else:
            forward = 2 * m + stage
        sched[forward] = m + 1
        sched[2 * stages - 1 - stage + 2 * m] = -(m + 1)


@cuda.jit
def pipeline_tick(sched, tick, prev, act, stash, nxt, grad, w, b, dw, db, stage, stages):
    i = cuda.threadIdx.x
    op = sched[tick]
    if op == 0 or i >= w.size:
        return
    if op > 0:
        m = op - 1
        h = prev[m % prev.shape[0], i]
        stash[m, i] = h
        act[m % act.shape[0], i] = w[i] * h + b[i]
    else:
        m = -op - 1
        h = stash[m, i]
        g = nxt[m % nxt.shape[0], i]
        if stage == stages - 1:
            g = w[i] * h + b[i] - g
        dw[i] += g * h
        db[i] += g
        grad[m % grad.shape[0], i] = g * w[i]
