"""Chunks of blocks on several threads, with the single-threaded result.

Each worker runs a contiguous range of whole chunks (the chunks a single thread would run, in its order) on
private copies of everything a chunk updates that other chunks' threads also could: fault records, the
race shadow of global arrays, per-element counts, the clock, the trace. Per-block and per-thread records
(barrier epochs, phases, per-thread counts) are shared: each block and thread belongs to one worker.

The merged result equals a single thread's whenever no element of a global array was touched by two
workers with at least one write (or atomic): then no chunk of one worker saw another's effects, every
fault and count a worker found is the one a single thread finds in its chunks, and merging them in chunk
order (a fault's first occurrence, counts summed) gives the single-threaded report. Otherwise — a race
between blocks of different workers, atomics on one element from several workers, a worker stopped by a
fault that ends the launch, or workers that created shared arrays in different orders — the arrays are
restored and the launch runs again on one thread, which finds and reports it as always. An instrumented
launch also runs again when two workers touched one 64-byte segment of a global array: the latency rounds'
DRAM rounds depend on which chunk touched it first. So the report never
depends on the number of threads, and races between blocks of different chunks are still found.

A launch is split only where that pays (``driver._worth_splitting``): the private race records are tens of
bytes per element of every written global array, which a light kernel (a map) spends more time clearing and
checking than a second core saves; and where a split launch of this kernel and shape was measured slower than
one worker (a machine whose other cores are busy), it runs on one.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import njit

from .layout import (
    F_KEY,
    F_KIND,
    FK_RACE,
    I_ABORT,
    I_ALOG,
    I_DISTINCT,
    I_FLOG,
    I_PAIRS,
    I_PAIRS_N,
    I_RPASS,
    I_STEPS,
    I_TDROP,
)
from .rtlib import MAX_PAIRS

SHARED_SLOT_ARRAYS = ("cr", "cw", "sr", "sw")


def _ranges(nblocks: int, per_chunk: int, nchunks: int, workers: int) -> list[tuple[int, int]]:
    bounds = [k * nchunks // workers for k in range(workers + 1)]
    return [(bounds[k] * per_chunk, min(bounds[k + 1] * per_chunk, nblocks)) for k in range(workers)]


@njit(cache=True, nogil=True)
def _shared_write(ws, as_, rs, lo, hi) -> bool:
    """Did two workers touch one element of ``[lo, hi)`` of a global array, at least one of them writing it?
    ``ws``/``as_``/``rs``: each worker's write, atomic and read records of the array (no rows: not kept)."""
    for e in range(lo, hi):
        touched = 0
        wrote = False
        for k in range(len(ws)):
            wr = (ws[k].shape[0] > 0 and ws[k][e, 0] != 0) or (as_[k].shape[0] > 0 and as_[k][e, 0] != 0)
            if wr or (rs[k].shape[0] > 0 and rs[k][e, 0] != 0):
                touched += 1
                wrote = wrote or wr
        if touched >= 2 and wrote:
            return True
    return False


