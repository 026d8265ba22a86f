"""Graduate mode's own CUDA kernels: the spin that gates the timing events, and the FMA chains of the FLOP/s
probe. Plain module-level numba-cuda kernels; importing this module imports numba-cuda."""

from __future__ import annotations

from .cuda_module import cuda

nc = cuda()
import numba  # noqa: E402  (after numba.cuda, which needs NumPy's row_stack back first)

CHAINS = 8          # independent FMA chains per thread: enough to hide the FMA pipeline's latency


@nc.jit
def spin(steps):
    """One thread sleeping ``steps`` times about a microsecond: GPU work that touches no memory."""
    for _ in range(steps):
        nc.nanosleep(numba.uint32(1000))


@nc.jit
def fma_chains(out, coef, steps):
    """``CHAINS`` independent float32 chains x = x * m + c per thread, ``steps`` long (2 FLOPs a step)."""
    i = nc.grid(1)
    m, c = coef[0], coef[1]                 # float32: every operation below stays float32
    x0 = numba.float32(i % 1024) * c
    x1 = x0 + c
    x2 = x1 + c
    x3 = x2 + c
    x4 = x3 + c
    x5 = x4 + c
    x6 = x5 + c
    x7 = x6 + c
    for _ in range(steps):
        x0 = x0 * m + c
        x1 = x1 * m + c
        x2 = x2 * m + c
        x3 = x3 * m + c
        x4 = x4 * m + c
        x5 = x5 * m + c
        x6 = x6 * m + c
        x7 = x7 * m + c
    out[i] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7
