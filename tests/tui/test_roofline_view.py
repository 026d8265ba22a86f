"""Issue 10, item 8: the roofline says when a Python number promoted the kernel to float64, and what the
same kernel would cost at a realistic size (n = 2^24), from the counted bytes and FLOPs."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import cuda
from tui_helpers import plain

import gpusim
from tui.realistic import REALISTIC_N, at_realistic_size, float64_note
from tui.widgets.roofline_view import RooflineView


def plus_ten(out, a):              # `+ 10` with float32 `a`: numba computes it in float64
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + 10


def plus_ten_f32(out, a):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + numba.float32(10)


def drawn(report, gpu_index=0) -> str:
    view = RooflineView()
    view.report = report
    view.set_reactive(RooflineView.gpu_index, gpu_index)
    return plain(view.draw(), 140)


def launch(kernel, n=40):
    a = np.arange(n, dtype=np.float32)
    return gpusim.launch(kernel, 2, 32, (np.zeros_like(a), a))


def test_a_python_number_promoting_to_float64_is_explained():
    report = launch(plus_ten)
    assert float64_note(report) == (40, 40)
    text = drawn(report, gpu_index=3)                                      # the RTX 4090: fp64 is 1/64
    assert "40 of the 40 FLOPs ran in float64, though no array is float64" in text
    assert "`a[i] + 10`" in text and "1/64 of float32" in text
    clean = launch(plus_ten_f32)
    assert float64_note(clean) is None and "ran in float64" not in drawn(clean)


def test_the_estimate_at_two_to_the_24_scales_the_counted_bytes_and_flops():
    report = launch(plus_ten)
    nbytes = report.metrics["dram__bytes_read.sum"] + report.metrics["dram__bytes_write.sum"]
    scaled = at_realistic_size(report, "H100 SXM")
    factor = REALISTIC_N / 40
    assert scaled.n == 40 and scaled.factor == pytest.approx(factor)
    # by hand: scaled counts carry no launch geometry, so gpusim's time model falls back to the roofline at
    # the H100 SXM's achievable numbers: DRAM bytes / its copy bandwidth, float64 FLOPs / (34 TFLOP/s x the
    # fraction FMA chains reach), plus the launch (gpusim/timing_model.py)
    from gpusim.roofline import GPUS
    m = GPUS["H100 SXM"].machine
    memory = nbytes * factor / m.dram_bandwidth
    compute = 40 * factor / (34e12 * m.fp_efficiency)
    assert scaled.estimate.seconds == pytest.approx(max(memory, compute) + m.launch_s, rel=1e-9)
    assert scaled.estimate.bound == "memory"
    text = drawn(report)
    assert "At n = 2^24" in text and f"× {factor:,.0f}, from n = 40" in text and "Nothing was run" in text


def test_a_launch_at_a_realistic_size_already_is_not_scaled():
    report = launch(plus_ten)
    assert at_realistic_size(report, "H100 SXM", target=40) is None
