"""Issue 10, items 6, 10, 11 and 12, and the chapter pages of issue 12: text shown as written, a first-run
welcome, resuming, a chapter's introduction and completion, revealed solutions marked, the theme kept, the
screen saved as SVG, and the smaller fixes."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import threading

from textual.widgets import Markdown
from tui_helpers import SIZE, make_app, open_puzzle, pilot_test, plain, puzzle, run_check, use_reference, wait_until

from puzzles import progress, registry, workspace
from puzzles.render import puzzle_list, star_line
from puzzles.results import CaseResult, CheckResult
from tui.screens.browser import BrowserScreen
from tui.screens.chapter import ChapterComplete, ChapterIntroduction
from tui.screens.welcome import WelcomeScreen
from tui.screens.workspace import WorkspaceScreen
from tui.widgets.puzzle_page import PuzzlePage
from tui.widgets.puzzle_page import star_line as page_star_line
from tui.widgets.puzzle_tree import SEEN_MARK, PuzzleTree

# --- item 6: player-facing text is shown as written ----------------------------------------------------------


def toasts(app) -> list[str]:
    """The text of the toasts on the screen (``run_test(notifications=True)`` shows them)."""
    return [plain(toast.render()) for toast in app.screen.query("Toast")]


@pilot_test
async def test_a_hint_with_square_brackets_is_shown_as_written(home):
    tricky = dataclasses.replace(puzzle("map"), hints=("load `tile[t]` first, then [bold]sum[/bold] it",))
    app = make_app(puzzles=[tricky])
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("h")
        await pilot.pause()
        assert any("load `tile[t]` first, then [bold]sum[/bold] it" in t for t in toasts(app))
        assert "tile[t]" in app.screen.query_one(PuzzlePage).source


@pilot_test
async def test_the_page_names_the_hint_key_of_the_screen_it_is_on(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert "press **h** for the next one" in app.screen.query_one(PuzzlePage).source
        screen = await open_puzzle(app, pilot, "map")
        source = screen.query_one(PuzzlePage).source
        assert "press **f2** for the next one" in source and "press **h**" not in source


@pilot_test
async def test_a_case_name_with_markup_is_shown_as_written_in_the_launch_bar(home):
    use_reference("map")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        await run_check(app, pilot)
        screen.result.cases[0].name = "n=[b]4[/b]"
        await pilot.press("ctrl+g")
        bar = app.screen.query_one("#launch-bar")
        assert "n=[b]4[/b]" in plain(bar.content)


# --- item 10: onboarding and flow -------------------------------------------------------------------------------


@pilot_test
async def test_a_new_player_is_welcomed_and_starts_at_chapter_1s_introduction(home):
    app = make_app(new_player=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WelcomeScreen)
        text = app.screen.query_one(Markdown).source
        assert "Start with puzzle 1" in text and "ctrl+r" in text and "f1" in text
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChapterIntroduction)               # the chapter comes first
        assert "After this chapter you can" in app.screen.query_one(Markdown).source
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, WorkspaceScreen) and app.screen.puzzle.slug == "map"
    saved = json.loads((home / "tui.json").read_text())
    assert saved["welcome_seen"] and saved["introductions_seen"] == [1] and saved["last_puzzle"] == "map"
    again = make_app(new_player=True)                                   # the next start: no welcome
    async with again.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(again.screen, BrowserScreen)


@pilot_test
async def test_the_app_resumes_at_the_last_puzzle(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_puzzle(app, pilot, "guard")
    again = make_app()
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.pause()
        assert again.screen.query_one(PuzzleTree).current.slug == "guard"
        await pilot.press("c")                                          # continue
        await pilot.pause()
        assert isinstance(again.screen, WorkspaceScreen) and again.screen.puzzle.slug == "guard"


@pilot_test
async def test_solving_the_last_puzzle_of_a_chapter_is_celebrated(home):
    chapter = registry.get("map").chapter
    others = [p for p in registry.all_puzzles() if p.chapter == chapter and p.slug != "blocks-2d"]
    use_reference("blocks-2d")
    app = make_app()
    for p in others:
        app.progress.entry(p.slug).best_stars = 1
    progress.save_progress(app.progress)          # a check re-reads the file under its lock before it counts
    async with app.run_test(size=SIZE) as pilot:
        await open_puzzle(app, pilot, "blocks-2d")
        await run_check(app, pilot)
        assert isinstance(app.screen, ChapterComplete)
        text = app.screen.query_one(Markdown).source
        assert "Chapter 1 · Threads and blocks: complete" in text and "Chapter 2" in text
        await pilot.press("enter")                                      # on to the next chapter
        await pilot.pause()
        await pilot.pause()
        first_of_2 = next(p for p in registry.all_puzzles() if p.chapter == chapter + 1)
        assert isinstance(app.screen, WorkspaceScreen) and app.screen.puzzle.slug == first_of_2.slug


@pilot_test
async def test_after_a_pass_ctrl_n_goes_on_to_the_next_puzzle_and_the_list_follows(home):
    use_reference("map")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        await run_check(app, pilot)
        assert screen.results.result.passed
        assert "ctrl+n: on to puzzle 2, Zip." in plain(screen.results.content)
        screen.editor.insert("# a last word\n")
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert isinstance(app.screen, WorkspaceScreen) and app.screen.puzzle.slug == "zip"
        assert "# a last word" in workspace.workspace_path(registry.get("map")).read_text()   # saved on the way
        await pilot.press("escape")
        await pilot.pause()
        await pilot.pause()
        assert app.screen.query_one(PuzzleTree).current.slug == "zip"        # the list is where the player is


@pilot_test
async def test_a_revealed_solution_is_marked_in_the_tree(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.screen.query_one(PuzzleTree)
        label = tree._leaves["zip"].label
        assert SEEN_MARK not in str(label)
        await open_puzzle(app, pilot, "zip")
        await pilot.press("f3", "y")
        await pilot.pause()
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
        assert str(tree._leaves["zip"].label).endswith(SEEN_MARK)
        assert SEEN_MARK not in str(tree._leaves["map"].label)


def test_a_revealed_solution_is_marked_in_list(home):
    from puzzles import progress

    prog = progress.load_progress()
    prog.entry("zip").solution_revealed = True
    progress.save_progress(prog)
    out = subprocess.run([sys.executable, "-m", "puzzles", "list"], capture_output=True, text=True, check=True,
                         env={**__import__("os").environ}).stdout
    zip_line = next(line for line in out.splitlines() if re.match(r"\s*2\s+zip\b", line))
    map_line = next(line for line in out.splitlines() if re.match(r"\s*1\s+map\b", line))
    assert zip_line.endswith("(solution seen)") and "solution seen" not in map_line
    assert "(solution seen)" in puzzle_list(registry.all_puzzles()[:3], prog)


@pilot_test
async def test_the_theme_is_kept_across_restarts(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.theme = "textual-light"
        await pilot.pause()
    again = make_app()
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.theme == "textual-light" and not again.current_theme.dark


# --- item 11: the screen as SVG ---------------------------------------------------------------------------------


@pilot_test
async def test_f9_saves_the_screen_as_svg_in_the_workspace_and_says_where(home, monkeypatch):
    monkeypatch.setenv("HOME", str(home / "no-such-home"))             # no ~/Downloads anywhere
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await open_puzzle(app, pilot, "map")
        await pilot.press("f9")
        await pilot.pause()
        saved = list((home / "screenshots").glob("*.svg"))
        assert len(saved) == 1 and saved[0].read_text().lstrip().startswith("<svg")
        assert "Puzzle 1: Map" in saved[0].read_text().replace("&#160;", " ")
        assert any(str(saved[0]) in t for t in toasts(app))


# --- item 12: smaller things --------------------------------------------------------------------------------------


def test_a_star_tier_does_not_repeat_its_rule():
    tiers = [t for p in registry.all_puzzles() for t in p.stars
             if len(t.rules) == 1 and t.rules[0].description.lower() in t.description.lower()]
    assert tiers, "some puzzle names a tier after its one rule"
    for tier in tiers:
        for line in (star_line(tier), page_star_line(tier)):          # the CLI's `show` and the app's page
            assert line.count(tier.rules[0].description) == 1, line


def test_the_step_budget_message_does_not_ask_the_player_to_raise_max_steps(home):
    from puzzles import checker, render

    endless = home / "endless.py"
    endless.parent.mkdir(parents=True, exist_ok=True)
    endless.write_text("from numba import cuda\n\n\n@cuda.jit\ndef map_kernel(out, a):\n"
                       "    i = cuda.threadIdx.x\n    while i >= 0:\n        i += 0\n")
    result = checker.check_file(registry.get("map"), endless)
    text = render.check_report(result, "Map")
    assert "never ends" in text and "max_steps" not in text and "the most a check lets one launch run" in text
    from tui.widgets.results import result_renderable

    shown = plain(result_renderable(result))
    assert "never ends" in shown and "max_steps" not in shown


def test_check_json_names_the_file_and_line_of_a_fault(home):
    from puzzles import workspace

    path = workspace.ensure_starter(registry.get("map"))
    path.write_text("from numba import cuda\n\n\n@cuda.jit\ndef map_kernel(out, a):\n"
                    "    i = cuda.threadIdx.x\n    out[i + 1] = a[i] + 10\n")
    done = subprocess.run([sys.executable, "-m", "puzzles", "check", "map", "--json"], capture_output=True, text=True)
    doc = json.loads(done.stdout)
    first = doc["failures"][0]
    assert first["kind"] == "fault" and first["line"] == 7 and first["file"].endswith("p01_map.py")
    assert all(f["line"] for c in doc["cases"] for f in c["failures"])


@pilot_test
async def test_two_phases_are_phase_1_of_2_and_phase_2_of_2(home):
    use_reference("shared")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_puzzle(app, pilot, "shared")
        await run_check(app, pilot)
        await pilot.press("ctrl+g", "2")
        view = app.screen.query_one("#phases")
        assert view.phases == 2
        assert "phase 1 of 2" in plain(view.draw()) and "phase 0" not in plain(view.draw())
        await pilot.press("right")
        assert "phase 2 of 2: from the barrier at line" in plain(view.draw())


@pilot_test
async def test_esc_stops_a_running_check_and_the_app_is_free_at_once(home):
    release = threading.Event()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        checked = []

        def slow_check(puzzle, text, path, seed=None):
            release.wait(30)                                  # a check that takes its time
            checked.append(text)
            return CheckResult(puzzle=puzzle.slug, number=puzzle.number, file=str(path), passed=True, stars=2,
                               max_stars=2, cases=[CaseResult("c", status="pass")])

        app.runner.check = slow_check
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: screen.running and app.runner.running, what="the check to start")
        await pilot.press("escape")
        assert not screen.running and app.checking is None and isinstance(app.screen, WorkspaceScreen)
        assert "stopped" in plain(screen.results.content)
        await pilot.press(*"#x")                               # the editor is free
        assert "#x" in screen.editor.text and screen.editor.dirty
        release.set()
        await wait_until(pilot, lambda: checked, what="the abandoned check to end")
        await pilot.pause()
        assert screen.results.result is None and app.progress.entry("map").attempts == 0   # its result dropped
        await pilot.press("ctrl+r", "ctrl+c")                  # ctrl+c stops one too
        assert not screen.running


@pilot_test
async def test_ctrl_c_copies_in_the_editor_when_no_check_runs(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        screen.editor.select_all()
        await pilot.press("ctrl+c")
        assert app.clipboard == screen.editor.text and not screen.running


# --- chapter pages (issue 12) -----------------------------------------------------------------------------------

READINGS = ("GPU Glossary", "Making Deep Learning Go Brrrr", "GPU MODE", "Parallel Prefix Sum", "Worklog",
            "Mamba", "FlashAttention", "Triton", "Mixed Precision", "Quantization", "LLM.int8", "PagedAttention",
            "Speculative Decoding", "Assisted Generation", "Transformer Math 101", "Ultra-Scale Playbook",
            "Megatron-LM", "Distilling the Knowledge")


def test_every_chapter_has_an_introduction_with_a_reading():
    """Chapters 1-11 (issue 12: each new chapter has an introduction page, what the idea is and which reading
    goes deeper), all in one shape: the title as the tree names it, what you can do after it, the reading."""
    assert set(registry.chapters()) == set(range(1, 12))
    for number in registry.chapters():
        text = registry.chapter_introduction(number)
        title = registry.chapters()[number]
        assert text.startswith(f"# Chapter {number} · {title}"), number
        assert "**After this chapter you can**" in text and "**Goes deeper:**" in text
        assert any(r in text for r in READINGS), number
    assert registry.chapter_introduction(99) == ""


@pilot_test
async def test_the_tree_shows_a_chapters_introduction_on_its_node(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        tree = app.screen.query_one(PuzzleTree)
        tree.move_cursor(tree.root.children[1])                     # chapter 2's node
        await pilot.pause()
        source = app.screen.query_one(PuzzlePage).source
        assert source.startswith("# Chapter 2 · Shared memory") and "## The puzzles" in source
        assert "**8** Shared Memory" in source


def test_result_text_is_rich_text_not_markup():
    from tui.widgets.results import result_renderable

    result = CheckResult(puzzle="map", number=1, file="x.py")
    result.cases = [CaseResult(name="[red]n[/red]", status="pass")]
    result.passed = True
    assert "[red]n[/red]" in plain(result_renderable(result))
