"""What the visualisers draw of one launch, per source access and per element.

Traffic per source access ("line 12, load of `a`: 4 requests, 16 sectors, ideal 4") comes from gpusim's
``report.counts.sites``: exact for the whole launch. The phase trace is read only for what needs single
requests or threads: the worst shared-memory request's banks, who touched each element, barrier phases. It
is bounded (the first 64 blocks by default), so those cover the recorded blocks.

Nothing here imports Textual, and nothing raises on a report without counts or a trace: every function
returns ``None`` (or an empty table) for data that was not recorded.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

KINDS = ("ld", "st", "atom", "red")
KIND_WORDS = {"ld": "load", "st": "store", "atom": "atomic", "red": "atomic (no result)"}


@functools.lru_cache(maxsize=32)
def _source(filename: str, mtime: float) -> tuple[str, ...]:
    try:
        return tuple(Path(filename).read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return ()


def source_line(filename: str, lineno: int) -> str:
    """The stripped text of ``filename``'s line ``lineno`` (1-based), or "" when it cannot be read."""
    try:
        mtime = Path(filename).stat().st_mtime
    except OSError:
        return ""
    lines = _source(filename, mtime)
    return lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""


def trace_of(report) -> object | None:
    """The report's phase trace, or None when it was not recorded (or has no table)."""
    trace = getattr(report, "trace", None)
    return trace if trace is not None and hasattr(trace, "table") else None


@dataclass(frozen=True)
class Step:
    """One recorded source access executed by a group of lanes together (a slice of the trace table)."""

    rows: np.ndarray
    array: object         # gpusim ArrayInfo
    kind: str
    lineno: int


def steps(report) -> Iterator[Step]:
    """The recorded accesses of ``report``'s trace, one ``Step`` per engine event, in execution order."""
    trace = trace_of(report)
    if trace is None:
        return
    table = trace.table
    if len(table) == 0:
        return
    cut = np.flatnonzero(table["step"][1:] != table["step"][:-1]) + 1
    for rows in np.split(table, cut):
        info = trace.arrays.get(int(rows["array"][0]))
        if info is None:
            continue
        yield Step(rows, info, KINDS[int(rows["kind"][0])], int(rows["lineno"][0]))


@dataclass(frozen=True)
class LineRow:
    """What one source access (line, array, kind) cost over the whole launch: one of gpusim's access sites."""

    lineno: int
    array: str
    space: str
    kind: str
    code: str
    requests: int = 0
    sectors: int = 0            # global: 32-byte sectors moved
    ideal_sectors: int = 0      # global: what perfect coalescing would move
    used: float = 1.0           # global: gpusim's efficiency, bytes requested ÷ bytes moved
    wavefronts: int = 0         # shared
    conflicts: int = 0          # shared

    @property
    def efficiency(self) -> float:
        """Global: ideal ÷ moved sectors (1.0 is perfect); shared: requests ÷ wavefronts."""
        if self.space == "shared":
            return (self.wavefronts - self.conflicts) / self.wavefronts if self.wavefronts else 1.0
        return self.ideal_sectors / self.sectors if self.sectors else 1.0


def by_line(report, space: str) -> list[LineRow] | None:
    """Per source access of ``space`` ("global" or "shared"), in line order, from ``report.counts.sites``.

    Exact for the whole launch (gpusim counts every request, not only the traced blocks). None when the
    launch recorded no counts.
    """
    counts = getattr(report, "counts", None)
    if counts is None:
        return None
    filename = report.launch.filename
    rows = []
    for site in getattr(counts, "sites", None) or []:
        if site.get("space") != space:
            continue
        kind, line = str(site["kind"]), int(site["line"])
        rows.append(LineRow(line, str(site["array"]), space, kind, source_line(filename, line),
                            requests=int(site.get("requests", 0)), sectors=int(site.get("sectors", 0)),
                            ideal_sectors=int(site.get("ideal_sectors", 0)),
                            used=float(site.get("efficiency", 1.0)), wavefronts=int(site.get("wavefronts", 0)),
                            conflicts=int(site.get("bank_conflicts", 0))))
    rows.sort(key=lambda r: (r.lineno, r.array, KINDS.index(r.kind) if r.kind in KINDS else len(KINDS)))
    return rows


@dataclass(frozen=True)
class BankRequest:
    """One warp's shared-memory request: which words each of the 32 banks had to serve."""

    lineno: int
    array: str
    kind: str
    block: int
    warp: int                          # warp number inside the block
    words_per_bank: tuple[int, ...]    # distinct 4-byte words touched in each bank
    lanes_per_bank: tuple[tuple[int, ...], ...]   # which lanes (0-31) touched each bank
    itemsize: int
    code: str
    wavefronts: int = 1                # what the request costs, as gpusim's bank model counts it
    conflicts: int = 0


