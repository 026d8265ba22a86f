"""Running a player's file in a child process, and nothing else there.

``run_module`` forks a child that executes the file's module-level code — its imports, its constants, its
decorators — under a time limit, with its output captured, and sends back only *descriptions* of the values
the module ends with (numbers, tuples of numbers, numeric NumPy arrays, dtypes, which names are modules or
objects of numba, NumPy and math, and for each function how it was decorated). The kernels themselves are
rebuilt by the judge from the file's source (``rebuild.py``), so nothing the file does while it runs — patch
the checker, swap a spec, silence the race tracker, print a fake verdict, exit, kill itself — reaches the
process that makes the inputs, runs the simulator and judges.

Inside the child ``numba.cuda.jit`` is replaced by a recorder: decorating compiles nothing (so an eager
signature needs no GPU) and the judge learns the decorator's arguments. An audit hook reports at once any
import of ``solutions`` or any opening of a file under ``solutions/``: using the reference is revealing it.
Regular files cannot be written (``RLIMIT_FSIZE`` 0), the address space is capped, and where Linux allows it
the file runs in a PID namespace of its own, where no process of the judge has a pid it could signal. (It is
a process boundary, not an OS sandbox: a file can still delete or rename files its user may delete.)

Every way the child can end — a clean finish, an exception of any kind, ``sys.exit``, ``os._exit``, a signal,
a time-out, malformed frames — becomes a field of ``SandboxReport``; this module raises nothing the file
caused.
"""

from __future__ import annotations

import os
import select
import signal
import struct
import sys
import time
import traceback
import types
from dataclasses import dataclass, field
from typing import Any

from . import wire

IMPORT_TIME_LIMIT_S = 30.0      # module-level code that runs longer than this is stopped
KILL_GRACE_S = 2.0              # after the limit, the child has this long to say so itself before SIGKILL
MAX_STDOUT_BYTES = 64 * 1024    # what the file prints at import that is kept
MAX_ARRAY_BYTES = 64 * 1024 * 1024
ADDRESS_SPACE_HEADROOM = 4 << 30
# Modules whose objects a kernel may name; the judge resolves references into these in its own process.
REFERENCE_MODULES = ("numba.cuda", "numba", "numba.cuda.libdevice", "numba.types", "math", "numpy")


@dataclass
class SandboxReport:
    """What the child sent and how it ended."""

    values: dict[str, Any] = field(default_factory=dict)    # name -> JSON description (see ``describe``)
    arrays: list[bytes] = field(default_factory=list)
    error: dict[str, Any] | None = None     # the file raised: {"type", "message", "line", "timeout"}
    events: list[dict[str, Any]] = field(default_factory=list)
    stdout: str = ""
    ended: str = ""                         # why the child ended without finishing, for the player
    protocol: str = ""                      # malformed frames, for the player and bug reports
    done: bool = False                      # the child sent everything and said so


# ------------------------------------------------------------------------------------------- the parent


def run_module(source: str, filename: str, module_name: str, *, time_limit: float | None = None,
               solutions_dir: str = "") -> SandboxReport:
    """Run ``source`` as a module named ``module_name`` in a child process; describe what it left."""
    limit = IMPORT_TIME_LIMIT_S if time_limit is None else time_limit
    if "numba" in source:
        _preload_numba()
    report = SandboxReport()
    msg_r, msg_w = os.pipe()
    out_r, out_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:   # the child: never returns
        try:
            die_with_parent(parent)
            os.close(msg_r)
            os.close(out_r)
            _into_own_pid_namespace(msg_w, out_w)
            _child(source, filename, module_name, msg_w, out_w, limit, solutions_dir)
        finally:
            os._exit(70)
    os.close(msg_w)
    os.close(out_w)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    try:
        _collect(pid, msg_r, out_r, limit, report)
    finally:
        for fd in (msg_r, out_r):
            try:
                os.close(fd)
            except OSError:
                pass
        kill_group(pid)
    return report


