"""CPU jobs beside the GPU's work: the simulator's estimates and the spec checks of large outputs.

Each job is its own process (``python3 -m puzzles.graduate.jobs ARGS RESULT``), so a job that runs out of
memory or is cut off at the deadline takes nothing else with it, and can be killed. Jobs start while there
is a free core *and* their predicted memory fits what is left of the budget (a share of the memory that was
available when the pool started): gpusim holds about 30 bytes for each byte of the case's buffers, so at
2^26 elements a job needs 10-20 GB and fewer run at once than there are cores. Waiting jobs start in order
of priority, then shortest predicted time first: under a deadline, that finishes the most jobs (the few
longest are the ones cut off, and the cache keeps whatever did finish for the next run).

A background thread does the scheduling, so the caller can block on the GPU meanwhile.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MEMORY_SHARE = 0.75          # of MemAvailable at start
RESERVE_BYTES = 6 << 30      # kept free for the GPU worker, the ncu child and the system


@dataclass
class Job:
    kind: str                    # "estimate" or "verify"
    args: dict[str, Any]
    memory: int                  # predicted peak bytes
    priority: int = 1            # lower starts first
    cost: float = 0.0            # predicted seconds: among equal priorities, shorter starts first
    tag: Any = None              # the caller's
    result: dict | None = None   # {"ok": True, "result": ...} or {"ok": False, "error": ...}
    seconds: float = 0.0
    _proc: subprocess.Popen | None = field(default=None, repr=False)
    _started: float = 0.0
    _paths: tuple[Path, Path, Path] | None = field(default=None, repr=False)


class Pool:
    def __init__(self, max_jobs: int | None = None, memory_budget: int | None = None, workdir: Path | None = None):
        cores = os.cpu_count() or 2
        self.max_jobs = max(1, max_jobs if max_jobs else cores - 3)
        self.memory_budget = memory_budget if memory_budget is not None else default_memory_budget()
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="graduate-jobs-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._waiting: list[Job] = []
        self._running: list[Job] = []
        self._done: list[Job] = []
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="graduate-pool", daemon=True)
        self._thread.start()

    def submit(self, job: Job) -> Job:
        with self._lock:
            self._waiting.append(job)
        return job

    def take_done(self) -> list[Job]:
        """Finished jobs since the last call."""
        with self._lock:
            done, self._done = self._done, []
        return done

    def pending(self) -> int:
        with self._lock:
            return len(self._waiting) + len(self._running)

    def wait(self, deadline: float) -> bool:
        """Wait until every job has finished or ``time.monotonic()`` passes ``deadline``; True if all did."""
        while time.monotonic() < deadline:
            if self.pending() == 0:
                return True
            time.sleep(0.2)
        return self.pending() == 0

    def close(self, reason: str = "cut off at the deadline") -> list[Job]:
        """Stop: kill running jobs, drop waiting ones; return them all with an error result."""
        self._stop.set()
        self._thread.join(timeout=5)
        with self._lock:
            cut = self._running + self._waiting
            self._running, self._waiting = [], []
        for job in cut:
            if job._proc is not None and job._proc.poll() is None:
                job._proc.kill()
                job._proc.wait(timeout=10)
            job.result = {"ok": False, "error": reason}
        return cut

    # -- the scheduler thread
    def _loop(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                self._reap()
                self._start_some()
            time.sleep(0.1)

    def _reap(self) -> None:
        still = []
        for job in self._running:
            if job._proc.poll() is None:
                still.append(job)
                continue
            job.seconds = time.monotonic() - job._started
            job.result = _read_result(job)
            self._done.append(job)
        self._running = still

    def _start_some(self) -> None:
        self._waiting.sort(key=lambda j: (j.priority, j.cost))
        used = sum(j.memory for j in self._running)
        for job in list(self._waiting):
            if len(self._running) >= self.max_jobs:
                return
            if job.memory > self.memory_budget:   # it would not fit even alone: say so, do not risk the machine
                self._waiting.remove(job)
                job.result = {"ok": False, "error": f"needs about {job.memory / 2**30:.0f} GiB, more than the "
                              f"{self.memory_budget / 2**30:.0f} GiB this machine can give it"}
                self._done.append(job)
                continue
            if used + job.memory > self.memory_budget:
                continue                          # a smaller job further down may still fit
            self._waiting.remove(job)
            self._launch(job)
            self._running.append(job)
            used += job.memory

    def _launch(self, job: Job) -> None:
        n = next(self._ids)
        args, result, log = (self.workdir / f"job{n}.{suffix}" for suffix in ("args.json", "result.json", "log"))
        args.write_text(json.dumps({"kind": job.kind, **job.args}), encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        with open(log, "wb") as out:
            job._proc = subprocess.Popen([sys.executable, "-m", "puzzles.graduate.jobs", str(args), str(result)],
                                         cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        job._paths = (args, result, log)
        job._started = time.monotonic()


def _read_result(job: Job) -> dict:
    _, result, log = job._paths
    try:
        return json.loads(result.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        code = job._proc.returncode
        why = "killed (out of memory?)" if code is not None and code < 0 else f"exit status {code}"
        tail = ""
        try:
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1][:200]
        except (OSError, IndexError):
            pass
        return {"ok": False, "error": f"the job died ({why})" + (f": {tail}" if tail else "")}


def default_memory_budget() -> int:
    """``MEMORY_SHARE`` of the memory available now, less ``RESERVE_BYTES`` (at least 1 GiB)."""
    available = _mem_available()
    return max(1 << 30, int(available * MEMORY_SHARE) - RESERVE_BYTES)


def _mem_available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30
