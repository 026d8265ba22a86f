"""gpusim behind numba's CUDA simulator API: existing numba-cuda tests run on gpusim, unchanged.

Three ways in, one effect (every kernel launched through ``numba.cuda`` with ``NUMBA_ENABLE_CUDASIM=1``, or
through ``numba_cuda_mlir.cuda``, runs on gpusim, in this process and its children):

* the environment: ``GPUSIM_CUDASIM=1`` (or ``strict``), read at interpreter start by the ``.pth`` hook that
  installing gpusim puts in site-packages;
* code: ``gpusim.install()`` before ``numba.cuda`` is imported (a project's ``conftest.py``);
* pytest: ``pytest --gpusim`` (``--gpusim-strict``, ``--gpusim-faults=raise``).

``mode``: ``"fallback"`` runs a kernel gpusim cannot run on numba's simulator and says so once per kernel;
``"strict"`` makes it an error. ``faults``: the policy for faults gpusim finds (``policy.FaultPolicy``): by
default a data race or a read of uninitialised shared memory is reported on stderr (once per kernel and kind)
and every other fault is raised, as the gpusim fault it is, worded as numba's simulator words a thread's
exception; ``faults="raise"`` raises them all.

The start-up half lives in the top-level ``_gpusim_cudasim`` package so that it costs nothing until a kernel
module imports numba.cuda; the launch path is ``adapter.py``.
"""

from __future__ import annotations

import _gpusim_cudasim

from .adapter import Stats, stats
from .policy import FaultPolicy

__all__ = ["FaultPolicy", "Stats", "install", "stats", "uninstall"]


def install(mode: str = "fallback", faults: str | None = None) -> None:
    """Run every kernel launched through numba's simulator API on gpusim (call before ``numba.cuda`` is
    imported, or after it was imported with ``NUMBA_ENABLE_CUDASIM=1``). Sets ``GPUSIM_CUDASIM``,
    ``GPUSIM_CUDASIM_FAULTS`` and ``NUMBA_ENABLE_CUDASIM`` so that child processes do the same."""
    FaultPolicy.parse(faults)  # a bad policy fails here, not at the first launch
    _gpusim_cudasim.enable(mode, faults)


def uninstall() -> None:
    """numba's simulator runs its own kernels again (in this process; the environment is cleared)."""
    _gpusim_cudasim.disable()
