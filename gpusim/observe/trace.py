"""The phase trace: per block, which thread read or wrote which element of which array, barrier by barrier.

A block's life is cut into *phases* by its ``syncthreads``: phase 0 runs until the first barrier, phase k
between barrier k and k+1. Inside a phase the trace keeps the order the simulator executed accesses in
(``step``), so a visualiser can scrub through time: a step is one source access executed by a group of lanes
together, as a warp would.

Bounded by default: only the first ``max_blocks`` blocks are recorded, and at most ``max_accesses``
lane-accesses in all (``truncated`` says whether anything was left out); ``trace="full"`` records every
block and access. Arrays are named by ``ArrayInfo``; elements by their row-major flat index
(``element_index`` turns it into an index tuple); threads by their linear index inside the block
(``LaunchInfo.thread_xyz`` gives x, y, z).

The trace also keeps the *contents* of the recorded blocks' shared arrays as each phase ends (at each barrier
and at the block's end): ``shared_values(block, array, phase)``. Bounded by ``max_values`` elements in all
(``values_dropped`` counts what was left out). gpusim starts shared memory at zero; a GPU leaves it
undefined, so a slot no thread has written yet holds no meaningful value (``written_before`` says which).
"""

from __future__ import annotations

import numpy as np

from .events import AccessEvent, ArrayInfo, LaunchInfo, Observer

KINDS = ("ld", "st", "atom", "red")
_KIND_CODE = {k: i for i, k in enumerate(KINDS)}
DEFAULT_MAX_BLOCKS = 64
DEFAULT_MAX_ACCESSES = 1 << 18
DEFAULT_MAX_VALUES = 1 << 20
ACCESS_DTYPE = np.dtype([("step", np.int64), ("block", np.int32), ("thread", np.int32), ("phase", np.int32),
                         ("array", np.int32), ("element", np.int64), ("kind", np.int8), ("lineno", np.int32)])


class PhaseTrace:
    """What the recorded blocks did, phase by phase (``report.trace``)."""

    def __init__(self, launch: LaunchInfo, max_blocks: int | None, max_accesses: int | None,
                 max_values: int | None = DEFAULT_MAX_VALUES):
        self.launch = launch
        self.max_blocks = max_blocks
        self.max_accesses = max_accesses
        self.max_values = max_values
        self.values_kept = 0       # shared-array elements kept in ``shared_values``
        self.values_dropped = 0    # and left out (past ``max_values``)
        # one snapshot per shared array per barrier event: (array id, blocks, their phases, values per block)
        self._snapshots: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
        self._value_index: dict[tuple[int, int, int], tuple[np.ndarray, int]] | None = None
        self.arrays: dict[int, ArrayInfo] = {}
        self.recorded = 0          # lane-accesses kept
        self.dropped = 0           # lane-accesses left out (blocks past max_blocks, or past max_accesses)
        # each recorded access event as its columns (the engine's read-only arrays, kept, not copied); ``table``
        # builds the structured array when first asked
        self._chunks: list[tuple] = []
        self._barriers: list[tuple[int, np.ndarray, int]] = []   # (step, blocks, lineno)
        self._table: np.ndarray | None = None

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    @property
    def table(self) -> np.ndarray:
        """Every recorded lane-access as one structured array (fields of ``ACCESS_DTYPE``), by step."""
        if self._table is None or self._chunks:
            n = sum(len(c[1]) for c in self._chunks)
            table = np.empty(n, ACCESS_DTYPE)
            fields = ("step", "block", "thread", "phase", "array", "element", "kind", "lineno")
            for col, name in enumerate(fields):
                parts = [np.broadcast_to(c[col], len(c[1])) for c in self._chunks]
                if parts:
                    column = np.concatenate(parts)
                    table[name] = column % self.launch.threads_per_block if name == "thread" else column
            self._table = table if self._table is None else np.concatenate([self._table, table])
            self._chunks = []
        return self._table

    def blocks(self) -> list[int]:
        """Linear ids of the blocks with recorded accesses or barriers, ascending."""
        ids = set(np.unique(self.table["block"]).tolist())
        for _, blocks, _ in self._barriers:
            ids.update(blocks.tolist())
        return sorted(ids)

    def barriers(self, block: int) -> list[int]:
        """Source lines of the barriers ``block`` passed, in order (barrier k ends phase k)."""
        return [line for _, blocks, line in self._barriers if np.any(blocks == block)]

    def num_phases(self, block: int) -> int:
        """Phases of ``block``: one more than the barriers it passed."""
        return len(self.barriers(block)) + 1

    def accesses(self, block: int, phase: int | None = None) -> np.ndarray:
        """The recorded lane-accesses of ``block`` (in ``phase``, or all), in execution order."""
        t = self.table
        keep = t["block"] == block
        if phase is not None:
            keep &= t["phase"] == phase
        return t[keep]

    def events(self, block: int, phase: int) -> list[tuple[int, str, int, str]]:
        """(thread, array name, flat element, kind) for each lane-access of ``block`` in ``phase``."""
        rows = self.accesses(block, phase)
        name = {k: a.name for k, a in self.arrays.items()}
        return [(int(r["thread"]), name[int(r["array"])], int(r["element"]), KINDS[int(r["kind"])])
                for r in rows]

    def element_index(self, array_id: int, flat: int) -> tuple[int, ...]:
        """The index tuple of flat element ``flat`` of array ``array_id``."""
        shape = self.arrays[array_id].shape
        return tuple(int(i) for i in np.unravel_index(int(flat), shape)) if shape else ()

    def shared_values(self, block: int, array: int | str, phase: int) -> np.ndarray | None:
        """The contents of shared array ``array`` (id or name) in ``block`` as phase ``phase`` ended.

        Shaped as the kernel declared it. None when not recorded (not a recorded block, past the bound, or
        the array did not exist yet in that phase).
        """
        ids = [array] if isinstance(array, int) else [k for k, a in self.arrays.items() if a.name == array]
        if self._value_index is None:
            index = {}
            for aid, blocks, phases, values in self._snapshots:      # later snapshots win
                for row, (b, ph) in enumerate(zip(blocks.tolist(), phases.tolist())):
                    index[(b, aid, ph)] = (values, row)
            self._value_index = index
        for aid in ids:
            hit = self._value_index.get((int(block), int(aid), int(phase)))
            if hit is not None:
                values, row = hit
                return values[row].reshape(self.arrays[aid].shape or (1,))
        return None

    def written_before(self, block: int, array: int | str, phase: int) -> np.ndarray | None:
        """Per element of shared ``array`` in ``block``: written by some recorded access in phases 0..``phase``."""
        ids = [array] if isinstance(array, int) else [k for k, a in self.arrays.items() if a.name == array]
        ids = [i for i in ids if i in self.arrays]
        if not ids:
            return None
        info = self.arrays[ids[0]]
        t = self.table
        rows = t[(t["block"] == block) & np.isin(t["array"], ids) & (t["phase"] <= phase) & (t["kind"] != 0)]
        out = np.zeros(max(info.size, 1), bool)
        flat = rows["element"].astype(np.int64)
        out[flat[(flat >= 0) & (flat < out.size)]] = True
        return out.reshape(info.shape or (1,))

    def summary(self) -> str:
        kept = f"{self.recorded} lane-accesses in {len(self.blocks())} blocks"
        return kept + (f" ({self.dropped} not recorded)" if self.truncated else "")


