"""Issue 10, item 9: what kernels print() is shown in the Console and by `gpu-puzzles check`.

gpusim's print support lands from another branch; these tests build the reports it will produce
(``LaunchReport.output``: records with block, thread, lineno, text; ``output_dropped``)."""

from __future__ import annotations

from dataclasses import dataclass

from tui_helpers import SIZE, make_app, open_puzzle, pilot_test, plain

from gpusim.observe.events import LaunchInfo
from gpusim.report import LaunchReport
from puzzles.render import check_report
from puzzles.results import CaseResult, CheckResult
from tui.widgets.console_view import ConsoleView, console_renderable


@dataclass(frozen=True)
class Printed:                     # the shape of gpusim.PrintRecord
    block: int
    thread: int
    lineno: int
    text: str


def printed_result() -> CheckResult:
    report = LaunchReport(launch=LaunchInfo("map_kernel", "p01_map.py", (2, 1, 1), (4, 1, 1), 0))
    report.output = [Printed(0, t, 7, f"i = {t} a[i] = {t * 1.5}") for t in range(4)] + [Printed(1, 0, 7, "i = 4")]
    report.output_dropped = 3
    result = CheckResult(puzzle="map", number=1, file="p01_map.py")
    result.cases = [CaseResult(name="random n=8", status="pass", reports=[report])]
    return result


def test_the_console_lists_each_launchs_lines_with_block_thread_and_line():
    text = plain(console_renderable(printed_result()))
    assert "case random n=8 · launch 1 (map_kernel)" in text
    assert "b0 t2 :7  i = 2 a[i] = 3.0" in text and "b1 t0 :7  i = 4" in text
    assert text.index("b0 t3") < text.index("b1 t0")                      # by block, then thread
    assert "… 3 more lines not kept: a launch keeps the first 5" in text


def test_the_command_line_check_prints_them_too():
    text = check_report(printed_result(), "Map")
    assert "Your kernels printed:" in text
    assert "block 0 thread 2 (line 7): i = 2 a[i] = 3.0" in text and "3 more lines not kept" in text


@pilot_test
async def test_f8_shows_the_console_of_the_last_check(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        screen.show_result(printed_result(), highlight=False)
        await pilot.press("f8")
        assert screen.side_tab == "console"
        assert "b0 t1 :7  i = 1" in plain(screen.query_one(ConsoleView).content)
        assert "f8 shows them" in plain(screen.results.content)
