"""Races between devices: two launches on different devices, not ordered, touching one element.

Ordering is *happens-before* over launches, kept with vector clocks (one entry per device):

* each device runs its launches in issue order (one stream): launch ``k`` on device ``d`` has sequence
  number ``k`` on ``d``, and every earlier launch on ``d`` happens before it;
* ``System.synchronize(devices)`` makes every launch issued so far on those devices happen before every
  launch issued on them afterwards (each device's clock becomes the maximum of theirs).

Launch ``A`` (device ``a``, sequence ``s``) happens before a launch on device ``c`` whose clock is ``V``
exactly when ``s <= V[a]``.

Shadow memory per placed array, per element: the last plain write (launch, thread, line), and per device
that touched the array the last plain read and the last atomic since that write. Launches on the same
device are always ordered, so one record per device is enough (if the latest read by device ``q`` happens
before an access, every earlier read by ``q`` does too). A write clears the reads and atomics: anything it
is not ordered after has just been reported. Accesses within one launch are gpusim's own race checker's
business (``observe/races``); this one only compares launches on different devices.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass

import numpy as np

from ..faults import DataRace
from ..observe.events import AccessEvent, LaunchInfo

HAZARDS = {"ld": "read after write", "st": "write after write", "atomic": "write after write"}


@dataclass(eq=False)
class DeviceRace(DataRace):
    """A data race between launches on two devices with no synchronisation between them.

    On top of ``DataRace``'s fields (``block``/``thread``/``lineno`` for the later access, ``other_*`` for the
    earlier one, ``array``, ``index``, ``hazard``): the two devices and the other launch's kernel.
    """

    device: int = -1
    other_device: int = -1
    other_kernel: str = ""
    launch: int = -1           # index of the launch in the system, in issue order (the later access)
    other_launch: int = -1

    def to_dict(self) -> dict:
        out = super().to_dict()
        out.update(device=self.device, other_device=self.other_device, other_kernel=self.other_kernel,
                   other_block=list(self.other_block) if self.other_block is not None else None,
                   other_thread=list(self.other_thread) if self.other_thread is not None else None,
                   other_line=self.other_lineno, hazard=self.hazard)
        return out


@dataclass(frozen=True)
class LaunchRecord:
    """One launch of a ``System``: where it ran and its place in its device's stream."""

    index: int                 # issue order over the whole system
    device: int
    seq: int                   # 1-based position in its device's stream
    clock: np.ndarray          # the device's vector clock when the launch was issued
    kernel: str
    info: LaunchInfo | None = None


class Record:
    """For every element of one array: a launch index (-1: none), the thread and the line of one access."""

    __slots__ = ("launch", "gtid", "line")

    def __init__(self, size: int):
        self.launch = np.full(size, -1, np.int64)
        self.gtid = np.zeros(size, np.int64)
        self.line = np.zeros(size, np.int32)

    def set(self, elems: np.ndarray, launch: int, gtid: np.ndarray, line: int) -> None:
        self.launch[elems], self.gtid[elems], self.line[elems] = launch, gtid, line


class Shadow:
    """Per-element access history of one placed array, across the launches of a system: the last plain
    write, and per device (created when the device first touches the array) the last plain read and the
    last atomic since that write."""

    def __init__(self, size: int, name: str = ""):
        self.name = name                     # the array's name in the system, for messages
        self.size = size
        self.write = Record(size)
        self.reads: dict[int, Record] = {}
        self.atomics: dict[int, Record] = {}

    def of(self, table: dict[int, Record], device: int) -> Record:
        if device not in table:
            table[device] = Record(self.size)
        return table[device]


