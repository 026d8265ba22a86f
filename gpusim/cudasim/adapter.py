"""The drop-in: kernels launched through numba's simulator API run on gpusim.

``attach`` wraps ``FakeCUDAKernel.__call__``, the one place every launch through numba's simulator passes
(``kernel[grid, block]``, ``kernel[grid, block, stream, shared_bytes]``, eager signatures, ``forall``,
``specialize``: all of them configure the same object and call it), and ``jit``, to keep the eager signature
the simulator drops. A launch:

1. moves its arguments by the simulator's own rules (host arrays copied in, and back out afterwards;
   ``cuda.In``/``Out``/``InOut``; extensions' ``prepare_args``) and gives gpusim the NumPy arrays behind them,
   with scalars cast to the eager signature's types where there is one;
2. runs ``gpusim.launch`` on a copy of the kernel whose global and closure arrays are frozen at its first
   launch (numba compiles them in as constants);
3. raises the first fault the policy says to raise (``policy.as_raised``), or copies the results back.

A kernel gpusim cannot run — a compile error, an argument it does not take, a Python error in gpusim's code
for it — is an error in ``strict`` mode; in ``fallback`` mode any device array gpusim wrote is restored, numba's
simulator runs the launch, and stderr says so once per kernel. Device functions called from host code and
launches made while numba's simulator is running a kernel stay with numba's simulator.

This module has no rules of its own: what a kernel means is gpusim's front end's business.
"""

from __future__ import annotations

import functools
import sys
import time
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..frontend.names import CapturedDeviceArray
from ..launch import launch
from .policy import FaultPolicy, as_raised, is_limitation


@dataclass
class Stats:
    """What the drop-in did in this process (``gpusim.cudasim.stats()``)."""

    gpusim_launches: int = 0
    gpusim_seconds: float = 0.0
    fallback_launches: int = 0
    fallback_seconds: float = 0.0
    #: "kernel (file:line)" -> why gpusim could not run it (the first reason seen)
    fallbacks: dict[str, str] = field(default_factory=dict)


@dataclass
class _Settings:
    mode: str = "fallback"
    policy: FaultPolicy = field(default_factory=FaultPolicy)


_settings = _Settings()
_stats = Stats()
_patched: dict[str, Any] = {}  # what attach replaced, for detach


def attach(mode: str = "fallback", faults: str | None = None) -> None:
    """Route numba's simulator's kernel launches to gpusim (again: a second call only changes the settings)."""
    from numba.cuda.core import config

    if mode not in ("fallback", "strict"):
        raise ValueError(f"mode must be 'fallback' or 'strict', not {mode!r}")
    policy = FaultPolicy.parse(faults)
    if not config.ENABLE_CUDASIM:
        raise RuntimeError("numba.cuda was imported without its simulator, so there is nothing for gpusim to stand "
                           "in for: set NUMBA_ENABLE_CUDASIM=1 (or call gpusim.install()) before numba.cuda is "
                           "imported")
    _settings.mode, _settings.policy = mode, policy
    if _patched:
        return
    from numba.cuda import simulator
    from numba.cuda.simulator import api, kernel

    cls = kernel.FakeCUDAKernel
    original_call = cls.__call__
    original_jit = api.jit

    def __call__(self, *args):
        if self._device or kernel._get_kernel_context() is not None:
            return original_call(self, *args)
        return _launch(self, args, original_call)

    def jit(func_or_sig=None, *a, **kw):
        made = original_jit(func_or_sig, *a, **kw)
        if isinstance(made, cls) or not _is_signature(func_or_sig):
            return made

        def keep_signature(fn):
            k = made(fn)
            k._gpusim_signature = func_or_sig
            return k

        return keep_signature

    functools.update_wrapper(jit, original_jit)
    _patched.update(call=original_call, jit=original_jit)
    cls.__call__ = __call__
    for mod in (api, simulator, sys.modules["numba.cuda"]):  # still being imported: not yet numba's attribute
        if getattr(mod, "jit", None) is original_jit:
            mod.jit = jit


