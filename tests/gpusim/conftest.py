"""Fixtures for the engine's tests (helpers live in ``simkit.py``)."""

from __future__ import annotations

import importlib

import pytest


@pytest.fixture
def no_back_end(monkeypatch):
    """Fail the test if the lanes back end is asked to generate code: what the front end rejects must be
    rejected before any back end runs."""
    def refuse(*args, **kwargs):
        raise AssertionError("the back end ran for a kernel the front end should have rejected")

    monkeypatch.setattr(importlib.import_module("gpusim.launch"), "generate", refuse)


@pytest.fixture(autouse=True)
def compiled_shadow(monkeypatch):
    """With ``GPUSIM_SHADOW_COMPILED=1``, every launch of these tests on the lanes back end also runs, on copies
    of its arrays, on both back ends (as the launch asked, as far as the compiled back end computes it), which
    must give identical reports: the engine's own tests as a differential suite (``GPUSIM_SHADOW_COMPILED=1
    pytest tests/gpusim``; slow, not in CI). Launches the compiled back end does not translate (or with custom
    observers) run on lanes only."""
    import os

    if os.environ.get("GPUSIM_SHADOW_COMPILED") != "1":
        yield
        return
    import sys

    import numpy as np
    from backend_compare import report_differences, same_array

    import gpusim

    module = sys.modules["gpusim.launch"]
    orig = module.launch

    def shadow(kernel, grid, block, args=(), shared_mem=0, **kw):
        if kw.get("backend", "lanes") != "lanes" or kw.get("observers"):
            return orig(kernel, grid, block, args, shared_mem, **kw)
        args = list(args)
        lanes_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        compiled_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        ra = orig(kernel, grid, block, args, shared_mem, **kw)
        # as the launch asked, as far as the compiled back end computes it: without the trace where it would keep
        # snapshots of shared memory, uninstrumented where a loop is unrolled at run time
        plain = dict(kw)
        while True:
            try:
                rb = orig(kernel, grid, block, compiled_args, shared_mem, **dict(plain, backend="compiled"))
                break
            except gpusim.LaunchError as e:
                if plain.get("trace", True) and "snapshots of shared memory" in str(e):
                    plain["trace"] = False
                elif plain.get("instrument", True) and "unrolls at run time" in str(e):
                    plain["instrument"] = False
                elif "compiled back end" in str(e):
                    return ra
                else:
                    raise
        rl = orig(kernel, grid, block, lanes_args, shared_mem, **dict(plain, backend="lanes"))
        diffs = report_differences(rl, rb)
        diffs += [f"argument {k} differs" for k, (x, y) in enumerate(zip(lanes_args, compiled_args))
                  if isinstance(x, np.ndarray) and not same_array(x, y)]
        assert not diffs, "the compiled back end differs:\n" + "\n".join(diffs)
        return ra

    monkeypatch.setattr(module, "launch", shadow)
    monkeypatch.setattr(gpusim, "launch", shadow)
    yield
