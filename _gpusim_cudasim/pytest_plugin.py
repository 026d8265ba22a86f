"""``pytest --gpusim``: the project's kernels, launched through numba's simulator API, run on gpusim.

Registered through the ``pytest11`` entry point, so it is loaded by every pytest run in an environment where
gpusim is installed; it imports nothing heavy until ``--gpusim`` asks for it. It enables the drop-in before
conftest files are imported, so before they can import ``numba.cuda``.
"""

from __future__ import annotations

import sys

import pytest

import _gpusim_cudasim


def pytest_addoption(parser):
    group = parser.getgroup("gpusim", "gpusim behind numba's CUDA simulator")
    group.addoption("--gpusim", action="store_true",
                    help="run kernels launched through numba's simulator API on gpusim; a kernel gpusim cannot run "
                         "falls back to numba's simulator (said once per kernel)")
    group.addoption("--gpusim-strict", action="store_true",
                    help="as --gpusim, but a kernel gpusim cannot run is an error")
    group.addoption("--gpusim-faults", metavar="POLICY", default=None,
                    help="what a fault gpusim finds does: raise, report (a line on stderr and in the summary), off, "
                         "or per kind, e.g. race=raise,uninit=off (kinds: oob, race, skipped, divergence, uninit, "
                         "timeout, limit; by default race, uninit and skipped are reported, the rest raised)")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    ns = early_config.known_args_namespace
    if not (ns.gpusim or ns.gpusim_strict):
        return
    if ns.gpusim_faults is not None:
        from gpusim.cudasim.policy import FaultPolicy

        try:
            FaultPolicy.parse(ns.gpusim_faults)
        except ValueError as e:
            raise pytest.UsageError(f"--gpusim-faults: {e}") from None
    if "numba.cuda" in sys.modules and not _gpusim_cudasim.settings:
        from numba.cuda.core import config

        if not config.ENABLE_CUDASIM:
            raise pytest.UsageError("--gpusim: numba.cuda was imported (without its simulator) before pytest "
                                    "loaded this plugin; run with NUMBA_ENABLE_CUDASIM=1 or GPUSIM_CUDASIM=1")
    _gpusim_cudasim.enable("strict" if ns.gpusim_strict else "fallback", ns.gpusim_faults)


def pytest_report_header(config):
    s = _gpusim_cudasim.settings
    if s is None:
        return None
    faults = s["faults"] or "races and uninitialised reads reported, the rest raised"
    return f"gpusim: kernels launched through numba's simulator API run on gpusim ({s['mode']}; faults: {faults})"


def pytest_terminal_summary(terminalreporter):
    adapter = sys.modules.get("gpusim.cudasim.adapter")
    if _gpusim_cudasim.settings is None or adapter is None:
        return
    st = adapter.stats()
    line = (f"gpusim: {st.gpusim_launches} launches on gpusim ({st.gpusim_seconds:.2f} s), "
            f"{st.fallback_launches} on numba's simulator ({st.fallback_seconds:.2f} s)")
    if st.fallbacks:
        line += f"; {len(st.fallbacks)} kernels gpusim cannot run yet"
    terminalreporter.write_line(line)
    for text in st.reported.values():  # pytest keeps a passing test's stderr to itself: say them here
        terminalreporter.write_line(text)
