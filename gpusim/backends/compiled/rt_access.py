"""What an access group and a barrier mean for the observers, replayed after a region's lane loop: the race
shadow (``gpusim.observe.races.track``, restated for one lane), a local array's written flags, per-warp
requests (``gpusim.observe.coalescing``, ``gpusim.observe.banks``), per-thread and per-element counts, DRAM
segments, distinct (thread, element) pairs, and the phase trace's rows, each in the lanes back end's order.

Hot loops here call no function that takes an array: numba keeps atomic reference counts around such a
call, inlined or not, on every iteration.
"""

from __future__ import annotations

from numba import njit

from ...device import WARP_SIZE
from ...observe.banks import BANKS
from ...observe.coalescing import SECTOR
from .layout import (
    G_NTHREADS,
    G_TMAX_BLOCKS,
    G_TMAX_ROWS,
    I_BBLK,
    I_BLOG,
    I_DISTINCT,
    I_PAIRS,
    I_PAIRS_N,
    I_TDROP,
    I_TREC,
    I_TSTEP,
    P_ACCESS,
    P_ESIZE,
    P_INSTR,
    P_ISZ,
    P_KIND,
    P_KOOB,
    P_KRACE,
    P_KUNINIT,
    P_LINE,
    P_NDIM,
    P_READS,
    P_SLOT,
    P_SPACE,
    P_TKIND,
    P_TRACE,
    P_UNINIT,
    P_WRITES,
    S_LANES,
    S_OOB,
    S_OOB_DIM,
    S_OOB_IDX,
    S_OOB_LANE,
    S_RACE,
    S_RACE_ELEM,
    S_RACE_HAZ,
    S_RACE_LANE,
    S_RACE_OLINE,
    S_RACE_OTID,
    S_UN,
    S_UN_ELEM,
    S_UN_LANE,
    T_BYTES,
    T_EVENTS,
    T_IDEAL,
    T_LANES,
    T_REQ,
    T_SECT,
    W_AGG,
    W_ATOMIC,
    W_GLOBAL,
    W_NONE,
)
from .rtlib import MAX_PAIRS, OPTS, record

WARP = WARP_SIZE
READ, WRITE, ATOMIC = 0, 1, 2


