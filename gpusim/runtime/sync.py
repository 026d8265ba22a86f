"""Barriers and warp-level intrinsics on lane vectors: ``syncthreads`` (and its reductions), ``syncwarp``,
shuffles, votes and ``activemask``.

A barrier is legal only where every live thread of the block reaches it; a warp intrinsic only where every
live lane named in its mask takes part, and a shuffle must not read a lane that does not. Barriers advance
the block's and warps' epochs that order accesses for the race tracker.

``Synchronisation`` is a part of ``Runtime``: it uses the runtime's chunk geometry, fault records and clock.
"""

from __future__ import annotations

import numpy as np

from ..device import FULL_MASK, WARP_SIZE
from ..faults import BarrierDivergence


def mask_leaves_out(what: str, lane: int, mask: int) -> str:
    """The summary of a ``*_sync`` call executed by a lane its mask leaves out (both back ends report it)."""
    return (f"{what} is executed by lane {lane}, which its mask (0x{mask & 0xFFFFFFFF:08x}) leaves out: a lane "
            "that executes a *_sync call must be in its mask. PTX leaves the result undefined; on an H200 such "
            "a kernel ran with no error and compute-sanitizer's synccheck reported nothing, so the GPU "
            "will not tell you.")


def mask_names_absent(what: str, need: int, act: int) -> str:
    """The summary of a ``*_sync`` call whose mask names live lanes that do not execute it (``need``: the live
    lanes of the mask, ``act``: those executing it)."""
    missing = [i for i in range(WARP_SIZE) if (need >> i) & 1 and not (act >> i) & 1]
    return (f"{what} names lanes {missing[:8]}{'...' if len(missing) > 8 else ''} of the warp in its mask "
            f"(0x{need:08x}) but they are not executing it: every lane named in the mask must take part.")


