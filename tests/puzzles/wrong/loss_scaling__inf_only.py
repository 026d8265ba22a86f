# WRONG: loss-scaling expect=mismatch
# Checks for infinity only. A NaN gradient (inf - inf in the backward pass) passes the check, the step is
# taken, and the NaN spreads into every weight it touches.

import math

import numba
from numba import cuda

GROWTH_FACTOR = 2.0
BACKOFF_FACTOR = 0.5


@cuda.jit
def find_inf_kernel(grads, found_inf):
    i = cuda.grid(1)
    bad = 0
    if i < grads.size:
        v = numba.float32(grads[i])
        if math.isinf(v):
            bad = 1
    if cuda.syncthreads_or(bad) and cuda.threadIdx.x == 0:
        cuda.atomic.max(found_inf, 0, 1)


@cuda.jit
def sgd_step_kernel(w, grads, scale, found_inf, lr):
    i = cuda.grid(1)
    if i < w.size and found_inf[0] == 0:
        w[i] -= lr * (numba.float32(grads[i]) / scale[0])


@cuda.jit
def update_scale_kernel(scale, growth_tracker, found_inf, growth_interval):
    if found_inf[0] != 0:
        scale[0] *= BACKOFF_FACTOR
        growth_tracker[0] = 0
    else:
        tracker = growth_tracker[0] + 1
        if tracker == growth_interval:
            scale[0] *= GROWTH_FACTOR
            tracker = 0
        growth_tracker[0] = tracker
