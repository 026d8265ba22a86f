"""Compiling and launching kernels: ``compile_kernel``, ``launch``, ``jit``."""

from __future__ import annotations

import sys
import time
import weakref
from typing import Any

import numpy as np

from .backends.lanes.codegen import Compiled, ModuleGen
from .faults import KernelError, KernelFault, LaunchError
from .frontend.build import FrontEnd
from .observe.events import LaunchInfo
from .report import LaunchReport
from .runtime.core import Abort, Runtime
from .runtime.memory import GLOBAL_ALIGN, ArrayHandle, global_handle

#: lanes per chunk: large enough to amortise Python overhead, small enough to stay in cache and memory
CHUNK_LANES = 1 << 16
#: default loop budget: vector iterations of all loops in one chunk (each is one iteration of every active
#: lane). A quarter of a million is far beyond any puzzle (FlashAttention's reference needs ~2,400) and ends
#: a runaway loop in seconds.
DEFAULT_MAX_STEPS = 250_000
MAX_THREADS_PER_BLOCK = 1024
MAX_STATIC_SHARED = 48 * 1024

_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_frontend = FrontEnd()


def _py_func(kernel: Any) -> Any:
    func = getattr(kernel, "py_func", kernel)
    if not callable(func) or not hasattr(func, "__code__"):
        raise LaunchError(f"{kernel!r} is not a kernel function")
    return func


def compile_kernel(kernel: Any, *, instrument: bool = True, arg_kinds: tuple = ()) -> Compiled:
    """Compile a kernel (a function or a ``@cuda.jit`` dispatcher) to lane code, once per function and
    argument kinds (like numba, gpusim specialises on the arguments: ``"param"`` for an array, ``False``
    for a scalar; empty means every parameter is an array)."""
    func = _py_func(kernel)
    per_func = _compiled.setdefault(func, {})
    key = (instrument, arg_kinds)
    if key not in per_func:
        ir = _frontend.build(func, is_kernel=True, param_varying=arg_kinds)
        per_func[key] = ModuleGen(_frontend, instrument).build(ir)
    return per_func[key]


def _dims(v: Any, what: str) -> tuple[int, int, int]:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        v = (int(v),)
    if not isinstance(v, (tuple, list)) or not 1 <= len(v) <= 3:
        raise LaunchError(f"{what} must be an int or a tuple of 1 to 3 ints, not {v!r}")
    out = []
    for d in v:
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 1:
            raise LaunchError(f"{what} dimensions must be positive ints, not {v!r}")
        out.append(int(d))
    while len(out) < 3:
        out.append(1)
    return out[0], out[1], out[2]


def _scalar(v: Any, name: str) -> Any:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, int):
        return np.int64(v)
    if isinstance(v, float):
        return np.float64(v)
    if isinstance(v, (np.integer, np.floating)):
        return v
    if isinstance(v, complex):
        raise LaunchError(f"argument {name!r}: complex numbers are not supported")
    if hasattr(v, "copy_to_host"):
        raise LaunchError(f"argument {name!r} is a device array; pass a NumPy array to the simulator")
    raise LaunchError(f"argument {name!r} is a {type(v).__name__}; kernels take NumPy arrays and numbers")


def _instrumentation(trace: Any) -> list:
    try:
        from .observe.metrics import instrumentation
    except ImportError:
        return []
    return list(instrumentation(trace))


