"""Barriers and warp intrinsics over a chunk's lane vectors (``gpusim.runtime.sync``, restated as loops):
``syncthreads`` and its reductions, the warp-mask checks of every ``*_sync`` call, shuffles' source lanes,
votes, ``activemask``, ``syncwarp``. They advance the block and warp epochs the race shadow orders
accesses by.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...device import WARP_SIZE
from .layout import I_NOW
from .rtlib import OPTS, record

WARP = WARP_SIZE


@njit(**OPTS)
def syncthreads(m, exited, nb, T, b0, NW, BT, WBT, PH, I, FLOG, FSEEN, FCNT, key, present):
    """``Synchronisation.syncthreads``: check that every live thread of each present block arrived, then
    advance the blocks' and warps' epochs. ``present[b]`` says which blocks of the chunk took part."""
    bad = 0
    fb = -1
    f_first = 0
    f_missing = 0
    f_arrived = 0
    f_live = 0
    for b in range(nb):
        base = b * T
        anyp = False
        ok = True
        arrived = 0
        live = 0
        missing = -1
        first = -1
        for t in range(T):
            mm = m[base + t]
            ex = exited[base + t]
            if mm:
                anyp = True
                arrived += 1
                if first < 0:
                    first = t
            if not (mm or ex):
                ok = False
                if missing < 0:
                    missing = t
            if not ex:
                live += 1
        present[b] = anyp
        if anyp and not ok:
            bad += 1
            if fb < 0:
                fb = b
                f_first = first
                f_missing = missing
                f_arrived = arrived
                f_live = live
    if bad:
        g0 = (b0 + fb) * T
        record(FLOG, I, FSEEN, FCNT, key, bad, 9, g0 + f_first, g0 + f_missing, f_arrived, f_live)
    now = I[I_NOW] + 1
    for b in range(nb):
        if present[b]:
            gb = b0 + b
            BT[gb] = now
            for k in range(NW):
                WBT[gb * NW + k] = now
            PH[gb] += 1
    I[I_NOW] = now + 1


@njit(**OPTS)
def block_reduce(op, m, pred, nb, T, out):
    """``syncthreads_count/_and/_or`` after the barrier: per block, over its threads in ``m``."""
    for b in range(nb):
        base = b * T
        cnt = 0
        allp = True
        for t in range(T):
            if m[base + t]:
                if pred[base + t] != 0:
                    cnt += 1
                else:
                    allp = False
        r = cnt if op == 0 else (1 if allp else 0) if op == 1 else (1 if cnt > 0 else 0)
        for t in range(T):
            out[base + t] = r


@njit(inline="always")
def _warp_of(lane, T):
    """(first lane of the warp, lanes in it) for chunk lane ``lane``."""
    t = lane % T
    w0 = lane - t % WARP
    size = T - (t // WARP) * WARP
    return w0, (size if size < WARP else WARP)


@njit(**OPTS)
def warp_bits(flags, N, T, out):
    """Per lane: the OR over its warp of ``flags[lane] << laneid`` (uint32)."""
    lane = 0
    while lane < N:
        w0, size = _warp_of(lane, T)
        bits = np.uint32(0)
        for k in range(size):
            if flags[w0 + k]:
                bits |= np.uint32(1) << np.uint32(k)
        for k in range(size):
            out[w0 + k] = bits
        lane = w0 + size


@njit(**OPTS)
def check_warp_mask(m, mask, exited, N, T, what, key_out, key_miss, b0, I, FLOG, FSEEN, FCNT, act, live):
    """``_check_warp_mask``: executing lanes must be in the mask, live lanes of the mask must execute.
    Fills ``act`` (executing lanes' bits per lane). True when it logged a new fault key."""
    new = False
    gbase = b0 * T
    for lane in range(N):
        if m[lane]:
            ln = (lane % T) % WARP
            mk = np.uint32(mask[lane])
            if not (mk >> np.uint32(ln)) & np.uint32(1):
                new = record(FLOG, I, FSEEN, FCNT, key_out, 1, 10, gbase + lane, ln, np.int64(mk), what) or new
                break
    warp_bits(m, N, T, act)
    for lane in range(N):
        live[lane] = not exited[lane]
    lv = np.empty(N, np.uint32)
    warp_bits(live, N, T, lv)
    for lane in range(N):
        if m[lane]:
            w0, size = _warp_of(lane, T)
            exist = np.uint32(0xFFFFFFFF) if size >= WARP else (np.uint32(1) << np.uint32(size)) - np.uint32(1)
            need = np.uint32(mask[lane]) & exist & lv[lane]
            if need & ~act[lane]:
                new = record(FLOG, I, FSEEN, FCNT, key_miss, 1, 11, gbase + lane, np.int64(need),
                             np.int64(act[lane]), what) or new
                break
    return new


@njit(**OPTS)
def shuffle_sources(kind, arg, N, T, src):
    """Per lane: the chunk lane whose value a shuffle reads (its own where the source is outside the warp)."""
    for lane in range(N):
        w0, size = _warp_of(lane, T)
        lid = lane - w0
        a = np.int64(arg[lane]) & (WARP - 1)
        if kind == 0:
            s = a % WARP
        elif kind == 1:
            s = lid - a
            if s < 0:
                s = lid
        elif kind == 2:
            s = lid + a
            if s >= WARP:
                s = lid
        else:
            s = lid ^ a
        if s >= size:
            s = lid
        src[lane] = w0 + s


@njit(**OPTS)
def shuffle_check(m, exited, src, N, T, kindid, key, b0, I, FLOG, FSEEN, FCNT):
    for lane in range(N):
        if m[lane] and not m[src[lane]]:
            w0 = lane - ((lane % T) % WARP)
            record(FLOG, I, FSEEN, FCNT, key, 1, 12, b0 * T + lane, lane - w0, src[lane] - w0,
                   1 if exited[src[lane]] else 0, kindid)
            return


@njit(**OPTS)
def in_mask(m, mask, N, T, part):
    for lane in range(N):
        ln = (lane % T) % WARP
        part[lane] = m[lane] and ((np.uint32(mask[lane]) >> np.uint32(ln)) & np.uint32(1)) != 0


@njit(**OPTS)
def vote(kind, part, pred, N, T, out):
    """ballot (0: int32 bits), any (1), all (2), eq (3) over the participating lanes of each warp."""
    lane = 0
    while lane < N:
        w0, size = _warp_of(lane, T)
        ballot = np.uint32(0)
        pbits = np.uint32(0)
        first = -1
        same = True
        for k in range(size):
            if part[w0 + k]:
                pbits |= np.uint32(1) << np.uint32(k)
                p = pred[w0 + k]
                if p:
                    ballot |= np.uint32(1) << np.uint32(k)
                if first < 0:
                    first = w0 + k
                elif p != pred[first]:
                    same = False
        for k in range(size):
            if kind == 0:
                out[w0 + k] = np.int32(np.int64(ballot) - (np.int64(1) << 32) if ballot >= 2**31 else ballot)
            elif kind == 1:
                out[w0 + k] = ballot != 0
            elif kind == 2:
                out[w0 + k] = ballot == pbits
            else:
                out[w0 + k] = same
        lane = w0 + size


@njit(**OPTS)
def syncwarp_epochs(m, N, T, b0, NW, WBT, I):
    """``syncwarp``: the warps with executing lanes pass a warp barrier."""
    anyl = False
    for lane in range(N):
        if m[lane]:
            anyl = True
            break
    if not anyl:
        return
    now = I[I_NOW] + 1
    for lane in range(N):
        if m[lane]:
            gw = (b0 + lane // T) * NW + (lane % T) // WARP
            WBT[gw] = now
    I[I_NOW] = now + 1


@njit(**OPTS)
def first_lane(m, N):
    for k in range(N):
        if m[k]:
            return k
    return -1


@njit(**OPTS)
def count_lanes(m, N):
    c = 0
    for k in range(N):
        if m[k]:
            c += 1
    return c
