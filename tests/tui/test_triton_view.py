"""Issue 8, item 6: ctrl+t shows the editor's kernel as a Triton program beside it, then graduate mode's table
for it. The program comes from ``gpu-puzzles triton`` in a child process (real); the run is stubbed here
where it would need torch and a GPU, and its one-line answer without torch is checked as it is."""

from __future__ import annotations

from tui_helpers import SIZE, make_app, open_puzzle, pilot_test, plain, wait_until

from puzzles import registry, workspace
from puzzles.graduate import triton_preview
from tui.widgets.triton_view import TritonView


def shown(screen) -> str:
    return plain(screen.query_one(TritonView).content)


@pilot_test
async def test_ctrl_t_shows_the_program_and_the_table(home, monkeypatch):
    calls = []

    def fake_run(puzzle, text, path, timeout=600):
        calls.append((puzzle.slug, text))
        return triton_preview.Preview(True, " #  puzzle  back end  correct\n 8  shared  triton    6/6 ok")

    monkeypatch.setattr(triton_preview, "run", fake_run)
    monkeypatch.setattr(triton_preview, "missing_line", lambda: None)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "shared")
        screen.editor.text = workspace.reference_path(registry.get("shared")).read_text()   # what is translated
        await pilot.press("ctrl+t")
        assert screen.side_tab == "triton"
        await wait_until(pilot, lambda: "6/6 ok" in shown(screen), timeout=120, what="the run's table")
        text = shown(screen)
        assert "def reverse_kernel(out, out_n0, a, a_n0, n):" in text
        assert "Shared arrays in registers: s." in text
        assert calls and calls[0][0] == "shared" and "cuda.shared.array" in calls[0][1]


@pilot_test
async def test_without_torch_the_view_says_so_in_one_line(home, monkeypatch):
    line = 'torch and triton are not installed, so the program cannot run here: pip install -e ".[gpu]"'
    monkeypatch.setattr(triton_preview, "missing_line", lambda: line)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        screen.editor.text = ("from numba import cuda\n\n\n@cuda.jit\ndef map_kernel(out, a):\n"
                              "    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n")
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: "not installed" in shown(screen), timeout=120, what="the missing line")
        text = shown(screen)
        assert " ".join(line.split()) in " ".join(text.split())
        assert "def map_kernel(out, out_n0, a, a_n0):" in text       # the program is still shown


@pilot_test
async def test_at_80_columns_the_program_scrolls_sideways_and_the_sentence_wraps(home, monkeypatch):
    """The program's lines were cut at the pane's edge ("case 'wo"); now the view is as wide as its longest
    line inside a scroller, and the one-line reason wraps to what is visible."""
    line = 'torch and triton are not installed, so the program cannot run here: pip install -e ".[gpu]"'
    monkeypatch.setattr(triton_preview, "missing_line", lambda: line)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_puzzle(app, pilot, "zip")
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: "not installed" in shown(screen), timeout=120, what="the missing line")
        await pilot.pause()
        view = screen.query_one(TritonView)
        scroll = screen.query_one("#triton-scroll")
        visible = scroll.scrollable_content_region.width
        text = plain(view.content, 300)
        longest = max(len(x.rstrip()) for x in text.split("\n\n", 1)[1].splitlines())
        assert longest > visible                                  # the program is wider than the pane...
        assert view.size.width >= longest and scroll.max_scroll_x > 0      # ...and scrolls, uncut
        sentence = text.split("\n\n", 1)[0].splitlines()
        assert len(sentence) > 1 and all(len(x.rstrip()) <= visible for x in sentence)