@njit(**OPTS)
def site_events(P, EV, EL, n, gt0, b0, T, NW, now, res, W, A, Rr, BT, WBT, LW, cr, cw, er, ew, sr, sw, tot,
                SCR, PK, I, G, PH, TS, tsn, j, RC, gw, ln, BASE, SHB, SEG0, wk):
    """What one access group did, lane by lane in the lanes back end's order: the race shadow
    (``gpusim.observe.races.track``, restated for one lane), or a local array's written flags; the
    per-thread and per-element counts, the DRAM segments, the distinct pairs and the trace rows; then the
    per-warp requests (``requests``). ``EV``/``EL`` hold the elements and lanes of the ``n`` in-bounds active
    lanes. Returns the trace rows staged so far.

    The loop calls no function that takes an array: such a call (inlined or not) costs atomic reference
    counts on every iteration."""
    kind = P[P_KIND]
    line = P[P_LINE]
    uninit = P[P_UNINIT] != 0
    space = P[P_SPACE]
    isz = P[P_ISZ]
    slot = P[P_SLOT]
    esize = P[P_ESIZE]
    reads = P[P_READS] != 0
    writes = P[P_WRITES] != 0
    instr = P[P_INSTR] != 0
    trace = P[P_TRACE] != 0
    tkind = P[P_TKIND]
    hasW = W.shape[0] > 0
    hasA = A.shape[0] > 0
    hasR = Rr.shape[0] > 0
    tracked = hasW or hasA or hasR
    nth = G[G_NTHREADS]
    tmb = G[G_TMAX_BLOCKS]
    tmr = G[G_TMAX_ROWS]
    tsok = trace and (tmr < 0 or I[I_TREC] < tmr)
    base = BASE[slot] if space == 0 else (SHB[slot] if space == 1 else 0)
    seg0 = SEG0[slot]
    distinct = instr and space != 2 and I[I_DISTINCT] != 0
    # an access nothing observes lane by lane (an untracked array, no counts, no trace rows): no lane loop
    busy = space == 2 or tracked or instr or tsok
    if busy and space == 0 and not tracked and not distinct and not tsok:
        # an untracked global array's counts only (the common load of a large launch): one tight loop
        _count_lanes(EV, EL, n, gt0, base, isz, seg0, reads, writes, sr, sw, cr, cw, er, ew)
        busy = False
    # the block of the previous lane, kept: lanes come in order, and a division per lane costs more than the rest
    lb = -1
    lo = 0
    hi = 0
    last_sg = -1
    for k in range(n if busy else 0):
        e = EV[k]
        lane = EL[k]
        g = gt0 + lane
        if lane < lo or lane >= hi:
            lb = lane // T
            lo = lb * T
            hi = lo + T
        gb = b0 + lb
        if space == 2:
            x = lane * esize + e
            if kind == READ:
                if not LW[x]:
                    if res[S_UN] == 0:
                        res[S_UN_LANE] = lane
                        res[S_UN_ELEM] = x
                    res[S_UN] += 1
            else:
                LW[x] = True
        elif tracked:
            se = lb * esize + e if space == 1 else e
            w = gb * NW + (lane - lo) // WARP   # g % T: a chunk starts at a block
            btb = BT[gb]
            wbtw = WBT[w]
            wt = W[se, 0] - 1 if hasW else -1
            at = A[se, 0] - 1 if hasA else -1
            if kind != WRITE and uninit and wt == -1 and at == -1:
                if res[S_UN] == 0:
                    res[S_UN_LANE] = lane
                    res[S_UN_ELEM] = se
                res[S_UN] += 1
            if wt != -1 and wt != g:
                wtime = W[se, 1]
                if not (wt // T == gb and (btb > wtime or ((wt // T) * NW + (wt % T) // WARP == w and wbtw > wtime))):
                    if res[S_RACE] == 0:
                        res[S_RACE_LANE] = lane
                        res[S_RACE_ELEM] = se
                        res[S_RACE_OTID] = wt
                        res[S_RACE_OLINE] = W[se, 2]
                        res[S_RACE_HAZ] = 1 if kind == READ else 3
                    res[S_RACE] += 1
            if kind != ATOMIC and at != -1 and at != g:
                atime = A[se, 1]
                if at >= 0:
                    ordered = at // T == gb and (btb > atime or ((at // T) * NW + (at % T) // WARP == w
                                                                  and wbtw > atime))
                else:
                    ordered = A[se, 3] == gb and (btb > atime or (A[se, 4] == w and wbtw > atime))
                if not ordered:
                    if res[S_RACE] == 0:
                        res[S_RACE_LANE] = lane
                        res[S_RACE_ELEM] = se
                        res[S_RACE_OTID] = at
                        res[S_RACE_OLINE] = A[se, 2]
                        res[S_RACE_HAZ] = 1 if kind == READ else 3
                    res[S_RACE] += 1
            if kind == READ:
                if hasR:
                    rt = Rr[se, 0] - 1
                    if rt == -1 or rt == g:
                        Rr[se, 0] = g + 1
                        Rr[se, 3] = gb
                        Rr[se, 4] = w
                    else:
                        rb = Rr[se, 3]
                        if rb == gb and (btb > Rr[se, 1] or (Rr[se, 4] == w and wbtw > Rr[se, 1])):
                            Rr[se, 0] = g + 1
                            Rr[se, 4] = w
                        else:
                            Rr[se, 0] = -1
                            if rb != gb:
                                Rr[se, 3] = -2
                            if Rr[se, 4] != w:
                                Rr[se, 4] = -2
                    Rr[se, 1] = now
                    Rr[se, 2] = line
            else:
                if hasR:
                    rt = Rr[se, 0] - 1
                    if rt != -1 and rt != g:
                        rtime = Rr[se, 1]
                        if not (Rr[se, 3] == gb and (btb > rtime or (Rr[se, 4] == w and wbtw > rtime))):
                            if res[S_RACE] == 0:
                                res[S_RACE_LANE] = lane
                                res[S_RACE_ELEM] = se
                                res[S_RACE_OTID] = rt
                                res[S_RACE_OLINE] = Rr[se, 2]
                                res[S_RACE_HAZ] = 2
                            res[S_RACE] += 1
                if kind == WRITE:
                    if hasW:
                        W[se, 0] = g + 1
                        W[se, 1] = now
                        W[se, 2] = line
                    if hasA:
                        A[se, 0] = 0
                    if hasR:
                        Rr[se, 0] = 0
                elif hasA:
                    if at == -1 or at == g:
                        ordered = True
                    elif at >= 0:
                        atime = A[se, 1]
                        ordered = at // T == gb and (btb > atime or ((at // T) * NW + (at % T) // WARP == w
                                                                      and wbtw > atime))
                    else:
                        atime = A[se, 1]
                        ordered = A[se, 3] == gb and (btb > atime or (A[se, 4] == w and wbtw > atime))
                    if ordered:
                        A[se, 0] = g + 1
                        A[se, 3] = gb
                        A[se, 4] = w
                    else:
                        A[se, 0] = -1
                        if A[se, 3] != gb:
                            A[se, 3] = -2
                        if A[se, 4] != w:
                            A[se, 4] = -2
                    A[se, 1] = now
                    A[se, 2] = line
        if not instr:
            continue
        if space == 0 or space == 3:
            sg = ((base + e * isz) >> 6) - seg0     # addresses are not negative: a shift is the floor division
            if sg != last_sg:                       # coalesced lanes share a segment
                last_sg = sg
                if reads:
                    sr[sg] = True
                if writes:
                    sw[sg] = True
        if reads:
            cr[g] += 1
        if writes:
            cw[g] += 1
        if space != 2:
            ce = gb * esize + e if space == 1 else e
            if reads:
                er[ce] += 1
            if writes:
                ew[ce] += 1
            if distinct:
                I[I_PAIRS] += 1
                if I[I_PAIRS] > MAX_PAIRS:
                    I[I_DISTINCT] = 0
                    distinct = False
                else:
                    q = I[I_PAIRS_N]
                    key = ce * nth + g
                    if reads:
                        PK[q, 0] = key
                        PK[q, 1] = slot * 2
                        q += 1
                    if writes:
                        PK[q, 0] = key
                        PK[q, 1] = slot * 2 + 1
                        q += 1
                    I[I_PAIRS_N] = q
        if tsok and (tmb < 0 or gb < tmb):
            TS[tsn, 0] = j
            TS[tsn, 1] = gb
            TS[tsn, 2] = g - gb * T
            TS[tsn, 3] = PH[gb]
            TS[tsn, 4] = slot
            TS[tsn, 5] = e
            TS[tsn, 6] = tkind
            TS[tsn, 7] = line
            tsn += 1
    if instr:
        if space <= 1 and wk != W_NONE and n:
            requests(wk, isz, base, EV, EL, n, gw, ln, tot, SCR)
        tot[T_LANES] += n
        if n:
            tot[T_EVENTS] += 1
    res[S_LANES] = n
    RC[j] = n
    return tsn


