"""Time and memory of one case in a fresh process: ``measure(case)``, for the resource-limit targets.

The child imports gpusim and the kernel's module, then times the launch (wall and CPU seconds) and reads its
own peak resident set (VmHWM) before, and after the launch (for a kernel case, the peak is started again as the
launch begins and what the launch added is put on top of the baseline: what CPython needs to compile the
module, and keeps, is not the launch's). Its address space is capped at
``memory_mb`` so that a case that would take gigabytes fails fast (as a ``MemoryError``: an internal error)
instead of taking the machine; ``timeout`` ends a child that does not finish (``hang``).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .cases import Case

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, pickle, resource, sys
limit = int(sys.argv[2]) * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import gpusim, numba.cuda
from benchmarks.fuzz.execute import run_case
case = pickle.load(open(sys.argv[1], "rb"))


def peak_mb():
    # this process's own high-water mark (VmHWM): ru_maxrss would also carry the peak of the process that
    # started this one (Linux keeps it across fork and exec), e.g. a test runner's 500 MB
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


before = peak_mb()
outcome = run_case(case)
seconds = outcome.launch_seconds
peak = peak_mb()
if outcome.launch_start_mb >= 0:     # a kernel case: the launch's own growth, on top of Python, numba, gpusim
    peak = before + max(0.0, peak - outcome.launch_start_mb)
print("RESULT " + json.dumps({"label": outcome.label, "detail": outcome.detail, "where": outcome.where,
                              "seconds": seconds, "cpu_seconds": outcome.launch_cpu_seconds,
                              "baseline_mb": before, "peak_mb": peak}))
"""


@dataclass
class Measured:
    name: str
    label: str
    detail: str
    where: str
    seconds: float           # gpusim.launch (compiling and running), not Python importing the module
    cpu_seconds: float       # the same in CPU time: what it takes on an idle machine, whatever the load
    baseline_mb: float       # peak RSS before the launch (Python, numba, gpusim)
    peak_mb: float           # a kernel case: baseline + what the launch added at its peak (the module is
                             # compiled by Python before, and not counted, as in the time); a file: the process

    def refused_within(self, seconds: float, megabytes: float) -> bool:
        """A documented error or a fault (not a MemoryError caught as one), in CPU time and memory: CPU time is
        what the refusal costs whatever else the machine runs (a loaded CI machine doubles the wall time)."""
        documented = self.label.startswith(("compile:", "launch:", "fault:")) and "MemoryError" not in self.detail
        return documented and self.cpu_seconds < seconds and self.peak_mb < megabytes

    def line(self) -> str:
        return (f"{self.name:<52} {self.label:<34} {self.seconds:>6.2f} s ({self.cpu_seconds:>5.2f} s CPU) "
                f"{self.peak_mb:>5.0f} MB  {self.detail[:80]}")


def measure(case: Case, timeout: float = 60.0, memory_mb: int = 2500) -> Measured:
    name = case.tags[0] if case.tags else f"{case.family} {case.seed}"
    with tempfile.TemporaryDirectory(prefix="fuzz-measure-") as tmp:
        path = Path(tmp) / "case.pickle"
        path.write_bytes(pickle.dumps(case))
        env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
        try:
            proc = subprocess.run([sys.executable, "-c", CHILD, str(path), str(memory_mb)], cwd=tmp, env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Measured(name, "hang", f"no answer after {timeout:g} s", "", timeout, timeout, 0.0, 0.0)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            doc = json.loads(line[7:])
            return Measured(name, doc["label"], doc["detail"], doc["where"], doc["seconds"], doc["cpu_seconds"],
                            doc["baseline_mb"], doc["peak_mb"])
    tail = (proc.stderr.strip().splitlines() or [""])[-1]
    return Measured(name, f"crash:exit{proc.returncode}", tail[:200], "", 0.0, 0.0, 0.0, 0.0)
