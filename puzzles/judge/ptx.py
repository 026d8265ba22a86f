"""Would numba-cuda compile it? Eager signatures against the launches, and sm_90 PTX where the compiler is.

``check_signatures`` needs only the descriptions the sandbox sent: a kernel declared with an eager signature
(``@cuda.jit("void(float32[:], float32[:])")``) is launched by numba-cuda only with arguments that match one
of its signatures, so an array of another dtype, another number of dimensions or a layout the signature does
not accept fails on a GPU, and fails here.

``compile_kernels`` compiles each kernel with ``numba.cuda.compile_ptx`` for compute capability 9.0, with the
argument types of the puzzle's first launch of it (or its eager signature), and turns what numba-cuda
rejects (typing errors, unsupported constructs) into compile failures with the file's line. It needs
numba-cuda's NVVM (the optional extra ``pip install "gpu-puzzles[ptx]"``, which brings
``numba-cuda[cu13]``; no GPU needed). ``available()`` says whether it is there; ``GPU_PUZZLES_PTX=0`` turns
the automatic compile off (the test suite does, so that it runs the same with or without the extra).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..model import Case
from ..results import Failure
from .rebuild import Function, Rebuilt

ENV = "GPU_PUZZLES_PTX"
CC = (9, 0)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """True when numba-cuda can compile to PTX here (its NVVM and runtime headers are installed)."""
    try:
        import numba
        from numba import cuda

        def probe(a):
            a[0] = 1

        cuda.compile_ptx(probe, (numba.float32[:],), cc=CC)
        return True
    except Exception:
        return False


def wanted(ptx: bool | None) -> bool:
    """Compile to PTX? ``ptx`` True or False decides; None follows ``GPU_PUZZLES_PTX`` (unset: when available)."""
    if ptx is None and os.environ.get(ENV, "").strip() == "0":
        return False
    return ptx is not False and available()


def first_launches(cases: Sequence[Case], kernel_names: Sequence[str]) -> dict[str, tuple[Any, ...]]:
    """Each kernel's arguments at its first launch in the cases."""
    found: dict[str, tuple[Any, ...]] = {}
    for case in cases:
        for step in case.launches:
            if step.kernel in kernel_names and step.kernel not in found:
                found[step.kernel] = step.arg_values(case.buffers)
    return found


def check_signatures(rebuilt: Rebuilt, cases: Sequence[Case], filename: str) -> list[Failure]:
    """A kernel with eager signatures must accept the arguments the puzzle launches it with."""
    failures = []
    for case in cases:
        for step in case.launches:
            kernel = rebuilt.kernels.get(step.kernel)
            if kernel is None or not kernel.signatures:
                continue
            args = list(step.arg_values(case.buffers))
            reasons = [_mismatch(sig, args, list(step.args)) for sig in kernel.signatures]
            if all(reasons):
                text = " or ".join(f"`{s['text']}`" for s in kernel.signatures)
                failures.append(Failure(
                    "compile", f"`{step.kernel}` is declared as {text}, but the puzzle launches it with "
                    f"{_describe(args)}: {reasons[0]}; numba-cuda would refuse the launch (declare the types "
                    f"the puzzle passes, or drop the signature and let numba-cuda infer them)",
                    case.name, filename=filename, lineno=kernel.node.lineno))
                return failures
    return failures


def _mismatch(sig: dict[str, Any], args: list[Any], names: list[str]) -> str:
    declared = sig.get("args") or []
    if len(declared) != len(args):
        return f"it declares {len(declared)} parameters for {len(args)} arguments"
    for name, want, got in zip(names, declared, args):
        if not isinstance(want, dict):
            return "its signature cannot be read"
        if isinstance(got, np.ndarray):
            if "array" not in want:
                return f"`{name}` is an array, declared as a scalar"
            if want["array"] != _numba_dtype(got.dtype) or want.get("ndim") != got.ndim:
                return (f"`{name}` is a {got.ndim}-d {_numba_dtype(got.dtype)} array, declared as "
                        f"{want.get('ndim')}-d {want['array']}")
            layout = want.get("layout", "A")
            if layout == "C" and not got.flags.c_contiguous or layout == "F" and not got.flags.f_contiguous:
                return f"`{name}` is not {layout}-contiguous as its signature says"
        elif "array" in want:
            return f"`{name}` is a number, declared as an array"
    return ""