def detach() -> None:
    """Give numba's simulator its launches back."""
    if not _patched:
        return
    from numba.cuda import simulator
    from numba.cuda.simulator import api, kernel

    kernel.FakeCUDAKernel.__call__ = _patched["call"]
    for mod in (api, simulator, sys.modules["numba.cuda"]):
        if getattr(mod, "jit", None) is not None and getattr(mod.jit, "__wrapped__", None) is _patched["jit"]:
            mod.jit = _patched["jit"]
    _patched.clear()


def stats() -> Stats:
    """A copy of this process's counts so far."""
    return Stats(_stats.gpusim_launches, _stats.gpusim_seconds, _stats.fallback_launches, _stats.fallback_seconds,
                 dict(_stats.fallbacks))


# ---------------------------------------------------------------------------------------------- a launch

def _launch(kernel: Any, args: tuple, original_call: Any) -> Any:
    from numba.cuda.errors import normalize_kernel_dimensions

    grid, block = normalize_kernel_dimensions(kernel.grid_dim, kernel.block_dim)
    if 0 in grid:  # no block to run (``forall(0)``): numba launches nothing, and neither does gpusim
        return None
    t0 = time.perf_counter()
    retr: list = []
    moved = _move_arguments(kernel, args, retr)
    values = _cast_to_signature(kernel, [_unwrap(v) for v in moved])
    direct = [v for a, v in zip(args, values) if a is not None and _unwrap(a) is v and isinstance(v, np.ndarray)]
    saved = [(a, a.copy()) for a in direct] if _settings.mode == "fallback" else []
    try:
        report = launch(_frozen(kernel), grid, block, values, int(kernel.dynshared_size or 0),
                        instrument=False, trace=False)
    except Exception as e:  # anything gpusim raises before a thread runs: it cannot run this launch
        return _cannot_run(kernel, e, None, args, original_call, saved, t0)
    kernel.last_report = report
    limitation = next((f for f in report.faults if is_limitation(f)), None)
    if limitation is not None:  # whatever the policy: the results of this launch cannot be trusted
        return _cannot_run(kernel, limitation, limitation, args, original_call, saved, t0)
    fault = _settings.policy.first_to_raise(report.faults)
    _stats.gpusim_launches += 1
    try:
        if fault is not None:
            raise as_raised(fault) from None
        for write_back in retr:
            write_back()
    finally:
        _stats.gpusim_seconds += time.perf_counter() - t0
    return None


def _cannot_run(kernel: Any, error: Exception, fault: Any, args: tuple, original_call: Any, saved: list,
                t0: float) -> Any:
    where = _where(kernel)
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    reason = f"{type(error).__name__}: {reason}"
    if _settings.mode == "strict":
        _stats.gpusim_seconds += time.perf_counter() - t0
        if fault is not None:
            raise as_raised(fault) from None
        if hasattr(error, "add_note"):
            error.add_note(f"gpusim cannot run kernel {where} (GPUSIM_CUDASIM=strict; GPUSIM_CUDASIM=1 would run "
                           "it on numba's simulator instead)")
        raise error.with_traceback(None) from None  # the message names the kernel's line; gpusim's frames don't help
    for array, copy in saved:
        np.copyto(array, copy)
    if where not in _stats.fallbacks:
        _stats.fallbacks[where] = reason
        sys.stderr.write(f"gpusim: kernel {where} runs on numba's simulator: gpusim cannot run it ({reason})\n")
    t1 = time.perf_counter()
    try:
        return original_call(kernel, *args)
    finally:
        _stats.fallback_launches += 1
        _stats.fallback_seconds += time.perf_counter() - t1


def _where(kernel: Any) -> str:
    code = kernel.py_func.__code__
    return f"{kernel.py_func.__name__!r} ({code.co_filename}:{code.co_firstlineno})"


