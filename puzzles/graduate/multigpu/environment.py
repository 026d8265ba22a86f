"""The environment of every process the multi-GPU launcher starts, and what this machine can run.

**NVLink multicast stays off.** NCCL's NVLS algorithms, PyTorch's symmetric memory and NVSHMEM can use
NVLink multicast objects (``cuMulticastCreate``); on the shared GPU hosts this project runs on, a program
that uses them can put the host's GPUs out of service for a long time. So the launcher sets, in its own
environment before it starts anything and again first thing in every rank process (whatever the caller's
environment said)::

    NCCL_NVLS_ENABLE=0                  NCCL: no NVLink SHARP (multicast) algorithms
    TORCH_SYMM_MEM_DISABLE_MULTICAST=1  PyTorch symmetric memory: no multicast objects
    NVSHMEM_DISABLE_NVLS=1              NVSHMEM (which PyTorch may load): no NVLS

Nothing in graduate mode calls ``cuMulticastCreate`` or PyTorch's multimem operations.

``why_not(mode, devices)`` says in one sentence why a run cannot happen here (None when it can): no torch,
no gloo or NCCL in it, fewer GPUs than asked for.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

MULTICAST_OFF = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}

#: how the launcher runs: NCCL on one GPU per rank; gloo over one GPU's tensors (host-staged); gloo on the CPU
MODES = ("nccl", "same-gpu", "dry-run")


def apply(env: dict | None = None) -> dict:
    """Set the multicast-off variables in ``env`` (``os.environ`` when None) and return it."""
    target = os.environ if env is None else env
    target.update(MULTICAST_OFF)
    target.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    if sys.platform.startswith("linux") and Path("/sys/class/net/lo").exists():
        target.setdefault("GLOO_SOCKET_IFNAME", "lo")      # the ranks are all on this host
    return target


def snapshot() -> dict:
    """The multicast-off variables as this process sees them (rank processes report it)."""
    return {name: os.environ.get(name) for name in MULTICAST_OFF}


NO_TORCH = "the multi-GPU run needs torch"


def install_hint() -> str:
    return "pip install -e \".[gpu]\" (torch's CPU build is enough for --dry-run: pip install torch==2.13.0)"


def why_not(mode: str, devices: int) -> str | None:
    """None when ``mode`` with ``devices`` rank processes can run here, else one sentence saying why not."""
    try:
        import torch
        import torch.distributed as dist
    except Exception as e:   # missing, or a broken install
        return f"{NO_TORCH}, which cannot be imported here ({type(e).__name__}); {install_hint()}"
    if not dist.is_available():
        return "this torch has no torch.distributed"
    if mode in ("dry-run", "same-gpu") and not dist.is_gloo_available():
        return "this torch has no gloo back end, which --dry-run and --same-gpu use"
    if mode == "dry-run":
        return None
    found = gpu_count(torch)
    if mode == "same-gpu":
        return None if found >= 1 else "--same-gpu needs one CUDA GPU, found 0"
    if found < devices:
        return f"--devices {devices} needs {devices} CUDA GPU{'s' if devices > 1 else ''}, found {found}"
    if not dist.is_nccl_available():
        return "this torch has no NCCL back end"
    return None


def gpu_count(torch) -> int:
    try:
        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except Exception:
        return 0