def worst_bank_request(report) -> BankRequest | None:
    """The recorded shared-memory request whose busiest bank serves the most distinct words, as gpusim's bank
    model reports it (``LaunchReport.worst_bank_request``).

    None when nothing was recorded (no trace, or no shared load or store).
    """
    find = getattr(report, "worst_bank_request", None)
    req = find() if callable(find) and trace_of(report) is not None else None
    if req is None:
        return None
    return BankRequest(req.lineno, req.array, req.kind, req.block, req.warp, req.words_per_bank, req.lanes_per_bank,
                       req.itemsize, source_line(report.launch.filename, req.lineno), req.wavefronts, req.conflicts)


@dataclass(frozen=True)
class ElementMap:
    """Who touched each element of one array: counts (whole launch) and example threads (recorded blocks)."""

    name: str
    space: str
    shape: tuple[int, ...]           # shared: (blocks, *shape)
    reads: np.ndarray | None         # per element; None when counts were not recorded
    writes: np.ndarray | None
    first_reader: np.ndarray | None  # global linear thread id of the first recorded reader, -1 if none
    first_writer: np.ndarray | None
    partial: bool


def element_map(report, name: str) -> ElementMap | None:
    """Reads, writes and first reader/writer thread of every element of array ``name`` (global or shared).

    None when the launch touched no such array.
    """
    infos = [a for a in getattr(report, "arrays", []) if a.name == name and a.space in ("global", "shared", "const")]
    if not infos:
        return None
    info = infos[0]
    launch = report.launch
    shape = (launch.num_blocks, *info.shape) if info.space == "shared" else tuple(info.shape)
    reads = writes = None
    counts = getattr(report, "counts", None)
    if counts is not None:
        try:
            reads = np.asarray(counts.element_reads(name)).reshape(shape)
            writes = np.asarray(counts.element_writes(name)).reshape(shape)
        except (KeyError, ValueError, AttributeError):
            reads = writes = None
    first_reader = first_writer = None
    trace = trace_of(report)
    partial = False
    if trace is not None:
        size = int(np.prod(shape, dtype=np.int64))
        first_reader = np.full(size, -1, np.int64)
        first_writer = np.full(size, -1, np.int64)
        ids = [k for k, a in trace.arrays.items() if a.name == name and a.space == info.space]
        table = trace.table
        rows = table[np.isin(table["array"], ids)] if ids else table[:0]
        flat = rows["element"].astype(np.int64)
        if info.space == "shared":
            flat = rows["block"].astype(np.int64) * info.size + flat
        gtid = rows["block"].astype(np.int64) * launch.threads_per_block + rows["thread"].astype(np.int64)
        for target, kinds in ((first_reader, (0, 2, 3)), (first_writer, (1, 2, 3))):
            pick = np.isin(rows["kind"], kinds)
            f, g = flat[pick][::-1], gtid[pick][::-1]    # reversed: the first access is assigned last
            ok = (f >= 0) & (f < size)
            target[f[ok]] = g[ok]
        first_reader = first_reader.reshape(shape)
        first_writer = first_writer.reshape(shape)
        partial = bool(getattr(trace, "truncated", False))
    return ElementMap(name, info.space, shape, reads, writes, first_reader, first_writer, partial)


@dataclass(frozen=True)
class Accessors:
    """The recorded threads that read and wrote one element: the first ``limit`` of each, and how many."""

    readers: list[str]           # "block (x,y,z) thread (x,y,z)", in execution order
    writers: list[str]
    reader_count: int            # distinct threads in all
    writer_count: int
    accesses: int                # lane-accesses recorded


