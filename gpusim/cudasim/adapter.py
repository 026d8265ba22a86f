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
3. writes what the kernel printed to stdout and a line on stderr for each fault the policy reports (once per
   kernel and kind), then raises the first fault the policy says to raise (``policy.as_raised``), or copies
   the results back.

A kernel that declares an ``alignment=`` array is refused with numba's simulator's own error, in either mode
(``alignment.py``; ``GPUSIM_CUDASIM_ALIGNMENT=gpu`` runs it). The step budget grows with the launch
(``budget.py``).

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

from ..faults import KernelTypeError
from ..frontend.compiler import DEBUG_MARK, SIMULATOR_MARK
from ..frontend.names import CapturedDeviceArray
from ..frontend.source import remember_exec_sources
from ..launch import arg_type, compile_kernel, cooperative_max_blocks, launch
from . import alignment, budget, compiler, pointers, xoroshiro
from .policy import FaultPolicy, as_raised, is_limitation, kind_of, report_line


@dataclass
class Stats:
    """What the drop-in did in this process (``gpusim.cudasim.stats()``)."""

    gpusim_launches: int = 0
    gpusim_seconds: float = 0.0
    fallback_launches: int = 0
    fallback_seconds: float = 0.0
    #: "kernel (file:line)" -> why gpusim could not run it (the first reason seen)
    fallbacks: dict[str, str] = field(default_factory=dict)
    #: (kernel, kind) -> the line written for the first fault of that kind the policy reports (``policy``)
    reported: dict[tuple[str, str], str] = field(default_factory=dict)


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
    remember_exec_sources()  # kernels built by exec of a string (numba reads bytecode; gpusim reads source)
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
            if not k._device:
                _type_check(k, func_or_sig)
            return k

        return keep_signature

    functools.update_wrapper(jit, original_jit)
    _patched.update(call=original_call, jit=original_jit,
                    cooperative=kernel.FakeOverload.max_cooperative_grid_blocks)
    cls.__call__ = __call__
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    FakeCUDAArray.__cuda_array_interface__ = property(pointers.array_interface)
    kernel.FakeOverload.max_cooperative_grid_blocks = _max_cooperative_grid_blocks
    compiler.attach(_patched)  # compile_ptx, inspect_llvm...: numba-cuda's real compiler, in a child process
    for mod in (api, simulator, sys.modules["numba.cuda"]):  # still being imported: not yet numba's attribute
        if getattr(mod, "jit", None) is original_jit:
            mod.jit = jit
    if "numba.cuda.random" in sys.modules:  # else the start-up finder calls patch_random when it is imported
        patch_random(sys.modules["numba.cuda.random"])


def patch_random(module: Any) -> None:
    """``numba.cuda.random``'s host-side set-up of its generators becomes the vectorised one (``xoroshiro``:
    the same states; numba-cuda's loop runs in object mode under its simulator, hours for a million)."""
    if _patched and "random_init" not in _patched:
        _patched["random_init"] = module.init_xoroshiro128p_states_cpu
        module.init_xoroshiro128p_states_cpu = xoroshiro.init_states


def detach() -> None:
    """Give numba's simulator its launches back."""
    if not _patched:
        return
    from numba.cuda import simulator
    from numba.cuda.simulator import api, kernel

    kernel.FakeCUDAKernel.__call__ = _patched["call"]
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    del FakeCUDAArray.__cuda_array_interface__
    if "random_init" in _patched:
        sys.modules["numba.cuda.random"].init_xoroshiro128p_states_cpu = _patched["random_init"]
    kernel.FakeOverload.max_cooperative_grid_blocks = _patched["cooperative"]
    compiler.detach(_patched)
    for mod in (api, simulator, sys.modules["numba.cuda"]):
        if getattr(mod, "jit", None) is not None and getattr(mod.jit, "__wrapped__", None) is _patched["jit"]:
            mod.jit = _patched["jit"]
    _patched.clear()


