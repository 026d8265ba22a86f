"""Running a multi-device case (chapter 10) on ``gpusim.devices.System``, and judging it.

A multi-device ``Case`` has ``devices`` set (``Devices(count, topology)``). Its conventions:

* **Placement by name.** An array buffer ``x@2`` is the array ``x`` placed on device 2; every array buffer
  of such a case carries its device. Scalars need no placement (``rank@2`` is just a value).
* **Outputs per device.** A puzzle output ``x`` means every buffer ``x@d`` of the case; the spec returns
  the expected array under each of those names.
* **Steps.** ``LaunchStep.device`` runs the launch on that device; its ``args`` may hold ints (the rank, the
  round) besides buffer names. ``Sync(devices)`` orders devices (``System.synchronize``); a ``Sync`` of every
  device ends a *round*.

``run_case`` is the checker's hook: it runs the steps in order, stops at the first launch with a fault,
compares the outputs with the spec, measures ``RunStats`` over all launches (``puzzles.stats.measure``) and
adds what only several devices have (bytes and sectors per link, bytes stored into peers' memory, each
launch's round and device), then checks the constraints.

On real GPUs (graduate mode, one process per GPU): every peer access of chapter 10's cases is a *read*
(``no_peer_stores`` holds for every reference), and every peer array a launch reads was last written before
the latest ``Sync`` of every device (otherwise the race checker reports it). So a launch on device ``d`` that
is given ``x@q`` maps to: at the ``Sync`` before it, ``q`` sends ``x@q`` to ``d`` (NCCL send/recv), ``d``
receives it into a local copy, and the kernel reads the copy. ``peer_reads(case)`` lists those transfers.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from gpusim.devices import DeviceRace, System, Topology

from .compare import PuzzleBug, first_mismatch
from .model import Case, LaunchStep, Puzzle, RunStats, Sync
from .results import CaseResult, Failure
from .stats import measure

TOPOLOGIES = {"ring": Topology.ring, "switch": Topology.switch}


def device_of(name: str) -> int | None:
    """The device in a buffer name ``x@3`` (3), or None when the name has none."""
    base, at, device = name.rpartition("@")
    if not at or not base or not device.isdigit():
        return None
    return int(device)


def base_name(name: str) -> str:
    """``x@3`` -> ``x``; a name without a device is returned as it is."""
    return name.rpartition("@")[0] if device_of(name) is not None else name


def output_names(puzzle: Puzzle, buffers: dict[str, Any]) -> tuple[str, ...]:
    """The case's buffers that the puzzle's outputs stand for, by output then device."""
    names = []
    for output in puzzle.outputs:
        found = sorted((n for n in buffers if base_name(n) == output and device_of(n) is not None), key=device_of)
        if output in buffers:
            found.insert(0, output)
        if not found:
            raise PuzzleBug(f"output {output!r} has no buffer {output}@<device> in the case")
        names.extend(found)
    return tuple(names)


def case_outputs(puzzle: Puzzle, case: Case) -> tuple[str, ...]:
    """The buffers compared with the spec in any case: ``puzzle.outputs``, or for a multi-device case the
    ``x@d`` buffers they stand for."""
    return output_names(puzzle, case.buffers) if case.devices is not None else tuple(puzzle.outputs)


def build_system(case: Case, buffers: dict[str, Any]) -> System:
    """A ``System`` for ``case.devices`` with every array of ``buffers`` placed by its name."""
    spec = case.devices
    make = TOPOLOGIES.get(spec.topology)
    if make is None:
        raise PuzzleBug(f"case {case.name!r} asks for topology {spec.topology!r}; known: {sorted(TOPOLOGIES)}")
    system = System(make(spec.count))
    for name, value in buffers.items():
        if not hasattr(value, "shape") or not hasattr(value, "dtype") or getattr(value, "ndim", 0) == 0:
            continue
        device = device_of(name)
        if device is None or not 0 <= device < spec.count:
            raise PuzzleBug(f"array buffer {name!r} of case {case.name!r} is not placed on one of its "
                            f"{spec.count} devices (name it <name>@<device>)")
        system.place(device, value, name)
    return system


def peer_reads(case: Case) -> list[tuple[int, int, str, int]]:
    """Every peer array a launch is given: ``(step index, launching device, buffer, owner)``, in step order.

    For graduate mode: the owner sends the buffer to the launching device at the last ``Sync`` before the
    step, and the launch reads a local copy.
    """
    found = []
    for index, step in enumerate(case.steps):
        if not isinstance(step, LaunchStep):
            continue
        for arg in step.args:
            owner = device_of(arg) if isinstance(arg, str) else None
            if owner is not None and owner != step.device and hasattr(case.buffers.get(arg), "shape"):
                found.append((index, step.device, arg, owner))
    return found


def run_case(puzzle: Puzzle, solution: Any, case: Case, outcome: CaseResult, *, trace: bool = False,
             max_steps: int | None = None) -> None:
    """Run a multi-device case and judge it, filling ``outcome`` as the checker does for one device:
    ``reports`` (every launch that ran), ``failures`` (the first fault, a mismatch, broken constraints),
    ``stats``. Exceptions (``PuzzleBug``, ``LaunchError``, compile errors) are the checker's to turn into
    failures."""
    buffers = copy.deepcopy(dict(case.buffers))
    before = copy.deepcopy(dict(case.buffers))
    system = build_system(case, buffers)
    round_number, log = 0, []
    for number, step in enumerate(case.steps, 1):
        if isinstance(step, Sync):
            system.synchronize(step.devices or None)
            if not step.devices or set(step.devices) >= set(range(system.size)):
                round_number += 1
            continue
        kernel = solution.kernels.get(step.kernel)
        if kernel is None:
            raise PuzzleBug(f"case {case.name!r} launches {step.kernel!r}, not one of the puzzle's kernels")
        unknown = [a for a in step.args if not isinstance(a, int) and a not in buffers]
        if unknown:
            raise PuzzleBug(f"case {case.name!r} passes unknown buffers {unknown}")
        report = system.launch(step.device, kernel, step.grid, step.block, step.arg_values(buffers),
                               step.shared_mem, trace=trace, max_steps=max_steps)
        outcome.reports.append(report)
        if report.faults:
            outcome.failures.append(_fault_failure(case, step, number, report))
            return
        log.append((round_number, step.device, step.kernel, _wrote(report)))
    expected = _spec(puzzle, before)
    mismatch = first_mismatch(output_names(puzzle, buffers), buffers, expected, before, puzzle.rtol, puzzle.atol)
    if mismatch is not None:
        outcome.failures.append(Failure("mismatch", mismatch.message, case.name, detail=mismatch.to_dict()))
    measured = measure(outcome.reports)
    outcome.stats = with_devices(measured.stats, case, system, outcome.reports, tuple(log))
    outcome.stats_complete = measured.complete
    outcome.unmeasured = list(measured.missing)
    for rule in puzzle.constraints:
        try:
            why = rule.check(outcome.stats)
        except Exception as e:
            raise PuzzleBug(f"its rule {rule.description!r} failed: {type(e).__name__}: {e}") from None
        if why is not None:
            outcome.failures.append(Failure(
                "constraint", f"constraint not met ({rule.description}): {why}", case.name,
                detail={"rule": rule.description, "reason": why}))


def with_devices(stats: RunStats, case: Case, system: System, reports: list, log: tuple) -> RunStats:
    """``stats`` with the multi-device numbers of ``system``, its launches' reports and the case."""
    peer_stores = 0
    for report in reports:
        device, traffic = report.extra.get("device"), report.extra.get("links")
        if traffic is not None:
            peer_stores += sum(n for (src, _), n in traffic.bytes.items() if src == device)
    return dataclasses.replace(
        stats,
        link_bytes={f"{s}->{d}": n for (s, d), n in sorted(system.links.bytes.items())},
        link_sectors={f"{s}->{d}": n for (s, d), n in sorted(system.links.sectors.items())},
        ideal_link_bytes=dict(case.devices.ideal_link_bytes),
        ideal_rounds=case.devices.ideal_rounds,
        peer_store_bytes=peer_stores,
        device_launches=log,
    )


