"""Puzzle 62 — Fused AdamW with fp32 master weights.

g = float32(g_bf16); w *= 1 - lr*weight_decay; m = beta1*m + (1-beta1)*g; v = beta2*v + (1-beta2)*g*g;
w -= (lr / bias_correction1) * m / (sqrt(v) / sqrt(bias_correction2) + eps); p = bf16(w) (nearest even).
p and g are uint16 bf16 bits; w, m, v float32, updated in place. One read of g, w, m, v and one write of
p, w, m, v per thread. The two dynamic shared arrays alias (puzzles 56 and 57): use them to widen g and
to narrow w, with cuda.threadfence_block() between a store through one view and a read through the other.
"""
import math

import numba
from numba import cuda

TPB = 256  # threads per block (the launch uses this, with TPB * 4 bytes of dynamic shared memory)


@cuda.jit
def adamw_kernel(p, g, w, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    # FILL ME IN (about 20 lines)
    pass
