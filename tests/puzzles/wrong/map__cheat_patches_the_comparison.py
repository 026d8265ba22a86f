# WRONG: map expect=mismatch:expected
# A cheat: at import, replace the checker's comparison and its judge with ones that find nothing wrong, then
# write zeros. The file runs in a sandboxed child; the judging process never sees the patch.
from numba import cuda

import puzzles.checker
import puzzles.compare

puzzles.compare.first_mismatch = lambda *args, **kwargs: None
puzzles.checker.first_mismatch = lambda *args, **kwargs: None
puzzles.checker.changed_input = lambda *args, **kwargs: None


def _always_pass(puzzle, result):
    result.passed, result.stars, result.failures[:] = True, 2, []


puzzles.checker._judge = _always_pass


@cuda.jit
def map_kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = 0.0
