"""Roofline estimates on the named GPUs."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import gpusim
from gpusim.roofline import GPUS, estimate, get_gpu


@cuda.jit
def scale(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = 2.0 * a[i]


@cuda.jit
def heavy(a, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        for _ in range(2000):
            x = x * 0.999 + 0.001
        out[i] = x


def test_table_has_the_named_gpus_with_positive_peaks():
    assert set(GPUS) == {"H100 SXM", "H200", "A100 80GB", "RTX 4090", "T4"}
    for g in GPUS.values():
        assert g.bandwidth > 1e11 and g.flops["float32"] > 1e12 and g.source
    assert get_gpu("h100").name == "H100 SXM" and get_gpu("A100").name == "A100 80GB"
    with pytest.raises(KeyError):
        get_gpu("Voodoo 2")


def test_a_map_is_memory_bound_with_the_roofline_numbers_beside_the_time():
    a = np.ones(1 << 16, np.float32)
    r = gpusim.launch(scale, (1 << 16) // 256, 256, (a, np.zeros_like(a)), trace=False)
    e = r.estimate("H200")
    assert e.bytes == 2 * a.nbytes and e.bound == "memory"
    # the time model's terms are tested by hand in test_timing_model.py; here: the roofline's fields
    assert e.seconds == pytest.approx(e.overhead_seconds + max(e.memory_seconds, e.compute_seconds))
    assert e.parts["dram"] == pytest.approx(e.bytes / GPUS["H200"].machine.dram_bandwidth)
    assert e.arithmetic_intensity == pytest.approx(a.size / e.bytes)
    # 2.0 * a[i] is float64 arithmetic: the ridge is the datasheet's FP64 rate over its bandwidth
    assert e.ridge_point == pytest.approx(34e12 / 4.8e12)
    assert estimate(r, "T4").seconds > estimate(r, "H200").seconds
    assert "H200" in str(e) and "memory-bound" in str(e)


def test_a_long_arithmetic_loop_is_compute_bound():
    a = np.ones(4096, np.float32)
    r = gpusim.launch(heavy, 16, 256, (a, np.zeros_like(a)), trace=False)
    e = r.estimate("T4")
    assert e.bound == "compute" and e.arithmetic_intensity > e.ridge_point
    # x * 0.999 is float64 arithmetic in numba (a float32 times a Python float): the T4's FP64 rate applies
    assert set(r.flops) == {"float64"}
    t4 = GPUS["T4"]
    assert e.compute_seconds == pytest.approx(e.flops / (t4.flops["float64"] * t4.machine.fp_efficiency))
    assert e.limit == "compute"
    assert e.flops == 4096 * 2000 * 2


def test_estimate_needs_instrumentation():
    a = np.ones(64, np.float32)
    r = gpusim.launch(scale, 1, 64, (a, np.zeros_like(a)), instrument=False)
    with pytest.raises(ValueError):
        r.estimate()
