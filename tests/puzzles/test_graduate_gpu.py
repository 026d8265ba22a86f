"""Graduate mode on a real GPU (skipped without one): the worker, the timing and the device's peaks.

Run on a GPU machine with ``python3 -m pytest -m gpu tests/puzzles/test_graduate_gpu.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _why_no_gpu() -> str | None:
    proc = subprocess.run([sys.executable, "-c", "from puzzles.graduate.cuda_module import why_no_gpu; "
                           "print(why_no_gpu() or '')"], cwd=REPO, capture_output=True, text=True, timeout=120)
    return proc.stdout.strip() or (None if proc.returncode == 0 else proc.stderr.strip()[-200:])


REASON = _why_no_gpu()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(REASON is not None, reason=f"no GPU: {REASON}")]


def test_reference_solutions_are_correct_timed_and_set_beside_the_estimate(tmp_path):
    from puzzles import registry, workspace
    from puzzles.graduate import run

    items = [(registry.get(s), workspace.reference_path(registry.get(s))) for s in ("blocks", "map", "matmul")]
    outcome = run.graduate(run.Options(items=items, backends=["numba"], size=1 << 22, out=tmp_path,
                                       cache=tmp_path / "estimates.json", estimate_budget_s=240))
    assert outcome.ok, outcome.text
    peaks = outcome.doc["peaks"]
    assert peaks["copy_bandwidth"] > 1e11 and peaks["roof"]
    for row in outcome.rows:
        assert row.time_s > 0 and row.ci_s[0] <= row.time_s <= row.ci_s[1]
        assert row.estimate_s and row.ratio > 0.5, row        # a roofline is a lower bound, give or take noise
        assert row.bench_check == "pass"
        # the naive measurement can only add the host's time
        assert row.ungated_s >= 0.9 * row.time_s
    blocks = next(r for r in outcome.rows if r.slug == "blocks")
    assert blocks.peak_kind == "copy" and 0.05 < blocks.peak_fraction < 1.2
    assert (tmp_path / "graduate.md").is_file()


def test_a_kernel_that_faults_costs_one_row_and_the_rest_still_run(tmp_path):
    from puzzles import registry, workspace
    from puzzles.graduate import run

    bad = tmp_path / "blocks.py"
    bad.write_text("from numba import cuda\n\n\n@cuda.jit\ndef blocks_kernel(out, a, n):\n"
                   "    i = cuda.grid(1)\n    out[i * 1000003] = a[i]\n")   # far out of bounds: a fault
    items = [(registry.get("blocks"), bad), (registry.get("map"), workspace.reference_path(registry.get("map")))]
    outcome = run.graduate(run.Options(items=items, backends=["numba"], size=1 << 20, estimates=False, cache=None))
    rows = {r.slug: r for r in outcome.rows}
    assert not rows["blocks"].correct and rows["blocks"].failure
    assert rows["map"].correct, outcome.text