def _numba_dtype(dtype: np.dtype) -> str:
    return "bool" if dtype.kind == "b" else dtype.name


def _describe(args: list[Any]) -> str:
    parts = []
    for a in args:
        parts.append(f"{_numba_dtype(a.dtype)}[{', '.join(':' * a.ndim)}]".replace("[]", "")
                     if isinstance(a, np.ndarray) else type(a).__name__)
    return "(" + ", ".join(parts) + ")"


def compile_kernels(rebuilt: Rebuilt, cases: Sequence[Case], kernel_names: Sequence[str],
                    filename: str) -> list[Failure]:
    """Compile every kernel to sm_90 PTX with numba-cuda; a failure per kernel it rejects."""
    import numba
    from numba import cuda

    made = rebuilt.numba_kernels()
    failures = []
    with _device_functions_for(CC):
        for name, args in first_launches(cases, kernel_names).items():
            function = rebuilt.kernels[name]
            try:
                signature = _eager(function) or tuple(numba.typeof(a) for a in args)
                cuda.compile_ptx(made[name], signature, cc=CC)
            except Exception as e:
                failures.append(_failure(name, function, e, filename, rebuilt))
    return failures


@contextlib.contextmanager
def _device_functions_for(cc: tuple[int, int]):
    """numba-cuda compiles a device function a kernel calls for the *current device's* compute capability,
    which needs a GPU. Without one, name a stand-in device of ``cc`` for the length of the compile."""
    from numba import cuda
    from numba.cuda import dispatcher

    if cuda.is_available():
        yield
        return

    class _Device:
        compute_capability = cc

    real = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: _Device()
    try:
        yield
    finally:
        dispatcher.get_current_device = real


def _eager(function: Function) -> tuple[Any, ...] | None:
    """The first eager signature rebuilt as numba types (never by evaluating the file's text)."""
    from numba import types
    from numba.np.numpy_support import from_dtype

    if not function.signatures:
        return None
    out = []
    for arg in function.signatures[0].get("args", []):
        if "array" in arg:
            out.append(types.Array(from_dtype(np.dtype(arg["array"])), int(arg["ndim"]),
                                   arg.get("layout", "A")))
        elif "scalar" in arg and isinstance(getattr(types, arg["scalar"], None), types.Type):
            out.append(getattr(types, arg["scalar"]))
        else:
            return None
    return tuple(out)


def _failure(name: str, function: Function, error: Exception, filename: str, rebuilt: Rebuilt) -> Failure:
    text = _ANSI.sub("", str(error)).strip()
    loc = getattr(error, "loc", None)
    lineno = int(getattr(loc, "line", 0) or 0) if getattr(loc, "filename", None) == filename else 0
    for match in re.finditer(r'File "([^"]+)", line (\d+)', text):
        if match.group(1) == filename or os.path.basename(match.group(1)) == os.path.basename(filename):
            lineno = int(match.group(2))
    call = re.search(r"^\s*>>> (\w+)\(", text, re.M)
    if not lineno and call:     # numba names the call it could not type, not always its line
        lineno = _first_call(call.group(1), [function] + list(rebuilt.device_functions.values()))
    summary = _summary(text)
    where = f" ({filename}:{lineno})" if lineno else ""
    return Failure("compile", f"numba-cuda would not compile `{name}` for the GPU (sm_90): "
                   f"{type(error).__name__}: {summary}{where}", filename=filename,
                   lineno=lineno or function.node.lineno, detail={"ptx": True, "error": type(error).__name__})


def _first_call(name: str, functions: list[Function]) -> int:
    """The line of the first call of ``name`` (``inc(...)``, ``cuda.atomic.inc(...)``) in these functions."""
    lines = []
    for function in functions:
        for node in ast.walk(function.node):
            if isinstance(node, ast.Call):
                callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if callee == name:
                    lines.append(node.lineno)
    return min(lines, default=0)


def _summary(text: str) -> str:
    """The first paragraph of a numba error and the call it could not type (``>>> inc(...)``), without the
    long tables of candidate overloads."""
    lines = [ln.strip() for ln in text.splitlines()]
    kept: list[str] = []
    for line in lines:
        if not line:
            if kept:
                break
            continue
        kept.append(line)
        if len(kept) >= 4:
            break
    call = next((ln for ln in lines if ln.startswith(">>> ")), None)
    if call and call not in kept:
        kept.append(call[4:])
    return " ".join(kept)[:600]
