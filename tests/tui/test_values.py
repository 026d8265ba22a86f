"""Issue 10, item 7: the views show values, not only who touched a cell: shared memory per barrier phase and
which thread read which slot, faults marked where they happen, block boundaries, expected against got."""

from __future__ import annotations

import numpy as np
from numba import cuda, float32
from tui_helpers import plain

import gpusim
from puzzles import registry, workspace
from puzzles.checker import case_generator, check_source
from puzzles.output_values import output_values
from puzzles.results import CaseResult
from tui.widgets.outputs_view import BAD, OutputsView
from tui.widgets.phase_view import PhaseView, fmt_value
from tui.widgets.thread_map import FAULT_STYLE, ThreadMap, block_style

TPB = 8
MAP = registry.get("map")
MAP_OK = workspace.reference_path(MAP).read_text()


def view_of(view_class, report, **state):
    view = view_class()
    view.report = report
    view.reset()
    for name, value in state.items():
        view.set_reactive(getattr(view_class, name), value)
    return view


def halving_sum(a, out):
    s = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)] * 2
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


def test_the_phase_view_shows_the_values_after_each_phase_and_who_read_each_slot():
    a = np.array([1, 2, 3, 4, 5, 6, 7, 8, 10, 20, 30, 40, 50, 60, 70, 80], np.float32)
    report = gpusim.launch(halving_sum, 2, TPB, (a, np.zeros(2, np.float32)))
    # block 1 by hand: doubled, then s[t] += s[t + 4] for t < 4
    doubled = [20, 40, 60, 80, 100, 120, 140, 160]
    after_first_step = [120, 160, 200, 240, 100, 120, 140, 160]
    view = view_of(PhaseView, report, block_index=1, phase=0)
    text = plain(view.draw(), 130)
    assert "phase 1 of 5: from the kernel's start to the barrier" in text
    assert " ".join(str(v) for v in doubled) in " ".join(text.split())
    view.set_reactive(PhaseView.phase, 1)
    view.set_reactive(PhaseView.slot, 5)
    text = plain(view.draw(), 130)
    assert "phase 2 of 5" in text
    assert " ".join(str(v) for v in after_first_step) in " ".join(text.split())
    assert "s[5] = 120 after phase 2" in text
    assert "written by no thread   read by thread 1" in text          # thread 1 adds s[5] into s[1]
    view.set_reactive(PhaseView.slot, 1)
    assert "s[1] = 160 after phase 2\n  written by thread 1   read by thread 1" in plain(view.draw(), 130)


def test_slots_not_written_yet_show_no_value():
    def late(out):
        s = cuda.shared.array(4, float32)
        t = cuda.threadIdx.x
        cuda.syncthreads()
        if t < 2:
            s[t] = 7
        cuda.syncthreads()
        out[t] = s[t]

    report = gpusim.launch(late, 1, 4, (np.zeros(4, np.float32),))
    view = view_of(PhaseView, report, slot=3)
    assert "s[3] = not written yet after phase 1" in plain(view.draw(), 130)


def racy(out):
    s = cuda.shared.array(8, float32)
    t = cuda.threadIdx.x
    s[t] = t
    out[t] = s[(t + 1) % 8]          # no barrier between the write and the neighbour's read


def test_a_race_is_marked_on_its_element_which_is_inside_the_array():
    report = gpusim.launch(racy, 1, 8, (np.zeros(8, np.float32),))
    race = report.faults[0]
    assert type(race).__name__ == "DataRace" and list(race.index) == [1]
    view = view_of(ThreadMap, report)
    assert view.array_name == "s" and view.cursor == (0, 1)            # it opens on the raced element
    text = plain(view.draw(), 130)
    assert "DataRace on s[1] (marked)" in text and "outside the array" not in text
    first_row = next(line for line in text.splitlines() if line.strip().startswith("[0]"))
    assert first_row.split()[1:4] == ["0", "!1", "2"]                  # the raced cell carries the mark
    view.set_reactive(ThreadMap.cursor, (0, 4))                        # off the cell, in the fault's colour
    grid = view.draw().renderables[0]
    marked = [grid.plain[s.start:s.end].strip() for s in grid.spans if s.style == FAULT_STYLE]
    assert [m for m in marked if m != "!"] == ["!1"]                  # (the other "!" is the legend's)


def oob(out, a):
    i = cuda.threadIdx.x
    out[i + 1] = a[i]


