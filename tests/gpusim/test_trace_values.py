"""The phase trace keeps the recorded blocks' shared-memory contents as each barrier phase ends, bounded."""

from __future__ import annotations

import numpy as np
from numba import cuda, float32, int32

import gpusim
from gpusim.observe.trace import TraceObserver

TPB = 8


@cuda.jit
def tree_sum(a, out):
    """Each block sums its 8 elements in shared memory, halving the active threads at every barrier."""
    s = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


def by_hand(values: list[float]) -> list[list[float]]:
    """The contents after each phase of the tree above, computed step by step on a plain list."""
    s = list(values)
    phases = [list(s)]
    stride = TPB // 2
    while stride > 0:
        s = [s[t] + s[t + stride] if t < stride else s[t] for t in range(TPB)]
        phases.append(list(s))
        stride //= 2
    return phases + [list(s)]      # the last phase, from the last barrier to the end, writes nothing


def test_contents_after_every_phase_match_a_count_by_hand():
    a = np.arange(16, dtype=np.float32)
    out = np.zeros(2, np.float32)
    trace = gpusim.launch(tree_sum, 2, TPB, (a, out)).trace
    for block in (0, 1):
        expected = by_hand(a[block * TPB:(block + 1) * TPB].tolist())
        assert trace.num_phases(block) == len(expected) == 5       # the first barrier and 3 in the loop
        for phase, want in enumerate(expected):
            got = trace.shared_values(block, "s", phase)
            assert got is not None and got.tolist() == want, (block, phase)
    assert trace.shared_values(0, "s", 5) is None                  # no sixth phase
    assert trace.shared_values(0, "nothing", 0) is None


@cuda.jit
def late_write(out):
    s = cuda.shared.array(4, int32)
    t = cuda.threadIdx.x
    cuda.syncthreads()
    if t < 2:
        s[t] = t + 5
    cuda.syncthreads()
    out[t] = s[t]


def test_written_before_tells_which_slots_hold_a_written_value():
    out = np.zeros(4, np.int32)
    trace = gpusim.launch(late_write, 1, 4, (out,)).trace
    assert trace.written_before(0, "s", 0).tolist() == [False] * 4
    assert trace.written_before(0, "s", 1).tolist() == [True, True, False, False]
    assert trace.shared_values(0, "s", 1).tolist()[:2] == [5, 6]


def test_values_are_bounded_and_only_for_recorded_blocks():
    a = np.arange(TPB * 4, dtype=np.float32)
    out = np.zeros(4, np.float32)
    observer = TraceObserver(max_blocks=2, max_values=TPB * 7)     # room for 7 of the 2 x 5 snapshots
    gpusim.launch(tree_sum, 4, TPB, (a, out), trace=False, observers=[observer])
    trace = observer.trace
    assert trace.values_kept == TPB * 7 and trace.values_dropped == TPB * 3
    assert trace.shared_values(2, "s", 0) is None                  # block 2 is not recorded
    # both blocks pass each barrier together: 3 barriers fill 6 slots, the fourth keeps block 0's only
    assert trace.shared_values(0, "s", 3) is not None and trace.shared_values(1, "s", 3) is None
    assert trace.shared_values(0, "s", 4) is None
    assert out.tolist() == [a[k * TPB:(k + 1) * TPB].sum() for k in range(4)]   # watching changed nothing
