"""Compiling and launching kernels: ``compile_kernel``, ``launch``, ``jit``."""

from __future__ import annotations

import enum
import linecache
import sys
import threading
import time
import weakref
from typing import Any

import numpy as np

from . import limits
from .backends.lanes.codegen import Compiled, generate
from .faults import KernelError, KernelFault, LaunchError, UnsupportedConstruct
from .frontend.compiler import compile_module
from .frontend.datetimes import as_int64, datetime_type
from .frontend.enums import member_type, member_value
from .frontend.groups import grid_synchronised
from .ir.nodes import Module
from .ir.types import (
    BOOL,
    COMPLEX128,
    FLOAT64,
    INT64,
    UINT64,
    Array,
    RecordRef,
    Tuple,
    Type,
    array_of,
    record_ref,
    scalar,
)
from .observe.events import LaunchInfo
from .report import LaunchReport
from .runtime.core import Abort, Runtime, timeout
from .runtime.memory import GLOBAL_ALIGN, ArrayHandle, global_handle
from .timing_model import H200

#: lanes per chunk: large enough to amortise Python overhead, small enough to stay in cache and memory
CHUNK_LANES = 1 << 16
#: default step budget of a launch: steps of work, a step being one thread doing one simple operation
#: (``gpusim.backends.lanes.work``), about a nanosecond of simulation each. Two billion ends an endless loop
#: within a few seconds at any launch size; the largest launch of a reference solution needs 1.1 billion
#: (puzzles' checks give 5 billion).
DEFAULT_MAX_STEPS = 2_000_000_000
#: lines of ``print()`` output a launch keeps by default (``LaunchReport.output``)
DEFAULT_MAX_OUTPUT_LINES = 1000

_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: (dtype, ndim, C-contiguous, F-contiguous) -> the IR type of such an array argument, found once
_ARRAY_TYPES: dict[tuple, Array] = {}
_compile_lock = threading.RLock()


def _py_func(kernel: Any) -> Any:
    func = getattr(kernel, "py_func", kernel)
    if not callable(func) or not hasattr(func, "__code__"):
        raise LaunchError(f"{kernel!r} is not a kernel function")
    return func


def arg_type(value: Any, name: str, code: Any = None) -> Type:
    """The IR type of one launch argument, as numba's ``typeof`` gives it (``LaunchError`` if none). An array
    numba-cuda takes but gpusim does not (complex, datetime, records) is an ``UnsupportedConstruct`` at the
    kernel's first line (``code``: the kernel's code object)."""
    if isinstance(value, np.ndarray):
        flags = value.flags
        key = (value.dtype, value.ndim, flags.c_contiguous, flags.f_contiguous)
        known = _ARRAY_TYPES.get(key)
        if known is not None:
            return known
        if value.dtype.fields is not None:
            t = _ARRAY_TYPES[key] = _record_array_type(value, name, code)
            return t
        if value.dtype.kind in "mM" and value.dtype.isnative:  # int64 counts of a unit (frontend.datetimes)
            layout = array_of(value.view(np.int64)).layout
            t = _ARRAY_TYPES[key] = Array(datetime_type(value.dtype), value.ndim, layout, "global")
            return t
        if value.dtype.kind in "mMV" and value.dtype.isnative:
            what = f"arrays of {value.dtype} are"
            filename = code.co_filename if code is not None else "<unknown>"
            lineno = code.co_firstlineno if code is not None else 0
            raise UnsupportedConstruct(f"argument {name!r} is a {value.dtype} array: {what} not supported by gpusim "
                                       "yet", filename=filename, lineno=lineno,
                                       source_line=linecache.getline(filename, lineno).rstrip("\n"))
        if value.dtype.kind in "SU" and value.dtype.isnative and value.dtype.itemsize:  # numba: (Unicode)CharSeq
            t = _ARRAY_TYPES[key] = array_of(value)
            return t
        if value.dtype.kind not in "biufc" or not value.dtype.isnative or value.dtype.itemsize > 16:
            raise LaunchError(f"argument {name!r} has dtype {value.dtype}; use numeric arrays")
        t = _ARRAY_TYPES[key] = array_of(value)
        return t
    if isinstance(value, np.void) and value.dtype.fields is not None:  # one record: a reference to it
        return record_ref(_record_array_type(np.asarray(value).reshape(1), name, code))
    if isinstance(value, (bool, np.bool_)):
        return BOOL
    if isinstance(value, enum.Enum) and isinstance(member_value(value), int):  # numba's (IntEnum)Member
        return member_type(value)
    if isinstance(value, int):
        if -(1 << 63) <= value < (1 << 63):
            return INT64
        if 0 <= value < (1 << 64):
            return UINT64  # numba types such an int as uint64
        raise LaunchError(f"argument {name!r} is {value}, which does not fit in 64 bits")
    if isinstance(value, float):
        return FLOAT64
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return datetime_type(value.dtype)
    if isinstance(value, (np.integer, np.floating, np.complex64, np.complex128)):
        return scalar(value.dtype)
    if isinstance(value, complex):
        return COMPLEX128
    if _is_tuple(value):  # numba's UniTuple/Tuple, or NamedTuple/NamedUniTuple with its field names
        items = tuple(arg_type(v, f"{name}[{k}]", code) for k, v in enumerate(value))
        return Tuple(items, tuple(value._fields) if type(value) is not tuple else None)
    if hasattr(value, "copy_to_host"):
        raise LaunchError(f"argument {name!r} is a device array; pass a NumPy array to the simulator")
    raise LaunchError(f"argument {name!r} is a {type(value).__name__}; kernels take NumPy arrays and numbers")


