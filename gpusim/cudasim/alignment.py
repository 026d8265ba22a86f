"""``alignment=`` on ``cuda.shared.array`` / ``cuda.local.array`` under the drop-in.

numba's simulator refuses it: the declaration raises ``RuntimeError("Array alignment is not supported in
cudasim")`` (its ``kernelapi``), and numba-cuda's own suite tests that it does
(``TestCudasimUnsupportedAlignment``). A suite that passed on numba's simulator must pass on the drop-in, so
by default the drop-in refuses it the same way, with the same words, before the kernel runs.
``GPUSIM_CUDASIM_ALIGNMENT=gpu`` instead places the arrays as numba-cuda does on a GPU (gpusim's own
behaviour, and always that of ``gpusim.launch`` / ``gpusim.jit``): for a project whose kernels need it.

The refusal is found in the compiled IR (the kernel and every device function it calls), so it comes at the
launch wherever the declaration is; numba's simulator raises only when a thread reaches it.
"""

from __future__ import annotations

import os
import sys

from ..ir import nodes as N
from ..ir.walk import walk_stmts

ENV = "GPUSIM_CUDASIM_ALIGNMENT"
#: the values ``ENV`` takes: as numba's simulator (the default), or as a GPU
CHOICES = ("cudasim", "gpu")
#: numba's simulator's words (numba-cuda 0.30.4, ``simulator/kernelapi.py``)
SIMULATOR_WORDS = "Array alignment is not supported in cudasim"
_said_bad: set[str] = set()


def placed_as_on_gpu() -> bool:
    """Does ``GPUSIM_CUDASIM_ALIGNMENT`` ask for the GPU's placement? A bad value is said once on stderr and
    the default (refuse, as numba's simulator) kept."""
    text = os.environ.get(ENV, "").strip().lower()
    if text in ("", "cudasim"):
        return False
    if text == "gpu":
        return True
    if text not in _said_bad:
        _said_bad.add(text)
        sys.stderr.write(f"gpusim: {ENV}={text!r} is not one of {', '.join(CHOICES)}; refusing alignment= as "
                         "numba's simulator does\n")
    return False


def first_aligned(module: N.Module) -> tuple[N.Function, N.Stmt] | None:
    """The first array declaration with an ``alignment=`` in the module (its function, the statement)."""
    for fn in module.functions.values():
        for stmt in walk_stmts(fn.body):
            if isinstance(stmt, (N.SharedDecl, N.LocalDecl)) and stmt.alignment is not None:
                return fn, stmt
    return None


#: id(module) -> (the module, kept so that its id stays its own; its first aligned declaration or None)
_found: dict[int, tuple[N.Module, tuple[N.Function, N.Stmt] | None]] = {}


def refusal(module: N.Module) -> RuntimeError | None:
    """numba's simulator's ``RuntimeError`` for a module that declares an aligned array; None for one that
    does not (the caller asks ``placed_as_on_gpu`` first). The module is searched once."""
    hit = _found.get(id(module))
    if hit is None or hit[0] is not module:
        hit = _found[id(module)] = (module, first_aligned(module))
    found = hit[1]
    if found is None:
        return None
    fn, stmt = found
    kind = "shared" if isinstance(stmt, N.SharedDecl) else "local"
    where = f"{fn.filename}:{stmt.line}"
    return RuntimeError(f"{SIMULATOR_WORDS} ({where}: cuda.{kind}.array(..., alignment={stmt.alignment}); "
                        f"{ENV}=gpu places it as numba-cuda does on a GPU)")