class TraceObserver(Observer):
    """Records the phase trace; ``full=True`` lifts the bounds."""

    def __init__(self, full: bool = False, max_blocks: int = DEFAULT_MAX_BLOCKS,
                 max_accesses: int = DEFAULT_MAX_ACCESSES, max_values: int = DEFAULT_MAX_VALUES):
        self.full = full
        self.limits = (None, None, None) if full else (max_blocks, max_accesses, max_values)
        self.step = 0
        self._phase = np.zeros(0, np.int32)   # per block: barriers passed (the phase its next snapshot ends)

    def start(self, launch: LaunchInfo, arrays: list[ArrayInfo]) -> None:
        self.trace = PhaseTrace(launch, *self.limits)
        self._phase = np.zeros(0, np.int32)
        self.tpb = launch.threads_per_block
        for a in arrays:
            self.trace.arrays[a.id] = a

    def on_array(self, array: ArrayInfo) -> None:
        self.trace.arrays[array.id] = array

    def on_access(self, ev: AccessEvent) -> None:
        tr = self.trace
        tr.arrays.setdefault(ev.array.id, ev.array)
        step = self.step
        self.step += 1
        n = len(ev.gtid)
        keep = n
        if tr.max_blocks is not None:
            keep = int(np.searchsorted(ev.block, tr.max_blocks))       # blocks ascend with gtid
        if tr.max_accesses is not None:
            keep = max(0, min(keep, tr.max_accesses - tr.recorded))
        tr.dropped += n - keep
        if keep == 0:
            return
        # the thread column holds the global thread id until ``table`` reduces it; the event's arrays are kept
        # whole (the engine never writes them again), or their kept part copied (a view would keep all alive)
        cut = (lambda a: a) if keep == n else (lambda a: a[:keep].copy())
        tr._chunks.append((step, cut(ev.block), cut(ev.gtid), cut(ev.phase), ev.array.id, cut(ev.flat),
                           _KIND_CODE[ev.kind], ev.lineno))
        tr.recorded += keep

    def on_barrier(self, blocks: np.ndarray, lineno: int) -> None:
        tr = self.trace
        if tr.max_blocks is not None:
            blocks = blocks[blocks < tr.max_blocks]
        if len(blocks):
            blocks = np.asarray(blocks)
            tr._barriers.append((self.step, blocks.copy(), int(lineno)))
            self._phases_of(blocks)
            self._phase[blocks] += 1              # an event names each block once
        self.step += 1

    def _phases_of(self, blocks: np.ndarray) -> np.ndarray:
        """The phase each of ``blocks`` is in (the per-block table grows to the largest block seen)."""
        top = int(blocks.max()) + 1 if len(blocks) else 0
        if top > len(self._phase):
            grown = np.zeros(max(top, 2 * len(self._phase)), np.int32)
            grown[:len(self._phase)] = self._phase
            self._phase = grown
        return self._phase[blocks]

    def on_shared_values(self, blocks: np.ndarray, rows: np.ndarray, arrays: list, lineno: int | None) -> None:
        """Keep a copy of each recorded block's shared arrays as its current phase ends (before the barrier
        at ``lineno`` counts, or at the block's end when ``lineno`` is None)."""
        tr = self.trace
        if tr.max_blocks is not None:
            keep = blocks < tr.max_blocks
            blocks, rows = blocks[keep], rows[keep]
        if not len(blocks):
            return
        phases = self._phases_of(blocks)
        for info, data in arrays:
            tr.arrays.setdefault(info.id, info)
            size = data[0].size if len(data) else 0
            n = len(blocks)
            if tr.max_values is not None and size:
                n = max(0, min(n, (tr.max_values - tr.values_kept) // size))   # blocks in order, while room
            tr.values_dropped += (len(blocks) - n) * size
            if n:
                tr._snapshots.append((info.id, blocks[:n].copy(), phases[:n].copy(), data[rows[:n]]))  # a copy
                tr._value_index = None
                tr.values_kept += n * size

    def finish(self, report) -> None:
        report.trace = self.trace