@njit(inline="always")
def _count_lanes(EV, EL, n, gt0, base, isz, seg0, reads, writes, sr, sw, cr, cw, er, ew):
    """``site_events``'s counts of an untracked global access: DRAM segments, per-thread and per-element."""
    last_sg = -1
    for k in range(n):
        e = EV[k]
        g = gt0 + EL[k]
        sg = ((base + e * isz) >> 6) - seg0
        if sg != last_sg:
            last_sg = sg
            if reads:
                sr[sg] = True
            if writes:
                sw[sg] = True
        if reads:
            cr[g] += 1
            er[e] += 1
        if writes:
            cw[g] += 1
            ew[e] += 1


@njit(**OPTS)
def requests(wk, isz, base, EV, EL, n, gw, ln, tot, SCR):
    """The requests of one access group: its lanes split by warp (``gpusim.observe.requests``), each costed
    as ``gpusim.observe.coalescing`` (global) or ``gpusim.observe.banks`` (shared) count it."""
    k0 = 0
    while k0 < n:
        w = gw[EL[k0]]
        k1 = k0
        while k1 < n and gw[EL[k1]] == w:
            k1 += 1
        m = k1 - k0
        if wk == W_AGG:      # one lane of the warp does it
            tot[T_REQ] += 1
            tot[T_SECT] += 1
            tot[T_IDEAL] += 1
            tot[T_BYTES] += isz
            k0 = k1
            continue
        if wk == W_GLOBAL:   # lanes whose elements do not decrease (coalesced, broadcast): in order already
            mono = True
            for q in range(k0 + 1, k1):
                if EV[q] < EV[q - 1]:
                    mono = False
                    break
            if mono:
                distinct = 1
                sectors = 1
                prev = base + EV[k0] * isz
                for q in range(k0 + 1, k1):
                    x = base + EV[q] * isz
                    if x != prev:
                        distinct += 1
                        if x // SECTOR != prev // SECTOR:
                            sectors += 1
                    prev = x
                touched = distinct * isz
                tot[T_REQ] += 1
                tot[T_SECT] += sectors
                tot[T_IDEAL] += (touched + SECTOR - 1) // SECTOR
                tot[T_BYTES] += touched
                k0 = k1
                continue
        # a warp's slots: SCR[0:W] addresses, SCR[W:2W] lanes, SCR[2W:3W] per-bank counts, SCR[3W:4W] lane -> address
        for q in range(m):
            SCR[q] = base + EV[k0 + q] * isz
            SCR[WARP + q] = ln[EL[k0 + q]]
        # sort by address, lanes following (insertion sort: the common patterns are nearly sorted)
        for i in range(1, m):
            v = SCR[i]
            lv = SCR[WARP + i]
            q = i - 1
            while q >= 0 and SCR[q] > v:
                SCR[q + 1] = SCR[q]
                SCR[WARP + 1 + q] = SCR[WARP + q]
                q -= 1
            SCR[q + 1] = v
            SCR[WARP + 1 + q] = lv
        tot[T_REQ] += 1
        if wk == W_AGG:
            tot[T_SECT] += 1
            tot[T_IDEAL] += 1
            tot[T_BYTES] += isz
        elif wk == W_GLOBAL or wk == W_ATOMIC:
            distinct = 1
            if wk == W_ATOMIC:
                sectors = 0
                run = 1
                best = 1
                for q in range(1, m):
                    if SCR[q] == SCR[q - 1]:
                        run += 1
                    else:
                        distinct += 1
                        run = 1
                    if SCR[q] // SECTOR != SCR[q - 1] // SECTOR:
                        sectors += best
                        best = run
                    elif run > best:
                        best = run
                sectors += best
            else:
                sectors = 1
                for q in range(1, m):
                    if SCR[q] != SCR[q - 1]:
                        distinct += 1
                        if SCR[q] // SECTOR != SCR[q - 1] // SECTOR:
                            sectors += 1
            touched = distinct * isz
            tot[T_SECT] += sectors
            tot[T_IDEAL] += (touched + SECTOR - 1) // SECTOR
            tot[T_BYTES] += touched
        else:  # shared: wavefronts and bank conflicts
            if isz <= 4:
                parts = 1
                unit = 4
                groups = BANKS
            else:
                regs = isz // 4
                for q in range(WARP):
                    SCR[3 * WARP + q] = -1
                for q in range(m):
                    SCR[3 * WARP + SCR[WARP + q]] = SCR[q]
                p1 = True
                p2 = True
                for q in range(WARP):
                    x = SCR[3 * WARP + q]
                    if x < 0:
                        continue
                    y = SCR[3 * WARP + (q ^ 1)]
                    if y >= 0 and y != x:
                        p1 = False
                    y = SCR[3 * WARP + (q ^ 2)]
                    if y >= 0 and y != x:
                        p2 = False
                parts = regs // 2 if (p1 or p2) else regs
                if parts < 1:
                    parts = 1
                unit = isz
                groups = BANKS * 4 // isz
            width = WARP // parts
            wf = 0
            pieces = 0
            for piece in range(parts):
                for q in range(groups):
                    SCR[2 * WARP + q] = 0
                present = False
                prev = -1
                best = 0
                for q in range(m):
                    if SCR[WARP + q] // width != piece:
                        continue
                    present = True
                    word = SCR[q] // unit
                    if word == prev:
                        continue
                    prev = word
                    gq = word % groups
                    SCR[2 * WARP + gq] += 1
                    if SCR[2 * WARP + gq] > best:
                        best = SCR[2 * WARP + gq]
                if present:
                    pieces += 1
                    wf += best
            tot[T_SECT] += wf
            tot[T_IDEAL] += wf - pieces
        k0 = k1


