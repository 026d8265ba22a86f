"""The latency rounds (``gpusim.observe.rounds``) in compiled code: what one access group and one barrier do
to each warp's rounds, replayed in the lanes back end's order after a region's lane loop, as
``RoundsObserver.on_access`` and ``on_barrier`` do it for the lanes back end's events.

State, per launch (``driver.build_state``; every array a row per warp is shared by a parallel launch's
workers, each warp belonging to one):

* ``RW`` (warps x ``RW_COLS``): per warp, the times of its last store/atomic/barrier per space, of its last
  global and shared load, whether its open global round goes to DRAM, the rounds it opened per space, and its
  DRAM, L2 and shared rounds;
* ``RSS`` (load sites x warps, 2): per (array, line) load site and warp, the round its last load joined and
  how many of its loads are in it (``UNROLL`` at most);
* ``RB``: barriers passed per block;
* per global or constant array, ``rt``: per 64-byte segment, the tick of the access event that first touched
  it (0: none yet; the event's own tick: its lanes run together and count as one); ``rc``: atomic operations
  per element.

The clock ``I[I_RNOW]`` ticks once per access event that has lanes and once per barrier, as
``RoundsObserver.now`` does; only its order within a warp matters. Loops the compiler unrolls at run time
(``gpusim.ir.unroll``) are not modelled here: the compiled back end refuses instrumented launches of kernels
that have one (``codegen.KernelGen``).
"""

from __future__ import annotations

from numba import njit

from ...observe.dram import SEGMENT
from ...observe.rounds import UNROLL
from .layout import I_RNOW, I_RPASS
from .rtlib import OPTS

RW_LUG, RW_LUS, RW_LL, RW_LSL, RW_OPEN, RW_RIDG, RW_RIDS, RW_DRAM, RW_L2, RW_SH = range(10)
RW_COLS = 10
#: the initial value of each column (``RoundsObserver.start``)
RW_INIT = (-1, -1, -2, -2, 0, 0, 0, 0, 0, 0)
SEGMENT_BITS = SEGMENT.bit_length() - 1
LD, ST, ATOM, RED = 0, 1, 2, 3          # the trace's kind codes (``regions.TRACE_KIND``)


@njit(inline="always")
def _opens(RW, RSS, w, site_row, c_last, c_use, c_rid):
    """``rounds._open_rounds`` for one warp outside a run-time unrolled loop: does its load open a round?"""
    r = RW[w, c_rid]
    same = RSS[site_row, 0] == r
    opens = RW[w, c_last] < RW[w, c_use] or (same and RSS[site_row, 1] >= UNROLL)
    if opens:
        r += 1
        RW[w, c_rid] = r
    RSS[site_row, 1] = RSS[site_row, 1] + 1 if same and not opens else 1
    RSS[site_row, 0] = r
    return opens


@njit(**OPTS)
def access_rounds(tkind, space, rsite, isz, base, aggregated, EV, EL, n, gw, RW, RSS, rt, rc, I):
    """One access group's ``n`` lanes (elements ``EV``, chunk lanes ``EL``, in lane order; ``gw``: a chunk
    lane's global warp) into the rounds state; ``space``: 0 global, 1 shared, 3 constant."""
    if n == 0:
        return
    now = I[I_RNOW] + 1
    I[I_RNOW] = now
    nwt = RW.shape[0]
    off = base % SEGMENT
    k0 = 0
    while k0 < n:
        w = gw[EL[k0]]
        k1 = k0 + 1
        while k1 < n and gw[EL[k1]] == w:
            k1 += 1
        if space == 1:
            if tkind == LD:
                if _opens(RW, RSS, w, rsite * nwt + w, RW_LSL, RW_LUS, RW_RIDS):
                    RW[w, RW_SH] += 1
                RW[w, RW_LSL] = now
            else:
                RW[w, RW_LUG] = now
                RW[w, RW_LUS] = now
                if tkind == ATOM or tkind == RED:   # lanes on one address are served one after another
                    best = 0
                    for a in range(k0, k1):
                        c = 0
                        for b in range(k0, k1):
                            if EV[b] == EV[a]:
                                c += 1
                        if c > best:
                            best = c
                    I[I_RPASS] += best
        else:
            # a segment no earlier event touched (this event's other lanes count as one with these)
            miss = False
            last = -1
            for k in range(k0, k1):
                sg = (off + EV[k] * isz) >> SEGMENT_BITS
                if sg == last:      # the lane before had it (coalesced lanes share a segment)
                    continue
                last = sg
                s = rt[sg]
                if s == 0 or s == now:
                    miss = True
                    rt[sg] = now
            if tkind == LD:
                if _opens(RW, RSS, w, rsite * nwt + w, RW_LL, RW_LUG, RW_RIDG):
                    if miss:
                        RW[w, RW_DRAM] += 1
                    else:
                        RW[w, RW_L2] += 1
                    RW[w, RW_OPEN] = 1 if miss else 0
                elif miss and RW[w, RW_OPEN] == 0:   # the open round was on chip and now also waits for DRAM
                    RW[w, RW_L2] -= 1
                    RW[w, RW_DRAM] += 1
                    RW[w, RW_OPEN] = 1
                RW[w, RW_LL] = now
            else:
                if tkind == ATOM:
                    RW[w, RW_L2] += 1
                if (tkind == ATOM or tkind == RED) and space == 0:
                    if aggregated:      # the compiler has one lane per warp do it
                        rc[EV[k0]] += 1
                    else:
                        for k in range(k0, k1):
                            rc[EV[k]] += 1
                    RW[w, RW_LUS] = now
                RW[w, RW_LUG] = now
        k0 = k1


@njit(**OPTS)
def barrier_rounds(present, nb, b0, NW, RW, RB, I):
    """``RoundsObserver.on_barrier``: the blocks of the chunk that passed (``present``) count a barrier, and
    their warps' later loads wait behind it."""
    now = I[I_RNOW] + 1
    I[I_RNOW] = now
    if RB.shape[0] == 0:
        return
    for b in range(nb):
        if present[b]:
            gb = b0 + b
            RB[gb] += 1
            for k in range(NW):
                RW[gb * NW + k, RW_LUG] = now
                RW[gb * NW + k, RW_LUS] = now
