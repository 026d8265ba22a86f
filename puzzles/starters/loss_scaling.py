"""Puzzle 60 — Dynamic loss scaling.

Launch 1 find_inf_kernel: found_inf[0] = 1 if any grads[i] (fp16) is inf or NaN (use an atomic).
Launch 2 sgd_step_kernel: unless found_inf[0], w[i] -= lr * (float32(grads[i]) / scale[0]).
Launch 3 update_scale_kernel (one thread): overflow -> scale *= 0.5, tracker = 0; otherwise tracker += 1,
and when it reaches growth_interval, scale *= 2 and tracker = 0.
Allowed: cuda.grid, cuda.syncthreads_or, cuda.atomic.max, math.isinf / isnan, numba.float32.
"""
import math

import numba
from numba import cuda

GROWTH_FACTOR = 2.0
BACKOFF_FACTOR = 0.5


@cuda.jit
def find_inf_kernel(grads, found_inf):
    i = cuda.grid(1)
    # FILL ME IN (about 6 lines)
    pass


@cuda.jit
def sgd_step_kernel(w, grads, scale, found_inf, lr):
    i = cuda.grid(1)
    # FILL ME IN (about 2 lines)
    pass


@cuda.jit
def update_scale_kernel(scale, growth_tracker, found_inf, growth_interval):
    # FILL ME IN (about 9 lines)
    pass
