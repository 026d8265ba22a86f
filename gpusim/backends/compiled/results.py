"""The ``LaunchReport`` of a compiled launch, rebuilt from the arrays the compiled code filled: the faults
(with the lanes back end's messages, in the order it finds them), the arrays, and the state of the same
observers the lanes back end feeds (``gpusim.observe.metrics.instrumentation``), so that ``finish`` turns it
into the same metrics, counts and trace.
"""

from __future__ import annotations

import numpy as np

from ...faults import (
    BarrierDivergence,
    DataRace,
    KernelError,
    KernelFault,
    OutOfBounds,
    UninitializedRead,
)
from ...observe.coalescing import SECTOR
from ...observe.counts import CountsObserver
from ...observe.dram import SegmentMap
from ...observe.events import ArrayInfo
from ...observe.flops import FlopsObserver
from ...observe.metrics import TrafficObserver
from ...observe.races import HAZARDS
from ...observe.rounds import RoundsObserver
from ...observe.trace import TraceObserver
from ...report import LaunchReport
from ...runtime.core import timeout
from ...runtime.sync import mask_leaves_out, mask_names_absent
from .layout import (
    F_GTID,
    F_KEY,
    F_KIND,
    F_P,
    FK_BARRIER,
    FK_DIVZERO,
    FK_MASK_MISS,
    FK_MASK_OUT,
    FK_NONE,
    FK_OOB,
    FK_RACE,
    FK_SHFL_SRC,
    FK_TIMEOUT,
    FK_TRAP,
    FK_TUPLE,
    FK_UNBOUND,
    FK_UNINIT,
    FK_ZEROSTEP,
    FLOP_DTYPES,
    FLOP_OPS,
    I_ALOG,
    I_BBLK,
    I_BLOG,
    I_DISTINCT,
    I_FLOG,
    I_PAIRS_N,
    I_RPASS,
    I_STATIC,
    I_STEPS,
    I_TDROP,
    I_TREC,
    SHUFFLE_KINDS,
    T_BYTES,
    T_EVENTS,
    T_IDEAL,
    T_LANES,
    T_REQ,
    T_SECT,
    WHAT,
)
from .rt_rounds import RW_DRAM, RW_L2, RW_SH

ACCESS_NAMES = ("read", "write", "atomic")
KINDS = ("OutOfBounds", "UninitializedRead", "DataRace", "KernelError", "KernelTimeout", "BarrierDivergence")


class Recorder:
    """``Runtime.record`` for faults rebuilt after the launch."""

    def __init__(self, info, kernel: str, source_line, max_steps: int):
        self.info = info
        self.kernel = kernel
        self.src = source_line
        self.max_steps = max_steps

    def where(self, gtid: int):
        return self.info.split_gtid(gtid)

    def fill(self, f: KernelFault, line: int, gtid: int, array, index, count: int) -> KernelFault:
        f.kernel = self.kernel
        f.filename = self.info.filename
        f.lineno = int(line)
        f.source_line = self.src(int(line))
        if gtid >= 0:
            f.block, f.thread = self.where(gtid)
        f.array = array
        f.index = index
        f.count = int(count)
        return f


def _index_of(shape, space: str, elem: int) -> tuple[int, ...]:
    size = int(np.prod(shape, dtype=np.int64))
    flat = int(elem) % size if space in ("shared", "local") else int(elem)
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def exit_skipped_lines(module) -> set[int]:
    """The lines of the kernel's barriers that threads skip only on their way out (``lanes.barriers``): their
    fault is marked ``skipped_by_exiting``, as the lanes back end marks it."""
    from ...ir.walk import walk_stmts
    from ..lanes.barriers import skipped_only_by_exiting

    found = skipped_only_by_exiting(module.entry)
    return {s.line for s in walk_stmts(module.entry.body) if id(s) in found}


