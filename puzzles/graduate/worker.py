"""The GPU worker: runs solution files on the GPU, one puzzle after another, in a process of its own.

``python3 -m puzzles.graduate.worker`` reads a job (JSON: ``tasks`` = [{slug, path, backend}], ``size``,
``outputs_dir``, ``measure_device``, ``interpret``) on stdin and writes one JSON message per line on
its standard output; whatever the solution files print goes to standard error instead. Messages::

    {"type": "device", "device": {...}, "peaks": {...}}     first, when there is a GPU (measured now)
    {"type": "no_gpu", "reason": "..."}                       first and last, when there is none
    {"type": "start", "slug": ..., "backend": ...}            before each puzzle and back end
    {"type": "result", "slug": ..., "backend": ..., "result": {...}}
    {"type": "done"}

With ``interpret`` (``--interpret``: Triton's interpreter, ``TRITON_INTERPRET=1``) there is no GPU: the first
message names the interpreter, and only the puzzles' own cases run (nothing is timed). A task with
``"timed": false`` also stops after its cases.

After a fault that loses the GPU context the result carries ``"fatal": true`` and the worker exits; the
parent (``puzzles.graduate.run``) starts a new worker for the puzzles that are left, so one broken kernel
costs one row, not the run. A hang is the parent's to cut off (it knows which puzzle had started).

Per puzzle and back end: compile; run the puzzle's own cases on the GPU and compare each with the spec as
the checker does (``puzzles.compare.first_mismatch``, the puzzle's tolerances); then the benchmark case:
run it once and save its outputs (the parent has them checked against the spec in a CPU job), and time it
(``puzzles.graduate.timing``).
"""

from __future__ import annotations

import copy
import json
import os
import sys
import traceback
from pathlib import Path

from .cuda_module import restore_row_stack

restore_row_stack()


def main() -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                                  # prints of the solution files go to stderr
    job = json.loads(sys.stdin.read())

    def send(msg: dict) -> None:
        proto.write(json.dumps(msg, default=_plain) + "\n")
        proto.flush()

    from .cuda_module import why_no_gpu

    if job.get("interpret"):            # Triton's interpreter (TRITON_INTERPRET=1 in this process): no GPU
        send({"type": "device", "device": {"name": "Triton interpreter", "label": INTERPRETER}, "peaks": None,
              "problem": "no GPU: correctness only"})
    elif (reason := why_no_gpu()) is not None:
        send({"type": "no_gpu", "reason": reason})
        return 0
    elif job.get("measure_device", True):
        from .device import measure_peaks, probe

        info = probe()
        try:
            peaks, problem = measure_peaks(info).to_dict(), ""
        except Exception as e:   # report the device all the same: rows then go without % of peak
            peaks, problem = None, f"measuring the peaks failed: {type(e).__name__}: {e}"
        send({"type": "device", "device": _device_dict(info), "peaks": peaks, "problem": problem})
    from .. import registry

    for task in job["tasks"]:
        puzzle = registry.get(task["slug"])
        send({"type": "start", "slug": puzzle.slug, "backend": task["backend"]})
        try:
            result = run_one(puzzle, Path(task["path"]), task["backend"], job["size"], Path(job["outputs_dir"]),
                             timed=task.get("timed", True) and not job.get("interpret"))
        except Exception as e:   # a bug of graduate mode itself: report it on this row, keep going
            result = {"error": {"kind": "internal", "message": f"{type(e).__name__}: {e}",
                                "traceback": traceback.format_exc(limit=8)}}
        send({"type": "result", "slug": puzzle.slug, "backend": task["backend"], "result": result})
        if result.get("fatal"):
            return 3
    send({"type": "done"})
    return 0


def run_one(puzzle, path: Path, backend_name: str, size: int, outputs_dir: Path, timed: bool = True) -> dict:
    import numpy as np

    from ..compare import PuzzleBug, first_mismatch
    from ..multidevice import case_outputs
    from .backend import CompileFailed, RunFailed, get_backend
    from .estimates import bench_case
    from .workload import compulsory_traffic

    backend = get_backend(backend_name)
    why = backend.unavailable()
    if why is not None:
        return {"error": {"kind": "unavailable", "message": why}}
    try:
        runnable = backend.compile(puzzle, path)
    except CompileFailed as e:
        return {"error": {"kind": "compile", "message": str(e), "filename": e.filename, "lineno": e.lineno}}
    result: dict = {"cases": {"passed": 0, "total": 0, "failure": None}}
    try:
        cases = tuple(puzzle.make_cases())
        result["cases"]["total"] = len(cases)
        for case in cases:
            got = runnable.run(case)
            before = copy.deepcopy(dict(case.buffers))
            try:
                expected = puzzle.spec(**copy.deepcopy(before))
                mismatch = first_mismatch(case_outputs(puzzle, case), got, expected, before, puzzle.rtol, puzzle.atol)
            except PuzzleBug as e:
                mismatch = None
                result["cases"]["failure"] = {"case": case.name, "kind": "puzzle", "message": str(e)}
                continue
            if mismatch is None:
                result["cases"]["passed"] += 1
            elif result["cases"]["failure"] is None:
                result["cases"]["failure"] = {"case": case.name, "kind": "mismatch", "message": mismatch.message}
        if not timed:
            result["bench"] = {"error": "not timed (the interpreter runs on the CPU)" if backend_name == "triton"
                               and os.environ.get("TRITON_INTERPRET") == "1" else "not timed in this run"}
            return result
        case, label = bench_case(puzzle, size)
        if case is None:
            result["bench"] = {"error": label}
            return result
        traffic = compulsory_traffic(case, case_outputs(puzzle, case))
        bench = {"case": case.name, "size": label, "note": puzzle.bench_note if label == "max" else "",
                 "read_bytes": traffic.read_bytes, "write_bytes": traffic.write_bytes}
        result["bench"] = bench
        got = runnable.run(case)
        out_file = outputs_dir / f"{puzzle.slug}.{backend_name}.npz"
        np.savez(out_file, **{k: got[k] for k in case_outputs(puzzle, case)})
        bench["outputs_file"] = str(out_file)
        bench["timing"] = runnable.time(case).to_dict()
    except CompileFailed as e:
        result["error"] = {"kind": "compile", "message": str(e), "filename": e.filename, "lineno": e.lineno}
    except RunFailed as e:
        result["error"] = {"kind": "fault" if e.fatal else "launch", "message": str(e)}
        result["fatal"] = e.fatal
    return result


INTERPRETER = "Triton's interpreter on the CPU (TRITON_INTERPRET=1)"


def _device_dict(info) -> dict:
    from dataclasses import asdict

    d = asdict(info)
    d["label"] = info.label()
    return d


def _plain(value):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


if __name__ == "__main__":
    sys.exit(main())
