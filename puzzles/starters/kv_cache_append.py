"""Puzzle 72 — KV-cache append.

For every token t with slot = slot_mapping[t] != -1 (a padding token), and every head h:
    k_cache[slot // PAGE, h, slot % PAGE, :] = k_new[t, h, :]      (and the same for v)
Nothing else in the caches may change.
Launch: one block per token, block (D, H): threadIdx.x is d, threadIdx.y the head.
Allowed: cuda.threadIdx / blockIdx, integer // and %. Read each input value once, never read the caches,
write each cache element at most once; no atomics.
"""

from numba import cuda

H = 4       # heads
D = 32      # head dimension
PAGE = 16   # tokens per page


@cuda.jit
def kv_cache_append(k_new, v_new, slot_mapping, k_cache, v_cache):
    token = cuda.blockIdx.x
    d = cuda.threadIdx.x
    h = cuda.threadIdx.y
    # FILL ME IN (about 7 lines)
    pass