def launch(kernel: Any, grid: Any, block: Any, args: tuple | list = (), shared_mem: int = 0, *,
           instrument: bool = True, trace: Any = True, max_steps: int | None = None,
           observers: list | None = None) -> LaunchReport:
    """Run ``kernel`` over ``grid`` x ``block`` threads on the CPU and report what happened.

    NumPy arrays in ``args`` are updated in place, like device memory. Faults are collected in the report,
    never raised (``report.raise_for_faults()`` raises the first). Compile errors raise ``KernelCompileError``;
    a malformed launch raises ``LaunchError``.
    """
    t0 = time.perf_counter()
    g = _dims(grid, "grid")
    b = _dims(block, "block")
    if b[0] * b[1] * b[2] > MAX_THREADS_PER_BLOCK:
        raise LaunchError(f"a block has at most {MAX_THREADS_PER_BLOCK} threads; {b} has {b[0] * b[1] * b[2]}")
    if not isinstance(shared_mem, (int, np.integer)) or shared_mem < 0:
        raise LaunchError(f"shared_mem must be a non-negative number of bytes, not {shared_mem!r}")
    func = _py_func(kernel)
    args = tuple(args)
    arg_kinds = tuple("param" if isinstance(v, np.ndarray) else False for v in args)
    nparams = func.__code__.co_argcount
    if len(args) != nparams:
        names = func.__code__.co_varnames[:nparams]
        raise LaunchError(f"kernel {func.__name__!r} takes {nparams} arguments "
                          f"({', '.join(names)}), {len(args)} given")
    comp = compile_kernel(kernel, instrument=instrument, arg_kinds=arg_kinds)
    ir = _frontend.build(func, is_kernel=True, param_varying=arg_kinds)
    info = LaunchInfo(ir.name, ir.source.filename, g, b, int(shared_mem))
    handles: dict[int, ArrayHandle] = {}
    call_args = []
    address = 0x7000_0000
    for name, v in zip(ir.params, args):
        if isinstance(v, np.ndarray):
            if v.dtype.kind not in "biuf":
                raise LaunchError(f"argument {name!r} has dtype {v.dtype}; use numeric arrays")
            if not v.flags.writeable:
                raise LaunchError(f"argument {name!r} is read-only; pass a writable array")
            h = handles.get(id(v))
            if h is None:
                h = global_handle(len(handles) + 1, name, v, address, track=True)
                address += (v.nbytes + GLOBAL_ALIGN - 1) // GLOBAL_ALIGN * GLOBAL_ALIGN + GLOBAL_ALIGN
                handles[id(v)] = h
            call_args.append(h)
        else:
            call_args.append(_scalar(v, name))
    obs = list(observers or []) + (_instrumentation(trace) if instrument else [])
    src = ir.source
    rt = Runtime(info, src.line, ir.name, obs, max_steps or DEFAULT_MAX_STEPS, int(shared_mem), len(handles) + 1)
    global_infos = [h.info for h in handles.values()]
    for o in obs:
        o.start(info, global_infos)
    T = info.threads_per_block
    per_chunk = max(1, CHUNK_LANES // T)
    nblocks = info.num_blocks
    with np.errstate(all="ignore"):
        for b0 in range(0, nblocks, per_chunk):
            rt.start_chunk(b0, min(per_chunk, nblocks - b0))
            stop = True
            try:
                comp.func(rt, *call_args)
                stop = False
            except Abort:
                pass
            except KernelFault as f:  # pragma: no cover - faults are recorded, not raised
                rt.faults[(type(f), f.lineno, None, ())] = f
            except Exception as e:  # an error inside the kernel's own code
                _record_error(rt, comp, e)
            rt.show_shared(np.arange(rt.nb), None)     # shared memory as the chunk's blocks leave it
            if stop:
                break
    report = LaunchReport(info)
    report.faults = list(rt.faults.values())
    report.arrays = global_infos + [a for a in rt.arrays.values()]
    static = sum(rt.shared_static_bytes.values())
    report.shared_bytes_per_block = static + int(shared_mem)
    report.flops = {}
    for (op, dt), n in rt.flops.items():
        report.flops.setdefault(dt, {})[op] = report.flops.get(dt, {}).get(op, 0) + n
    if static > MAX_STATIC_SHARED:
        report.faults.append(KernelError(
            f"The kernel declares {static} bytes of static shared memory per block; a GPU allows "
            f"{MAX_STATIC_SHARED} (48 KiB).", kernel=ir.name, filename=src.filename))
    for o in obs:
        o.finish(report)
    report.seconds = time.perf_counter() - t0
    return report


def _record_error(rt: Runtime, comp: Compiled, e: Exception) -> None:
    line = 0
    tb = e.__traceback__
    fake = f"<gpusim {comp.name}>"
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == fake:
            line = comp.line_map.get(tb.tb_lineno, line)
        tb = tb.tb_next
    text = str(e)
    if "NoneType" in text:
        summary = "A variable is used before every thread that reads it has assigned it."
    elif isinstance(e, IndexError):
        summary = f"Bad array indexing: {text}."
    elif isinstance(e, TypeError):
        summary = f"Unsupported operation in the kernel: {text}."
    else:
        summary = f"The kernel raised {type(e).__name__}: {text}."
    f = KernelError(summary)
    f.__cause__ = e  # the drop-in (gpusim.cudasim) reads this: a Python error in gpusim's code for the kernel
    f.details.append("(if the kernel looks right, this may be a gpusim limitation: please report it)")
    rt.record(f, line, None, None, None)


class _Configured:
    def __init__(self, kernel: Any, grid: Any, block: Any, shared_mem: int):
        self.kernel, self.grid, self.block, self.shared_mem = kernel, grid, block, shared_mem

    def __call__(self, *args: Any) -> None:
        report = launch(self.kernel.py_func, self.grid, self.block, args, self.shared_mem)
        self.kernel.last_report = report
        report.raise_for_faults()


class Kernel:
    """``gpusim.jit(fn)``: launch with ``kernel[grid, block](*args)`` as in numba; raises the first fault."""

    def __init__(self, func: Any):
        self.py_func = _py_func(func)
        self.__name__ = self.py_func.__name__
        self.__doc__ = self.py_func.__doc__
        self.last_report: LaunchReport | None = None

    def __getitem__(self, config: tuple) -> _Configured:
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise LaunchError("configure a launch as kernel[grid, block] or kernel[grid, block, stream, shared_mem]")
        shared = config[3] if len(config) == 4 else 0
        return _Configured(self, config[0], config[1], shared)

    def __call__(self, *args: Any) -> None:
        raise LaunchError(f"kernel {self.__name__!r} needs a launch configuration: {self.__name__}[grid, block](...)")


def jit(func: Any = None, **options: Any) -> Any:
    """Decorator or function: ``gpusim.jit(kernel)`` or ``@gpusim.jit``."""
    if func is None:
        return lambda f: Kernel(f)
    return Kernel(func)


sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
