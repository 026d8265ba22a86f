"""``gpusim.launch(..., backend=...)``'s way into the compiled back end, and how ``backend="auto"`` chooses.

``auto`` runs a launch compiled when that costs no compile it did not ask for:

* the kernel's compiled code is already loaded in this process: compiled, whatever the size;
* its machine code is in the disk cache: compiled from ``AUTO_WARM_THREADS`` threads up (loading it costs a
  little; a puzzle's small launches stay on the lanes back end);
* nothing is cached: compiled only from ``AUTO_COLD_THREADS`` threads up, where one launch on the lanes back
  end takes long enough that a compile (seconds, once, then cached on disk) is worth starting;
* instrumented launches (``instrument=True``, ``launch``'s default) by the same rules: the compiled code
  computes every metric, count and latency round the lanes back end does. The phase trace's snapshots of
  shared memory are not computed, so a traced launch (``trace=True``, the default) of a kernel with shared
  arrays runs on the lanes back end (``SHARED_SNAPSHOTS``), as do kernels with a loop the compiler unrolls at
  run time when instrumented (``codegen.UNROLLED``);
* custom observers, or anything the compiled back end does not translate: the lanes back end.

``GPUSIM_AUTO_COLD_THREADS`` and ``GPUSIM_AUTO_WARM_THREADS`` override the two sizes.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
from numba.core.errors import NumbaError

from ...faults import LaunchError
from ...observe.events import ArrayInfo
from ...runtime.memory import GLOBAL_ALIGN
from ..lanes.work import OVERHEAD, straight_line
from .driver import CompiledKernel, _kernels, execute, generate
from .results import Recorder, build_report
from .support import check_args
from .values import NotCompiled

BACKENDS = ("auto", "lanes", "compiled")
#: why a traced launch of a kernel with shared arrays runs on the lanes back end
SHARED_SNAPSHOTS = (
    "the compiled back end does not record the phase trace's snapshots of shared memory (the values a block's "
    "shared arrays hold at each barrier): launch with trace=False, or with backend='lanes' or 'auto' (which run "
    "it on the lanes back end)")
AUTO_COLD_THREADS = int(os.environ.get("GPUSIM_AUTO_COLD_THREADS", 1 << 18))
AUTO_WARM_THREADS = int(os.environ.get("GPUSIM_AUTO_WARM_THREADS", 1 << 12))


def aliasing(args: tuple) -> tuple[int, ...]:
    """Per argument, the first argument that is the same array (or itself)."""
    first: dict[int, int] = {}
    out = []
    for i, v in enumerate(args):
        if isinstance(v, np.ndarray):
            out.append(first.setdefault(id(v), i))
        else:
            out.append(i)
    return tuple(out)


def _loaded(module, alias, instrument, trace) -> CompiledKernel | None:
    per = _kernels.get(module)
    if per is None:
        return None
    ck = per.get((alias, bool(instrument), bool(trace)))
    return ck if ck is not None and ck.compiled else None


def choose(backend: str, module, args: tuple, num_threads: int, instrument: bool, trace, observers,
           refused=None) -> CompiledKernel | None:
    """The compiled kernel to run, or None for the lanes back end. ``backend="compiled"`` raises
    ``LaunchError`` saying why it cannot. ``refused``: the fault of a kernel the GPU's compiler refuses
    (``gpusim.limits``), which the lanes back end reports without running it."""
    if backend not in BACKENDS:
        raise LaunchError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, not {backend!r}")
    if backend == "lanes" or refused is not None:
        return None
    tracing = bool(trace) and instrument
    alias = aliasing(args)
    if backend == "auto":
        if observers:
            return None
        try:
            check_args(args)
        except NotCompiled:
            return None
        ck = _loaded(module, alias, instrument, tracing)
        if ck is not None:
            return ck if not _needs_snapshots(ck) else None
        if num_threads < min(AUTO_WARM_THREADS, AUTO_COLD_THREADS):
            return None
        try:
            ck = generate(module, alias, instrument, tracing)
        except NotCompiled:
            return None
        if _needs_snapshots(ck):
            return None
        if ck.warm or num_threads >= AUTO_COLD_THREADS:
            return ck
        return None
    if observers:
        raise LaunchError("the compiled back end does not run custom observers; use backend='lanes'")
    if tracing and trace == "full":
        raise LaunchError("the compiled back end keeps the bounded phase trace only (trace=True); trace='full' "
                          "needs backend='lanes'")
    try:
        check_args(args)
        ck = generate(module, alias, instrument, tracing)
    except NotCompiled as e:
        raise LaunchError(f"the compiled back end cannot run kernel {module.entry.py_name!r} yet: {e} "
                          "(backend='auto' or 'lanes' runs it)") from None
    if _needs_snapshots(ck):
        raise LaunchError(SHARED_SNAPSHOTS)
    return ck


def _needs_snapshots(ck: CompiledKernel) -> bool:
    """Would the launch's trace keep snapshots of shared arrays (which the compiled back end does not)?"""
    return ck.trace and any(slot.space == "shared" for slot in ck.gen.slots)


