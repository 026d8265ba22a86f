"""Kernels for test_cudasim_features.py, launched through numba's simulator API in a child process:

    GPUSIM_CUDASIM=strict NUMBA_ENABLE_CUDASIM=1 python cudasim_features.py OUT.json

Enum members as kernel values, ``raise`` in kernels and device functions, a grid group's ``sync()``, vector
types (``cuda.float32x4``, ``cuda.short2``), datetime64/timedelta64 arithmetic, device functions and constants
reached through a module object (``helpers.clamp``), a local assigned on another path only, and the
drop-in's policy for hazards (a data race, a read of shared memory no thread wrote). It writes each kernel's
outputs as lists, the exceptions caught, and ``gpusim.cudasim.stats()`` (with the hazards it reported); the test
holds the expected values (Python's and numba's rules, a hand computation).
"""

from __future__ import annotations

import enum
import json
import sys
import types

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still calls np.row_stack, removed in NumPy 2.5
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

import gpusim.cudasim  # noqa: E402


class Suit(enum.Enum):
    hearts = "h"
    spades = "s"
    clubs = "c"
    trumps = "s"      # an alias: the same member as spades


class Rank(enum.Enum):
    low = "h"         # equal values, another class: never the same member


class Level(enum.IntEnum):
    debug = 10
    error = 40


@cuda.jit(device=True)
def suit_of(k):
    return Suit.hearts if k == 0 else Suit.clubs


@cuda.jit
def enum_args(out, a, b, lvl):
    out[0] = a == b
    out[1] = a != b
    out[2] = a is b
    out[3] = a is not b
    out[4] = lvl + 1
    out[5] = lvl == Level.error


@cuda.jit
def enum_globals(out):
    i = cuda.threadIdx.x
    out[0, i] = Suit["trumps"] == Suit.spades
    out[1, i] = suit_of(i) == Suit.hearts
    out[2, i] = suit_of(i) is Suit.clubs
    out[3, i] = Level["error"] - Level.debug


class Overdrawn(Exception):
    pass


LIMIT = "over the limit"


@cuda.jit(device=True)
def check_balance(x):
    if x < 0:
        raise Overdrawn(LIMIT)
    return x


@cuda.jit(debug=True, opt=False)
def withdraw(out, a):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = check_balance(a[i])


@cuda.jit
def raise_bare(flag):
    if flag:
        raise KeyError


@cuda.jit
def reverse_rows(m):
    # each row is the row above it reversed, plus one: thread col reads what another block wrote before the
    # grid's barrier
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    for row in range(1, m.shape[0]):
        m[row, col] = m[row - 1, m.shape[1] - 1 - col] + 1
        g.sync()


@cuda.jit
def reverse_rows_unsynced(m):
    col = cuda.grid(1)
    for row in range(1, m.shape[0]):
        m[row, col] = m[row - 1, m.shape[1] - 1 - col] + 1


@cuda.jit
def shared_unwritten(out):
    s = cuda.shared.array(4, np.float32)
    out[cuda.threadIdx.x] = s[cuda.threadIdx.x]


@cuda.jit(device=True)
def swap_xy(v):
    return cuda.float32x2(v.y, v.x)


@cuda.jit
def vectors(out, a):
    i = cuda.threadIdx.x
    pair = cuda.float32x2(a[i], 2.5)                 # components converted to float32
    quad = cuda.float32x4(swap_xy(pair), cuda.float32x2(7, pair.x))   # vectors' components in order
    small = cuda.short2(70000, -3)                   # short: int16, converted as the GPU converts (wraps)
    for k, v in enumerate(tuple((quad.x, quad.y, quad.z, quad.w))):
        out[i, k] = v
    out[i, 4] = small.x
    out[i, 5] = small.y


@cuda.jit
def days_between(start, end, delta, later, shifted, step):
    i = cuda.grid(1)
    if i < start.size:
        delta[i] = end[i] - start[i]
        later[i] = end[i] > start[i]
        shifted[i] = start[i] + step * 2


helpers = types.ModuleType("helpers")   # a module the kernel reaches its device function through


@cuda.jit(device=True)
def _clamp(x, hi):
    return min(x, hi)


helpers.clamp = _clamp
helpers.HI = 4


