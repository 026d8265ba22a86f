"""The drop-in's compiler entry points: numba-cuda's real compiler, in a child process.

numba's simulator stubs out ``numba.cuda.compile_ptx``, ``compile_ptx_for_current_device``, ``compile``,
``compile_for_current_device`` and ``compile_all`` (``None``), and its kernels have no ``inspect_llvm`` or
``inspect_asm``. Under the drop-in they are numba-cuda's own: the function goes, pickled by cloudpickle (by
value, with the globals and closure it uses; modules, and numba's and NumPy's own functions, by name), to a child
Python without ``NUMBA_ENABLE_CUDASIM`` (``compile_child.py``), where ``numba.cuda`` is numba-cuda's
compiler, and what it gives comes back. The two cannot share one process: numba's simulator puts its own
driver, NVVM and compiler modules in ``sys.modules`` under numba.cuda's names when it is imported.

A simulator kernel the function calls (a ``cuda.jit(device=True)`` function) becomes numba-cuda's own in the
child. The compute capability is the one given, else 9.0 (the H200 gpusim models; ``*_for_current_device``
and ``inspect_asm`` use it too). Each call starts one child: 1.8 s on this project's 2-core machine, most of
it importing numba.cuda; the same request twice is answered from memory. Compiling needs numba-cuda's NVVM (the
optional extra ``gpu-puzzles[ptx]``); where it is absent the call raises a ``RuntimeError`` that says so.
"""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

CC = (9, 0)
EXTRA = 'pip install "gpu-puzzles[ptx]"  (numba-cuda[cu13]: its NVVM, NVRTC and CUDA headers; no GPU needed)'
CHILD = Path(__file__).with_name("compile_child.py")
TIMEOUT_S = 300
#: the simulator's stubs these replace: ``numba.cuda``'s name -> whether it takes ``cc=``
ENTRY_POINTS = {"compile_ptx": True, "compile": True, "compile_all": True,
                "compile_ptx_for_current_device": False, "compile_for_current_device": False}


class CompilerMissing(RuntimeError):
    """numba-cuda's compiler cannot run here: its NVVM is not installed."""


def _rebuilder():
    def rebuild_kernel(fn, device, options):  # runs in the child (pickled by value: a local function)
        from numba import cuda

        return cuda.jit(device=device, **options)(fn)

    return rebuild_kernel


def _library(module: str | None) -> bool:
    """Is a function of this module one the child imports by name? numba's, numba-cuda's and NumPy's, not
    their tests: a user's module, a test module, may do at import what needs a GPU (numba-cuda's
    ``test_warp_ops`` asks for the current device's compute capability in its class body), or be ``__main__``."""
    top = (module or "").split(".")[0]
    return top in ("numba", "numba_cuda", "numpy") and ".tests" not in module


def _pickled(request: dict) -> bytes:
    from numba.cuda import cloudpickle
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    rebuild = _rebuilder()

    class _Pickler(cloudpickle.Pickler):
        def reducer_override(self, obj):
            if isinstance(obj, FakeCUDAKernel):
                options = {"fastmath": obj._fastmath} if obj._fastmath else {}
                return rebuild, (obj.py_func, obj._device, options)
            if isinstance(obj, types.FunctionType) and not _library(obj.__module__):
                return self._dynamic_function_reduce(obj)  # by value: its module may not import there
            return super().reducer_override(obj)

    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(request)
    return buffer.getvalue()


def _child_environment() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k != "NUMBA_ENABLE_CUDASIM" and not k.startswith("GPUSIM_CUDASIM")}
    here = [p for p in sys.path if p and Path(p).is_dir()]  # the parent's imports (a test module by name)
    env["PYTHONPATH"] = os.pathsep.join(here)
    return env


_answers: dict[tuple, Any] = {}  # request -> the compiler's answer: strings and types, immutable


def run_compiler(request: dict) -> Any:
    """Send one request to numba-cuda's compiler in a child process; its answer, or its error raised here."""
    try:
        data = _pickled(request)
    except Exception as e:
        raise RuntimeError(f"gpusim cannot send this function to numba-cuda's compiler: {type(e).__name__}: {e}") \
            from None
    # the function's pickle and the rest's repr: a numba type's pickle carries a count that changes when
    # ``int32[:]`` is made again, its repr does not
    key = (_pickled({"function": request.get("function")}),
           repr(sorted((k, v) for k, v in request.items() if k != "function")))
    if key not in _answers:
        _answers[key] = _compiled(data)
    return _answers[key]


