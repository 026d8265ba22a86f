# WRONG: kv-cache-append expect=mismatch
# Writes the layout the keys arrive in, [page, offset, head, d], into a cache laid out [page, head,
# offset, d]: it computes the flat position as if the heads of one token were neighbours.
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
    if slot < 0:
        return
    page = slot // PAGE
    flat = (slot % PAGE) * H + h          # offset-major inside the page: wrong for this cache
    k_cache[page, flat // PAGE, flat % PAGE, d] = k_new[token, h, d]
    v_cache[page, flat // PAGE, flat % PAGE, d] = v_new[token, h, d]
