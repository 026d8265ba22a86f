"""Requests of a loop the compiler unrolls at run time, grouped as the GPU issues them.

The engine runs a per-lane ``range`` loop one iteration at a time for every lane still in it, and reports one
access event per iteration. The GPU runs the loop as NVVM compiled it (``gpusim.ir.unroll``): unrolled by
``U``, with the ``T mod U`` left-over iterations of a lane with ``T`` trips in a remainder loop before
(*prolog*) or after (*epilog*) the unrolled one. One warp instruction is one *slot* of that code:

* prolog: iteration ``i`` of a lane with ``r = T mod U`` is remainder slot ``i`` when ``i < r``, else unrolled
  slot ``i - r`` (copy ``(i - r) mod U`` of pass ``(i - r) div U``);
* epilog: with ``F = T - T mod U``, unrolled slot ``i`` when ``i < F``, else remainder slot ``i - F``.

A warp issues one request per (access, slot) that has an active lane, so lanes of one warp at different
iterations share a request, and a warp runs ``max(T mod U) + U * max(T div U)`` instructions per access
where the engine's iterations would give ``max(T)``. Where every lane of a warp has the same ``r`` (prolog) or
``F`` (epilog) its slots are the engine's iterations and its lanes are counted at once; the lanes of the other
warps are kept until the loop ends and then counted by slot.
"""

from __future__ import annotations

import numpy as np

from ..device import WARP_SIZE
from .events import AccessEvent, UnrolledLoop

#: lane-accesses kept per loop before they are counted as they stand (a bound on memory; see ``Regrouper``)
MAX_KEPT = 1 << 24
_REMAINDER = 1 << 40     # epilog remainder slots after every unrolled slot


def slots(trips: np.ndarray, iteration: int, count: int, epilog: bool) -> np.ndarray:
    """The slot (warp instruction of the compiled loop) of each lane at engine iteration ``iteration``."""
    left = trips % count
    if epilog:
        full = trips - left
        return np.where(iteration < full, iteration, _REMAINDER + (iteration - full))
    return np.where(iteration < left, iteration, count + (iteration - left))


class Regrouper:
    """Splits the access events of unrolled loops into what can be counted now and what must wait for the
    loop's end, and rebuilds the waiting lanes as events whose ``warp`` names their request."""

    def __init__(self, threads_per_block: int, warps_per_block: int):
        self.tpb = threads_per_block
        self.wpb = warps_per_block
        self.mixed: dict[int, np.ndarray] = {}       # loop id -> per lane of its chunk: its warp mixes slots
        self.kept: dict[int, dict[tuple, list]] = {}  # loop id -> access site -> [events' kept lanes]
        self.kept_lanes = 0

    def split(self, ev: AccessEvent) -> tuple[AccessEvent | None, bool]:
        """(the part of ``ev`` to count now, or None; whether some lanes were kept for the loop's end)."""
        loop = ev.loop
        if loop is None:
            return ev, False
        mixed = self._mixed(loop)
        lane = ev.gtid - loop.first_gtid
        keep = mixed[lane]
        if not keep.any():
            return ev, False
        now = ~keep
        trips = loop.trips[lane[keep]]
        site = (ev.array.id, ev.kind, ev.lineno, ev.op)
        entry = self.kept.setdefault(loop.id, {}).setdefault(site, [ev, [], True])
        entry[2] &= ev.uniform          # (uniform: the index was the same for every lane; see metrics.py)
        entry[1].append((ev.gtid[keep], ev.block[keep], ev.warp[keep], ev.flat[keep], ev.phase[keep],
                         slots(trips, ev.iteration, loop.count, loop.epilog)))
        self.kept_lanes += int(keep.sum())
        rest = _subset(ev, now) if now.any() else None
        return rest, True

    def over_budget(self) -> bool:
        return self.kept_lanes > MAX_KEPT

    def _mixed(self, loop: UnrolledLoop) -> np.ndarray:
        """Per lane of the loop's chunk: does its warp hold lanes whose slots differ from the iterations'?"""
        m = self.mixed.get(loop.id)
        if m is None:
            t = loop.trips
            shift = (t - t % loop.count) if loop.epilog else (t % loop.count)
            entered = t > 0
            n = len(t)
            lane = np.arange(n, dtype=np.int64)
            gt = loop.first_gtid + lane
            warp = (gt // self.tpb) * self.wpb + (gt % self.tpb) // WARP_SIZE
            warp -= warp[0] if n else 0
            nw = int(warp[-1]) + 1 if n else 0
            big = np.iinfo(np.int64).max
            lo = np.full(nw, big, np.int64)
            hi = np.full(nw, -1, np.int64)
            np.minimum.at(lo, warp[entered], shift[entered])
            np.maximum.at(hi, warp[entered], shift[entered])
            m = ((hi > lo) & (hi >= 0))[warp]
            self.mixed[loop.id] = m
        return m

    def flush(self, loop_id: int | None = None) -> list[AccessEvent]:
        """The kept lanes of one loop (every loop: None) as events, one request per (warp, slot)."""
        ids = list(self.kept) if loop_id is None else [loop_id]
        out = []
        for lid in ids:
            self.mixed.pop(lid, None)
            for ev, parts, uniform in self.kept.pop(lid, {}).values():
                gtid, block, warp, flat, phase, slot = (np.concatenate(c) for c in zip(*parts))
                self.kept_lanes -= len(gtid)
                order = np.lexsort((gtid, slot, warp))
                gtid, block, warp, flat, phase, slot = (a[order] for a in (gtid, block, warp, flat, phase, slot))
                new = np.ones(len(gtid), bool)
                new[1:] = (warp[1:] != warp[:-1]) | (slot[1:] != slot[:-1])
                request = np.cumsum(new) - 1          # a request id where the counters read a warp id
                out.append(AccessEvent(ev.array, ev.kind, ev.lineno, gtid, block, request, flat, phase,
                                       uniform, ev.op))
        return out


def _subset(ev: AccessEvent, keep: np.ndarray) -> AccessEvent:
    return AccessEvent(ev.array, ev.kind, ev.lineno, ev.gtid[keep], ev.block[keep], ev.warp[keep], ev.flat[keep],
                       ev.phase[keep], ev.uniform, ev.op, ev.loop, ev.iteration)
