"""Global-memory requests and sectors: one test per rule, then random patterns against a slow reference."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from lanekit import element_indices, event_lanes, full, launches, requests_for

from gpusim.observe.coalescing import GlobalStats, global_stats

BASE = 0x7000_0000   # 256-byte aligned, as the engine places global arrays


def stats(idx, itemsize=4, tpb=32, atomic=False, active=None) -> GlobalStats:
    idx = np.asarray(idx, dtype=np.int64)
    if active is None:
        req = full(len(idx), tpb)
        flat = idx
    else:
        req, gtid = requests_for(tpb, active)
        flat = idx[gtid]
    return global_stats(req, BASE + flat * itemsize, itemsize, atomic=atomic)


lane = np.arange(32)


# ------------------------------------------------------------------------------------------- rules
def test_a_coalesced_float32_warp_moves_four_sectors():
    assert stats(lane) == GlobalStats(requests=1, sectors=4, ideal_sectors=4, requested_bytes=128)


def test_a_coalesced_float64_warp_moves_eight_sectors():
    assert stats(lane, itemsize=8).sectors == 8


def test_stride_two_doubles_the_sectors_and_stride_32_moves_one_per_lane():
    assert stats(2 * lane).sectors == 8
    assert stats(8 * lane).sectors == 32
    assert stats(32 * lane).sectors == 32
    assert stats(32 * lane).ideal_sectors == 4


def test_every_lane_on_one_word_is_one_sector():
    assert stats(np.full(32, 7)) == GlobalStats(1, 1, 1, 4)


def test_shifted_by_one_element_touches_five_sectors():
    assert stats(lane + 1).sectors == 5


def test_uint8_warp_fits_one_sector_unless_it_straddles_two():
    assert stats(lane, itemsize=1).sectors == 1
    assert stats(lane + 5, itemsize=1).sectors == 2


def test_one_request_per_warp_with_an_active_lane_and_only_active_lanes_count():
    active = np.zeros(96, bool)
    active[:16] = True          # warp 0: 16 lanes
    active[70] = True           # warp 2: one lane; warp 1: none
    s = stats(np.arange(96), active=active, tpb=96)
    assert s.requests == 2
    assert s.sectors == 2 + 1


def test_warps_are_per_block_so_a_48_thread_block_has_a_partial_second_warp():
    s = stats(np.arange(96), tpb=48)            # 2 blocks x (32 + 16 lanes)
    assert s.requests == 4
    assert s.sectors == 4 + 2 + 4 + 2          # block 1 starts at byte 192, on a sector boundary


def test_no_active_lane_no_request():
    assert stats(lane, active=np.zeros(32, bool)) == GlobalStats(0, 0, 0, 0)


def test_an_atomic_counts_a_sector_once_per_lane_on_its_busiest_address():
    assert stats(lane, atomic=True).sectors == 4                  # distinct addresses: like a store
    assert stats(np.zeros(32), atomic=True).sectors == 32         # all on one address: 32 rounds
    assert stats(lane % 2, atomic=True).sectors == 16             # two addresses in one sector, 16 lanes each
    assert stats(np.where(lane < 4, 8 * lane, 100), atomic=True).sectors == 4 + 28


def test_requested_bytes_are_distinct_bytes_so_efficiency_never_exceeds_one():
    s = stats(lane // 4)                                          # 8 distinct floats, 1 sector
    assert s.requested_bytes == 32 and s.sectors * 32 == 32
    s = stats(32 * lane)
    assert s.requested_bytes == 128 and s.sectors * 32 == 1024


# ------------------------------------------------------------------------------------------- random
def reference(warps, addrs, itemsize, atomic):
    """Obviously correct: group lanes by warp, then count with sets and Counters."""
    by_warp = defaultdict(list)
    for w, a in zip(warps.tolist(), addrs.tolist()):
        by_warp[w].append(a)
    sectors = ideal = requested = 0
    for lane_addrs in by_warp.values():
        if atomic:
            per_sector = defaultdict(Counter)
            for a in lane_addrs:
                per_sector[a // 32][a] += 1
            sectors += sum(max(c.values()) for c in per_sector.values())
        else:
            sectors += len({a // 32 for a in lane_addrs})
        nbytes = len(set(lane_addrs)) * itemsize
        requested += nbytes
        ideal += math.ceil(nbytes / 32)
    return GlobalStats(len(by_warp), sectors, ideal, requested)


@settings(max_examples=300, deadline=None)
@given(st.data(), launches(), st.sampled_from([1, 2, 4, 8]), st.booleans())
def test_random_patterns_match_the_reference(data, launch, itemsize, atomic):
    tpb, active = launch
    idx = data.draw(element_indices(len(active)))
    gtid, _, warp = event_lanes(tpb, active)
    req, _ = requests_for(tpb, active)
    addrs = BASE + idx[gtid] * itemsize
    assert global_stats(req, addrs, itemsize, atomic) == reference(warp, addrs, itemsize, atomic)