@cuda.jit
def through_module(out):
    i = cuda.threadIdx.x
    out[i] = helpers.clamp(i, helpers.HI)


@cuda.jit
def assigned_on_one_path(out, flag):
    if flag:
        v = 3
        out[0] = v
        return
    else:
        if flag:
            out[1] = v      # never runs: v is unassigned here (numba compiles it)
    out[2] = 9


def ratio(r, x, y):
    i = cuda.threadIdx.x
    r[i] = y[i] / x[i]


ratio_debug = cuda.jit(debug=True, opt=False)(ratio)
ratio_plain = cuda.jit(ratio)


def caught(launch) -> dict:
    try:
        launch()
    except Exception as e:  # what the test checks is the type and the message
        return {"types": [c.__name__ for c in type(e).__mro__], "message": str(e)}
    return {"types": [], "message": ""}


def main(path: str) -> None:
    res: dict = {}
    cases = {"same": (Suit.spades, Suit.trumps), "other": (Suit.hearts, Suit.clubs),
             "classes": (Suit.hearts, Rank.low)}
    for name, (a, b) in cases.items():
        out = np.zeros(6, np.int64)
        enum_args[1, 1](out, a, b, Level.error)
        res[f"enum_{name}"] = out.tolist()
    out = np.zeros((4, 2), np.int64)
    enum_globals[1, 2](out)
    res["enum_globals"] = out.tolist()
    a = np.array([3.0, 1.0, -2.0, 5.0])
    out = np.zeros(4)
    res["raise_device"] = caught(lambda: withdraw[1, 4](out, a))
    res["raise_none"] = caught(lambda: withdraw[1, 4](out, np.abs(a)))
    res["raise_none_out"] = out.tolist()
    res["raise_bare"] = caught(lambda: raise_bare[2, 32](True))
    m = np.zeros((6, 128), np.int32)
    reverse_rows[4, 32](m)
    res["grid_rows"] = m.tolist()
    res["coop_blocks"] = [reverse_rows.overloads[()].max_cooperative_grid_blocks(b) for b in (32, 256, 1024)]
    res["coop_too_big"] = caught(lambda: reverse_rows[132 * 8 + 1, 256](np.zeros((2, 132 * 8 * 256 + 256),
                                                                                np.int32)))
    reverse_rows_unsynced[4, 32](np.zeros((6, 128), np.int32))
    shared_unwritten[1, 4](np.zeros(4, np.float32))
    out = np.zeros((2, 6))
    vectors[1, 2](out, np.array([0.1, -4.0]))
    res["vectors"] = out.tolist()
    start = np.array(["2024-02-27", "2024-03-01", "NaT", "2000-01-01"], dtype="datetime64[D]")
    end = np.array(["2024-03-02", "2024-02-01", "2024-01-01", "2000-01-01"], dtype="datetime64[D]")
    delta = np.zeros(4, dtype="timedelta64[D]")
    later = np.zeros(4, dtype=np.bool_)
    shifted = np.zeros(4, dtype="datetime64[D]")
    days_between[1, 4](start, end, delta, later, shifted, np.timedelta64(3, "D"))
    res["dates"] = {"start": start.astype(str).tolist(), "end": end.astype(str).tolist(),
                    "delta": delta.astype(str).tolist(), "later": later.tolist(),
                    "shifted": shifted.astype(str).tolist()}
    out = np.zeros(6, np.int64)
    through_module[1, 6](out)
    res["through_module"] = out.tolist()
    out = np.zeros(3, np.int64)
    assigned_on_one_path[1, 1](out, False)
    res["one_path"] = out.tolist()
    x, y = np.array([2.0, 0.0]), np.array([1.0, 1.0])
    r = np.zeros(2)
    ratio_plain[1, 2](r, x, y)
    res["ratio_plain"] = r.tolist()
    r = np.zeros(2)
    res["ratio_debug"] = caught(lambda: ratio_debug[1, 2](r, x, y))
    res["ratio_debug_out"] = r.tolist()
    st = gpusim.cudasim.stats()
    res["stats"] = {"gpusim": st.gpusim_launches, "fallback": st.fallback_launches}
    res["reported"] = [[k[0], k[1], v] for k, v in st.reported.items()]
    with open(path, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main(sys.argv[1])
