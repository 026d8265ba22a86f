"""Per-thread and per-element access counts: what learners and puzzle rules ask about a launch.

``AccessCounts`` (``report.counts``) answers: how many global (or shared, local, const) reads and writes each
thread made, per array or in all; how many lane-accesses read and wrote each element of an array; totals per
space and kind; and, per global array, how well its accesses coalesced. Counts are of *lane-accesses*: a
thread that reads an element twice counts twice. Atomics count as a read and a write. ``element_readers`` /
``element_writers`` count distinct threads instead; they keep every (thread, element) pair, so they are
recorded for launches of at most ``DISTINCT_LIMIT`` threads and ``MAX_PAIRS`` lane-accesses (every puzzle),
and are None beyond that.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .events import AccessEvent, ArrayInfo, LaunchInfo, Observer

READS = ("ld", "atom", "red")
WRITES = ("st", "atom", "red")
DISTINCT_LIMIT = 1 << 16
#: at most this many (thread, element) pairs are kept for the distinct counts (32 MiB); past it they are dropped
MAX_PAIRS = 1 << 22
TOTAL_KEYS = ("global_ld", "global_st", "global_atom", "shared_ld", "shared_st", "shared_atom",
              "local_ld", "local_st", "const_ld")


#: counts start one byte wide and widen when one would overflow (a count is exact whatever its width)
_WIDER = {np.dtype(np.uint8): np.uint16, np.dtype(np.uint16): np.int32, np.dtype(np.int32): np.int64}


def add_thread_counts(acc: np.ndarray, gtid: np.ndarray) -> np.ndarray:
    """``acc[gtid] += 1`` for ascending, distinct ``gtid`` (one entry per lane of an event). Returns ``acc``,
    or a wider copy of it where a count would have passed what its dtype holds."""
    n = len(gtid)
    if n == 0:
        return acc
    lo = int(gtid[0])
    if int(gtid[-1]) - lo + 1 == n:
        while (done := _count_range(acc, lo, n, np.iinfo(acc.dtype).max)) < n:
            lo, n, acc = lo + done, n - done, acc.astype(_WIDER[acc.dtype])
        return acc
    return add_element_counts(acc, gtid)


def add_element_counts(acc: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``acc[i] += 1`` for every entry ``i`` of ``idx`` (repeats count). Returns ``acc`` or a wider copy."""
    while len(idx) and (done := _count_each(acc, idx, np.iinfo(acc.dtype).max)) < len(idx):
        idx, acc = idx[done:], acc.astype(_WIDER[acc.dtype])
    return acc


@njit(cache=True)
def _count_each(acc, idx, top):
    # one pass, repeats included: what np.add.at does, without its per-element cost or bincount's temporaries;
    # stops before the first count that would pass ``top`` and says how many it added
    for k in range(idx.size):
        i = idx[k]
        if acc[i] == top:
            return k
        acc[i] += 1
    return idx.size


@njit(cache=True)
def _count_range(acc, lo, n, top):
    # ``acc[lo:lo + n] += 1`` the same way
    for k in range(n):
        if acc[lo + k] == top:
            return k
        acc[lo + k] += 1
    return n


def _zeros(a: np.ndarray | None, n: int) -> np.ndarray:
    """A count array that has not been needed yet reads as zeros."""
    return np.zeros(n, np.uint8) if a is None else a


@dataclass
class _ArrayCounts:
    """One array's counts. Each count array is made at the first access that adds to it (None before: all
    zero), one byte per entry, widened as counts grow (``add_thread_counts``)."""
    info: ArrayInfo
    elem_shape: tuple
    elements: bool                    # counted per element (global, shared, const; not local)
    thread_reads: np.ndarray | None = None
    thread_writes: np.ndarray | None = None
    elem_reads: np.ndarray | None = None
    elem_writes: np.ndarray | None = None
    pairs_r: list = field(default_factory=list)   # (element * num_threads + thread) keys, for distinct counts
    pairs_w: list = field(default_factory=list)


