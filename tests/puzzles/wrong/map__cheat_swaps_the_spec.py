# WRONG: map expect=mismatch:expected
# A cheat: at import, swap the puzzle's spec (in the registry and in its module) for one that expects what
# this kernel writes (a + 1 instead of a + 10).
from numba import cuda

import puzzles.ch01_threads.p01_map as p01
from puzzles import registry


def _easy(out, a):
    return {"out": a + 1}


p01.spec = _easy
object.__setattr__(p01.PUZZLE, "spec", _easy)
object.__setattr__(registry.get("map"), "spec", _easy)


@cuda.jit
def map_kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] + 1
