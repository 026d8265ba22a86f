# WRONG: map expect=compile:numba-cuda cannot compile
# `from numba.cuda import threadIdx` imports (gpusim would even run the kernel), but numba-cuda types
# threadIdx only as an attribute of the cuda module: on a GPU this kernel fails with "Untyped global name
# 'threadIdx'" (and numba's simulator cannot import the name at all). Functions such as cuda.grid may be
# imported by name; the index registers may not.
from numba import cuda
from numba.cuda import threadIdx


@cuda.jit
def map_kernel(out, a):
    i = threadIdx.x
    out[i] = a[i] + 10
