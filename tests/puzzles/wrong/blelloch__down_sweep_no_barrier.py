# WRONG: blelloch expect=DataRace
# The down-sweep levels have no barrier between them: a level reads slots the previous level's threads
# have just written (or are still writing).
import numba
from numba import cuda

TPB = 64
TILE = 2 * TPB
LOG_BANKS = 5
PADDED = TILE + (TILE >> LOG_BANKS)


@cuda.jit(device=True)
def pad(j):
    return j + (j >> LOG_BANKS)


@cuda.jit
def blelloch_kernel(a, out, n):
    s = cuda.shared.array(PADDED, numba.int32)
    t = cuda.threadIdx.x
    i0 = cuda.blockIdx.x * TILE + t
    i1 = i0 + TPB
    if i0 < n:
        s[pad(t)] = a[i0]
    else:
        s[pad(t)] = 0
    if i1 < n:
        s[pad(t + TPB)] = a[i1]
    else:
        s[pad(t + TPB)] = 0

    # up-sweep: build partial sums in place; the last slot ends up holding the tile's total
    offset = 1
    active = TPB
    while active > 0:
        cuda.syncthreads()
        if t < active:
            left = offset * (2 * t + 1) - 1
            right = offset * (2 * t + 2) - 1
            s[pad(right)] += s[pad(left)]
        offset *= 2
        active //= 2

    if t == 0:
        s[pad(TILE - 1)] = 0

    # down-sweep: push prefixes back down the tree
    active = 1
    while active <= TPB:
        offset //= 2
        if t < active:
            left = offset * (2 * t + 1) - 1
            right = offset * (2 * t + 2) - 1
            old = s[pad(left)]
            s[pad(left)] = s[pad(right)]
            s[pad(right)] += old
        active *= 2
    cuda.syncthreads()

    if i0 < n:
        out[i0] = s[pad(t)]
    if i1 < n:
        out[i1] = s[pad(t + TPB)]
