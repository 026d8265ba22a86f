"""Traffic over the links between devices: what peer accesses move, per directed link.

A kernel on device ``i`` touching an array placed on device ``j != i`` makes *peer accesses*. They are
counted per warp-level request, exactly as gpusim counts global memory (``gpusim/observe/coalescing.py``):

* ``bytes``    — the distinct bytes the request's active lanes touch in the remote array (a value two lanes
  of one warp read crosses once; the same value read by two separate instructions crosses twice);
* ``sectors``  — the distinct aligned 32-byte sectors those bytes lie in (the granularity the memory system
  moves; ``sectors * 32 >= bytes``, equal when the request is perfectly coalesced);
* ``requests`` — warp-level requests that touched remote memory.

Direction: a load moves data from the owner to the launcher (link ``j -> i``); a store, and an atomic whose
old value is discarded, from the launcher to the owner (``i -> j``); an atomic whose old value is used both
ways. Nothing is cached: a remote value read by two launches crosses twice. Local accesses count nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..observe.coalescing import global_stats
from ..observe.events import AccessEvent
from ..observe.requests import Requests

Link = tuple[int, int]


@dataclass
class LinkTraffic:
    """Bytes, sectors and requests per directed link ``(src, dst)``; links that carried nothing are absent."""

    bytes: dict[Link, int] = field(default_factory=dict)
    sectors: dict[Link, int] = field(default_factory=dict)
    requests: dict[Link, int] = field(default_factory=dict)

    def add(self, link: Link, nbytes: int, sectors: int, requests: int) -> None:
        for table, value in ((self.bytes, nbytes), (self.sectors, sectors), (self.requests, requests)):
            table[link] = table.get(link, 0) + int(value)

    def merge(self, other: LinkTraffic) -> None:
        for link in other.bytes:
            self.add(link, other.bytes[link], other.sectors.get(link, 0), other.requests.get(link, 0))

    def received(self, device: int) -> int:
        """Bytes that came into ``device`` over all its links."""
        return sum(n for (_, dst), n in self.bytes.items() if dst == device)

    def sent(self, device: int) -> int:
        """Bytes that left ``device`` over all its links."""
        return sum(n for (src, _), n in self.bytes.items() if src == device)

    @property
    def total_bytes(self) -> int:
        return sum(self.bytes.values())

    @property
    def total_sectors(self) -> int:
        return sum(self.sectors.values())

    def to_dict(self) -> dict:
        """JSON-safe: ``{"bytes": {"0->1": n, ...}, "sectors": {...}, "requests": {...}}``."""
        return {name: {f"{s}->{d}": v for (s, d), v in sorted(getattr(self, name).items())}
                for name in ("bytes", "sectors", "requests")}


def count_peer_access(traffic: LinkTraffic, ev: AccessEvent, launcher: int, owner: int,
                      threads_per_block: int) -> None:
    """Add one access event on an array of device ``owner``, made by a kernel on device ``launcher``."""
    if ev.gtid.size == 0:
        return
    req = Requests(ev.warp, ev.gtid, threads_per_block)
    itemsize = ev.array.itemsize
    # placed arrays start on a 256-byte boundary, so sectors relative to the array are the hardware's
    addr = np.asarray(ev.flat, dtype=np.int64) * itemsize
    stats = global_stats(req, addr, itemsize)
    directions = {"ld": ((owner, launcher),), "st": ((launcher, owner),), "red": ((launcher, owner),),
                  "atom": ((launcher, owner), (owner, launcher))}[ev.kind]
    for link in directions:
        traffic.add(link, stats.requested_bytes, stats.sectors, stats.requests)
