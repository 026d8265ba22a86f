"""Under the drop-in, ask numba-cuda's compiler for PTX and LLVM IR; print what came back as JSON.

    NUMBA_ENABLE_CUDASIM=1 GPUSIM_CUDASIM=strict python cudasim_compiler_child.py

Used by test_cudasim_compiler.py (numba's simulator replaces ``numba.cuda`` when imported, so this never runs
inside the test process).
"""

from __future__ import annotations

import json

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still calls np.row_stack, removed in NumPy 2.5
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402
from numba.cuda import float32, int32  # noqa: E402
from numba.cuda.compiler import compile_ptx  # noqa: E402  (bound at import, as numba-cuda's tests bind it)


def shuffle_down(out, delta):
    i = cuda.grid(1)
    out[i] = cuda.shfl_down_sync(0xFFFFFFFF, i, delta)


@cuda.jit(device=True)
def halve(x):
    return x * 0.5


def halve_all(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = halve(a[i])


def bad(a):
    a[0] = a.no_such_attribute


def main() -> None:
    found: dict = {}
    try:
        ptx, resty = compile_ptx(shuffle_down, (int32[:], int32), cc=(10, 0))
        found["targets"] = [line.split()[1] for line in ptx.splitlines() if line.startswith(".target")]
        found["resty"] = str(resty)
        from gpusim.cudasim import compiler

        before = len(compiler._answers)
        again = compile_ptx(shuffle_down, (int32[:], int32), cc=(10, 0))[0]  # a new int32[:]: the same request
        found["asked_again"] = [again == ptx, len(compiler._answers) - before]
        found["default_targets"] = [line.split()[1] for line in cuda.compile_ptx(halve_all, (float32[:],))[0]
                                    .splitlines() if line.startswith(".target")]
        eager = cuda.jit("void(int32[:], int32)")(shuffle_down)
        out = np.zeros(32, np.int32)
        eager[1, 32](out, 2)
        found["ran"] = out.tolist()
        llvm = eager.inspect_llvm()
        found["llvm_keys"] = [str(k) for k in llvm]
        found["shfl_calls"] = [line.strip() for line in next(iter(llvm.values())).splitlines()
                               if "call" in line and "llvm.nvvm.shfl.sync.i32" in line]
        lazy = cuda.jit(halve_all)
        a = np.ones(8, np.float32)
        lazy[1, 8](a)
        asm = lazy.inspect_asm()
        found["asm_keys"] = [str(k) for k in asm]
        text = next(iter(asm.values()))
        found["asm_targets"] = [line.split()[1] for line in text.splitlines() if line.startswith(".target")]
        found["asm_entries"] = text.count(".entry")
        found["asm_externs"] = text.count(".extern")  # the device function is compiled in, not left out
        try:
            compile_ptx(bad, (int32[:],))
        except Exception as e:
            found["bad"] = [type(e).__name__, str(e)]
    except RuntimeError as e:
        found["error"] = str(e)
    print(json.dumps(found))


if __name__ == "__main__":
    main()
