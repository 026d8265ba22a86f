"""Run one fuzz case in this process and name its outcome.

An outcome's ``label`` is what the counts are kept by:

* kernel cases: ``ok``; ``fault:<class>`` (a clean result with faults); ``compile:<class>``
  (``KernelCompileError`` and subclasses); ``launch:LaunchError``; ``python-rejects:<class>`` (Python itself
  cannot import the module: not gpusim's business); ``internal:<exception>`` — anything else gpusim raised;
* file cases (``gpu-puzzles check N --file``): ``check:pass``, ``check:fail:<first failure kind>``,
  ``check:usage`` (exit status 2), ``check:interrupted``, ``check:internal`` (the CLI or the checker called
  it a bug in gpu-puzzles, or the simulator ran out of stack), ``check:escaped:<exception>`` (an exception
  got out of ``cli.main``);
* and, from the watchdog (``pool``): ``hang`` and ``crash:<how>``.

Internal errors, hangs and crashes are *findings*; ``Outcome.signature`` groups them (the exception and the
innermost frame in gpusim or puzzles). ``suspect`` marks a ``KernelError`` fault that gpusim's catch-all made
from a Python exception inside generated code ("this may be a gpusim limitation").
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import json
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from .cases import Case, make_args

FINDING_PREFIXES = ("internal:", "hang", "crash:", "check:internal", "check:escaped:")
_names = itertools.count()


@dataclass
class Outcome:
    label: str
    detail: str = ""                # the message's first line
    where: str = ""                 # innermost frame of ours: "gpusim/launch.py:123 in launch"
    seconds: float = 0.0
    launch_seconds: float = 0.0     # kernel cases: gpusim.launch alone (not Python importing the module)
    launch_cpu_seconds: float = 0.0  # the same in CPU time (what the step budget bounds, whatever the load)
    launch_start_mb: float = -1.0   # resident set as the launch began (its peak counted from there; -1: unknown)
    suspect: str = ""               # the message of a catch-all KernelError fault, if there is one
    no_line: bool = False           # a compile error or fault without a line number
    trace: str = ""                 # the traceback (findings only)

    @property
    def finding(self) -> bool:
        return self.label.startswith(FINDING_PREFIXES)

    @property
    def signature(self) -> str:
        return f"{self.label} at {self.where}" if self.where else self.label


def run_case(case: Case, workdir: Path | None = None) -> Outcome:
    """Run ``case`` and classify what happened (in ``workdir``, else a temporary folder removed after).

    Raises nothing an ``Exception`` covers."""
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
            return run_case(case, Path(tmp))
    started = time.perf_counter()
    outcome = _run_file(case, workdir) if case.kind == "file" else _run_kernel(case, workdir)
    outcome.seconds = time.perf_counter() - started
    return outcome


def _run_kernel(case: Case, workdir: Path) -> Outcome:
    import gpusim

    name = f"fuzz_kernel_{os.getpid()}_{next(_names)}"
    path = workdir / f"{name}.py"
    path.write_text(case.source, encoding="utf-8")
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        kernel = getattr(module, case.kernel)
    except (Exception, SystemExit) as e:        # not valid Python (e.g. past the parser's own limits)
        return Outcome(f"python-rejects:{type(e).__name__}", _first_line(e))
    finally:
        sys.modules.pop(name, None)
    try:
        args = make_args(case.args)
    except Exception as e:  # pragma: no cover - a generator bug
        return Outcome(f"bad-case:{type(e).__name__}", _first_line(e))
    outcome_start_mb = _reset_peak_memory()
    started, cpu = time.perf_counter(), time.process_time()
    outcome = _launch(gpusim, kernel, case, args)
    outcome.launch_seconds = time.perf_counter() - started
    outcome.launch_cpu_seconds = time.process_time() - cpu
    outcome.launch_start_mb = outcome_start_mb
    return outcome


def _reset_peak_memory() -> float:
    """Start this process's peak resident set (VmHWM) again from what it holds now (Linux: ``clear_refs`` 5) and
    return that size in MB (-1 where it cannot), so that a peak read later is the launch's. CPython compiling
    the kernel's module comes before gpusim sees it: a 10 MB source takes CPython about 1.3 GB to compile,
    and its allocator keeps most of that, whatever is going to run the kernel."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return -1.0


