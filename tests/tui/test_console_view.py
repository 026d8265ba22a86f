"""Issue 10, item 9: what kernels print() is shown in the Console and by `gpu-puzzles check`.

The drawing tests build the reports gpusim produces (``LaunchReport.output``: records with block, thread,
lineno, text; ``output_dropped``); the last two run a printing kernel through the real judge and CLI."""

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


def test_block_and_thread_are_as_short_as_the_launch():
    from tui.widgets.console_view import coordinates

    assert coordinates((3, 0, 0), (4, 1, 1)) == "3"
    assert coordinates((3, 1, 0), (4, 2, 1)) == "(3,1)" and coordinates((0, 0, 2), (1, 1, 4)) == "(0,0,2)"
    assert coordinates(5, (8, 1, 1)) == "5"


def test_the_printed_text_starts_in_one_column_whatever_the_thread_number():
    result = printed_result()
    report = result.cases[0].reports[0]
    report.launch = LaunchInfo("map_kernel", "p01_map.py", (1, 1, 1), (12, 1, 1), 0)
    report.output = [Printed(0, t, 7 if t < 11 else 12, f"t{t} says hi") for t in range(12)]
    lines = [line for line in plain(console_renderable(result)).splitlines() if "says hi" in line]
    assert len(lines) == 12
    assert len({line.index(f"t{n} says hi") for n, line in enumerate(lines)}) == 1
    assert lines[0].startswith("  b0 t0  :7   t0 says hi") and lines[11].startswith("  b0 t11 :12  t11 says hi")


def test_the_console_draws_at_most_its_cap_and_says_how_many_more():
    from tui.widgets import console_view

    result = printed_result()
    report = result.cases[0].reports[0]
    report.output = [Printed(0, t % 4, 7, f"line {t}") for t in range(console_view.MAX_LINES + 25)]
    text = plain(console_renderable(result))
    assert f"line {console_view.MAX_LINES - 1}" in text and f"line {console_view.MAX_LINES}\n" not in text
    assert "… 25 more lines of later launches not shown" in text


PRINTING_MAP = '''from numba import cuda


@cuda.jit
def map_kernel(out, a):
    i = cuda.threadIdx.x
    x = a[i]
    print("i =", i, "a[i] =", x)
    out[i] = x + 10
'''


@pilot_test
async def test_print_in_a_kernel_reaches_the_console_through_the_judge(home):
    from tui_helpers import run_check

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        screen.editor.load_text(PRINTING_MAP)
        await run_check(app, pilot)
        assert screen.results.result.passed
        assert "Your kernels printed" in plain(screen.results.content)
        await pilot.press("f8")
        text = plain(screen.query_one(ConsoleView).content, 200)
        lines = [line.strip() for line in text.splitlines()]
        first = lines.index("case worked example n=4 · launch 1 (map_kernel)")
        # the worked example is a = [3, -1, 0.5, 7]; numba-cuda prints a float32 as %f
        assert lines[first + 1:first + 5] == ["b0 t0 :8  i = 0 a[i] = 3.000000", "b0 t1 :8  i = 1 a[i] = -1.000000",
                                              "b0 t2 :8  i = 2 a[i] = 0.500000", "b0 t3 :8  i = 3 a[i] = 7.000000"]


def test_print_in_a_kernel_is_printed_by_the_command_line_check(home, tmp_path):
    import subprocess
    import sys

    path = tmp_path / "map.py"
    path.write_text(PRINTING_MAP)
    done = subprocess.run([sys.executable, "-m", "puzzles", "check", "map", "--file", str(path), "--seed", "3"],
                          capture_output=True, text=True, timeout=300)
    assert "Your kernels printed:" in done.stdout, done.stdout + done.stderr
    assert "block (0, 0, 0) thread (2, 0, 0) (line 8): i = 2 a[i] = 0.500000" in done.stdout
