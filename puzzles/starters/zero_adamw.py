"""Puzzle 63 — ZeRO: sharded AdamW.

Block (bx, r) is rank r's work; thread t updates parameter k = r*S + j of rank r's slice, j = bx*TPB + t,
S = w.shape[1], N = grads.shape[0] ranks:
  g = mean over q of float32(grads[q, k])                      (reduce-scatter)
  AdamW (puzzle 62) on w[r, j], m[r, j], v[r, j]
  params[q, k] = bf16(w[r, j]) for every rank q                 (all-gather)
grads and params are uint16 bf16 bits; convert through the aliased shared arrays as in puzzle 62.
"""
import math

import numba
from numba import cuda

TPB = 128  # threads per block (the launch uses this, with TPB * 4 bytes of dynamic shared memory)


@cuda.jit
def zero_adamw_kernel(params, grads, w, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1,
                      bias_correction2):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    r = cuda.blockIdx.y
    j = cuda.blockIdx.x * TPB + t
    ranks = grads.shape[0]
    shard = w.shape[1]
    # FILL ME IN (about 25 lines)
    pass
