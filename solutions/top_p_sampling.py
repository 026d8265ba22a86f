"""Reference solution for puzzle 77 (top-p-sampling): the nucleus threshold by a bitwise search over
sign-fixed float bit patterns (32 block sums), then four block scans draw in vocabulary order."""

import math

import numba
from numba import cuda

V_MAX = 1024
TPB = 256
ITEMS = V_MAX // TPB


@cuda.jit(device=True)
def block_sum(red, x, t):
    """The sum of x over the block, returned to every thread (red: TPB floats of shared memory)."""
    red[t] = x
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            red[t] += red[t + stride]
        cuda.syncthreads()
        stride //= 2
    total = red[0]
    cuda.syncthreads()  # red is reused by the next call
    return total


@cuda.jit(device=True)
def block_max(red, x, t):
    red[t] = x
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            red[t] = max(red[t], red[t + stride])
        cuda.syncthreads()
        stride //= 2
    top = red[0]
    cuda.syncthreads()
    return top


@cuda.jit(device=True)
def inclusive_scan(buf, x, t):
    """Hillis-Steele scan over the block: thread t gets x_0 + ... + x_t (buf: TPB floats)."""
    buf[t] = x
    cuda.syncthreads()
    off = 1
    while off < TPB:
        y = numba.float32(0.0)
        if t >= off:
            y = buf[t - off]
        cuda.syncthreads()
        if t >= off:
            buf[t] += y
        cuda.syncthreads()
        off *= 2
    incl = buf[t]
    cuda.syncthreads()
    return incl


@cuda.jit
def top_p_sample(logits, logit_bits, temperature, top_p, u, token, kept):
    red = cuda.shared.array(TPB, numba.float32)
    buf = cuda.shared.array(TPB, numba.float32)
    x = cuda.local.array(ITEMS, numba.float32)
    key = cuda.local.array(ITEMS, numba.int64)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    vocab = logits.shape[1]
    m = numba.float32(-math.inf)
    for r in range(ITEMS):
        i = r * TPB + t
        key[r] = -1  # below every real key: padding is never in the nucleus
        x[r] = -math.inf
        if i < vocab:
            x[r] = logits[b, i]
            bits = numba.int64(logit_bits[b, i])
            if bits >= 0:
                key[r] = bits + 2147483648
            else:
                key[r] = -1 - bits
            m = max(m, x[r])
    m = block_max(red, m, t)
    inv_t = numba.float32(1.0) / temperature[b]
    part = numba.float32(0.0)
    for r in range(ITEMS):
        w = numba.float32(0.0)
        if key[r] >= 0:
            w = math.exp((x[r] - m) * inv_t)
        x[r] = w  # from here on x holds the weights
        part += w
    z = block_sum(red, part, t)
    # the largest key whose mass at or above it reaches top_p * Z, built from the top bit down
    target = top_p[b] * z
    prefix = numba.int64(0)
    for bit in range(31, -1, -1):
        cand = prefix | (numba.int64(1) << bit)
        part = numba.float32(0.0)
        for r in range(ITEMS):
            if key[r] >= cand:
                part += x[r]
        if block_sum(red, part, t) >= target:
            prefix = cand
    count = numba.float32(0.0)
    part = numba.float32(0.0)
    for r in range(ITEMS):
        if key[r] >= prefix:
            count += 1.0
            part += x[r]
        else:
            x[r] = 0.0
    n_kept = block_sum(red, count, t)
    goal = u[b] * block_sum(red, part, t)
    # the draw, in vocabulary order: round r holds ids r*TPB .. r*TPB + TPB - 1
    carry = numba.float32(0.0)
    for r in range(ITEMS):
        incl = carry + inclusive_scan(buf, x[r], t)
        if x[r] > 0 and incl > goal and incl - x[r] <= goal:
            token[b] = r * TPB + t
        carry = block_sum(red, x[r], t) + carry
    if t == 0:
        kept[b] = numba.int32(n_kept)
