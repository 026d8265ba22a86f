# WRONG: map expect=compile:raised KeyboardInterrupt
# A BaseException (not an Exception) raised while the file loads: still a clean failure with a message.
from numba import cuda


@cuda.jit
def map_kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10


raise KeyboardInterrupt("leaving")