@dataclass
class AccessCounts:
    """Per-thread and per-element counts of one launch (``report.counts``).

    * ``reads_per_thread(space, array)`` / ``writes_per_thread(...)``: int64, one entry per thread of the
      launch, indexed by global linear thread id (``LaunchInfo.split_gtid`` turns it into block and thread);
      reads are loads and atomics, writes are stores and atomics; ``array=None`` sums the space's arrays.
    * ``element_reads(name)`` / ``element_writes(name)``: shaped like the array (shared arrays:
      ``(num_blocks, *shape)``), how many lane-accesses read / wrote each element (local arrays: not kept).
    * ``totals``: lane-access counts, keys ``global_ld``, ``global_st``, ``global_atom`` (atomics of both
      kinds), ``shared_ld``, ..., ``local_ld``, ``local_st``, ``const_ld``.
    * ``coalescing``: {global array: {"requested_bytes", "moved_bytes", "efficiency"}}.
    * ``ideal_sectors``: {"ld", "st", "atom", "red"}: per request ceil(distinct bytes touched / 32), summed.
    * ``sites``: per source access (array, line, kind), its requests and what they cost: for global memory
      sectors, ideal sectors, bytes requested and moved and the coalescing efficiency of its requests
      (requested ÷ moved); for shared memory wavefronts and bank conflicts.
    """

    num_threads: int
    arrays: dict[int, _ArrayCounts] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    coalescing: dict[str, dict[str, float]] = field(default_factory=dict)
    ideal_sectors: dict[str, int] = field(default_factory=dict)
    sites: list[dict] = field(default_factory=list)  # per source access: cost of its requests (metrics.py)
    distinct: bool = True   # element_readers/element_writers recorded (launch within DISTINCT_LIMIT threads)

    def _select(self, space: str, array: str | None) -> list[_ArrayCounts]:
        chosen = [a for a in self.arrays.values() if a.info.space == space
                  and (array is None or a.info.name == array)]
        if array is not None and not chosen:
            raise KeyError(f"no {space} array named {array!r} in this launch")
        return chosen

    def _per_thread(self, space: str, array: str | None, attr: str) -> np.ndarray:
        out = np.zeros(self.num_threads, dtype=np.int64)
        for a in self._select(space, array):
            if getattr(a, attr) is not None:
                out += getattr(a, attr)
        return out

    def reads_per_thread(self, space: str = "global", array: str | None = None) -> np.ndarray:
        """Loads + atomics of each thread (global linear thread id) in ``space`` (one array or all)."""
        return self._per_thread(space, array, "thread_reads")

    def writes_per_thread(self, space: str = "global", array: str | None = None) -> np.ndarray:
        """Stores + atomics of each thread in ``space`` (one array or all)."""
        return self._per_thread(space, array, "thread_writes")

    def _element(self, name: str, attr: str) -> np.ndarray:
        found = [a for a in self.arrays.values() if a.info.name == name and a.info.space != "local"]
        if not found:
            raise KeyError(f"no global, shared or const array named {name!r} in this launch")
        a = found[0]
        size = int(np.prod(a.elem_shape, dtype=np.int64))
        return _zeros(getattr(a, attr), size).astype(np.int64).reshape(a.elem_shape)

    def element_reads(self, name: str) -> np.ndarray:
        """How many lane-accesses read each element of ``name`` (shared: one slab per block)."""
        return self._element(name, "elem_reads")

    def element_writes(self, name: str) -> np.ndarray:
        """How many lane-accesses wrote each element of ``name`` (shared: one slab per block)."""
        return self._element(name, "elem_writes")

    def _distinct(self, name: str, attr: str) -> np.ndarray | None:
        found = [a for a in self.arrays.values() if a.info.name == name and a.info.space != "local"]
        if not found:
            raise KeyError(f"no global, shared or const array named {name!r} in this launch")
        a = found[0]
        if not self.distinct:
            return None
        parts = getattr(a, attr)
        size = int(np.prod(a.elem_shape, dtype=np.int64))
        if not parts:
            return np.zeros(a.elem_shape, np.int64)
        keys = np.unique(np.concatenate(parts))
        return np.bincount(keys // self.num_threads, minlength=size).astype(np.int64).reshape(a.elem_shape)

    def element_readers(self, name: str) -> np.ndarray | None:
        """How many distinct threads read each element of ``name`` (None for launches above DISTINCT_LIMIT)."""
        return self._distinct(name, "pairs_r")

    def element_writers(self, name: str) -> np.ndarray | None:
        """How many distinct threads wrote each element of ``name`` (None above DISTINCT_LIMIT)."""
        return self._distinct(name, "pairs_w")

    def to_dict(self) -> dict:
        return {"totals": dict(self.totals), "coalescing": {k: dict(v) for k, v in self.coalescing.items()},
                "ideal_sectors": dict(self.ideal_sectors)}


class CountsObserver(Observer):
    """Builds ``report.counts``. ``traffic`` (the metrics observer) supplies the coalescing numbers."""

    def __init__(self, traffic=None):
        self.traffic = traffic

    def start(self, launch: LaunchInfo, arrays: list[ArrayInfo]) -> None:
        self.launch = launch
        self.counts = AccessCounts(launch.num_threads, totals=dict.fromkeys(TOTAL_KEYS, 0),
                                   distinct=launch.num_threads <= DISTINCT_LIMIT)
        self.pairs = 0
        for a in arrays:
            self.on_array(a)

    def on_array(self, array: ArrayInfo) -> None:
        if array.id in self.counts.arrays:
            return
        if array.space == "local":
            shape = ()
        elif array.space == "shared":
            shape = (self.launch.num_blocks, *array.shape)
        else:
            shape = tuple(array.shape)
        self.counts.arrays[array.id] = _ArrayCounts(array, shape, array.space != "local")

    def on_access(self, ev: AccessEvent) -> None:
        a = self.counts.arrays.get(ev.array.id)
        if a is None:
            self.on_array(ev.array)
            a = self.counts.arrays[ev.array.id]
        kind = "atom" if ev.kind == "red" else ev.kind
        key = f"{ev.array.space}_{kind}"
        self.counts.totals[key] = self.counts.totals.get(key, 0) + len(ev.gtid)
        if a.elements:
            idx = ev.flat if ev.array.space != "shared" else ev.block * ev.array.size + ev.flat
            size = int(np.prod(a.elem_shape, dtype=np.int64))
        keep = self.counts.distinct and a.elements
        if keep:
            self.pairs += len(ev.gtid)
            if self.pairs > MAX_PAIRS:  # too many to keep: give up the distinct counts, not the memory
                self.counts.distinct = keep = False
                for other in self.counts.arrays.values():
                    other.pairs_r.clear()
                    other.pairs_w.clear()
        if keep:
            keys = idx.astype(np.int64) * self.launch.num_threads + ev.gtid
        n = self.launch.num_threads
        if ev.kind in READS:
            a.thread_reads = add_thread_counts(_zeros(a.thread_reads, n), ev.gtid)
            if a.elements:
                a.elem_reads = add_element_counts(_zeros(a.elem_reads, size), idx)
                if keep:
                    a.pairs_r.append(keys)
        if ev.kind in WRITES:
            a.thread_writes = add_thread_counts(_zeros(a.thread_writes, n), ev.gtid)
            if a.elements:
                a.elem_writes = add_element_counts(_zeros(a.elem_writes, size), idx)
                if keep:
                    a.pairs_w.append(keys)

    def finish(self, report) -> None:
        if self.traffic is not None:
            self.counts.coalescing = self.traffic.coalescing()
            self.counts.ideal_sectors = dict(self.traffic.ideal_sectors)
            self.counts.sites = self.traffic.access_sites()
        report.counts = self.counts
