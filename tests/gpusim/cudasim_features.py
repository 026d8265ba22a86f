"""Kernels for test_cudasim_features.py, launched through numba's simulator API in a child process:

    GPUSIM_CUDASIM=strict NUMBA_ENABLE_CUDASIM=1 python cudasim_features.py OUT.json

Enum members as kernel values and the drop-in's policy for hazards (a data race, a read of shared memory no
thread wrote). It writes each kernel's outputs as lists, what the drop-in printed for hazards, and
``gpusim.cudasim.stats()``; the test holds the expected values (Python's and numba's rules).
"""

from __future__ import annotations

import enum
import json
import sys

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
    st = gpusim.cudasim.stats()
    res["stats"] = {"gpusim": st.gpusim_launches, "fallback": st.fallback_launches}
    with open(path, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main(sys.argv[1])