def _conflict(gen, states) -> bool:
    """Did two workers touch one element of a global array, at least one writing it? Each worker's thread looks
    at its share of the elements (the records are tens of bytes per element: one pass over them all is most of
    the cost of running a light kernel twice)."""
    jobs = []
    for slot in gen.slots:
        if slot.kind != "param" or not slot.tracked:
            continue
        recs = tuple(tuple(st[slot.arr(x)] for st in states) for x in ("w", "a", "r"))
        size = states[0][slot.data].size
        jobs.append((recs, size))
    if not jobs:
        return False
    found = []

    def look(part: int, parts: int) -> None:
        for recs, size in jobs:
            if _shared_write(*recs, part * size // parts, (part + 1) * size // parts):
                found.append(True)
                return

    parts = len(states)
    pool = [threading.Thread(target=look, args=(k, parts)) for k in range(1, parts)]
    for t in pool:
        t.start()
    look(0, parts)
    for t in pool:
        t.join()
    return bool(found)


def _first_touch_shared(gen, states) -> bool:
    """Did two workers touch one 64-byte segment of a global or constant array? The latency rounds count a
    DRAM round at the segment's first touch in the launch's order, which only one thread running every
    chunk in order sees (``rt_rounds``)."""
    for slot in gen.slots:
        maps = [st[slot.arr("rt")] for st in states if slot.arr("rt") in st]
        if len(maps) < 2 or maps[0].size == 0:
            continue
        seen = maps[0] != 0
        for m in maps[1:]:
            now = m != 0
            if (seen & now).any():
                return True
            seen |= now
    return False


def _same_arrays(states) -> bool:
    base = states[0]
    n0 = int(base["I"][I_ALOG])
    for st in states[1:]:
        n = int(st["I"][I_ALOG])
        if n > n0 or not np.array_equal(st["ALOG"][:n], base["ALOG"][:n]):
            return False
        if not np.array_equal(st["SHB"], base["SHB"]) and n:
            return False
    return True


def _merge(gen, states) -> dict:
    base = states[0]
    I = base["I"]
    rows = []
    seen = set()
    for st in states:
        for row in st["FLOG"][:int(st["I"][I_FLOG])]:
            k = (int(row[F_KIND]) == FK_RACE, int(row[F_KEY]))
            if k not in seen:
                seen.add(k)
                rows.append(row)
    base["FLOG"][:len(rows)] = np.array(rows).reshape(len(rows), -1) if rows else 0
    I[I_FLOG] = len(rows)
    for st in states[1:]:
        I[I_STEPS] += st["I"][I_STEPS]
        base["FCNT"] += st["FCNT"]
        base["RCNT"] += st["RCNT"]
        base["SS"] += st["SS"]
        base["FL"] += st["FL"]
        base["FLT"] |= st["FLT"]
        I[I_TDROP] += st["I"][I_TDROP]
        I[I_RPASS] += st["I"][I_RPASS]
        for slot in gen.slots:
            if slot.space != "local":
                base[slot.arr("er")] += st[slot.arr("er")]
                base[slot.arr("ew")] += st[slot.arr("ew")]
            if slot.arr("rc") in st:
                base[slot.arr("rc")] += st[slot.arr("rc")]
    pairs = sum(int(st["I"][I_PAIRS]) for st in states)
    if I[I_DISTINCT] and all(st["I"][I_DISTINCT] for st in states) and pairs <= MAX_PAIRS:
        base["PK"] = np.concatenate([st["PK"][:int(st["I"][I_PAIRS_N])] for st in states])
        I[I_PAIRS_N] = len(base["PK"])
    else:
        I[I_DISTINCT] = 0
    I[I_PAIRS] = pairs
    return base


def run_parallel(ck, info, args, addresses, max_steps, chunk_lanes, workers, per_chunk, nchunks):
    """The launch on ``workers`` threads; None when it must run again on one thread (arrays restored)."""
    from .driver import SHARED_BY_WORKERS, _run, build_state

    gen = ck.gen
    writable = [s for s in gen.slots if s.kind == "param" and (s.writes or s.atomics)]
    snapshot = {s.id: args[s.params[0]].copy() for s in writable}
    ranges = _ranges(info.num_blocks, per_chunk, nchunks, workers)
    states = [build_state(ck, info, args, addresses, max_steps, chunk_lanes, r) for r in ranges]
    base = states[0]
    for st in states[1:]:
        for name in SHARED_BY_WORKERS:
            st[name] = base[name]
        for slot in gen.slots:
            for what in SHARED_SLOT_ARRAYS:
                if slot.arr(what) in base:
                    st[slot.arr(what)] = base[slot.arr(what)]
    errors: list[BaseException] = []

    def work(st):
        try:
            _run(ck, st)
        except BaseException as e:  # pragma: no cover - the compiled code raises nothing of its own
            errors.append(e)

    pool = [threading.Thread(target=work, args=(st,)) for st in states[1:]]
    for t in pool:
        t.start()
    work(base)
    for t in pool:
        t.join()
    if errors:
        raise errors[0]
    # the step budget is the launch's: past it in all, one thread finds where (each worker checked its own part)
    over = sum(int(st["I"][I_STEPS]) for st in states) > max_steps
    if over or any(st["I"][I_ABORT] for st in states) or _conflict(gen, states) or not _same_arrays(states) \
            or (ck.instrument and _first_touch_shared(gen, states)):
        for s in writable:
            args[s.params[0]][...] = snapshot[s.id]
        return None
    merged = _merge(gen, states)
    merged["workers"] = workers
    return merged
