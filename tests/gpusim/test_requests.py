"""Splitting an event into warp-level requests: both counting paths agree with a plain reference."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from lanekit import element_indices, event_lanes, launches, requests_for

from gpusim.observe.requests import Requests


def test_requests_are_warps_with_active_lanes():
    gtid = np.array([0, 1, 31, 32, 100, 101])
    req = Requests(gtid // 32, gtid, 128)
    assert req.count == 3
    assert req.sizes().tolist() == [3, 1, 2]
    assert req.row.tolist() == [0, 0, 0, 1, 2, 2]
    assert req.lane.tolist() == [0, 1, 31, 0, 4, 5]


def test_lane_numbers_restart_in_every_block():
    gtid = np.arange(96)
    req = Requests((gtid // 48) * 2 + (gtid % 48) // 32, gtid, 48)
    assert req.count == 4
    assert req.lane[48:52].tolist() == [0, 1, 2, 3]


def reference_unique(warps, values):
    per = defaultdict(Counter)
    for w, v in zip(warps.tolist(), values.tolist()):
        per[w][v] += 1
    rows = []
    for r, w in enumerate(sorted(per)):
        rows += [(r, v, n) for v, n in sorted(per[w].items())]
    return rows


@settings(max_examples=200, deadline=None)
@given(st.data(), launches(), st.booleans())
def test_unique_and_distinct_on_both_paths(data, launch, sort_within_warps):
    tpb, active = launch
    idx = data.draw(element_indices(len(active)))
    gtid, _, warp = event_lanes(tpb, active)
    v = idx[gtid]
    if sort_within_warps:              # monotone values take the neighbour-comparison path
        v = v[np.lexsort((v, warp))]
    req, _ = requests_for(tpb, active)
    expected = reference_unique(warp, v)
    for monotone in ([None, False] if not sort_within_warps else [None, True, False]):
        row, value, mult = req.unique(v, monotone=monotone)
        assert list(zip(row.tolist(), value.tolist(), mult.tolist())) == expected
        counts = np.bincount([r for r, _, _ in expected], minlength=req.count) if expected else []
        assert req.distinct(v, monotone=monotone).tolist() == list(counts)
