"""Tests for puzzles/cli.py: exit codes, output shapes, and clean messages for every kind of bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from puzzle_fixtures import FAKE_OK, needs_engine, real_puzzles, write

from puzzles import checker, loader, workspace
from puzzles.cli import main

REPO = Path(__file__).resolve().parents[2]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_list_and_json(tiny, capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0 and "tiny-add" in out and "Tiny add" in out and "☆☆☆" in out
    code, out, _ = run(capsys, "list", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == 1
    assert doc["puzzles"] == [{"number": 901, "slug": "tiny-add", "title": "Tiny add", "chapter": 1,
                               "difficulty": 1, "stars": 0, "max_stars": 3, "attempts": 0, "solved": False}]


def test_check_pass_and_fail(tiny, fake_engine, tmp_path, capsys):
    ok = str(write(tmp_path, "ok.py", FAKE_OK))
    code, out, _ = run(capsys, "check", "tiny-add", "--file", ok)
    assert code == 0 and "PASS ★★★" in out and "✓ n=4" in out
    bad = write(tmp_path, "bad.py", "from numba import cuda\n\n\n@cuda.jit\ndef add_one(out, a, n):\n    out[1:] = 0\n")
    code, out, _ = run(capsys, "check", "901", "--file", str(bad))
    assert code == 1 and "FAIL" in out and "✗ n=4" in out
    assert "index [0]" in out and "no thread wrote it" in out
    assert "Next: ★ needs every test case to pass" in out


def test_check_json_shape(tiny, fake_engine, tmp_path, capsys):
    ok = str(write(tmp_path, "ok.py", FAKE_OK))
    code, out, _ = run(capsys, "check", "tiny-add", "--file", ok, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["passed"] and doc["stars"] == 3 and doc["puzzle"] == "tiny-add"
    assert [c["status"] for c in doc["cases"]] == ["pass", "pass", "pass"]
    assert doc["cases"][0]["stats"]["reads_per_thread_by_array"] == {"a": 1, "out": 0}


@pytest.mark.parametrize("source, expected", [
    ("def add_one(out, a, n)\n    pass\n", "not valid Python: expected ':'"),
    ("def other(out, a, n):\n    pass\n", "no kernel named `add_one` (it defines other)"),
    ("import numpy as np\nX = np.zeros(3)[7]\n", "IndexError"),
    ("\tdef add_one(out, a, n):\n  pass\n", "not valid Python"),
])
def test_broken_files_fail_cleanly(tiny, fake_engine, tmp_path, capsys, source, expected):
    path = write(tmp_path, "broken.py", source)
    code, out, _ = run(capsys, "check", "tiny-add", "--file", str(path))
    assert code == 1 and expected in out and "FAIL" in out
    assert str(path) in out


def test_endless_loop_at_module_level_is_stopped(tiny, fake_engine, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(loader, "IMPORT_TIME_LIMIT_S", 0.3)
    spin = str(write(tmp_path, "spin.py", "while 1:\n    pass\n"))
    code, out, _ = run(capsys, "check", "tiny-add", "--file", spin)
    assert code == 1 and "took too long" in out


@needs_engine
def test_endless_loop_in_a_kernel_is_stopped(tiny, tmp_path, capsys):
    path = write(tmp_path, "spin.py", """
        from numba import cuda


        @cuda.jit
        def add_one(out, a, n):
            i = cuda.threadIdx.x
            while i < n:
                out[i] = a[i]
    """)
    started = time.monotonic()
    code, out, _ = run(capsys, "check", "tiny-add", "--file", str(path))
    assert code == 1 and f"{path}:7" in out and time.monotonic() - started < 120
    budget = f"{checker.MAX_STEPS:,} steps of work"
    assert "probably never ends" in out and budget in out and "max_steps" not in out
    assert f"gpu-puzzles check 901 --max-steps {2 * checker.MAX_STEPS}" in out     # what to do, from the CLI
    code, out, _ = run(capsys, "check", "tiny-add", "--file", str(path), "--max-steps", "1_000_000")
    assert code == 1 and "did more than 1,000,000 steps of work" in out and "--max-steps 2000000" in out


@pytest.mark.parametrize("argv, message", [
    (("check", "tiny-ad"), "did you mean 'tiny-add'"),
    (("check",), "which puzzle?"),
    (("check", "--all", "--file", "x.py"), "give no puzzle and no --file"),
    (("check", "tiny-add", "--file", "no/such/file.py"), "no such file"),
    (("show", "12345"), "there is no puzzle 12345"),
    (("check", "tiny-add", "--max-steps", "0"), "a step budget is at least 1"),
    (("check", "tiny-add", "--max-steps", "lots"), "a step budget is a whole number"),
])
def test_usage_errors_exit_2(tiny, capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err


def test_argparse_errors_exit_2_and_help_exits_0(tiny, capsys):
    assert run(capsys, "frobnicate")[0] == 2
    assert run(capsys, "check", "tiny-add", "--file", "x.py", "--reference")[0] == 2
    assert run(capsys, "--help")[0] == 0


def test_check_uses_the_workspace_and_records_attempts(tiny, fake_engine, home, capsys):
    code, out, _ = run(capsys, "check", "tiny-add")
    path = workspace.workspace_path(tiny)
    assert code == 1 and path.is_file() and str(path) in out
    path.write_text(textwrap.dedent(FAKE_OK))
    assert run(capsys, "check", "tiny-add")[0] == 0
    doc = json.loads((home / "progress.json").read_text())["puzzles"]["tiny-add"]
    assert doc["attempts"] == 2 and doc["best_stars"] == 3 and doc["solved_at"]
    code, out, _ = run(capsys, "list")
    assert "★★★" in out and "3 of 3 stars" in out


def test_reference_checks_are_not_recorded(tiny, fake_engine, home, capsys):
    workspace.reference_path(tiny).write_text(textwrap.dedent(FAKE_OK))
    assert run(capsys, "check", "tiny-add", "--reference")[0] == 0
    assert not (home / "progress.json").exists()


def test_check_all(tiny, fake_engine, capsys):
    code, out, _ = run(capsys, "check", "--all")
    assert code == 1 and "not started" in out and "0 of 1 puzzles pass" in out
    workspace.ensure_starter(tiny).write_text(textwrap.dedent(FAKE_OK))
    code, out, _ = run(capsys, "check", "--all", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["passed"] == doc["total"] == 1 and doc["results"][0]["status"] == "pass"
    workspace.reference_path(tiny).write_text(textwrap.dedent(FAKE_OK))
    code, out, _ = run(capsys, "check", "--all", "--reference")
    assert code == 0 and "✓ 901 tiny-add ★★★" in out


def test_hint_show_path_solution(tiny, home, capsys):
    code, out, _ = run(capsys, "hint", "tiny-add")
    assert code == 0 and out.startswith("Hint 1 of 2: " + tiny.hints[0])
    assert run(capsys, "hint", "tiny-add")[1].startswith("Hint 2 of 2")
    assert "All 2 hints are already revealed" in run(capsys, "hint", "tiny-add")[1]

    code, out, _ = run(capsys, "show", "tiny-add")
    assert code == 0 and tiny.description in out and "Hints: 2 of 2 revealed" in out
    assert "at most 1 read of `a` per thread" in out and "★★★  no bank conflicts" in out
    assert f"Your file: {workspace.workspace_path(tiny)}" in out

    code, out, _ = run(capsys, "path", "tiny-add")
    assert code == 0 and out.strip() == str(workspace.workspace_path(tiny)) and Path(out.strip()).is_file()

    code, out, _ = run(capsys, "solution", "tiny-add")
    assert code == 2 and "--yes" in out and "def add_one" not in out
    code, out, _ = run(capsys, "solution", "tiny-add", "--yes")
    assert code == 0 and "def add_one" in out
    doc = json.loads((home / "progress.json").read_text())["puzzles"]["tiny-add"]
    assert doc["hints_revealed"] == 2 and doc["solution_revealed"] is True


def test_corrupt_progress_is_a_warning_not_a_crash(tiny, home, capsys):
    home.mkdir()
    (home / "progress.json").write_text("{not json")
    code, out, err = run(capsys, "list")
    assert code == 0 and "tiny-add" in out and "warning" in err and "corrupt" in err
    assert any(name.startswith("progress.json.corrupt-") for name in os.listdir(home))


def test_an_internal_error_is_one_line(tiny, tmp_path, capsys, monkeypatch):
    def crash(*args, **kwargs):
        raise RuntimeError("something inside broke")

    monkeypatch.setattr(checker, "check_file", crash)
    path = str(write(tmp_path, "ok.py", FAKE_OK))
    code, out, err = run(capsys, "check", "tiny-add", "--file", path)
    assert code == 1 and "internal error" in err and "something inside broke" in err
    main(["--debug", "check", "tiny-add", "--file", path])
    assert "Traceback" in capsys.readouterr().err


def test_no_command_without_a_terminal_prints_the_list(tiny, capsys):
    code, out, _ = run(capsys)
    assert code == 0 and "tiny-add" in out and "To play:" in out


def test_a_real_process_reports_a_syntax_error_cleanly(tmp_path):
    """The installed entry point, end to end: a player's broken file, JSON out, exit 1, no traceback."""
    puzzles = real_puzzles()
    if not puzzles:
        pytest.skip("no puzzles yet")
    bad = write(tmp_path, "bad.py", "from numba import cuda\n\n@cuda.jit\ndef k(a)\n    pass\n")
    env = dict(os.environ, GPU_PUZZLES_HOME=str(tmp_path / "home"))
    argv = [sys.executable, "-m", "puzzles", "check", str(puzzles[0].number), "--file", str(bad), "--json"]
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["failures"][0]["kind"] == "compile" and f"{bad}:4" in doc["failures"][0]["message"]
