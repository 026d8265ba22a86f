"""Kernels using more of numba-cuda's language, launched through numba's simulator API, for
test_cudasim_more_language.py to run in a child process:

    GPUSIM_CUDASIM=strict NUMBA_ENABLE_CUDASIM=1 python cudasim_more_language.py OUT.json

Strings stored into S/U arrays and record fields, recursive device functions, ``isinstance`` on a static type,
a device function returning a value on some paths and None on others. Each case runs on its own (one refusal
hides no other case's values) and writes its outputs (as lists) into the results; what a case raised goes under
"errors" (its name: the message), and ``stats`` is added. The cases numba-cuda refuses on a GPU (a string
element copied into a cell of another length, mutual recursion, a recursion with other argument types) must be
refused by gpusim too; a plain Python helper runs under the drop-in (numba's simulator calls it) but not on a
GPU. The test holds the expected values (numba's rules, counted by hand). numba's simulator replaces
``numba.cuda`` when it is imported, so none of this may run inside the test process. Run on a real GPU (without
NUMBA_ENABLE_CUDASIM) it writes the same results, less the launches that only gpusim can survive (a runaway
recursion, None used as a number); ``GPUSIM_MORE_LANGUAGE_RESULTS=OUT.json pytest test_cudasim_more_language.py``
then checks every value the GPU gave against the same expectations.
"""

from __future__ import annotations

import os
import sys

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still calls np.row_stack, removed in NumPy 2.5
    np.row_stack = np.vstack

from dropin_child import save_results  # noqa: E402
from numba import cuda  # noqa: E402

#: launched through the drop-in (else on a real GPU, where the cases that must fail are left out)
ON_GPUSIM = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"

# -- strings: constants into S/U arrays and record fields; elements copied between S/U arrays ---------------------


@cuda.jit
def name_cells(words, tags):
    i = cuda.grid(1)
    if i < words.shape[0]:
        if i % 2 == 0:
            words[i] = "even"
        else:
            words[i] = "an odd one, longer than the cell"
        tags[i] = b"t"


@cuda.jit
def label_records(recs):
    i = cuda.grid(1)
    if i < recs.shape[0]:
        recs[i].n = i
        recs[i]["label"] = b"row"
        if i == 1:
            recs[i].label = b"much too long a label"


@cuda.jit
def copy_same_length(tags, src, words, wsrc):
    i = cuda.grid(1)
    if i < tags.shape[0]:
        tags[i] = src[tags.shape[0] - 1 - i]  # S3 from S3, reversed
        words[i] = wsrc[i % 2]                 # U4 from U4


@cuda.jit
def copy_other_length(tags, src):
    i = cuda.grid(1)
    if i < tags.shape[0]:
        tags[i] = src[1]  # S3 from S2: numba-cuda has no setitem for it


def run_string_constants(res: dict) -> None:
    words = np.full(5, "old", dtype="<U6")
    tags = np.full(5, b"zz", dtype="S3")
    name_cells[1, 8](words, tags)
    res["words"], res["tags"] = words.tolist(), [t.decode() for t in tags.tolist()]
    res["tag_raw"] = list(tags.tobytes())  # the NULs too: a store pads what it does not fill
    res["words_raw"] = words.tobytes().decode("utf-32-le")


def run_record_labels(res: dict) -> None:
    recs = np.zeros(3, dtype=[("n", np.int16), ("label", "S8")])
    label_records[1, 4](recs)
    res["recs"] = [[int(n), label.decode()] for n, label in recs.tolist()]


def run_copy_same_length(res: dict) -> None:
    tags = np.full(4, b"zzz", dtype="S3")
    words = np.full(4, "old", dtype="<U4")
    copy_same_length[1, 8](tags, np.array([b"a", b"bb", b"ccc", b""], dtype="S3"), words,
                           np.array(["up", "down"], dtype="<U4"))
    res["same_length"] = {"tag_raw": list(tags.tobytes()), "words_raw": words.tobytes().decode("utf-32-le")}


def run_copy_other_length(res: dict) -> None:
    tags = np.full(4, b"zz", dtype="S3")
    copy_other_length[1, 4](tags, np.array([b"ab", b"cd"], dtype="S2"))
    res["other_length"] = list(tags.tobytes())


