"""The latency rounds in compiled code (``gpusim.backends.compiled.rt_rounds``): counted by hand on one kernel,
and equal to the lanes back end's (the whole report) on kernels that exercise each rule of
``gpusim.observe.rounds``: loads after stores, loops of a known trip count with a remainder of a round,
barriers, global and shared atomics, a gather, a chunked launch on two threads.

Each kernel compiles with numba once per test session's cache: measured cold on two loaded cores, 16 s for the
hand count, 36 s for the kernels of each rule, 19 s for the two threads, 6 s for the refusal (all marked slow).
"""

from __future__ import annotations

import numpy as np
import pytest
from backend_compare import report_differences, same_array
from simkit import load_module

import gpusim
from gpusim import LaunchError
from gpusim.observe.rounds import ROUND_KEYS

HAND = """
    from numba import cuda
    import numpy as np

    @cuda.jit
    def rounds(a, n, out, cnt, hist):
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        sh = cuda.shared.array(64, np.float32)
        sc = cuda.shared.array(2, np.int32)
        acc = 0.0
        for k in range(n):
            acc += a[k * 128 + i]
        out[i] = acc
        acc += a[i]
        sh[t] = acc
        if t < 2:
            sc[t] = 0
        cuda.syncthreads()
        v = sh[63 - t]
        cuda.atomic.add(cnt, 0, 1)
        old = cuda.atomic.add(hist, i, 1)
        cuda.atomic.add(sc, t % 2, 1)
        out[i] = acc + v + old
"""

KERNELS = """
    from numba import cuda
    import numpy as np

    @cuda.jit
    def store_then_load(a, b, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = a[i]
            out[i] = out[i] + b[i]          # a load behind the warp's own store: a new (on-chip) round
            x = a[(i + 40) % a.size]         # a segment another warp touched first, in an earlier event
            out[i] += x

    @cuda.jit
    def known_trips(a, n, out):
        i = cuda.grid(1)
        acc = 0.0
        for k in range(n):                   # a uniform trip count: one site joins a round 4 times at most
            acc += a[k, i] * a[n - 1 - k, i]
        out[i] = acc

    @cuda.jit
    def tiles(a, out):
        t = cuda.threadIdx.x
        b = cuda.blockIdx.x
        sh = cuda.shared.array(32, np.float64)
        acc = 0.0
        for step in range(4):                # a barrier per step: each tile row waits on its own
            sh[t] = a[step, b * 32 + t]
            cuda.syncthreads()
            acc += sh[(t + 1) % 32] + sh[(t + 2) % 32]
            cuda.syncthreads()
        out[b * 32 + t] = acc

    @cuda.jit
    def atomics(keys, hist, total, flag, out):
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        counts = cuda.shared.array(8, np.int32)
        if t < 8:
            counts[t] = 0
        cuda.syncthreads()
        cuda.atomic.add(counts, keys[i] % 8, 1)
        old = cuda.atomic.add(hist, keys[i] % 16, 1)     # the value used: an L2 round
        cuda.atomic.add(total, 0, 1)                      # integer, uniform address: one per warp
        cuda.atomic.max(flag, 0, keys[i])
        cuda.syncthreads()
        out[i] = old + counts[t % 8]

    @cuda.jit
    def gather(idx, x, out):
        i = cuda.grid(1)
        if i < idx.size:
            j = idx[i]
            out[i] = x[j] + x[(j * 7) % x.size]

    @cuda.jit
    def per_lane_trips(a, out):
        i = cuda.grid(1)
        acc = 0.0
        for k in range(i % 7):               # a per-lane trip count: unrolled at run time by the GPU's compiler
            acc += a[k]
        out[i] = acc
"""


def _rounds(report) -> dict[str, int]:
    return {k.removeprefix("gpusim__"): report.metrics[k] for k in ROUND_KEYS}


def _both(kernel, grid, block, args, **kw):
    a = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    b = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    ra = gpusim.launch(kernel, grid, block, a, backend="lanes", **kw)
    rb = gpusim.launch(kernel, grid, block, b, backend="compiled", **kw)
    diffs = report_differences(ra, rb)
    diffs += [f"argument {k} differs" for k, (x, y) in enumerate(zip(a, b))
              if isinstance(x, np.ndarray) and not same_array(x, y)]
    assert not diffs, "\n".join(diffs)
    assert rb.extra["backend"] == "compiled"
    return ra, rb


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("GPUSIM_CACHE_DIR", str(tmp_path_factory.mktemp("rounds_cache")))
    folder = tmp_path_factory.mktemp("rounds_kernels")
    yield load_module(folder, HAND), load_module(folder, KERNELS)
    mp.undo()


