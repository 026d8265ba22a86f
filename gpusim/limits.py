"""Launch limits, checked before anything is allocated: the GPU's (``device.py``) and the simulator's own.

* The GPU's: grid and block dimensions, threads per block, shared memory per block (static at most 48 KiB,
  static and dynamic together at most 227 KiB), local arrays per thread (512 KiB). A launch the GPU would
  refuse raises ``LaunchError``; a kernel the GPU's compiler would refuse (too much static shared or local
  memory) gets a ``KernelError`` fault at the declaration and does not run.
* The simulator's: at most ``MAX_SIMULATED_THREADS`` threads per launch; a chunk of blocks (the blocks run
  at once) holds at most ``CHUNK_BYTES`` of shared and local arrays with their race records, so a launch's
  memory is the size of one chunk whatever its grid; the per-thread and per-block access counts of an
  instrumented launch (``LaunchReport.counts``) at most ``COUNTS_BYTES``. Past these: ``LaunchError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .device import (
    MAX_BLOCK,
    MAX_GRID,
    MAX_LOCAL_PER_THREAD,
    MAX_SHARED_PER_BLOCK,
    MAX_SIMULATED_THREADS,
    MAX_STATIC_SHARED,
    MAX_THREADS_PER_BLOCK,
)
from .faults import KernelError, LaunchError
from .ir import nodes as N
from .ir.walk import walk_stmts

#: shared and local arrays of one chunk, with their race records, at most (the simulator's memory per chunk)
CHUNK_BYTES = 256 << 20
#: per-thread and per-element access counts of one instrumented launch, at most
COUNTS_BYTES = 1 << 30
#: bytes of race records per shared element (``gpusim.observe.races.Shadow``: 64 when read, written and updated
#: by atomics; kept at the old 96 so that chunks, and what runs in them, stay as they were)
_SHADOW_BYTES = 96
#: bytes of counts per thread or element of an array (``gpusim.observe.counts``): a read count and a write count
#: of one byte each at first; they widen only where a count passes 255
_COUNT_BYTES = 2


def dims(v: Any, what: str) -> tuple[int, int, int]:
    """A grid or block as three positive ints within the GPU's limits (``LaunchError`` otherwise)."""
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
    for axis, d, most in zip("xyz", out, MAX_GRID if what == "grid" else MAX_BLOCK):
        if d > most:
            raise LaunchError(f"a {what}'s {axis} dimension is at most {most:,} on the GPU, not {d:,}")
    return out[0], out[1], out[2]


def check_geometry(g: tuple[int, int, int], b: tuple[int, int, int], shared_mem: Any) -> None:
    threads_per_block = b[0] * b[1] * b[2]
    if threads_per_block > MAX_THREADS_PER_BLOCK:
        raise LaunchError(f"a block has at most {MAX_THREADS_PER_BLOCK} threads; {b} has {threads_per_block}")
    threads = g[0] * g[1] * g[2] * threads_per_block
    if threads > MAX_SIMULATED_THREADS:
        raise LaunchError(f"a launch of {threads:,} threads is more than the simulator can track (at most "
                          f"{MAX_SIMULATED_THREADS:,}, a GPU allows more): launch fewer blocks")
    if not isinstance(shared_mem, (int, np.integer)) or isinstance(shared_mem, bool) or shared_mem < 0:
        raise LaunchError(f"shared_mem must be a non-negative number of bytes, not {shared_mem!r}")
    if shared_mem > MAX_SHARED_PER_BLOCK:
        raise LaunchError(f"shared_mem asks for {int(shared_mem):,} bytes of dynamic shared memory per block; a "
                          f"block may use at most {MAX_SHARED_PER_BLOCK:,} (227 KiB) on the GPU")


@dataclass
class Memory:
    """The shared and local arrays a module declares (every function's, each declaration once)."""

    static_shared: int = 0          # bytes per block, aligned as the runtime lays them out
    local: int = 0                  # bytes per thread
    shared_elements: int = 0        # static elements per block (each has race records and counts)
    dynamic_itemsizes: tuple[int, ...] = ()
    arrays: int = 0                 # shared and local declarations
    first_shared: N.SharedDecl | None = None
    first_local: N.LocalDecl | None = None


