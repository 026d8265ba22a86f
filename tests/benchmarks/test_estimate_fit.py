"""benchmarks/gpu/estimate_fit.py: the sets, the fit, and the committed model against the H200's measurements."""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np
from numba import cuda

import gpusim
from benchmarks.gpu import estimate_fit as ef
from gpusim.timing_model import H200
from gpusim.workload import Workload

F32 = np.float32


@cuda.jit
def add_one(out, a):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + F32(1)


@cuda.jit
def stride_copy(out, a):
    i = cuda.grid(1)
    while i < a.size:
        out[i] = a[i]
        i += cuda.gridsize(1)


@cuda.jit
def columns(a, out, rows):
    t = cuda.grid(1)
    if t < a.size:
        out[t // rows, t % rows] = a[t % rows, t // rows]


@cuda.jit
def steps(a, out):
    s = cuda.shared.array(32, F32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    for _ in range(64):
        cuda.syncthreads()
        s[t] = s[(t + 1) % 32] + F32(1)
    out[cuda.grid(1)] = s[t]


@functools.cache
def _workloads():
    big = np.ones(1 << 18, F32)
    square = np.ones((1024, 1024), F32)
    launches = [
        (add_one, 1, 32, (np.zeros(32, F32), big[:32].copy())),                   # one block: the launch
        (stride_copy, 66, 128, (np.zeros_like(big), big)),                          # 31 DRAM rounds per warp
        (add_one, (1 << 18) // 8, 8, (np.zeros_like(big), big)),                     # tiny blocks: block starts
        (columns, (1 << 20) // 256, 256, (square, np.zeros_like(square), 1024)),     # sectors: L2
        (steps, 128, 32, (big[: 1 << 12].copy(), np.zeros(1 << 12, F32))),             # one wave of barriers
    ]
    return tuple(Workload.of(gpusim.launch(k, g, b, args, trace=False)) for k, g, b, args in launches)


def _rows(machine, numbers):
    rows = []
    for number, w in zip(numbers, _workloads()):
        row = ef.Row(number, f"p{number}", "2^18", 0.0, None, "memory", False, [w])
        row.time_s = ef.estimate_s(row, machine)
        rows.append(row)
    return rows


def test_a_third_of_the_puzzles_are_held_out_by_number_and_the_fit_never_sees_them():
    held = [n for n in range(1, 81) if ef.Row(n, "", "2^24", 1.0, None, "memory", False, None).held_out]
    assert held == list(range(3, 81, 3)) and len(held) == 26
    w = list(_workloads()[:1])
    rows = [ef.Row(3, "a", "2^24", 1e-5, None, "memory", False, w),        # held out
            ef.Row(4, "b", "2^24", 1e-5, None, "memory", True, w),         # host-bound time
            ef.Row(5, "c", "2^24", 1e-5, None, "compute", False, w),       # compute-bound by the roofline
            ef.Row(7, "d", "2^24", 1e-5, None, "memory", False, w)]
    assert [r.slug for r in ef.fit_rows(rows)] == ["d"]


def test_the_fit_finds_the_parameters_that_made_the_times():
    truth = replace(H200, launch_s=3.1e-6, dram_latency_s=0.5e-6, l2_bandwidth=4.0e12, block_rate=1.2e9,
                    barrier_s=0.16e-6)
    rows = _rows(truth, [1, 2, 4, 5, 7])
    start = ef.loss(rows, H200)
    fitted = ef.fit(rows, H200)
    assert ef.loss(rows, fitted) < start / 100
    for name in ef.FITTED:
        assert math.isclose(getattr(fitted, name), getattr(truth, name), rel_tol=0.15), name


#: memory-bound puzzles at scale the committed model does not get within 2x of the H200, and why (none since
#: the rounds of runtime-unrolled loops count each remainder trip: sparse-24-gemv read 2.10 before)
KNOWN_OUTSIDE: dict[str, tuple[float, float]] = {}


def test_the_committed_model_puts_every_memory_bound_puzzle_at_scale_within_2x_of_the_h200():
    meta, rows = ef.from_data(ef.DEFAULT_DATA)
    assert meta["device"]["name"] == "NVIDIA H200"
    scored = [r for r in rows if r.workloads and r.at_scale and r.roofline_bound == "memory" and not r.host_bound]
    assert len(scored) >= 40
    ratios = {r.slug: r.time_s / ef.estimate_s(r, H200) for r in scored}
    outside = {slug: round(x, 2) for slug, x in ratios.items() if not 0.5 <= x <= 2.0}
    assert set(outside) == set(KNOWN_OUTSIDE)
    for slug, (lo, hi) in KNOWN_OUTSIDE.items():
        assert lo <= ratios[slug] <= hi, slug
    # its two-trip loop now waits twice (3 DRAM/L2 rounds per block, not 2): 1.76 where it read 2.10
    assert 1.6 <= ratios["sparse-24-gemv"] <= 1.9
    # and the datasheet roofline it replaced did not
    assert sum(1 for r in scored if r.time_s / r.before_s > 2.0) > len(scored) / 2


def test_the_script_prints_both_sets_before_and_after(capsys):
    assert ef.main([str(ef.DEFAULT_DATA)]) == 0
    out = capsys.readouterr().out
    assert "held-out" in out and "fit" in out and "before" in out
    assert "memory-bound at scale  held-out" in out and "memory-bound at scale  fit" in out