def _wrote(report: Any) -> bool:
    totals = getattr(report.counts, "totals", None) or {}
    return bool(totals.get("global_st", 0) or totals.get("global_atom", 0))


def _fault_failure(case: Case, step: LaunchStep, number: int, report: Any) -> Failure:
    first, others = report.faults[0], report.faults[1:]
    message = first.message
    if others:
        named = ", ".join(f"{type(f).__name__} at line {f.lineno}" for f in others[:3])
        message += f"\n  also in this launch: {named}" + (" and more" if len(others) > 3 else "")
    detail = {"launch": number, "kernel": step.kernel, "device": step.device,
              # a race between devices is a DataRace to everything that sorts faults by kind
              "faults": ["DataRace" if isinstance(f, DeviceRace) else type(f).__name__ for f in report.faults],
              "between_devices": any(isinstance(f, DeviceRace) for f in report.faults)}
    return Failure("fault", f"on device {step.device}: " + message, case.name, fault=first, detail=detail)


def _spec(puzzle: Puzzle, before: dict[str, Any]) -> dict[str, Any]:
    try:
        expected = puzzle.spec(**copy.deepcopy(before))
    except Exception as e:
        raise PuzzleBug(f"its spec failed: {type(e).__name__}: {e}") from None
    if not hasattr(expected, "keys"):
        raise PuzzleBug(f"its spec returned a {type(expected).__name__}, not a mapping of outputs")
    return dict(expected)


__all__ = ["base_name", "build_system", "case_outputs", "device_of", "output_names", "peer_reads", "run_case",
           "with_devices"]
