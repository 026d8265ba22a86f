"""One plan in a process of its own: ``python3 -m puzzles.graduate.multigpu.planjob ARGS.json RESULT.json``.

``ARGS`` holds ``{"tasks": [Task.to_dict(), ...], "races": bool}`` (the tasks of one puzzle: a process
per puzzle's own cases, and one per benchmark case); ``RESULT`` gets ``{"ok": true, "result": [plan, ...]}``
(``Plan.to_dict``) or ``{"ok": false, "error": ...}``, as ``puzzles.graduate.jobs`` writes its results, so
that ``puzzles.graduate.pool`` runs these jobs beside its own (``PlanPool``) with the same memory budget,
priorities and cut-off. A file that does not load gives a plan with ``error`` set (every rank then
records the same error), not a failed job.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

from .. import pool

#: gpusim's peak memory per byte of the case's arrays when planning, measured at 2^22 float32 per rank on
#: puzzles 64-66 (resident set over case bytes): 18-26 without the race tracker between devices, 26-41 with it
BYTES_PER_CASE_BYTE = {False: 26, True: 42}
BASE_BYTES = 400 << 20


def plans_for(args: dict) -> list[dict]:
    """The plans of ``args["tasks"]``, in order."""
    return [plan_for(task, bool(args.get("races", True))) for task in args["tasks"]]


def plan_for(task_dict: dict, races: bool) -> dict:
    from ... import registry
    from ...loader import load_solution
    from ..cuda_module import restore_row_stack
    from .plan import Plan, make_plan
    from .tasks import Task, build_case

    restore_row_stack()                              # solution files import numba.cuda
    from gpusim.faults import KernelCompileError

    task = Task.from_dict(task_dict)
    puzzle = registry.get(task.slug)
    case = build_case(puzzle, task)
    try:
        solution = load_solution(task.path, puzzle.kernels)
    except KernelCompileError as e:
        where = f" ({Path(e.filename).name}:{e.lineno})" if getattr(e, "lineno", 0) else ""
        return Plan(puzzle.slug, case.name, case.devices.count, 0, error=f"{e}{where}").to_dict()
    return make_plan(puzzle, solution, case, races=races).to_dict()


def predicted_memory(case_bytes: int, races: bool) -> int:
    return int(BASE_BYTES + BYTES_PER_CASE_BYTE[races] * case_bytes)


class PlanPool(pool.Pool):
    """``puzzles.graduate.pool.Pool`` running this module's jobs instead of ``puzzles.graduate.jobs``."""

    def _launch(self, job: pool.Job) -> None:
        n = next(self._ids)
        args, result, log = (self.workdir / f"plan{n}.{suffix}" for suffix in ("args.json", "result.json", "log"))
        args.write_text(json.dumps(job.args), encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(pool.ROOT),
                                                                          os.environ.get("PYTHONPATH")])))
        with open(log, "wb") as out:
            job._proc = subprocess.Popen([sys.executable, "-m", __spec__.name, str(args), str(result)],
                                         cwd=pool.ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        job._paths = (args, result, log)
        job._started = time.monotonic()


def main(argv: list[str]) -> int:
    args_path, result_path = Path(argv[0]), Path(argv[1])
    os.dup2(2, 1)                                    # the solution's prints go to the log
    try:
        result = {"ok": True, "result": plans_for(json.loads(args_path.read_text(encoding="utf-8")))}
    except Exception as e:
        result = {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                  "traceback": traceback.format_exc(limit=6)}
    tmp = result_path.with_name(result_path.name + ".tmp")
    tmp.write_text(json.dumps(result), encoding="utf-8")
    os.replace(tmp, result_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
