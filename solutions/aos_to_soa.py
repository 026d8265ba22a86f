"""Reference solution — puzzle 15, AoS to SoA.

A block owns TPB records (4 * TPB floats). In pass k, thread t reads float k * TPB + t of that slab, so a
warp's 32 loads are one contiguous 128-byte run; the 8 lanes holding the same field then write 8
neighbouring elements of that field's row of `soa`: one full sector. All four loads are issued before the
first store, so each thread keeps four loads in flight.
"""
import numba
from numba import cuda

TPB = 128            # threads per block = records per block
PASS = TPB // 4      # records covered by one pass of the block


@cuda.jit
def aos_to_soa(aos, soa, n):
    t = cuda.threadIdx.x
    f = t % 4                                  # this thread's field, the same in every pass
    r0 = cuda.blockIdx.x * TPB + t // 4        # its record in pass 0
    v = cuda.local.array(4, numba.float32)
    for k in range(4):
        r = r0 + k * PASS
        if r < n:
            v[k] = aos[r, f]
    for k in range(4):
        r = r0 + k * PASS
        if r < n:
            soa[f, r] = v[k]