def run(ck: CompiledKernel, info, args: tuple, names: tuple, max_steps: int, trace, instrumentation,
        per_chunk: int, t0: float):
    """Launch ``ck`` over ``info`` in chunks of ``per_chunk`` blocks (``gpusim.limits.blocks_per_chunk``);
    the ``LaunchReport``, or None when the kernel's straight-line code alone is past ``max_steps``: the lanes
    back end reports that without running anything."""
    entry_work = straight_line(ck.module.entry.body)
    need = -(-info.num_blocks // per_chunk) * entry_work.fixed * OVERHEAD + entry_work.lanes * info.num_threads
    if need > max_steps:
        return None
    chunk_lanes = per_chunk * info.threads_per_block
    addresses: dict[int, int] = {}
    infos: dict[int, ArrayInfo] = {}
    ids: dict[int, int] = {}
    address = 0x7000_0000
    for i, (name, v) in enumerate(zip(names, args)):
        if isinstance(v, np.ndarray):
            if id(v) not in ids:
                ids[id(v)] = len(ids) + 1
                infos[id(v)] = ArrayInfo(ids[id(v)], name, "global", v.dtype, tuple(v.shape), address)
                addresses[i] = address
                address += (v.nbytes + GLOBAL_ALIGN - 1) // GLOBAL_ALIGN * GLOBAL_ALIGN + GLOBAL_ALIGN
            else:
                addresses[i] = infos[id(v)].base_address
    scalar_args = list(args)
    for i, p in enumerate(ck.module.entry.params):
        if not isinstance(args[i], np.ndarray):
            scalar_args[i] = p.type.dtype.type(args[i])
    try:
        st = execute(ck, info, scalar_args, addresses, max_steps, chunk_lanes)
    except NumbaError as e:    # numba's compile of the generated code (before anything ran): a gpusim bug
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise LaunchError(f"the compiled back end could not compile kernel {ck.name!r} ({first}; a gpusim bug: "
                          "please report it); backend='lanes' runs it") from None
    report_workers = st["workers"]
    global_infos = {}
    for slot in ck.gen.slots:
        if slot.kind == "param":
            global_infos[slot.id] = infos[id(args[slot.params[0]])]
    ordered = dict(sorted(global_infos.items(), key=lambda kv: kv[1].id))
    observers = instrumentation(trace) if ck.instrument else []
    rec = Recorder(info, ck.name, ck.module.source_line, max_steps)
    report = build_report(ck, info, st, ordered, len(ids) + 1, observers, rec, info.shared_mem)
    report.extra["backend"] = "compiled"
    report.extra["threads"] = report_workers
    report.seconds = time.perf_counter() - t0
    return report


_ = Any
