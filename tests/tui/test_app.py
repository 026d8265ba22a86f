"""The app, driven with Pilot: state after each step (files on disk, results, progress), not pixels."""

from __future__ import annotations

import json

from textual.widgets import TabbedContent
from tui_helpers import SIZE, make_app, open_puzzle, pilot_test, plain, puzzle, run_check, use_reference

from puzzles import registry, workspace
from puzzles.results import Failure
from tui.screens.browser import BrowserScreen
from tui.screens.confirm import Confirm, ConfirmQuit
from tui.screens.help import HelpScreen
from tui.screens.solution import SolutionScreen
from tui.screens.visualise import VisualiseScreen
from tui.screens.workspace import WorkspaceScreen
from tui.widgets.coalescing_view import CoalescingView
from tui.widgets.phase_view import PhaseView
from tui.widgets.puzzle_page import PuzzlePage
from tui.widgets.puzzle_tree import PuzzleTree
from tui.widgets.results import fault_line, result_renderable


@pilot_test
async def test_browser_lists_every_puzzle_and_enter_opens_the_starter(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, BrowserScreen)
        tree = app.screen.query_one(PuzzleTree)
        leaves = [n for branch in tree.root.children for n in branch.children]
        assert [n.data.slug for n in leaves] == [p.slug for p in app.puzzles]
        assert app.screen.current.slug == "map"
        await pilot.press("down")
        assert app.screen.current.slug == "zip"
        assert "Zip" in app.screen.query_one(PuzzlePage).source
        await pilot.press("up", "enter")
        assert isinstance(app.screen, WorkspaceScreen)
        path = workspace.workspace_path(puzzle("map"))
        assert path.exists()
        assert app.screen.editor.text == workspace.starter_path(puzzle("map")).read_text()


@pilot_test
async def test_edit_save_and_leave_write_the_file(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        path = screen.path
        screen.editor.move_cursor((0, 0))
        await pilot.press(*"# mine", "enter")
        assert screen.editor.dirty and screen.dirty
        assert "unsaved" in screen.sub_title
        assert not path.read_text().startswith("# mine")
        await pilot.press("ctrl+s")
        assert path.read_text().startswith("# mine\n")
        assert not screen.editor.dirty
        assert "unsaved" not in screen.sub_title
        assert not list(path.parent.glob(".*.tmp"))        # the atomic write left no temporary file
        await pilot.press(*"#x", "enter")
        await pilot.press("escape")                       # back to the list, saving first
        assert isinstance(app.screen, BrowserScreen)
        assert path.read_text().startswith("# mine\n#x\n")


@pilot_test
async def test_reference_solution_passes_with_every_star(home):
    use_reference("dot-product")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "dot-product")
        await run_check(app, pilot)
        result = screen.results.result
        assert result is not None and result.passed
        assert result.stars == result.max_stars == 3
        assert screen.query_one(TabbedContent).active == "results-tab"
        text = plain(result_renderable(result))
        assert "PASS" in text and "★★★" in text and "Every star earned" in text
        assert app.progress.stars("dot-product") == 3
        saved = json.loads((home / "progress.json").read_text())
        assert saved["puzzles"]["dot-product"]["best_stars"] == 3
        assert "★★★" in screen.sub_title


