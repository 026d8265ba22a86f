# WRONG: reduce-scatter expect=mismatch
# Multiplies by 1/N instead of dividing by N: 1/3 is rounded first, so x * (1/3) is not x / 3 in
# float32 and the mean is off in the last bit for 3 and 5 ranks.

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
        total = left_send[(step - 1) % 2, j] + mine
        if step == ranks - 1:
            out[j] = total * (numba.float32(1.0) / numba.float32(ranks))
        else:
            send[step % 2, j] = total
