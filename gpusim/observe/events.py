"""What the engine tells observers while a kernel runs.

Observers (the race tracker, the metrics counters, the per-thread counts, the phase trace) see every memory
access, barrier and floating-point operation; they never change what a kernel computes. The engine calls them
once per *warp-level instruction group*: one call covers every active lane of the chunk that executed the same
source access at the same time, so an observer works on NumPy vectors, not single threads.

Identities used in every event (all int64 NumPy vectors with one entry per active lane, ascending ``gtid``):

* ``gtid``  — global linear thread id: ``block_linear * threads_per_block + thread_linear``
* ``block`` — linear block id ``bx + by*gx + bz*gx*gy``
* ``warp``  — global warp id ``block * warps_per_block + thread_linear // 32``
  (threads are numbered x-fastest inside a block, ``tx + ty*bdx + tz*bdx*bdy``)

Element identity is ``flat``: the row-major (C-order) flat element index within the array the kernel sees.
For shared memory the array is per block, so ``(block, flat)`` names an element.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..device import WARP_SIZE


@dataclass(frozen=True)
class ArrayInfo:
    """An array a kernel touches: a global argument, a shared, local or const array."""

    id: int                    # unique within the launch
    name: str                  # the kernel's name for it (parameter or variable name)
    space: str                 # "global" | "shared" | "local" | "const"
    dtype: np.dtype
    shape: tuple[int, ...]
    base_address: int          # simulated byte address of element 0 (global: 256-byte aligned, per block for
                               # shared: offset within the block's shared memory window)
    #: byte strides per dimension where the elements are not packed row-major (a record field: the record's
    #: size apart, then the field's own shape); None for a packed array
    strides: tuple[int, ...] | None = None
    #: the array whose memory this one views (a record field's array of records), else None
    parent: ArrayInfo | None = None

    @property
    def itemsize(self) -> int:
        return int(self.dtype.itemsize)

    @property
    def memory(self) -> ArrayInfo:
        """The array that owns the bytes (itself, or the array of records a field view reads)."""
        return self if self.parent is None else self.parent.memory

    def address(self, flat: np.ndarray) -> np.ndarray:
        """The byte address of each element (``flat``: row-major element indices in ``shape``)."""
        if self.strides is None:
            return self.base_address + flat * self.itemsize
        addr = np.full(np.shape(flat), self.base_address, np.int64)
        rest = np.asarray(flat, np.int64)
        for n, stride in zip(reversed(self.shape), reversed(self.strides)):
            addr = addr + (rest % n) * stride if n else addr
            rest = rest // n if n else rest
        return addr

    @cached_property
    def size(self) -> int:  # asked per access by several observers: np.prod once
        return int(np.prod(self.shape, dtype=np.int64))

    @cached_property
    def nbytes(self) -> int:
        return self.size * self.itemsize


@dataclass(frozen=True)
class LaunchInfo:
    """The launch geometry, handed to observers before the first chunk runs."""

    kernel: str
    filename: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int            # dynamic shared memory bytes per block asked for by the launch

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def warps_per_block(self) -> int:
        return (self.threads_per_block + WARP_SIZE - 1) // WARP_SIZE

    @property
    def num_blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def num_threads(self) -> int:
        return self.num_blocks * self.threads_per_block

    def block_xyz(self, block_linear: int) -> tuple[int, int, int]:
        gx, gy, _ = self.grid
        b = int(block_linear)
        return (b % gx, (b // gx) % gy, b // (gx * gy))

    def thread_xyz(self, thread_linear: int) -> tuple[int, int, int]:
        bx, by, _ = self.block
        t = int(thread_linear)
        return (t % bx, (t // bx) % by, t // (bx * by))

    def split_gtid(self, gtid: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """Global linear thread id -> ((block x,y,z), (thread x,y,z))."""
        tpb = self.threads_per_block
        return self.block_xyz(int(gtid) // tpb), self.thread_xyz(int(gtid) % tpb)


@dataclass(frozen=True)
class UnrolledLoop:
    """One execution, by one chunk of blocks, of a loop the compiler unrolls at run time (``gpusim.ir.unroll``).

    ``trips`` is each lane's trip count (one entry per lane of the chunk, lane ``k`` being global thread
    ``first_gtid + k``; lanes that did not enter the loop have 0).
    """

    id: int                    # unique within the launch
    lineno: int
    count: int                 # unrolled by
    epilog: bool               # the remainder iterations run after the unrolled ones (else before)
    first_gtid: int
    trips: np.ndarray


@dataclass(frozen=True)
class AccessEvent:
    """One source-level access executed by a group of active lanes at the same time.

    ``kind`` is "ld" (read), "st" (write), "atom" (atomic whose old value the kernel uses) or "red" (atomic
    whose result is discarded). ``phase`` is, per lane, the number of ``syncthreads`` its block has passed.
    """

    array: ArrayInfo
    kind: str
    lineno: int
    gtid: np.ndarray
    block: np.ndarray
    warp: np.ndarray
    flat: np.ndarray
    phase: np.ndarray
    uniform: bool = False      # the index is the same for every lane (a compile-time-uniform address)
    op: str = ""               # for atomics: "add", "max", "cas", ...
    loop: UnrolledLoop | None = None   # the unrolled loop the access is in, if any ...
    iteration: int = 0                 # ... and which of its iterations (from 0) the lanes are in


class Observer:
    """Base class: every hook is optional. Subclasses keep their own state and add to the report."""

    def start(self, launch: LaunchInfo, arrays: list[ArrayInfo]) -> None:
        """Called once before the first chunk; ``arrays`` holds the global and const arrays."""

    def on_array(self, array: ArrayInfo) -> None:
        """A shared or local array was created (once per launch per declaration)."""

    def on_access(self, ev: AccessEvent) -> None:
        """A group of lanes read or wrote ``ev.array``."""

    def on_loop_exit(self, loop: UnrolledLoop) -> None:
        """Every lane of the chunk has left ``loop`` (no access event names it after this)."""

    def on_barrier(self, blocks: np.ndarray, lineno: int) -> None:
        """The blocks in ``blocks`` (linear ids) passed a ``syncthreads`` at ``lineno``."""

    def on_flops(self, op: str, dtype: np.dtype, count: int) -> None:
        """``count`` active lanes executed one floating-point ``op`` on values of ``dtype``.

        ``op`` is one of "add", "sub", "mul", "div", "fma", "special" (math functions: exp, log, sqrt, sin, ...),
        "cmp" is not counted.
        """

    def finish(self, report) -> None:
        """The launch is over: put results on the ``LaunchReport``."""
