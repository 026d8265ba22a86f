"""Latency rounds: what each warp waits for, one after another, and each block's barriers.

A warp issues its instructions in order and stalls only when an instruction needs a value that has not
arrived. Loads issued back to back are in flight together; the warp waits once, at the first use of one of
them. So a warp's life is a chain of *rounds*: a group of loads, then the wait for them. The timing model
(``gpusim.timing_model``) multiplies these rounds by latencies; this observer counts them from the order of
the events the engine reports (program order within a chunk of blocks):

* a **global round** opens at a global load by a warp that has, since its previous load, stored (to global
  or shared memory), done an atomic or passed a barrier: a store of a loaded value waits for it, and the
  compiler does not move the next load above a store that may touch the same memory (nor, on the H200's
  evidence, above a shared-memory store in a loop: a tile loaded through shared memory waits once per row),
  so the warp's earlier loads are waited for first. Other loads share the open
  round — the compiler schedules independent loads first and arithmetic after them — but a loop waits each
  time its body comes round again. In a per-lane ``range`` loop the compiler unrolls at run time
  (``gpusim.ir.unroll``: by ``U``, the ``T mod U`` left-over iterations in a remainder loop of single
  iterations, before or after the unrolled one) a load joins the open round only within one pass of the
  unrolled body: each remainder iteration waits on its own, so a loop of 2 trips waits twice and one of 10
  trips 2 + 2 times (the sm_90 SASS of puzzle 42's loop: ``LDG LDG LDS FFMA`` per remainder iteration, 8
  ``LDG`` then the ``LDS`` in the unrolled body). Elsewhere (loops of a known trip count, which LLVM unrolls
  whole when small, and loops it does not unroll) one source line's load joins an open round at most
  ``UNROLL`` times, so a reduction loop of 16 trips waits 4 times. A round is a **DRAM round** if any load
  in it touches a 64-byte segment no earlier access of the launch touched (lanes running together count
  as one: gpusim's chunk of blocks, like a wave on the GPU, asks at once), else an **L2 round** (the data
  is on chip). A global atomic whose value is used (``atom``) is an L2 round of its own;
* a **shared round** opens the same way at a shared-memory load, behind shared stores, atomics and barriers
  (not global stores: they cannot touch shared memory);
* **barriers**: ``syncthreads`` passed, per block.

The counts are kept per warp (global warp id) and per block; ``finish`` reduces them to, per block, its
busiest warp's count (a block lives as long as its slowest warp), summed over blocks and the largest:
``gpusim__rounds_{dram,l2,shared}_sum`` / ``_max`` and ``gpusim__barriers_sum`` / ``_max``. It also counts
what serialises atomics: ``gpusim__atomic_max_per_address`` (the most atomic operations any one global
address received: one per lane, or one per warp where the compiler aggregates, see ``metrics.py``) and
``gpusim__shared_atomic_passes`` (per shared-atomic request, the most lanes on one address, summed: lanes
on one address are served one after another).

What it cannot see: data dependences between loads (a gather ``x[col[j]]`` counts one round where the GPU
waits two), arithmetic chains (the timing model adds them from the FLOP counts), warp shuffles, and how far
the compiler really unrolls a given loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..device import WARP_SIZE
from .dram import SEGMENT
from .events import AccessEvent, ArrayInfo, LaunchInfo, Observer
from .requests import Requests, requests_of

UNROLL = 4
_GROUPS = 1 << 24          # stretches of an unrolled loop's execution (``RoundsObserver._loop_groups``)
_BIG = np.iinfo(np.int64).max
_SEGMENT_BITS = SEGMENT.bit_length() - 1   # SEGMENT is a power of two
ROUND_KEYS = tuple(f"gpusim__{name}_{agg}" for name in ("rounds_dram", "rounds_l2", "rounds_shared", "barriers")
                   for agg in ("sum", "max")) + ("gpusim__atomic_max_per_address", "gpusim__shared_atomic_passes")


class RoundsObserver(Observer):
    """Counts each warp's latency rounds and each block's barriers (see the module docstring)."""

    def start(self, launch: LaunchInfo, arrays: list[ArrayInfo]) -> None:
        self.tpb = launch.threads_per_block
        self.wpb = launch.warps_per_block
        self.nblocks = launch.num_blocks
        nw = self.nblocks * self.wpb
        self.now = 0
        # time of the warp's last store, atomic or barrier, per space: what a later load of the space waits behind
        self.last_use = {"global": np.full(nw, -1, np.int64), "shared": np.full(nw, -1, np.int64)}
        self.last_load = np.full(nw, -2, np.int64)       # time of its last global load
        self.last_sload = np.full(nw, -2, np.int64)      # ... and shared load
        self.open_dram = np.zeros(nw, bool)              # the warp's open global round goes to DRAM
        self.round_id = {"global": np.zeros(nw, np.int32), "shared": np.zeros(nw, np.int32)}   # rounds opened
        # load site -> (round id, loads in it, unrolled-loop group of its last load)
        self.sites: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.dram = np.zeros(nw, np.int32)
        self.l2 = np.zeros(nw, np.int32)
        self.shared = np.zeros(nw, np.int32)
        self.barriers = np.zeros(self.nblocks, np.int32)
        self.seen: dict[int, tuple[int, np.ndarray]] = {}   # global array id -> (first segment, touched map)
        self.atomic_counts: dict[int, np.ndarray] = {}      # global array id -> atomic operations per element
        self.shared_atomic_passes = 0
        self.loops: dict[int, tuple] = {}                   # unrolled loop id -> its warps' trips (``_loop_groups``)

    # ------------------------------------------------------------------------------------------ events
    def on_loop_exit(self, loop) -> None:
        self.loops.pop(loop.id, None)

    def on_barrier(self, blocks: np.ndarray, lineno: int) -> None:
        self.now += 1
        blocks = np.asarray(blocks, np.int64)
        if len(blocks) and int(blocks[-1]) - int(blocks[0]) + 1 == len(blocks):    # ascending, unique: a range
            self.barriers[blocks[0]:blocks[-1] + 1] += 1
            warps = slice(int(blocks[0]) * self.wpb, (int(blocks[-1]) + 1) * self.wpb)
        else:
            self.barriers[blocks] += 1
            warps = (blocks[:, None] * self.wpb + np.arange(self.wpb)[None, :]).reshape(-1)
        for last in self.last_use.values():
            last[warps] = self.now

    def on_access(self, ev: AccessEvent) -> None:
        space = ev.array.space
        if space not in ("global", "shared", "const") or len(ev.gtid) == 0:
            return
        self.now += 1
        req = requests_of(ev, self.tpb)
        warps = ev.warp[req.starts]
        # an event names each warp once, in ascending order; most name a run of warps, which basic slicing
        # reads and writes without a gather
        w0, w1 = int(warps[0]), int(warps[-1]) + 1
        at = slice(w0, w1) if w1 - w0 == len(warps) else warps
        kind = ev.kind
        if space == "shared":
            if kind == "ld":
                new = self._new_round(warps, self.last_sload, ("shared", ev.array.id, ev.lineno), "shared",
                                      self._loop_groups(ev, warps))
                self.shared[warps[new]] += 1
                self.last_sload[at] = self.now
            else:
                for last in self.last_use.values():
                    last[at] = self.now
                if kind in ("atom", "red"):
                    self.shared_atomic_passes += _serial_passes(req, ev.flat)
            return
        a = ev.array
        miss_warp = self._touch(a, ev.flat, req)
        if kind == "ld":
            groups = self._loop_groups(ev, warps)
            new = self._new_round(warps, self.last_load, ("global", a.id, ev.lineno), "global", groups)
            w_new, m_new = warps[new], miss_warp[new]
            self.dram[w_new[m_new]] += 1
            self.l2[w_new[~m_new]] += 1
            self.open_dram[w_new] = m_new
            # a warp whose open round was on chip and now also misses: that round waits for DRAM after all
            grow = warps[~new & miss_warp & ~self.open_dram[at]]
            self.l2[grow] -= 1
            self.dram[grow] += 1
            self.open_dram[grow] = True
            self.last_load[at] = self.now
            return
        if kind == "atom":
            self.l2[at] += 1
        if kind in ("atom", "red") and space == "global":
            self._count_atomics(ev, req, a.address(ev.flat))
            self.last_use["shared"][at] = self.now
        self.last_use["global"][at] = self.now

    # ------------------------------------------------------------------------------------------ helpers
    def _new_round(self, warps: np.ndarray, last: np.ndarray, site: tuple, space: str,
                   groups: np.ndarray | None) -> np.ndarray:
        """Per warp of a load event: does the load open a round? (and count it in its site's round)"""
        rid = self.round_id[space]
        state = self.sites.get(site)
        if state is None:
            n = len(rid)
            state = self.sites[site] = (np.full(n, -1, np.int32), np.zeros(n, np.int32), np.full(n, -1, np.int64))
        site_round, site_loads, site_group = state
        if groups is None:
            groups = np.full(len(warps), -1, np.int64)
        return _open_rounds(warps, groups, last, self.last_use[space], rid, site_round, site_loads, site_group,
                            UNROLL)

    def _loop_groups(self, ev: AccessEvent, warps: np.ndarray) -> np.ndarray | None:
        """Per warp of an access in a loop the compiler unrolls at run time (None outside such loops): which
        stretch of the compiled loop it is in — each remainder iteration one, each pass of the unrolled body
        one — as a number unique to the loop's execution. A warp runs ``P = max(T div U)`` passes and ``K =
        max(T mod U)`` remainder iterations over its lanes' trip counts ``T``: where its lanes' counts are
        equal, engine iteration ``i`` is in the stretch the compiled code runs it in; where they differ, the
        warp's ``max(T)`` iterations are spread evenly over its ``P + K`` stretches (the count of rounds is
        right, which loads share one is approximate)."""
        loop = ev.loop
        if loop is None or len(warps) == 0:
            return None
        stats = self.loops.get(loop.id)
        if stats is None:
            stats = self.loops[loop.id] = self._warp_trips(loop)
        first, longest, shortest, passes, left = stats
        w = warps - first
        t, u, i = longest[w], loop.count, ev.iteration
        if loop.epilog:     # the passes of the unrolled body first, then the remainder iterations
            full = t - t % u
            exact = np.where(i < full, i // u, _GROUPS // 2 + (i - full))
        else:               # the remainder iterations first (groups 0..u-1), then the passes
            r = t % u
            exact = np.where(i < r, i, u + (i - r) // u)
        spread = i * (passes[w] + left[w]) // np.maximum(t, 1)
        group = np.minimum(np.where(shortest[w] == t, exact, spread), _GROUPS - 1)
        return group + np.int64(loop.id) * _GROUPS

    def _warp_trips(self, loop) -> tuple:
        """(first warp, then per warp from it: most trips, fewest, most passes, most remainder iterations),
        over the lanes that entered the loop."""
        trips = np.asarray(loop.trips, np.int64)
        gt = loop.first_gtid + np.arange(len(trips), dtype=np.int64)
        warp = (gt // self.tpb) * self.wpb + (gt % self.tpb) // WARP_SIZE
        first = int(warp[0]) if len(warp) else 0
        starts = np.flatnonzero(np.r_[True, warp[1:] != warp[:-1]]) if len(warp) else np.zeros(0, np.int64)
        nw = int(warp[-1]) - first + 1 if len(warp) else 0
        out = [np.zeros(nw, np.int64) for _ in range(4)]
        if len(warp):
            at = warp[starts] - first
            entered = trips > 0
            u = loop.count
            for k, (values, fill, op) in enumerate(((trips, 0, np.maximum), (trips, _BIG, np.minimum),
                                                   (trips // u, 0, np.maximum), (trips % u, 0, np.maximum))):
                out[k][at] = op.reduceat(np.where(entered, values, fill), starts)
        return (first, *out)

    def _touch(self, a: ArrayInfo, flat: np.ndarray, req: Requests) -> np.ndarray:
        """Per request of an event: does one of its lanes touch a segment no earlier access of the launch
        touched? (and mark the segments touched)

        Lanes next to each other in one request mostly share a segment, and such lanes have the same answer,
        so only the lanes that start a request or change segment are looked up (a coalesced access: one lane in
        16 of 4-byte elements)."""
        owner = a.memory  # a record field's segments are its array of records'
        entry = self.seen.get(owner.id)
        if entry is None:
            first = owner.base_address // SEGMENT
            count = (owner.base_address + max(owner.nbytes, 1) - 1) // SEGMENT - first + 1
            entry = self.seen[owner.id] = (first, np.zeros(count, bool))
        first, touched = entry
        # segment of (base + flat * itemsize), counted from the array's first: (base % SEGMENT + flat * itemsize)
        # // SEGMENT; addresses are non-negative, so a shift is the floor division
        offset, size = a.base_address % SEGMENT, a.itemsize
        if a.strides is not None:  # a record field: its elements' own addresses
            seg = (a.address(flat) - owner.base_address + owner.base_address % SEGMENT) >> _SEGMENT_BITS
        elif offset == 0 and size <= SEGMENT and size & (size - 1) == 0:      # an aligned array: one shift
            seg = np.right_shift(flat, _SEGMENT_BITS - (size.bit_length() - 1), dtype=np.int64)
        else:
            seg = np.multiply(flat, size, dtype=np.int64)
            seg += offset
            seg >>= _SEGMENT_BITS
        keep = req.new.copy()
        keep[1:] |= seg[1:] != seg[:-1]
        pos = np.flatnonzero(keep)
        seg = seg[pos]
        miss = ~touched[seg]
        touched[seg] = True
        out = np.zeros(req.count, bool)
        # the kept lanes in order: each request's first lane is kept, so a cumulative count of the request
        # starts names each kept lane's request
        out[(np.cumsum(req.new[pos]) - 1)[miss]] = True
        return out

    def _count_atomics(self, ev: AccessEvent, req: Requests, addr: np.ndarray) -> None:
        from .metrics import TrafficObserver

        counts = self.atomic_counts.get(ev.array.id)
        if counts is None:
            counts = self.atomic_counts[ev.array.id] = np.zeros(max(ev.array.size, 1), np.int64)
        aggregated = TrafficObserver._aggregated(ev, addr)       # the compiler has one lane per warp do it
        flat = ev.flat[req.starts] if aggregated else ev.flat
        where, n = np.unique(flat, return_counts=True)
        counts[where] += n

    # ------------------------------------------------------------------------------------------ result
    def finish(self, report) -> None:
        m = report.metrics
        for name, per_warp in (("rounds_dram", self.dram), ("rounds_l2", self.l2), ("rounds_shared", self.shared)):
            per_block = per_warp.reshape(self.nblocks, self.wpb).max(axis=1) if per_warp.size else per_warp
            m[f"gpusim__{name}_sum"] = int(per_block.sum())
            m[f"gpusim__{name}_max"] = int(per_block.max()) if per_block.size else 0
        m["gpusim__barriers_sum"] = int(self.barriers.sum())
        m["gpusim__barriers_max"] = int(self.barriers.max()) if self.barriers.size else 0
        m["gpusim__atomic_max_per_address"] = max((int(c.max()) for c in self.atomic_counts.values()), default=0)
        m["gpusim__shared_atomic_passes"] = int(self.shared_atomic_passes)


@njit(cache=True)
def _open_rounds(warps, groups, last, last_use, rid, site_round, site_loads, site_group, unroll):
    """Per warp of a load event (``warps``: distinct): does the load open a round? A warp opens one when it
    stored, did an atomic or passed a barrier since its last load of the space (``last`` < ``last_use``), or
    when this load site is already in the warp's open round and either the load is in another group of an
    unrolled loop (``groups``: see ``_loop_groups``; -1 outside such loops) or the site has joined the round
    ``unroll`` times. Counts the rounds opened (``rid``) and the site's loads in the warp's open round
    (``site_round``, ``site_loads``) and the group of its last load (``site_group``)."""
    new = np.empty(warps.size, np.bool_)
    for i in range(warps.size):
        w = warps[i]
        g = groups[i]
        r = rid[w]
        same = site_round[w] == r
        if g >= 0:
            opens = last[w] < last_use[w] or (same and site_group[w] != g)
        else:
            opens = last[w] < last_use[w] or (same and site_loads[w] >= unroll)
        if opens:
            r += 1
            rid[w] = r
        site_round[w] = r
        site_loads[w] = site_loads[w] + 1 if same and not opens else 1
        site_group[w] = g
        new[i] = opens
    return new


def _serial_passes(req: Requests, flat: np.ndarray) -> int:
    """Σ over requests of the most lanes on one address: an atomic unit serves one lane per address per pass."""
    row, _, mult = req.unique(flat.astype(np.int64))
    if len(row) == 0:
        return 0
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])     # ``unique`` sorts by request
    return int(np.maximum.reduceat(mult, starts).sum())
