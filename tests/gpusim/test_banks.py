"""Shared-memory wavefronts and bank conflicts: one test per rule, then random patterns against a reference."""

from __future__ import annotations

from collections import defaultdict

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lanekit import element_indices, event_lanes, full, launches, requests_for
from numba import cuda
from simkit import line_of

import gpusim
from gpusim.observe.banks import SharedStats, shared_stats

lane = np.arange(32)


def stats(idx, itemsize=4, tpb=32, active=None) -> SharedStats:
    idx = np.asarray(idx, dtype=np.int64)
    if active is None:
        return shared_stats(full(len(idx), tpb), idx * itemsize, itemsize)
    req, gtid = requests_for(tpb, active)
    return shared_stats(req, idx[gtid] * itemsize, itemsize)


# ------------------------------------------------------------------------------------------- rules
@pytest.mark.parametrize(("stride", "wavefronts"), [(1, 1), (2, 2), (4, 4), (32, 32), (33, 1), (0, 1)])
def test_float32_strides(stride, wavefronts):
    assert stats(stride * lane) == SharedStats(1, wavefronts, wavefronts - 1)


def test_transpose_tile_column_read_is_32_way_unless_padded():
    column = lane * 32 + 5             # tile[lane][5] of a 32x32 float tile
    assert stats(column).conflicts == 31
    assert stats(lane * 33 + 5).conflicts == 0


def test_bytes_of_one_word_are_one_access():
    assert stats(lane, itemsize=1) == SharedStats(1, 1, 0)
    assert stats(128 * lane, itemsize=1) == SharedStats(1, 32, 31)   # every lane in bank 0


def test_lanes_on_one_word_are_broadcast_others_in_its_bank_still_conflict():
    idx = np.where(lane < 16, 0, 32)   # words 0 and 32: same bank, two words
    assert stats(idx) == SharedStats(1, 2, 1)


def test_partial_and_empty_warps():
    active = np.zeros(96, bool)
    active[:16] = True
    assert stats(32 * np.arange(96), tpb=96, active=active) == SharedStats(1, 16, 15)
    assert stats(lane, active=np.zeros(32, bool)) == SharedStats(0, 0, 0)


@pytest.mark.parametrize(("elements", "wavefronts", "conflicts"), [
    # read on the H200 with ncu (tests/gpusim/ncu_cases.py, F64_PATTERNS and the float64 stride cases)
    (lane, 2, 0),                                      # half-warps: 1 wavefront each
    (lane % 16, 2, 0),                                 # both halves read elements 0-15: no packing
    (lane >= 16, 1, 0),                                # pairs n, n^1 agree: packed, one wavefront
    (16 * (lane >= 16), 2, 1),                         # packed, but elements 0 and 16 share banks
    (np.where(lane >= 16, 0, lane), 2, 0),             # half broadcast, not packed
    (np.where(lane < 8, 0, 16) * (lane < 16), 2, 1),   # packed, two elements in banks 0-1
    (np.where(lane >= 16, lane - 16, 2 * lane), 3, 1),  # half 0: 2 wavefronts, half 1: 1
    (np.zeros(32), 1, 0),
    (2 * lane, 4, 2),
    (16 * lane, 32, 30),
    (17 * lane, 2, 0),
])
def test_float64_is_served_by_half_warps_unless_lane_pairs_share_an_address(elements, wavefronts, conflicts):
    assert stats(elements, itemsize=8) == SharedStats(1, wavefronts, conflicts)


def test_float64_pairs_two_apart_also_pack():
    idx = (lane // 4) * 2 + lane % 2         # lanes n and n^2 read the same element
    assert stats(idx, itemsize=8) == SharedStats(1, 1, 0)


# ------------------------------------------------------------------------------------------- random
def reference(warps, lanes, addrs, itemsize):
    """Obviously correct: per warp, split into the parts the hardware serves, count words per bank."""
    by_warp = defaultdict(dict)
    for w, ln, a in zip(warps.tolist(), lanes.tolist(), addrs.tolist()):
        by_warp[w][ln] = a
    wavefronts = ideal = 0
    for lane_addr in by_warp.values():
        regs = max(itemsize // 4, 1)
        packed = regs > 1 and any(
            all(lane_addr[n] == lane_addr[n ^ d] for n in lane_addr if n ^ d in lane_addr) for d in (1, 2))
        parts = max(regs // 2, 1) if packed else regs
        for part in range(parts):
            in_part = [a for n, a in lane_addr.items() if n // (32 // parts) == part]
            if not in_part:
                continue
            words_in_bank = defaultdict(set)
            for a in in_part:
                for k in range(regs):
                    word = a // 4 + k
                    words_in_bank[word % 32].add(word)
            wavefronts += max(len(s) for s in words_in_bank.values())
            ideal += 1
    return SharedStats(len(by_warp), wavefronts, wavefronts - ideal)


@settings(max_examples=300, deadline=None)
@given(st.data(), launches(), st.sampled_from([1, 2, 4, 8]))
def test_random_patterns_match_the_reference(data, launch, itemsize):
    tpb, active = launch
    idx = data.draw(element_indices(len(active), max_elem=1024))
    gtid, _, warp = event_lanes(tpb, active)
    req, _ = requests_for(tpb, active)
    addrs = idx[gtid] * itemsize
    lanes = (gtid % tpb) % 32
    assert shared_stats(req, addrs, itemsize) == reference(warp, lanes, addrs, itemsize)


# ---------------------------------------------------------------------------------------------- the worst request


@cuda.jit
def strided_shared(out):
    sh = cuda.shared.array(64, numba.float32)
    wide = cuda.shared.array(32, numba.float64)
    t = cuda.threadIdx.x
    sh[2 * t] = 1.0          # stride 2: lanes t and t + 16 share a bank, two words each
    wide[t] = 2.0            # 8-byte elements: two banks each, served by half-warps
    out[t] = sh[2 * t] + wide[t]


def test_the_worst_bank_request_comes_from_gpusims_bank_model():
    report = gpusim.launch(strided_shared, 1, 32, (np.zeros(32),))
    worst = report.worst_bank_request()
    assert (worst.array, worst.kind, worst.block, worst.warp, worst.itemsize) == ("sh", "st", 0, 0, 4)
    assert worst.words_per_bank == tuple(2 if b % 2 == 0 else 0 for b in range(32))
    assert worst.lanes_per_bank[0] == (0, 16) and worst.lanes_per_bank[1] == ()
    assert (worst.wavefronts, worst.conflicts) == (2, 1)
    assert worst.lineno == line_of(strided_shared, "sh[2 * t] = 1.0")


def test_an_8_byte_request_costs_its_half_warps_not_its_busiest_bank():
    @cuda.jit
    def wide_only(out):
        wide = cuda.shared.array(32, numba.float64)
        t = cuda.threadIdx.x
        wide[t] = 2.0
        out[t] = wide[t]

    worst = gpusim.launch(wide_only, 1, 32, (np.zeros(32),)).worst_bank_request()
    assert worst.words_per_bank == (2,) * 32 and worst.itemsize == 8
    assert (worst.wavefronts, worst.conflicts) == (2, 0)     # two half-warps, each one wavefront: no conflict


def test_no_trace_or_no_shared_access_gives_none():
    report = gpusim.launch(strided_shared, 1, 32, (np.zeros(32),), trace=False)
    assert report.worst_bank_request() is None
