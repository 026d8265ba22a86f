"""One launch of a random kernel (tests/gpusim/test_lanes_random.py's generator) through gpusim's public API,
summed up as plain data: what it wrote and which faults it reported. The same code runs in another gpusim
(benchmarks/random_kernels_before.py records the engine before the typed IR) and in this one
(test_random_before_after.py), so the two can be compared."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import numpy as np

N_IN = 64


def inputs(dtype: str) -> np.ndarray:
    """The kernel's input array: small integers, or the same with a fractional part as float64."""
    base = np.arange(N_IN) * 37 % 23 - 5
    return base.astype(np.int64) if dtype == "int64" else (base * 0.75).astype(dtype)


def launch_one(gpusim, folder: Path, name: str, case: dict) -> dict:
    """Launch ``case`` ({"source", "grid", "block", "input"}) on ``gpusim``: {"sha256", "faults"}, or
    {"compile_error": class name, "line", "message"} when the kernel does not compile."""
    path = folder / f"{name}.py"
    path.write_text(case["source"])
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    grid, block = case["grid"], case["block"]
    out = np.full((grid * block, 6), -1, np.int64)
    try:
        report = gpusim.launch(mod.kern, grid, block, (inputs(case["input"]), out), instrument=False)
    except gpusim.KernelCompileError as e:
        return {"compile_error": type(e).__name__, "line": e.lineno, "message": e.message}
    return {"sha256": hashlib.sha256(out.tobytes()).hexdigest(),
            "faults": sorted([type(f).__name__, f.lineno] for f in report.faults)}