@njit(**OPTS)
def site_faults(P, res, gt0, FLOG, I, FSEEN, FCNT, RSEEN, RCNT, nlines):
    """The faults one access group found, in the lanes back end's order: bounds, initialisation, races."""
    if res[S_OOB]:
        record(FLOG, I, FSEEN, FCNT, P[P_KOOB], res[S_OOB], 1, gt0 + res[S_OOB_LANE], P[P_SLOT], P[P_ACCESS],
               res[S_OOB_DIM], P[P_NDIM], res[S_OOB_IDX], res[S_OOB_IDX + 1], res[S_OOB_IDX + 2],
               res[S_OOB_IDX + 3])
    if res[S_UN] and P[P_KUNINIT] >= 0:
        record(FLOG, I, FSEEN, FCNT, P[P_KUNINIT], res[S_UN], 2, gt0 + res[S_UN_LANE], P[P_SLOT], res[S_UN_ELEM])
    if res[S_RACE] and P[P_KRACE] >= 0:
        record(FLOG, I, RSEEN, RCNT, P[P_KRACE] * nlines + res[S_RACE_OLINE], res[S_RACE], 3,
               gt0 + res[S_RACE_LANE], P[P_SLOT], res[S_RACE_ELEM], res[S_RACE_OTID], res[S_RACE_OLINE],
               res[S_RACE_HAZ], P[P_ACCESS])


