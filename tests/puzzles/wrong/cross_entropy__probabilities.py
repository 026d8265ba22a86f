# WRONG: cross-entropy expect=mismatch
# Forms the probability the textbook way, -log(exp(logit[target]) / sum(exp(logits))), without the max:
# exp overflows float32 for logits near 500 and the loss comes out nan or inf.
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
    acc = 0.0
    for c in range(t, cols, TPB):
        acc += math.exp(logits[r, c])
    shared[t] = acc
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] += shared[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        loss[r] = -math.log(math.exp(logits[r, targets[r]]) / shared[0])
