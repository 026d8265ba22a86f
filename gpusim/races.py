"""Race and uninitialised-read tracking with shadow memory and barrier epochs.

Every tracked element has a shadow record: the last writer (thread, time, line, atomic?) and a summary of the
readers since that write (one thread, or "several", the blocks and warp they came from, the latest read time).
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

READ, WRITE, ATOMIC = 0, 1, 2
HAZARDS = {1: "read after write", 2: "write after read", 3: "write after write"}

# result slots
R_RACE_POS, R_OTHER_TID, R_OTHER_LINE, R_HAZARD, R_RACES, R_UNINIT_POS, R_UNINITS = range(7)


class Shadow:
    """Shadow records for one array (or one chunk's copy of a shared array)."""

    __slots__ = ("w_tid", "w_time", "w_line", "w_atom", "r_tid", "r_time", "r_line", "r_blk", "r_warp")

    def __init__(self, size: int):
        self.w_tid = np.full(size, -1, np.int64)
        self.w_time = np.zeros(size, np.int64)
        self.w_line = np.zeros(size, np.int32)
        self.w_atom = np.zeros(size, np.bool_)
        self.r_tid = np.full(size, -1, np.int64)
        self.r_time = np.zeros(size, np.int64)
        self.r_line = np.zeros(size, np.int32)
        self.r_blk = np.full(size, -1, np.int64)
        self.r_warp = np.full(size, -1, np.int64)


@njit(cache=True, inline="always")
def _ordered(prev_tid, prev_time, b, w, T, NW, bar_time, wbar_time):
    pb = prev_tid // T
    if pb != b:
        return False
    if bar_time[b] > prev_time:
        return True
    pw = pb * NW + (prev_tid % T) // 32
    return pw == w and wbar_time[w] > prev_time


@njit(cache=True)
def track(elems, gtids, T, NW, now, line, kind, check_uninit,
          w_tid, w_time, w_line, w_atom, r_tid, r_time, r_line, r_blk, r_warp,
          bar_time, wbar_time, result):
    """Check and record one access group. ``result`` gets the first race / uninitialised read (lane position)."""
    for k in range(elems.size):
        e = elems[k]
        g = gtids[k]
        b = g // T
        w = b * NW + (g % T) // 32
        wt = w_tid[e]
        if kind != WRITE and check_uninit and wt < 0:
            if result[R_UNINITS] == 0:
                result[R_UNINIT_POS] = k
            result[R_UNINITS] += 1
        # against the last write
        if wt >= 0 and wt != g and not (kind == ATOMIC and w_atom[e]):
            if not _ordered(wt, w_time[e], b, w, T, NW, bar_time, wbar_time):
                if result[R_RACES] == 0:
                    result[R_RACE_POS] = k
                    result[R_OTHER_TID] = wt
                    result[R_OTHER_LINE] = w_line[e]
                    result[R_HAZARD] = 1 if kind == READ else 3
                result[R_RACES] += 1
        if kind == READ:
            rt = r_tid[e]
            if rt == -1 or rt == g:
                r_tid[e] = g
                r_blk[e] = b
                r_warp[e] = w
            else:
                rb = r_blk[e]
                if rb == b and (bar_time[b] > r_time[e] or (r_warp[e] == w and wbar_time[w] > r_time[e])):
                    r_tid[e] = g  # every earlier reader is ordered before this one: start afresh
                    r_warp[e] = w
                else:
                    r_tid[e] = -2
                    if rb != b:
                        r_blk[e] = -2
                    if r_warp[e] != w:
                        r_warp[e] = -2
            r_time[e] = now
            r_line[e] = line
        else:
            rt = r_tid[e]
            if rt != -1 and rt != g:
                rb = r_blk[e]
                ok = False
                if rb == b:
                    tr = r_time[e]
                    if bar_time[b] > tr:
                        ok = True
                    elif r_warp[e] == w and wbar_time[w] > tr:
                        ok = True
                if not ok:
                    if result[R_RACES] == 0:
                        result[R_RACE_POS] = k
                        result[R_OTHER_TID] = rt
                        result[R_OTHER_LINE] = r_line[e]
                        result[R_HAZARD] = 2
                    result[R_RACES] += 1
            w_tid[e] = g
            w_time[e] = now
            w_line[e] = line
            w_atom[e] = kind == ATOMIC
            if kind == WRITE:
                # a plain write orders every later conflicting access after the reads before it; an atomic
                # does not for later atomics, so the plain reads before it must still be checked against them
                r_tid[e] = -1


def new_result() -> np.ndarray:
    return np.zeros(7, np.int64)


def record(shadow: Shadow, elems: np.ndarray, gtids: np.ndarray, T: int, NW: int, now: int, line: int,
           kind: int, check_uninit: bool, bar_time: np.ndarray, wbar_time: np.ndarray) -> np.ndarray:
    res = new_result()
    track(elems, gtids, T, NW, now, line, kind, check_uninit,
          shadow.w_tid, shadow.w_time, shadow.w_line, shadow.w_atom, shadow.r_tid, shadow.r_time,
          shadow.r_line, shadow.r_blk, shadow.r_warp, bar_time, wbar_time, res)
    return res
