"""Warp-level requests: splitting one access event's lane vectors into the requests a GPU would issue.

The engine reports one source access executed by many lanes at once (``AccessEvent``), lanes of many warps
and blocks together, in ascending global thread id. On a GPU each warp with at least one active lane issues
one instruction for it: one *request*. ``Requests`` finds those requests and answers the questions every
counter asks of them — how many distinct values (sectors, words, elements) each request touches, and how
often each one — with sorting and ``np.bincount`` over whole vectors, never a Python loop over lanes.

Two paths: when the values grow along the lanes of each warp (coalesced, strided, broadcast — the common
case) distinct values are counted by comparing neighbours; otherwise (gathers, scatters, transposes) the
lanes are laid out in a ``(requests, 32)`` matrix by lane number and each row is sorted.
"""

from __future__ import annotations

import numpy as np

from ..device import WARP_SIZE as WARP


class Requests:
    """The warp-level requests of one event.

    ``warp`` (one entry per active lane, non-decreasing) names each lane's warp; ``gtid`` and
    ``threads_per_block`` give each lane's number inside its warp (0-31), needed only for patterns that
    are not monotone.
    """

    def __init__(self, warp: np.ndarray, gtid: np.ndarray, threads_per_block: int):
        self.n = len(warp)
        self.warp = warp
        self.gtid = gtid
        self.threads_per_block = threads_per_block
        self._lane = None
        new = np.empty(self.n, dtype=bool)
        if self.n:
            new[0] = True
            np.not_equal(warp[1:], warp[:-1], out=new[1:])
        self.new = new                          # True where a lane starts a new request
        self.starts = np.flatnonzero(new)       # first lane of each request
        new.flags.writeable = self.starts.flags.writeable = False   # shared by every observer of the event
        self.count = len(self.starts)           # number of requests
        self._row = None

    @property
    def lane(self) -> np.ndarray:
        """Each lane's number inside its warp: (thread index within the block) mod 32."""
        if self._lane is None:
            if self.threads_per_block % WARP == 0:
                self._lane = self.gtid & (WARP - 1)
            else:
                self._lane = (self.gtid % self.threads_per_block) % WARP
            self._lane.flags.writeable = False
        return self._lane

    @property
    def row(self) -> np.ndarray:
        """Request index (0..count-1) of every lane."""
        if self._row is None:
            w0, w1 = int(self.warp[0]), int(self.warp[-1])
            if w1 - w0 + 1 == self.count:          # every warp in between has lanes: rows are warp offsets
                self._row = self.warp - w0
            else:
                self._row = np.cumsum(self.new) - 1
            self._row.flags.writeable = False
        return self._row

    def span(self, v: np.ndarray) -> np.ndarray:
        """max(v) - min(v) over the lanes of each request."""
        return np.maximum.reduceat(v, self.starts) - np.minimum.reduceat(v, self.starts)

    def sizes(self) -> np.ndarray:
        """Active lanes per request."""
        return np.diff(np.append(self.starts, self.n))

    def monotone(self, v: np.ndarray) -> bool:
        """True when ``v`` never decreases along the lanes of a request."""
        if self.n < 2:
            return True
        return bool(np.all((v[1:] >= v[:-1]) | self.new[1:]))

    def strictly_increasing(self, v: np.ndarray) -> bool:
        """True when ``v`` grows strictly along the lanes of each request (no two lanes share a value)."""
        if self.n < 2:
            return True
        return bool(np.all((v[1:] > v[:-1]) | self.new[1:]))

    def first_of_value(self, v: np.ndarray) -> np.ndarray:
        """For monotone ``v``: True at the first lane of each distinct (request, value)."""
        first = self.new.copy()
        if self.n > 1:
            first[1:] |= v[1:] != v[:-1]
        return first

    def distinct(self, v: np.ndarray, monotone: bool | None = None) -> np.ndarray:
        """Number of distinct values of ``v`` in each request (``monotone``: already known for ``v``)."""
        if self.monotone(v) if monotone is None else monotone:
            return np.add.reduceat(self.first_of_value(v), self.starts) if self.n else np.zeros(0, np.int64)
        row, _, _ = self.unique(v)
        return np.bincount(row, minlength=self.count)

    def unique(self, v: np.ndarray, monotone: bool | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Distinct (request, value) pairs, sorted by request then value, and how many lanes hold each.

        Returns ``(row, value, multiplicity)``.
        """
        if self.n == 0:
            z = np.zeros(0, np.int64)
            return z, z, z
        if self.monotone(v) if monotone is None else monotone:
            first = self.first_of_value(v)
            pos = np.flatnonzero(first)
            mult = np.diff(np.append(pos, self.n))
            return self.row[pos], v[pos], mult
        return self._unique_by_rows(v)

    def _unique_by_rows(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sentinel = v.min() - 1
        m = np.full((self.count, WARP), sentinel, dtype=np.int64)
        m[self.row, self.lane] = v
        m.sort(axis=1)
        flat = m.ravel()
        new = np.empty(flat.shape, dtype=bool)
        new[0] = flat[0] != sentinel
        np.not_equal(flat[1:], flat[:-1], out=new[1:])
        new[WARP::WARP] = flat[WARP::WARP] != sentinel   # a row's first value never continues the last row
        new &= flat != sentinel
        pos = np.flatnonzero(new)
        # a value's run ends at the next distinct value or at the end of its row (sentinels sort first)
        end = np.minimum(np.append(pos[1:], flat.size), (pos // WARP + 1) * WARP)
        return pos // WARP, flat[pos], end - pos


def requests_of(ev, threads_per_block: int) -> Requests:
    """The requests of access event ``ev``, found once for every observer that asks (kept on the event)."""
    req = ev.__dict__.get("_requests")
    if req is None or req.threads_per_block != threads_per_block:
        req = Requests(ev.warp, ev.gtid, threads_per_block)
        object.__setattr__(ev, "_requests", req)   # the event is frozen; this is a cache, not a field
    return req