def accessors(report, name: str, flat_index: tuple[int, ...], limit: int = 8) -> Accessors:
    """Recorded readers and writers of one element of array ``name``, at most ``limit`` of each by name.

    ``flat_index`` is the element's index tuple (shared arrays: block first).
    """
    trace = trace_of(report)
    none = Accessors([], [], 0, 0, 0)
    if trace is None:
        return none
    launch = report.launch
    infos = [a for a in trace.arrays.values() if a.name == name]
    if not infos:
        return none
    info = infos[0]
    ids = [k for k, a in trace.arrays.items() if a.name == name and a.space == info.space]
    table = trace.table
    rows = table[np.isin(table["array"], ids)]
    if info.space == "shared":
        block, rest = flat_index[0], flat_index[1:]
        rows = rows[rows["block"] == block]
    else:
        rest = flat_index
    flat = int(np.ravel_multi_index(rest, info.shape)) if info.shape else 0
    rows = rows[rows["element"] == flat]
    gtid = rows["block"].astype(np.int64) * launch.threads_per_block + rows["thread"].astype(np.int64)
    out = []
    for kinds in ((0, 2, 3), (1, 2, 3)):
        pick = np.isin(rows["kind"], kinds)
        ids_in_order = list(dict.fromkeys(gtid[pick].tolist()))
        tpb = launch.threads_per_block
        out.append(([_who(launch, g // tpb, g % tpb) for g in ids_in_order[:limit]], len(ids_in_order)))
    (readers, n_readers), (writers, n_writers) = out
    return Accessors(readers, writers, n_readers, n_writers, len(rows))


def _who(launch, block: int, thread: int) -> str:
    bx, by, bz = launch.block_xyz(block)
    tx, ty, tz = launch.thread_xyz(thread)
    b = f"({bx}, {by})" if launch.grid[2] == 1 else f"({bx}, {by}, {bz})"
    t = f"({tx}, {ty})" if launch.block[2] == 1 else f"({tx}, {ty}, {tz})"
    if launch.grid[1] == 1 and launch.grid[2] == 1:
        b = str(bx)
    if launch.block[1] == 1 and launch.block[2] == 1:
        t = str(tx)
    return f"block {b} thread {t}"


def thread_label(launch, gtid: int) -> str:
    """A global linear thread id as the learner knows it: "b1 t5" or "b(0,1) t(2,3)"."""
    tpb = launch.threads_per_block
    block, thread = divmod(int(gtid), tpb)
    return _who(launch, block, thread).replace("block ", "b").replace(" thread ", " t")


@dataclass(frozen=True)
class PhaseCell:
    writes: int
    reads: int
    writer: int          # thread (linear, in the block) of the last write in the phase, -1 if none


@dataclass(frozen=True)
class PhaseView:
    """One block's accesses to one array during one barrier phase."""

    block: int
    phase: int
    phases: int
    array: str
    shape: tuple[int, ...]
    writes: np.ndarray        # per element: lane-writes in this phase
    reads: np.ndarray
    writer: np.ndarray        # last writer thread (linear in block) or -1
    starts_after: int | None  # source line of the barrier that opened this phase (None: kernel start)
    ends_at: int | None       # source line of the barrier that closes it (None: kernel end)
    other: dict[str, tuple[int, int]]   # other arrays touched in this phase: name -> (reads, writes)


def phase_arrays(report) -> list[str]:
    """Arrays worth scrubbing: shared arrays first, then global ones, as the kernel names them."""
    trace = trace_of(report)
    if trace is None:
        return []
    seen: dict[str, str] = {}
    for a in trace.arrays.values():
        if a.space in ("shared", "global") and a.name not in seen:
            seen[a.name] = a.space
    return sorted(seen, key=lambda n: (seen[n] != "shared", n))


def phase_view(report, block: int, phase: int, array: str) -> PhaseView | None:
    """What ``block`` did to ``array`` between its barriers ``phase`` and ``phase + 1``; None if not recorded."""
    trace = trace_of(report)
    if trace is None:
        return None
    infos = {k: a for k, a in trace.arrays.items() if a.name == array}
    if not infos:
        return None
    info = next(iter(infos.values()))
    phases = trace.num_phases(block)
    phase = max(0, min(phase, phases - 1))
    rows = trace.accesses(block, phase)
    mine = rows[np.isin(rows["array"], list(infos))]
    size = max(info.size, 1)
    flat = mine["element"].astype(np.int64)
    is_write = np.isin(mine["kind"], (1, 2, 3))
    is_read = np.isin(mine["kind"], (0, 2, 3))
    writes = np.bincount(flat[is_write], minlength=size)[:size]
    reads = np.bincount(flat[is_read], minlength=size)[:size]
    writer = np.full(size, -1, np.int64)
    writer[flat[is_write]] = mine["thread"][is_write]      # later rows overwrite: the last writer wins
    barriers = trace.barriers(block)
    other: dict[str, tuple[int, int]] = {}
    rest = rows[~np.isin(rows["array"], list(infos))]
    for aid in np.unique(rest["array"]).tolist():
        sel = rest[rest["array"] == aid]
        name = trace.arrays[aid].name if aid in trace.arrays else f"#{aid}"
        r = int(np.isin(sel["kind"], (0, 2, 3)).sum())
        w = int(np.isin(sel["kind"], (1, 2, 3)).sum())
        pr, pw = other.get(name, (0, 0))
        other[name] = (pr + r, pw + w)
    shape = tuple(info.shape) or (1,)
    return PhaseView(block, phase, phases, array, shape, writes.reshape(shape), reads.reshape(shape),
                     writer.reshape(shape), barriers[phase - 1] if phase > 0 else None,
                     barriers[phase] if phase < len(barriers) else None, other)


def phase_slot(report, block: int, phase: int, array: str, flat: int) -> tuple[list[int], list[int]]:
    """(readers, writers) of element ``flat`` of ``array`` in ``block`` during ``phase``: thread numbers
    (linear, in the block), distinct, in execution order."""
    trace = trace_of(report)
    if trace is None:
        return [], []
    ids = [k for k, a in trace.arrays.items() if a.name == array]
    rows = trace.accesses(block, phase)
    rows = rows[np.isin(rows["array"], ids) & (rows["element"] == flat)]
    threads = rows["thread"].astype(np.int64)
    readers = list(dict.fromkeys(threads[np.isin(rows["kind"], (0, 2, 3))].tolist()))
    writers = list(dict.fromkeys(threads[np.isin(rows["kind"], (1, 2, 3))].tolist()))
    return readers, writers


def phase_values(report, block: int, phase: int, array: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(contents of shared ``array`` in ``block`` as ``phase`` ended, which of them some thread had written by
    then); None when the trace did not keep them."""
    trace = trace_of(report)
    getter = getattr(trace, "shared_values", None)
    if getter is None:
        return None
    values = getter(block, array, phase)
    written = trace.written_before(block, array, phase)
    if values is None or written is None:
        return None
    return values, written
