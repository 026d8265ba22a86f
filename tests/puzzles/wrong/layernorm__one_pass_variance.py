# WRONG: layernorm expect=mismatch
# Reduces sum(x) and sum(x^2) together and takes var = mean(x^2) - mean(x)^2, in float32. Fine for rows
# centred near 0; for a row centred at 1000 the two terms agree in almost every digit, and the difference
# is rounding noise.
import math

import numba
from numba import cuda

TPB = 64
ITEMS = 4


@cuda.jit
def layernorm_kernel(x, w, b, out, eps):
    s1 = cuda.shared.array(TPB, numba.float32)
    s2 = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    a1 = numba.float32(0.0)
    a2 = numba.float32(0.0)
    for c in range(t, cols, TPB):
        v = x[r, c]
        a1 += v
        a2 += v * v
    s1[t] = a1
    s2[t] = a2
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            s1[t] += s1[t + stride]
            s2[t] += s2[t + stride]
        cuda.syncthreads()
        stride //= 2
    mean = s1[0] / cols
    var = s2[0] / cols - mean * mean
    inv = 1.0 / math.sqrt(max(var, 0.0) + eps)
    for c in range(t, cols, TPB):
        out[r, c] = (x[r, c] - mean) * inv * w[c] + b[c]
