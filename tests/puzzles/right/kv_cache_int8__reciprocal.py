# RIGHT: kv-cache-int8
"""A correct int8 KV-cache append that multiplies by the reciprocal of the scale, as fast quantisation
kernels do: x * (1 / scale) rounds twice where x / scale rounds once, so it can differ by an ulp."""

import numba
from numba import cuda

H = 4
D = 32
PAGE = 16


@cuda.jit(device=True)
def warp_absmax(x):
    m = abs(x)
    offset = 16
    while offset > 0:
        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, offset))
        offset //= 2
    return m


@cuda.jit(device=True)
def quantize(x, scale):
    if scale == 0:
        return 0
    return round(x * (numba.float32(1.0) / scale))


@cuda.jit
def kv_cache_append_int8(k_new, v_new, slot_mapping, k_cache, v_cache, k_scale, v_scale):
    token = cuda.blockIdx.x
    d = cuda.threadIdx.x
    h = cuda.threadIdx.y
    slot = slot_mapping[token]
    if slot < 0:  # padding: the whole block leaves, so every shuffle below has its full warp
        return
    page = slot // PAGE
    offset = slot % PAGE
    xk = k_new[token, h, d]
    xv = v_new[token, h, d]
    sk = warp_absmax(xk) / numba.float32(127.0)
    sv = warp_absmax(xv) / numba.float32(127.0)
    k_cache[page, h, offset, d] = quantize(xk, sk)
    v_cache[page, h, offset, d] = quantize(xv, sv)
    if d == 0:
        k_scale[page, h, offset] = sk
        v_scale[page, h, offset] = sv
