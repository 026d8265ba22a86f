# WRONG: zero-adamw expect=DataRace
# Forgets the slice's offset (k = j instead of r * S + j): every rank updates parameters 0 .. S-1 and
# writes them into params, so the blocks of different ranks store to the same elements.

import math

import numba
from numba import cuda

TPB = 128


@cuda.jit(device=True)
def widen(bits, as_float, as_bits, t):
    """float32 value of the bf16 bit pattern ``bits`` (exact)."""
    as_bits[t] = numba.uint32(bits) << 16
    cuda.threadfence_block()
    return as_float[t]


@cuda.jit(device=True)
def narrow(value, as_float, as_bits, t):
    """bf16 bits of the float32 ``value``: round to nearest even, every NaN to 0x7FC0."""
    as_float[t] = value
    cuda.threadfence_block()
    u = as_bits[t]
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return 0x7FC0
    return (u + 0x7FFF + ((u >> 16) & 1)) >> 16


@cuda.jit
def zero_adamw_kernel(params, grads, w, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1,
                      bias_correction2):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    r = cuda.blockIdx.y
    j = cuda.blockIdx.x * TPB + t
    ranks = grads.shape[0]
    shard = w.shape[1]
    if j < shard:
        k = j
        total = numba.float32(0.0)
        for q in range(ranks):                       # reduce-scatter: this rank owns parameter k
            total += widen(grads[q, k], as_float, as_bits, t)
        grad = total / numba.float32(ranks)
        one = numba.float32(1.0)
        mi = beta1 * m[r, j] + (one - beta1) * grad
        vi = beta2 * v[r, j] + (one - beta2) * grad * grad
        wi = w[r, j] * (one - lr * weight_decay)
        denom = math.sqrt(vi) / math.sqrt(bias_correction2) + eps
        wi -= (lr / bias_correction1) * mi / denom
        m[r, j] = mi
        v[r, j] = vi
        w[r, j] = wi
        bits = narrow(wi, as_float, as_bits, t)
        for q in range(ranks):                       # all-gather: every rank gets the new weight
            params[q, k] = bits
