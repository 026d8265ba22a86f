# WRONG: kv-cache-int8 expect=mismatch
# Reduces with shfl_down_sync: after the loop only lane 0 holds the head's absmax; the other lanes hold
# the maximum of some lanes above them and quantise with a scale that is too small.
import numba
from numba import cuda

H = 4
D = 32
PAGE = 16


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
    mk = abs(xk)
    mv = abs(xv)
    step = 16
    while step > 0:
        mk = max(mk, cuda.shfl_down_sync(0xFFFFFFFF, mk, step))
        mv = max(mv, cuda.shfl_down_sync(0xFFFFFFFF, mv, step))
        step //= 2
    sk = mk / numba.float32(127.0)
    sv = mv / numba.float32(127.0)
    k_cache[page, h, offset, d] = round(xk / sk) if sk != 0 else 0
    v_cache[page, h, offset, d] = round(xv / sv) if sv != 0 else 0
    if d == 0:
        k_scale[page, h, offset] = sk
        v_scale[page, h, offset] = sv
