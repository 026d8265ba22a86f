# RIGHT: adamw
"""A correct AdamW step written the way torch.optim.AdamW orders it (lerp for m, sqrt(v) / sqrt(bc2),
addcdiv with -lr / bc1), narrowing by comparing the dropped half with the halfway point."""

import math

import numba
from numba import cuda

TPB = 256


@cuda.jit(device=True)
def widen(bits, as_float, as_bits, t):
    as_bits[t] = numba.uint32(bits) << 16
    cuda.threadfence_block()
    return as_float[t]


@cuda.jit(device=True)
def narrow(value, as_float, as_bits, t):
    as_float[t] = value
    cuda.threadfence_block()
    u = as_bits[t]
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return 0x7FC0
    kept = u >> 16
    dropped = u & 0xFFFF
    if dropped > 0x8000 or (dropped == 0x8000 and (kept & 1) == 1):
        kept += 1
    return kept


@cuda.jit
def adamw_kernel(p, g, w, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2):
    as_float = cuda.shared.array(0, numba.float32)
    as_bits = cuda.shared.array(0, numba.uint32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < w.size:
        one = numba.float32(1.0)
        grad = widen(g[i], as_float, as_bits, t)
        wi = w[i]
        wi = wi * (one - lr * weight_decay)
        mi = m[i]
        mi = mi + (one - beta1) * (grad - mi)              # exp_avg.lerp_(grad, 1 - beta1)
        vi = v[i] * beta2 + grad * grad * (one - beta2)    # mul_(beta2).addcmul_(grad, grad, 1 - beta2)
        step_size = lr / bias_correction1
        denom = math.sqrt(vi) / math.sqrt(bias_correction2) + eps
        wi = wi + (-step_size) * (mi / denom)             # addcdiv_(exp_avg, denom, value=-step_size)
        m[i] = mi
        v[i] = vi
        w[i] = wi
        p[i] = narrow(wi, as_float, as_bits, t)
