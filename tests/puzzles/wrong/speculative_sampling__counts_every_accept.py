# WRONG: speculative-sampling expect=mismatch
# Counts every accepted position (g minus the number of refusals) instead of stopping at the first
# refusal: a draft token after a rejection was conditioned on a token that is thrown away.
import numba
from numba import cuda

TPB = 512
FULL = 0xFFFFFFFF


@cuda.jit
def speculative_sample(draft, q_probs, p_probs, u_accept, u_sample, accepted, next_token):
    buf = cuda.shared.array(TPB, numba.float32)
    first = cuda.shared.array(1, numba.int32)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    g = draft.shape[1]
    vocab = p_probs.shape[2]
    if t < 32:  # warp 0: lane i tests draft position i
        reject = False
        if t < g:
            x = draft[b, t]
            reject = u_accept[b, t] * q_probs[b, t, x] >= p_probs[b, t, x]
        mask = cuda.ballot_sync(FULL, reject)
        if t == 0:
            a = g - cuda.popc(mask)
            first[0] = a
    cuda.syncthreads()
    a = first[0]
    r = numba.float32(0.0)
    if t < vocab:
        if a < g:
            r = max(numba.float32(0.0), p_probs[b, a, t] - q_probs[b, a, t])
        else:
            r = p_probs[b, g, t]
    # inclusive scan of r over the block (Hillis-Steele)
    buf[t] = r
    cuda.syncthreads()
    off = 1
    while off < TPB:
        y = numba.float32(0.0)
        if t >= off:
            y = buf[t - off]
        cuda.syncthreads()
        buf[t] += y
        cuda.syncthreads()
        off *= 2
    incl = buf[t]
    goal = u_sample[b] * buf[TPB - 1]
    if r > 0 and incl > goal and incl - r <= goal:
        next_token[b] = t
    if t == 0:
        accepted[b] = a