def _collect(pid: int, msg_r: int, out_r: int, limit: float, report: SandboxReport) -> None:
    reader = wire.FrameReader()
    stdout = bytearray()
    open_fds = {msg_r, out_r}
    deadline = time.monotonic() + limit + KILL_GRACE_S
    status = None
    while open_fds:
        now = time.monotonic()
        if now >= deadline:
            break
        try:
            ready, _, _ = select.select(list(open_fds), [], [], min(0.1, deadline - now))
        except InterruptedError:
            continue
        for fd in ready:
            try:
                data = os.read(fd, 1 << 16)
            except OSError:
                data = b""
            if not data:
                open_fds.discard(fd)
                continue
            if fd == out_r:
                if len(stdout) < MAX_STDOUT_BYTES:
                    stdout += data[:MAX_STDOUT_BYTES - len(stdout)]
                continue
            if report.protocol or report.done:
                continue
            try:
                for kind, payload in reader.feed(data):
                    _take(kind, payload, report)
            except wire.WireError as e:
                report.protocol = str(e)
        if status is None:
            status = _poll(pid)
            if status is not None:          # the child is gone: whatever it left in the pipes comes now
                deadline = min(deadline, time.monotonic() + 0.5)
    settle = min(deadline, time.monotonic() + 1.0)
    while status is None and time.monotonic() < settle:     # the pipes close just before the exit is seen
        status = _poll(pid)
        if status is None:
            time.sleep(0.005)
    text = stdout.decode("utf-8", errors="replace")
    if len(stdout) >= MAX_STDOUT_BYTES:
        text += "\n[... more output was cut]"
    report.stdout = text
    if report.done or report.protocol:
        return
    if status is None and not open_fds:
        report.ended = "closed its connection to the checker and kept running (it never said what it defines)"
    elif status is None:
        report.ended = (f"took too long (more than {limit:g} s: an endless loop at module level, or a call "
                        f"that never returns?)")
    elif os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        report.ended = f"was stopped by signal {name} while it ran"
    else:
        code = os.WEXITSTATUS(status)
        report.ended = f"ended the process while it ran (exit status {code}: os._exit or a crash)"


def _take(kind: bytes, payload: bytes, report: SandboxReport) -> None:
    if kind == wire.EVENT:
        event = wire.load_json(payload)
        if isinstance(event, dict) and len(report.events) < 100:
            report.events.append(event)
    elif kind == wire.VALUES:
        doc = wire.load_json(payload)
        if not isinstance(doc, dict):
            raise wire.WireError("the values frame is not an object")
        if isinstance(doc.get("error"), dict):
            report.error = doc["error"]
        values = doc.get("values", {})
        if not isinstance(values, dict):
            raise wire.WireError("the values are not an object")
        report.values = values
    elif kind == wire.ARRAY:
        report.arrays.append(payload)
    elif kind == wire.DONE:
        report.done = True


def _poll(pid: int) -> int | None:
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return 0
    return status if done else None


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads (and ``pid`` itself, if it left it), then reap ``pid``."""
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except OSError:
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def die_with_parent(parent: int | None) -> None:
    """In a forked child: be killed when ``parent`` dies (Linux), so no child outlives its judge. (None: the
    parent is outside this PID namespace, where its pid cannot be seen.)"""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)          # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if parent is not None and os.getppid() != parent:      # the parent died before the line above
        os._exit(70)


CLONE_NEWUSER, CLONE_NEWPID = 0x10000000, 0x20000000
STATUS = struct.Struct(">i")


def _into_own_pid_namespace(*pipes: int) -> None:
    """Go on in a new PID namespace, where no process of the judge has a pid the file could signal.

    Where Linux allows it (``unshare``; a user namespace too when not root), this process stays outside as
    the judge's child and ends exactly as the file's process ends; its child is pid 1 of the namespace, a
    reaper whose end takes every process the file started with it; the reaper's child, pid 2, returns from
    here and runs the file. Where namespaces are not available, this returns at once and the file runs here.
    Only the runner keeps ``pipes`` (the judge's), so the judge sees them close when the file's process does.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWPID | (0 if os.geteuid() == 0 else CLONE_NEWUSER)) != 0:
            return
    except (OSError, AttributeError):
        return
    status_r, status_w = os.pipe()
    reaper = os.fork()
    if reaper != 0:                       # outside the namespace: end as the file's process ended
        _close(status_w, *pipes)
        _, own = os.waitpid(reaper, 0)
        data = os.read(status_r, STATUS.size)
        _end_as(STATUS.unpack(data)[0] if len(data) == STATUS.size else own)
    os.close(status_r)
    die_with_parent(None)
    runner = os.fork()
    if runner == 0:                       # pid 2: runs the file
        os.close(status_w)
        die_with_parent(1)
        return
    _close(*pipes)
    while True:                           # pid 1: reap everything, report the runner's end, and go
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(71)
        if done == runner:
            os.write(status_w, STATUS.pack(status))
            os._exit(0)