def _record_array_type(value: np.ndarray, name: str, code: Any) -> Array:
    """The IR type of an array of records (``UnsupportedConstruct`` for a field a kernel cannot hold)."""
    try:
        return array_of(value)
    except ValueError as e:
        filename = code.co_filename if code is not None else "<unknown>"
        lineno = code.co_firstlineno if code is not None else 0
        raise UnsupportedConstruct(f"argument {name!r} is an array of records whose {e}", filename=filename,
                                   lineno=lineno, source_line=linecache.getline(filename, lineno).rstrip("\n")
                                   ) from None


def _is_tuple(value: Any) -> bool:
    """A tuple or a namedtuple (whose fields are all of its items)."""
    if type(value) is tuple:
        return True
    fields = getattr(type(value), "_fields", None)
    return isinstance(value, tuple) and isinstance(fields, tuple) and len(fields) == len(value)


def compile_kernel(kernel: Any, *, instrument: bool = True, args: tuple | None = None,
                   signature: tuple[Type, ...] | None = None) -> Compiled:
    """Compile a kernel (a function or a ``@cuda.jit`` dispatcher) for the lanes back end, once per function,
    argument types and ``instrument`` (like numba, gpusim specialises on the argument types: give example
    ``args`` or their IR types as ``signature``; with neither, every parameter is a 1-D float64 array).
    Thread-safe."""
    func = _py_func(kernel)
    if signature is None:
        names = func.__code__.co_varnames[:func.__code__.co_argcount]
        if args is None:
            signature = tuple(Array(FLOAT64, 1, "C", "global") for _ in names)
        else:
            signature = tuple(arg_type(v, n, func.__code__) for v, n in zip(args, names))
    return _cached(func, (bool(instrument), tuple(signature)), lambda: _compile(func, tuple(signature), instrument))


def _compile(func: Any, signature: tuple[Type, ...], instrument: bool) -> Compiled:
    try:
        comp = generate(compile_module(func, signature), bool(instrument))
    except (RecursionError, MemoryError, SyntaxError):  # Python's own limits, on the source or the generated code
        raise UnsupportedConstruct(
            f"kernel {func.__name__!r} is nested too deeply to compile (an expression or block of many hundreds "
            "of levels: split it with intermediate variables)",
            filename=func.__code__.co_filename, lineno=func.__code__.co_firstlineno) from None
    return comp


def _cached(owner: Any, key: Any, build) -> Compiled:
    """The compiled code cached for ``owner`` (a function or an IR module) under ``key``; built once, even by
    threads asking at the same time."""
    with _compile_lock:
        per_owner = _compiled.get(owner)
        if per_owner is None:
            per_owner = _compiled[owner] = {}
        comp = per_owner.get(key)
        if comp is None:
            comp = per_owner[key] = build()
    return comp


def _memory_of(comp: Compiled) -> limits.Memory:
    """The shared and local memory ``comp``'s IR declares (``limits.declared``), walked once per kernel."""
    if comp.memory is None:
        comp.memory = limits.declared(comp.module)
    return comp.memory


def _leaves(name: str, value: Any, t: Type) -> list[tuple[str, Any, Type]]:
    """(name, value, type) of each array and scalar in an argument, depth first through tuples."""
    if isinstance(t, RecordRef) and isinstance(value, np.void):  # one record: a view of it as an array, at [0]
        return [(name, np.asarray(value).reshape(1), t.items[0]), (f"{name}[index]", 0, INT64)]
    if not isinstance(t, Tuple):
        return [(name, value, t)]
    return [leaf for k, (v, it) in enumerate(zip(value, t.items)) for leaf in _leaves(f"{name}[{k}]", v, it)]