class RaceTracker:
    """Checks each access event against the shadows and records it; collects ``DeviceRace`` faults."""

    def __init__(self):
        self.launches: list[LaunchRecord] = []
        self._device = np.zeros(0, np.int64)   # launch index -> device
        self._seq = np.zeros(0, np.int64)      # launch index -> sequence number on its device

    def add_launch(self, record: LaunchRecord) -> None:
        self.launches.append(record)
        self._device = np.append(self._device, record.device)
        self._seq = np.append(self._seq, record.seq)

    def set_info(self, index: int, info: LaunchInfo) -> None:
        r = self.launches[index]
        self.launches[index] = LaunchRecord(r.index, r.device, r.seq, r.clock, r.kernel, info)

    def _unordered(self, launches: np.ndarray, current: LaunchRecord) -> np.ndarray:
        """Mask: launches (indices, -1 = none) on other devices that do not happen before ``current``."""
        valid = launches >= 0
        safe = np.where(valid, launches, 0)
        dev = self._device[safe]
        return valid & (dev != current.device) & (self._seq[safe] > current.clock[dev])

    def access(self, shadow: Shadow, ev: AccessEvent, current: LaunchRecord, array: str,
               shape: tuple[int, ...]) -> list[DeviceRace]:
        """Check one event of ``current`` on a placed array, update the shadow, return new races."""
        elems = np.asarray(ev.flat, dtype=np.int64)
        if elems.size == 0:
            return []
        here = _Access(shadow, ev, elems, np.asarray(ev.gtid, dtype=np.int64), current, array, shape)
        kind = "atomic" if ev.kind in ("atom", "red") else ev.kind
        found: list[DeviceRace] = []
        # against the last plain write: every kind of access conflicts with it
        self._check(found, here, shadow.write, HAZARDS[kind])
        if kind != "atomic":       # an atomic never races with an atomic
            for q, record in sorted(shadow.atomics.items()):
                if q != current.device:
                    self._check(found, here, record, "read after write" if kind == "ld" else "write after write")
        if kind != "ld":           # reads only conflict with writes and atomics
            for q, record in sorted(shadow.reads.items()):
                if q != current.device:
                    self._check(found, here, record, "write after read")
        if kind == "ld":
            shadow.of(shadow.reads, current.device).set(elems, current.index, here.gtid, ev.lineno)
        elif kind == "atomic":
            shadow.of(shadow.atomics, current.device).set(elems, current.index, here.gtid, ev.lineno)
        else:
            shadow.write.set(elems, current.index, here.gtid, ev.lineno)
            for record in (*shadow.reads.values(), *shadow.atomics.values()):
                record.launch[elems] = -1
        return found

    def _check(self, found: list[DeviceRace], here: _Access, prior: Record, hazard: str) -> None:
        """Report the first element of ``here`` whose ``prior`` access is on another device and not ordered
        before ``here``'s launch; ``count`` says how many elements are."""
        launch_of, gtid_of, line_of = prior.launch, prior.gtid, prior.line
        mask = self._unordered(launch_of[here.elems], here.current)
        if not mask.any():
            return
        hits = np.flatnonzero(mask)
        k = int(hits[0])
        e = int(here.elems[k])
        current, other = here.current, self.launches[int(launch_of[e])]
        other_line = int(line_of[e])
        info = current.info
        block, thread = info.split_gtid(int(here.gtid[k])) if info is not None else (None, None)
        oblock, othread = other.info.split_gtid(int(gtid_of[e])) if other.info is not None else (None, None)
        index = tuple(int(i) for i in np.unravel_index(e, here.shape)) if here.shape else ()
        source, there = _source(info, here.ev.lineno), _source(other.info, other_line)
        mine, theirs = {"read after write": ("read", "wrote"), "write after read": ("wrote", "read"),
                        "write after write": ("wrote", "wrote")}[hazard]
        placed = here.shadow.name
        known = f"{here.array!r}" + (f" (placed as {placed!r})" if placed and placed != here.array else "")
        f = DeviceRace(
            f"Data race between devices on {known} at {list(index)}: device {current.device} {mine} it "
            f"while device {other.device} {theirs} it, with no synchronisation between the two launches "
            f"({hazard}).",
            kernel=current.kernel, filename=info.filename if info else "", lineno=int(here.ev.lineno),
            source_line=source, block=block, thread=thread, array=here.array, index=index, count=int(hits.size),
            other_block=oblock, other_thread=othread, other_lineno=other_line, other_source_line=there,
            hazard=hazard, device=current.device, other_device=other.device, other_kernel=other.kernel,
            launch=current.index, other_launch=other.index)
        f.details.append(f"on device {current.device} (launch {current.index + 1} of the system)")
        f.details.append(f"the other access: device {other.device}, kernel {other.kernel!r} (launch "
                         f"{other.index + 1}), block {_xyz(oblock)}, thread {_xyz(othread)}, line "
                         f"{other_line}: {there.strip()}")
        f.details.append("launches on different devices run concurrently until a synchronisation orders them")
        found.append(f)


@dataclass(frozen=True)
class _Access:
    """The access being checked: its event, elements and threads, the launch, the array."""

    shadow: Shadow
    ev: AccessEvent
    elems: np.ndarray
    gtid: np.ndarray
    current: LaunchRecord
    array: str
    shape: tuple[int, ...]


def _source(info: LaunchInfo | None, line: int) -> str:
    if info is None or not line:
        return ""
    return linecache.getline(info.filename, int(line)).rstrip("\n")


def _xyz(v) -> str:
    return "?" if v is None else "(" + ", ".join(str(int(x)) for x in v) + ")"
