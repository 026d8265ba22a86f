"""Issue 10, items 2 and 5: the editor never eats typing, keeps Python's indentation, has pane keys, follows
the theme."""

from __future__ import annotations

from textual import events
from tui_helpers import SIZE, make_app, open_puzzle, pilot_test, run_check, wait_until

from tui.checking import snapshot_path
from tui.widgets.editor import DARK_THEME, LIGHT_THEME, new_line_indent

FAULTY = ("from numba import cuda\n\n\n@cuda.jit\ndef map_kernel(out, a):\n"
          "    i = cuda.threadIdx.x\n    out[i + 1] = a[i] + 10\n")


@pilot_test
async def test_typing_after_a_failed_run_keeps_every_character(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        screen.editor.load_text(FAULTY)
        await run_check(app, pilot)
        editor = screen.editor
        assert not screen.results.result.passed
        assert editor.fault_line == 7                          # the out-of-bounds store is marked
        assert editor.selection.is_empty                        # ... and nothing is selected
        assert editor.cursor_location == (6, 4)                 # the cursor is at the line's first character
        await pilot.press(*"# x")
        assert editor.document[6] == "    # xout[i + 1] = a[i] + 10"    # typed in front, nothing replaced
        assert editor.text.count("\n") == FAULTY.count("\n")
        assert editor.fault_line is None                        # editing the line clears the mark


@pilot_test
async def test_a_burst_of_keys_is_applied_in_order_and_ctrl_r_checks_all_of_it(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        editor = screen.editor
        editor.load_text("x = 1\n")
        editor.move_cursor((0, 5))
        # posted at once, as a fast typist or a paste of keys arrives: no waiting between them
        for key, char in (("left", None), ("left", None), ("left", None), ("backspace", None),
                          ("a", "a"), ("end", None), ("b", "b"), ("ctrl+r", None)):
            app.post_message(events.Key(key, char))
        await wait_until(pilot, lambda: "map" in app.results, what="the check")
        assert editor.text == "xa= 1b\n"
        checked = snapshot_path(screen.path)                     # the snapshot the check ran
        assert checked.read_text() == "xa= 1b\n"                # ctrl+r took the text after every key


def test_new_lines_keep_the_indentation_and_follow_pythons_blocks():
    assert new_line_indent("    x = 1", 9) == "    "
    assert new_line_indent("def f(a):", 9) == "    "
    assert new_line_indent("    if i < n:  # guard", 22) == "        "
    assert new_line_indent("        return", 14) == "    "
    assert new_line_indent("    pass", 8) == ""
    assert new_line_indent("    x = 1", 2) == "  "                 # Enter inside the indentation


@pilot_test
async def test_enter_indents_and_backspace_dedents_in_the_editor(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        editor = screen.editor
        editor.load_text("")
        await pilot.press(*"def k(a):", "enter", *"if a:", "enter", *"x", "enter", "backspace", *"y")
        assert editor.text == "def k(a):\n    if a:\n        x\n    y"
        await pilot.press("enter", *"return", "enter", *"z")
        assert editor.text.endswith("\n    return\nz")


@pilot_test
async def test_the_panes_have_their_own_keys_and_tab_indents(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        editor = screen.editor
        await pilot.press("f6")
        assert screen.side_tab == "task" and app.focused is not editor
        await pilot.press("f7")
        assert screen.side_tab == "results"
        await pilot.press("f8")
        assert screen.side_tab == "console"
        await pilot.press("f5")
        assert app.focused is editor
        editor.load_text("")
        await pilot.press("tab")
        assert editor.text == "    " and app.focused is editor    # Tab indents; it does not leave the editor
        await pilot.press("f7", "z")                               # typing from another pane reaches the file
        assert app.focused is editor and editor.text == "    z"


@pilot_test
async def test_the_editor_follows_a_light_theme(home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        assert screen.editor.theme == DARK_THEME
        app.theme = "textual-light"
        await pilot.pause()
        assert screen.editor.theme == LIGHT_THEME
        await pilot.press("f10")                                   # and back, with the key
        await pilot.pause()
        assert app.current_theme.dark and screen.editor.theme == DARK_THEME
