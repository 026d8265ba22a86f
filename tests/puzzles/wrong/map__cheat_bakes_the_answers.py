# WRONG: map expect=mismatch:expected
# A cheat: compute every case's expected output on the host at import (the cases used to be fixed) and have
# the kernel copy the baked answers. The checker draws fresh inputs each time, so the bake is stale.
import numpy as np
from numba import cuda

from puzzles.ch01_threads import p01_map

_answers = [p01_map.spec(**case.buffers)["out"] for case in p01_map.make_cases()]
ANSWERS = np.concatenate(_answers).astype(np.float32)
OFFSETS = np.cumsum([0] + [a.size for a in _answers]).astype(np.int64)
SIZES = np.array([a.size for a in _answers], dtype=np.int64)
CASES = len(_answers)


@cuda.jit
def map_kernel(out, a):
    i = cuda.threadIdx.x
    start = 0
    for c in range(CASES):
        if SIZES[c] == out.size:
            start = OFFSETS[c]
    out[i] = ANSWERS[start + i]
