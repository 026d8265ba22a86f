# WRONG: zip expect=mismatch:changed the input `a`
# Right output, but the kernel also clobbers its input `a` (as an in-place update would): inputs must stay as
# they were.
from numba import cuda


@cuda.jit
def zip_kernel(out, a, b):
    i = cuda.threadIdx.x
    a[i] = a[i] + b[i]
    out[i] = a[i]
