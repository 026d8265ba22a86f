# WRONG: adamw expect=mismatch
# Puts eps under the square root, sqrt(v_hat + eps): with eps = 1e-8 that adds 1e-4 to the denominator,
# which swamps sqrt(v_hat) for small gradients. AdamW adds eps after the square root.

import math

import numba
from numba import cuda

TPB = 256


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
def adamw_kernel(p, g, w, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < w.size:
        one = numba.float32(1.0)
        grad = widen(g[i], as_float, as_bits, t)
        mi = beta1 * m[i] + (one - beta1) * grad
        vi = beta2 * v[i] + (one - beta2) * grad * grad
        wi = w[i] * (one - lr * weight_decay)
        denom = math.sqrt(vi / bias_correction2 + eps)
        wi -= (lr / bias_correction1) * mi / denom
        m[i] = mi
        v[i] = vi
        w[i] = wi
        p[i] = narrow(wi, as_float, as_bits, t)
