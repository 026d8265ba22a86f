"""Issue 10, item 8: the roofline says when a Python number promoted the kernel to float64, and what the
same kernel would cost at the puzzle's benchmark size (puzzles.at_scale computes it; this is the drawing)."""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda
from tui_helpers import plain

import gpusim
from puzzles import registry
from tui.widgets.roofline_view import RooflineView


def plus_ten(out, a):              # `+ 10` with float32 `a`: numba computes it in float64
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + 10


def plus_ten_f32(out, a):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + numba.float32(10)


def drawn(report, gpu_index=0, puzzle=None) -> str:
    view = RooflineView()
    view.report, view.puzzle = report, puzzle
    view.set_reactive(RooflineView.gpu_index, gpu_index)
    return plain(view.draw(), 140)


def launch(kernel, n=40):
    a = np.arange(n, dtype=np.float32)
    return gpusim.launch(kernel, 2, 32, (np.zeros_like(a), a))


def test_a_python_number_promoting_to_float64_is_explained():
    text = drawn(launch(plus_ten), gpu_index=3)                           # the RTX 4090: fp64 is 1/64
    assert "40 of the 40 FLOPs ran in float64, though no array is float64" in text
    assert "`a[i] + 10`" in text and "1/64 of float32" in text
    assert "ran in float64" not in drawn(launch(plus_ten_f32))


def test_the_estimate_is_shown_at_two_to_the_24_for_a_puzzle_that_grows():
    text = drawn(launch(plus_ten), puzzle=registry.get("blocks"))
    assert "At n = 2^24" in text and f"× {2 ** 24 / 40:,.0f}, from n = 40" in text and "Nothing was run" in text
    assert "Not larger" not in text


def test_a_one_block_puzzle_is_shown_at_its_largest_launch_and_why():
    text = drawn(launch(plus_ten), puzzle=registry.get("map"))
    assert "At its largest valid launch (n = 1,024)" in text and "At n = 2^24" not in text
    assert "Not larger: one block by design" in text


def test_the_lines_that_promote_are_listed_from_a_real_check():
    """The judge finds the promoting lines (puzzles.precision, from gpusim's typed IR) and the view lists them."""
    import pytest

    from puzzles import workspace
    from puzzles.checker import check_source

    p = registry.get("map")
    result = check_source(p, workspace.reference_path(p).read_text(), "/virtual/map.py", seed=1, trace=True)
    case = result.cases[0]
    if case.float64_lines[0] is None:
        pytest.skip("this gpusim has no typed kernel IR to read the lines from")
    view = RooflineView()
    view.report, view.float64_lines = case.reports[0], case.float64_lines[0]
    text = plain(view.draw(), 140)
    assert "line 8   out[i] = a[i] + 10" in text and "float64 because of the number 10" in text
    assert "So the float64 roof is used for them" in text
