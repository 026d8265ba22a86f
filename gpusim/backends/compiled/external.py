"""The compiled helpers as C entry points, so that a kernel's compile does not include them.

numba links every jitted function a kernel calls into the kernel's own module and optimizes the whole again:
seconds per kernel for the race shadow, the request model and the barrier checks. These helpers are
compiled once instead (``cfunc``, cached on disk), registered as external symbols, and called from generated
code by name (``types.ExternalFunction``), which also works for kernels loaded from numba's cache in a new
process. They find the launch's arrays through one int64 array, ``DESC``: for each array of
``layout.DESC_NAMES`` (then one per ``layout.SLOT_ARRAYS`` name per slot) its address, rows and columns.
"""

from __future__ import annotations

import llvmlite.binding as llb
import numpy as np
from numba import carray, cfunc, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from . import rt_access as RA
from . import rt_rounds as RR
from . import rt_sync as RS
from . import rtlib as R
from .layout import (
    DESC_INDEX,
    G_NLINES,
    G_NW,
    G_T,
    I_BBLK,
    I_BLOG,
    I_TSTEP,
    P_COLS,
    P_INSTR,
    P_ISZ,
    P_RSITE,
    P_SLOT,
    P_SPACE,
    P_TKIND,
    SLOT_ARRAYS,
    SLOT_BASE,
    W_AGG,
)


