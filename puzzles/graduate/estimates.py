"""The simulator's side of a benchmark launch: gpusim's metrics and roofline estimate for the same case, cached.

``simulate`` runs a puzzle's benchmark case (``Puzzle.bench(n)`` or ``bench_max()``) through gpusim with
its instrumentation on, one ``LaunchReport`` per step, and keeps what graduate mode compares with the GPU:
every step's ncu-named metrics and FLOPs, and ``report.estimate(gpu)`` summed over the steps. At the
benchmark sizes this is slow (gpusim runs every lane on the CPU: tens of seconds to minutes per puzzle at
2^26 elements, and about 30 bytes of memory per byte of the case's buffers), so graduate mode runs it in
separate processes (``puzzles.graduate.pool``), in parallel with the GPU's work, and keeps the results in
a cache file.

A cache entry is valid for exactly what determines it: the puzzle's module (its cases and ``bench``), the
solution file, the size, the GPU model, gpusim's own source (all of it: any change to the engine may
change what it counts), the time model's version and machine parameters (``gpusim.timing_model.fingerprint``:
a refitted parameter makes every cached estimate stale) and NumPy's version (the random inputs). Its key is a
SHA-256 of those. Each step also keeps its ``Workload`` (what the time model reads), so a later model can be
checked against old measurements without running gpusim again (``benchmarks/gpu/estimate_fit.py``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..model import Case, Puzzle

SCHEMA = 2
#: the most elements of work gpusim simulates for an estimate (its launches stop at 2^24 threads,
#: ``gpusim.device.MAX_SIMULATED_THREADS``); a larger benchmark size is simulated at this size and its
#: counts scaled to the size (``Workload.scaled``: the blocks and every summed count times the ratio)
SIM_ELEMENTS = 1 << 24
#: the step budget of an estimate's launches: far above any reference's work (the estimate budget and the
#: job's timeout bound the time), so a large benchmark launch is never cut short as if it never ended
ESTIMATE_MAX_STEPS = 10**15
#: gpusim's steps of instrumented simulation per CPU second on the machine that fills the cache (4.7e8 for a
#: naive matmul, a 512^3 launch of 12.1e9 steps in 26 s): turns an estimate's time budget into the steps
#: ``gpusim.sampling`` sizes its sample by (steps, not seconds, so the sample is the same on any machine)
STEPS_PER_SECOND = 4e8
#: a simulator job's budget (seconds of gpusim) before it samples blocks instead of simulating every one
JOB_BUDGET_S = 30.0
GPUSIM_DIR = Path(__file__).resolve().parents[2] / "gpusim"


def bench_case(puzzle: Puzzle, size: int | None) -> tuple[Case | None, str]:
    """The puzzle's benchmark case at ``size`` elements of work, or its largest valid case; and a label
    ("2^26", "max"). ``(None, why)`` when the puzzle declares neither."""
    if puzzle.bench is not None and size is not None:
        return puzzle.bench(size), size_label(size)
    if puzzle.bench_max is not None:
        return puzzle.bench_max(), "max"
    return None, "the puzzle declares no benchmark launch (bench or bench_max)"


def size_label(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"


def gpu_model(device_name: str, measured_bandwidth: float | None = None, roof: dict | None = None):
    """gpusim's ``GPU`` for ``device_name`` ("NVIDIA H200" -> the "H200" datasheet entry); a device gpusim's
    table does not know gets one built from its measured copy bandwidth and FLOP/s roofs."""
    from gpusim.roofline import GPU, get_gpu

    for name in (device_name, device_name.removeprefix("NVIDIA ").strip()):
        try:
            return get_gpu(name)
        except KeyError:
            continue
    if not measured_bandwidth or not roof:
        raise KeyError(f"gpusim's roofline table has no {device_name!r} and no measured peaks were given")
    return GPU(device_name, measured_bandwidth, dict(roof), "measured copy bandwidth, FLOP/s roof of the SMs")


def gpu_to_dict(gpu) -> dict:
    machine = asdict(gpu.machine) if getattr(gpu, "machine", None) is not None else None
    return {"name": gpu.name, "bandwidth": gpu.bandwidth, "flops": dict(gpu.flops), "source": gpu.source,
            "machine": machine}


def gpu_from_dict(d: dict):
    from gpusim.roofline import GPU
    from gpusim.timing_model import Machine

    machine = Machine(**d["machine"]) if d.get("machine") else None
    return GPU(d["name"], d["bandwidth"], dict(d["flops"]), d.get("source", ""), machine)


def simulate(puzzle: Puzzle, path: Path, size: int | None, gpu, budget_s: float | None = None) -> dict:
    """gpusim's metrics and estimate for the benchmark case (see the module docstring). With ``budget_s``, a
    launch whose whole simulation would cost more than its share of the budget is estimated from a sample
    of its blocks (``gpusim.sampling``); the step and the totals then say how many blocks ran."""
    from gpusim.observe.flops import flop_total
    from gpusim.observe.metrics import METRIC_KEYS
    from gpusim.roofline import estimate
    from gpusim.sampling import SamplingRefused, sampled_workload

    from ..loader import load_solution

    factor = 1.0
    if puzzle.bench is not None and size is not None and size > SIM_ELEMENTS:
        factor = size / SIM_ELEMENTS
    case, label = bench_case(puzzle, SIM_ELEMENTS if factor != 1.0 else size)
    if case is None:
        return {"error": label}
    if factor != 1.0:
        label = f"{size_label(size)} (simulated at {size_label(SIM_ELEMENTS)}, counts x {factor:g})"
    solution = load_solution(path, puzzle.kernels)
    buffers = copy.deepcopy(dict(case.buffers))
    started, cpu_started = time.perf_counter(), time.process_time()
    steps, faults = [], []
    budget = None if budget_s is None else budget_s * STEPS_PER_SECOND
    simulated = 0
    for i, step in enumerate(case.launches):   # a multi-device case: every rank's launch, as one GPU runs them
        share = None if budget is None else max(budget, 0) / (len(case.launches) - i)
        launch_args = (solution.kernels[step.kernel], step.grid, step.block, step.arg_values(buffers),
                       step.shared_mem)
        try:
            run = sampled_workload(*launch_args, budget_steps=share, max_steps=ESTIMATE_MAX_STEPS)
        except SamplingRefused:
            run = sampled_workload(*launch_args, max_steps=ESTIMATE_MAX_STEPS)
        simulated += run.steps
        if budget is not None:
            budget -= run.steps
        work = run.workload
        if factor != 1.0:
            work = work.scaled(factor)
        est = estimate(work, gpu)
        faults += [f"{type(f).__name__}: {f.message.splitlines()[0]}" for f in run.faults[:3]]
        steps.append({
            "kernel": step.kernel, "grid": list(work.grid), "block": _dims(step.block),
            "metrics": {k: work.metrics.get(k, 0) for k in METRIC_KEYS},
            "flops": flop_total(work.flops or {}),
            "workload": work.to_dict(),
            "estimate": asdict(est),
            **({"sample": {"blocks": run.blocks_run, "of": run.num_blocks, "runs": len(run.runs)}}
               if run.sampled else {}),
        })
    totals = {
        "seconds": sum(s["estimate"]["seconds"] for s in steps),
        "memory_seconds": sum(s["estimate"]["memory_seconds"] for s in steps),
        "compute_seconds": sum(s["estimate"]["compute_seconds"] for s in steps),
        "dram_bytes": sum(s["estimate"]["bytes"] for s in steps),
        "flops": sum(s["estimate"]["flops"] for s in steps),
    }
    totals["bound"] = "compute" if totals["compute_seconds"] > totals["memory_seconds"] else "memory"
    if any("sample" in s for s in steps):
        ran = sum(s["sample"]["blocks"] if "sample" in s else math.prod(s["grid"]) for s in steps)
        of = sum(math.prod(s["grid"]) for s in steps)
        totals["sampled"] = {"blocks": ran, "of": of, "fraction": ran / of,
                             "launches": sum("sample" in s for s in steps)}
    return {"puzzle": puzzle.slug, "n": size if puzzle.bench is not None else None, "case": case.name,
            "size": label, "gpu": gpu.name, "steps": steps, "totals": totals, "faults": faults,
            "sim_seconds": time.perf_counter() - started, "sim_cpu_seconds": time.process_time() - cpu_started,
            "sim_steps": simulated}


def _dims(d) -> list[int]:
    return [int(d)] if isinstance(d, int) else [int(x) for x in d]


# ---------------------------------------------------------------------------------------------- the cache

def cache_key(puzzle: Puzzle, path: Path, size: int | None, gpu_name: str) -> str:
    import numpy as np

    from gpusim.roofline import GPUS
    from gpusim.timing_model import fingerprint

    parts = {
        "schema": SCHEMA, "puzzle": puzzle.slug, "size": size if puzzle.bench is not None else "max",
        "puzzle_module": _sha(_module_file(puzzle)), "solution": _sha(Path(path)), "gpu": gpu_name,
        "gpusim": gpusim_fingerprint(), "numpy": np.__version__,
        "time_model": fingerprint({name: g.machine for name, g in GPUS.items()}),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


_GPUSIM_SHA: str | None = None


def gpusim_fingerprint() -> str:
    """SHA-256 over gpusim's Python sources, in path order."""
    global _GPUSIM_SHA
    if _GPUSIM_SHA is None:
        h = hashlib.sha256()
        for f in sorted(GPUSIM_DIR.rglob("*.py")):
            h.update(str(f.relative_to(GPUSIM_DIR)).encode() + b"\0" + f.read_bytes() + b"\0")
        _GPUSIM_SHA = h.hexdigest()
    return _GPUSIM_SHA


