"""``gpu-puzzles graduate`` / ``python3 -m puzzles.graduate`` on a machine without a GPU, and what it imports.

The GPU machine has numba-cuda but neither Textual nor platformdirs (nor, for graduate mode, any need of
torch or triton): every graduate process must run with those imports made impossible.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from graduate_blocker import blocking_env

from puzzles import cli

REPO = Path(__file__).resolve().parents[2]
def _run(args, tmp_path, **env):
    return subprocess.run([sys.executable, *args], cwd=REPO, env=blocking_env(tmp_path, **env), capture_output=True,
                          text=True, timeout=300)


def _has_gpu() -> bool:
    proc = subprocess.run([sys.executable, "-c", "from puzzles.graduate.cuda_module import why_no_gpu; "
                           "print(why_no_gpu() is None)"], cwd=REPO, capture_output=True, text=True, timeout=120)
    return proc.stdout.strip() == "True"


@pytest.mark.skipif(_has_gpu(), reason="this machine has a GPU: the no-GPU message cannot show here")
@pytest.mark.parametrize("entry", [["-m", "puzzles.graduate"], ["-m", "puzzles", "graduate"]])
def test_without_a_gpu_it_says_so_in_one_line_and_suggests_interpret(entry, tmp_path):
    proc = _run([*entry, "6", "--reference"], tmp_path)
    assert proc.returncode == 1
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert "no CUDA GPU here" in lines[0] and "--interpret" in lines[0]
    assert proc.stdout == ""


@pytest.mark.slow
def test_the_simulator_jobs_run_with_textual_platformdirs_torch_and_triton_unimportable(tmp_path):
    cache = tmp_path / "estimates.json"
    proc = _run(["-m", "puzzles.graduate", "6", "--reference", "--estimates-only", "--size", "4096",
                 "--estimates", str(cache)], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the estimate itself is tested against hand counts in tests/gpusim; here only that the job ran and printed it
    assert re.search(r"blocks at 2\^12: \d+(\.\d+)? µs \(memory-bound\)", proc.stdout) and cache.is_file()


def test_estimates_only_stops_at_the_estimate_budget_and_says_what_it_cut(tmp_path):
    # 2^22 elements of puzzle 6 take gpusim seconds; a budget of a tenth of a second cuts the job off
    cache = tmp_path / "estimates.json"
    proc = _run(["-m", "puzzles.graduate", "6", "--reference", "--estimates-only", "--size", "4194304",
                 "--estimates", str(cache), "--estimate-budget", "0.1"], tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "blocks at 2^22: not finished within --estimate-budget 0.1 s" in proc.stdout, proc.stdout


def test_interpret_without_torch_and_triton_says_so_on_the_row(tmp_path):
    proc = _run(["-m", "puzzles.graduate", "6", "--reference", "--interpret"], tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = next(ln for ln in proc.stdout.splitlines() if ln.split()[:3] == ["6", "blocks", "triton"])
    assert "FAIL" in row
    assert "torch and triton are not installed" in proc.stdout and "Triton's interpreter" in proc.stdout


@pytest.mark.parametrize("argv, message", [
    (["graduate"], "which puzzles?"),
    (["graduate", "6", "--all"], "not both"),
    (["graduate", "999", "--reference"], "no puzzle 999"),
    (["graduate", "6", "7", "--file", "solutions/blocks.py"], "exactly one puzzle"),
    (["graduate", "6", "--file", "no/such/file.py"], "no such file"),
    (["graduate", "6", "--reference", "--resume"], "give --out"),
])
def test_usage_errors_exit_2_with_one_message(argv, message, capsys):
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_no_workspace_file_yet_is_a_usage_error_naming_the_fix(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GPU_PUZZLES_HOME", str(tmp_path))
    assert cli.main(["graduate", "6"]) == 2
    assert "gpu-puzzles path" in capsys.readouterr().err
