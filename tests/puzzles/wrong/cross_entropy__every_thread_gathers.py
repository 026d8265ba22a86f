# WRONG: cross-entropy expect=constraint:`targets`
# Correct numbers, but after the max and sum passes every thread walks its columns again comparing each
# with targets[r], re-reading `targets` for every column: up to 5 reads where the puzzle allows one.
import math

import numba
from numba import cuda

TPB = 64


@cuda.jit
def cross_entropy_kernel(logits, targets, loss):
    shared = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = logits.shape[1]
    m = -math.inf
    for c in range(t, cols, TPB):
        m = max(m, logits[r, c])
    shared[t] = m
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] = max(shared[t], shared[t + stride])
        cuda.syncthreads()
        stride //= 2
    row_max = shared[0]
    cuda.syncthreads()
    acc = 0.0
    for c in range(t, cols, TPB):
        acc += math.exp(logits[r, c] - row_max)
    shared[t] = acc
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] += shared[t + stride]
        cuda.syncthreads()
        stride //= 2
    picked = 0.0
    for c in range(t, cols, TPB):
        if c == targets[r]:
            picked = logits[r, c]
    if t == targets[r] % TPB:
        loss[r] = row_max + math.log(shared[0]) - picked
