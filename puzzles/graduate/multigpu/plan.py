"""The exchange plan of a multi-device case: which elements of which peer array each rank reads, and when.

gpusim runs the whole case once (every rank's launches in issue order, as ``puzzles.multidevice`` does)
with an observer on every peer array a launch is given. What it records becomes the plan:

* **Epochs.** The steps between two ``Sync`` points form an epoch (epoch 0 before the first ``Sync``).
* **Transfers.** For each epoch ``e``, reader rank ``d`` and peer buffer ``x@q`` (``q != d``): the set of
  elements of ``x@q`` that ``d``'s launches of epoch ``e`` *load*, as sorted flat ranges ``[start, end)``.
  On real GPUs that set is sent from ``q`` to ``d`` at the start of epoch ``e`` (``exchange.py``).
* **Link bytes.** gpusim's own count of the same loads per directed link (``gpusim.devices.links``'s
  ``count_peer_access``, the function ``System`` uses): what the simulator says crosses each link.
* **Faults.** The first launch with a fault (out of bounds, a race, a divergent barrier, and with
  ``races=True`` a race between devices found by ``gpusim.devices.System``) stops the plan; such a case is
  not run on the GPUs. A store or atomic into a peer's array is refused as well (``peer_writes``): chapter 10
  reads peers and writes its own memory (``no_peer_stores``), and a pull is what maps onto a send.

Why a snapshot at the epoch's start gives the kernel what it would read over NVLink: if the program is
race-free (the simulator checks it on the puzzle's own cases), the owner's last write to an element a
reader loads is ordered before the reader's launch, so it precedes the last ``Sync`` before that launch;
and no write of that element comes between that ``Sync`` and the load (it would be a race). So the value at
the ``Sync`` is the value the load sees.

``races=False`` skips the cross-device race tracker (half the time and memory at 2^26 elements): the
benchmark cases use it, the puzzle's own cases do not.
"""

from __future__ import annotations

import copy
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from gpusim.devices.links import LinkTraffic, count_peer_access
from gpusim.observe.events import Observer

from ...model import Case, LaunchStep, Sync
from ...multidevice import build_system, device_of

MAX_FAULTS = 3


@dataclass
class Transfer:
    epoch: int
    owner: int
    reader: int
    buffer: str                          # "x@q", q == owner
    ranges: list[tuple[int, int]]        # flat element ranges, ascending, disjoint
    itemsize: int

    @property
    def elements(self) -> int:
        return sum(e - s for s, e in self.ranges)

    @property
    def nbytes(self) -> int:
        return self.elements * self.itemsize


@dataclass
class Plan:
    slug: str
    case: str
    ranks: int
    epochs: int
    transfers: list[Transfer] = field(default_factory=list)
    sim_link_bytes: dict[str, int] = field(default_factory=dict)     # gpusim: "q->d" -> bytes loaded over it
    sim_link_sectors: dict[str, int] = field(default_factory=dict)
    ideal_link_bytes: dict[str, int] = field(default_factory=dict)   # the puzzle's budget for the case
    faults: list[str] = field(default_factory=list)
    peer_writes: list[str] = field(default_factory=list)
    races_checked: bool = False
    seconds: float = 0.0
    error: str = ""                      # the plan could not be made (a compile error, a bug in the puzzle)

    @property
    def runnable(self) -> str | None:
        """None when the case can run on the GPUs, else why not."""
        if self.error:
            return self.error
        if self.faults:
            return "gpusim found a fault, so it is not run on the GPUs: " + self.faults[0]
        if self.peer_writes:
            return ("the kernels write other devices' memory, which graduate mode does not map onto sends: "
                    + self.peer_writes[0])
        return None

    def sent_link_bytes(self) -> dict[str, int]:
        """Bytes the exchange moves per directed link of logical ranks (every transfer, every epoch)."""
        out: dict[str, int] = {}
        for t in self.transfers:
            key = f"{t.owner}->{t.reader}"
            out[key] = out.get(key, 0) + t.nbytes
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["transfers"] = [{**asdict(t), "ranges": [list(r) for r in t.ranges]} for t in self.transfers]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Plan:
        d = dict(d)
        d["transfers"] = [Transfer(**{**t, "ranges": [tuple(r) for r in t["ranges"]]}) for t in d["transfers"]]
        return cls(**d)


