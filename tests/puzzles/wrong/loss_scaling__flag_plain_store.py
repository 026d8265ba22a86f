# WRONG: loss-scaling expect=DataRace
# Every thread that sees an overflow stores 1 into found_inf[0] with a plain store, as PyTorch's kernel does.
# The values agree, but concurrent plain stores to one address are a data race in CUDA's memory model:
# use an atomic (or vote in the block first).

import math

import numba
from numba import cuda

GROWTH_FACTOR = 2.0
BACKOFF_FACTOR = 0.5


@cuda.jit
def find_inf_kernel(grads, found_inf):
    i = cuda.grid(1)
    if i < grads.size:
        v = numba.float32(grads[i])
        if math.isinf(v) or math.isnan(v):
            found_inf[0] = 1


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
