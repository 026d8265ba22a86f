"""Running a compiled kernel: the state arrays its functions take, the launch over every chunk, and the
``LaunchReport`` rebuilt from what the compiled code counted (``results.py``).
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from ...device import WARP_SIZE
from ...ir import nodes as N
from ...observe.counts import DISTINCT_LIMIT
from ...observe.trace import DEFAULT_MAX_ACCESSES, DEFAULT_MAX_BLOCKS
from . import cache
from .codegen import KernelGen
from .external import descriptor
from .layout import (
    DESC_NAMES,
    F_COLS,
    G_B0,
    G_B1,
    G_BDX,
    G_BDY,
    G_BDZ,
    G_GDX,
    G_GDY,
    G_GDZ,
    G_MAX_STEPS,
    G_NBLOCKS,
    G_NLINES,
    G_NTHREADS,
    G_NW,
    G_PER_CHUNK,
    G_SHARED_MEM,
    G_SIZE,
    G_T,
    G_TMAX_BLOCKS,
    G_TMAX_ROWS,
    G_TRACE,
    I_DISTINCT,
    I_SIZE,
    P_COLS,
    R_COLS,
    S_COLS,
    SLOT_ARRAYS,
    T_COLS,
)
from .rt_rounds import RW_INIT
from .rtlib import MAX_PAIRS
from .support import check_module
from .values import NotCompiled


@dataclass
class CompiledKernel:
    """One specialisation of a kernel, generated and loaded (numba compiles it at its first call)."""

    name: str
    module: N.Module
    gen: KernelGen
    text: str
    key: str
    run: Any
    instrument: bool
    trace: bool
    compiled: bool = False      # the machine code is loaded (this process has run it once)
    #: per launch shape (``_shape``): what a thread cost in the last warm launch on one worker, the same of
    #: the last split one, and one-worker launches since then
    timings: dict = field(default_factory=dict)

    @property
    def warm(self) -> bool:
        return self.compiled or cache.is_warm(self.key)


_kernels: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.RLock()


def generate(module: N.Module, alias: tuple[int, ...], instrument: bool, trace: bool) -> CompiledKernel:
    """The compiled kernel of ``module`` for this aliasing of its array arguments (``NotCompiled`` if it
    uses a construct this back end does not translate). Cached per module object."""
    key = (alias, bool(instrument), bool(trace))
    with _lock:
        per = _kernels.get(module)
        if per is None:
            per = _kernels[module] = {}
        ck = per.get(key)
        if ck is None:
            check_module(module)
            try:
                gen, text = _generate(module, alias, instrument, trace)
            except RecursionError:
                raise NotCompiled("the kernel is nested too deeply to compile") from None
            k = cache.key_of(text)
            try:
                mod = cache.load(k, text)
            except SyntaxError as e:   # a gpusim bug: say so, and let the lanes back end run the kernel
                raise NotCompiled(f"gpusim generated code it cannot compile for this kernel ({e.msg}, a gpusim "
                                  "bug: please report it)") from None
            ck = per[key] = CompiledKernel(module.entry.py_name, module, gen, text, k, mod.run, instrument, trace)
    return ck


def _generate(module: N.Module, alias: tuple[int, ...], instrument: bool, trace: bool) -> tuple[KernelGen, str]:
    """The generator and text of a kernel. A global array's accesses learn that it has race records (it is
    written somewhere) only once a write of it is generated: a read generated before that would not stage its
    elements, while the run keeps the array's read records and replays the read from unstaged (garbage) slots,
    out of bounds. So an array both read and written is generated again, knowing from the start."""
    gen = KernelGen(module, alias, instrument, trace)
    text = gen.generate()
    late = {i: set(slot.kinds) for i, slot in gen.param_slots.items()
            if "ld" in slot.kinds and (slot.writes or slot.atomics)}
    if not late:
        return gen, text
    gen = KernelGen(module, alias, instrument, trace)
    for i, kinds in late.items():
        gen.param_slots[i].kinds |= kinds
    return gen, gen.generate()


_GEOMETRY: dict[tuple, dict[str, np.ndarray]] = {}


def _geometry(Nmax: int, T: int, block: tuple[int, int, int]) -> dict[str, np.ndarray]:
    """Per lane of a chunk: thread index, lane id, ... (read only by the compiled code; kept for the last few
    geometries, so repeated launches of one shape do not rebuild them)."""
    key = (Nmax, T, tuple(block))
    geo = _GEOMETRY.get(key)
    if geo is None:
        if len(_GEOMETRY) >= 8:
            _GEOMETRY.clear()
        geo = _GEOMETRY[key] = _geometry_arrays(Nmax, T, block)
    return dict(geo)


def _geometry_arrays(Nmax: int, T: int, block: tuple[int, int, int]) -> dict[str, np.ndarray]:
    lane = np.arange(Nmax, dtype=np.int64)
    t = lane % T
    bx, by, _ = block
    laneid = (t % WARP_SIZE).astype(np.int32)
    return {"tx_": (t % bx).astype(np.int32), "ty_": ((t // bx) % by).astype(np.int32),
            "tz_": (t // (bx * by)).astype(np.int32), "ln_": laneid,
            "lml_": ((np.uint64(1) << laneid.astype(np.uint64)) - np.uint64(1)).astype(np.uint32),
            "lb_": lane // T, "ALL_": np.ones(Nmax, np.bool_)}


def threads() -> int:
    """Worker threads for one launch: ``GPUSIM_THREADS``, else every core."""
    env = os.environ.get("GPUSIM_THREADS")
    if env:
        return max(1, int(env))
    return max(1, os.cpu_count() or 1)


def build_state(ck: CompiledKernel, info, args: list, addresses: dict[int, int], max_steps: int,
                chunk_lanes: int, blocks: tuple[int, int]) -> dict[str, Any]:
    """Every array the compiled code of ``ck`` takes, for running blocks ``[blocks[0], blocks[1])``."""
    gen = ck.gen
    T = info.threads_per_block
    NW = info.warps_per_block
    nblocks = info.num_blocks
    per_chunk = max(1, chunk_lanes // T)
    Nmax = min(per_chunk, nblocks) * T
    nth = info.num_threads
    nsites = max(1, len(gen.sites))
    nslots = max(1, len(gen.slots))
    instrument, trace = ck.instrument, ck.trace
    tmb, tmr = DEFAULT_MAX_BLOCKS, DEFAULT_MAX_ACCESSES
    G = np.zeros(G_SIZE, np.int64)
    G[G_T], G[G_NW], G[G_NBLOCKS], G[G_PER_CHUNK] = T, NW, nblocks, per_chunk
    G[G_BDX], G[G_BDY], G[G_BDZ] = info.block
    G[G_GDX], G[G_GDY], G[G_GDZ] = info.grid
    G[G_MAX_STEPS], G[G_NTHREADS], G[G_SHARED_MEM] = max_steps, nth, info.shared_mem
    G[G_TMAX_BLOCKS], G[G_TMAX_ROWS], G[G_TRACE] = tmb, tmr, int(trace)
    G[G_NLINES] = gen.nlines
    G[G_B0], G[G_B1] = blocks
    I = np.zeros(I_SIZE, np.int64)
    I[I_DISTINCT] = 1 if (instrument and nth <= DISTINCT_LIMIT) else 0
    nkeys = max(1, len(gen.keys))
    nlines = gen.nlines
    nrk = max(1, len(gen.race_keys))
    region_sites = max(1, gen.max_region_sites)
    st: dict[str, Any] = {
        "G": G, "I": I, "BT": np.full(nblocks, -1, np.int64), "WBT": np.full(nblocks * NW, -1, np.int64),
        "PH": np.zeros(nblocks, np.int64),
        # a row per fault key; race keys are (site, other line) pairs, counted separately
        "FLOG": np.zeros((nkeys + nrk * nlines + 16, F_COLS), np.int64), "FSEEN": np.zeros(nkeys, np.bool_),
        "FCNT": np.zeros(nkeys, np.int64), "RSEEN": np.zeros(nrk * nlines, np.bool_),
        "RCNT": np.zeros(nrk * nlines, np.int64),
        "SS": np.zeros((nsites, T_COLS), np.int64), "SCR": np.zeros(4 * WARP_SIZE, np.int64),
        "FL": np.zeros((6, 3), np.int64), "FLT": np.zeros((6, 3), np.bool_),
        "RC": np.zeros(region_sites, np.int64), "RS": np.zeros((region_sites, S_COLS), np.int64),
        "BASE": np.zeros(nslots, np.int64), "SEG0": np.zeros(nslots, np.int64), "SHB": np.zeros(nslots, np.int64),
        "REG": np.zeros(nslots, np.bool_), "ALOG": np.zeros(nslots, np.int64),
        "TR": np.zeros((tmr if trace else 1, R_COLS), np.int64),
        "BLOG": np.zeros((16, 4), np.int64), "BBLK": np.zeros(64, np.int64),
    }
    staged = min(Nmax, DEFAULT_MAX_BLOCKS * T) * region_sites if trace and blocks[0] < tmb else 1
    st["TS"] = np.empty((max(1, staged), R_COLS), np.int64)
    st["PK"] = np.empty((2 * MAX_PAIRS + 2 if I[I_DISTINCT] else 1, 2), np.int64)
    st.update(_geometry(Nmax, T, info.block))
    SP = np.zeros((nsites, P_COLS), np.int64)
    for sid, row in gen.site_rows.items():
        SP[sid] = row
    st["SP"] = SP
    st["EV"] = np.empty((region_sites, Nmax), np.int64)
    st["EL"] = np.empty((region_sites, Nmax), np.int64)
    nrw = nblocks * NW if instrument else 0    # the latency rounds (``rt_rounds``)
    st["RW"] = np.empty((nrw, len(RW_INIT)), np.int64)
    st["RW"][:] = RW_INIT
    st["RB"] = np.zeros(nblocks if instrument else 0, np.int64)
    st["RSS"] = np.empty((max(1, len(gen.round_sites)) * nrw, 2), np.int64)
    st["RSS"][:] = (-1, 0)
    st["Z1"] = np.zeros(0, np.int64)
    st["Z2"] = np.zeros((0, 5), np.int64)
    st["ZB"] = np.zeros(0, np.bool_)
    st["ZI"] = np.zeros(0, np.int32)
    for slot in gen.slots:
        k = slot.id
        if slot.kind == "param":
            arr = args[slot.params[0]]
            st[slot.data] = arr
            size = arr.size
            st["BASE"][k] = addresses[slot.params[0]]
            st["SEG0"][k] = addresses[slot.params[0]] // 64
        elif slot.kind == "shared":
            size = slot.static_size
            st[slot.data] = np.zeros(per_chunk * size, slot.dtype.dtype)
        elif slot.kind == "local":
            size = slot.static_size
            st[slot.data] = np.zeros(Nmax * size, slot.dtype.dtype)
            st[slot.arr("lw")] = np.zeros(Nmax * size, np.bool_)
        else:
            size = slot.static_size
            st[slot.data] = np.ascontiguousarray(slot.const_data).reshape(-1)
        if slot.kind in ("param", "shared"):
            rows = size if slot.kind == "param" else per_chunk * size
            for what, need, cols in (("w", slot.need_w, 3), ("a", slot.need_a, 5), ("r", slot.need_r, 5)):
                if slot.kind == "param" and need:   # tens of bytes per element: cleared by the thread that runs it
                    st[slot.arr(what)] = rec = np.empty((rows, cols), np.int64)
                    st.setdefault("dirty_", []).append(rec)
                else:
                    st[slot.arr(what)] = np.zeros((rows if need else 0, cols), np.int64)
        # counts only where the array's sites read (loads, atomics) or write (stores, atomics)
        reads, writes = instrument and bool(slot.kinds - {"st"}), instrument and bool(slot.kinds - {"ld"})
        st[slot.arr("cr")] = np.zeros(nth if reads else 0, np.int32)
        st[slot.arr("cw")] = np.zeros(nth if writes else 0, np.int32)
        if slot.space != "local":
            elems = nblocks * size if slot.space == "shared" else size
            st[slot.arr("er")] = np.zeros(elems if reads else 0, np.int32)
            st[slot.arr("ew")] = np.zeros(elems if writes else 0, np.int32)
        if slot.space in ("global", "const"):
            if slot.space == "global":
                base = addresses[slot.params[0]]
                nseg = (base + max(size * slot.itemsize, 1) - 1) // 64 - base // 64 + 1
            else:
                nseg = (max(size * slot.itemsize, 1) - 1) // 64 + 1
            st[slot.arr("sr")] = np.zeros(nseg if instrument else 0, np.bool_)
            st[slot.arr("sw")] = np.zeros(nseg if instrument else 0, np.bool_)
            st[slot.arr("rt")] = np.zeros(nseg if instrument else 0, np.int64)
            if slot.space == "global" and slot.atomics and instrument:
                st[slot.arr("rc")] = np.zeros(max(size, 1), np.int64)
    for i, name in gen.scalar_params:
        st[name] = args[i]
    st["gw_"] = np.zeros(Nmax, np.int64)
    st["present_"] = np.zeros(per_chunk, np.bool_)
    return st


#: arrays every worker of a parallel launch shares: the kernel's data, the per-block and per-thread records
#: (each block and thread belongs to one worker: the latency rounds' per-warp and per-block state too) and the
#: DRAM segment maps (only ever set)
SHARED_BY_WORKERS = ("BT", "WBT", "PH", "RW", "RB", "RSS", "tx_", "ty_", "tz_", "ln_", "lml_", "lb_", "ALL_", "SP",
                     "BASE", "SEG0")


@njit(cache=True, nogil=True)
def _clear(a):
    for i in range(a.size):
        a[i] = 0


def _run(ck: CompiledKernel, st: dict) -> None:
    gen = ck.gen
    dirty = st.pop("dirty_", ())
    if dirty:
        t0 = time.perf_counter()
        for a in dirty:
            _clear(a.reshape(-1))
        nbytes = sum(a.nbytes for a in dirty)
        if nbytes >= 1 << 20:   # enough to time
            st["clear_rate"] = (time.perf_counter() - t0) / nbytes
    slot_arrays = {}
    for slot in gen.slots:
        for what in SLOT_ARRAYS:
            a = st.get(slot.arr(what))
            if a is None:
                a = st["Z2"] if what in ("w", "a", "r") else st["ZI"] if what in ("cr", "cw", "er", "ew") else \
                    st["Z1"] if what in ("rt", "rc") else st["ZB"]
            slot_arrays[(slot.id, what)] = a
    st["DESC"] = descriptor({name: st[name] for name in DESC_NAMES}, len(gen.slots), slot_arrays)
    call = [st[name] for name in gen.abi] + [st["TR"], st["BLOG"], st["BBLK"]]
    with np.errstate(all="ignore"):
        st["TR"], st["BLOG"], st["BBLK"] = ck.run(*call)


def execute(ck: CompiledKernel, info, args: list, addresses: dict[int, int], max_steps: int,
            chunk_lanes: int, workers: int | None = None) -> dict[str, Any]:
    """Run ``ck`` over the launch ``info`` with ``args`` (NumPy arrays and scalars, updated in place);
    return every array the compiled code filled.

    With several workers, each runs a range of whole chunks on its own threads' state (``parallel.py``);
    the result is the single-threaded one, or the launch runs again on one thread when the workers'
    chunks touched one element with a write (a race between blocks, reported as one thread finds it) or one
    of them stopped the launch."""
    from .parallel import run_parallel

    T = info.threads_per_block
    per_chunk = max(1, chunk_lanes // T)
    nchunks = -(-info.num_blocks // per_chunk)
    workers = min(threads() if workers is None else workers, nchunks)
    shape = _shape(info, args)
    if workers > 1 and not _worth_splitting(ck, shape, info, args, workers):
        workers = 1
    t0 = time.perf_counter()
    st = None
    if workers > 1:
        st = run_parallel(ck, info, args, addresses, max_steps, chunk_lanes, workers, per_chunk, nchunks)
    if st is None:
        st = build_state(ck, info, args, addresses, max_steps, chunk_lanes, (0, info.num_blocks))
        _run(ck, st)
        st["workers"] = 1
    st["run_seconds"] = time.perf_counter() - t0
    if ck.compiled:
        if len(ck.timings) > 64 and shape not in ck.timings:
            ck.timings.clear()
        t = ck.timings.setdefault(shape, [None, None, 0])
        if "clear_rate" in st:
            global _byte_seconds
            _byte_seconds = 2 * st["clear_rate"]      # cleared, then read back
        per_lane = st["run_seconds"] / info.num_threads
        if workers > 1:
            t[1], t[2] = per_lane, 0
        else:
            t[0] = per_lane
            t[2] += 1
            if t[2] >= RETRY_SPLIT:   # the machine may have a free core again
                t[1] = None
    if not ck.compiled:
        ck.compiled = True
        cache.mark_warm(ck.key)
    return st


#: "auto": split a launch over workers where that pays (``_worth_splitting``); "always": wherever it has two
#: chunks (the tests of the parallel path)
SPLIT = "auto"
#: what a byte of a worker's records of the global arrays costs to clear and to read back until a launch has
#: measured it (about 2 GB/s: a loaded two-core machine), and a worker's fixed cost (its state, its thread)
BYTE_SECONDS = 0.5e-9
WORKER_SECONDS = 1e-3
#: the same, measured: twice what clearing the records of the last launch cost per byte (None: not yet)
_byte_seconds: float | None = None
#: one-worker launches after which a split that was slower is tried again
RETRY_SPLIT = 32


def _shape(info, args: list) -> tuple:
    """What a launch's cost per thread depends on besides the kernel: its geometry and its arrays' shapes."""
    return (tuple(info.grid), tuple(info.block), tuple(a.shape for a in args if isinstance(a, np.ndarray)))


def _worth_splitting(ck: CompiledKernel, shape: tuple, info, args: list, workers: int) -> bool:
    """Is the launch faster on ``workers`` threads than on one? Each worker keeps its own race records of every
    tracked global array (tens of bytes per element), which one thread must not share with another, and the
    check that no two touched one element reads them all back; the arrays the kernel writes are copied first
    (to run again on one thread if they did). A light kernel over large arrays (a map: a few nanoseconds of
    work per element, 24 bytes of records) pays more for that than a second core saves; a kernel with loops
    gains nearly half. The work is what one thread of this kernel cost in its last warm one-worker launch of
    this ``shape`` (none yet: one worker, which measures it). Where a split launch was measured too, the faster
    of the two decides: on a machine whose other cores are busy, a second thread gains nothing and costs its
    records."""
    if SPLIT == "always":
        return True
    one, split, _ = ck.timings.get(shape, (None, None, 0))
    if one is None:
        return False
    if split is not None:
        return split < one
    records = 0
    for slot in ck.gen.slots:
        if slot.kind != "param":
            continue
        arr = args[slot.params[0]]
        records += arr.size * 8 * (3 * slot.need_w + 5 * slot.need_a + 5 * slot.need_r)
        if slot.writes or slot.atomics:
            records += arr.nbytes
    saved = one * info.num_threads * (1 - 1 / workers)
    per_byte = BYTE_SECONDS if _byte_seconds is None else _byte_seconds
    return saved > records * per_byte + (workers - 1) * WORKER_SECONDS


def check_supported(module: N.Module) -> str | None:
    """Why ``module`` cannot run compiled, or None (a quick look; generation has the final word)."""
    try:
        generate(module, tuple(range(len(module.entry.params))), False, False)
    except NotCompiled as e:
        return str(e)
    return None