def declared(module: N.Module) -> Memory:
    mem = Memory()
    dynamic = set()
    for fn in module.functions.values():
        for s in walk_stmts(fn.body):
            if isinstance(s, N.SharedDecl):
                mem.arrays += 1
                mem.first_shared = mem.first_shared or s
                if s.dynamic:
                    dynamic.add(s.dtype.dtype.itemsize)
                    continue
                size = int(np.prod(s.shape, dtype=object))
                align = max(16, s.alignment or 16)  # alignment= pads to its multiple, as the GPU places it
                mem.static_shared = (mem.static_shared + align - 1) // align * align + size * s.dtype.dtype.itemsize
                mem.shared_elements += size
            elif isinstance(s, N.LocalDecl):
                mem.arrays += 1
                mem.first_local = mem.first_local or s
                mem.local += int(np.prod(s.shape, dtype=object)) * s.dtype.dtype.itemsize
    mem.dynamic_itemsizes = tuple(sorted(dynamic))
    return mem


def refused_by_compiler(mem: Memory, module: N.Module) -> KernelError | None:
    """The fault of a kernel the GPU's compiler would refuse: too much static shared or local memory."""
    if mem.static_shared > MAX_STATIC_SHARED:
        f = KernelError(f"The kernel declares {mem.static_shared} bytes of static shared memory per block; a "
                        f"GPU allows {MAX_STATIC_SHARED} (48 KiB).")
        f.lineno = mem.first_shared.line
    elif mem.local > MAX_LOCAL_PER_THREAD:
        f = KernelError(f"The kernel declares {mem.local} bytes of local arrays per thread; a GPU allows "
                        f"{MAX_LOCAL_PER_THREAD} (512 KiB).")
        f.lineno = mem.first_local.line
    else:
        return None
    f.kernel, f.filename = module.entry.py_name, module.filename
    return f


def blocks_per_chunk(mem: Memory, threads_per_block: int, shared_mem: int, chunk_lanes: int) -> int:
    """How many blocks run at once: ``chunk_lanes`` lanes, fewer where their arrays would pass CHUNK_BYTES."""
    if mem.static_shared + shared_mem > MAX_SHARED_PER_BLOCK:
        raise LaunchError(f"the kernel uses {mem.static_shared:,} bytes of static and {shared_mem:,} of dynamic "
                          f"shared memory per block; a block may use at most {MAX_SHARED_PER_BLOCK:,} (227 KiB) "
                          "on the GPU")
    dynamic = shared_mem + sum(shared_mem // size * _SHADOW_BYTES for size in mem.dynamic_itemsizes)
    per_block = (mem.static_shared + mem.shared_elements * _SHADOW_BYTES + dynamic
                 + threads_per_block * mem.local * 2)          # local data and its initialisation flags
    blocks = max(1, chunk_lanes // threads_per_block)
    if per_block * blocks > CHUNK_BYTES:
        blocks = CHUNK_BYTES // per_block
        if blocks == 0:
            raise LaunchError(f"one block needs {per_block / 2**20:,.0f} MiB of simulator memory for its shared "
                              f"and local arrays and their race records; the simulator runs blocks in "
                              f"{CHUNK_BYTES >> 20} MiB: use smaller arrays or fewer threads per block")
    return blocks


def check_counts(mem: Memory, num_blocks: int, num_threads: int, shared_mem: int, global_arrays: int) -> None:
    """The access counts of an instrumented launch: per thread for every array, per element of shared arrays
    for every block."""
    per_thread = (global_arrays + mem.arrays) * _COUNT_BYTES * num_threads
    elements = mem.shared_elements + sum(shared_mem // size for size in mem.dynamic_itemsizes)
    per_element = elements * num_blocks * _COUNT_BYTES
    if per_thread + per_element > COUNTS_BYTES:
        raise LaunchError(f"the access counts of this launch would take {(per_thread + per_element) / 2**30:.1f} "
                          f"GiB (per thread for {global_arrays + mem.arrays} arrays, per block for its shared "
                          f"arrays); the simulator keeps at most {COUNTS_BYTES >> 30} GiB: launch fewer blocks or "
                          "run without instrumentation")
