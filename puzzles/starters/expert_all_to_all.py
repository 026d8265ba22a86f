"""Puzzle 71 — All-to-all for experts.

route (local, thread (c, i) = feature c of token i): slot j of token i = how many earlier tokens chose
the same expert; if j < C (= send.shape[1]): send[e, j, c] = x[i, c]; slot[i] = j, or -1 when dropped;
counts[e] = how many of this device's tokens expert e takes (at most C).
exchange (on expert e's device, once per source src): counts_in[src] = counts_src[me].
dispatch (once per source src): recv[src, j, c] = send_src[me, j, c] * scale[c] + shift[c], j < counts_in[src].
combine (on device me, once per expert src): tokens i with expert[i] == src get out[i, c] =
result_src[me, slot[i], c], or 0 when dropped.
"""
import numba  # noqa: F401
from numba import cuda

D = 16            # features per token
TOKENS_MAX = 64   # the most tokens per device; route's block is (D, TOKENS_MAX)


@cuda.jit
def route(expert, x, send, counts, slot):
    c = cuda.threadIdx.x
    i = cuda.threadIdx.y
    # FILL ME IN (about 20 lines)
    pass


@cuda.jit
def exchange(counts_in, counts_src, src, me):
    # FILL ME IN (about 2 lines)
    pass


@cuda.jit
def dispatch(recv, counts_in, send_src, scale, shift, src, me):
    t = cuda.grid(1)
    # FILL ME IN (about 4 lines)
    pass


@cuda.jit
def combine(out, expert, slot, result_src, src, me):
    t = cuda.grid(1)
    # FILL ME IN (about 8 lines)
    pass