@intrinsic
def _voidptr(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(x), codegen


def _index(name: str) -> int:
    return 3 * (1 + DESC_INDEX[name])       # triple 0 holds DESC's own length


def _slot_index(slot: int, what: str) -> int:
    return 3 * (1 + SLOT_BASE + slot * len(SLOT_ARRAYS) + SLOT_ARRAYS.index(what))


@njit(inline="always")
def _desc(desc):
    return carray(desc, (carray(desc, 1)[0],))


@njit(inline="always")
def _a1(D, k, dtype):
    return carray(_voidptr(D[k]), (D[k + 1],), dtype)


@njit(inline="always")
def _a2(D, k, dtype):
    return carray(_voidptr(D[k]), (D[k + 1], D[k + 2]), dtype)


# fixed DESC offsets, as constants for the compiled code
_G, _I, _BT, _WBT, _PH = (_index(n) for n in ("G", "I", "BT", "WBT", "PH"))
_FLOG, _FSEEN, _FCNT, _RSEEN, _RCNT = (_index(n) for n in ("FLOG", "FSEEN", "FCNT", "RSEEN", "RCNT"))
_SS, _SCR, _TS, _RC, _RS, _PK = (_index(n) for n in ("SS", "SCR", "TS", "RC", "RS", "PK"))
_BASE, _SEG0, _SHB, _SP, _EV, _EL = (_index(n) for n in ("BASE", "SEG0", "SHB", "SP", "EV", "EL"))
_GW, _LN, _TR, _BLOG, _BBLK, _PRESENT = (_index(n) for n in ("gw_", "ln_", "TR", "BLOG", "BBLK", "present_"))
_RW, _RB, _RSS = (_index(n) for n in ("RW", "RB", "RSS"))
_NSLOT = 3 * len(SLOT_ARRAYS)
_SW, _SA, _SR, _SLW, _SCRD, _SCW, _SER, _SEW, _SSR, _SSW, _SRT, _SRC = (3 * k for k in range(len(SLOT_ARRAYS)))

P64 = types.CPointer(types.int64)
PB = types.CPointer(types.boolean)
P32 = types.CPointer(types.int32)
PU32 = types.CPointer(types.uint32)
I64 = types.int64

_REGISTERED: dict[str, object] = {}


def _export(name: str, sig, func):
    """Compile ``func`` as a C entry point, register it as symbol ``gpusim_<name>`` and return the external
    function generated code calls."""
    c = cfunc(sig, nopython=True, cache=True, error_model="numpy")(func)
    symbol = f"gpusim_{name}"
    llb.add_symbol(symbol, c.address)
    _REGISTERED[symbol] = c  # keep the machine code alive
    return types.ExternalFunction(symbol, sig)


# ---------------------------------------------------------------------------------------------- access sites

def _site_end(desc, sid, j, n, gt0, b0, now, tsn, wk):
    D = _desc(desc)
    G = _a1(D, _G, np.int64)
    I = _a1(D, _I, np.int64)
    SP = _a2(D, _SP, np.int64)
    P = SP[sid]
    slot = P[P_SLOT]
    s0 = 3 * (1 + SLOT_BASE) + slot * _NSLOT
    res = _a2(D, _RS, np.int64)[j]
    tsn = RA.site_events(P, _a2(D, _EV, np.int64)[j], _a2(D, _EL, np.int64)[j], n, gt0, b0, G[G_T], G[G_NW], now,
                        res, _a2(D, s0 + _SW, np.int64), _a2(D, s0 + _SA, np.int64), _a2(D, s0 + _SR, np.int64),
                        _a1(D, _BT, np.int64), _a1(D, _WBT, np.int64), _a1(D, s0 + _SLW, np.bool_),
                        _a1(D, s0 + _SCRD, np.int32), _a1(D, s0 + _SCW, np.int32), _a1(D, s0 + _SER, np.int32),
                        _a1(D, s0 + _SEW, np.int32), _a1(D, s0 + _SSR, np.bool_), _a1(D, s0 + _SSW, np.bool_),
                        _a2(D, _SS, np.int64)[P[12]], _a1(D, _SCR, np.int64), _a2(D, _PK, np.int64), I, G,
                        _a1(D, _PH, np.int64), _a2(D, _TS, np.int64), tsn, j, _a1(D, _RC, np.int64),
                        _a1(D, _GW, np.int64), _a1(D, _LN, np.int32), _a1(D, _BASE, np.int64),
                        _a1(D, _SHB, np.int64), _a1(D, _SEG0, np.int64), wk)
    RA.site_faults(P, res, gt0, _a2(D, _FLOG, np.int64), I, _a1(D, _FSEEN, np.bool_), _a1(D, _FCNT, np.int64),
                  _a1(D, _RSEEN, np.bool_), _a1(D, _RCNT, np.int64), G[G_NLINES])
    space = P[P_SPACE]
    if P[P_INSTR] != 0 and space != 2:     # the latency rounds (local arrays have none)
        base = _a1(D, _BASE, np.int64)[slot] if space == 0 else 0
        RR.access_rounds(P[P_TKIND], space, P[P_RSITE], P[P_ISZ], base, wk == W_AGG, _a2(D, _EV, np.int64)[j],
                         _a2(D, _EL, np.int64)[j], n, _a1(D, _GW, np.int64), _a2(D, _RW, np.int64),
                         _a2(D, _RSS, np.int64), _a1(D, s0 + _SRT, np.int64), _a1(D, s0 + _SRC, np.int64), I)
    return tsn


site_end = _export("site_end", I64(P64, I64, I64, I64, I64, I64, I64, I64, I64), _site_end)


def _fault(desc, key, inc, kind, gtid, p0, p1):
    D = _desc(desc)
    return 1 if R.record(_a2(D, _FLOG, np.int64), _a1(D, _I, np.int64), _a1(D, _FSEEN, np.bool_),
                         _a1(D, _FCNT, np.int64), key, inc, kind, gtid, p0, p1) else 0


fault = _export("fault", I64(P64, I64, I64, I64, I64, I64, I64), _fault)


def _trace_commit(desc, tsn, nsites):
    D = _desc(desc)
    RA.trace_commit(_a2(D, _TR, np.int64), _a2(D, _TS, np.int64), tsn, nsites, _a1(D, _RC, np.int64),
                   _a1(D, _I, np.int64), _a1(D, _G, np.int64))
    return 0


trace_commit = _export("trace_commit", I64(P64, I64, I64), _trace_commit)


# ---------------------------------------------------------------------------------------------- barriers

def _barrier(desc, m, dn, nb, b0, key, line, trace):
    """``syncthreads``: the check, the epochs, and (``trace``) the trace's record of it. The caller made room
    in BLOG/BBLK."""
    D = _desc(desc)
    G = _a1(D, _G, np.int64)
    I = _a1(D, _I, np.int64)
    T = G[G_T]
    N = nb * T
    present = _a1(D, _PRESENT, np.bool_)
    RS.syncthreads(carray(m, N), carray(dn, N), nb, T, b0, G[G_NW], _a1(D, _BT, np.int64), _a1(D, _WBT, np.int64),
                  _a1(D, _PH, np.int64), I, _a2(D, _FLOG, np.int64), _a1(D, _FSEEN, np.bool_),
                  _a1(D, _FCNT, np.int64), key, present)
    RR.barrier_rounds(present, nb, b0, G[G_NW], _a2(D, _RW, np.int64), _a1(D, _RB, np.int64), I)
    if trace:
        RA.trace_barrier_in(_a2(D, _BLOG, np.int64), _a1(D, _BBLK, np.int64), present, nb, b0, line, I, G)
    return 0


barrier = _export("barrier", I64(P64, PB, PB, I64, I64, I64, I64, I64), _barrier)


def _block_reduce(op, m, pred, nb, T, out):
    N = nb * T
    RS.block_reduce(op, carray(m, N), carray(pred, N), nb, T, carray(out, N))
    return 0


block_reduce = _export("block_reduce", I64(I64, PB, P32, I64, I64, P32), _block_reduce)


# ---------------------------------------------------------------------------------------------- warps

def _warp_mask(desc, m, mask, dn, N, what, key_out, key_miss, b0, act, live):
    D = _desc(desc)
    G = _a1(D, _G, np.int64)
    new = RS.check_warp_mask(carray(m, N), carray(mask, N), carray(dn, N), N, G[G_T], what, key_out, key_miss, b0,
                            _a1(D, _I, np.int64), _a2(D, _FLOG, np.int64), _a1(D, _FSEEN, np.bool_),
                            _a1(D, _FCNT, np.int64), carray(act, N), carray(live, N))
    return 1 if new else 0


warp_mask = _export("warp_mask", I64(P64, PB, PU32, PB, I64, I64, I64, I64, I64, PU32, PB), _warp_mask)


def _warp_bits(m, N, T, out):
    RS.warp_bits(carray(m, N), N, T, carray(out, N))
    return 0


warp_bits = _export("warp_bits", I64(PB, I64, I64, PU32), _warp_bits)


def _shuffle_src(kind, arg, N, T, src):
    RS.shuffle_sources(kind, carray(arg, N), N, T, carray(src, N))
    return 0


shuffle_src = _export("shuffle_src", I64(I64, P32, I64, I64, P64), _shuffle_src)


def _shuffle_check(desc, m, dn, src, N, kid, key, b0):
    D = _desc(desc)
    G = _a1(D, _G, np.int64)
    RS.shuffle_check(carray(m, N), carray(dn, N), carray(src, N), N, G[G_T], kid, key, b0, _a1(D, _I, np.int64),
                    _a2(D, _FLOG, np.int64), _a1(D, _FSEEN, np.bool_), _a1(D, _FCNT, np.int64))
    return 0


shuffle_check = _export("shuffle_check", I64(P64, PB, PB, P64, I64, I64, I64, I64), _shuffle_check)


def _in_mask(m, mask, N, T, part):
    RS.in_mask(carray(m, N), carray(mask, N), N, T, carray(part, N))
    return 0


in_mask = _export("in_mask", I64(PB, PU32, I64, I64, PB), _in_mask)


def _vote(kind, part, pred, N, T, out32, outb):
    if kind == 0:
        RS.vote(kind, carray(part, N), carray(pred, N), N, T, carray(out32, N))
    else:
        RS.vote(kind, carray(part, N), carray(pred, N), N, T, carray(outb, N))
    return 0


vote = _export("vote", I64(I64, PB, PB, I64, I64, P32, PB), _vote)


def _syncwarp(desc, m, N, b0):
    D = _desc(desc)
    G = _a1(D, _G, np.int64)
    RS.syncwarp_epochs(carray(m, N), N, G[G_T], b0, G[G_NW], _a1(D, _WBT, np.int64), _a1(D, _I, np.int64))
    return 0


syncwarp = _export("syncwarp", I64(P64, PB, I64, I64), _syncwarp)


def _first_lane(m, N):
    return RS.first_lane(carray(m, N), N)


first_lane = _export("first_lane", I64(PB, I64), _first_lane)


def _count_lanes(m, N):
    return RS.count_lanes(carray(m, N), N)


count_lanes = _export("count_lanes", I64(PB, I64), _count_lanes)


# ---------------------------------------------------------------------------------------------- the descriptor

def descriptor(arrays: dict[str, np.ndarray], slots: int, slot_arrays: dict[tuple[int, str], np.ndarray]
               ) -> np.ndarray:
    """``DESC`` for a launch: ``arrays`` by ``layout.DESC_NAMES``, ``slot_arrays`` by (slot, SLOT_ARRAYS name)."""
    n = 3 * (1 + SLOT_BASE + max(slots, 1) * len(SLOT_ARRAYS))
    D = np.zeros(n, np.int64)
    D[0] = n

    def put(k: int, a: np.ndarray) -> None:
        if not a.flags.c_contiguous:
            raise ValueError("DESC arrays must be C-contiguous")
        D[k] = a.ctypes.data
        D[k + 1] = a.shape[0] if a.ndim else 1
        D[k + 2] = a.shape[1] if a.ndim > 1 else 1

    for name, a in arrays.items():
        put(_index(name), a)
    for (slot, what), a in slot_arrays.items():
        put(_slot_index(slot, what), a)
    return D


def desc_index(name: str) -> int:
    return _index(name)


_ = (I_BBLK, I_BLOG, I_TSTEP, P_COLS)
