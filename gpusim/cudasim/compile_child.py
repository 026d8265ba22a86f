"""The child process behind the drop-in's ``compile_ptx`` and ``inspect_llvm``: numba-cuda's real compiler.

Run as a script (``python compile_child.py``) by ``gpusim.cudasim.compiler`` in a process without
``NUMBA_ENABLE_CUDASIM``, where ``numba.cuda`` is numba-cuda's compiler and not its simulator (the two cannot
share one process: the simulator replaces numba.cuda's driver, NVVM and compiler modules in ``sys.modules``).
It reads one pickled request from stdin (the Python function by value or by reference, as cloudpickle chose,
and what to make of it), and writes one pickled answer to stdout: ``("ok", value)`` or ``("error", kind,
exception or None, message)``, where ``kind`` is ``"missing"`` when numba-cuda's NVVM is not installed. It
imports neither gpusim nor anything of the parent's beyond what the pickle names.
"""

from __future__ import annotations

import io
import pickle
import sys


def _missing(error: BaseException) -> bool:
    """Is this numba-cuda saying that its NVVM, NVRTC or CUDA headers are not installed?"""
    names = {type(e).__name__ for e in (error, error.__cause__, error.__context__) if e is not None}
    if names & {"NvvmSupportError", "NvrtcSupportError", "DynamicLibNotFoundError"}:
        return True
    text = str(error).lower()
    return any(w in text for w in ("libnvvm", "nvvm cannot be found", "libnvrtc", "cuda_fp16.h"))


def _python_function(obj):
    return getattr(obj, "py_func", obj)


def _llvm_and_ptx(fn, sig, cc, options, what):
    """A kernel's LLVM IR or PTX, as numba-cuda's dispatcher gives them for one signature."""
    from numba.cuda import compiler

    lib, _ = compiler._compile_pyfunc_with_fixup(fn, sig, device=False, abi="numba", cc=cc, **options)
    if what == "llvm":
        return lib.get_llvm_str()
    return "\n".join(lib.get_asm_strs(cc=cc))  # as numba-cuda's compile_ptx: no driver needed


class _ModelledDevice:
    """What numba-cuda asks of "the current device" while it compiles a device function a kernel calls: its
    compute capability (there is no GPU here; the one asked for stands in)."""

    def __init__(self, cc):
        self.compute_capability = tuple(cc)


def _without_a_gpu(cc) -> None:
    from numba.cuda import dispatcher

    dispatcher.get_current_device = lambda: _ModelledDevice(cc)


def serve(request: dict):
    from numba import cuda

    cc = request.get("cc") or request.get("kwargs", {}).get("cc")
    _without_a_gpu(cc)
    fn = _python_function(request["function"])
    what = request["what"]
    if what in ("llvm", "asm"):
        return [_llvm_and_ptx(fn, sig, request["cc"], request["options"], what) for sig in request["signatures"]]
    compile_ = getattr(cuda, request["what"])
    return compile_(fn, request["signature"], *request["args"], **request["kwargs"])


def main() -> int:
    out = sys.stdout.buffer
    sys.stdout = io.TextIOWrapper(io.BytesIO())  # anything the compiler prints must not corrupt the answer
    try:
        answer = ("ok", serve(pickle.load(sys.stdin.buffer)))
    except BaseException as e:  # every failure goes back to the parent, which raises it there
        kind = "missing" if _missing(e) else "compile"
        try:
            pickle.loads(pickle.dumps(e))
            carried = e
        except Exception:
            carried = None
        answer = ("error", kind, carried, f"{type(e).__name__}: {e}")
    try:
        data = pickle.dumps(answer)
    except Exception as e:
        data = pickle.dumps(("error", "compile", None, f"the compiler's answer cannot be sent back: {e}"))
    out.write(data)
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