def make_plan(puzzle: Any, solution: Any, case: Case, races: bool = True) -> Plan:
    """Run ``case`` on gpusim with ``solution``'s kernels and record the plan (module docstring)."""
    from gpusim import launch as launch_kernel

    t0 = time.perf_counter()
    spec = case.devices
    if spec is None:
        raise ValueError(f"case {case.name!r} is not a multi-device case")
    buffers = copy.deepcopy(dict(case.buffers))
    system = build_system(case, buffers) if races else None
    plan = Plan(puzzle.slug, case.name, spec.count, 1 + sum(isinstance(s, Sync) for s in case.steps),
                ideal_link_bytes=dict(spec.ideal_link_bytes), races_checked=races)
    traffic = LinkTraffic()
    reads: dict[tuple[int, str], np.ndarray] = {}      # (reader, buffer) -> mask of the current epoch
    epoch = 0
    for step in case.steps:
        if isinstance(step, Sync):
            if system is not None:
                system.synchronize(step.devices or None)
            _flush(plan, reads, buffers, epoch)
            epoch += 1
            continue
        kernel = solution.kernels.get(step.kernel)
        if kernel is None:
            plan.error = f"the case launches {step.kernel!r}, which is not one of the puzzle's kernels"
            break
        watcher = PeerReads(step, kernel, buffers, reads, traffic)
        args = step.arg_values(buffers)
        options = {"instrument": False, "trace": False}
        if system is not None:
            report = system.launch(step.device, kernel, step.grid, step.block, args, step.shared_mem,
                                   observers=[watcher], **options)
        else:
            report = launch_kernel(kernel, step.grid, step.block, args, step.shared_mem, observers=[watcher],
                                   **options)
        plan.peer_writes += watcher.writes[:MAX_FAULTS - len(plan.peer_writes)]
        if report.faults:
            plan.faults = [_fault_text(step, f) for f in report.faults[:MAX_FAULTS]]
            break
        if plan.peer_writes:
            break
    else:
        _flush(plan, reads, buffers, epoch)
    plan.sim_link_bytes = {f"{s}->{d}": n for (s, d), n in sorted(traffic.bytes.items())}
    plan.sim_link_sectors = {f"{s}->{d}": n for (s, d), n in sorted(traffic.sectors.items())}
    plan.seconds = round(time.perf_counter() - t0, 3)
    return plan


def _flush(plan: Plan, reads: dict, buffers: dict, epoch: int) -> None:
    """Turn the epoch's read masks into transfers (in a fixed order: owner, reader, buffer)."""
    for (reader, name), mask in sorted(reads.items(), key=lambda kv: (device_of(kv[0][1]), kv[0][0], kv[0][1])):
        ranges = mask_ranges(mask)
        if ranges:
            plan.transfers.append(Transfer(epoch, device_of(name), reader, name, ranges,
                                           int(buffers[name].dtype.itemsize)))
    reads.clear()


def mask_ranges(mask: np.ndarray) -> list[tuple[int, int]]:
    """The runs of True in a boolean vector, as ``[start, end)`` pairs."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.astype(np.int8), [0]))))
    return [(int(s), int(e)) for s, e in zip(edges[0::2], edges[1::2])]


def peer_args(step: LaunchStep, buffers: dict) -> dict[str, str]:
    """The launch's parameters (by position) that name a peer array: position -> buffer name."""
    out = {}
    for i, arg in enumerate(step.args):
        if isinstance(arg, str) and hasattr(buffers.get(arg), "shape"):
            owner = device_of(arg)
            if owner is not None and owner != step.device:
                out[i] = arg
    return out


class PeerReads(Observer):
    """A gpusim observer for one launch: the elements it loads from each peer array, and its link bytes."""

    def __init__(self, step: LaunchStep, kernel: Any, buffers: dict, reads: dict, traffic):
        self.step, self.buffers, self.reads, self.traffic = step, buffers, reads, traffic
        func = getattr(kernel, "py_func", kernel)
        code = func.__code__
        self.params = code.co_varnames[:code.co_argcount]
        self.writes: list[str] = []
        self._by_id: dict[int, str] = {}
        self._tpb = 1

    def start(self, launch, arrays) -> None:
        self._tpb = launch.threads_per_block
        # an array passed twice is named after its first parameter (gpusim keys arrays by object)
        by_param = {}
        for i, name in peer_args(self.step, self.buffers).items():
            if i < len(self.params):
                by_param.setdefault(self.params[i], name)
        for info in arrays:
            if info.space == "global" and info.name in by_param:
                self._by_id[info.id] = by_param[info.name]

    def on_access(self, ev) -> None:
        name = self._by_id.get(ev.array.id)
        if name is None or ev.gtid.size == 0:
            return
        owner, reader = device_of(name), self.step.device
        count_peer_access(self.traffic, ev, reader, owner, self._tpb)
        if ev.kind != "ld":
            if len(self.writes) < MAX_FAULTS:
                what = "stores into" if ev.kind == "st" else "does an atomic on"
                self.writes.append(f"{self.step.kernel} on device {reader} {what} {name} (line {ev.lineno})")
            return
        mask = self.reads.get((reader, name))
        if mask is None:
            mask = self.reads[(reader, name)] = np.zeros(self.buffers[name].size, bool)
        mask[np.asarray(ev.flat)] = True


def _fault_text(step: LaunchStep, fault: Any) -> str:
    first = str(getattr(fault, "message", "") or fault).splitlines()[0]
    line = getattr(fault, "lineno", 0)
    return f"{step.kernel} on device {step.device}" + (f", line {line}" if line else "") + f": {first}"
