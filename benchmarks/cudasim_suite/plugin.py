"""pytest plugin for running numba-cuda's own test suite (``numba.cuda.tests``) the way its ``testing/``
folder runs it, and recording what every test did.

* ``--dump-failed-filechecks`` and the class fixture ``initialize_from_pytest_config``: the two things the
  upstream ``testing/conftest.py`` provides, which its FileCheck tests ask for.
* ``--suite-record=PATH``: one JSON line per test — outcome, seconds, kernel launches and the seconds spent in
  them (top-level launches through ``FakeCUDAKernel.__call__``, whichever engine runs them), launches gpusim
  ran and launches that fell back, the reasons gpusim gave, and the failure's first lines.
* ``--unskip-gpusim-targets``: run ``cudapy/test_warp_ops.py`` and ``doc_examples`` although they are marked
  ``skip_on_cudasim`` (numba's simulator has no warp intrinsics and no function-level ``cuda`` import).
"""

from __future__ import annotations

import json
import sys
import time

import pytest

#: modules whose ``skip_on_cudasim`` marks ``--unskip-gpusim-targets`` lifts
UNSKIP_MODULES = ("numba.cuda.tests.cudapy.test_warp_ops", "numba.cuda.tests.doc_examples.")


class _LaunchTimer:
    """Counts and times top-level kernel launches (not device-function calls, not launches inside a kernel)."""

    def __init__(self):
        self.launches = 0
        self.seconds = 0.0

    def wrap(self):
        from numba.cuda.simulator import kernel

        inner = kernel.FakeCUDAKernel.__call__
        timer = self

        def __call__(self, *args):
            if self._device or kernel._get_kernel_context() is not None:
                return inner(self, *args)
            t0 = time.perf_counter()
            try:
                return inner(self, *args)
            finally:
                timer.launches += 1
                timer.seconds += time.perf_counter() - t0

        kernel.FakeCUDAKernel.__call__ = __call__


_timer = _LaunchTimer()


def pytest_addoption(parser):
    parser.addoption("--dump-failed-filechecks", action="store_true",
                     help="dump reproducers for FileCheck tests that fail (numba-cuda's own option)")
    parser.addoption("--suite-record", metavar="PATH", default=None, help="write one JSON line per test here")
    parser.addoption("--unskip-gpusim-targets", action="store_true",
                     help="run test_warp_ops and doc_examples, which numba's simulator skips")


@pytest.fixture(scope="class")
def initialize_from_pytest_config(request):
    request.cls._dump_failed_filechecks = request.config.getoption("dump_failed_filechecks")


def pytest_configure(config):
    import numba.cuda  # noqa: F401  (under GPUSIM_CUDASIM this attaches gpusim first; the timer wraps it)
    from numba.cuda import testing

    _timer.wrap()
    if config.getoption("unskip_gpusim_targets"):
        real = testing.skip_on_cudasim

        def skip_on_cudasim(reason):
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller.startswith(UNSKIP_MODULES):
                return lambda fn: fn
            return real(reason)

        testing.skip_on_cudasim = skip_on_cudasim
    path = config.getoption("suite_record")
    config._suite_record = open(path, "w") if path else None  # noqa: SIM115 (closed in unconfigure)


def pytest_unconfigure(config):
    f = getattr(config, "_suite_record", None)
    if f is not None:
        f.close()


def _adapter_stats():
    adapter = sys.modules.get("gpusim.cudasim.adapter")
    return adapter.stats() if adapter is not None and adapter._patched else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    record = {"id": _test_id(item), "outcome": "passed", "message": ""}
    item._suite_record = record
    before = (_timer.launches, _timer.seconds, _adapter_stats())
    t0 = time.perf_counter()
    yield
    record["seconds"] = round(time.perf_counter() - t0, 4)
    record["launches"] = _timer.launches - before[0]
    record["kernel_seconds"] = round(_timer.seconds - before[1], 4)
    after = _adapter_stats()
    if after is not None:
        b = before[2]
        record["gpusim"] = after.gpusim_launches - (b.gpusim_launches if b else 0)
        record["fallback"] = after.fallback_launches - (b.fallback_launches if b else 0)
        record["gpusim_seconds"] = round(after.gpusim_seconds - (b.gpusim_seconds if b else 0.0), 4)
        record["fallback_seconds"] = round(after.fallback_seconds - (b.fallback_seconds if b else 0.0), 4)
        record["fallback_reasons"] = [r for k, r in after.fallbacks.items() if not b or k not in b.fallbacks]
    f = getattr(item.config, "_suite_record", None)
    if f is not None:
        f.write(json.dumps(record) + "\n")
        f.flush()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    record = getattr(item, "_suite_record", None)
    if record is not None:
        _merge(record, report)


def _test_id(item) -> str:
    """``cudapy/test_x.py::TestX::test_y``: the file relative to ``numba/cuda/tests`` (pytest's own node id
    depends on the arguments it was given)."""
    parts = item.path.parts
    i = max((k for k in range(len(parts) - 2) if parts[k:k + 3] == ("numba", "cuda", "tests")), default=None)
    path = "/".join(parts[i + 3:]) if i is not None else item.path.name
    return f"{path}::{item.nodeid.split('::', 1)[1]}" if "::" in item.nodeid else path


def _merge(record: dict, report) -> None:
    if hasattr(report, "wasxfail"):
        record["outcome"] = "xpassed" if report.passed else "xfailed"
        return
    if report.failed:
        if record["outcome"] != "failed":
            record["outcome"] = "failed" if report.when == "call" else "error"
            record["message"] = _message(report)
    elif report.skipped and record["outcome"] == "passed":
        record["outcome"] = "skipped"
        record["message"] = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""


def _message(report) -> str:
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    return text[:1500]
