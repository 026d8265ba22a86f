# RIGHT: speculative-sampling
"""A correct speculative-sampling step that tests acceptance with the division u < p / q, and scans the
residual warp by warp (shuffles, then the warps' totals): another summation order than the reference's."""

import numba
from numba import cuda

TPB = 512
WARPS = TPB // 32
FULL = 0xFFFFFFFF


@cuda.jit
def speculative_sample(draft, q_probs, p_probs, u_accept, u_sample, accepted, next_token):
    warp_total = cuda.shared.array(WARPS, numba.float32)
    first = cuda.shared.array(1, numba.int32)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    lane = t % 32
    warp = t // 32
    g = draft.shape[1]
    vocab = p_probs.shape[2]
    if t < 32:
        reject = False
        if t < g:
            x = draft[b, t]
            reject = not (u_accept[b, t] < p_probs[b, t, x] / q_probs[b, t, x])
        mask = cuda.ballot_sync(FULL, reject)
        if t == 0:
            a = g
            if mask != 0:
                a = cuda.ffs(mask) - 1
            first[0] = a
    cuda.syncthreads()
    a = first[0]
    r = numba.float32(0.0)
    if t < vocab:
        if a < g:
            r = max(numba.float32(0.0), p_probs[b, a, t] - q_probs[b, a, t])
        else:
            r = p_probs[b, g, t]
    incl = r                                   # inclusive scan inside the warp
    off = 1
    while off < 32:
        y = cuda.shfl_up_sync(FULL, incl, off)
        if lane >= off:
            incl += y
        off *= 2
    if lane == 31:
        warp_total[warp] = incl
    cuda.syncthreads()
    if t < 32:                                 # warp 0 scans the warps' totals
        s = numba.float32(0.0)
        if t < WARPS:
            s = warp_total[t]
        off = 1
        while off < 32:
            y = cuda.shfl_up_sync(FULL, s, off)
            if t >= off:
                s += y
            off *= 2
        if t < WARPS:
            warp_total[t] = s
    cuda.syncthreads()
    if warp > 0:
        incl += warp_total[warp - 1]
    goal = u_sample[b] * warp_total[WARPS - 1]
    if r > 0 and incl > goal and incl - r <= goal:
        next_token[b] = t
    if t == 0:
        accepted[b] = a
