"""A warm judging process for the TUI: checks in well under a second, cancel at any time, never a hung app.

``JudgeWorker`` (used by the app) starts ``python -m puzzles.judge.worker`` once, in the background; that
process imports numba, gpusim and the puzzles and then waits. For each check it forks a fresh judging child
(which runs ``checker.check_source``, itself forking the sandbox that runs the player's file), so every check
starts from the same clean, warm state and nothing one check did is left for the next. ``cancel()`` kills
that child; if the worker itself dies, the check in flight ends with a clear failure and the next check
starts a new worker.

Between the app and the worker travel pickles, which is safe because both sides are this package's code: the
player's file runs only in the sandbox, whose output the judging child reads as plain data (``wire.py``).
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .sandbox import die_with_parent, kill_group

LENGTH = struct.Struct(">Q")
CHECK_TIME_LIMIT_S = 300.0     # a check still running after this is stopped (gpusim's own limits come first)
START_TIME_LIMIT_S = 120.0


# ------------------------------------------------------------------------------------------------- framing


def _send(stream: Any, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(LENGTH.pack(len(data)) + data)
    stream.flush()


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        try:
            data = os.read(fd, min(left, 1 << 20))
        except InterruptedError:
            continue
        if not data:
            return None
        chunks.append(data)
        left -= len(data)
    return b"".join(chunks)


def _receive(fd: int) -> Any:
    head = _read_exact(fd, LENGTH.size)
    if head is None:
        raise EOFError
    body = _read_exact(fd, LENGTH.unpack(head)[0])
    if body is None:
        raise EOFError
    return pickle.loads(body)


# ------------------------------------------------------------------------------------------ the app's side


class JudgeWorker:
    """The app's handle on the warm judging process. Thread-safe: ``check`` from a worker thread, ``cancel``
    from the UI thread."""

    def __init__(self, *, env: dict[str, str] | None = None):
        self._env = env
        self._proc: subprocess.Popen | None = None
        self._stderr: Any = None
        self._ready = False
        self._lock = threading.Lock()           # one check at a time
        self._write = threading.Lock()
        self._next_id = 0
        self._current: int | None = None

    def start(self) -> None:
        """Start the worker now (it warms up in the background); ``check`` starts it when needed."""
        with self._write:
            self._start()

    def _start(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen([sys.executable, "-m", "puzzles.judge.worker"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._stderr, env=self._env,
                                      start_new_session=True)
        self._ready = False

    def check(self, puzzle: Any, source: str, filename: str, *, seed: int | None = None, trace: bool = False,
              ptx: bool | None = None) -> Any:
        """``checker.check_source`` in the warm worker; always returns a ``CheckResult``."""
        with self._lock:
            with self._write:
                self._start()
                self._next_id += 1
                self._current = request = self._next_id
                proc = self._proc
            started = time.perf_counter()
            try:
                if not self._ready:
                    self._expect_ready(proc)
                with self._write:
                    _send(proc.stdin, ("check", request, puzzle.slug, source, filename, seed, trace, ptx))
                while True:
                    reply = _receive(proc.stdout.fileno())
                    if reply[0] == "result" and reply[1] == request:
                        break
            except (EOFError, OSError, pickle.UnpicklingError, ValueError) as e:
                self._stop(proc)
                return _failed(puzzle, filename, seed, f"the checking process stopped unexpectedly "
                               f"({type(e).__name__}{': ' + self._stderr_tail() if self._stderr_tail() else ''})")
            finally:
                self._current = None
            _, _, raw, problem = reply
            if raw is None:
                return _failed(puzzle, filename, seed, problem or "the check did not finish")
            try:
                result = pickle.loads(raw)
            except Exception as e:
                return _failed(puzzle, filename, seed, f"the check's result could not be read ({type(e).__name__})")
            result.seconds = time.perf_counter() - started
            return result

    def check_file(self, puzzle: Any, path: Any, *, seed: int | None = None, trace: bool = False,
                   ptx: bool | None = None) -> Any:
        """``check`` of the text of the file at ``path`` (read here, as ``checker.check_file`` reads it)."""
        from ..loader import read_source

        filename = str(os.path.abspath(os.path.expanduser(str(path))))
        try:
            source = read_source(Path(filename))
        except Exception as e:     # SolutionError or KernelSyntaxError: the file cannot be read as Python
            result = _failed(puzzle, filename, seed, str(e))
            result.failures[0].kind = "compile"
            result.failures[0].filename = filename
            return result
        return self.check(puzzle, source, filename, seed=seed, trace=trace, ptx=ptx)

    def _expect_ready(self, proc: subprocess.Popen) -> None:
        fd = proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], START_TIME_LIMIT_S)
        if not ready:
            raise OSError("it took too long to start")
        if _receive(fd) != ("ready",):
            raise OSError("it did not start properly")
        self._ready = True

    def cancel(self) -> None:
        """Stop the check in flight, if any (its ``check`` call returns a "cancelled" failure)."""
        with self._write:
            if self._current is None or self._proc is None or self._proc.poll() is not None:
                return
            try:
                _send(self._proc.stdin, ("cancel", self._current))
            except OSError:
                self._stop(self._proc)

    def close(self) -> None:
        """Stop the worker (the app calls this when it quits)."""
        with self._write:
            if self._proc is not None:
                try:
                    _send(self._proc.stdin, ("stop",))
                except OSError:
                    pass
                self._stop(self._proc)
                self._proc = None

    def _stop(self, proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._ready = False

    def _stderr_tail(self) -> str:
        try:
            self._stderr.seek(0)
            text = self._stderr.read()[-2000:].decode("utf-8", errors="replace").strip()
        except (OSError, ValueError, AttributeError):
            return ""
        return text.splitlines()[-1] if text else ""


_shared: JudgeWorker | None = None
_shared_lock = threading.Lock()


def shared_worker() -> JudgeWorker:
    """The process's one warm worker (started on first use, stopped when the process exits)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = JudgeWorker()
            _shared.start()
            atexit.register(_shared.close)
        return _shared


