"""Helpers for the counter tests: build the lane vectors of one access event, and hypothesis strategies."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from gpusim.observe.requests import Requests


def event_lanes(threads_per_block: int, active: np.ndarray):
    """gtid, block and warp vectors of the active lanes (``active``: a bool per thread of the launch)."""
    gtid = np.flatnonzero(active).astype(np.int64)
    block = gtid // threads_per_block
    warp = block * ((threads_per_block + 31) // 32) + (gtid % threads_per_block) // 32
    return gtid, block, warp


def requests_for(threads_per_block: int, active: np.ndarray) -> tuple[Requests, np.ndarray]:
    gtid, _, warp = event_lanes(threads_per_block, active)
    return Requests(warp, gtid, threads_per_block), gtid


def full(n_threads: int, threads_per_block: int) -> Requests:
    """Requests of an event where every thread of the launch is active."""
    return requests_for(threads_per_block, np.ones(n_threads, bool))[0]


@st.composite
def launches(draw, max_blocks: int = 3, max_tpb: int = 130):
    """(threads per block, active mask) of a small launch, blocks not always a multiple of 32 threads."""
    tpb = draw(st.integers(1, max_tpb))
    nblocks = draw(st.integers(1, max_blocks))
    n = tpb * nblocks
    how = draw(st.sampled_from(["all", "random", "prefix"]))
    if how == "all":
        active = np.ones(n, bool)
    elif how == "prefix":
        active = np.arange(n) < draw(st.integers(0, n))
    else:
        active = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return tpb, active


@st.composite
def element_indices(draw, n: int, max_elem: int = 4096):
    """Element indices for ``n`` lanes: random, strided, offset, broadcast, or few distinct values."""
    kind = draw(st.sampled_from(["random", "stride", "few", "broadcast"]))
    if kind == "stride":
        s, off = draw(st.integers(0, 40)), draw(st.integers(0, 64))
        idx = off + s * np.arange(n)
    elif kind == "broadcast":
        idx = np.full(n, draw(st.integers(0, max_elem)))
    else:
        hi = draw(st.integers(1, 64)) if kind == "few" else max_elem
        idx = np.array(draw(st.lists(st.integers(0, hi), min_size=n, max_size=n)), dtype=np.int64)
    return idx.astype(np.int64)