class Synchronisation:
    # -- barriers -------------------------------------------------------------------------------------
    def _block_view(self, v):
        return v.reshape(self.nb, self.T)

    def syncthreads(self, m, line, leaving=False):
        """``leaving``: the threads that skip this barrier only leave the kernel (``lanes.barriers``)."""
        T = self.T
        if not isinstance(m, np.ndarray):
            m = self.all_lanes if m else self.no_lanes
        m2 = self._block_view(m)
        present = m2.any(axis=1)
        live_ok = (m2 | self._block_view(self.exited)).all(axis=1)
        bad = present & ~live_ok
        if bad.any():
            b = int(np.flatnonzero(bad)[0])
            row = m2[b] | self._block_view(self.exited)[b]
            missing = int(np.flatnonzero(~row)[0])
            arrived = int(m2[b].sum())
            live = int((~self._block_view(self.exited)[b]).sum())
            f = BarrierDivergence(
                f"syncthreads() reached by only {arrived} of the block's {live} live threads: a barrier must "
                "be reached by every thread of the block that has not returned.", skipped_by_exiting=leaving)
                # the thread that did not arrive is the one described
            _, mt = self.info.split_gtid((self.b0 + b) * T + missing)
            f.details.append(f"thread {mt} of this block did not reach it (it is in a different branch)"
                             + (", and leaves the kernel without doing anything else" if leaving else ""))
            self.record(f, line, b * T + int(np.flatnonzero(m2[b])[0]), None, None)
            self.faults[(BarrierDivergence, line, None, ())].count += int(bad.sum()) - 1
        blocks = np.flatnonzero(present)
        gblocks = self.b0 + blocks
        self.show_shared(blocks, int(line))
        self.now += 1
        self.bar_time[blocks] = self.now
        w = (blocks[:, None] * self.NW + np.arange(self.NW)[None, :]).reshape(-1)
        self.wbar_time[w] = self.now
        self.phase[blocks] += 1
        self._full_phase = None
        self.now += 1
        if self.observers:
            seen = gblocks.view()
            seen.flags.writeable = False  # observers see read-only arrays
            for o in self.observers:
                o.on_barrier(seen, int(line))

    def grid_sync(self, m, line, leaving=False):
        """A grid group's ``sync()``: every live thread of the grid must reach it. The launch runs every block
        in this one chunk (a cooperative launch), so it is every block's barrier, and it orders all earlier
        accesses to global arrays, in any block, before all later ones: their access records are cleared.
        ``leaving``: the threads that skip it only leave the kernel (``lanes.barriers``)."""
        if not isinstance(m, np.ndarray):
            m = self.all_lanes if m else self.no_lanes
        if not m.any():
            return
        missing = ~(m | self.exited)
        if missing.any():
            lane = int(np.flatnonzero(missing)[0])
            blk, thr = self.info.split_gtid(self.b0 * self.T + lane)
            f = BarrierDivergence(
                f"grid.sync() reached by only {int(m.sum())} of the grid's {int((~self.exited).sum())} live "
                "threads: a grid barrier must be reached by every thread of the grid that has not returned.",
                skipped_by_exiting=leaving)
            f.details.append(f"thread {thr} of block {blk} did not reach it (it is in a different branch)"
                             + (", and leaves the kernel without doing anything else" if leaving else ""))
            self.record(f, line, int(np.flatnonzero(m)[0]), None, None)
        # the grid's fault says it all: each block's own barrier is passed by every thread the grid's waited for
        self.syncthreads(m | self.exited | (missing if leaving else False), line)
        for h in self.globals_tracked:
            sh = h.shadow
            if sh is not None:
                sh.forget()

    def show_shared(self, blocks, line):
        """Give observers that ask for them (``on_shared_values``) read-only views of the chunk's shared arrays.

        ``blocks`` are chunk-local block indices (the blocks passing a barrier at ``line``; ``line`` None: the
        chunk's end). Each view is ``(blocks_in_chunk, size)``; observers copy what they keep.
        """
        watchers = [o for o in self.observers if hasattr(o, "on_shared_values")]
        if not watchers or not self.shared:
            return
        views, seen = [], set()
        for h in self.shared.values():
            if h.info.id in seen:
                continue
            seen.add(h.info.id)
            v = h.data.view()
            v.flags.writeable = False
            views.append((h.info, v))
        local = np.array(blocks, dtype=np.int64)   # a copy: the caller goes on using ``blocks``
        gblocks = self.b0 + local
        local.flags.writeable = gblocks.flags.writeable = False   # observers see read-only arrays
        for o in watchers:
            o.on_shared_values(gblocks, local, views, line)

    def syncthreads_reduce(self, kind, m, pred, line):
        self.syncthreads(m, line)
        p = pred != 0
        if not isinstance(p, np.ndarray):
            p = np.full(self.N, p)
        if not isinstance(m, np.ndarray):
            m = self.all_lanes
        pm = self._block_view(p & m)
        if kind == "count":
            r = pm.sum(axis=1).astype(np.int32)
        elif kind == "and":
            r = (pm | ~self._block_view(m)).all(axis=1).astype(np.int32)
        else:
            r = pm.any(axis=1).astype(np.int32)
        return np.repeat(r, self.T)

    # -- warps ----------------------------------------------------------------------------------------
    def _warp_bits(self, b):
        """Per lane: the OR over its warp of (b[lane] << laneid), as uint32."""
        bits = b.astype(np.uint64) << self.laneid.astype(np.uint64)
        T = self.T
        if T % WARP_SIZE == 0:
            w = bits.reshape(-1, WARP_SIZE).sum(axis=1)
            return np.repeat(w, WARP_SIZE).astype(np.uint32)
        starts = np.flatnonzero(self.laneid == 0)
        w = np.add.reduceat(bits, starts)
        counts = np.diff(np.append(starts, self.N))
        return np.repeat(w, counts).astype(np.uint32)

    def _check_warp_mask(self, m, mask, line, what):
        """A ``*_sync`` call: every executing lane must be in the mask, and every live lane of the mask must
        execute it. Returns the executing lanes' bits per lane."""
        if not isinstance(m, np.ndarray):
            m = self.all_lanes
        maskv = np.asarray(mask).astype(np.uint32)
        inmask = ((maskv >> self.laneid.astype(np.uint32)) & np.uint32(1)).astype(bool)
        outside = m & ~inmask
        if outside.any():
            k = int(np.flatnonzero(outside)[0])
            mk = int(maskv if maskv.ndim == 0 else maskv[k])
            self.record(BarrierDivergence(mask_leaves_out(what, int(self.laneid[k]), mk)), line, k, None, None,
                        ("mask",))
        act = self._warp_bits(m)
        exist = np.where(self.warp_size_of >= WARP_SIZE, np.uint64(FULL_MASK),
                         (np.uint64(1) << self.warp_size_of.astype(np.uint64)) - np.uint64(1)).astype(np.uint32)
        live = self._warp_bits(~self.exited)
        need = maskv & exist & live
        bad = m & ((need & ~act) != 0)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            needk = int(need if np.ndim(need) == 0 else need[k])
            actk = int(act[k])
            self.record(BarrierDivergence(mask_names_absent(what, needk, actk)), line, k, None, None)
        return act

    def syncwarp(self, m, mask, line):
        self._check_warp_mask(m, mask, line, "syncwarp()")
        lanes = self.active(m)
        if lanes.size:
            gw = np.unique((lanes // self.T) * self.NW + (lanes % self.T) // WARP_SIZE)
            self.now += 1
            self.wbar_time[gw] = self.now
            self.now += 1

    def shuffle(self, kind, m, mask, value, arg, line):
        before = len(self.faults)
        self._check_warp_mask(m, mask, line, f"shfl_{kind}_sync()" if kind != "idx" else "shfl_sync()")
        mask_ok = len(self.faults) == before
        if not isinstance(value, np.ndarray):
            return value
        w = np.int64(WARP_SIZE)
        lid = self.laneid
        base = lid & ~(w - 1)
        a = np.asarray(arg).astype(np.int64) & (WARP_SIZE - 1)  # the hardware reads the low 5 bits (H200)
        if kind == "idx":
            src = base + (a % w)
        elif kind == "up":
            src = lid - a
            src = np.where(src < base, lid, src)
        elif kind == "down":
            src = lid + a
            src = np.where(src >= base + w, lid, src)
        else:
            src = lid ^ a
            src = np.where((src < base) | (src >= base + w), lid, src)
        src = np.where(src < self.warp_size_of, src, lid)
        gsrc = self.warp_base + src
        mm = m if isinstance(m, np.ndarray) else self.all_lanes
        bad = mm & ~mm[gsrc]  # reading a lane that is not taking part (another branch, or returned)
        if mask_ok and bad.any():
            k = int(np.flatnonzero(bad)[0])
            other = int(src[k])
            why = "has returned" if self.exited[gsrc[k]] else "is not executing this shuffle (another branch)"
            self.record(BarrierDivergence(
                f"shfl_{kind}_sync() in lane {int(lid[k])} reads lane {other}, which {why}: the value it gets "
                "is undefined."), line, k, None, None, ("source",))
        return value[gsrc]

    def vote(self, kind, m, mask, pred, line):
        self._check_warp_mask(m, mask, line, f"{kind}_sync()")
        if not isinstance(m, np.ndarray):
            m = self.all_lanes
        part = m & self._in_mask(mask)
        p = pred if isinstance(pred, np.ndarray) else np.full(self.N, pred)
        if kind == "eq":
            first = self._warp_first(p, part)
            return self._warp_bits(part & (p != first)) == 0
        ballot = self._warp_bits(p & part)
        if kind == "ballot":
            return ballot.view(np.int32)  # numba-cuda types ballot_sync as int32
        if kind == "any":
            return ballot != 0
        return ballot == self._warp_bits(part)

    def match(self, kind, m, mask, value, line):
        """``match_any_sync``: per lane, the bits of the lanes of its mask holding its value;
        ``match_all_sync``: (the mask's lanes, True) when they all hold one value, else (0, False)."""
        self._check_warp_mask(m, mask, line, f"match_{kind}_sync()")
        if not isinstance(m, np.ndarray):
            m = self.all_lanes
        part = m & self._in_mask(mask)
        v = value if isinstance(value, np.ndarray) else np.full(self.N, value)
        offs = np.arange(WARP_SIZE)
        idx = self.warp_base[:, None] + offs[None, :]
        exists = offs[None, :] < self.warp_size_of[:, None]
        idx = np.where(exists, idx, self.warp_base[:, None])
        same = (v[idx] == v[:, None]) & part[idx] & exists
        bits = (same.astype(np.uint64) << offs.astype(np.uint64)[None, :]).sum(axis=1).astype(np.uint32)
        if kind == "any":
            return bits.view(np.int32)
        part_bits = self._warp_bits(part)
        ok = bits == part_bits
        return (np.where(ok, part_bits, np.uint32(0)).view(np.int32), ok)

    def _in_mask(self, mask):
        maskv = np.asarray(mask).astype(np.uint32)
        return ((maskv >> self.laneid.astype(np.uint32)) & np.uint32(1)).astype(bool)

    def _warp_first(self, v, part):
        """Per lane: the value of the lowest participating lane of its warp."""
        idx = np.where(part, np.arange(self.N), self.N)
        if self.T % WARP_SIZE == 0:
            first = idx.reshape(-1, WARP_SIZE).min(axis=1).repeat(WARP_SIZE)
        else:
            starts = np.flatnonzero(self.laneid == 0)
            mins = np.minimum.reduceat(idx, starts)
            first = np.repeat(mins, np.diff(np.append(starts, self.N)))
        first = np.minimum(first, self.N - 1)
        return v[first]

    def activemask(self, m, line=0):
        if not isinstance(m, np.ndarray):
            m = self.all_lanes
        return self._warp_bits(m)
