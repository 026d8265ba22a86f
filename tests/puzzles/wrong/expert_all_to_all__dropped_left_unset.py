# WRONG: expert-all-to-all expect=mismatch
# A dropped token's output is never written: it should be 0 (the residual carries the token on).

import numba
from numba import cuda

D = 16
TOKENS_MAX = 64


@cuda.jit
def route(expert, x, send, counts, slot):
    ids = cuda.shared.array(TOKENS_MAX, numba.int32)
    c = cuda.threadIdx.x
    i = cuda.threadIdx.y
    tokens = expert.size
    cap = send.shape[1]
    if c == 0 and i < tokens:
        ids[i] = expert[i]
    cuda.syncthreads()
    if i < tokens:
        e = ids[i]
        j = 0
        for k in range(i):
            if ids[k] == e:
                j += 1
        if j < cap:
            send[e, j, c] = x[i, c]
        if c == 0:
            slot[i] = j if j < cap else -1
    if c == 0 and i < send.shape[0]:
        n = 0
        for k in range(tokens):
            if ids[k] == i:
                n += 1
        counts[i] = min(n, cap)


@cuda.jit
def exchange(counts_in, counts_src, src, me):
    if cuda.threadIdx.x == 0:
        counts_in[src] = counts_src[me]


@cuda.jit
def dispatch(recv, counts_in, send_src, scale, shift, src, me):
    t = cuda.grid(1)
    j = t // D
    c = t % D
    if j < counts_in[src]:
        recv[src, j, c] = send_src[me, j, c] * scale[c] + shift[c]


@cuda.jit
def combine(out, expert, slot, result_src, src, me):
    t = cuda.grid(1)
    i = t // D
    c = t % D
    if i < out.shape[0] and expert[i] == src:
        s = slot[i]
        if s >= 0:
            out[i, c] = result_src[me, s, c]