@pilot_test
async def test_starter_fails_and_the_app_carries_on(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        await run_check(app, pilot)
        result = screen.results.result
        assert result is not None and not result.passed
        text = plain(result_renderable(result))
        assert "FAIL" in text and "wrong output" in text and "Next: ★" in text
        assert app.progress.entry("map").attempts == 1 and app.progress.stars("map") == 0
        await run_check(app, pilot)                        # a second run works as well
        assert app.progress.entry("map").attempts == 2
        assert app.is_running and isinstance(app.screen, WorkspaceScreen)


@pilot_test
async def test_a_syntax_error_gives_one_clean_message_and_marks_the_line(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        screen.editor.load_text("from numba import cuda\n\n@cuda.jit\ndef map_kernel(out, a)\n    pass\n")
        await run_check(app, pilot)
        result = screen.results.result
        assert [f.kind for f in result.failures] == ["compile"]
        text = plain(result_renderable(result))
        assert "cannot compile" in text and "not valid Python" in text
        assert "Traceback" not in text
        assert screen.editor.highlighted_line == 4
        assert screen.editor.selection.start[0] == 3 and screen.editor.cursor_location == (3, 0)
        await pilot.press("ctrl+g")                        # nothing ran: no visualiser, a note instead
        assert not isinstance(app.screen, VisualiseScreen)


@pilot_test
async def test_a_fault_names_block_thread_and_line_and_marks_the_line(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        screen.editor.load_text("from numba import cuda\n\n\n@cuda.jit\ndef map_kernel(out, a):\n"
                                "    i = cuda.threadIdx.x\n    out[i + 1] = a[i] + 10\n")
        await run_check(app, pilot)
        text = plain(screen.results.result and result_renderable(screen.results.result))
        assert "OutOfBounds" in text and "line 7" in text
        assert "thread (3, 0, 0)" in text and "index [4]" in text
        assert screen.editor.highlighted_line == 7


@pilot_test
async def test_visualiser_tabs_switch_and_phases_scrub(home):
    use_reference("dot-product")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_puzzle(app, pilot, "dot-product")
        await run_check(app, pilot)
        await pilot.press("ctrl+g")
        screen = app.screen
        assert isinstance(screen, VisualiseScreen)
        assert screen.active_view == "threads"
        assert app.focused.id == "threads"
        for key, name in (("2", "phases"), ("3", "coalescing"), ("4", "banks"), ("5", "roofline"),
                          ("1", "threads")):
            await pilot.press(key)
            assert screen.active_view == name
            assert app.focused.id == name
        await pilot.press("2")
        phases = screen.query_one(PhaseView)
        assert phases.phase == 0 and phases.phases == 8      # 7 barriers: 8 phases in block 0
        assert "phase 1 of 8: from the kernel's start to the barrier at line 17" in plain(phases.draw())
        await pilot.press("right")
        assert phases.phase == 1
        assert "phase 2 of 8: from the barrier at line 17 to the barrier at line 22" in plain(phases.draw())
        await pilot.press("right", "right", "left")
        assert phases.phase == 2
        await pilot.press("home", "left")
        assert phases.phase == 0                             # it stops at the first phase
        await pilot.press("end")
        assert phases.phase == 7
        await pilot.press("b")                               # the second block
        assert phases.block == 1
        await pilot.press("right_square_bracket")            # the next launch: the scrubber starts over
        assert screen.launch_index == 1 and phases.phase == 0
        await pilot.press("escape")
        assert isinstance(app.screen, WorkspaceScreen)


@pilot_test
async def test_hint_reveal_is_recorded_and_shown(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        map_puzzle = puzzle("map")
        assert map_puzzle.hints[0] not in app.screen.query_one(PuzzlePage).source
        await pilot.press("h")
        await pilot.pause()
        assert app.progress.entry("map").hints_revealed == 1
        saved = json.loads((home / "progress.json").read_text())
        assert saved["puzzles"]["map"]["hints_revealed"] == 1
        assert map_puzzle.hints[0] in app.screen.query_one(PuzzlePage).source
        for _ in range(len(map_puzzle.hints) + 1):           # past the last one: nothing more, no error
            await pilot.press("h")
        assert app.progress.entry("map").hints_revealed == len(map_puzzle.hints)


@pilot_test
async def test_quit_saves_what_was_typed_and_asks_only_when_saving_fails(home, monkeypatch):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        path = screen.path
        screen.editor.move_cursor((0, 0))
        await pilot.press(*"#q", "enter")                  # q is typed in the editor, it does not quit
        assert app.is_running and screen.editor.text.startswith("#q")
        assert screen.editor.dirty                         # before the autosave's delay is over

        def full_disk(path, text):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr("tui.files.write_atomic", full_disk)
        await pilot.press("ctrl+q")
        assert isinstance(app.screen, ConfirmQuit)         # it could not be saved: ask
        await pilot.press("escape")                        # stay
        assert app.screen is screen and app.is_running
        monkeypatch.undo()
        await pilot.press("ctrl+q")                        # now it can be saved: saved, and quit at once
        await pilot.pause()
    assert not app.is_running
    assert path.read_text().startswith("#q\n")


@pilot_test
async def test_quit_without_changes_and_help(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


@pilot_test
async def test_the_coalescing_tab_shows_gpusims_per_access_numbers(home):
    use_reference("transpose-naive")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_puzzle(app, pilot, "transpose-naive")
        await run_check(app, pilot)
        await pilot.press("ctrl+g", "3")
        screen = app.screen
        assert screen.active_view == "coalescing"
        view = screen.query_one(CoalescingView)
        big = next(i for i, ref in enumerate(screen.launches) if ref.report.launch.num_blocks > 1)
        while screen.launch_index != big:
            await pilot.press("right_square_bracket")
        await pilot.pause()
        report = screen.launches[big].report
        text = plain(view.content)
        rows = [line.split() for line in text.split("Per access", 1)[1].splitlines()
                if line.strip() and line.split()[0].isdigit()]
        sites = {(str(s["line"]), s["array"]): s for s in report.counts.sites}
        assert len(rows) == len(sites) == 2
        for row in rows:                       # line, kind word, array, requests, sectors, ideal
            site = sites[(row[0], row[2])]
            assert [int(x) for x in row[3:6]] == [site["requests"], site["sectors"], site["ideal_sectors"]]
        load = next(r for r in rows if r[1] == "load")
        assert int(load[4]) >= 7 * int(load[5])      # the naive transpose reads columns: ~1 of 8 sectors used


@pilot_test
async def test_reset_keeps_the_old_text_beside_the_file(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        path = screen.path
        starter = workspace.starter_path(puzzle("map")).read_text()
        screen.editor.move_cursor((0, 0))
        await pilot.press(*"# saved", "enter", "ctrl+s", *"# unsaved", "enter")
        mine = screen.editor.text
        assert screen.editor.dirty and mine.startswith("# saved\n# unsaved\n")
        await pilot.press("f4")
        assert isinstance(app.screen, Confirm)
        await pilot.press("enter")                         # the focused button is "no": nothing happens
        assert app.screen is screen and screen.editor.text == mine
        assert not list(path.parent.glob(f"{path.name}.bak-*"))
        await pilot.press("f4", "y")
        await pilot.pause()
        assert app.screen is screen
        backups = list(path.parent.glob(f"{path.name}.bak-*"))
        assert len(backups) == 1 and backups[0].read_text() == mine     # unsaved text included
        assert path.read_text() == starter and screen.editor.text == starter
        assert not screen.editor.dirty
        await pilot.press("f4", "y")                       # a second reset keeps a second backup
        await pilot.pause()
        assert len(list(path.parent.glob(f"{path.name}.bak-*"))) == 2


@pilot_test
async def test_revealing_the_solution_asks_and_is_recorded(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        mine = screen.editor.text
        await pilot.press("f3")
        assert isinstance(app.screen, Confirm)
        await pilot.press("n")
        assert app.screen is screen and not app.progress.entry("map").solution_revealed
        assert not (home / "progress.json").exists() or not json.loads((home / "progress.json").read_text())[
            "puzzles"].get("map", {}).get("solution_revealed")
        await pilot.press("f3", "y")
        await pilot.pause()
        assert isinstance(app.screen, SolutionScreen)
        reference = workspace.reference_path(puzzle("map")).read_text()
        assert app.screen.query_one("#solution-text").text == reference
        assert app.progress.entry("map").solution_revealed
        saved = json.loads((home / "progress.json").read_text())
        assert saved["puzzles"]["map"]["solution_revealed"] is True
        await pilot.press("escape")
        assert app.screen is screen and screen.editor.text == mine     # the player's file is untouched
        assert "seen the reference solution" in screen.query_one(PuzzlePage).source
        await pilot.press("f3")                            # seen already: no second question
        await pilot.pause()
        assert isinstance(app.screen, SolutionScreen)


@pilot_test
async def test_the_workspace_keys_are_in_the_footer_and_every_key_is_in_the_help(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        footer_keys = {key for key, active in app.active_bindings.items() if active.binding.show}
        assert {"ctrl+r", "ctrl+g", "f2", "f5", "f6", "f7", "f8", "escape", "f1"} <= footer_keys
        await pilot.press("f1")
        help_text = app.screen.query_one("Markdown").source
        for key in ("| f3 | show the reference solution", "| f4 | reset your file", "| f8 | the console",
                    "| f9 | save the screen as an SVG", "| esc or ctrl+c | while a check runs: stop it"):
            assert key in help_text
        assert isinstance(screen, WorkspaceScreen)


def test_no_key_is_bound_twice_on_a_screen_and_every_workspace_key_is_in_the_help():
    """Two bindings of one key on one screen: only one of them can ever run (ctrl+t was once both "same
    cases" and "Triton", and the Triton tab could not be opened)."""
    from tui.app import GpuPuzzlesApp
    from tui.screens import help as help_screen

    for owner in (GpuPuzzlesApp, BrowserScreen, WorkspaceScreen, VisualiseScreen, HelpScreen, SolutionScreen,
                  Confirm, ConfirmQuit):
        keys = [key.strip() for b in owner.BINDINGS for key in b.key.split(",")]
        assert len(keys) == len(set(keys)), (owner.__name__, sorted(k for k in keys if keys.count(k) > 1))
    for binding in WorkspaceScreen.BINDINGS:
        key = "esc" if binding.key == "escape" else binding.key
        assert f"| {key} |" in help_screen.HELP or f"| esc or {key} |" in help_screen.HELP, key


@pilot_test
async def test_chapters_are_titled_by_the_chapter_packages(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        tree = app.screen.query_one(PuzzleTree)
        titles = registry.chapters()
        for branch in tree.root.children:
            number = branch.children[0].data.chapter
            label = str(branch.label)
            full = f"Chapter {number} · {titles[number]}"
            if "…" in label:     # a title too long for the tree's width is shortened, never cut silently
                kept = label.split("…")[0]
                assert full.startswith(kept) and len(kept) >= len(f"Chapter {number} · ") + 8
            else:
                assert label.startswith(full)


def test_a_compile_failure_points_at_its_file_and_line_not_its_message():
    failure = Failure("compile", "something is wrong here", filename="/x/p01_map.py", lineno=9)
    assert fault_line(failure) == ("/x/p01_map.py", 9)
    assert fault_line(Failure("compile", "no place (elsewhere.py:3)")) is None


def test_later_cases_failing_the_same_way_wrap_and_no_label_is_said_twice(home):
    """The one line for a later case that fails the same way is the first line of its message, whole (it
    used to end in "…" before "40 of 40 elements differ" at 80 columns), under the same word as the first
    case's; a constraint reads "constraint: not met (…)", not "constraint: constraint not met (…)"."""
    from puzzles.checker import check_source

    p = registry.get("zip")
    text = workspace.reference_path(p).read_text().replace("out[i] = a[i] + b[i]",
                                                           "out[i] = a[i] - b[i] + 0 * a[i]")
    assert text != workspace.reference_path(p).read_text()
    result = check_source(p, text, "/virtual/zip.py", seed=1)
    shown = plain(result_renderable(result), 60)
    assert "constraint: not met (" in shown and "constraint not met" not in shown
    later = [c for c in result.cases[1:] if c.status == "fail" and c.outputs and c.outputs["out"].got.size > 1]
    assert later and "mismatch:" not in shown
    for case in later:
        n = case.outputs["out"].got.size
        assert f"{n} of {n}" in " ".join(shown.split()), case.name


def test_the_other_faults_of_a_launch_are_named_with_their_line_and_element(home):
    """A guard left out faults twice per thread past the end (the read of a, the write of out): the
    second is named with its line and element, not only as "OutOfBounds"."""
    from puzzles.checker import check_source

    p = registry.get("guard")
    text = workspace.reference_path(p).read_text()
    body = next(line for line in text.splitlines() if "out[" in line and "=" in line).strip()
    text = ("from numba import cuda\n\n\n@cuda.jit\ndef guard_kernel(out, a, n):\n"
            f"    i = cuda.threadIdx.x\n    {body}\n")
    result = check_source(p, text, "/virtual/guard.py", seed=1)
    first = result.cases[0].failures[0].fault
    assert (first.array, first.lineno) == ("a", 7)
    shown = " ".join(plain(result_renderable(result), 200).split())
    assert f"and in the same launch: OutOfBounds at line 7 (out[{first.index[0]}])" in shown, shown
