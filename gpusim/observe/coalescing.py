"""Global-memory coalescing: requests and 32-byte sectors per warp-level access, as ncu counts them.

Rules (NVIDIA CUDA Best Practices Guide, checked with ncu on an H200, see docs/metrics.md):

* one *request* per warp that executes the access with at least one active lane;
* a load or store request moves the distinct aligned 32-byte *sectors* its active lanes touch;
* an atomic request (``atom`` or ``red``) is served in rounds, one lane per address per round, so a sector
  counts once for every lane that hits the busiest address in it: sectors = sum over the sectors the request
  touches of the largest number of its lanes on one address in that sector (read on the H200: a histogram
  of 32 lanes over 16 int32 bins, 60 sectors for 8 requests);
* the *ideal* sectors of a request are ceil(distinct bytes its lanes touch / 32): what a perfectly coalesced
  access moving the same bytes would need;
* *requested bytes* are the distinct bytes each request's lanes touch, summed, so bytes requested ÷ bytes
  moved (sectors × 32) is the coalescing efficiency, 1.0 at best.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .requests import Requests

SECTOR = 32


@dataclass(frozen=True)
class GlobalStats:
    """What one warp-level global access cost, summed over its requests."""

    requests: int
    sectors: int
    ideal_sectors: int
    requested_bytes: int


def global_stats(req: Requests, addr: np.ndarray, itemsize: int, atomic: bool = False) -> GlobalStats:
    """Requests, sectors, ideal sectors and requested bytes of one access.

    ``addr`` is each active lane's byte address (``base_address + flat * itemsize``); elements are aligned
    to their size, so an element never straddles two sectors.
    """
    if req.n == 0:
        return GlobalStats(0, 0, 0, 0)
    monotone = req.monotone(addr)
    if monotone and not atomic:
        sectors = int(np.count_nonzero(req.first_of_value(addr // SECTOR)))
        if req.strictly_increasing(addr):
            touched = req.sizes() * itemsize                                 # distinct bytes per request
        else:
            touched = req.distinct(addr, monotone=True) * itemsize
    else:
        row, value, mult = req.unique(addr, monotone=monotone)
        touched = np.bincount(row, minlength=req.count) * itemsize
        sectors = _sectors(row, value, mult if atomic else None)
    ideal = int(((touched + SECTOR - 1) // SECTOR).sum())
    return GlobalStats(req.count, sectors, ideal, int(touched.sum()))


def _sectors(row: np.ndarray, addr: np.ndarray, mult: np.ndarray | None) -> int:
    """Sectors of distinct (request, address) pairs sorted by request then address.

    Loads and stores (``mult`` None) move each distinct (request, sector) once; atomics move it once per
    lane on the busiest address in it (``mult``: lanes per address).
    """
    sector = addr // SECTOR
    group = np.empty(len(row), dtype=bool)
    group[0] = True
    group[1:] = (row[1:] != row[:-1]) | (sector[1:] != sector[:-1])
    if mult is None:
        return int(np.count_nonzero(group))
    return int(np.maximum.reduceat(mult, np.flatnonzero(group)).sum())


def atomic_sectors(req: Requests, addr: np.ndarray) -> int:
    """Sectors an atomic access moves: per (request, sector), the most lanes on one address in it."""
    row, value, mult = req.unique(addr)
    return _sectors(row, value, mult)
