"""One CPU job of graduate mode, in its own process: ``python3 -m puzzles.graduate.jobs ARGS.json RESULT.json``.

* ``estimate``: gpusim's metrics and estimate for a puzzle's benchmark case (``estimates.simulate``), within
  a budget (``budget_s``, default ``estimates.JOB_BUDGET_S``): a launch that would cost more is estimated
  from a sample of its blocks (``gpusim.sampling``).
* ``verify``: the GPU's outputs of a benchmark case (an ``.npz`` the GPU worker wrote) against the
  puzzle's spec, with the checker's comparison (``puzzles.compare.first_mismatch``, the puzzle's
  tolerances). The case is rebuilt here from ``bench(n)``, which is deterministic.

The result file holds ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": "..."}``. What the
solution file prints goes to the job's log, not into the result.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import traceback
from pathlib import Path


def main(argv: list[str]) -> int:
    args_path, result_path = Path(argv[0]), Path(argv[1])
    os.dup2(2, 1)                                    # the solution's prints go to the log
    try:
        args = json.loads(args_path.read_text(encoding="utf-8"))
        result = {"ok": True, "result": run(args)}
    except Exception as e:
        result = {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                  "traceback": traceback.format_exc(limit=6)}
    tmp = result_path.with_name(result_path.name + ".tmp")
    tmp.write_text(json.dumps(result, default=_plain), encoding="utf-8")
    os.replace(tmp, result_path)
    return 0


def run(args: dict) -> dict:
    from .cuda_module import restore_row_stack

    restore_row_stack()                              # solution files import numba.cuda
    from .. import registry

    puzzle = registry.get(args["puzzle"])
    if args["kind"] == "estimate":
        from .estimates import JOB_BUDGET_S, gpu_from_dict, simulate

        return simulate(puzzle, Path(args["path"]), args["size"], gpu_from_dict(args["gpu"]),
                        budget_s=args.get("budget_s", JOB_BUDGET_S))
    if args["kind"] == "verify":
        return verify(puzzle, args["size"], Path(args["outputs"]))
    raise ValueError(f"unknown job kind {args['kind']!r}")


def verify(puzzle, size: int | None, outputs: Path) -> dict:
    import numpy as np

    from ..compare import PuzzleBug, first_mismatch
    from ..multidevice import case_outputs
    from .estimates import bench_case

    case, _ = bench_case(puzzle, size)
    before = dict(case.buffers)
    with np.load(outputs) as f:
        got = {k: f[k] for k in f.files}
    try:
        expected = puzzle.spec(**copy.deepcopy(before))
        mismatch = first_mismatch(case_outputs(puzzle, case), got, expected, before, puzzle.rtol, puzzle.atol)
    except PuzzleBug as e:
        return {"ok": False, "message": f"the puzzle's spec cannot judge this case: {e}"}
    return {"ok": mismatch is None, "message": "" if mismatch is None else mismatch.message}


def _plain(value):
    try:
        import numpy as np

        if isinstance(value, np.generic):
            return value.item()
    except ImportError:
        pass
    raise TypeError(f"{type(value).__name__} is not JSON")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
