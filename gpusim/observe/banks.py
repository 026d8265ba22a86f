"""Shared-memory banks: wavefronts and bank conflicts per warp-level access, as Nsight Compute counts them.

Shared memory has 32 banks of 4 bytes; successive 4-byte words sit in successive banks. Rules (NVIDIA CUDA
Programming Guide, checked with ncu on an H200, see docs/metrics.md):

* one *request* per warp that executes the access with at least one active lane;
* accesses of 4 bytes or less: a request takes as many *wavefronts* as the largest number of distinct words
  its active lanes touch in any one bank; lanes on the same word are served together (broadcast, and bytes
  of one word); the ideal is 1 wavefront;
* wider accesses return more than one 4-byte register per lane, and the L1 returns 128 bytes (one register
  for 32 lanes) per wavefront, so an 8-byte request is served by half-warps (lanes 0-15, 16-31), each with
  the rule above, and takes the sum over its half-warps with active lanes — unless every pair of active
  lanes n and n^1 (or every pair n and n^2) reads one address, when the return registers pack and the whole
  warp is served at once (NVIDIA's description for CC 7.x, forums.developer.nvidia.com/t/77228; it holds on
  the H200). The ideal is the number of parts served: 1 packed, else the half-warps with active lanes.
  16-byte accesses (which numba does not emit) follow the same idea with quarter-warps, unchecked;
* *bank conflicts* = wavefronts − ideal wavefronts (for 4-byte and smaller accesses: wavefronts − requests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .requests import WARP, Requests

BANKS = 32
WORD = 4


@dataclass(frozen=True)
class SharedStats:
    """What one warp-level shared access cost, summed over its requests."""

    requests: int
    wavefronts: int
    conflicts: int


def _wavefronts(req: Requests, addr: np.ndarray, itemsize: int) -> np.ndarray:
    """Per request: the most distinct words its lanes touch in one bank."""
    # a request whose words span fewer than 32 has each word in its own bank: one wavefront
    if _spans_within(addr, 0, 1, req.starts, BANKS - max(itemsize // WORD, 1)):
        return np.ones(req.count, dtype=np.int64)
    words = addr // WORD
    if itemsize <= WORD:
        row, word, _ = req.unique(words)
        key = row * BANKS + word % BANKS
    else:
        # an aligned element of k words fills k neighbouring banks: count distinct elements per bank group
        groups = BANKS * WORD // itemsize
        row, elem, _ = req.unique(addr // itemsize)
        key = row * BANKS + elem % groups
    return np.bincount(key, minlength=req.count * BANKS).reshape(req.count, BANKS).max(axis=1)


@njit(cache=True)
def _spans_within(flat, base, itemsize, starts, limit):
    """Does every request (lanes ``starts[r]`` up to the next start) touch words at most ``limit`` apart?
    (byte address ``base + flat * itemsize``). One pass instead of the addresses, two ``reduceat``s and
    their temporaries: asked of every shared access."""
    n = flat.size
    for r in range(starts.size):
        lo = starts[r]
        hi = starts[r + 1] if r + 1 < starts.size else n
        mn = mx = (base + flat[lo] * itemsize) // WORD
        for k in range(lo + 1, hi):
            w = (base + flat[k] * itemsize) // WORD
            if w < mn:
                mn = w
            elif w > mx:
                mx = w
        if mx - mn > limit:
            return False
    return True


def _packed(req: Requests, addr: np.ndarray) -> np.ndarray:
    """Per request: do all active lane pairs (n, n^1), or all pairs (n, n^2), read one address?"""
    if (req.sizes() == WARP).all() and req.strictly_increasing(addr):
        return np.zeros(req.count, dtype=bool)      # full warps, every lane its own address: never
    m = np.full((req.count, WARP), -1, dtype=np.int64)
    m[req.row, req.lane] = addr

    def pairs_agree(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return ((a == b) | (a < 0) | (b < 0)).reshape(len(a), -1).all(axis=1)

    q = m.reshape(req.count, 8, 2, 2)   # lane = 4*i + 2*j + k
    return pairs_agree(q[:, :, :, 0], q[:, :, :, 1]) | pairs_agree(q[:, :, 0, :], q[:, :, 1, :])


def shared_stats(req: Requests, addr: np.ndarray, itemsize: int) -> SharedStats:
    """Requests, wavefronts and bank conflicts of one shared-memory access (``addr``: byte offsets)."""
    if req.n == 0:
        return SharedStats(0, 0, 0)
    if itemsize <= WORD:
        wavefronts = int(_wavefronts(req, addr, itemsize).sum())
        return SharedStats(req.count, wavefronts, wavefronts - req.count)
    regs = itemsize // WORD                               # registers each lane receives
    parts = np.where(_packed(req, addr), max(regs // 2, 1), regs)[req.row]
    part = req.lane // (WARP // parts)
    pieces = Requests(req.row * regs + part, req.gtid, req.threads_per_block)
    wavefronts = int(_wavefronts(pieces, addr, itemsize).sum())
    return SharedStats(req.count, wavefronts, wavefronts - pieces.count)


def shared_access_stats(req: Requests, info, flat: np.ndarray) -> SharedStats:
    """``shared_stats`` of an access of ``info`` (an ``ArrayInfo``) at elements ``flat``: the addresses are
    computed only when some request's words span more than its banks (else each request is one wavefront)."""
    if req.n and info.itemsize <= WORD and info.strides is None and _spans_within(
            flat, info.base_address, info.itemsize, req.starts, BANKS - 1):
        return SharedStats(req.count, req.count, 0)
    return shared_stats(req, info.address(flat), info.itemsize)


