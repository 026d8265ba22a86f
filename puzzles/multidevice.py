"""Running a multi-device case (chapter 10) on ``gpusim.devices.System``, and judging it.

A multi-device ``Case`` has ``devices`` set (``Devices(count, topology)``). Its conventions:

* **Placement by name.** An array buffer ``x@2`` is the array ``x`` placed on device 2; every array buffer
  of such a case carries its device. Scalars need no placement (``rank@2`` is just a value).
* **Outputs per device.** A puzzle output ``x`` means every buffer ``x@d`` of the case; the spec returns
  the expected array under each of those names.
* **Steps.** ``LaunchStep.device`` runs the launch on that device; its ``args`` may hold ints (the rank, the
  round) besides buffer names. ``Sync(devices)`` orders devices (``System.synchronize``); a ``Sync`` of every
  device ends a *round*.

The checker runs such a case as any other (``checker._launch_all``), with what this module gives it: a
``System`` holding the case's arrays (``build_system``), ``synchronize`` for its ``Sync`` steps, the buffers its
outputs stand for (``case_outputs``), and ``with_devices``, which adds to the measured ``RunStats`` what only
several devices have (bytes and sectors per link, bytes stored into peers' memory, each launch's round and
device).

On real GPUs (graduate mode, one process per GPU): every peer access of chapter 10's cases is a *read*
(``no_peer_stores`` holds for every reference), and every peer array a launch reads was last written before
the latest ``Sync`` of every device (otherwise the race checker reports it). So a launch on device ``d`` that
is given ``x@q`` maps to: at the ``Sync`` before it, ``q`` sends ``x@q`` to ``d`` (NCCL send/recv), ``d``
receives it into a local copy, and the kernel reads the copy. ``peer_reads(case)`` lists those transfers.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gpusim.devices import DeviceRace, System, Topology

from .compare import PuzzleBug
from .model import Case, LaunchStep, Puzzle, RunStats, Sync

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


def synchronize(system: System, step: Any) -> bool:
    """Carry out ``step`` if it is a ``Sync`` (and say so); a launch step is left to the caller."""
    if not isinstance(step, Sync):
        return False
    system.synchronize(step.devices or None)
    return True


def buffer_names(names: tuple[str, ...], buffers: dict[str, Any]) -> tuple[str, ...]:
    """The buffers ``names`` stand for: each name itself, and every ``name@d`` of a multi-device case."""
    return tuple(n for n in buffers if n in names or (device_of(n) is not None and base_name(n) in names))


def fault_kind(fault: Any) -> str:
    """A fault's kind by name, a race between devices counting as a ``DataRace`` (as faults are sorted)."""
    return "DataRace" if isinstance(fault, DeviceRace) else type(fault).__name__


def between_devices(faults: list) -> bool:
    return any(isinstance(f, DeviceRace) for f in faults)


def launch_log(case: Case, reports: list) -> tuple[tuple[int, int, str, bool], ...]:
    """Each launch that ran as ``(round, device, kernel, wrote global memory)``; a ``Sync`` of every device
    ends a round."""
    log, round_number, ran = [], 0, iter(reports)
    for step in case.steps:
        if isinstance(step, Sync):
            if not step.devices or set(step.devices) >= set(range(case.devices.count)):
                round_number += 1
            continue
        report = next(ran, None)
        if report is None:
            break
        log.append((round_number, step.device, step.kernel, _wrote(report)))
    return tuple(log)


def with_devices(stats: RunStats, case: Case, system: System, reports: list) -> RunStats:
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
        device_launches=launch_log(case, reports),
    )


def _wrote(report: Any) -> bool:
    totals = getattr(report.counts, "totals", None) or {}
    return bool(totals.get("global_st", 0) or totals.get("global_atom", 0))


__all__ = ["base_name", "between_devices", "buffer_names", "build_system", "case_outputs", "device_of", "fault_kind",
           "launch_log", "output_names", "peer_reads", "synchronize", "with_devices"]
