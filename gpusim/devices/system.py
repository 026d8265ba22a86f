"""``System``: several simulated devices, their arrays, their launches and the links between them.

See the package docstring (``gpusim.devices``) for the model and its limits.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..faults import LaunchError
from ..launch import launch as launch_kernel
from ..observe.events import AccessEvent, ArrayInfo, LaunchInfo, Observer
from ..report import LaunchReport
from .links import LinkTraffic, count_peer_access
from .races import DeviceRace, LaunchRecord, RaceTracker, Shadow
from .topology import Topology


class System:
    """``topology.size`` devices. Place arrays with ``place``, launch with ``launch``, order devices with
    ``synchronize``; read ``links`` (traffic per directed link), ``faults`` (races between devices) and
    ``launches`` (every launch, in issue order)."""

    def __init__(self, topology: Topology | int):
        self.topology = topology if isinstance(topology, Topology) else Topology.switch(int(topology))
        self.size = self.topology.size
        self.links = LinkTraffic()
        self.faults: list[DeviceRace] = []
        self.races = RaceTracker()
        self._clocks = np.zeros((self.size, self.size), np.int64)   # row d: device d's vector clock
        self._placed: dict[int, tuple[np.ndarray, int, Shadow]] = {}

    # -- memory -------------------------------------------------------------------------------------------
    def place(self, device: int, array: np.ndarray, name: str = "") -> np.ndarray:
        """Make ``array`` live on ``device`` (returns it); ``name`` is how faults refer to it (kernels on
        different devices may know one array by different parameter names). A placed array cannot be placed
        again, and arrays of different placements may not overlap in memory."""
        self._check_device(device)
        if not isinstance(array, np.ndarray):
            raise LaunchError(f"only NumPy arrays can be placed on a device, not {type(array).__name__}")
        if id(array) in self._placed:
            raise LaunchError(f"this array is already placed on device {self._placed[id(array)][1]}")
        for other, where, _ in self._placed.values():
            if np.may_share_memory(array, other):
                raise LaunchError(f"the array overlaps one placed on device {where}; place separate arrays")
        self._placed[id(array)] = (array, int(device), Shadow(array.size, name))
        return array

    def device_of(self, array: np.ndarray) -> int:
        """The device ``array`` was placed on (``LaunchError`` if it was not placed)."""
        entry = self._placed.get(id(array))
        if entry is None or entry[0] is not array:
            raise LaunchError("the array is not placed on any device (System.place it first)")
        return entry[1]

    # -- ordering -----------------------------------------------------------------------------------------
    def synchronize(self, devices: Iterable[int] | None = None) -> None:
        """Order ``devices`` (all when None): every launch issued on them so far happens before every launch
        issued on them afterwards — a barrier across those devices' streams."""
        chosen = list(range(self.size)) if devices is None else sorted({int(d) for d in devices})
        for d in chosen:
            self._check_device(d)
        if chosen:
            joined = self._clocks[chosen].max(axis=0)
            self._clocks[chosen] = joined

    # -- launches -----------------------------------------------------------------------------------------
    @property
    def launches(self) -> list[LaunchRecord]:
        return list(self.races.launches)

    def launch(self, device: int, kernel: Any, grid: Any, block: Any, args: tuple | list = (),
               shared_mem: int = 0, *, observers: list | None = None, **options: Any) -> LaunchReport:
        """Run ``kernel`` on ``device`` through ``gpusim.launch`` (same arguments and options).

        Every array argument must be placed, on ``device`` or on a device linked to it. The report gets
        ``extra["device"]``, ``extra["links"]`` (this launch's ``LinkTraffic``) and, in ``faults``, any
        ``DeviceRace`` this launch's accesses make with launches on other devices.
        """
        self._check_device(device)
        func = getattr(kernel, "py_func", kernel)
        code = getattr(func, "__code__", None)
        names = code.co_varnames[:code.co_argcount] if code is not None else ()
        by_name: dict[str, tuple[np.ndarray, int, Shadow]] = {}
        for name, value in zip(names, args):
            if not isinstance(value, np.ndarray):
                continue
            entry = self._placed.get(id(value))
            if entry is None or entry[0] is not value:
                raise LaunchError(f"argument {name!r} of kernel {func.__name__!r} is not placed on any device; "
                                  f"System.place it on a device first")
            owner = entry[1]
            if not self.topology.linked(device, owner):
                raise LaunchError(f"kernel {func.__name__!r} on device {device} gets {name!r}, placed on device "
                                  f"{owner}, but the {self.topology.name} topology has no link between them")
            by_name.setdefault(name, entry)     # gpusim names an array passed twice after its first parameter
        self._clocks[device, device] += 1
        record = LaunchRecord(len(self.races.launches), int(device), int(self._clocks[device, device]),
                              self._clocks[device].copy(), getattr(func, "__name__", "kernel"))
        self.races.add_launch(record)
        watcher = _PeerWatcher(self, record, by_name)
        report = launch_kernel(kernel, grid, block, args, shared_mem, observers=[watcher, *(observers or [])],
                               **options)
        report.faults.extend(watcher.faults)
        self.faults.extend(watcher.faults)
        self.links.merge(watcher.traffic)
        report.extra["device"] = int(device)
        report.extra["links"] = watcher.traffic
        return report

    def _check_device(self, device: Any) -> None:
        if not isinstance(device, (int, np.integer)) or isinstance(device, bool) or not 0 <= device < self.size:
            raise LaunchError(f"device must be 0..{self.size - 1}, not {device!r}")


class _PeerWatcher(Observer):
    """The observer one launch of a ``System`` runs with: counts link traffic and checks cross-device races."""

    def __init__(self, system: System, record: LaunchRecord, by_name: dict):
        self.system = system
        self.record = record
        self.by_name = by_name
        self.traffic = LinkTraffic()
        self.faults: list[DeviceRace] = []
        self._keys: dict[tuple, DeviceRace] = {}
        self._placed: dict[int, tuple[np.ndarray, int, Shadow]] = {}
        self._tpb = 1

    def start(self, launch: LaunchInfo, arrays: list[ArrayInfo]) -> None:
        self._tpb = launch.threads_per_block
        self.system.races.set_info(self.record.index, launch)
        self.record = self.system.races.launches[self.record.index]
        for info in arrays:
            if info.space == "global" and info.name in self.by_name:
                self._placed[info.id] = self.by_name[info.name]

    def on_access(self, ev: AccessEvent) -> None:
        entry = self._placed.get(ev.array.id)
        if entry is None or ev.array.space != "global":
            return
        _, owner, shadow = entry
        if owner != self.record.device:
            count_peer_access(self.traffic, ev, self.record.device, owner, self._tpb)
        for race in self.system.races.access(shadow, ev, self.record, ev.array.name, ev.array.shape):
            key = (race.array, race.hazard, race.lineno, race.other_launch, race.other_lineno)
            if key in self._keys:
                self._keys[key].count += race.count
            else:
                self._keys[key] = race
                self.faults.append(race)