def _scalar(v: Any, t: Type) -> Any:
    """A scalar argument as the NumPy scalar of its IR type."""
    if isinstance(v, enum.Enum):
        return t.dtype.type(member_value(v))
    if isinstance(v, (np.datetime64, np.timedelta64)):
        return as_int64(v)
    return t.dtype.type(v)


def _instrumentation(trace: Any) -> list:
    try:
        from .observe.metrics import instrumentation
    except ImportError:
        return []
    return list(instrumentation(trace))


def launch(kernel: Any, grid: Any, block: Any, args: tuple | list = (), shared_mem: int = 0, *,
           instrument: bool = True, trace: Any = True, max_steps: int | None = None,
           observers: list | None = None, max_output_lines: int = DEFAULT_MAX_OUTPUT_LINES,
           backend: str = "lanes", blocks: Any = None) -> LaunchReport:
    """Run ``kernel`` over ``grid`` x ``block`` threads on the CPU and report what happened.

    ``kernel`` is a function, a ``@cuda.jit`` dispatcher, or an IR ``Module`` from
    ``gpusim.frontend.compile_module`` (self-contained: it runs where the kernel's module was never imported).

    NumPy arrays in ``args`` are updated in place, like device memory. Faults are collected in the report,
    never raised (``report.raise_for_faults()`` raises the first). What the kernel prints is in
    ``report.output`` (at most ``max_output_lines`` lines). Compile errors raise ``KernelCompileError``; a
    malformed launch raises ``LaunchError``.

    ``max_steps`` is the launch's step budget (default ``DEFAULT_MAX_STEPS``): steps of work, one step being
    one thread doing one simple operation, counted the same on every machine. A launch past it stops with a
    ``KernelTimeout`` fault, so an endless loop ends within seconds at any launch size.

    ``backend``: "lanes" (NumPy lane vectors, the default), "compiled" (numba-compiled loops,
    ``gpusim.backends.compiled``: the same report, faster on large launches, a compile the first time; a
    ``LaunchError`` says what it cannot run) or "auto" (compiled where ``backends.compiled.entry.choose``
    finds it pays and applies, else lanes).

    ``blocks``: run only these blocks, as runs ``(first linear block id, count)`` in ascending order
    (``gpusim.sampling``: an estimate of a launch too big to simulate whole). The launch keeps its real grid;
    the other blocks do not run, so they leave memory untouched and count nothing. Runs on the lanes back end;
    a kernel that syncs its grid cannot be run in part (``LaunchError``).
    """
    t0 = time.perf_counter()
    g = limits.dims(grid, "grid")
    b = limits.dims(block, "block")
    limits.check_geometry(g, b, shared_mem)
    if max_steps is not None and (not isinstance(max_steps, (int, np.integer)) or isinstance(max_steps, bool)
                                  or max_steps < 1):
        raise LaunchError(f"max_steps must be a positive int, not {max_steps!r}")
    if not isinstance(max_output_lines, (int, np.integer)) or max_output_lines < 0:
        raise LaunchError(f"max_output_lines must be a non-negative int, not {max_output_lines!r}")
    args = tuple(args)
    if isinstance(kernel, Module):  # compiled IR: run it for exactly its signature
        entry = kernel.entry
        names = tuple(p.name for p in entry.params)
        kname = entry.py_name
    else:
        func = _py_func(kernel)
        names = func.__code__.co_varnames[:func.__code__.co_argcount]
        kname = func.__name__
    if len(args) != len(names):
        raise LaunchError(f"kernel {kname!r} takes {len(names)} arguments ({', '.join(names)}), {len(args)} given")
    signature = tuple(arg_type(v, n, None if isinstance(kernel, Module) else func.__code__)
                      for v, n in zip(args, names))
    # a tuple argument is passed as its items (the kernel's parameters: frontend.lower.tuple_leaves)
    leaves = [leaf for n, v, t in zip(names, args, signature) for leaf in _leaves(n, v, t)]
    for name, v, _ in leaves:
        if isinstance(v, np.ndarray) and not v.flags.writeable:
            raise LaunchError(f"argument {name!r} is read-only; pass a writable array")
    if isinstance(kernel, Module):
        want = kernel.signature
        if tuple(t for _, _, t in leaves) != want:
            got = ", ".join(str(t) for t in signature)
            raise LaunchError(f"kernel {kname!r} was compiled for ({', '.join(str(t) for t in want)}), not ({got})")
        comp = _cached(kernel, bool(instrument), lambda: generate(kernel, bool(instrument)))
    else:
        comp = compile_kernel(func, instrument=instrument, signature=signature)
    module = comp.module
    info = LaunchInfo(comp.name, module.filename, g, b, int(shared_mem))
    memory = _memory_of(comp)
    refused = limits.refused_by_compiler(memory, module)
    per_chunk = 1 if refused else limits.blocks_per_chunk(memory, info.threads_per_block, int(shared_mem),
                                                          CHUNK_LANES)
    if comp.grid_synchronised is None:
        comp.grid_synchronised = grid_synchronised(module)
    runs = None if blocks is None else block_runs(blocks, info.num_blocks)
    if runs is not None:
        if comp.grid_synchronised:
            raise LaunchError(f"kernel {kname!r} syncs its grid: its blocks wait for each other, so a part of them "
                              "cannot run alone")
        if backend == "compiled":
            raise LaunchError("a launch of some of its blocks (blocks=) runs on the lanes back end only")
        backend = "lanes"
    if not refused and comp.grid_synchronised:
        per_chunk = _cooperative_chunk(per_chunk, info)
    if instrument and not refused:
        limits.check_counts(memory, info.num_blocks, info.num_threads, int(shared_mem),
                            len({id(v) for _, v, _ in leaves if isinstance(v, np.ndarray)}))
    if backend != "lanes":
        from .backends.compiled import entry

        ck = entry.choose(backend, module, args, info.num_threads, instrument, trace, observers, refused)
        report = None if ck is None else entry.run(ck, info, args, names, DEFAULT_MAX_STEPS if max_steps is None
                                                   else max_steps, trace, _instrumentation, per_chunk, t0)
        if report is not None:
            return report
    handles: dict[int, ArrayHandle] = {}
    call_args = []
    address = 0x7000_0000
    for name, v, t in leaves:
        if isinstance(v, np.ndarray):
            h = handles.get(id(v))
            if h is None:
                data = as_int64(v) if v.dtype.kind in "mM" else v   # a datetime array: its int64 counts
                h = global_handle(len(handles) + 1, name, data, address, track=True)
                address += (v.nbytes + GLOBAL_ALIGN - 1) // GLOBAL_ALIGN * GLOBAL_ALIGN + GLOBAL_ALIGN
                handles[id(v)] = h
            call_args.append(h)
        else:
            call_args.append(_scalar(v, t))
    obs = list(observers or []) + (_instrumentation(trace) if instrument else [])
    budget = DEFAULT_MAX_STEPS if max_steps is None else max_steps
    rt = Runtime(info, module.source_line, comp.name, obs, budget, int(shared_mem), len(handles) + 1,
                 int(max_output_lines), globals_tracked=list(handles.values()))
    global_infos = [h.info for h in handles.values()]
    for o in obs:
        o.start(info, list(global_infos))   # each its own list: what one observer does to it is its own
    nblocks = info.num_blocks
    if runs is None:
        runs = ((0, nblocks),)
    run_blocks = sum(c for _, c in runs)
    fixed, per_lane = comp.entry_work
    need = sum(-(-c // per_chunk) for _, c in runs) * fixed + per_lane * run_blocks * info.threads_per_block
    if refused is not None:
        rt.faults[(KernelError, refused.lineno, None, ())] = refused
        refused.source_line = module.source_line(refused.lineno)
        nblocks = 0
    elif need > budget:
        # the kernel's straight-line code alone, over every chunk, is past the budget: stop before running
        rt.record(timeout(budget), module.entry.line, None, None, None)
        rt.steps, nblocks = need, 0
    with np.errstate(all="ignore"):
        for b0, end in _chunks(runs if nblocks else (), per_chunk):
            rt.start_chunk(b0, end - b0)
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
        rt.flush_output()
    report = LaunchReport(info)
    report.faults = list(rt.faults.values())
    report.arrays = global_infos + [a for a in rt.arrays.values()]
    report.shared_bytes_per_block = memory.static_shared + int(shared_mem)
    report.flops = {}
    for (op, dt), n in rt.flops.items():
        report.flops.setdefault(dt, {})[op] = report.flops.get(dt, {}).get(op, 0) + n
    report.output = rt.output
    report.output_dropped = rt.output_dropped
    report.steps = rt.steps
    for o in obs:
        o.finish(report)
    report.seconds = time.perf_counter() - t0
    if blocks is not None:
        report.extra["blocks_run"] = run_blocks
        report.extra["chunk_blocks"] = per_chunk
    return report


def block_runs(blocks: Any, num_blocks: int) -> tuple[tuple[int, int], ...]:
    """``launch(blocks=...)`` checked: runs ``(first, count)`` of linear block ids, ascending, disjoint, inside
    the grid (``LaunchError`` otherwise)."""
    try:
        runs = tuple((int(first), int(count)) for first, count in blocks)
    except (TypeError, ValueError):
        raise LaunchError(f"blocks must be runs (first block, count), not {blocks!r}") from None
    end = 0
    for first, count in runs:
        if count < 1 or first < end or first + count > num_blocks:
            raise LaunchError(f"blocks: the run ({first}, {count}) is empty, out of order or outside the grid's "
                              f"{num_blocks:,} blocks")
        end = first + count
    return runs


def _chunks(runs, per_chunk: int):
    """(first, end) of each chunk of blocks that runs at once: every run cut into ``per_chunk`` blocks."""
    for first, count in runs:
        for b0 in range(first, first + count, per_chunk):
            yield b0, min(b0 + per_chunk, first + count)


def cooperative_max_blocks(threads_per_block: int) -> int:
    """The most blocks a cooperative launch may have: all resident on the GPU at once, on the H200's 132 SMs
    at most 2,048 threads and 32 blocks each (what numba-cuda's ``max_cooperative_grid_blocks`` reports for a
    kernel light on registers and shared memory)."""
    return H200.sms * min(H200.max_blocks_per_sm, H200.max_threads_per_sm // max(1, threads_per_block))


def _cooperative_chunk(per_chunk: int, info: LaunchInfo) -> int:
    """A kernel that syncs its grid runs every block at once, in one chunk (numba-cuda launches it
    cooperatively: all its blocks resident together, or the launch fails)."""
    nblocks = info.num_blocks
    most = cooperative_max_blocks(info.threads_per_block)
    if nblocks > most:
        raise LaunchError(f"kernel {info.kernel!r} syncs its grid, so all its blocks must be resident at once (a "
                          f"cooperative launch): {nblocks:,} blocks of {info.threads_per_block} threads is more than "
                          f"the GPU holds ({most:,}); launch fewer blocks and loop over the work")
    if per_chunk < nblocks and per_chunk < CHUNK_LANES // info.threads_per_block:  # shared memory set the chunk
        raise LaunchError(f"kernel {info.kernel!r} syncs its grid, so its {nblocks:,} blocks run at once, and "
                          f"their shared arrays need more simulator memory than gpusim allows ({per_chunk} blocks "
                          "at a time); launch fewer blocks")
    return nblocks


def _record_error(rt: Runtime, comp: Compiled, e: Exception) -> None:
    line = 0
    tb = e.__traceback__
    fake = f"<gpusim {comp.name}>"
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == fake:
            line = comp.line_map.get(tb.tb_lineno, line)
        tb = tb.tb_next
    text = str(e)
    quoted = text.split("'")
    if isinstance(e, UnboundLocalError) and len(quoted) > 2 and quoted[1].startswith("v_"):
        rt.record(KernelError(f"The variable {quoted[1][2:]!r} is read before it is assigned on the path the "
                              "threads took."), line, None, None, None)
        return
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


_LAUNCH_OPTIONS = ("instrument", "trace", "max_steps", "max_output_lines", "backend")


class _Configured:
    def __init__(self, kernel: Any, grid: Any, block: Any, shared_mem: int):
        self.kernel, self.grid, self.block, self.shared_mem = kernel, grid, block, shared_mem

    def __call__(self, *args: Any) -> None:
        report = launch(self.kernel.py_func, self.grid, self.block, args, self.shared_mem, **self.kernel.options)
        self.kernel.last_report = report
        for rec in report.output:  # a kernel's print() reaches stdout, as on a GPU
            print(rec.text)
        if report.output_dropped:
            print(f"({report.output_dropped} more lines printed by the kernel were not kept)", file=sys.stderr)
        report.raise_for_faults()


class Kernel:
    """``gpusim.jit(fn)``: launch with ``kernel[grid, block](*args)`` as in numba; raises the first fault."""

    def __init__(self, func: Any, **options: Any):
        # launch() keywords for every launch (backend=, instrument=, max_steps=, ...); numba's own are ignored
        self.options = {k: v for k, v in options.items() if k in _LAUNCH_OPTIONS}
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
    """Decorator or function: ``gpusim.jit(kernel)`` or ``@gpusim.jit``; ``options`` are ``launch`` keywords
    for every launch (``gpusim.jit(kernel, backend="compiled")``)."""
    if func is None:
        return lambda f: Kernel(f, **options)
    return Kernel(func, **options)


sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