def _compiled(data: bytes) -> Any:
    try:
        done = subprocess.run([sys.executable, str(CHILD)], input=data, capture_output=True,
                              env=_child_environment(), timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"numba-cuda's compiler did not finish in {TIMEOUT_S} s") from None
    try:
        answer = pickle.loads(done.stdout)
    except Exception:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-5:]
        raise RuntimeError("numba-cuda's compiler process ended without an answer (exit status "
                           f"{done.returncode}): " + " / ".join(tail)) from None
    if answer[0] == "ok":
        return answer[1]
    _, kind, error, message = answer
    if kind == "missing":
        raise CompilerMissing(f"numba-cuda's compiler is not installed here ({message}); to compile under "
                              f"gpusim's drop-in: {EXTRA}") from None
    if isinstance(error, BaseException):
        raise error
    raise RuntimeError(message)


def entry_point(name: str):
    """``numba.cuda.<name>`` under the drop-in: numba-cuda's function of that name, run in the child."""
    takes_cc = ENTRY_POINTS[name]

    def compile_with_numba_cuda(pyfunc, sig, *args, **kwargs):
        target = name
        if takes_cc:
            kwargs.setdefault("cc", None)
            kwargs["cc"] = kwargs["cc"] or CC
        else:  # "the current device" is the one gpusim models
            target = name.replace("_for_current_device", "")
            kwargs["cc"] = CC
        return run_compiler({"what": target, "function": pyfunc, "signature": sig, "args": args,
                             "kwargs": kwargs})

    compile_with_numba_cuda.__name__ = compile_with_numba_cuda.__qualname__ = name
    compile_with_numba_cuda.__doc__ = (f"numba-cuda's ``{name}``, run by its compiler in a child process "
                                       f"(gpusim's drop-in; compute capability {CC[0]}.{CC[1]} unless given).")
    return compile_with_numba_cuda


def kernel_signatures(kernel: Any) -> list:
    """The signatures a simulator kernel was compiled for: its eager ones, else those of its launches."""
    eager = getattr(kernel, "_gpusim_signature", None)
    if eager is not None:
        return list(eager) if isinstance(eager, list) else [eager]
    return list(getattr(kernel, "_gpusim_launched", {}))


def _signature_key(sig: Any) -> Any:
    """The key numba-cuda's dispatcher files a signature's code under: its argument types."""
    from numba.cuda.core import sigutils

    args, _ = sigutils.normalize_signature(sig)
    return tuple(args)


def _inspect(kernel: Any, signature: Any, what: str) -> Any:
    sigs = [signature] if signature is not None else kernel_signatures(kernel)
    if not sigs:
        raise RuntimeError(f"{kernel.__name__} has no compiled signature yet: give cuda.jit a signature or "
                           "launch it first")
    options = {"fastmath": True} if kernel._fastmath else {}
    codes = run_compiler({"what": what, "function": kernel.py_func, "signatures": sigs, "cc": CC,
                          "options": options})
    if signature is not None:
        return codes[0]
    return {_signature_key(s): code for s, code in zip(sigs, codes)}


def inspect_llvm(self: Any, signature: Any = None) -> Any:
    """The kernel's LLVM IR from numba-cuda's compiler: one signature's, or a dict for all it was compiled for."""
    return _inspect(self, signature, "llvm")


def inspect_asm(self: Any, signature: Any = None) -> Any:
    """The kernel's PTX (compute capability 9.0) from numba-cuda's compiler, as ``inspect_llvm``."""
    return _inspect(self, signature, "asm")


def attach(patched: dict) -> None:
    """Put these in place of the simulator's stubs (what they replaced goes into ``patched``)."""
    from numba.cuda import simulator
    from numba.cuda.simulator import compiler as stubs
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    mods = [m for m in (simulator, stubs, sys.modules.get("numba.cuda"), sys.modules.get("numba.cuda.compiler"))
            if m is not None]
    for name in ENTRY_POINTS:
        made = entry_point(name)
        for mod in mods:
            if getattr(mod, name, "absent") is None:  # the simulator's stub, not something else
                patched.setdefault("compiler", []).append((mod, name))
                setattr(mod, name, made)
    FakeCUDAKernel.inspect_llvm = inspect_llvm
    FakeCUDAKernel.inspect_asm = inspect_asm


def detach(patched: dict) -> None:
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    for mod, name in patched.pop("compiler", []):
        setattr(mod, name, None)
    for name in ("inspect_llvm", "inspect_asm"):
        if name in FakeCUDAKernel.__dict__:
            delattr(FakeCUDAKernel, name)
