"""The judge's rules (issue 11): fresh seeded inputs, inputs unchanged, GPU validity, the reference counts as
revealed, nothing at import time reaches the judging process, and the warm worker for the TUI.

The cheat files themselves live in tests/puzzles/wrong/ (``*__cheat_*``) and are checked there; these tests
cover what a verdict alone cannot show.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from puzzle_fixtures import write

from puzzles import progress, registry, workspace
from puzzles.checker import check_file, check_source
from puzzles.cli import main
from puzzles.model import Case, LaunchStep, Puzzle

REPO = Path(__file__).resolve().parents[2]
WRONG = Path(__file__).resolve().parent / "wrong"
MAP = registry.get("map")
MAP_OK = (workspace.reference_path(MAP)).read_text()


def _messages(result) -> str:
    return "\n".join(f"[{f.kind}] {f.message}" for f in result.failures)


# --- fresh inputs ------------------------------------------------------------------------------------------


def test_each_check_draws_a_fresh_seed_and_a_seed_replays_a_check():
    bad = WRONG / "map__cheat_bakes_the_answers.py"
    first, second = check_file(MAP, bad), check_file(MAP, bad)
    assert first.seed != second.seed
    again = check_file(MAP, bad, seed=first.seed)
    assert again.seed == first.seed
    assert [f.message for f in again.failures] == [f.message for f in first.failures]
    assert first.to_dict()["seed"] == first.seed


def test_a_bake_of_the_fixed_cases_would_have_passed():
    """The cheat in wrong/map__cheat_bakes_the_answers.py is real: against the old fixed cases it passes."""
    fixed = dataclasses.replace(MAP, make_cases=lambda rng=None: MAP.make_cases())
    result = check_file(fixed, WRONG / "map__cheat_bakes_the_answers.py")
    assert result.passed, _messages(result)
    for seed in (0, 1, 2):      # 1 is the puzzle's own fixed seed: the check's generator is salted
        assert not check_file(MAP, WRONG / "map__cheat_bakes_the_answers.py", seed=seed).passed


def test_cli_seed_replays_and_json_reports_it(tmp_path, capsys):
    path = str(WRONG / "map__cheat_bakes_the_answers.py")
    assert main(["check", "map", "--file", path, "--seed", "12345", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["seed"] == 12345 and not doc["passed"]
    assert main(["check", "map", "--file", path, "--seed", "12345"]) == 1
    assert "seed 12345" in capsys.readouterr().out
    assert main(["check", "map", "--file", path, "--seed", "many"]) == 2


# --- inputs unchanged, sentinels ---------------------------------------------------------------------------


def _int_puzzle(kernel_outputs: tuple[str, ...] = ("out",), scratch: tuple[str, ...] = ()) -> Puzzle:
    def cases(rng=None):
        rng = rng or np.random.default_rng(0)
        a = rng.integers(-5, 5, 8).astype(np.int32)
        buffers = {"out": np.full(8, -1, np.int32), "a": a, "tmp": np.zeros(8, np.int32)}
        return (Case("ints", buffers, (LaunchStep("k", 1, 8, ("out", "a", "tmp")),)),)

    return Puzzle(slug="ints", number=902, title="Ints", chapter=1, difficulty=1, description="",
                  kernels=("k",), spec=lambda out, a, tmp: {"out": np.abs(a)}, make_cases=cases,
                  outputs=kernel_outputs, scratch=scratch)


KERNEL = "from numba import cuda\n\n\n@cuda.jit\ndef k(out, a, tmp):\n    i = cuda.threadIdx.x\n"


def test_an_input_written_by_the_kernel_fails_even_with_the_right_output(tmp_path):
    path = write(tmp_path, "k.py", KERNEL + "    a[i] = abs(a[i])\n    out[i] = a[i]\n")
    result = check_file(_int_puzzle(), path)
    failure = next(f for f in result.failures if f.detail.get("changed_input"))
    assert not result.passed and "changed the input `a`" in failure.message
    assert failure.detail["output"] == "a" and failure.kind == "mismatch"


def test_a_scratch_buffer_may_be_written(tmp_path):
    path = write(tmp_path, "k.py", KERNEL + "    tmp[i] = abs(a[i])\n    out[i] = tmp[i]\n")
    assert "changed the input `tmp`" in _messages(check_file(_int_puzzle(), path))
    assert check_file(_int_puzzle(scratch=("tmp",)), path).passed


def test_an_integer_output_equal_to_its_sentinel_says_a_thread_wrote_it(tmp_path):
    written = check_file(_int_puzzle(), write(tmp_path, "w.py", KERNEL + "    out[i] = -1\n"))
    assert "a thread wrote -1 here, the value the buffer started with" in _messages(written)
    silent = check_file(_int_puzzle(), write(tmp_path, "s.py", KERNEL + "    if i > 99:\n        out[i] = 0\n"))
    assert "no thread wrote it" in _messages(silent) and "a thread wrote" not in _messages(silent)


# --- would it run on a GPU? ---------------------------------------------------------------------------------


def test_an_eager_signature_of_the_right_types_passes_without_a_gpu():
    source = MAP_OK.replace("@cuda.jit\n", '@cuda.jit("void(float32[:], float32[:])")\n')
    assert source != MAP_OK
    result = check_source(MAP, source, "/virtual/map.py")
    assert result.passed and result.stars == result.max_stars, _messages(result)


def test_check_source_checks_the_text_given(tmp_path):
    on_disk = write(tmp_path, "map.py", "this file on disk is not python\n")
    assert check_source(MAP, MAP_OK, str(on_disk)).passed
    assert not check_file(MAP, on_disk).passed


def test_a_utf8_file_with_a_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + MAP_OK.encode())
    assert check_file(MAP, path).passed
    assert check_source(MAP, "\ufeff" + MAP_OK, str(path)).passed


# --- the reference ------------------------------------------------------------------------------------------


def test_importing_the_reference_is_recorded_as_seeing_it(home, capsys):
    cheat = str(WRONG / "map__cheat_imports_the_reference.py")
    result = check_file(MAP, cheat)
    assert not result.passed and "import solutions.map" in result.reference_use
    assert main(["check", "map", "--file", cheat]) == 1
    assert "counts as having seen it" in capsys.readouterr().out
    assert progress.load_progress().puzzles["map"].solution_revealed


def test_reading_the_reference_file_is_seen_by_the_audit_hook(tmp_path):
    reference = workspace.reference_path(MAP)
    source = f"_text = open({str(reference)!r}).read()\n" + MAP_OK
    result = check_source(MAP, source, str(tmp_path / "reader.py"))
    assert result.passed and result.reference_use == [f"open {reference}"]
    assert any("counts as having seen it" in n for n in result.notes)


def test_an_own_solution_is_not_marked(tmp_path):
    assert check_source(MAP, MAP_OK, str(tmp_path / "mine.py")).reference_use == []


# --- nothing the file does reaches the judge ----------------------------------------------------------------


def test_the_file_cannot_touch_the_judging_process(tmp_path):
    marker = tmp_path / "marker"
    source = textwrap.dedent(f"""
        import gpusim, numpy, puzzles.checker
        puzzles.checker.MAX_STEPS = 1
        gpusim.launch = None
        numpy.isclose = None
        import os
        os.environ["GPU_PUZZLES_PTX"] = "boom"
        open({str(marker)!r}, "w").close()
    """) + MAP_OK
    result = check_source(MAP, source, str(tmp_path / "meddler.py"))
    assert result.passed, _messages(result)
    import gpusim
    import puzzles.checker

    assert callable(gpusim.launch) and callable(np.isclose) and puzzles.checker.MAX_STEPS > 1
    assert os.environ.get("GPU_PUZZLES_PTX") == "0"


def test_a_fake_verdict_on_stdout_is_not_the_verdict(tmp_path):
    cheat = WRONG / "map__cheat_prints_a_fake_verdict.py"
    env = dict(os.environ, GPU_PUZZLES_HOME=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "puzzles", "check", "map", "--file", str(cheat), "--json"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    doc = json.loads(proc.stdout)              # one document, ours: the file's print is inside "stdout"
    assert proc.returncode == 1 and doc["passed"] is False and doc["stars"] == 0
    assert '"passed": true' in doc["stdout"]
    assert "ended the process" in doc["failures"][0]["message"]


def test_a_base_exception_at_import_is_one_json_verdict(home, capsys):
    """It used to escape as a raw traceback with no JSON: now a failure like any other, with the line."""
    path = WRONG / "map__base_exception_at_import.py"
    assert main(["check", "map", "--file", str(path), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    failure = doc["failures"][0]
    assert doc["passed"] is False and doc["stars"] == 0 and failure["kind"] == "compile"
    assert "raised KeyboardInterrupt: leaving" in failure["message"]
    assert path.read_text().splitlines()[failure["line"] - 1].startswith("raise KeyboardInterrupt")


def test_a_file_that_kills_its_checker_only_kills_itself(tmp_path):
    source = "import os, signal\nos.kill(os.getppid(), 0)\nos.kill(os.getpid(), signal.SIGKILL)\n" + MAP_OK
    result = check_source(MAP, source, str(tmp_path / "killer.py"))
    assert "stopped by signal SIGKILL" in _messages(result)


# --- the warm worker ----------------------------------------------------------------------------------------


def test_the_worker_checks_like_check_source(judge):
    result = judge.check(MAP, MAP_OK, "/virtual/map.py", seed=3, trace=True)
    assert result.passed and result.seed == 3 and result.stars == result.max_stars
    assert result.cases[0].reports, "the TUI needs the launch reports"
    bad = judge.check(MAP, MAP_OK.replace("+ 10", "+ 1"), "/virtual/map.py", seed=3)
    local = check_source(MAP, MAP_OK.replace("+ 10", "+ 1"), "/virtual/map.py", seed=3)
    assert [f.message for f in bad.failures] == [f.message for f in local.failures]
    started = time.perf_counter()
    judge.check(MAP, MAP_OK, "/virtual/map.py")
    print(f"warm worker check of puzzle 1: {time.perf_counter() - started:.2f} s")


def test_the_worker_cancels_and_goes_on(judge):
    spin = "import time\ntime.sleep(60)\n" + MAP_OK
    threading.Timer(0.5, judge.cancel).start()
    started = time.perf_counter()
    result = judge.check(MAP, spin, "/virtual/spin.py")
    assert "cancelled" in _messages(result) and time.perf_counter() - started < 20
    assert judge.check(MAP, MAP_OK, "/virtual/map.py").passed


def test_a_worker_that_dies_mid_check_is_a_clean_failure_and_is_restarted(judge, tmp_path):
    assert judge.check(MAP, MAP_OK, "/virtual/map.py").passed
    lock = tmp_path / "held"
    threading.Timer(1.0, lambda: os.killpg(judge._proc.pid, 9)).start()
    started = time.monotonic()
    sleeper = (f"import fcntl, os, time\nfd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)\n"
               f"fcntl.flock(fd, fcntl.LOCK_EX)\ntime.sleep(30)\n")
    failed = judge.check(MAP, sleeper + MAP_OK, "/virtual/map.py")
    assert not failed.passed and "stopped unexpectedly" in _messages(failed)
    assert time.monotonic() - started < 15, "the app must hear of the death at once"
    assert _released(lock), "the file's process must die with its judge, not 30 s later"
    assert judge.check(MAP, MAP_OK, "/virtual/map.py").passed


def _released(lock: Path) -> bool:
    """True once no process holds ``lock`` (pids inside the sandbox's namespace mean nothing out here)."""
    import fcntl

    fd = os.open(lock, os.O_RDWR)
    try:
        for _ in range(100):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                time.sleep(0.05)
        return False
    finally:
        os.close(fd)


def test_the_worker_survives_the_cheats(judge):
    for name in ("map__cheat_patches_the_comparison.py", "map__cheat_prints_a_fake_verdict.py"):
        result = judge.check(MAP, (WRONG / name).read_text(), str(WRONG / name), seed=1)
        assert not result.passed and result.stars == 0
    assert judge.check(MAP, MAP_OK, "/virtual/map.py").passed


@pytest.mark.parametrize("name", ["map__cheat_patches_the_comparison.py", "map__cheat_swaps_the_spec.py"])
def test_in_process_the_cheats_would_have_worked(name, monkeypatch):
    """The patching cheats are real: run in the judging process itself (as the old loader did), they pass."""
    import puzzles.checker as checker

    cheat = (WRONG / name).read_text()
    namespace: dict = {}
    monkeypatch.setattr(checker, "_judge", checker._judge)      # restored after the test
    monkeypatch.setattr(checker, "first_mismatch", checker.first_mismatch)
    monkeypatch.setattr(checker, "changed_input", checker.changed_input)
    import puzzles.ch01_threads.p01_map as p01

    monkeypatch.setattr(p01, "spec", p01.spec)
    spec = MAP.spec
    try:
        exec(compile(cheat, name, "exec"), namespace)
        result = check_source(MAP, cheat, str(WRONG / name), seed=1)
    finally:
        object.__setattr__(MAP, "spec", spec)
    assert result.passed


# --- case strength (item 7) ---------------------------------------------------------------------------------

SEPARATING = [  # a slip every other case lets through, and the case added so that it no longer passes
    ("layernorm__eps_outside_sqrt.py", "layernorm", "small variance 3x64"),
    ("online_softmax__max_starts_at_zero.py", "online-softmax", "very negative 6x24"),
    ("cross_entropy__max_starts_at_zero.py", "cross-entropy", "very negative 4x40"),
    ("paged_attention__pads_the_max_with_zero.py", "paged-attention", "negative scores"),
]


@pytest.mark.parametrize("name, slug, case", SEPARATING, ids=[s[0] for s in SEPARATING])
def test_each_usual_slip_has_the_case_that_separates_it(name, slug, case):
    result = check_file(registry.get(slug), WRONG / name, seed=4)
    failed = {c.name for c in result.cases if c.status == "fail"}
    assert failed == {case}, f"{name}: failed in {sorted(failed)}"


@pytest.mark.skipif(not __import__("puzzles.judge.sandbox", fromlist=["x"]).pid_namespaces_work(),
                    reason="this system does not let a process make its own PID namespace")
def test_the_file_cannot_signal_the_judge(tmp_path):
    """In its own PID namespace the file sees no process of the judge: not its pid, not its parent's."""
    import signal

    received = []
    previous = signal.signal(signal.SIGUSR1, lambda *a: received.append(a))
    try:
        source = (f"import os, signal\nos.kill({os.getpid()}, signal.SIGUSR1)\n" + MAP_OK)
        result = check_source(MAP, source, str(tmp_path / "signaller.py"))
        parent = check_source(MAP, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n" + MAP_OK,
                              str(tmp_path / "parent.py"))
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert received == [] and "raised ProcessLookupError" in _messages(result)
    assert parent.passed, _messages(parent)     # its parent is the namespace's pid 1, which ignores the signal
