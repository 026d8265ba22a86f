"""The seed of a check's random cases is shown with the verdict, and ctrl+l checks again on the same cases
(issue 11's fresh cases, replayable from the app as `check --seed` replays them on the command line)."""

from __future__ import annotations

from tui_helpers import SIZE, make_app, open_puzzle, pilot_test, plain, run_check, use_reference, wait_until

from puzzles.checker import case_generator


@pilot_test
async def test_the_results_show_the_seed_and_ctrl_l_replays_it(home):
    use_reference("map")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        await run_check(app, pilot)
        first = screen.results.result
        assert first.passed
        assert f"cases drawn with seed {first.seed} · ctrl+l runs these same cases again" in \
            plain(screen.results.content, 200)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: screen.results.result is not first and not app.runner.running,
                         what="the check on the same cases")
        again = screen.results.result
        assert again is not first and again.seed == first.seed
        assert [c.name for c in again.cases] == [c.name for c in first.cases]
        a = [c.buffers["a"].tolist() for c in screen.puzzle.make_cases(case_generator(first.seed))]
        assert [c.outputs["out"].got.size for c in again.cases] == [len(x) for x in a]
        await run_check(app, pilot)                       # ctrl+r: fresh cases
        assert screen.results.result.seed != first.seed


@pilot_test
async def test_ctrl_l_before_any_check_says_what_to_do(home):
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_puzzle(app, pilot, "map")
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert not app.runner.running and screen.result is None
        assert any("ctrl+r runs your file" in plain(t.render()) for t in app.screen.query("Toast"))


def test_the_verdict_says_how_many_cases_did_not_run():
    """A kernel naming a variable it never defines stops the check at the first case: the head says the
    others did not run, rather than leaving "1 of 5 failed" to read as "4 passed"."""
    from puzzles import registry, workspace
    from puzzles.checker import check_source
    from tui.widgets.results import result_renderable

    p = registry.get("map")
    text = workspace.reference_path(p).read_text().replace("out[i] = a[i] + 10", "out[i] = a[i] + nowhere")
    result = check_source(p, text, "/virtual/map.py", seed=1)
    assert [c.status for c in result.cases][:2] == ["fail", "not run"]
    head = plain(result_renderable(result), 200).splitlines()[0]
    assert f"1 of {len(result.cases)} test cases failed, {len(result.cases) - 1} not run" in head


@pilot_test
async def test_opening_a_puzzle_starts_the_judge_before_the_first_check(home, monkeypatch):
    import tui.checking as checking

    started = []
    monkeypatch.setattr(checking, "shared_worker", lambda: started.append(True))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_puzzle(app, pilot, "map")
        assert started and not app.runner.running          # warming up, nothing checked
