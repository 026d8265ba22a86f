"""The phase trace: per block, barrier phases and who touched which element, bounded unless asked."""

from __future__ import annotations

import numpy as np
from lanekit import event_lanes
from numba import cuda, float32

import gpusim
from gpusim.observe.events import AccessEvent, ArrayInfo, LaunchInfo
from gpusim.observe.trace import DEFAULT_MAX_BLOCKS, TraceObserver

TPB = 4


@cuda.jit
def reverse_in_block(a, out):
    sm = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sm[t] = a[i]
    cuda.syncthreads()
    out[i] = sm[TPB - 1 - t]


def test_phases_split_at_barriers_and_keep_threads_elements_and_kinds():
    a = np.arange(8, dtype=np.float32)
    out = np.zeros_like(a)
    r = gpusim.launch(reverse_in_block, 2, TPB, (a, out))
    assert out.tolist() == [3, 2, 1, 0, 7, 6, 5, 4]
    t = r.trace
    assert t.blocks() == [0, 1]
    assert t.num_phases(1) == 2 and len(t.barriers(1)) == 1
    assert t.events(1, 0) == [(k, "a", 4 + k, "ld") for k in range(4)] + [(k, "sm", k, "st") for k in range(4)]
    assert t.events(1, 1) == [(k, "sm", 3 - k, "ld") for k in range(4)] + [(k, "out", 4 + k, "st")
                                                                         for k in range(4)]
    steps = t.accesses(0)["step"]
    assert (np.diff(steps) >= 0).all()           # execution order, for scrubbing through time
    assert not t.truncated


def test_bounded_trace_keeps_the_first_blocks_and_says_so():
    n = (DEFAULT_MAX_BLOCKS + 6) * TPB
    a = np.arange(n, dtype=np.float32)
    bounded = gpusim.launch(reverse_in_block, n // TPB, TPB, (a, np.zeros_like(a))).trace
    full = gpusim.launch(reverse_in_block, n // TPB, TPB, (a, np.zeros_like(a)), trace="full").trace
    assert bounded.blocks() == list(range(DEFAULT_MAX_BLOCKS))
    assert bounded.truncated and bounded.dropped == 6 * TPB * 4
    assert full.blocks() == list(range(n // TPB)) and not full.truncated
    assert full.recorded == n * 4


def test_access_cap_cuts_inside_an_event():
    launch = LaunchInfo("k", "k.py", (4, 1, 1), (64, 1, 1), 0)
    info = ArrayInfo(1, "a", "global", np.dtype(np.float32), (256,), 0)
    obs = TraceObserver(max_blocks=10, max_accesses=100)
    obs.start(launch, [info])
    gtid, block, warp = event_lanes(64, np.ones(256, bool))
    obs.on_access(AccessEvent(info, "ld", 3, gtid, block, warp, gtid, np.zeros(256, np.int64)))
    tr = obs.trace
    assert tr.recorded == 100 and tr.dropped == 156 and tr.truncated
    assert tr.blocks() == [0, 1]
    assert tr.element_index(1, 7) == (7,)
