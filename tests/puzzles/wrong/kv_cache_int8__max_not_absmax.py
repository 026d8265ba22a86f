# WRONG: kv-cache-int8 expect=mismatch
# Takes the largest value instead of the largest magnitude: a head whose biggest entry is negative gets a
# scale that is too small, and its values overflow the int8 range.
import numba
from numba import cuda

H = 4
D = 32
PAGE = 16


@cuda.jit(device=True)
def warp_max(x):
    m = x
    offset = 16
    while offset > 0:
        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, offset))
        offset //= 2
    return m


@cuda.jit
def kv_cache_append_int8(k_new, v_new, slot_mapping, k_cache, v_cache, k_scale, v_scale):
    token = cuda.blockIdx.x
    d = cuda.threadIdx.x
    h = cuda.threadIdx.y
    slot = slot_mapping[token]
    if slot < 0:
        return
    page = slot // PAGE
    offset = slot % PAGE
    xk = k_new[token, h, d]
    xv = v_new[token, h, d]
    sk = warp_max(xk) / numba.float32(127.0)
    sv = warp_max(xv) / numba.float32(127.0)
    k_cache[page, h, offset, d] = max(-127, min(127, round(xk / sk))) if sk > 0 else 0
    v_cache[page, h, offset, d] = max(-127, min(127, round(xv / sv))) if sv > 0 else 0
    if d == 0:
        k_scale[page, h, offset] = sk
        v_scale[page, h, offset] = sv
