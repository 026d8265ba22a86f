"""The puzzle format: a puzzle is data.

A puzzle module (``puzzles/chNN_<chapter>/pNN_<slug>.py``) defines one module-level ``PUZZLE = Puzzle(...)``.
The player writes one or more kernels in a solution file (a plain numba-cuda module); the checker loads the
file's kernels by name, runs every ``Case`` through gpusim (each ``LaunchStep`` in order, on the case's
buffers), compares the outputs against ``spec``, checks the ``constraints`` and awards ``stars``.

A *multi-device* case (chapter 10) has ``devices`` set: its array buffers are named ``<name>@<device>`` (the
device the array is placed on), each ``LaunchStep`` names the ``device`` that runs it, and ``Sync`` steps
order the devices; ``puzzles/multidevice.py`` runs it on ``gpusim.devices.System``. Defaults keep every
single-device case as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Dim = int | tuple[int, ...]


@dataclass(frozen=True)
class LaunchStep:
    """One kernel launch of a case. ``args`` name buffers of the case, in the kernel's parameter order; in a
    multi-device case an entry may also be an ``int``, passed as it is (a per-launch constant: a rank, a
    round number)."""

    kernel: str                  # the kernel function's name in the solution file
    grid: Dim
    block: Dim
    args: tuple[str | int, ...]
    shared_mem: int = 0          # dynamic shared memory bytes (for cuda.shared.array(0, ...))
    device: int = 0              # the device that runs it (multi-device cases; 0 for every other case)

    def arg_values(self, buffers: Mapping[str, Any]) -> tuple:
        """The launch's arguments: each named buffer's value, each int as it is."""
        return tuple(a if isinstance(a, int) else buffers[a] for a in self.args)


@dataclass(frozen=True)
class Sync:
    """A synchronisation point between the launches of a multi-device case: every launch before it on
    ``devices`` (every device when empty) happens before every launch after it on them. A ``Sync`` of every
    device also ends a *round* (``RunStats.device_launches`` numbers launches by round)."""

    devices: tuple[int, ...] = ()


@dataclass(frozen=True)
class Devices:
    """The simulated machine of a multi-device case: ``count`` devices linked as a ``topology``
    ("ring": each device to its two neighbours; "switch": every device to every other)."""

    count: int
    topology: str = "switch"
    # bytes per directed link "src->dst" that the puzzle's bandwidth-optimal algorithm moves on this case,
    # counted by the puzzle (like gpusim's ideal sectors for coalescing): what link-traffic stars compare with
    ideal_link_bytes: Mapping[str, int] = field(default_factory=dict)
    # rounds from the first to the last busy round that the puzzle's best schedule needs (0: not judged)
    ideal_rounds: int = 0


@dataclass(frozen=True)
class Case:
    """One test case: every buffer and scalar the kernels receive, and the launches to run.

    Output buffers are pre-filled (usually with a sentinel such as NaN or -1, so that an element the kernel
    never writes is caught). Scratch buffers for multi-launch puzzles live here too.
    """

    name: str                          # e.g. "random n=100", "n=1", "n not a multiple of the block"
    buffers: Mapping[str, Any]         # name -> np.ndarray | int | float
    steps: tuple[LaunchStep | Sync, ...]   # Sync only in multi-device cases
    note: str = ""                     # why this case exists, shown when it fails
    devices: Devices | None = None     # several devices (chapter 10); None: one device, as every other case

    @property
    def launches(self) -> tuple[LaunchStep, ...]:
        """The launch steps in order, without the ``Sync`` points: how one GPU runs a multi-device case
        (every array in its memory, the devices' launches in issue order)."""
        return tuple(s for s in self.steps if isinstance(s, LaunchStep))


@dataclass(frozen=True)
class RunStats:
    """What the checker measured over all launches of one case, for constraints and stars."""

    global_reads_per_thread: int       # max over threads, all global arrays (loads + atomics)
    global_writes_per_thread: int      # max over threads, all global arrays (stores + atomics)
    reads_per_thread_by_array: Mapping[str, int]   # max over threads, per global array name
    writes_per_thread_by_array: Mapping[str, int]
    shared_bytes_per_block: int        # max over launches
    uses_shared: bool
    atomics: int                       # atomic operations executed (global and shared)
    global_load_sectors: int
    global_store_sectors: int
    global_load_requests: int
    global_store_requests: int
    ideal_load_sectors: int            # sectors a perfectly coalesced kernel would need for the same bytes
    ideal_store_sectors: int
    shared_bank_conflicts: int
    launches: int
    flops: int
    metrics: Mapping[str, float] = field(default_factory=dict)  # summed ncu-named metrics
    # Multi-device cases only (empty otherwise), from gpusim.devices: bytes and 32-byte sectors per directed
    # link "src->dst" (what peer accesses moved), bytes launches stored into other devices' memory, and every
    # launch as (round, device, kernel, whether it wrote global memory); rounds end at a Sync of every device.
    link_bytes: Mapping[str, int] = field(default_factory=dict)
    link_sectors: Mapping[str, int] = field(default_factory=dict)
    ideal_link_bytes: Mapping[str, int] = field(default_factory=dict)   # the case's Devices.ideal_link_bytes
    ideal_rounds: int = 0                                               # the case's Devices.ideal_rounds
    peer_store_bytes: int = 0
    device_launches: tuple[tuple[int, int, str, bool], ...] = ()


@dataclass(frozen=True)
class Rule:
    """A checked condition over ``RunStats``: a constraint (must hold) or a star requirement.

    ``check`` returns None when the rule holds, or a sentence saying what is wrong ("reads 3 values of `a`
    per thread; the limit is 1").
    """

    description: str                               # shown to the player: "at most 1 global read per thread"
    check: Callable[[RunStats], str | None]


@dataclass(frozen=True)
class Star:
    """A star beyond the first (★ is for a correct solution that meets every constraint)."""

    stars: int                                     # 2 or 3
    description: str                               # "within the traffic budget"
    rules: tuple[Rule, ...]


@dataclass(frozen=True)
class Puzzle:
    slug: str                  # "map", "tiled-matmul"
    number: int                # global running number, 1-based
    title: str
    chapter: int               # 1..11; the chapter package (chNN_*/__init__.py) has NUMBER, TITLE, INTRODUCTION
    difficulty: int            # 1 (warm-up) .. 5 (hard)
    description: str           # Markdown for the learner
    kernels: tuple[str, ...]   # kernel names the solution file must define, e.g. ("map_kernel",)
    spec: Callable[..., Mapping[str, np.ndarray]]   # spec(**case.buffers) -> {output name: expected}
    make_cases: Callable[..., tuple[Case, ...]]
    # make_cases(rng=None): rng is a np.random.Generator; the checker passes a fresh one each check (its seed
    # is shown, so a check can be replayed); None means the puzzle's own fixed seed. Worked examples from the
    # description stay fixed whatever rng is.
    outputs: tuple[str, ...]   # buffer names compared against the spec
    # Buffers the kernels may write that are not compared (scratch between launches). Every other array
    # buffer is an input: the checker fails a case whose launches change one.
    scratch: tuple[str, ...] = ()
    constraints: tuple[Rule, ...] = ()
    stars: tuple[Star, ...] = ()
    hints: tuple[str, ...] = ()
    reading: str = ""          # one "read more" pointer into the course's readings
    rtol: float = 0.0          # tolerance for float outputs (0 = exact)
    atol: float = 0.0
    starter: str = ""          # file name under puzzles/starters/ (default: "<slug>.py")
    solution: str = ""         # file name under solutions/ (default: "<slug>.py")
    # Graduate mode (timing on a real GPU): bench(n) returns one Case whose launch does about n elements of
    # work, with the same kernels and buffers as make_cases' cases. None where the kernel cannot grow (one
    # block by design); bench_note then says why, and bench_max gives the largest valid case.
    bench: Callable[[int], Case] | None = None
    bench_max: Callable[[], Case] | None = None
    bench_note: str = ""

    @property
    def starter_file(self) -> str:
        return self.starter or f"{self.slug.replace('-', '_')}.py"

    @property
    def solution_file(self) -> str:
        return self.solution or f"{self.slug.replace('-', '_')}.py"
