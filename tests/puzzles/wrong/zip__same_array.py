# WRONG: zip expect=mismatch
# A copy-paste slip: adds a to itself. The cases put a and b on different scales, so this cannot pass.
from numba import cuda


@cuda.jit
def zip_kernel(out, a, b):
    i = cuda.threadIdx.x
    out[i] = a[i] + a[i]