def _max_cooperative_grid_blocks(self: Any, blockdim: Any) -> int:
    """How many blocks of ``blockdim`` threads a cooperative (grid-synchronised) launch may have on gpusim: as
    many as the GPU holds at once (numba's simulator says 1: it cannot sync blocks)."""
    threads = int(np.prod(blockdim)) if isinstance(blockdim, tuple) else int(blockdim)
    return cooperative_max_blocks(threads)


def stats() -> Stats:
    """A copy of this process's counts so far."""
    return Stats(_stats.gpusim_launches, _stats.gpusim_seconds, _stats.fallback_launches, _stats.fallback_seconds,
                 dict(_stats.fallbacks), dict(_stats.reported))


# ---------------------------------------------------------------------------------------------- a launch

def _launch(kernel: Any, args: tuple, original_call: Any) -> Any:
    from numba.cuda.errors import normalize_kernel_dimensions

    grid, block = normalize_kernel_dimensions(kernel.grid_dim, kernel.block_dim)
    if 0 in grid:  # no block to run (``forall(0)``): numba launches nothing, and neither does gpusim
        return None
    t0 = time.perf_counter()
    retr: list = []
    moved = _move_arguments(kernel, args, retr)
    unwrapped = [_unwrap(v) for v in moved]
    try:
        values = _cast_to_signature(kernel, unwrapped)
    except Exception as e:  # an address gpusim cannot follow
        return _cannot_run(kernel, e, None, args, original_call, [], t0)
    # the arrays gpusim writes in place (the caller's, and the memory behind a pointer): restored on a fallback
    direct = [v for a, u, v in zip(args, unwrapped, values) if isinstance(v, np.ndarray)
              and ((a is not None and _unwrap(a) is v) or not isinstance(u, np.ndarray))]
    saved = [(a, a.copy()) for a in direct] if _settings.mode == "fallback" else []
    refused = _alignment_refused(kernel, values)
    if refused is not None:  # numba's simulator's own refusal, in either mode (alignment.py)
        raise refused from None
    steps = budget.for_launch(int(np.prod(grid)) * int(np.prod(block)))
    try:
        report = launch(_frozen(kernel), grid, block, values, int(kernel.dynshared_size or 0),
                        instrument=False, trace=False, max_steps=steps)
    except Exception as e:  # anything gpusim raises before a thread runs: it cannot run this launch
        return _cannot_run(kernel, e, None, args, original_call, saved, t0)
    kernel.last_report = report
    _remember_types(kernel, unwrapped)
    limitation = next((f for f in report.faults if is_limitation(f)), None)
    if limitation is not None:  # whatever the policy: the results of this launch cannot be trusted
        return _cannot_run(kernel, limitation, limitation, args, original_call, saved, t0)
    fault = _settings.policy.first_to_raise(report.faults)
    _stats.gpusim_launches += 1
    _write_output(report)
    _report(kernel, _settings.policy.to_report(report.faults))
    try:
        if fault is not None:
            raise budget.with_hint(as_raised(fault)) from None
        for write_back in retr:
            write_back()
    finally:
        _stats.gpusim_seconds += time.perf_counter() - t0
    return None


def _remember_types(kernel: Any, values: list) -> None:
    """A lazily compiled kernel's signatures are its launches' argument types (numba's typeof), as numba-cuda
    files them: ``inspect_llvm()`` compiles these."""
    if getattr(kernel, "_gpusim_signature", None) is not None:
        return
    try:
        from numba import typeof

        sig = tuple(typeof(v) for v in values)
    except Exception:  # an argument numba cannot type: nothing to compile for
        return
    kernel.__dict__.setdefault("_gpusim_launched", {})[sig] = None


