"""Issue 10, item 8: the roofline says when a Python number promoted the kernel to float64, and what the
same kernel would cost at the puzzle's benchmark size (puzzles.at_scale computes it; this is the drawing)."""

from __future__ import annotations

from tui_helpers import plain

from puzzles import registry, workspace
from puzzles.checker import check_source
from tui.widgets.roofline_view import RooflineView

MAP = registry.get("map")
MAP_OK = workspace.reference_path(MAP).read_text()                 # out[i] = a[i] + 10: float64 in numba
MAP_F32 = "import numba\n" + MAP_OK.replace("a[i] + 10", "a[i] + numba.float32(10)")


def checked(text: str):
    """The first case of a real check of ``text`` as puzzle 1 (4 elements, one launch)."""
    result = check_source(MAP, text, "/virtual/map.py", seed=1, trace=True)
    assert result.passed
    return result.cases[0]


def drawn(case, gpu_index=0, puzzle=None, lines=None) -> str:
    view = RooflineView()
    view.report, view.puzzle, view.float64_lines = case.reports[0], puzzle, lines
    view.set_reactive(RooflineView.gpu_index, gpu_index)
    return plain(view.draw(), 140)


def test_a_python_number_promoting_to_float64_is_explained():
    text = drawn(checked(MAP_OK), gpu_index=3)                             # the RTX 4090: fp64 is 1/64
    assert "4 of the 4 FLOPs ran in float64, though no array is float64" in text
    assert "`a[i] + 10`" in text and "1/64 of float32" in text
    # memory-bound: the measured H200 run says float64 costs nothing there, and the view says so
    assert "Here it costs no time: the kernel is memory-bound" in text and "54.4 µs" in text
    assert MAP_F32 != MAP_OK and "ran in float64" not in drawn(checked(MAP_F32))


def test_the_estimate_is_shown_at_two_to_the_24_for_a_puzzle_that_grows():
    text = drawn(checked(MAP_OK), puzzle=registry.get("blocks"))
    assert "At n = 2^24" in text and f"× {2 ** 24 / 4:,.0f}, from n = 4" in text and "Nothing was run" in text
    assert "Not larger" not in text


def test_a_one_block_puzzle_is_shown_at_its_largest_launch_and_why():
    text = drawn(checked(MAP_OK), puzzle=MAP)
    assert "At its largest valid launch (n = 1,024)" in text and "At n = 2^24" not in text
    assert "Not larger: one block by design" in text


def test_the_lines_that_promote_are_listed_from_a_real_check():
    """The judge finds the promoting lines (puzzles.precision, from gpusim's typed IR) and the view lists them."""
    import pytest

    case = checked(MAP_OK)
    if case.float64_lines[0] is None:
        pytest.skip("this gpusim has no typed kernel IR to read the lines from")
    text = drawn(case, lines=case.float64_lines[0])
    assert "line 8   out[i] = a[i] + 10" in text and "float64 because of the number 10" in text
    assert "So the float64 roof is used for them" in text
