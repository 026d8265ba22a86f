"""A graduate run keeps every finished row in its --out files as it goes, and ``--resume`` runs only the rest
(puzzles/graduate/resume.py), with the stand-in GPU worker of test_graduate_run.py.

The first run is killed (SIGKILL, as a time limit does) while the worker hangs on its third puzzle; what the
files must then hold, and which tasks the resumed run gives its worker, the test knows from the order of
the puzzles and from which file it changed, not from the implementation.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from puzzles import registry, workspace
from puzzles.graduate import run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FAKE = [sys.executable, str(HERE / "graduate_fake_worker.py")]
SIZE = 1 << 12

RUN = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from puzzles import registry
from puzzles.graduate import run
items = [(registry.get(s), Path(p)) for s, p in json.loads(sys.argv[2])]
run.graduate(run.Options(items=items, backends=["numba"], size=int(sys.argv[5]), out=Path(sys.argv[3]), cache=None,
                         estimates=False, worker_command=json.loads(sys.argv[4]), task_timeout_s=600))
"""


def _items(tmp_path):
    own_map = tmp_path / "map.py"                 # the player's file for puzzle 1: a copy of the reference
    own_map.write_text(workspace.reference_path(registry.get("map")).read_text())
    return [("blocks", workspace.reference_path(registry.get("blocks"))), ("map", own_map),
            ("conv-1d", workspace.reference_path(registry.get("conv-1d"))),
            ("shared", workspace.reference_path(registry.get("shared")))]


def _doc(out: Path) -> dict | None:
    try:
        return json.loads((out / "graduate.json").read_text())
    except (OSError, ValueError):
        return None


@pytest.mark.slow
def test_a_killed_run_keeps_its_finished_rows_and_resume_runs_only_the_rest(tmp_path, monkeypatch):
    items, out = _items(tmp_path), tmp_path / "out"
    first_tasks, later_tasks = tmp_path / "tasks1.jsonl", tmp_path / "tasks2.jsonl"
    env = dict(os.environ, FAKE_WORKER=json.dumps({"conv-1d": "hang"}), FAKE_WORKER_TASKS=str(first_tasks))
    proc = subprocess.Popen([sys.executable, "-c", RUN, str(ROOT), json.dumps([[s, str(p)] for s, p in items]),
                             str(out), json.dumps(FAKE), str(SIZE)], env=env, cwd=ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            doc = _doc(out)
            if doc and len(doc["rows"]) == 2 and all(r["measured"]["verify"] for r in doc["rows"]):
                break
            assert proc.poll() is None, "the run ended on its own; it should hang on conv-1d"
            time.sleep(0.5)
        else:
            pytest.fail(f"the finished rows never reached graduate.json: {_doc(out)}")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)       # the run and its worker, as a time limit kills them
        proc.wait(timeout=30)

    doc = _doc(out)
    assert doc["complete"] is False and doc["rows_expected"] == 4
    assert [(r["slug"], r["correct"], r["bench_check"]) for r in doc["rows"]] == [("blocks", True, "pass"),
                                                                                  ("map", True, "pass")]
    assert "Partial: 2 of 4 rows" in (out / "graduate.txt").read_text()
    assert "| 6 | blocks | numba |" in (out / "graduate.md").read_text()
    assert not list(out.glob(".*.tmp*"))          # every file was replaced whole
    kept_blocks = doc["rows"][0]

    items[1][1].write_text(items[1][1].read_text() + "\n# edited after the first run\n")
    monkeypatch.setenv("FAKE_WORKER", "{}")
    monkeypatch.setenv("FAKE_WORKER_TASKS", str(later_tasks))
    opts = run.Options(items=[(registry.get(s), p) for s, p in items], backends=["numba"], size=SIZE, out=out,
                       cache=None, estimates=False, worker_command=FAKE, resume=True)
    outcome = run.graduate(opts)
    given = [json.loads(ln) for ln in later_tasks.read_text().splitlines()]
    # blocks is kept; map runs again (its file changed), conv-1d never finished, shared never started
    assert given == [[["map", "numba"], ["conv-1d", "numba"], ["shared", "numba"]]]
    assert outcome.ok and [r.slug for r in outcome.rows] == ["blocks", "map", "conv-1d", "shared"]
    doc = _doc(out)
    assert doc["complete"] is True and len(doc["rows"]) == 4 and "Partial" not in outcome.text
    assert doc["rows"][0]["measured"] == kept_blocks["measured"]
    assert doc["rows"][0]["time_s"] == kept_blocks["time_s"] and doc["rows"][0]["bench_check"] == "pass"

    again = run.graduate(opts)                    # nothing left: the worker is given no task
    assert json.loads(later_tasks.read_text().splitlines()[-1]) == []
    assert again.ok and [r.time_s for r in again.rows] == [r.time_s for r in outcome.rows]


def test_resume_without_a_previous_run_says_so_and_runs_everything(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_WORKER", "{}")
    lines = []
    opts = run.Options(items=[(registry.get("map"), workspace.reference_path(registry.get("map")))],
                       backends=["numba"], size=SIZE, out=tmp_path / "out", cache=None, estimates=False,
                       worker_command=FAKE, resume=True, progress=lines.append)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "graduate.json").write_text("{ not json")
    outcome = run.graduate(opts)
    assert outcome.ok and any("could not be read" in ln and "starting afresh" in ln for ln in lines)


@pytest.mark.slow
def test_resume_profiles_only_the_puzzles_without_ncu_launches_and_keeps_the_others(tmp_path, monkeypatch):
    """With the stand-in ncu of test_graduate_run.py (gpusim's numbers, one changed on purpose)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ncu").write_text(f"#!/bin/sh\nexec {sys.executable} {HERE / 'graduate_fake_ncu.py'} \"$@\"\n")
    (bin_dir / "ncu").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_WORKER", "{}")
    changed = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    monkeypatch.setenv("FAKE_NCU_DIFF", changed)
    out = tmp_path / "out"

    def options(slugs):
        return run.Options(items=[(registry.get(s), workspace.reference_path(registry.get(s))) for s in slugs],
                           backends=["numba"], size=SIZE, out=out, cache=tmp_path / "estimates.json",
                           estimate_jobs=2, worker_command=FAKE, ncu=True, ncu_size=SIZE, resume=True)

    first = run.graduate(options(["blocks"]))
    assert [x["slug"] for x in first.doc["ncu"]["launches"]] == ["blocks"]
    second = run.graduate(options(["blocks", "multi-block-scan"]))
    assert sorted(p.name for p in out.glob("ncu_manifest*")) == ["ncu_manifest-1.jsonl"]   # one batch of ncu
    profiled = [json.loads(ln)["slug"] for ln in (out / "ncu_manifest-1.jsonl").read_text().splitlines()]
    assert profiled == ["multi-block-scan"] * 3                      # blocks' launch was kept, not profiled
    launches = second.doc["ncu"]["launches"]
    assert [(x["slug"], x["step"]) for x in launches] == [("blocks", 0), ("multi-block-scan", 0),
                                                           ("multi-block-scan", 1), ("multi-block-scan", 2)]
    assert launches[0]["rows"] == first.doc["ncu"]["launches"][0]["rows"]
    diffs = {(x["slug"], x["step"]) for x in launches for r in x["rows"] if r["flag"] == "DIFF"}
    assert diffs == {("blocks", 0), ("multi-block-scan", 0)}          # the first launch of each ncu run
