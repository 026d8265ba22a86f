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
        self._values: dict[tuple[int, int], dict[int, np.ndarray]] = {}   # (block, array id) -> {phase: values}
        self.arrays: dict[int, ArrayInfo] = {}
        self.recorded = 0          # lane-accesses kept
        self.dropped = 0           # lane-accesses left out (blocks past max_blocks, or past max_accesses)
        self._chunks: list[np.ndarray] = []
        self._barriers: list[tuple[int, np.ndarray, int]] = []   # (step, blocks, lineno)
        self._table: np.ndarray | None = None

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    @property
    def table(self) -> np.ndarray:
        """Every recorded lane-access as one structured array (fields of ``ACCESS_DTYPE``), by step."""
        if self._table is None:
            self._table = np.concatenate(self._chunks) if self._chunks else np.zeros(0, ACCESS_DTYPE)
            self._chunks = [self._table]
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
        for aid in ids:
            per_phase = self._values.get((int(block), int(aid)))
            if per_phase is not None and phase in per_phase:
                info = self.arrays[aid]
                return per_phase[phase].reshape(info.shape or (1,))
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
        self._phase: dict[int, int] = {}      # block -> barriers passed (the phase its next snapshot ends)

    def start(self, launch: LaunchInfo, arrays: list[ArrayInfo]) -> None:
        self.trace = PhaseTrace(launch, *self.limits)
        self._phase = {}
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
        rec = np.empty(keep, ACCESS_DTYPE)
        rec["step"] = step
        rec["block"] = ev.block[:keep]
        rec["thread"] = ev.gtid[:keep] % self.tpb
        rec["phase"] = ev.phase[:keep]
        rec["array"] = ev.array.id
        rec["element"] = ev.flat[:keep]
        rec["kind"] = _KIND_CODE[ev.kind]
        rec["lineno"] = ev.lineno
        tr._chunks.append(rec)
        tr._table = None
        tr.recorded += keep

    def on_barrier(self, blocks: np.ndarray, lineno: int) -> None:
        tr = self.trace
        if tr.max_blocks is not None:
            blocks = blocks[blocks < tr.max_blocks]
        if len(blocks):
            tr._barriers.append((self.step, np.asarray(blocks).copy(), int(lineno)))
            for b in blocks.tolist():
                self._phase[b] = self._phase.get(b, 0) + 1
        self.step += 1

    def on_shared_values(self, blocks: np.ndarray, rows: np.ndarray, arrays: list, lineno: int | None) -> None:
        """Keep a copy of each recorded block's shared arrays as its current phase ends (before the barrier
        at ``lineno`` counts, or at the block's end when ``lineno`` is None)."""
        tr = self.trace
        keep = np.ones(len(blocks), bool) if tr.max_blocks is None else blocks < tr.max_blocks
        for block, row in zip(blocks[keep].tolist(), rows[keep].tolist()):
            phase = self._phase.get(block, 0)
            for info, data in arrays:
                tr.arrays.setdefault(info.id, info)
                values = data[row]
                if tr.max_values is not None and tr.values_kept + values.size > tr.max_values:
                    tr.values_dropped += values.size
                    continue
                tr._values.setdefault((block, info.id), {})[phase] = values.copy()
                tr.values_kept += values.size

    def finish(self, report) -> None:
        report.trace = self.trace