@njit(**OPTS)
def trace_commit(TR, TS, tsn, nsites, RC, I, G):
    """The staged trace rows of one region, site by site in the lanes back end's order: each site that ran
    is one step; ``TraceObserver``'s limits on rows apply in that order."""
    step = I[I_TSTEP]
    maxrows = G[G_TMAX_ROWS]
    for j in range(nsites):
        nj = RC[j]
        if nj == 0:
            continue
        st = step
        step += 1
        kept = 0
        for r in range(tsn):
            if TS[r, 0] != j:
                continue
            if I[I_TREC] >= TR.shape[0] or (maxrows >= 0 and I[I_TREC] >= maxrows):
                break
            q = I[I_TREC]
            TR[q, 0] = st
            for c in range(1, 8):
                TR[q, c] = TS[r, c]
            I[I_TREC] += 1
            kept += 1
        I[I_TDROP] += nj - kept
        RC[j] = 0
    I[I_TSTEP] = step
    return 0


@njit(**OPTS)
def trace_barrier_in(BLOG, BBLK, present, nb, b0, line, I, G):
    """``TraceObserver.on_barrier`` into arrays with room (``grow_trace_barriers`` made it)."""
    tmb = G[G_TMAX_BLOCKS]
    cnt = 0
    for b in range(nb):
        if present[b] and (tmb < 0 or b0 + b < tmb):
            cnt += 1
    if cnt:
        row = I[I_BLOG]
        BLOG[row, 0] = I[I_TSTEP]
        BLOG[row, 1] = line
        BLOG[row, 2] = I[I_BBLK]
        BLOG[row, 3] = cnt
        I[I_BLOG] = row + 1
        k = I[I_BBLK]
        for b in range(nb):
            if present[b] and (tmb < 0 or b0 + b < tmb):
                BBLK[k] = b0 + b
                k += 1
        I[I_BBLK] = k
    I[I_TSTEP] += 1