@dataclass(frozen=True)
class BankRequest:
    """One warp's shared-memory request, bank by bank (from the phase trace of the recorded blocks)."""

    lineno: int
    array: str
    kind: str                                      # "ld" or "st"
    block: int                                     # linear block id
    warp: int                                      # warp number inside the block
    itemsize: int
    words_per_bank: tuple[int, ...]                # distinct 4-byte words each of the 32 banks serves
    lanes_per_bank: tuple[tuple[int, ...], ...]    # which lanes (0-31) touch each bank
    wavefronts: int                                # what the request costs, by the rules above
    conflicts: int


def _words(addr: np.ndarray, itemsize: int) -> np.ndarray:
    """(lanes, words per element): the 4-byte words each element covers."""
    return addr[:, None] // WORD + np.arange(max(itemsize // WORD, 1))[None, :]


def worst_request(trace) -> BankRequest | None:
    """The recorded shared load or store request whose busiest bank serves the most distinct words (the first
    such in execution order), or None when the trace holds no shared load or store."""
    table = getattr(trace, "table", None)
    if table is None or len(table) == 0:
        return None
    from .trace import KINDS

    warps = trace.launch.warps_per_block
    cut = np.flatnonzero(table["step"][1:] != table["step"][:-1]) + 1
    worst = None
    for rows in np.split(table, cut):
        info = trace.arrays.get(int(rows["array"][0]))
        kind = KINDS[int(rows["kind"][0])]
        if info is None or info.space != "shared" or kind not in ("ld", "st"):
            continue
        thread = rows["thread"].astype(np.int64)
        request = rows["block"].astype(np.int64) * warps + thread // WARP
        word = _words(info.address(rows["element"].astype(np.int64)), info.itemsize)
        pairs = np.unique(np.stack([np.repeat(request, word.shape[1]), word.reshape(-1)]), axis=1)
        first = int(pairs[0].min())
        per = np.bincount((pairs[0] - first) * BANKS + pairs[1] % BANKS)
        busiest = int(per.max())
        if worst is None or busiest > worst[0]:
            worst = (busiest, int(np.argmax(per)) // BANKS + first, rows, request, info, kind)
    if worst is None:
        return None
    _, at, rows, request, info, kind = worst
    rows = rows[request == at]
    lanes = rows["thread"].astype(np.int64) % WARP
    addr = info.address(rows["element"].astype(np.int64))
    words = _words(addr, info.itemsize)
    per_words: list[set[int]] = [set() for _ in range(BANKS)]
    per_lanes: list[set[int]] = [set() for _ in range(BANKS)]
    for lane, ws in zip(lanes.tolist(), words.tolist()):
        for w in ws:
            per_words[w % BANKS].add(w)
            per_lanes[w % BANKS].add(lane)
    gtid = rows["block"].astype(np.int64) * trace.launch.threads_per_block + rows["thread"].astype(np.int64)
    order = np.argsort(gtid, kind="stable")
    stats = shared_stats(Requests(np.zeros(len(rows), np.int64), gtid[order], trace.launch.threads_per_block),
                         addr[order], info.itemsize)
    return BankRequest(int(rows["lineno"][0]), info.name, kind, int(rows["block"][0]),
                       int(rows["thread"][0]) // WARP, info.itemsize, tuple(len(s) for s in per_words),
                       tuple(tuple(sorted(s)) for s in per_lanes), stats.wavefronts, stats.conflicts)