# -- recursion: on itself, with and without a signature, per lane; through another function or types (refused) --


@cuda.jit("i8(i8)", device=True)
def fib_sig(n):
    if n < 2:
        return n
    return fib_sig(n - 1) + fib_sig(n - 2)


@cuda.jit(device=True)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@cuda.jit(device=True)
def halve_steps(n):
    # a recursion whose depth differs between lanes: the Collatz steps of n
    if n == 1:
        return 0
    if n % 2 == 0:
        return 1 + halve_steps(n // 2)
    return 1 + halve_steps(3 * n + 1)


@cuda.jit(device=True)
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@cuda.jit(device=True)
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


@cuda.jit(device=True)
def scaled_sum(n, x):
    # the first return gives int64; the recursive one, float64: the type is lowered again until it settles
    if n == 0:
        return 0
    return x + scaled_sum(n - 1, x)


@cuda.jit
def recursions(fibs, steps, sums, n_grid):
    i = cuda.grid(1)
    if i == 0:
        fibs[0] = fib_sig(n_grid)
        fibs[1] = fib(n_grid)
    if i < steps.shape[0]:
        fibs[i + 2] = fib(i)
        steps[i] = halve_steps(i + 1)
        sums[i] = scaled_sum(i, 0.5)


@cuda.jit(device=True)
def type_change(x, y):
    # (int64, float64) calls (float64, float64): numba-cuda's own test of this is skipped, "Needs
    # insert_unresolved_ref support in target"
    if x > 1 and y > 0:
        return x + type_change(x - y, y)
    return y


@cuda.jit
def changing_types(out, x, y):
    out[0] = type_change(x, y)


@cuda.jit
def mutual(even):
    i = cuda.grid(1)
    if i < even.shape[0]:
        even[i] = is_even(i)


@cuda.jit(device=True)
def countdown(n):
    if n == 0:
        return 0
    return 1 + countdown(n - 1)


@cuda.jit
def runaway(out, start):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = countdown(start[i])  # a negative start counts down past 0 for ever


@cuda.jit(device=True)
def no_base_case(x):
    return no_base_case(x)


@cuda.jit
def never_typed(out):
    out[0] = no_base_case(1)


def failure(launch) -> str:
    try:
        launch()
    except Exception as e:  # the message the user sees, and whether gpusim's frames came with it
        return f"{type(e).__name__}: {e}"
    return "no error"


def run_recursion(res: dict) -> None:
    n = 12
    fibs, steps = np.zeros(n + 2, np.int64), np.zeros(n, np.int64)
    sums = np.zeros(n)
    recursions[1, 16](fibs, steps, sums, 10)
    res["fibs"], res["steps"], res["sums"] = fibs.tolist(), steps.tolist(), sums.tolist()


def run_countdown(res: dict) -> None:
    out = np.zeros(4, np.int64)
    runaway[1, 4](out, np.array([3, 5, 0, 7], np.int64))
    res["countdown"] = out.tolist()


def run_mutual_recursion(res: dict) -> None:
    even = np.zeros(12, np.bool_)
    mutual[1, 16](even)
    res["even"] = even.tolist()


def run_type_change(res: dict) -> None:
    out = np.zeros(1)
    changing_types[1, 1](out, 13, 0.125)
    res["type_change"] = out.tolist()


def run_recursion_faults(res: dict) -> None:
    # gpusim only: on a GPU a runaway recursion overflows the stack and spoils the context
    res["runaway"] = failure(lambda: runaway[1, 4](np.zeros(4, np.int64), np.array([3, -1, 0, 2], np.int64)))
    res["never_typed"] = failure(lambda: never_typed[1, 1](np.zeros(1, np.int64)))


# -- isinstance on the static type; Optional returns -------------------------------------------------------------


@cuda.jit(device=True)
def first_or_self(b):
    # the branch not taken never types
    if isinstance(b, tuple):
        b = b[0]
    return b


def plain_first_or_self(b):
    # a plain Python helper: numba's simulator calls it; numba-cuda cannot type it ("Untyped global name")
    if isinstance(b, tuple):
        b = b[0]
    return b


@cuda.jit(device=True)
def width_or_self(b):
    # the branch ruled out fails on an attribute only: numba-cuda's partial typing gets past it and drops it
    if isinstance(b, tuple):
        return b.shape
    return b


@cuda.jit(device=True)
def kind_after_branch(b, c):
    # b holds the value of two assignments where isinstance asks (a phi): numba-cuda cannot decide it
    if c > 0:
        b = 2
    if isinstance(b, int):
        return 1
    return 0


@cuda.jit
def first_items(out, x, pair):
    out[0] = first_or_self(pair) + first_or_self(x)


@cuda.jit
def width_items(out, x):
    out[0] = width_or_self(x)


@cuda.jit
def kind_items(out, x, c):
    out[0] = kind_after_branch(x, c)


@cuda.jit
def plain_helper(out, x, pair):
    out[0] = plain_first_or_self(pair) + plain_first_or_self(x)


@cuda.jit
def instance_checks(out, x, pair, f32):
    out[0] = 12
    out[1] = isinstance(x, int)          # int64: numba's int
    out[2] = isinstance(f32, float)      # float32 is not numba's float (float64)
    out[3] = isinstance(f32, (int, np.float32))
    out[4] = isinstance(pair, tuple)
    out[5] = isinstance(x, (float, complex, bool, tuple))


@cuda.jit(device=True)
def half_if_even(n):
    if n % 2 == 0:
        return n // 2
    return None


@cuda.jit(device=True)
def first_present(a, b):
    if a is not None:
        return a
    return b


@cuda.jit
def optionals(out, missing, chosen):
    i = cuda.grid(1)
    if i < out.shape[0]:
        h = half_if_even(i)
        missing[i] = h is None
        if h is not None:
            out[i] = h + 100
        else:
            out[i] = -1
        chosen[i] = first_present(half_if_even(i), half_if_even(i + 1))


@cuda.jit
def none_as_number(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = half_if_even(i) + 1


def run_first_items(res: dict) -> None:
    out = np.zeros(1, np.int64)
    first_items[1, 1](out, 5, (7, 2.5))
    res["first_items"] = out.tolist()


def run_width_items(res: dict) -> None:
    out = np.zeros(1, np.int64)
    width_items[1, 1](out, 5)
    res["width_items"] = out.tolist()


def run_kind_items(res: dict) -> None:
    out = np.zeros(1, np.int64)
    kind_items[1, 1](out, 5, 1)
    res["kind_items"] = out.tolist()


def run_plain_helper(res: dict) -> None:
    out = np.zeros(1, np.int64)
    plain_helper[1, 1](out, 5, (7, 2.5))
    res["plain_helper"] = out.tolist()


def run_instance_checks(res: dict) -> None:
    out = np.zeros(6, np.int64)
    instance_checks[1, 1](out, 5, (7, 2.5), np.float32(1.5))
    res["instance_checks"] = out.tolist()


def run_optionals(res: dict) -> None:
    out, missing, chosen = np.zeros(6, np.int64), np.zeros(6, np.bool_), np.zeros(6, np.int64)
    optionals[1, 8](out, missing, chosen)
    res["optionals"] = {"out": out.tolist(), "missing": missing.tolist(), "chosen": chosen.tolist()}


def run_optional_faults(res: dict) -> None:
    # gpusim only: numba-cuda reads a garbage value there, without debug=True
    res["none_as_number"] = failure(lambda: none_as_number[1, 4](np.zeros(4, np.int64)))


#: every case, each launched on its own; those that only gpusim survives are left out on a GPU
CASES = (run_string_constants, run_record_labels, run_copy_same_length, run_copy_other_length, run_recursion,
         run_countdown, run_mutual_recursion, run_type_change, run_first_items, run_width_items, run_kind_items,
         run_plain_helper,
         run_instance_checks, run_optionals)
GPUSIM_ONLY = (run_recursion_faults, run_optional_faults)


def main(path: str) -> None:
    res: dict = {"errors": {}}
    for case in CASES + (GPUSIM_ONLY if ON_GPUSIM else ()):
        try:
            case(res)
        except Exception as e:  # what numba-cuda (or gpusim) refused: the test says which must be refused
            res["errors"][case.__name__] = f"{type(e).__name__}: {str(e)[:2000]}"
    save_results(res, path)


if __name__ == "__main__":
    main(sys.argv[1])
