"""The CPU job pool of graduate mode (puzzles/graduate/pool.py): memory, order, the deadline."""

from __future__ import annotations

import time

import pytest

from puzzles import registry, workspace
from puzzles.graduate import estimates, pool

GPU = estimates.gpu_to_dict(estimates.gpu_model("H200"))


def _estimate(slug, size, **kw):
    path = str(workspace.reference_path(registry.get(slug)))
    return pool.Job("estimate", {"puzzle": slug, "path": path, "size": size, "gpu": GPU}, tag=slug, **kw)


def test_a_job_too_big_for_the_machine_is_refused_not_started(tmp_path):
    jobs = pool.Pool(max_jobs=1, memory_budget=1 << 30, workdir=tmp_path)
    try:
        big = jobs.submit(_estimate("blocks", 1 << 12, memory=3 << 30))
        assert jobs.wait(time.monotonic() + 10)
        assert big.result["ok"] is False and "needs about 3 GiB, more than the 1 GiB" in big.result["error"]
        assert big._proc is None
    finally:
        jobs.close()


@pytest.mark.slow
def test_jobs_run_in_priority_then_cost_order_and_the_deadline_kills_the_rest(tmp_path):
    jobs = pool.Pool(max_jobs=1, memory_budget=8 << 30, workdir=tmp_path)
    try:
        slow = jobs.submit(_estimate("linear-recurrence", 1 << 24, memory=1, cost=50.0))
        quick = jobs.submit(_estimate("blocks", 1 << 10, memory=1, cost=1.0))
        urgent = jobs.submit(_estimate("map", 1 << 10, memory=1, cost=99.0, priority=0))
        deadline = time.monotonic() + 120
        while quick.result is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert urgent.result["ok"] and quick.result["ok"], (urgent.result, quick.result)
        assert urgent._started < quick._started < slow._started
        assert quick.result["result"]["puzzle"] == "blocks" and quick.result["result"]["totals"]["seconds"] > 0
        cut = jobs.close("cut off for the test")
        assert slow in cut and slow.result == {"ok": False, "error": "cut off for the test"}
        assert slow._proc.poll() is not None                              # the process is gone
    finally:
        jobs.close()
