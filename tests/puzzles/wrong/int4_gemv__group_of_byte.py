# WRONG: int4-gemv expect=mismatch
# Computes the group from the byte index (k // 2 // GROUP) instead of the weight index: a group of 16
# weights spans only 8 bytes, so from weight 16 on every weight uses the scale of the wrong group.
import numba
from numba import cuda

TPB = 32
GROUP = 16


@cuda.jit
def int4_gemv(w_packed, scales, zeros, x, y):
    partial = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    k_total = x.shape[0]
    acc = numba.float32(0.0)
    for k in range(t, k_total, TPB):
        j = k // 2
        q = (w_packed[row, j] >> (4 * (k % 2))) & 0xF
        g = j // GROUP
        w = (numba.float32(q) - numba.float32(zeros[row, g])) * scales[row, g]
        acc += w * x[k]
    partial[t] = acc
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        y[row] = partial[0]
