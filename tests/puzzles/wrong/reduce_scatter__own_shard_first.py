# WRONG: reduce-scatter expect=mismatch
# Each rank starts with its own shard (c = rank - step): the chain ends one rank too far, so rank d
# ends with the mean of shard d + 1.

import numba
from numba import cuda

TPB = 128


@cuda.jit
def reduce_scatter_step(grads, send, left_send, out, rank, step, ranks):
    j = cuda.grid(1)
    shard = out.size
    if j >= shard:
        return
    c = (rank - step) % ranks
    mine = grads[c * shard + j]
    if step == 0:
        send[0, j] = mine
    else:
        total = left_send[(step - 1) % 2, j] + mine
        if step == ranks - 1:
            out[j] = total / numba.float32(ranks)
        else:
            send[step % 2, j] = total
