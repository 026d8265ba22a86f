"""Helpers shared by the gpusim tests: launch a kernel, check it ran clean, pick out its faults."""

from __future__ import annotations

import importlib.util
import itertools
import textwrap

import gpusim
from gpusim import KernelFault, LaunchReport


def run(kernel, grid, block, *args, shared_mem: int = 0, **options) -> LaunchReport:
    """Launch without instrumentation (the engine's semantics only); faults stay in the report."""
    options.setdefault("instrument", False)
    return gpusim.launch(kernel, grid, block, args, shared_mem, **options)


def run_clean(kernel, grid, block, *args, shared_mem: int = 0, **options) -> LaunchReport:
    """Launch and fail the test with the fault's own message if anything went wrong."""
    report = run(kernel, grid, block, *args, shared_mem=shared_mem, **options)
    assert not report.faults, "unexpected faults:\n" + "\n\n".join(str(f) for f in report.faults)
    return report


def faults(report: LaunchReport, cls: type[KernelFault] = KernelFault) -> list[KernelFault]:
    return [f for f in report.faults if isinstance(f, cls)]


def one_fault(report: LaunchReport, cls: type[KernelFault]) -> KernelFault:
    """The only fault of the report, which must be a ``cls``."""
    assert len(report.faults) == 1, "expected exactly one fault, got:\n" + "\n\n".join(
        str(f) for f in report.faults)
    f = report.faults[0]
    assert isinstance(f, cls), f"expected {cls.__name__}, got {type(f).__name__}:\n{f}"
    return f


def line_of(func, needle: str) -> int:
    """The file line number of the first source line of ``func`` that contains ``needle``."""
    import inspect

    func = getattr(func, "py_func", func)
    lines, first = inspect.getsourcelines(func)
    for k, text in enumerate(lines):
        if needle in text:
            return first + k
    raise AssertionError(f"{needle!r} is not in {func.__name__}")


_modules = itertools.count()


def load_module(folder, source: str):
    """Write ``source`` (dedented) to a fresh module file in ``folder`` and import it: a kernel with real source,
    as ``inspect`` reads a player's file."""
    name = f"gpusim_case_{next(_modules)}"
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