def _move_arguments(kernel: Any, args: tuple, retr: list) -> list:
    """The simulator's argument transfer (its ``FakeCUDAKernel.__call__``), short of its in-kernel wrapper."""
    from numba.cuda.simulator.args import ArgHint, InOut

    moved = []
    for arg in args:
        _, arg = functools.reduce(lambda ty_val, ext: ext.prepare_args(*ty_val, stream=0, retr=retr),
                                  kernel.extensions, (None, arg))
        if isinstance(arg, np.ndarray) and arg.ndim > 0:
            arg = InOut(arg).to_device(retr)
        elif isinstance(arg, ArgHint):
            arg = arg.to_device(retr)
        moved.append(arg)
    return moved


def _unwrap(value: Any) -> Any:
    """A simulator device array -> the NumPy array it holds; anything else as it is."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    return value._ary if isinstance(value, FakeCUDAArray) else value


def _is_signature(obj: Any) -> bool:
    from numba.cuda.core.sigutils import is_signature

    return obj is not None and not callable(obj) and (is_signature(obj) or isinstance(obj, list))


def _cast_to_signature(kernel: Any, values: list) -> list:
    """Scalars as the eager signature's types, as numba converts them (one signature only: with a list numba
    picks by the arguments' types, and gpusim already specialises on those)."""
    sig = getattr(kernel, "_gpusim_signature", None)
    if sig is None or isinstance(sig, list):
        return values
    from numba.cuda import types as nbtypes
    from numba.cuda.core.sigutils import normalize_signature
    from numba.cuda.np.numpy_support import as_dtype

    try:
        argtypes, _ = normalize_signature(sig)
    except Exception:  # a signature numba itself would reject is numba's to report
        return values
    out = list(values)
    for i, (v, ty) in enumerate(zip(values, argtypes)):
        if isinstance(ty, (nbtypes.Integer, nbtypes.Float, nbtypes.Boolean)) and not isinstance(v, np.ndarray):
            try:
                out[i] = as_dtype(ty).type(v)
            except (TypeError, ValueError, OverflowError):
                pass
    return out


def _frozen(kernel: Any) -> Any:
    """The kernel's function as numba compiles it at its first launch: the global and closure NumPy arrays it
    names are copied then (numba compiles them in as constants, so later changes do not reach the kernel),
    and the device arrays it names become the NumPy arrays behind them, not copied (numba captures a device
    array by pointer, so a later ``copy_to_device`` does reach the kernel)."""
    func = getattr(kernel, "_gpusim_frozen", None)
    if func is not None:
        return func
    fn = kernel.py_func
    names = set(fn.__code__.co_names)
    cells = fn.__closure__ or ()
    if any(_as_compiled(fn.__globals__.get(n)) is not None for n in names) or any(
            _as_compiled(_cell_value(c)) is not None for c in cells):
        glob = dict(fn.__globals__)
        for n in names:
            if (v := _as_compiled(glob.get(n))) is not None:
                glob[n] = v
        closure = tuple(c if (v := _as_compiled(_cell_value(c))) is None else types.CellType(v) for c in cells)
        func = types.FunctionType(fn.__code__, glob, fn.__name__, fn.__defaults__, closure or None)
        func.__kwdefaults__, func.__qualname__, func.__module__ = fn.__kwdefaults__, fn.__qualname__, fn.__module__
    else:
        func = fn
    kernel._gpusim_frozen = func
    return func


def _as_compiled(value: Any) -> np.ndarray | CapturedDeviceArray | None:
    """What a captured value becomes in the compiled kernel, where that differs from the value: a copy of a
    NumPy array, the NumPy array behind a device array (marked as captured by pointer, so gpusim's front end
    does not freeze it); None for anything else."""
    if isinstance(value, np.ndarray):
        return value.copy()
    inner = _unwrap(value)
    return CapturedDeviceArray(inner) if inner is not value and isinstance(inner, np.ndarray) else None


def _cell_value(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None
