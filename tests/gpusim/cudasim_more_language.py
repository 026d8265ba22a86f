"""Kernels using more of numba-cuda's language, launched through numba's simulator API, for
test_cudasim_more_language.py to run in a child process:

    GPUSIM_CUDASIM=strict NUMBA_ENABLE_CUDASIM=1 python cudasim_more_language.py OUT.json

Strings stored into S/U arrays and record fields, recursive device functions, ``isinstance`` on a static type,
a device function returning a value on some paths and None on others, ``alignment=`` on local and shared
arrays. It writes each kernel's outputs (as lists), the messages of the launches that must fail, and
``stats``; the test holds the expected values (numba's rules, counted by hand). numba's simulator replaces
``numba.cuda`` when it is imported, so none of this may run inside the test process.
"""

from __future__ import annotations

import json
import sys

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still calls np.row_stack, removed in NumPy 2.5
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

import gpusim.cudasim  # noqa: E402

# -- strings: constants stored into S/U arrays and record fields (truncated or padded with NULs) ----------------


@cuda.jit
def name_cells(words, tags, src):
    i = cuda.grid(1)
    if i < words.shape[0]:
        if i % 2 == 0:
            words[i] = "even"
        else:
            words[i] = "an odd one, longer than the cell"
        tags[i] = b"t"
    if i == 3:
        tags[i] = src[1]  # a copy from a shorter S array: padded


@cuda.jit
def label_records(recs):
    i = cuda.grid(1)
    if i < recs.shape[0]:
        recs[i].n = i
        recs[i]["label"] = b"row"
        if i == 1:
            recs[i].label = b"much too long a label"


def run_strings(res: dict) -> None:
    words = np.full(5, "old", dtype="<U6")
    tags = np.full(5, b"zz", dtype="S3")
    name_cells[1, 8](words, tags, np.array([b"ab", b"cd"], dtype="S2"))
    res["words"], res["tags"] = words.tolist(), [t.decode() for t in tags.tolist()]
    res["tag_raw"] = list(tags.tobytes())  # the NULs too: a store pads what it does not fill
    res["words_raw"] = words.tobytes().decode("utf-32-le")
    recs = np.zeros(3, dtype=[("n", np.int16), ("label", "S8")])
    label_records[1, 4](recs)
    res["recs"] = [[int(n), label.decode()] for n, label in recs.tolist()]


def main(path: str) -> None:
    res: dict = {}
    run_strings(res)
    st = gpusim.cudasim.stats()
    res["stats"] = {"gpusim": st.gpusim_launches, "fallback": st.fallback_launches, "fallbacks": st.fallbacks}
    with open(path, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main(sys.argv[1])
