# WRONG: int4-gemv expect=mismatch
# Takes the high nibble for even k and the low nibble for odd k: the two weights of every byte trade
# places. Every structural check passes; only the numbers are wrong.
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
        q = (w_packed[row, k // 2] >> (4 * (1 - k % 2))) & 0xF
        g = k // GROUP
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
