"""Run a batch of kernel launches under numba's CUDA simulator and save every array argument afterwards.

    NUMBA_ENABLE_CUDASIM=1 python cudasim_runner.py KERNELS.py IN.npz OUT.npz

``IN.npz`` holds the input arrays and ``__manifest__``: a JSON list of launches, each
``{"kernel", "grid", "block", "args": [{"array": key} | {"scalar": value, "dtype": name}]}``. ``OUT.npz``
gets each array argument after its launch under the same key. Used by test_differential.py; numba's simulator
replaces ``numba.cuda`` when imported, so it must never run inside the test process.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still calls np.row_stack, removed in NumPy 2.5
    np.row_stack = np.vstack


def main(kernels_path: str, in_path: str, out_path: str) -> None:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        raise SystemExit("run with NUMBA_ENABLE_CUDASIM=1")
    spec = importlib.util.spec_from_file_location("cudasim_kernels", kernels_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    data = dict(np.load(in_path))
    manifest = json.loads(str(data.pop("__manifest__")))
    results = {}
    for case in manifest:
        args = []
        for a in case["args"]:
            if "array" in a:
                arr = data[a["array"]].copy()
                results[a["array"]] = arr
                args.append(arr)
            else:
                args.append(np.dtype(a["dtype"]).type(a["scalar"]))
        getattr(mod, case["kernel"])[tuple(case["grid"]), tuple(case["block"])](*args)
    np.savez(out_path, **results)


if __name__ == "__main__":
    main(*sys.argv[1:4])
