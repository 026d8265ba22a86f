"""A whole graduate run (puzzles/graduate/run.py) with a stand-in GPU worker and the real simulator jobs.

The stand-in (graduate_fake_worker.py) speaks the worker's protocol: every task takes 1 ms on a fake H200
whose copy bandwidth is 4 TB/s. What the run must compute from that, the test computes independently: the
compulsory bytes from the benchmark case's buffers, gpusim's estimate by calling gpusim directly.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

from puzzles import registry, workspace
from puzzles.graduate import run
from puzzles.graduate.estimates import bench_case

FAKE = [sys.executable, str(Path(__file__).with_name("graduate_fake_worker.py"))]
SIZE = 1 << 12


def _options(tmp_path, slugs, **kw):
    items = [(registry.get(s), workspace.reference_path(registry.get(s))) for s in slugs]
    return run.Options(items=items, backends=["numba"], size=SIZE, out=tmp_path / "out",
                       cache=tmp_path / "estimates.json", estimate_jobs=2, worker_command=FAKE, **kw)


def _direct_estimate(puzzle, size):
    import gpusim
    from puzzles.loader import load_solution

    case, _ = bench_case(puzzle, size)
    sol = load_solution(workspace.reference_path(puzzle), puzzle.kernels)
    bufs = copy.deepcopy(dict(case.buffers))
    total = 0.0
    for step in case.launches:
        report = gpusim.launch(sol.kernels[step.kernel], step.grid, step.block, step.arg_values(bufs),
                               step.shared_mem, trace=False)
        total += report.estimate("H200").seconds
    return case, total


@pytest.mark.slow
def test_rows_crashes_hangs_and_wrong_outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_WORKER", json.dumps({"dot-product": "crash", "conv-1d": "hang",
                                                  "prefix-sum": "wrong"}))
    slugs = ["blocks", "dot-product", "shared", "conv-1d", "prefix-sum", "map"]
    outcome = run.graduate(_options(tmp_path, slugs, task_timeout_s=5))
    rows = {r.slug: r for r in outcome.rows}
    assert [r.slug for r in outcome.rows] == slugs

    blocks = rows["blocks"]
    case, estimate = _direct_estimate(registry.get("blocks"), SIZE)
    nbytes = case.buffers["a"].nbytes + case.buffers["out"].nbytes        # read a once, write out once
    assert blocks.correct and blocks.bench_check == "pass"
    assert blocks.time_s == 1e-3 and blocks.bytes == nbytes
    assert blocks.gbps == pytest.approx(nbytes / 1e-3)
    assert blocks.peak_kind == "copy" and blocks.peak_fraction == pytest.approx(nbytes / 1e-3 / 4e12)
    assert blocks.estimate_s == pytest.approx(estimate) and blocks.ratio == pytest.approx(1e-3 / estimate)

    assert "died" in rows["dot-product"].failure and not rows["dot-product"].correct
    assert "did not finish within 5 s" in rows["conv-1d"].failure
    assert rows["shared"].correct and rows["map"].correct               # the worker came back both times
    assert rows["prefix-sum"].bench_check.startswith("FAIL: wrong output `out`")
    assert rows["map"].size == "max" and "one block by design" in rows["map"].bench_note
    assert not outcome.ok

    out = tmp_path / "out"
    doc = json.loads((out / "graduate.json").read_text())
    assert [r["slug"] for r in doc["rows"]] == slugs and doc["peaks"]["copy_bandwidth"] == 4e12
    md = (out / "graduate.md").read_text()
    assert "| # | puzzle | back end | correct |" in md and "prefix-sum" in md
    assert "FAIL" in outcome.text and "4 of 6 correct" not in outcome.text
    cached = json.loads((out / "estimates.json").read_text())["entries"]
    assert len(cached) == len(slugs)


@pytest.mark.slow
def test_a_second_run_takes_its_estimates_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_WORKER", "{}")
    first = run.graduate(_options(tmp_path, ["blocks", "map"]))
    assert first.ok, first.text
    second = run.graduate(_options(tmp_path, ["blocks", "map"], estimate_budget_s=0.0))
    # a budget of 0 s cuts off every simulator job that has to run: these estimates came from the cache
    assert [r.estimate_s for r in second.rows] == [r.estimate_s for r in first.rows]
    assert all(r.estimate_s for r in second.rows)
    assert all(r.bench_check.startswith("not checked: not finished") for r in second.rows)


@pytest.mark.slow
def test_ncu_numbers_are_paired_with_their_launches_and_every_difference_is_flagged(tmp_path, monkeypatch):
    """With a stand-in ncu (graduate_fake_ncu.py: gpusim's numbers, one of them changed on purpose)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "ncu"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).with_name('graduate_fake_ncu.py')} \"$@\"\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    monkeypatch.setenv("FAKE_WORKER", "{}")
    changed = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    monkeypatch.setenv("FAKE_NCU_DIFF", changed)
    outcome = run.graduate(_options(tmp_path, ["blocks", "multi-block-scan"], ncu=True, ncu_size=SIZE))
    launches = outcome.doc["ncu"]["launches"]
    assert outcome.doc["ncu"]["error"] == ""
    assert [(x["slug"], x["step"]) for x in launches] == [("blocks", 0), ("multi-block-scan", 0),
                                                           ("multi-block-scan", 1), ("multi-block-scan", 2)]
    flags = {(x["id"], r["name"]): r["flag"] for x in launches for r in x["rows"]}
    assert {k for k, f in flags.items() if f == "DIFF"} == {(0, changed)}
    assert {f for (i, name), f in flags.items() if name.startswith("dram")} == {"estimate"}
    assert "ncu vs gpusim" in outcome.text and "DIFF" in outcome.text
    assert "## ncu vs gpusim at 2^12" in (tmp_path / "out" / "graduate.md").read_text()


@pytest.mark.slow
def test_ncu_runs_in_batches_whose_launch_ids_are_merged_and_the_saved_files_compare_again(tmp_path, monkeypatch):
    """One puzzle per ncu run: the stand-in ncu numbers each run's launches from 0 and changes a metric of its
    launch 0, so the second run's change must land on the merged launch 1 (multi-block-scan's first), and
    ``--ncu-from`` must find the same two differences in the files the run left, without a GPU."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "ncu"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).with_name('graduate_fake_ncu.py')} \"$@\"\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    monkeypatch.setenv("FAKE_WORKER", "{}")
    changed = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    monkeypatch.setenv("FAKE_NCU_DIFF", changed)
    monkeypatch.setattr(run, "NCU_BATCH", 1)
    outcome = run.graduate(_options(tmp_path, ["blocks", "multi-block-scan"], ncu=True, ncu_size=SIZE))
    launches = outcome.doc["ncu"]["launches"]
    assert [(x["id"], x["slug"], x["step"]) for x in launches] == [
        (0, "blocks", 0), (1, "multi-block-scan", 0), (2, "multi-block-scan", 1), (3, "multi-block-scan", 2)]
    assert {(x["id"], r["name"]) for x in launches for r in x["rows"] if r["flag"] == "DIFF"} == \
        {(0, changed), (1, changed)}
    out = tmp_path / "out"
    assert sorted(p.name for p in out.glob("ncu*")) == ["ncu-1.csv", "ncu-2.csv", "ncu_manifest-1.jsonl",
                                                       "ncu_manifest-2.jsonl"]
    opts = run.Options(items=_options(tmp_path, ["blocks", "multi-block-scan"]).items, backends=[], ncu=True,
                       ncu_size=SIZE, cache=tmp_path / "estimates.json", estimate_jobs=1)
    text = run.compare_saved(out, opts)
    diff_lines = [ln for ln in text.splitlines() if ln.rstrip().endswith("DIFF")]
    assert [ln.split()[0] for ln in diff_lines] == [changed, changed]
    assert "blocks launch 1" in text and "multi-block-scan launch 1" in text
