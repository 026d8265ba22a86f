# WRONG: pipeline-1f1b expect=mismatch
# A GPipe schedule (all forwards, then all backwards): as short as 1F1B, but stage p keeps all M
# micro-batches in flight and its stash has only P - p slots, so activations are overwritten before
# their backward uses them.

from numba import cuda


@cuda.jit
def make_schedule(sched, stage, stages, micro):
    m = cuda.threadIdx.x
    if m < micro:
        sched[stage + m] = m + 1
        sched[micro + 2 * stages - 2 - stage + m] = -(m + 1)


@cuda.jit
def pipeline_tick(sched, tick, prev, act, stash, nxt, grad, w, b, dw, db, stage, stages):
    i = cuda.threadIdx.x
    op = sched[tick]
    if op == 0 or i >= w.size:
        return
    if op > 0:
        m = op - 1
        h = prev[m % prev.shape[0], i]
        stash[m % stash.shape[0], i] = h
        act[m % act.shape[0], i] = w[i] * h + b[i]
    else:
        m = -op - 1
        h = stash[m % stash.shape[0], i]
        g = nxt[m % nxt.shape[0], i]
        if stage == stages - 1:
            g = w[i] * h + b[i] - g
        dw[i] += g * h
        db[i] += g
        grad[m % grad.shape[0], i] = g * w[i]
