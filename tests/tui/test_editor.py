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


@pilot_test
async def test_the_cursor_starts_in_the_kernel_and_comes_back_where_it_was_left(home):
    """Reopened (even after a restart), the cursor is where the player left it; the first time it is at the
    start of the first kernel's body, not on line 1, where typing breaks the docstring."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        text = screen.editor.text.splitlines()
        row, column = screen.editor.cursor_location
        assert text[row - 1].lstrip().startswith("def map_kernel") and column == len(text[row]) - len(
            text[row].lstrip()) > 0
        screen.editor.move_cursor((2, 3))
        await pilot.press("escape")
        await pilot.pause()
        screen = await open_puzzle(app, pilot, "map")
        assert screen.editor.cursor_location == (2, 3)
        screen.editor.move_cursor((3, 1))
    again = make_app()
    async with again.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(again, pilot, "map")
        assert screen.editor.cursor_location == (3, 1)


@pilot_test
async def test_keys_pressed_before_the_opening_cursor_is_placed_stay_where_they_went(home):
    """The opening cursor is placed after the first refresh; on a slow machine (CI) the player's first keys
    can arrive before it. They chose the place: "# typed" from line 1 once came out as "#" on line 1 and
    " typed" in the kernel's body."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        screen.editor.move_cursor((0, 0))
        await pilot.press("#")
        screen._place_cursor()                    # what the late callback does
        assert screen.editor.cursor_location == (0, 1)
        await pilot.press(*" typed")
        assert screen.editor.text.startswith("# typed")


@pilot_test
async def test_at_80_columns_the_first_cursor_leaves_the_text_unscrolled(home):
    """A new puzzle on a narrow screen shows its task first; placing the cursor in the hidden editor scrolled
    its text four columns sideways ("a.jit" for "@cuda.jit")."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_puzzle(app, pilot, "pooling")
        await pilot.pause()
        assert screen.side_tab == "task" and screen.pane == "side"
        await pilot.press("f5")
        await pilot.pause()
        assert screen.editor.cursor_location[1] == 4 and screen.editor.scroll_offset.x == 0
