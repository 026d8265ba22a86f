# WRONG: row-parallel expect=mismatch
# Reads part_src[r, c]: rows 0..R-1 of every partial, not this device's rows row0 .. row0 + R - 1.

import numba
from numba import cuda


@cuda.jit
def partial_product(y, w, part):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if r < part.shape[0] and c < part.shape[1]:
        acc = numba.float32(0)
        for k in range(y.shape[1]):
            acc += y[r, k] * w[k, c]
        part[r, c] = acc


@cuda.jit
def reduce_rows(z, part_src, bias, row0, step, steps):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if r < z.shape[0] and c < z.shape[1]:
        v = part_src[r, c]
        if step > 0:
            v += z[r, c]
        if step == steps - 1:
            v += bias[c]
        z[r, c] = v
