# RIGHT: zero-adamw
"""A correct ZeRO step that sums the ranks' gradients from the last rank down, multiplies by 1/N, and
orders the AdamW arithmetic as torch.optim.AdamW does."""

import math

import numba
from numba import cuda

TPB = 128


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
        k = r * shard + j
        total = numba.float32(0.0)
        for q in range(ranks - 1, -1, -1):
            total += widen(grads[q, k], as_float, as_bits, t)
        one = numba.float32(1.0)
        grad = total * (one / numba.float32(ranks))
        wi = w[r, j] * (one - lr * weight_decay)
        mi = m[r, j]
        mi = mi + (one - beta1) * (grad - mi)
        vi = v[r, j] * beta2 + grad * grad * (one - beta2)
        step_size = lr / bias_correction1
        denom = math.sqrt(vi) / math.sqrt(bias_correction2) + eps
        wi = wi + (-step_size) * (mi / denom)
        m[r, j] = mi
        v[r, j] = vi
        w[r, j] = wi
        bits = narrow(wi, as_float, as_bits, t)
        for q in range(ranks):
            params[q, k] = bits
