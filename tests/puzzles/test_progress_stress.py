"""Progress under kill -9 and many processes at once: a few runs of benchmarks/progress_stress.py's harness.

The benchmark does 100 of each (``python -m benchmarks.progress_stress``); here a handful, so a lost update or a
stray temporary file shows in CI. Before the lock, the concurrent run lost 26-40 of 40 checks every time.
"""

from __future__ import annotations

import pytest

from benchmarks.progress_stress import ROOT, concurrent_runs, kill_runs


def test_kill_9_at_random_moments_loses_and_corrupts_nothing(tmp_path):
    tally = kill_runs(8, tmp_path / "home", seed=1)
    assert (tally.runs, tally.lost, tally.corrupt, tally.stray_temps_left) == (8, 0, 0, 0), tally.problems


def test_concurrent_processes_and_a_check_all_lose_no_update(tmp_path):
    tally = concurrent_runs(2, tmp_path, procs=4, checks=10)
    assert (tally.runs, tally.lost, tally.corrupt) == (2, 0, 0), tally.problems


@pytest.mark.slow
def test_four_cli_checks_and_a_check_all_at_once(tmp_path):
    tally = concurrent_runs(1, tmp_path, cli=True, reference=ROOT / "solutions" / "map.py")
    assert (tally.runs, tally.lost, tally.corrupt) == (1, 0, 0), tally.problems
