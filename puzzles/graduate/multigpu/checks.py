"""Judging one task of a multi-GPU run from what its ranks reported, in the launcher.

* **Against the spec**: the outputs of every rank (``x@d`` for each logical rank ``d``) are put together
  and compared with the puzzle's spec exactly as the checker compares (``puzzles.compare.first_mismatch``,
  the puzzle's tolerances), on the case rebuilt here from the task.
* **Against the library** (collectives with one rank per process): each rank's result beside the library's
  own collective on the same inputs (``collectives.Collective.compare``).
* **Bytes per link**, per directed link between *processes* (a link between two logical ranks placed on
  one process is a local copy and leaves the table): gpusim's count for the same case (``Plan``), the
  bytes the exchange actually sent (counted by the ranks in the checked run), and for a collective the
  bytes a bandwidth-optimal algorithm moves over each link, bus factor x S (what NCCL's ring moves).
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

from ...compare import PuzzleBug, first_mismatch
from ...model import Puzzle
from ...multidevice import output_names
from .collectives import bandwidths, collective_for
from .plan import Plan
from .tasks import Task, build_case, placement, size_label


def base(puzzle: Puzzle, task: Task, plan: Plan | None) -> dict:
    coll = collective_for(task.slug)
    label = "" if task.kind == "case" else size_label(task.nbytes) if task.nbytes else \
        "max" if task.n is None else f"n={task.n:,}"
    return {"task": task.to_dict(), "id": task.id, "number": puzzle.number, "slug": puzzle.slug, "kind": task.kind,
            "case": plan.case if plan is not None and plan.case != task.id else _case_name(puzzle, task),
            "label": label, "correct": False, "status": "",
            "collective": coll.name if coll else None, "library": None, "timing": None, "library_timing": None,
            "links": {}, "plan_seconds": plan.seconds if plan is not None else None,
            "ranks": plan.ranks if plan is not None else 0}


def _case_name(puzzle: Puzzle, task: Task) -> str:
    return tuple(puzzle.make_cases())[task.index].name if task.kind == "case" else ""


def failure(puzzle: Puzzle, task: Task, plan: Plan | None, message: str, status: str = "error") -> dict:
    """A task without results: ``status`` "error" (it failed on the ranks) or "not run"."""
    out = base(puzzle, task, plan)
    out["status"] = f"{status}: {message}"
    return out


def check(puzzle: Puzzle, task: Task, plan: Plan, results: list[dict], devices: int) -> dict:
    out = base(puzzle, task, plan)
    skipped = next((r["skipped"] for r in results if r.get("skipped")), None)
    if skipped:
        out["status"] = f"not run: {skipped}"
        return out
    err = first_error(results)
    if err:
        where = f" ({Path(err['filename']).name}:{err['lineno']})" if err.get("lineno") else ""
        out["status"] = f"error: {err['kind']}: {err['message']}{where}"
        return out
    case = build_case(puzzle, task)
    got, library = {}, {}
    for r in results:
        if not r.get("outputs"):
            continue
        with np.load(r["outputs"]) as f:
            for key in f.files:
                (library if key.startswith("library:") else got)[key.removeprefix("library:")] = f[key]
        Path(r["outputs"]).unlink(missing_ok=True)
    before = copy.deepcopy(dict(case.buffers))
    try:
        expected = puzzle.spec(**copy.deepcopy(before))
        mismatch = first_mismatch(output_names(puzzle, case.buffers), got, expected, before, puzzle.rtol,
                                  puzzle.atol)
        out["status"] = "pass" if mismatch is None else f"FAIL: {mismatch.message}"
    except PuzzleBug as e:
        out["status"] = f"FAIL: the spec cannot judge the outputs: {e}"
    out["correct"] = out["status"] == "pass"
    coll = collective_for(task.slug)
    place = placement(plan.ranks, devices)
    out["links"] = {"gpusim": _by_process(plan.sim_link_bytes, place), "sent": _merge(r.get("sent") for r in results),
                    "ideal": _by_process(plan.ideal_link_bytes, place)}
    if task.kind != "bench":
        return out
    if coll:
        out["label"] = size_label(coll.size_bytes(case.buffers))
    out["timing"] = results[0].get("timing")
    out["nvlink"] = [r.get("nvlink") for r in results] if any(r.get("nvlink") for r in results) else None
    out["library_nvlink"] = [r.get("library_nvlink") for r in results] \
        if any(r.get("library_nvlink") for r in results) else None
    if coll is not None:
        nbytes = coll.size_bytes(case.buffers)
        factor = coll.bus_factor(plan.ranks)
        out.update(nbytes=nbytes, bus_factor=factor)
        out["algbw"], out["busbw"] = bandwidths(nbytes, (out["timing"] or {}).get("median_s"), factor)
        out["links"]["nominal"] = int(round(factor * nbytes)) if plan.ranks == devices >= 2 else None
        if library:
            inputs = coll.inputs(case.buffers, plan.ranks)
            per_rank = [coll.compare(got[f"{coll.output}@{r}"], library[f"{coll.output}@{r}"], inputs, r)
                        for r in range(plan.ranks)]
            out["library"] = {"ok": all(c["ok"] for c in per_rank), "bit_exact": all(c["bit_exact"] for c in per_rank),
                              "rule": per_rank[0]["rule"], "ranks": per_rank}
            out["library_timing"] = results[0].get("library_timing")
            out["lib_algbw"], out["lib_busbw"] = bandwidths(nbytes, (out["library_timing"] or {}).get("median_s"),
                                                            factor)
            if not out["library"]["ok"]:
                out["correct"] = False
    moved = sum(out["links"]["sent"].values())
    t = (out["timing"] or {}).get("median_s")
    out["link_bandwidth"] = max(out["links"]["sent"].values()) / t if t and moved else None
    return out


def first_error(results: list[dict]) -> dict | None:
    """The error that explains a task: a compile error or a fault before a rank's internal error (a rank
    whose peer died sees its exchange fail)."""
    errors = [r["error"] for r in results if r.get("error")]
    errors.sort(key=lambda e: e.get("kind") == "internal")
    return errors[0] if errors else None


def _by_process(links: dict[str, int], place: list[int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, n in links.items():
        src, dst = (int(x) for x in key.split("->"))
        if src >= len(place) or dst >= len(place) or place[src] == place[dst]:
            continue
        k = f"{place[src]}->{place[dst]}"
        out[k] = out.get(k, 0) + int(n)
    return dict(sorted(out.items()))


def _merge(dicts) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in dicts:
        for k, v in (d or {}).items():
            out[k] = out.get(k, 0) + int(v)
    return dict(sorted(out.items()))