def build_faults(gen, st, rec: Recorder, shapes: dict[int, tuple]) -> list[KernelFault]:
    keys = {v: k for k, v in gen.keys.items()}
    races = {v: k for k, v in gen.race_keys.items()}
    nlines = gen.nlines
    out = []
    for row in st["FLOG"][:int(st["I"][I_FLOG])]:
        kind = int(row[F_KIND])
        key = int(row[F_KEY])
        g = int(row[F_GTID])
        p = [int(x) for x in row[F_P:]]
        if kind == FK_RACE:
            line, _name = races[key // nlines]
            count = st["RCNT"][key]
        else:
            _cls, line, _array, _extra = keys[key]
            count = st["FCNT"][key]
        if kind in (FK_OOB, FK_UNINIT, FK_RACE):
            slot = gen.slots[p[0]]
            shape = shapes[slot.id]
        if kind == FK_OOB:
            access = ACCESS_NAMES[p[1]]
            index = tuple(p[4:4 + p[3]])
            d = next(d for d in range(len(index)) if not 0 <= index[d] < shape[d])
            what = "Negative index" if index[d] < 0 else "Index"
            f = OutOfBounds(f"{what} {index[d]} is out of bounds for dimension {d} of {slot.space} array "
                            f"{slot.name!r} (size {shape[d]}) on {access}.", shape=shape, access=access)
            f.details.append(f"the array's shape is {shape}")
            out.append(rec.fill(f, line, g, slot.name, index, count))
        elif kind == FK_UNINIT:
            index = _index_of(shape, slot.space, p[1])
            f = UninitializedRead(f"Read of {slot.space} array {slot.name!r} at {list(index)} before any thread "
                                  "wrote it.")
            out.append(rec.fill(f, line, g, slot.name, index, count))
        elif kind == FK_RACE:
            index = _index_of(shape, slot.space, p[1])
            other, oline, hazard = p[2], p[3], HAZARDS[p[4]]
            if other >= 0:
                ob, ot = rec.where(other)
                who = f"thread {ot} of block {ob}"
            else:
                ob = ot = None
                who = "several other threads"
            f = DataRace(
                f"Data race on {slot.space} array {slot.name!r} at {list(index)}: {hazard} between threads with no "
                f"barrier between them.",
                other_block=ob, other_thread=ot, other_lineno=oline, other_source_line=rec.src(oline), hazard=hazard)
            f.details.append(f"the other access: {who} at line {oline}: {rec.src(oline).strip()}")
            if ob is not None and rec.where(g)[0] != ob:
                f.details.append("the threads are in different blocks, and blocks are never ordered within a launch")
            out.append(rec.fill(f, line, g, slot.name, index, count))
        elif kind in (FK_DIVZERO, FK_TRAP, FK_ZEROSTEP):
            summary = ("integer division by zero" if kind == FK_DIVZERO else
                       gen.messages[p[0]] if kind == FK_TRAP else "a range() step is zero")
            f = KernelError(summary[0].upper() + summary[1:] + ".")
            out.append(rec.fill(f, line, g, None, None, count))
        elif kind == FK_TIMEOUT:
            f = timeout(rec.max_steps)
            out.append(rec.fill(f, line, g, None, None, count))
        elif kind == FK_TUPLE:
            f = OutOfBounds(f"Index {p[0]} is out of range for a tuple of {p[1]} items.")
            out.append(rec.fill(f, line, g, None, (p[0],), count))
        elif kind == FK_BARRIER:
            _, mt = rec.where(p[0])
            leaving = line in exit_skipped_lines(gen.module)
            f = BarrierDivergence(
                f"syncthreads() reached by only {p[1]} of the block's {p[2]} live threads: a barrier must "
                "be reached by every thread of the block that has not returned.", skipped_by_exiting=leaving)
            f.details.append(f"thread {mt} of this block did not reach it (it is in a different branch)"
                             + (", and leaves the kernel without doing anything else" if leaving else ""))
            out.append(rec.fill(f, line, g, None, None, count))
        elif kind == FK_MASK_OUT:
            f = BarrierDivergence(mask_leaves_out(WHAT[p[2]], p[0], p[1]))
            out.append(rec.fill(f, line, g, None, None, count))
        elif kind == FK_MASK_MISS:
            f = BarrierDivergence(mask_names_absent(WHAT[p[2]], p[0], p[1]))
            out.append(rec.fill(f, line, g, None, None, count))
        elif kind == FK_SHFL_SRC:
            why = "has returned" if p[2] else "is not executing this shuffle (another branch)"
            kname = SHUFFLE_KINDS[p[3]]
            f = BarrierDivergence(
                f"shfl_{kname}_sync() in lane {p[0]} reads lane {p[1]}, which {why}: the value it gets "
                "is undefined.")
            out.append(rec.fill(f, line, g, None, None, count))
        elif kind == FK_UNBOUND:
            f = KernelError(f"The variable {gen.var_names[p[0]]!r} is read before it is assigned on the path the "
                            "threads took.")
            out.append(rec.fill(f, line, -1, None, None, count))
        elif kind == FK_NONE:
            f = KernelError("A variable is used before every thread that reads it has assigned it.")
            f.details.append("(if the kernel looks right, this may be a gpusim limitation: please report it)")
            out.append(rec.fill(f, line, -1, None, None, count))
    return out


def array_infos(gen, st, global_infos: dict[int, ArrayInfo], first_id: int) -> dict[int, ArrayInfo]:
    """ArrayInfo of every slot: global ones given, the others in the order the kernel created them."""
    infos = dict(global_infos)
    next_id = first_id
    for k in st["ALOG"][:int(st["I"][I_ALOG])]:
        slot = gen.slots[int(k)]
        next_id += 1
        base = int(st["SHB"][slot.id]) if slot.space == "shared" else 0
        infos[slot.id] = ArrayInfo(next_id, slot.name, slot.space, slot.dtype.dtype, tuple(slot.shape), base)
    return infos


def build_report(ck, info, st, global_infos: dict[int, ArrayInfo], first_id: int, observers: list,
                 rec: Recorder, shared_mem: int) -> LaunchReport:
    gen = ck.gen
    shapes = {slot.id: (tuple(int(d) for d in st[slot.data].shape) if slot.kind == "param"
                        else tuple(slot.shape)) for slot in gen.slots}
    report = LaunchReport(info)
    report.faults = build_faults(gen, st, rec, shapes)
    infos = array_infos(gen, st, global_infos, first_id)
    created = [infos[int(k)] for k in st["ALOG"][:int(st["I"][I_ALOG])]]
    report.arrays = list(global_infos.values()) + created
    static = int(st["I"][I_STATIC])
    report.shared_bytes_per_block = static + int(shared_mem)
    report.steps = int(st["I"][I_STEPS])
    report.flops = {}
    FL = st["FL"]
    for o, op in enumerate(FLOP_OPS):
        for d, dt in enumerate(FLOP_DTYPES):
            if FL[o, d] or st["FLT"][o, d]:
                report.flops.setdefault(dt, {})[op] = report.flops.get(dt, {}).get(op, 0) + int(FL[o, d])
    for o in observers:
        o.start(info, list(global_infos.values()))
        for a in created:
            o.on_array(a)
        fill_observer(o, gen, st, infos, info)
    for o in observers:
        o.finish(report)
    return report


def fill_observer(o, gen, st, infos: dict[int, ArrayInfo], info) -> None:
    if isinstance(o, TrafficObserver):
        fill_traffic(o, gen, st, infos)
    elif isinstance(o, CountsObserver):
        fill_counts(o, gen, st, infos)
    elif isinstance(o, TraceObserver):
        fill_trace(o, gen, st, infos)
    elif isinstance(o, RoundsObserver):
        fill_rounds(o, gen, st, infos)
    elif isinstance(o, FlopsObserver):
        pass  # report.flops is filled from the counters; the observer only reads it


def fill_traffic(o: TrafficObserver, gen, st, infos) -> None:
    SS = st["SS"]
    for site in gen.sites:
        slot = site.slot
        if slot is None or SS[site.id, T_EVENTS] == 0:
            continue
        space = slot.space
        kind = site.kind
        a = infos[slot.id]
        row = SS[site.id]
        if space == "shared":
            if kind in ("ld", "st"):
                m = o.m
                m[f"smsp__sass_inst_executed_op_shared_{kind}.sum"] += int(row[T_REQ])
                m[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{kind}.sum"] += int(row[T_SECT])
                m[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{kind}.sum"] += int(row[T_IDEAL])
                s = o.sites.setdefault((a.name, space, site.line, kind), [0, 0, 0])
                s[0] += int(row[T_REQ])
                s[1] += int(row[T_SECT])
                s[2] += int(row[T_IDEAL])
            continue
        if space != "global":
            continue
        m = o.m
        m[f"l1tex__t_requests_pipe_lsu_mem_global_op_{kind}.sum"] += int(row[T_REQ])
        m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{kind}.sum"] += int(row[T_SECT])
        m[f"smsp__sass_inst_executed_op_global_{kind}.sum"] += int(row[T_REQ])
        o.ideal_sectors[kind] += int(row[T_IDEAL])
        b = o.bytes.setdefault(a.id, [a, 0, 0])
        b[1] += int(row[T_BYTES])
        b[2] += int(row[T_SECT]) * SECTOR
        s = o.sites.setdefault((a.name, space, site.line, kind), [0, 0, 0, 0])
        s[0] += int(row[T_REQ])
        s[1] += int(row[T_SECT])
        s[2] += int(row[T_IDEAL])
        s[3] += int(row[T_BYTES])
    for slot in gen.slots:
        if slot.space not in ("global", "const"):
            continue
        sr, sw = st[slot.arr("sr")], st[slot.arr("sw")]
        if not (sr.any() or sw.any()):
            continue
        a = infos[slot.id]
        seg = SegmentMap(a.base_address, a.nbytes)
        seg.read[:] = sr
        seg.write[:] = sw
        o.segments[a.id] = seg


def fill_rounds(o: RoundsObserver, gen, st, infos) -> None:
    """The per-warp and per-block counts ``rt_rounds`` kept, where ``RoundsObserver.finish`` reads them."""
    RW = st["RW"]
    if RW.shape[0] == o.dram.shape[0]:
        o.dram[:] = RW[:, RW_DRAM]
        o.l2[:] = RW[:, RW_L2]
        o.shared[:] = RW[:, RW_SH]
        o.barriers[:] = st["RB"]
    for slot in gen.slots:
        rc = st.get(slot.arr("rc"))
        if rc is not None and rc.size and slot.id in infos:
            o.atomic_counts[infos[slot.id].id] = rc
    o.shared_atomic_passes = int(st["I"][I_RPASS])


def fill_counts(o: CountsObserver, gen, st, infos) -> None:
    c = o.counts
    SS = st["SS"]
    for site in gen.sites:
        slot = site.slot
        if slot is None or SS[site.id, T_LANES] == 0:
            continue
        kind = "atom" if site.kind == "red" else site.kind
        key = f"{slot.space}_{kind}"
        c.totals[key] = c.totals.get(key, 0) + int(SS[site.id, T_LANES])
    # a count array is made at the first access that adds to it (``CountsObserver``): None while no access of
    # the array with lanes read (loads, atomics) or wrote (stores, atomics)
    read, wrote = set(), set()
    for site in gen.sites:
        if site.slot is not None and SS[site.id, T_LANES]:
            if site.kind != "st":
                read.add(site.slot.id)
            if site.kind != "ld":
                wrote.add(site.slot.id)
    for slot in gen.slots:
        a = infos.get(slot.id)
        if a is None:
            continue
        ac = c.arrays.get(a.id)
        if ac is None:
            o.on_array(a)
            ac = c.arrays[a.id]
        for attr, what, used in (("thread_reads", "cr", read), ("thread_writes", "cw", wrote),
                                 ("elem_reads", "er", read), ("elem_writes", "ew", wrote)):
            if slot.id in used and (ac.elements or what in ("cr", "cw")):
                mine = getattr(ac, attr)
                setattr(ac, attr, st[slot.arr(what)] if mine is None else mine + st[slot.arr(what)])
    c.distinct = bool(st["I"][I_DISTINCT]) and c.distinct
    if c.distinct:
        PK = st["PK"][:int(st["I"][I_PAIRS_N])]
        for slot in gen.slots:
            a = infos.get(slot.id)
            if a is None or slot.space == "local":
                continue
            ac = c.arrays[a.id]
            for w, lst in ((0, ac.pairs_r), (1, ac.pairs_w)):
                keys = PK[PK[:, 1] == slot.id * 2 + w, 0]
                if keys.size:
                    lst.append(keys.copy())


def fill_trace(o: TraceObserver, gen, st, infos) -> None:
    tr = o.trace
    n = int(st["I"][I_TREC])
    rows = st["TR"][:n]
    ids = np.array([infos[s.id].id if s.id in infos else -1 for s in gen.slots] or [0], np.int64)
    if n:   # the columns of ``ACCESS_DTYPE``, as ``TraceObserver.on_access`` keeps them
        tr._chunks.append((rows[:, 0].copy(), rows[:, 1].copy(), rows[:, 2].copy(), rows[:, 3].copy(),
                           ids[rows[:, 4]], rows[:, 5].copy(), rows[:, 6].copy(), rows[:, 7].copy()))
    for s in gen.slots:
        if s.id in infos:
            tr.arrays.setdefault(infos[s.id].id, infos[s.id])
    tr._table = None
    tr.recorded = n
    tr.dropped = int(st["I"][I_TDROP])
    blog = st["BLOG"][:int(st["I"][I_BLOG])]
    bblk = st["BBLK"][:int(st["I"][I_BBLK])]
    for step, line, start, cnt in blog:
        tr._barriers.append((int(step), bblk[int(start):int(start) + int(cnt)].copy(), int(line)))


_ = KINDS
