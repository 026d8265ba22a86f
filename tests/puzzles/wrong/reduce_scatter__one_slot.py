# WRONG: reduce-scatter expect=DataRace
# One staging slot: a rank overwrites send[0] while its right neighbour is still reading it.

import numba
from numba import cuda

TPB = 128


@cuda.jit
def reduce_scatter_step(grads, send, left_send, out, rank, step, ranks):
    j = cuda.grid(1)
    shard = out.size
    if j >= shard:
        return
    c = (rank - 1 - step) % ranks
    mine = grads[c * shard + j]
    if step == 0:
        send[0, j] = mine
    else:
        total = left_send[0, j] + mine
        if step == ranks - 1:
            out[j] = total / numba.float32(ranks)
        else:
            send[0, j] = total