def _failed(puzzle: Any, filename: str, seed: int | None, message: str) -> Any:
    from ..checker import max_stars
    from ..results import CheckResult, Failure

    result = CheckResult(puzzle=puzzle.slug, number=puzzle.number, file=filename, max_stars=max_stars(puzzle),
                         seed=seed or 0)
    result.failures.append(Failure("error", message))
    result.next_star = "★ needs every test case to pass and every constraint to hold"
    return result


# ---------------------------------------------------------------------------------------- the worker's side


def main() -> int:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr                      # nothing but frames on the real stdout
    _warm_up()
    _send(stdout, ("ready",))
    fd = stdin.fileno()
    while True:
        try:
            message = _receive(fd)
        except EOFError:
            return 0
        if message[0] == "stop":
            return 0
        if message[0] == "check":
            _send(stdout, _run_check(fd, message))


def _warm_up() -> None:
    import numba.cuda  # noqa: F401

    import gpusim  # noqa: F401

    from .. import checker, registry  # noqa: F401
    from . import ptx

    puzzles = registry.all_puzzles()
    if os.environ.get(ptx.ENV, "").strip() != "0":
        ptx.available()
    # One real check, so that every check forked from here finds gpusim's lazy imports and caches (and
    # numba-cuda's compiler, where it is used) already warm: the first check in a process costs ~0.8 s more.
    from .. import workspace

    for puzzle in puzzles[:1]:
        path = workspace.reference_path(puzzle)
        if path.is_file():
            checker.check_file(puzzle, path, seed=0, trace=True)


def _run_check(control: int, message: tuple) -> tuple:
    _, request, slug, source, filename, seed, trace, want_ptx = message
    read_fd, write_fd = os.pipe()
    worker = os.getpid()
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            die_with_parent(worker)
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0)                # let go of the app's pipes: if the worker dies, the app sees
            os.dup2(devnull, 1)                # the end of its stream at once, not when this child ends
            os.close(read_fd)
            os.setpgid(0, 0)
            from .. import checker, registry

            result = checker.check_source(registry.get(slug), source, filename, seed=seed, trace=trace,
                                          ptx=want_ptx)
            data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_fd, "wb") as out:
                out.write(LENGTH.pack(len(data)) + data)
        except BaseException:  # noqa: B036 - the worker reports it as a failed check
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    deadline = time.monotonic() + CHECK_TIME_LIMIT_S
    data = bytearray()
    problem = None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                problem = f"the check took longer than {CHECK_TIME_LIMIT_S:g} s and was stopped"
                break
            ready, _, _ = select.select([read_fd, control], [], [], left)
            if control in ready:
                try:
                    other = _receive(control)
                except EOFError:
                    problem = "the app went away"
                    break
                if other[0] == "cancel" and other[1] == request:
                    problem = "the check was cancelled"
                    break
                if other[0] == "stop":
                    problem = "the checker was stopped"
                    break
            if read_fd in ready:
                chunk = os.read(read_fd, 1 << 20)
                if not chunk:
                    break
                data += chunk
    finally:
        os.close(read_fd)
        kill_group(pid)
    if problem is not None:
        return ("result", request, None, problem)
    if len(data) < LENGTH.size or len(data) != LENGTH.size + LENGTH.unpack_from(data)[0]:
        return ("result", request, None, "the judging process stopped before it finished (a bug in gpu-puzzles)")
    return ("result", request, bytes(data[LENGTH.size:]), None)   # the app unpickles it


if __name__ == "__main__":
    sys.exit(main())
