# WRONG: kv-cache-append expect=OutOfBounds
# Forgets the padding tokens: slot -1 gives page -1 // 16 = -1, an index before the start of the cache
# (numba on a GPU would wrap it around and overwrite the last page's offset 15).
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
    page = slot // PAGE
    offset = slot % PAGE
    k_cache[page, h, offset, d] = k_new[token, h, d]
    v_cache[page, h, offset, d] = v_new[token, h, d]