def test_an_out_of_bounds_index_is_drawn_past_the_arrays_edge():
    report = gpusim.launch(oob, 1, 8, (np.zeros(8, np.float32), np.ones(8, np.float32)))
    view = view_of(ThreadMap, report)
    group = view.draw()
    grid = group.renderables[0]
    text = plain(group, 130)
    assert "used out[8] at line" in text and "outside the array" in text
    rows = [line for line in text.splitlines() if line.strip().startswith("[8]")]
    assert rows and rows[0].split()[1] == "✗"                          # element 8: the next row's first cell
    assert any(grid.plain[s.start:s.end].strip() == "✗" and s.style == FAULT_STYLE for s in grid.spans)


def blocks_of_twelve(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i


def test_block_boundaries_are_marked_and_blocks_can_colour_the_cells():
    report = gpusim.launch(blocks_of_twelve, 3, 12, (np.zeros(30, np.float32),))
    view = view_of(ThreadMap, report)
    first_row = next(line for line in plain(view.draw(), 130).splitlines() if line.strip().startswith("[0]"))
    cells = first_row.split("[0]", 1)[1]
    assert "11▕" in cells.replace(" ", "") and cells.replace(" ", "").count("▕") == 1   # 11 | 12
    view.set_reactive(ThreadMap.mode, "blocks")
    grid = view.draw().renderables[0]
    styles = {s.style for s in grid.spans}
    assert {block_style(0), block_style(1)} <= styles
    labels = plain(view.draw(), 130)
    assert "colour: the block of the first thread" in labels


def every_thread_reads_a0(out, a):
    out[cuda.grid(1)] = a[0]


def test_read_by_lists_say_how_many_more_there_are():
    report = gpusim.launch(every_thread_reads_a0, 2, 32, (np.zeros(64, np.float32), np.ones(1, np.float32)))
    view = view_of(ThreadMap, report, array_index=1, mode="reads")
    text = plain(view.draw(), 200)
    assert "a[0]: read 64×, written 0×" in text
    assert "block 0 thread 7 and 56 more threads" in text


def outputs_view(case) -> OutputsView:
    view = OutputsView()
    view.case, view.report = case, object()
    return view


def test_expected_against_got_marks_every_differing_cell():
    """A real check of a map that adds 10 except at two elements: the judge hands back both arrays."""
    wrong = MAP_OK.replace("out[i] = a[i] + 10", "out[i] = a[i] + 10 if i != 3 and i != 70 else a[i]")
    assert wrong != MAP_OK
    result = check_source(MAP, wrong, "/virtual/map.py", seed=11)
    case = next(c for c in result.cases if c.name == "random n=256")
    a = next(c for c in MAP.make_cases(case_generator(11)) if c.name == case.name).buffers["a"]
    drawn = outputs_view(case).draw()
    text = plain(drawn, 130)
    assert "2 of 256 elements differ" in text
    assert f"first difference: out[3]: got {fmt_value(a[3])}, expected {fmt_value(a[3] + np.float32(10))}" in text
    bad = sorted(drawn.plain[s.start:s.end].strip() for s in drawn.spans if s.style == BAD)
    assert bad == sorted([fmt_value(a[3]), fmt_value(a[3] + np.float32(10))])   # both lines of the one in view
    rows = [line.split() for line in text.splitlines() if line.strip().startswith("[0]")]
    assert rows and rows[0][1] == "got"                                # the row of element 0 is on screen


def test_a_window_of_a_large_output_is_labelled_with_the_whole_arrays_indices():
    want = np.arange(20_000, dtype=np.float32)
    got = want.copy()
    got[12_345] = -7
    case = CaseResult(name="big", status="fail", outputs={"out": output_values("out", got, want)})
    text = plain(outputs_view(case).draw(), 130)
    assert "1 of 20000 elements differ" in text and "around the first difference" in text
    assert "first difference: out[12345]: got -7, expected 12345" in text
    row = next(line.split() for line in text.splitlines() if line.strip().startswith("[12345]"))
    assert row[:3] == ["[12345]", "got", "-7"]


def test_without_the_outputs_the_first_mismatch_is_shown():
    from puzzles.results import Failure

    case = CaseResult(name="n=4", status="fail")
    case.failures.append(Failure("mismatch", "wrong output", detail={"output": "out", "index": [2],
                                                                      "expected": 3.0, "got": 0.0,
                                                                      "count": 1, "total": 4}))
    text = plain(outputs_view(case).draw(), 130)
    assert "out[2]: expected 3.0, got 0.0" in text and "1 of 4 elements differ" in text
