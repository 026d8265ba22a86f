"""Race and uninitialised-read tracking with shadow memory and barrier epochs.

Every tracked element has a shadow record: the last plain write (thread, time, line), and summaries of the
atomics and of the plain reads since that write (one thread, or "several" with the block and warp they share,
the latest time).
Time is a counter that advances at every access group and barrier. A block's last ``syncthreads`` time and a
warp's last ``syncwarp``/``syncthreads`` time say whether an earlier access is ordered before the current one:

    earlier access by thread p at time t is ordered before thread c's access
      <=> same block and (block's last barrier > t  or  same warp and warp's last barrier > t)

Blocks are never ordered within a launch. Two accesses to one element by different threads, at least one a
write, not both atomic, and not ordered, are a race: read after write, write after read, write after write.
The check is symmetric, so the order in which lanes happen to run cannot hide a race.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..device import MAX_SIMULATED_THREADS, WARP_SIZE

READ, WRITE, ATOMIC = 0, 1, 2
HAZARDS = {1: "read after write", 2: "write after read", 3: "write after write"}

# result slots
R_RACE_POS, R_OTHER_TID, R_OTHER_LINE, R_HAZARD, R_RACES, R_UNINIT_POS, R_UNINITS = range(7)


#: thread, block and warp ids of a launch fit int32 (stored + 1, so -2 "several" is -1)
_ID = np.int32
assert MAX_SIMULATED_THREADS + 1 < np.iinfo(_ID).max
_NONE = np.zeros(0, _ID)


class Shadow:
    """Shadow records for one array (or one chunk's copy of a shared array).

    Layout (the contract every back end that reads or updates these fields follows):

    * ids are stored **plus one**: ``*_tid``, ``*_blk``, ``*_warp`` hold ``value + 1``, so 0 is "none" (was
      -1) and -1 is "several" (was -2); a thread id ``g`` is stored as ``g + 1``. Fresh records are
      ``np.zeros``, whose pages are never touched (never resident) until an access writes them.
    * dtypes: ``*_tid``, ``*_blk``, ``*_warp``, ``*_line`` int32 (a launch has at most
      ``MAX_SIMULATED_THREADS`` threads); ``*_time`` int64.
    * the write group (``w_*``) exists from the start; the atomic group (``a_*``) and the read group (``r_*``)
      are size-0 arrays until ``need(kind)`` allocates the group an access of that kind updates (a read: the
      read group, an atomic: the atomic group). A size-0 group means "no such access since the launch began":
      every record of it reads as none. A plain write clears a group's record only where it is not none
      already (so it never touches a page it does not have to).
    """

    __slots__ = ("size", "w_tid", "w_time", "w_line", "a_tid", "a_time", "a_line", "a_blk", "a_warp", "r_tid",
                 "r_time", "r_line", "r_blk", "r_warp")

    def __init__(self, size: int):
        self.size = size
        # the last plain write (tid 0: none)
        self.w_tid = np.zeros(size, _ID)
        self.w_time = np.zeros(size, np.int64)
        self.w_line = np.zeros(size, np.int32)
        # the atomics since that write: none (0), one thread (tid + 1), or several (-1) with the block / warp
        # they all come from (+ 1; -1 when they differ) and the latest time
        self.a_tid = self.a_blk = self.a_warp = self.a_line = _NONE
        self.a_time = _NONE.astype(np.int64)
        # the plain reads since that write, summarised the same way
        self.r_tid = self.r_blk = self.r_warp = self.r_line = _NONE
        self.r_time = _NONE.astype(np.int64)

    def need(self, kind: int) -> None:
        """Allocate the group an access of ``kind`` updates, if it is not there yet."""
        n = self.size
        if kind == READ and self.r_tid.size != n:
            self.r_tid, self.r_blk, self.r_warp = np.zeros(n, _ID), np.zeros(n, _ID), np.zeros(n, _ID)
            self.r_time, self.r_line = np.zeros(n, np.int64), np.zeros(n, np.int32)
        elif kind == ATOMIC and self.a_tid.size != n:
            self.a_tid, self.a_blk, self.a_warp = np.zeros(n, _ID), np.zeros(n, _ID), np.zeros(n, _ID)
            self.a_time, self.a_line = np.zeros(n, np.int64), np.zeros(n, np.int32)

    def forget(self) -> None:
        """Every record back to none (a grid barrier orders everything before it)."""
        for rec in (self.w_tid, self.a_tid, self.r_tid):
            rec.fill(0)


@njit(cache=True, inline="always")
def _ordered(prev_tid, prev_time, bT, T, wlo, whi, bar, wbar):
    """Is an earlier access by thread ``prev_tid`` at ``prev_time`` ordered before the current one? The
    current thread's block holds threads ``[bT, bT + T)``, its warp ``[wlo, whi)``; ``bar``/``wbar`` are their
    last barrier times. Comparisons only (no division), all evaluated, so the branch that follows is the one
    whose outcome hardly ever changes."""
    return (prev_tid >= bT) & (prev_tid < bT + T) & ((bar > prev_time)
                                                     | ((prev_tid >= wlo) & (prev_tid < whi) & (wbar > prev_time)))


@njit(cache=True, inline="always")
def _ordered_group(blk, warp, time, b, w, bar, wbar):
    """Are earlier accesses, all from block ``blk`` (-2: several) and warp ``warp`` (-2: several), the latest
    at ``time``, ordered before an access by a thread of block ``b``, warp ``w``?"""
    return (blk == b) & ((bar > time) | ((warp == w) & (wbar > time)))


@njit(cache=True, inline="always")
def _hit(result, k, other_tid, other_line, hazard):
    if result[R_RACES] == 0:
        result[R_RACE_POS] = k
        result[R_OTHER_TID] = other_tid
        result[R_OTHER_LINE] = other_line
        result[R_HAZARD] = hazard
    result[R_RACES] += 1


@njit(cache=True)
def track(elems, lanes, lane_block, lane_warp_in_block, T, NW, now, line, kind, check_uninit,
          w_tid, w_time, w_line, a_tid, a_time, a_line, a_blk, a_warp, r_tid, r_time, r_line, r_blk, r_warp,
          b0, bar_time, wbar_time, result):
    """Check and record one access group. ``result`` gets the first race / uninitialised read (lane position).

    Plain reads conflict with plain writes and atomics; plain writes with everything; atomics with plain
    reads and writes but not with other atomics. A plain write supersedes what came before it (anything it
    is ordered after, a later access ordered after it is ordered after too; anything it is not, is a race
    already reported), so it clears the reads and atomics; an atomic supersedes nothing.

    The accesses are those of chunk lanes ``lanes`` (thread ``b0 * T + lane``); ``lane_block`` and
    ``lane_warp_in_block`` give each chunk lane's block in the chunk and warp in its block.
    ``bar_time``/``wbar_time`` hold the barrier times of the current chunk's blocks and warps, from block
    ``b0``: every index into them is the current access's block or warp, always in the chunk.

    The summary updates are written as selects rather than branches: which way they go changes from lane to
    lane, and a mispredicted branch on a value just loaded from the shadow waits for that load."""
    g0 = b0 * T
    w0 = b0 * NW
    has_a = a_tid.size != 0  # a size-0 group: no such access yet, every record none
    has_r = r_tid.size != 0
    bl = wl = b = w = bT = wlo = whi = bar = wbar = 0
    for k in range(elems.size):
        e = elems[k]
        lane = lanes[k]
        g = g0 + lane
        if g >= whi or g < wlo:  # the first lane of another warp (a warp's lanes come together)
            bl = lane_block[lane]  # block and warp in the chunk
            wib = lane_warp_in_block[lane]
            wl = bl * NW + wib
            b = b0 + bl
            w = w0 + wl
            bT = b * T  # the block's threads are [bT, bT + T), the warp's [wlo, whi)
            wlo = bT + wib * WARP_SIZE
            whi = min(wlo + WARP_SIZE, bT + T)
            bar = bar_time[bl]
            wbar = wbar_time[wl]
        # ids are stored + 1 (0: none, -1: several): decode on load, encode on store
        wt = w_tid[e] - 1
        at = a_tid[e] - 1 if has_a else -1
        if kind != WRITE and check_uninit and wt == -1 and at == -1:
            if result[R_UNINITS] == 0:
                result[R_UNINIT_POS] = k
            result[R_UNINITS] += 1
        # against the last plain write
        if (wt != -1) & (wt != g) & (not _ordered(wt, w_time[e], bT, T, wlo, whi, bar, wbar)):
            _hit(result, k, wt, w_line[e], 1 if kind == READ else 3)
        # against the atomics since (an atomic never races with an atomic)
        if kind != ATOMIC and at != -1 and at != g:
            if not (_ordered(at, a_time[e], bT, T, wlo, whi, bar, wbar) if at >= 0 else
                    _ordered_group(a_blk[e] - 1, a_warp[e] - 1, a_time[e], b, w, bar, wbar)):
                _hit(result, k, at, a_line[e], 1 if kind == READ else 3)
        if kind == READ:  # the read group is there (``Shadow.need``)
            rt = r_tid[e] - 1
            rb = r_blk[e] - 1
            rw = r_warp[e] - 1
            # the first reader since the write (or the same one again), or every earlier reader is ordered
            # before this one: start afresh; otherwise several readers, with the block / warp they share
            first = (rt == -1) | (rt == g)
            same_blk = rb == b
            same_warp = rw == w
            afresh = first | _ordered_group(rb, rw, r_time[e], b, w, bar, wbar)
            r_tid[e] = (g if afresh else -2) + 1
            r_blk[e] = (b if first | same_blk else -2) + 1
            r_warp[e] = (w if afresh | same_warp else -2) + 1
            r_time[e] = now
            r_line[e] = line
            continue
        # a write or an atomic, against the reads since the last plain write
        rt = r_tid[e] - 1 if has_r else -1
        if rt != -1 and rt != g and not _ordered_group(r_blk[e] - 1, r_warp[e] - 1, r_time[e], b, w, bar, wbar):
            _hit(result, k, rt, r_line[e], 2)
        if kind == WRITE:
            w_tid[e] = g + 1
            w_time[e] = now
            w_line[e] = line
            if at != -1:  # only where there is something to clear: a page never written stays untouched
                a_tid[e] = 0
            if rt != -1:
                r_tid[e] = 0
        else:  # an atomic: the atomic group is there (``Shadow.need``)
            if at == -1 or at == g or (_ordered(at, a_time[e], bT, T, wlo, whi, bar, wbar) if at >= 0
                                       else _ordered_group(a_blk[e] - 1, a_warp[e] - 1, a_time[e], b, w, bar,
                                                           wbar)):
                a_tid[e] = g + 1  # every earlier atomic is ordered before this one (or is this thread's)
                a_blk[e] = b + 1
                a_warp[e] = w + 1
            else:
                a_tid[e] = -1  # several
                if a_blk[e] - 1 != b:
                    a_blk[e] = -1
                if a_warp[e] - 1 != w:
                    a_warp[e] = -1
            a_time[e] = now
            a_line[e] = line


def new_result() -> np.ndarray:
    return np.zeros(7, np.int64)


def record(shadow: Shadow, elems: np.ndarray, gtids: np.ndarray, T: int, NW: int, now: int, line: int,
           kind: int, check_uninit: bool, b0: int, bar_time: np.ndarray, wbar_time: np.ndarray) -> np.ndarray:
    """``record_lanes`` for accesses named by thread id (``gtids``, all in the chunk from block ``b0``)."""
    lanes = np.asarray(gtids, np.int64) - b0 * T
    lane = np.arange(int(lanes.max()) + 1 if lanes.size else 0, dtype=np.int64)
    return record_lanes(shadow, elems, lanes, lane // T, (lane % T) // WARP_SIZE, T, NW, now, line, kind,
                        check_uninit, b0, bar_time, wbar_time)


def record_lanes(shadow: Shadow, elems: np.ndarray, lanes: np.ndarray, lane_block: np.ndarray,
                 lane_warp_in_block: np.ndarray, T: int, NW: int, now: int, line: int, kind: int,
                 check_uninit: bool, b0: int, bar_time: np.ndarray, wbar_time: np.ndarray) -> np.ndarray:
    res = new_result()
    shadow.need(kind)
    track(elems, lanes, lane_block, lane_warp_in_block, T, NW, now, line, kind, check_uninit,
          shadow.w_tid, shadow.w_time, shadow.w_line, shadow.a_tid, shadow.a_time, shadow.a_line, shadow.a_blk,
          shadow.a_warp, shadow.r_tid, shadow.r_time, shadow.r_line, shadow.r_blk, shadow.r_warp, b0, bar_time,
          wbar_time, res)
    return res
