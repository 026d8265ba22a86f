"""Kernels for test_cudasim_unskipped.py, launched through numba's simulator API in a child process:

    GPUSIM_CUDASIM=strict NUMBA_ENABLE_CUDASIM=1 python cudasim_unskipped.py GROUP[,GROUP...] OUT.json

What numba-cuda's un-skipped tests (``test_warp_ops``, ``doc_examples``) needed of the drop-in, on kernels of our
own: a grid barrier skipped only by threads on their way out; a type error in an eager signature raised at
``cuda.jit``; ``cuda.random``'s generators set up on the host; a ``CPointer`` parameter given an address from
``__cuda_array_interface__``; the step budget. It writes what each launch produced and the exceptions caught;
the test holds the expected values (hand counts, numba's own implementation).
"""

from __future__ import annotations

import json
import sys
import warnings

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still calls np.row_stack, removed in NumPy 2.5
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402
from numba.cuda import random as cuda_random  # noqa: E402

import gpusim.cudasim  # noqa: E402
from gpusim.cudasim import adapter  # noqa: E402


@cuda.jit
def mark_run_starts(flags, out):
    """out[i] = the index of the run of equal flags i is in (its first index), for run starts found by
    the threads where a run begins; the others leave at once, skipping the grid barrier."""
    i = cuda.grid(1)
    if i >= flags.size:
        return
    if i == 0 or flags[i] != flags[i - 1]:
        out[i] = i
        grid = cuda.cg.this_grid()
        grid.sync()
        j = i + 1
        while j < flags.size and out[j] == -1:
            out[j] = i
            j += 1


@cuda.jit
def sync_then_more(flags, out):
    """The same barrier, but the threads that skip it write afterwards: a real divergence."""
    i = cuda.grid(1)
    if i >= flags.size:
        return
    if flags[i] != 0:
        grid = cuda.cg.this_grid()
        grid.sync()
    out[i] = 1


def all_with_mask(mask, predicate, result):
    i = cuda.grid(1)
    if i < result.size:
        result[i] = cuda.all_sync(mask[i], predicate[i])


@cuda.jit("void(CPointer(float32), int32)")
def add_index(p, n):
    i = cuda.grid(1)
    if i < n:
        p[i] += i


@cuda.jit
def count_up(out, n):
    total = 0
    for k in range(n):
        total += k
    out[0] = total


def caught(launch) -> dict:
    try:
        launch()
    except Exception as e:  # what the test checks is the type and the message
        return {"types": [c.__name__ for c in type(e).__mro__], "message": str(e),
                "notes": list(getattr(e, "__notes__", []))}
    return {"types": [], "message": "", "notes": []}


def barriers(res: dict) -> None:
    flags = np.array([1, 1, 0, 0, 0, 1, 0, 0], np.int32)
    out = np.full(flags.size, -1, np.int64)
    mark_run_starts.forall(flags.size)(flags, out)
    res["runs"] = out.tolist()
    res["sync_then_more"] = caught(lambda: sync_then_more.forall(flags.size)(flags, np.zeros(flags.size, np.int64)))


def eager(res: dict) -> None:
    for name, sig in {"float_mask": "void(float32[:], int32[:], int32[:])",
                      "bool_mask": "void(boolean[:], int32[:], int32[:])",
                      "float_predicate": "void(uint32[:], float64[:], int32[:])"}.items():
        res[f"eager_{name}"] = caught(lambda sig=sig: cuda.jit(sig)(all_with_mask))
        from numba.core.errors import TypingError as NumbaTypingError
        from numba.cuda.core.errors import TypingError as CudaTypingError
        try:
            cuda.jit(sig)(all_with_mask)
        except NumbaTypingError as e:
            res[f"eager_{name}_both"] = isinstance(e, CudaTypingError)
    k = cuda.jit("void(uint32[:], boolean[:], int32[:])")(all_with_mask)
    result = np.zeros(32, np.int32)
    pred = np.ones(32, np.bool_)
    pred[5] = False
    k[1, 32](np.full(32, 0xFFFFFFFF, np.uint32), pred, result)
    every = np.zeros(32, np.int32)
    k[1, 32](np.full(32, 0xFFFFFFFF, np.uint32), np.ones(32, np.bool_), every)
    res["eager_valid"] = [result.tolist(), every.tolist()]


def random_states(res: dict) -> None:
    numba_init = adapter._patched["random_init"]   # numba-cuda's own loop (object mode under its simulator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # numba's object-mode fallback warnings
        for n, seed, start in [(12, 42, 0), (5, 1, 3)]:
            theirs = np.empty(n, cuda_random.xoroshiro128p_dtype)
            numba_init(theirs, seed, start)
            ours = cuda_random.create_xoroshiro128p_states(n, seed=seed, subsequence_start=start).copy_to_host()
            res[f"states_{n}_{seed}_{start}"] = {"numba": theirs.tolist(), "dropin": ours.tolist()}
    res["states_replaced"] = cuda_random.init_xoroshiro128p_states_cpu is not numba_init


def pointers(res: dict) -> None:
    x = cuda.to_device(np.zeros(8, np.float32))
    cai = x.__cuda_array_interface__
    res["cai"] = {"shape": list(cai["shape"]), "typestr": cai["typestr"], "version": cai["version"]}
    add_index[1, 8](cai["data"][0] + 3 * 4, 5)           # from element 3: elements 3..7 get 0..4
    res["pointer_offset"] = x.copy_to_host().tolist()
    res["pointer_past_end"] = caught(lambda: add_index[1, 8](cai["data"][0] + 6 * 4, 3))
    res["pointer_unknown"] = caught(lambda: add_index[1, 8](16, 3))


def budget(res: dict) -> None:
    """Run with GPUSIM_CUDASIM_MAX_STEPS=1000000."""
    out = np.zeros(1, np.int64)
    res["budget_long"] = caught(lambda: count_up[1, 32](out, 1_000_000))
    res["budget_short"] = caught(lambda: count_up[1, 32](out, 10))
    res["budget_short_out"] = int(out[0])


def budget_default(res: dict) -> None:
    """300,000 iterations: more steps than gpusim.launch's budget, well within the drop-in's."""
    out = np.zeros(1, np.int64)
    res["budget_default"] = caught(lambda: count_up[1, 32](out, 300_000))
    res["budget_default_out"] = int(out[0])


def budget_scaled(res: dict) -> None:
    """The budget grows with the launch: with its floor at one step and 10,000 steps a thread, a loop of 10
    iterations fits in a launch of any size, one of 100,000 in none."""
    from gpusim.cudasim import budget as steps

    steps.MAX_STEPS, steps.STEPS_PER_THREAD = 1, 10_000
    out = np.zeros(1, np.int64)
    for blocks in (1, 64):
        res[f"scaled_short_{blocks}"] = caught(lambda b=blocks: count_up[b, 64](out, 10))
        res[f"scaled_long_{blocks}"] = caught(lambda b=blocks: count_up[b, 64](out, 100_000))


def main(group: str, path: str) -> None:
    res: dict = {}
    groups = {"barriers": barriers, "eager": eager, "random": random_states, "pointers": pointers, "budget": budget,
              "budget_default": budget_default, "budget_scaled": budget_scaled}
    for g in group.split(","):
        groups[g](res)
    st = gpusim.cudasim.stats()
    res["stats"] = {"gpusim": st.gpusim_launches, "fallback": st.fallback_launches}
    res["reported"] = [[k[0], k[1], v] for k, v in st.reported.items()]
    with open(path, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
