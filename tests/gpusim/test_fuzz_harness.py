"""The fuzzer itself (benchmarks/fuzz/): generation is deterministic and covers its families, outcomes are named
right, the watchdog turns a hang and a crash into findings, and the reducer keeps a finding while it shrinks.

These pass whatever gpusim does; the strict contract over generated cases is tests/gpusim/test_fuzz.py.
"""

from __future__ import annotations

import ast
import collections
import random

import pytest

from benchmarks.fuzz.cases import Case, make_args
from benchmarks.fuzz.execute import Outcome, run_case
from benchmarks.fuzz.generate import WEIGHTS, generate, generate_file
from benchmarks.fuzz.kernels import valid_kernel
from benchmarks.fuzz.launches import resource_cases, runaway_cases
from benchmarks.fuzz.pool import Pool
from benchmarks.fuzz.reduce import reduce_case

ARGS = (("array", "float32", (4,), "c"),)


def test_a_seed_gives_the_same_case_every_time():
    assert generate(1234) == generate(1234) and generate(1234) != generate(1235)
    assert generate_file(7) == generate_file(7)


def test_the_stream_covers_every_family_in_about_its_share():
    families = collections.Counter(generate(seed).family for seed in range(600))
    assert set(families) == set(WEIGHTS)
    total = sum(WEIGHTS.values())
    for family, weight in WEIGHTS.items():
        assert abs(families[family] / 600 - weight / total) < 0.06, (family, families[family])


def test_valid_kernels_are_python_and_use_what_they_claim():
    seen = collections.Counter()
    for seed in range(150):
        source, launch = valid_kernel(random.Random(seed))
        ast.parse(source)                                   # always valid Python
        for construct in ("while ", "for ", "if ", "cuda.atomic.", "cuda.syncthreads()", "cuda.shared.array",
                          "cuda.local.array", "_sync(", "@cuda.jit(device=True)", "math.", " else ", "return"):
            seen[construct] += construct in source
        make_args(launch["args"])
    assert all(n >= 10 for n in seen.values()), seen


def test_solution_files_come_in_every_family():
    families = collections.Counter(generate_file(seed).family for seed in range(120))
    assert set(families) == {"file-mutant", "file-bytes", "file-module", "file-swapped"}


def test_the_resource_cases_are_the_ones_the_issue_names():
    names = " | ".join(c.tags[0] for c in resource_cases(1.0) + runaway_cases())
    for part in ("2^31-1 blocks", "(65536, 65536)", "2^28 floats", "2^28 bytes of dynamic", "10^8 floats",
                 "1 MB kernel", "divergent loop, 2 x 1024"):
        assert part in names


def _kernel(body: str, **launch) -> Case:
    lines = "\n".join("    " + line for line in body.split("\n"))
    source = f"from numba import cuda\n\n\n@cuda.jit\ndef kern(out):\n{lines}\n"
    return Case("kernel", "test", 0, source=source, args=ARGS, **{"block": 1, **launch})


@pytest.mark.parametrize(("body", "launch", "label"), [
    ("out[0] = 1.0", {}, "ok"),
    ("out[5] = 1.0", {}, "fault:OutOfBounds"),
    ("out[0] = [1][0]", {}, "compile:UnsupportedConstruct"),
    ("out[0] = 1.0", {"block": 0}, "launch:LaunchError"),
])
def test_outcomes_are_named_by_what_gpusim_did(tmp_path, body, launch, label):
    assert run_case(_kernel(body, **launch), tmp_path).label == label


def test_an_internal_error_is_a_finding_with_its_place(tmp_path, monkeypatch):
    import sys

    def broken(*args, **kwargs):
        return {}["no such key"]

    monkeypatch.setattr(sys.modules["gpusim.limits"], "dims", broken)
    outcome = run_case(_kernel("out[0] = 1.0"), tmp_path)
    assert outcome.label == "internal:KeyError" and outcome.finding
    assert outcome.where.startswith("gpusim/launch.py:") and outcome.where.endswith(" in launch")


def test_python_refusing_the_module_is_not_gpusim_s_finding(tmp_path):
    outcome = run_case(Case("kernel", "test", 0, source="def kern(out):\n  return (", args=ARGS), tmp_path)
    assert outcome.label == "python-rejects:SyntaxError" and not outcome.finding


@pytest.mark.slow
def test_the_watchdog_reports_hangs_and_crashes_and_goes_on():
    hang = Case("kernel", "test", 1, source="import time\ntime.sleep(600)\n", args=ARGS)
    crash = Case("kernel", "test", 2, source="import os\nos._exit(3)\n", args=ARGS)
    fine = _kernel("out[0] = 1.0")
    with Pool(workers=1, timeout=3) as pool:
        got = {case.seed: outcome for case, outcome in pool.run([hang, crash, fine])}
    assert got[1].label == "hang" and "fuzz_kernel_" in got[1].trace     # the stack of the stuck child
    assert got[2].label == "crash:exit3" and got[0].label == "ok"


def test_the_reducer_keeps_the_finding_and_drops_the_rest():
    source = "\n".join(["from numba import cuda", "", "", "@cuda.jit", "def kern(out):", "    t = 1",
                        "    if t > 0:", "        t = 2", "    x = 1.0", "    out[0] = x"])
    case = Case("kernel", "test", 0, source=source, grid=4, block=32, args=ARGS)

    def fake_run(batch):                                    # the "bug": any kernel that still sets x = 1.0
        return [Outcome("internal:Boom", where="gpusim/x.py:1 in f") if "x = 1.0" in c.source else Outcome("ok")
                for c in batch]

    small, trials = reduce_case(case, fake_run([case])[0], fake_run)
    assert "x = 1.0" in small.source and "t = 2" not in small.source and "if t" not in small.source
    assert (small.grid, small.block) == (1, 1) and trials > 0


def test_a_reproducer_runs_the_case_on_its_own(tmp_path):
    import subprocess
    import sys

    case = generate(3, "launch").with_(grid=(1.5,))
    path = tmp_path / "repro.py"
    path.write_text(case.reproducer())
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert "LaunchError" in out.stderr                      # the same outcome as in the fuzzer
    assert run_case(case, tmp_path).label == "launch:LaunchError"
