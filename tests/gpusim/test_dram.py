"""The DRAM estimate: distinct 64-byte segments touched, per direction."""

from __future__ import annotations

import numpy as np

from gpusim.observe.dram import SegmentMap


def test_segments_are_counted_once_per_direction():
    m = SegmentMap(0x1000, 1024)
    m.touch(0x1000 + np.arange(0, 256, 4), read=True, write=False, monotone=True)   # 4 segments
    m.touch(0x1000 + np.array([0, 4, 600]), read=True, write=False)                  # 1 new
    m.touch(0x1000 + np.array([1020]), read=True, write=True)                        # atomic: both
    assert m.bytes() == (6 * 64, 64)


def test_a_strided_read_costs_a_segment_per_lane():
    m = SegmentMap(0, 32 * 4 * 256)
    m.touch(np.arange(256) * 128, read=True, write=False, monotone=True)
    assert m.bytes() == (256 * 64, 0)