def _close(*fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _end_as(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):      # SIGKILL and SIGSTOP have no handler to reset
            pass
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 71)


def pid_namespaces_work() -> bool:
    """Whether the file runs in its own PID namespace here (for tests and reports)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            _into_own_pid_namespace()
            os.write(write_fd, b"1" if os.getpid() == 2 else b"0")
        finally:
            os._exit(0)
    os.close(write_fd)
    answer = os.read(read_fd, 1)
    os.close(read_fd)
    os.waitpid(pid, 0)
    return answer == b"1"


def _preload_numba() -> None:
    """Import numba.cuda before forking (it takes a second), so every child starts with it loaded."""
    try:
        import numba.cuda  # noqa: F401
    except Exception:   # the child will report the import error against the player's own line
        pass


# -------------------------------------------------------------------------------------------- the child


def _child(source: str, filename: str, module_name: str, msg_fd: int, out_fd: int, limit: float,
           solutions_dir: str) -> None:
    write = os.write

    def send(data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[write(msg_fd, view):]
            except InterruptedError:
                continue

    _isolate(out_fd)
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:     # the judge parsed it already; this is only for safety
        send(wire.json_frame(wire.VALUES, {"error": {"type": type(e).__name__, "message": str(e), "line": 0}}))
        send(wire.frame(wire.DONE, b""))
        return
    _install_recording_jit()
    _watch_the_reference(solutions_dir, send)
    module = types.ModuleType(module_name)
    module.__file__ = filename
    import linecache

    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    sys.modules[module_name] = module
    error = None
    try:
        with _alarm(limit):
            exec(code, module.__dict__)
    except BaseException as e:  # noqa: B036 - everything the file raises, SystemExit included, is its result
        error = _describe_error(e, filename)
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: B036
        pass
    if error is not None:
        send(wire.json_frame(wire.VALUES, {"error": error}))
    else:
        arrays: list[bytes] = []
        values = {}
        for name, value in list(module.__dict__.items()):
            if isinstance(name, str) and not name.startswith("__"):
                values[name] = describe(name, value, arrays)
        send(wire.json_frame(wire.VALUES, {"values": values}))
        for blob in arrays:
            send(wire.frame(wire.ARRAY, blob))
    send(wire.frame(wire.DONE, b""))


def _isolate(out_fd: int) -> None:
    """The child's own process group, its output into the judge's pipe, no input, no file writes."""
    import faulthandler
    import io
    import resource

    faulthandler.disable()      # a crash of the file's code is reported by its exit status, not on our stderr
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write to a file fails with EFBIG instead of killing
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.close(out_fd)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="replace",
                                  line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="replace",
                                  line_buffering=True)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.dont_write_bytecode = True
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    except (ValueError, OSError):
        pass
    try:
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = size + ADDRESS_SPACE_HEADROOM
        if hard == resource.RLIM_INFINITY or cap < hard:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (OSError, ValueError, IndexError):
        pass


class _Timeout(BaseException):
    """Raised in the child when its module-level code runs past the limit."""


class _alarm:
    def __init__(self, seconds: float):
        self.seconds = seconds

    def __enter__(self):
        def on_alarm(signum, frame):
            raise _Timeout()

        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_REAL, 0)
        return False


def _describe_error(error: BaseException, filename: str) -> dict[str, Any]:
    lineno = 0
    try:
        for frame in traceback.extract_tb(error.__traceback__):
            if frame.filename == filename:
                lineno = frame.lineno or 0
        if not lineno and isinstance(error, SyntaxError) and error.filename == filename:
            lineno = error.lineno or 0
    except BaseException:  # noqa: B036
        pass
    try:
        message = str(error)[:2000]
    except BaseException:  # noqa: B036
        message = "(its message cannot be shown)"
    return {"type": type(error).__name__, "message": message, "line": int(lineno),
            "timeout": isinstance(error, _Timeout)}


def _watch_the_reference(solutions_dir: str, send) -> None:
    """Report at once, from an audit hook the file cannot remove, any use of the reference solutions."""
    for name in [m for m in sys.modules if m == "solutions" or m.startswith("solutions.")]:
        del sys.modules[name]        # a cached import would raise no event
    folder = os.path.realpath(solutions_dir) + os.sep if solutions_dir else ""
    json_frame, realpath, fspath = wire.json_frame, os.path.realpath, os.fspath

    def hook(event: str, args: tuple) -> None:
        what = None
        if event == "import" and args and isinstance(args[0], str):
            if args[0].startswith("solutions."):
                what = f"import {args[0]}"
        elif event == "open" and folder and args:
            try:
                path = args[0]
                if isinstance(path, (str, bytes, os.PathLike)) and not isinstance(path, int):
                    path = fspath(path)
                    path = path.decode() if isinstance(path, bytes) else path
                    if realpath(path).startswith(folder) and path.endswith(".py"):
                        what = f"open {path}"
            except Exception:
                what = None
        if what is not None:
            send(json_frame(wire.EVENT, {"event": "reference", "what": what}))

    sys.addaudithook(hook)


# ---------------------------------------------------------------------------- cuda.jit, recorded


class RecordedKernel:
    """What ``cuda.jit`` gives a file inside the sandbox: the function and how it was decorated.

    Nothing is compiled. Launching it or calling it while the file loads is an error with a clear message:
    the checker launches the kernels itself.
    """

    def __init__(self, func: Any, signatures: list[str], options: dict[str, Any]):
        self.py_func = func
        self.__name__ = getattr(func, "__name__", "kernel")
        self.__doc__ = getattr(func, "__doc__", None)
        self.__wrapped__ = func
        self.signatures = signatures
        self.options = options

    def __getitem__(self, config: Any) -> Any:
        raise RuntimeError(f"your file launches `{self.__name__}` while it is being loaded; the checker "
                           f"launches your kernels itself (put test code under `if __name__ == \"__main__\":`)")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"your file calls `{self.__name__}` while it is being loaded; a CUDA function "
                           f"runs only on the GPU")


def recording_jit(func_or_sig: Any = None, device: bool = False, **options: Any) -> Any:
    """Stands in for ``numba.cuda.jit`` in the sandbox: records, compiles nothing.

    Eager signatures are parsed by numba here, as numba-cuda parses them when the file decorates (a bad one
    fails at the decorator's line, as it would on a GPU), and sent as plain descriptions of each parameter.
    """
    recorded_options = {"device": bool(device)}
    for key, value in options.items():
        recorded_options[str(key)] = _short(value)
    if isinstance(func_or_sig, types.FunctionType):
        return RecordedKernel(func_or_sig, [], recorded_options)
    if func_or_sig is None:
        raw = []
    elif isinstance(func_or_sig, (list, tuple)):
        raw = list(func_or_sig)
    else:
        raw = [func_or_sig]
    signatures = [_signature(s) for s in raw]

    def decorate(func: Any) -> RecordedKernel:
        return RecordedKernel(func, signatures, recorded_options)

    return decorate


def _signature(sig: Any) -> dict[str, Any]:
    """{"text": ..., "args": [{"array": dtype, "ndim": n, "layout": "C"} | {"scalar": name} | {"other": text}]}"""
    from numba.core import sigutils
    from numba.core import types as nbtypes

    args, _ = sigutils.normalize_signature(sig)
    described = []
    for arg in args:
        if isinstance(arg, nbtypes.Array):
            described.append({"array": str(arg.dtype), "ndim": int(arg.ndim), "layout": str(arg.layout)})
        elif isinstance(arg, (nbtypes.Number, nbtypes.Boolean)):
            described.append({"scalar": str(arg)})
        else:
            described.append({"other": _short(arg)})
    return {"text": _short(sig), "args": described}


def _short(value: Any) -> str:
    try:
        return str(value)[:500]
    except Exception:
        return "?"


def _install_recording_jit() -> None:
    try:
        import numba.cuda
    except Exception:
        return
    numba.cuda.jit = recording_jit
    decorators = getattr(numba.cuda, "decorators", None)
    if decorators is not None:
        decorators.jit = recording_jit


# ------------------------------------------------------------------------------------ describing values


def describe(name: str, value: Any, arrays: list[bytes], depth: int = 0) -> dict[str, Any]:
    """A JSON description of one module-level value, for ``wire.decode_value`` (never raises)."""
    try:
        return _describe(name, value, arrays, depth)
    except BaseException:  # noqa: B036 - an object of the file's own making may raise anything
        return {"k": "other", "type": "?"}


def _describe(name: str, value: Any, arrays: list[bytes], depth: int) -> dict[str, Any]:
    import numpy as np

    cls = type(value)
    if cls is bool:
        return {"k": "bool", "v": value}
    if cls is int:
        return {"k": "int", "v": value} if -(2 ** 63) <= value < 2 ** 64 else {"k": "other", "type": "int"}
    if cls is float:
        return {"k": "float", "v": wire.encode_float(value)}
    if isinstance(value, np.generic) and cls.__module__ == "numpy" and value.dtype.kind in wire.NUMERIC_KINDS:
        return {"k": "scalar", "dtype": value.dtype.str, "v": value.tobytes().hex()}
    if cls is tuple and depth < wire.MAX_DEPTH:
        return {"k": "tuple", "items": [describe(name, v, arrays, depth + 1) for v in value[:4096]]}
    if cls is np.ndarray:
        if value.dtype.kind in wire.NUMERIC_KINDS and value.dtype.fields is None and value.nbytes <= \
                MAX_ARRAY_BYTES - sum(len(a) for a in arrays):
            arrays.append(np.ascontiguousarray(value).tobytes())
            return {"k": "array", "dtype": value.dtype.str, "shape": list(value.shape), "blob": len(arrays) - 1}
        return {"k": "other", "type": f"array of {value.dtype}"}
    if cls is np.dtype and value.kind in wire.NUMERIC_KINDS:
        return {"k": "dtype", "v": value.str}
    if isinstance(value, type) and issubclass(value, np.generic) and value.__module__ == "numpy":
        try:
            dtype = np.dtype(value)
            if dtype.kind in wire.NUMERIC_KINDS:
                return {"k": "dtype", "v": dtype.str}
        except TypeError:
            pass
    if cls is types.ModuleType:
        return {"k": "module", "name": str(value.__name__)}
    if cls is RecordedKernel:
        return _function(value.py_func, {"wrapper": "cuda.jit", "signatures": list(value.signatures),
                                         "options": dict(value.options)})
    if cls is types.FunctionType:
        ref = _reference(name, value) if value.__module__ in REFERENCE_MODULES else None
        return ref or _function(value, {"wrapper": ""})     # ref: from numba.cuda.libdevice import expf
    py_func = getattr(value, "py_func", None)
    if type(py_func) is types.FunctionType:
        return _function(py_func, {"wrapper": f"{cls.__module__}.{cls.__qualname__}"})
    ref = _reference(name, value)
    if ref is not None:
        return ref
    return {"k": "other", "type": f"{cls.__module__}.{cls.__qualname__}"}


def _function(func: types.FunctionType, extra: dict[str, Any]) -> dict[str, Any]:
    code = func.__code__
    doc = {"k": "function", "name": str(func.__name__), "file": str(code.co_filename),
           "line": int(code.co_firstlineno), "module": str(func.__module__)}
    doc.update(extra)
    return doc


def _reference(name: str, value: Any) -> dict[str, Any] | None:
    """``numba.cuda.threadIdx``, ``numba.float32``, ``math.sqrt``...: where to find the same object."""
    owner = getattr(value, "__module__", None) or type(value).__module__ or ""
    if not isinstance(owner, str) or owner.split(".")[0] not in ("numba", "numba_cuda", "numpy", "math",
                                                                  "builtins"):
        return None
    for module_name in REFERENCE_MODULES:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        if getattr(module, name, None) is value:
            return {"k": "ref", "module": module_name, "attr": name}
        for attr, candidate in list(vars(module).items()):
            if candidate is value and isinstance(attr, str) and not attr.startswith("_"):
                return {"k": "ref", "module": module_name, "attr": attr}
    return None


__all__ = ["SandboxReport", "run_module", "kill_group", "describe", "recording_jit", "RecordedKernel"]
