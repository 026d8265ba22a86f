# WRONG: transpose-tiled expect=constraint:shared memory
# Correct output from the tiled launch, but each thread copies its 4 elements straight from `a` to `out`
# (puzzle 16 in disguise): no shared memory, so the stores stay strided.
from numba import cuda

TILE = 32
ROWS = 8


@cuda.jit
def transpose_tiled(a, out, rows, cols):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * TILE
    c0 = cuda.blockIdx.x * TILE
    for y in range(ty, TILE, ROWS):
        r = r0 + y
        c = c0 + tx
        if r < rows and c < cols:
            out[c, r] = a[r, c]
