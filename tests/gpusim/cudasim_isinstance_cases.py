"""Device functions with an ``if isinstance(...)`` numba-cuda decides at compile time, and whether numba-cuda
0.30.4 compiles each for its argument types: for test_cudasim_isinstance_rule.py.

    python cudasim_isinstance_cases.py     # numba-cuda's own compiler, typing only, on the CPU: one line a case

``CASES``: (function name, argument kind, numba-cuda compiles it). The third column is what running this file
printed (numba-cuda 0.30.4, 2026-12-02): its ``compile_cuda`` types and lowers a function without a GPU once
``get_current_device`` (asked only for the compute capability) answers for one; the test runs it again where
it can. ``first_or_self`` on an int64 is also what the H200 refused (docs/gpu-runs/2026-12-02-more-language-h200.json).
"""

from __future__ import annotations

import math
import sys

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still calls np.row_stack, removed in NumPy 2.5
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402


@cuda.jit(device=True)
def needs_tuple(t):
    return t[0]


def first_or_self(b):            # the ruled-out branch subscripts an int64
    if isinstance(b, tuple):
        b = b[0]
    return b


def first_or_self_returning(b):
    if isinstance(b, tuple):
        return b[0]
    return b


def index_after_the_if(b):       # dead only because the branch taken returns: still typed
    if not isinstance(b, tuple):
        return b
    return b[0]


def plus_one_or_first(b):        # an operator that fits no type
    if isinstance(b, int):
        return b + 1
    return b[0]


def negated_or_first(b):
    if isinstance(b, int):
        return -b
    return b[0]


def compared_or_first(b):
    if isinstance(b, int):
        if b < 1:
            return 0
        return 1
    return b[0]


def as_float_or_first(b):        # a builtin class that fits no type
    if isinstance(b, int):
        return float(b)
    return b[0]


def length_or_self(b):
    if isinstance(b, tuple):
        return len(b)
    return b


def device_call_or_self(b):      # a device function that does not type for the argument
    if isinstance(b, tuple):
        return needs_tuple(b)
    return b


def shape_or_self(b):            # an attribute the type lacks: numba-cuda gets past it
    if isinstance(b, tuple):
        return b.shape
    return b


def shape_after_the_if(b):
    if not isinstance(b, tuple):
        return b
    return b.shape


def method_or_self(b):
    if isinstance(b, tuple):
        return b.bit_count()
    return b


def sqrt_or_self(b):             # a math function: numba-cuda's own typing, got past
    if isinstance(b, tuple):
        return math.sqrt(b)
    return b


def rebound_to_a_number(b):
    if isinstance(b, tuple):
        b = 1
    return b


def assigned_in_a_branch(b, c):  # two assignments reach the isinstance (an SSA phi)
    if c > 0:
        b = 2
    if isinstance(b, int):
        return 1
    return 2


def assigned_in_a_loop(b, n):
    for _ in range(n):
        if isinstance(b, int):
            b = b + 1
    return b


#: (function, argument kind: "int" an int64, "tuple" a 2-tuple of int64, "int, int" two int64s, compiles)
CASES = [
    ("first_or_self", "int", False), ("first_or_self", "tuple", True), ("first_or_self_returning", "int", False),
    ("index_after_the_if", "int", False), ("plus_one_or_first", "tuple", False), ("negated_or_first", "tuple", False),
    ("compared_or_first", "tuple", False), ("as_float_or_first", "tuple", False), ("length_or_self", "int", False),
    ("device_call_or_self", "int", False), ("shape_or_self", "int", True), ("shape_after_the_if", "int", True),
    ("method_or_self", "int", True), ("sqrt_or_self", "int", True), ("rebound_to_a_number", "int", True),
    ("rebound_to_a_number", "tuple", True), ("assigned_in_a_branch", "int, int", False),
    ("assigned_in_a_loop", "int, int", False),
]


def numba_cuda_compiles(name: str, kind: str) -> bool:
    """Does numba-cuda's compiler (typing and lowering to LLVM, no GPU) accept the case? Needs numba.cuda
    imported without its simulator."""
    from numba import types
    from numba.cuda import dispatcher
    from numba.cuda.compiler import compile_cuda

    class _Device:  # what compile_device asks of the current device
        compute_capability = (9, 0)

    dispatcher.get_current_device = lambda: _Device()
    module = sys.modules[__name__]
    arg = {"int": types.int64, "tuple": types.UniTuple(types.int64, 2)}
    sig = tuple(arg[k.strip()] for k in kind.split(","))
    try:
        compile_cuda(getattr(module, name), None, sig, cc=(9, 0))
    except Exception:  # numba-cuda's refusal, whatever its class
        return False
    return True


if __name__ == "__main__":
    for name, kind, _ in CASES:
        print(name, kind, numba_cuda_compiles(name, kind), sep="\t")