def _launch(gpusim, kernel, case: Case, args: list) -> Outcome:
    try:
        report = gpusim.launch(kernel, case.grid, case.block, args, shared_mem=case.shared_mem)
    except gpusim.KernelCompileError as e:
        return Outcome(f"compile:{type(e).__name__}", _first_line(e), no_line=not e.lineno)
    except gpusim.LaunchError as e:
        return Outcome("launch:LaunchError", _first_line(e))
    except Exception as e:              # KernelFault raised instead of reported is a broken promise too
        return _internal(e)
    if not report.faults:
        return Outcome("ok")
    first = report.faults[0]
    suspect = next((_first_line(f) for f in report.faults if any("gpusim limitation" in d for d in f.details)), "")
    return Outcome(f"fault:{type(first).__name__}", _first_line(first), suspect=suspect,
                   no_line=any(not f.lineno for f in report.faults))


def _run_file(case: Case, workdir: Path) -> Outcome:
    from puzzles import cli

    path = workdir / "solution.py"
    path.write_bytes(case.file_bytes)
    os.environ["GPU_PUZZLES_HOME"] = str(workdir / "home")
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(["check", str(case.puzzle), "--file", str(path), "--json"])
    except BaseException as e:          # cli.main promises to return a status for anything
        outcome = _internal(e)
        outcome.label = f"check:escaped:{type(e).__name__}"
        return outcome
    stdout, stderr = out.getvalue(), err.getvalue()
    if "internal error" in stderr or "Traceback (most recent call last)" in stderr:
        return Outcome("check:internal", _last_line(stderr), where=_where_in_text(stderr), trace=stderr[-4000:])
    if status == 2:
        return Outcome("check:usage", _last_line(stderr))
    if status == 130:
        return Outcome("check:interrupted", _last_line(stderr))
    try:
        doc = json.loads(stdout)
    except ValueError:
        return Outcome("check:internal", f"not JSON on stdout (status {status}): {stdout[:200]!r}")
    messages = list(_failure_messages(doc))
    bad = [m for m in messages if "bug in gpu-puzzles" in m or "ran out of stack" in m]
    if bad:
        return Outcome("check:internal", bad[0].splitlines()[0][:300], where=_where_of_file(case, path),
                       trace="")
    if doc.get("passed"):
        return Outcome("check:pass")
    kinds = [f["kind"] for f in _failures(doc)]
    suspect = next((m.splitlines()[0][:300] for m in messages if "gpusim limitation" in m), "")
    return Outcome(f"check:fail:{kinds[0] if kinds else '?'}", messages[0][:300] if messages else "",
                   suspect=suspect)


def _failures(doc: dict):
    yield from doc.get("failures", [])
    for case in doc.get("cases", []):
        yield from case.get("failures", [])


def _failure_messages(doc: dict):
    for f in _failures(doc):
        text = f.get("message", "")
        fault = f.get("fault") or {}
        yield text + "\n" + "\n".join(fault.get("details", []))


def _where_of_file(case: Case, path: Path) -> str:
    """Check the file again, directly, to find where the checker's internal error came from."""
    from puzzles import checker, registry

    try:
        result = checker.check_file(registry.get(case.puzzle), path)
    except Exception as e:  # pragma: no cover
        return _where(e.__traceback__)
    for text in result.debug:
        where = _where_in_text(text)
        if where:
            return where
    return ""


def _internal(e: BaseException) -> Outcome:
    text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return Outcome(f"internal:{type(e).__name__}", _first_line(e), where=_where(e.__traceback__),
                   trace=text[-6000:])


def _where(tb) -> str:
    """The innermost frame in gpusim/ or puzzles/, as "gpusim/x.py:12 in func"."""
    found = ""
    for frame, lineno in traceback.walk_tb(tb):
        rel = _ours(frame.f_code.co_filename)
        if rel:
            found = f"{rel}:{lineno} in {frame.f_code.co_name}"
    return found


def _where_in_text(text: str) -> str:
    found = ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith('File "'):
            try:
                filename, rest = line[6:].split('", line ', 1)
                lineno, _, func = rest.partition(", in ")
            except ValueError:
                continue
            rel = _ours(filename)
            if rel:
                found = f"{rel}:{lineno} in {func}"
    return found


def _ours(filename: str) -> str:
    parts = Path(filename).parts
    for k in range(len(parts) - 1, 0, -1):
        if parts[k] in ("gpusim", "puzzles") and parts[k - 1] != "tests":
            return "/".join(parts[k:])
    return ""


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:300]


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