def _alignment_refused(kernel: Any, values: list) -> RuntimeError | None:
    """numba's simulator's error for a kernel that declares an ``alignment=`` array (``alignment.py``), found
    in its compiled IR (compiled once: the launch reuses it); None where it may run, or where it does not
    compile (the launch says why)."""
    if alignment.placed_as_on_gpu():
        return None
    try:
        comp = compile_kernel(_frozen(kernel), instrument=False, args=tuple(values))
    except Exception:  # the launch raises it again, and the mode decides
        return None
    return alignment.refusal(comp.module)


def _write_output(report: Any) -> None:
    """What the kernel printed, to stdout, as numba's simulator prints it (and a GPU, at the next sync)."""
    if report.output:
        sys.stdout.write("".join(rec.text + "\n" for rec in report.output))
    if report.output_dropped:
        sys.stderr.write(f"gpusim: {report.output_dropped} more lines printed by the kernel were not kept\n")


def _report(kernel: Any, faults: list) -> None:
    """One line on stderr for the first fault of each kind the policy reports, per kernel."""
    for f in faults:
        key = (_where(kernel), kind_of(f))
        if key not in _stats.reported:
            line = _stats.reported[key] = report_line(key[0], f)
            sys.stderr.write(line + "\n")


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
    """A simulator device array -> the NumPy array it holds (inside tuples too); anything else as it is."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    if type(value) is tuple:
        return tuple(_unwrap(v) for v in value)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):  # a namedtuple: the same type back
        return type(value)(*(_unwrap(v) for v in value))
    return value._ary if isinstance(value, FakeCUDAArray) else value


def _is_signature(obj: Any) -> bool:
    from numba.cuda.core.sigutils import is_signature

    return obj is not None and not callable(obj) and (is_signature(obj) or isinstance(obj, list))


def _type_check(kernel: Any, sig: Any) -> None:
    """numba compiles a kernel given signatures at ``cuda.jit``, and raises its ``TypingError`` there for an
    argument type its typing rejects: gpusim's front end types the kernel for each signature now, and a
    ``KernelTypeError`` becomes that ``TypingError``. Anything else gpusim cannot compile waits for the launch,
    where the mode decides (strict: an error; fallback: numba's simulator runs it)."""
    for one in sig if isinstance(sig, list) else [sig]:
        types = _ir_types(kernel.py_func, one)
        if types is None:
            continue
        try:
            compile_kernel(kernel.py_func, instrument=False, signature=types)
        except KernelTypeError as e:
            raise _typing_error()(str(e)) from None
        except Exception:  # gpusim's to say at the launch, by the mode
            continue


def _ir_types(func: Any, sig: Any) -> tuple | None:
    """The IR types of an eager signature's parameters, for numeric scalars and arrays of them; None for a
    signature with any other type (gpusim types those from the launch's arguments) or one numba rejects."""
    from numba.cuda import types as nbtypes
    from numba.cuda.core.sigutils import normalize_signature
    from numba.cuda.np.numpy_support import as_dtype

    try:
        argtypes, _ = normalize_signature(sig)
    except Exception:
        return None
    code = func.__code__
    names = code.co_varnames[:code.co_argcount]
    if len(argtypes) != len(names):
        return None
    examples = []
    for ty in argtypes:
        if isinstance(ty, (nbtypes.Integer, nbtypes.Float, nbtypes.Boolean)):
            examples.append(as_dtype(ty).type(0))
        elif isinstance(ty, nbtypes.Array) and isinstance(ty.dtype, (nbtypes.Integer, nbtypes.Float,
                                                                     nbtypes.Boolean)):
            examples.append(np.zeros((1,) * ty.ndim, as_dtype(ty.dtype), order="F" if ty.layout == "F" else "C"))
        else:
            return None
    try:
        return tuple(arg_type(v, n, code) for v, n in zip(examples, names))
    except Exception:
        return None


@functools.cache
def _typing_error() -> type:
    """numba's ``TypingError`` as both numba (``numba.errors``) and numba-cuda (``numba.cuda.core.errors``)
    define it: tests catch either."""
    from numba.core import errors as numba_errors
    from numba.cuda.core import errors as cuda_errors

    if issubclass(cuda_errors.TypingError, numba_errors.TypingError):
        return cuda_errors.TypingError
    return type("TypingError", (cuda_errors.TypingError, numba_errors.TypingError), {"__module__": __name__})


def _cast_to_signature(kernel: Any, values: list) -> list:
    """Scalars as the eager signature's types, as numba converts them (one signature only: with a list numba
    picks by the arguments' types, and gpusim already specialises on those)."""
    casts = getattr(kernel, "_gpusim_casts", None)
    if casts is None:
        casts = kernel._gpusim_casts = _signature_casts(getattr(kernel, "_gpusim_signature", None))
    if not casts:
        return values
    out = list(values)
    for i, (v, cast) in enumerate(zip(values, casts)):
        if isinstance(cast, tuple) and isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            out[i] = pointers.pointee(int(v), cast[1])     # ("pointer", dtype): the memory it points to
        elif isinstance(cast, np.dtype) and not isinstance(v, np.ndarray):
            try:
                out[i] = _converted(v, cast)
            except (TypeError, ValueError, OverflowError):
                pass
    return out


def _signature_casts(sig: Any) -> tuple:
    """For each parameter of an eager signature, the dtype its scalar argument is converted to, or
    ``("pointer", dtype)`` for a ``CPointer`` of a number (an address: ``pointers.pointee``), or None (as it
    is); empty without a signature, with a list of them, or with one numba itself would reject (numba's to
    report). Found once per kernel."""
    if sig is None or isinstance(sig, list):
        return ()
    from numba.cuda import types as nbtypes
    from numba.cuda.core.sigutils import normalize_signature
    from numba.cuda.np.numpy_support import as_dtype

    try:
        argtypes, _ = normalize_signature(sig)
    except Exception:
        return ()
    numbers = (nbtypes.Integer, nbtypes.Float, nbtypes.Boolean)
    return tuple(as_dtype(ty) if isinstance(ty, numbers) else
                 ("pointer", as_dtype(ty.dtype)) if isinstance(ty, nbtypes.CPointer) and isinstance(ty.dtype, numbers)
                 else None for ty in argtypes)


def _converted(value: Any, dtype: np.dtype) -> Any:
    """A scalar argument as numba passes it for a signature's type: a Python int that does not fit wraps, as
    the C conversion numba emits does (``0xFFFFFFFF`` for an ``int32`` is -1)."""
    if isinstance(value, int) and not isinstance(value, bool) and dtype.kind in "iu":
        wide = np.int64(value) if -(1 << 63) <= value < (1 << 63) else np.uint64(value)
        return wide.astype(dtype)
    return dtype.type(value)


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
    debug = bool(getattr(kernel, "_debug", False))
    if debug or any(_as_compiled(fn.__globals__.get(n)) is not None for n in names) or any(
            _as_compiled(_cell_value(c)) is not None for c in cells):
        glob = dict(fn.__globals__)
        for n in names:
            if (v := _as_compiled(glob.get(n))) is not None:
                glob[n] = v
        closure = tuple(c if (v := _as_compiled(_cell_value(c))) is None else types.CellType(v) for c in cells)
        func = types.FunctionType(fn.__code__, glob, fn.__name__, fn.__defaults__, closure or None)
        func.__kwdefaults__, func.__qualname__, func.__module__ = fn.__kwdefaults__, fn.__qualname__, fn.__module__
        if debug:  # compiled as numba-cuda's debug=True: divisions by zero raise (a copy: the same py_func
            setattr(func, DEBUG_MARK, True)  # may also be jitted without debug)
    else:
        func = fn
    setattr(func, SIMULATOR_MARK, True)  # numba's simulator calls plain Python functions: so does the drop-in
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
