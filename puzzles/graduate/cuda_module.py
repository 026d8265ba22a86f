"""Importing numba-cuda the one way graduate mode does, and asking it whether there is a GPU.

numba-cuda 0.30 still calls ``np.row_stack``, which NumPy 2.5 removed: its first compile fails with an
AttributeError (checked on the H200 machine, /work/shared/GPU_FACTS.md). ``np.row_stack`` was an alias of
``np.vstack``, so putting the alias back before ``numba.cuda`` is imported is exact. Every graduate process
(the GPU worker, the ncu child, the simulator's jobs, which import solution files) goes through ``cuda()``.
"""

from __future__ import annotations

import os

import numpy as np


def restore_row_stack() -> None:
    """Give NumPy >= 2.5 back the alias numba-cuda 0.30 uses (a no-op on older NumPy)."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack


def cuda():
    """``numba.cuda``, imported after ``restore_row_stack`` (low-occupancy warnings off: benchmark sizes are
    chosen on purpose)."""
    restore_row_stack()
    os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    from numba import cuda as numba_cuda

    return numba_cuda


def simulator_on() -> bool:
    """True when numba's own CUDA simulator replaces the GPU (``NUMBA_ENABLE_CUDASIM=1``)."""
    restore_row_stack()
    from numba import config

    return bool(config.ENABLE_CUDASIM)


def why_no_gpu() -> str | None:
    """None when numba-cuda sees a usable GPU, else one sentence saying why not."""
    try:
        nc = cuda()
    except Exception as e:  # numba-cuda missing or broken
        return f"numba-cuda cannot be imported ({type(e).__name__}: {_first_line(e)})"
    if simulator_on():
        return "numba's CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1), so there is no GPU to time"
    try:
        if nc.is_available():
            nc.get_current_device()
            return None
        nc.get_current_device()          # raises with the driver's reason
    except Exception as e:
        return f"no CUDA GPU here (numba-cuda: {_first_line(e)})"
    return "no CUDA GPU here (numba-cuda sees none)"


def _first_line(e: BaseException) -> str:
    lines = [ln.strip(" :") for ln in str(e).splitlines() if ln.strip(" :")]
    return " ".join(lines[:2])[:200] if lines else type(e).__name__