def _module_file(puzzle: Puzzle) -> Path:
    fn = puzzle.bench or puzzle.bench_max or puzzle.make_cases
    return Path(sys.modules[fn.__module__].__file__)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class EstimateCache:
    """Results of ``simulate`` by ``cache_key``, in a JSON file (read at start, written atomically)."""

    def __init__(self, path: Path | None):
        self.path = path
        self.entries: dict[str, dict] = {}
        self.problem = ""
        if path is not None and path.is_file():
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
                if doc.get("schema") == SCHEMA:
                    self.entries = dict(doc.get("entries", {}))
            except (OSError, ValueError, AttributeError) as e:
                self.problem = f"the estimate cache {path} could not be read ({e}); starting afresh"

    def get(self, key: str) -> dict | None:
        return self.entries.get(key)

    def cost_hint(self, slug: str, size: int | None) -> float | None:
        """Predicted seconds of gpusim for ``slug`` at ``size``, from the largest entry for that puzzle (whatever
        its gpusim version; gpusim's time grows with the elements of work): for ordering jobs only."""
        best = None
        for entry in self.entries.values():
            seconds = entry.get("sim_cpu_seconds", entry.get("sim_seconds"))   # CPU time: not the machine's load
            if entry.get("puzzle") != slug or seconds is None:
                continue
            n = entry.get("n")
            guess = seconds * (size / n if n and size else 1.0)
            if best is None or (n or 0) > best[0]:
                best = (n or 0, guess)
        return None if best is None else best[1]

    def put(self, key: str, result: dict) -> None:
        self.entries[key] = result

    def save(self, path: Path | None = None) -> None:
        target = path or self.path
        if target is None:
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({"schema": SCHEMA, "entries": self.entries}, indent=1, sort_keys=True),
                       encoding="utf-8")
        os.replace(tmp, target)


def result_summary(result: dict[str, Any] | None) -> str:
    if not result:
        return "—"
    if "error" in result:
        return f"error: {result['error']}"
    t = result["totals"]
    sample = t.get("sampled")
    note = f", sampled {sample['blocks']:,}/{sample['of']:,} blocks" if sample else ""
    return f"{t['seconds'] * 1e6:.1f} µs ({t['bound']}-bound{note})"
