"""Puzzle 73 — Int8 KV cache.

For every token t with slot = slot_mapping[t] != -1, every head h, and each of k and v:
    amax  = max over d of |k_new[t, h, d]|,   scale = amax / 127   (float32)
    k_cache[slot // PAGE, h, slot % PAGE, d] = round(k_new[t, h, d] / scale)   (0 when scale == 0)
    k_scale[slot // PAGE, h, slot % PAGE]    = scale
Launch: one block per token, block (D, H): threadIdx.x is d, threadIdx.y the head (one warp each).
Allowed: cuda.threadIdx / blockIdx, cuda.shfl_xor_sync (or the other shuffles), abs, max, round,
numba.float32. No shared memory, no atomics; read each input once, write each output element once.
"""

import numba  # noqa: F401  (numba.float32 keeps the scale in float32)
from numba import cuda

H = 4       # heads
D = 32      # head dimension = one warp
PAGE = 16   # tokens per page


@cuda.jit
def kv_cache_append_int8(k_new, v_new, slot_mapping, k_cache, v_cache, k_scale, v_scale):
    token = cuda.blockIdx.x
    d = cuda.threadIdx.x
    h = cuda.threadIdx.y
    # FILL ME IN (about 20 lines)
    pass
