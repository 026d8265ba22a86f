"""Reference solution for puzzle 72 (kv-cache-append): one block per token, one warp per head, one thread
per element."""

from numba import cuda

H = 4
D = 32
PAGE = 16


@cuda.jit
def kv_cache_append(k_new, v_new, slot_mapping, k_cache, v_cache):
    token = cuda.blockIdx.x
    d = cuda.threadIdx.x
    h = cuda.threadIdx.y
    slot = slot_mapping[token]
    if slot < 0:  # a padding token: nothing to store
        return
    page = slot // PAGE
    offset = slot % PAGE
    k_cache[page, h, offset, d] = k_new[token, h, d]
    v_cache[page, h, offset, d] = v_new[token, h, d]
