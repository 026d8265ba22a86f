"""The contract under fuzzing (issue 14): whatever a kernel, a launch or a solution file holds, gpusim ends with a
documented error (``KernelCompileError`` and subclasses, ``LaunchError``) or a result, faults and all — never
another exception, a hang or a crash; every resource-limit launch is refused in under a second and 500 MB.

Seeded and bounded: the same 150 kernels and 24 solution files every run (from benchmarks/fuzz/, which the
nightly ``python -m benchmarks.fuzz_nightly`` runs 10,000 of), each under a 20 s watchdog in a forked child.
A failure lists each distinct finding with its reproducer; tests/gpusim/data/fuzz_findings.md has those of the
last nightly run. Then the real ``python -m puzzles check`` process on generated files and on a file that calls
``os._exit(0)`` at import; the issue's resource-limit launches, each in a fresh process; and endless loops
from 1 to 2^24 threads, stopped by the step budget within 5 s of CPU time (the wall time of an idle machine).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from benchmarks.fuzz.generate import files, kernels
from benchmarks.fuzz.launches import resource_cases, runaway_cases
from benchmarks.fuzz.measure import measure
from benchmarks.fuzz.pool import Pool

pytestmark = pytest.mark.slow

KERNELS, FILES = 150, 24
HANG_SECONDS = 20.0
REFUSE_SECONDS, REFUSE_MB = 1.0, 500.0
RUNAWAY_SECONDS = 5.0
ISSUE_RESOURCES = ("grid of 2^31-1 blocks", "grid of (65536, 65536) blocks (past the y limit)",
                   "static shared array of 2^28 floats", "2^28 bytes of dynamic shared memory, used",
                   "local array of 10^8 floats at one thread", "a 2 MB kernel")


def _findings(cases) -> list[str]:
    seen: dict[str, list] = {}
    with Pool(workers=2, timeout=HANG_SECONDS) as pool:
        for case, outcome in pool.run(cases):
            if outcome.finding:
                seen.setdefault(outcome.signature if outcome.label != "hang" else f"hang [{case.family}]",
                                []).append((case, outcome))
    report = []
    for key, items in seen.items():
        case, outcome = items[0]
        report.append(f"{len(items)} x {key}: {outcome.detail[:120]}\n--- reproducer ({case.family} seed "
                      f"{case.seed}) ---\n{case.reproducer()[-1500:]}")
    return report


def test_generated_kernels_and_launches_end_cleanly():
    found = _findings(kernels(KERNELS))
    assert not found, f"{len(found)} distinct findings:\n\n" + "\n\n".join(found)


def test_generated_solution_files_end_cleanly_through_the_cli():
    found = _findings(files(FILES))
    assert not found, f"{len(found)} distinct findings:\n\n" + "\n\n".join(found)


@pytest.mark.parametrize("seed", [3, 11, 14])
def test_solution_files_through_the_installed_command(tmp_path, seed):
    """The real `gpu-puzzles check N --file` process: a message and status 0, 1 or 2, never a traceback."""
    case = files(seed + 1)[seed]
    path = tmp_path / "solution.py"
    path.write_bytes(case.file_bytes)
    env = dict(os.environ, GPU_PUZZLES_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, "-m", "puzzles", "check", str(case.puzzle), "--file", str(path)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode in (0, 1, 2) and proc.stdout.strip(), (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-2000:]


def test_a_file_that_exits_at_import_fails_with_a_message_through_the_installed_command(tmp_path):
    """``os._exit(0)`` at import used to end the CLI silently with status 0, which a script reads as a pass."""
    from puzzles import registry, workspace

    path = tmp_path / "exits.py"
    path.write_text(workspace.reference_path(registry.get(1)).read_text() + "\nimport os\nos._exit(0)\n")
    env = dict(os.environ, GPU_PUZZLES_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, "-m", "puzzles", "check", "1", "--file", str(path)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 1 and "ended the process while it ran" in proc.stdout, (proc.stdout, proc.stderr)
    assert "PASS" not in proc.stdout and "Traceback" not in proc.stderr


RESOURCES = {c.tags[0]: c for c in resource_cases(huge_source_mb=2.0)}


@pytest.mark.parametrize("name", ISSUE_RESOURCES)
def test_resource_limit_launches_are_refused_fast_and_small(name):
    m = measure(RESOURCES[name], timeout=120)   # the launch is timed; Python importing 2 MB of source is not
    assert m.refused_within(REFUSE_SECONDS, REFUSE_MB), m.line()


@pytest.mark.parametrize("case", runaway_cases(), ids=lambda c: c.tags[0])
def test_runaway_loops_stop_within_seconds(case):
    m = measure(case, timeout=60)
    # CPU time: what the step budget bounds, and the wall time on an idle machine (CI's is not always)
    assert m.label == "fault:KernelTimeout" and m.cpu_seconds < RUNAWAY_SECONDS, m.line()
