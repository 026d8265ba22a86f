"""Run fuzz cases under a watchdog: worker processes that fork a child per case.

``Pool(workers, timeout, memory_mb)`` starts ``workers`` server processes (``python -m benchmarks.fuzz.pool``),
each importing gpusim, numba and the puzzles once. For every case a server forks a child, which limits its
address space to ``memory_mb`` (so a case that allocates gigabytes gets a ``MemoryError`` instead of taking
the machine), sends its output to /dev/null and runs ``execute.run_case``. A child that has not answered
after ``timeout`` seconds is a **hang**: the server asks it for its Python stack (``faulthandler`` on
SIGUSR1), which becomes the finding's location, and kills it. A child that dies without answering is a
**crash** (a signal, or a player's file calling ``os._exit``). A fresh child per case also keeps whatever
a player's file does to the process (``sys.setrecursionlimit``, NumPy's error state) out of the next case.
"""

from __future__ import annotations

import os
import pickle
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from .cases import Case
from .execute import Outcome, _where_in_text

ROOT = Path(__file__).resolve().parents[2]
HEAD = struct.Struct(">I")


def _send(stream, obj) -> None:
    data = pickle.dumps(obj)
    stream.write(HEAD.pack(len(data)) + data)
    stream.flush()


def _receive(stream):
    head = stream.read(HEAD.size)
    if len(head) < HEAD.size:
        raise EOFError
    (size,) = HEAD.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class Pool:
    """Servers that run cases; ``run(cases)`` yields ``(case, outcome)`` as they finish (not in order)."""

    def __init__(self, workers: int = 1, timeout: float = 60.0, memory_mb: int = 2500):
        self.timeout, self.memory_mb = timeout, memory_mb
        self.servers = [self._start() for _ in range(max(1, workers))]

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
        return subprocess.Popen([sys.executable, "-m", "benchmarks.fuzz.pool", str(self.timeout),
                                 str(self.memory_mb)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                cwd=ROOT)

    def run(self, cases: Iterable[Case]) -> Iterator[tuple[Case, Outcome]]:
        pending = iter(cases)
        busy: dict[int, tuple[Case, float]] = {}           # server index -> (case, sent at)
        done = False
        while True:
            for k, server in enumerate(self.servers):
                if k not in busy and not done:
                    case = next(pending, None)
                    if case is None:
                        done = True
                        break
                    _send(server.stdin, case)
                    busy[k] = (case, time.monotonic())
            if not busy:
                return
            streams = {self.servers[k].stdout: k for k in busy}
            ready, _, _ = select.select(list(streams), [], [], 1.0)
            for stream in ready:
                k = streams[stream]
                case, _ = busy.pop(k)
                try:
                    outcome = _receive(stream)
                except (EOFError, pickle.UnpicklingError, OSError):
                    outcome = Outcome("crash:server", "the fuzz server died")
                    self._restart(k)
                yield case, outcome
            for k, (case, sent) in list(busy.items()):     # the server itself stuck: a last resort
                if time.monotonic() - sent > self.timeout + 60:
                    busy.pop(k)
                    self._restart(k)
                    yield case, Outcome("hang", "the fuzz server stopped answering")

    def _restart(self, k: int) -> None:
        old = self.servers[k]
        old.kill()
        old.wait()
        self.servers[k] = self._start()

    def close(self) -> None:
        for server in self.servers:
            try:
                server.stdin.close()
            except OSError:
                pass
            server.wait(timeout=30)

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# the server ------------------------------------------------------------------------------------------------------

def _serve(timeout: float, memory_mb: int) -> None:
    import numba.cuda  # noqa: F401

    import gpusim  # noqa: F401  (imported once, shared by every child)
    from puzzles import cli, registry  # noqa: F401

    _warm_up()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr                 # nothing but results on the protocol's stream
    workdir = Path(tempfile.mkdtemp(prefix="fuzz-server-"))
    try:
        while True:
            try:
                case = _receive(stdin)
            except EOFError:
                return
            _send(stdout, _run_forked(case, timeout, memory_mb, workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _warm_up() -> None:
    """Run a kernel and check a file once, so that what they import lazily is there before every fork."""
    from .execute import run_case
    from .generate import generate, generate_file

    workdir = Path(tempfile.mkdtemp(prefix="fuzz-warm-"))
    saved = sys.stdout, sys.stderr
    try:
        for case in (generate(1, "valid"), generate_file(0)):
            run_case(case, workdir)
    finally:
        sys.stdout, sys.stderr = saved
        shutil.rmtree(workdir, ignore_errors=True)


def _run_forked(case: Case, timeout: float, memory_mb: int, workdir: Path) -> Outcome:
    import resource

    read_end, write_end = os.pipe()
    dump = workdir / "stack.txt"
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:                                                    # the child
        os.close(read_end)
        try:
            import faulthandler

            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            stack = open(dump, "w")
            faulthandler.register(signal.SIGUSR1, file=stack, all_threads=True)
            faulthandler.enable(file=stack)
            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            from .execute import run_case

            case_dir = workdir / f"case{os.getpid()}"
            case_dir.mkdir(exist_ok=True)
            outcome = run_case(case, case_dir)
            data = pickle.dumps(outcome)
            with os.fdopen(write_end, "wb") as f:
                f.write(data)
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    deadline = time.monotonic() + timeout
    hung = False
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                hung = True
                break
            ready, _, _ = select.select([pipe], [], [], left)
            if ready:
                chunk = os.read(pipe.fileno(), 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    seconds = time.perf_counter() - started
    if hung:
        os.kill(pid, signal.SIGUSR1)
        time.sleep(1.0)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        shutil.rmtree(workdir / f"case{pid}", ignore_errors=True)
        stack = dump.read_text(errors="replace") if dump.exists() else ""
        return Outcome("hang", f"no answer after {timeout:g} s", where=_where_in_text(_innermost(stack)),
                       seconds=seconds, trace=stack[-6000:])
    _, status = os.waitpid(pid, 0)
    shutil.rmtree(workdir / f"case{pid}", ignore_errors=True)
    if chunks:
        try:
            return pickle.loads(b"".join(chunks))
        except Exception:  # pragma: no cover
            pass
    stack = dump.read_text(errors="replace") if dump.exists() else ""
    if os.WIFSIGNALED(status):
        how = signal.Signals(os.WTERMSIG(status)).name
    else:
        how = f"exit{os.WEXITSTATUS(status)}"
    return Outcome(f"crash:{how}", "the case's process died without an answer",
                   where=_where_in_text(_innermost(stack)), seconds=seconds, trace=stack[-6000:])


def _innermost(stack: str) -> str:
    """faulthandler prints the innermost frame first; turn its lines into traceback order for parsing."""
    frames = []
    for line in stack.splitlines():
        line = line.strip()
        if line.startswith('File "') and ", line " in line:
            filename, rest = line[6:].split('", line ', 1)
            lineno, _, func = rest.partition(" in ")
            frames.append(f'File "{filename}", line {lineno.strip()}, in {func.strip()}')
        elif frames and line.startswith(("Thread", "Current thread")):
            break
    return "\n".join(reversed(frames))


if __name__ == "__main__":
    _serve(float(sys.argv[1]), int(sys.argv[2]))