@pytest.mark.slow
def test_rounds_counted_by_hand(kernels):
    """Two blocks of 64 threads (4 warps). Per warp: the loop's 10 loads of one site join a round 4 at a time
    (3 rounds), each touching 2 segments no one touched: 3 DRAM rounds; the load of ``a[i]`` behind the store
    to ``out`` opens a round on segments the loop touched (L2), and the atomic whose value is used is an L2
    round of its own (2); one shared round after the barrier; one barrier per block. The uniform integer
    atomic on ``cnt[0]`` is one operation per warp (4 on that address, the most any address gets: ``hist``
    gets 1 per element); the shared atomic puts 16 lanes on each of 2 addresses per warp: 16 passes, 64 in
    all."""
    hand, _ = kernels
    a = np.arange(1280, dtype=np.float32)
    args = (a, 10, np.zeros(128, np.float32), np.zeros(1, np.int32), np.zeros(128, np.int32))
    want = {"rounds_dram_sum": 6, "rounds_dram_max": 3, "rounds_l2_sum": 4, "rounds_l2_max": 2,
            "rounds_shared_sum": 2, "rounds_shared_max": 1, "barriers_sum": 2, "barriers_max": 1,
            "atomic_max_per_address": 4, "shared_atomic_passes": 64}
    ra, rb = _both(hand.rounds, 2, 64, args, trace=False)
    assert _rounds(rb) == want
    assert _rounds(ra) == want


@pytest.mark.slow
def test_rounds_equal_the_lanes_back_ends_on_kernels_of_each_rule(kernels):
    _, k = kernels
    rng = np.random.default_rng(3)
    n = 300
    _both(k.store_then_load, 3, 128, (rng.standard_normal(n), rng.standard_normal(n), np.zeros(n)))
    for trips in (1, 6, 10):     # a round of 4 loads per site, and its remainder
        _both(k.known_trips, 2, 48, (rng.standard_normal((trips, 96)), trips, np.zeros(96)))
    _both(k.tiles, 3, 32, (rng.standard_normal((4, 96)), np.zeros(96)), trace=False)
    keys = rng.integers(0, 1000, 200).astype(np.int32)
    _, rb = _both(k.atomics, 4, 50, (keys, np.zeros(16, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32),
                                     np.zeros(200, np.int32)), trace=False)
    assert rb.metrics["gpusim__shared_atomic_passes"] > 0 and rb.metrics["gpusim__atomic_max_per_address"] > 0
    idx = rng.integers(0, 500, 256)
    _both(k.gather, 2, 128, (idx, rng.standard_normal(500), np.zeros(256)))


@pytest.mark.slow
def test_a_run_time_unrolled_loop_is_refused_instrumented_and_runs_uninstrumented(kernels):
    _, k = kernels
    a = np.arange(8.0)
    with pytest.raises(LaunchError, match="unrolls at run time"):
        gpusim.launch(k.per_lane_trips, 1, 64, (a, np.zeros(64)), backend="compiled")
    _both(k.per_lane_trips, 1, 64, (a, np.zeros(64)), instrument=False)
    assert "backend" not in gpusim.launch(k.per_lane_trips, 1, 64, (a, np.zeros(64)), backend="auto").extra


@pytest.mark.slow
def test_two_threads_give_the_single_threaded_rounds(kernels, monkeypatch):
    """A launch of several chunks on two worker threads: a map (no segment touched by both workers) keeps the
    two threads' result; a gather whose table both workers read runs again on one thread (which chunk touches
    a segment first decides DRAM or L2). Either way the report is the lanes back end's."""
    _, k = kernels
    monkeypatch.setenv("GPUSIM_THREADS", "2")
    from gpusim.backends.compiled import driver

    monkeypatch.setattr(driver, "SPLIT", "always")   # launches this size run faster on one thread: split anyway
    rng = np.random.default_rng(8)
    n = 1 << 17          # two chunks of 2^16 lanes
    x = rng.standard_normal(n)
    _, rb = _both(k.store_then_load, n // 256, 256, (x, x[::-1].copy(), np.zeros(n)), trace=False)
    assert rb.extra["threads"] == 1     # x[(i + 40) % n] wraps: the last warps read the first chunk's segments
    idx = np.arange(n) // 3
    _, rb = _both(k.gather, n // 256, 256, (idx, rng.standard_normal(n), np.zeros(n)), trace=False)
    assert rb.extra["threads"] == 1
    from benchmarks.cases import CASES

    kern, grid, block, args = CASES["map"](n)
    _, rb = _both(kern, grid, block, args, trace=False)
    assert rb.extra["threads"] == 2
