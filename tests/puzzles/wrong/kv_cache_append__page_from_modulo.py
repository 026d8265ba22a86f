# WRONG: kv-cache-append expect=mismatch
# Swaps the two halves of the slot number: page = slot % PAGE, offset = slot // PAGE.
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
    page = slot % PAGE
    offset = slot // PAGE
    if page < k_cache.shape[0] and offset < PAGE:
        k_cache[page, h, offset, d] = k_new[token, h, d]
        v_cache[page, h, offset, d] = v_new[token, h, d]
