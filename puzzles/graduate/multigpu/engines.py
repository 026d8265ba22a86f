"""What runs a rank's kernels: numba-cuda on the rank's GPU, or gpusim on the CPU (``--dry-run``).

Both hold the rank's arrays as torch tensors — on ``cuda:i`` for numba-cuda, on the CPU for gpusim — so
that the exchange (``exchange.py``) hands the very same tensors to torch.distributed. A kernel sees them
through ``__cuda_array_interface__`` (numba-cuda's ``as_cuda_array``, no copy) or as NumPy views of the CPU
tensors (``Tensor.numpy()``, no copy). numba-cuda launches on torch's current stream
(``cuda.external_stream``), so kernels, copies and NCCL's operations are ordered on one stream, as they
would be in a training step.

Errors: ``CompileFailed`` (the file or a kernel does not compile) and ``RunFailed`` (a rejected launch, a
fault; ``fatal`` when the GPU context is lost), as graduate mode's one-GPU back end raises them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...model import LaunchStep, Puzzle
from ..backend import CompileFailed, RunFailed

POISON_FLOAT = float("nan")
POISON_INT = 0


class Engine:
    """The interface: tensors in, launches, tensors out."""

    torch: Any
    device: Any
    label: str = ""

    def tensor(self, host: np.ndarray):
        return self.torch.from_numpy(np.ascontiguousarray(host).copy()).to(self.device)

    def empty_like_host(self, host: np.ndarray):
        return self.torch.empty(tuple(host.shape), dtype=_torch_dtype(self.torch, host.dtype), device=self.device)

    def poison(self, tensor) -> None:
        tensor.fill_(POISON_FLOAT if tensor.dtype.is_floating_point else POISON_INT)

    def host(self, tensor) -> np.ndarray:
        return tensor.detach().cpu().numpy().copy()

    def bind(self, value):
        """A launch argument from a tensor (or a scalar, as it is)."""
        return value

    def launch(self, step: LaunchStep, args: tuple) -> None:
        raise NotImplementedError

    def synchronize(self) -> None:
        pass


class NumbaEngine(Engine):
    """numba-cuda on ``cuda:index``, launching on torch's current stream."""

    def __init__(self, torch, index: int, puzzle: Puzzle, path: Path):
        from ..cuda_module import cuda
        from ..numba_backend import NumbaBackend

        self.torch = torch
        self.device = torch.device("cuda", index)
        torch.cuda.set_device(self.device)
        self.cuda = cuda()
        self.cuda.select_device(index)
        self.runnable = NumbaBackend().compile(puzzle, path)      # CompileFailed
        self.stream = self.cuda.external_stream(torch.cuda.current_stream(self.device).cuda_stream)
        self.label = torch.cuda.get_device_name(self.device)

    def bind(self, value):
        if hasattr(value, "data_ptr"):
            return self.cuda.as_cuda_array(value)
        return value

    def launch(self, step: LaunchStep, args: tuple) -> None:
        kernel = self.runnable.kernels.get(step.kernel)
        if kernel is None:
            raise RunFailed(f"the case launches {step.kernel!r}, which is not one of the puzzle's kernels")
        try:
            kernel[step.grid, step.block, self.stream, step.shared_mem](*args)
        except Exception as e:
            raise self.runnable._translate(e, step) from None

    def synchronize(self) -> None:
        try:
            self.torch.cuda.synchronize(self.device)
        except Exception as e:
            raise self.runnable._translate(e, None) from None


class GpusimEngine(Engine):
    """gpusim on the CPU: each launch checked for faults as the simulator checks it."""

    def __init__(self, torch, puzzle: Puzzle, path: Path):
        from gpusim.faults import KernelCompileError

        from ...loader import load_solution
        from ..cuda_module import restore_row_stack

        restore_row_stack()
        self.torch = torch
        self.device = torch.device("cpu")
        self.label = "CPU (gpusim)"
        try:
            self.kernels = load_solution(path, puzzle.kernels).kernels
        except KernelCompileError as e:
            raise CompileFailed(str(e), getattr(e, "filename", "") or str(path), getattr(e, "lineno", 0) or 0) \
                from None

    def bind(self, value):
        if hasattr(value, "data_ptr"):
            return value.numpy()
        return value

    def launch(self, step: LaunchStep, args: tuple) -> None:
        from gpusim import launch
        from gpusim.faults import KernelCompileError, LaunchError

        kernel = self.kernels.get(step.kernel)
        if kernel is None:
            raise RunFailed(f"the case launches {step.kernel!r}, which is not one of the puzzle's kernels")
        try:
            report = launch(kernel, step.grid, step.block, args, step.shared_mem, instrument=False, trace=False)
        except KernelCompileError as e:
            raise CompileFailed(str(e), getattr(e, "filename", ""), getattr(e, "lineno", 0) or 0) from None
        except LaunchError as e:
            raise RunFailed(f"gpusim rejected the launch of {step.kernel}: {e}") from None
        if report.faults:
            first = str(report.faults[0]).splitlines()[0]
            raise RunFailed(f"{step.kernel} faulted on gpusim: {first}")


def _torch_dtype(torch, dtype: np.dtype):
    return torch.from_numpy(np.zeros(0, dtype)).dtype


def make_engine(mode: str, torch, index: int, puzzle: Puzzle, path: Path) -> Engine:
    """numba-cuda on GPU ``index`` (``nccl``), on GPU 0 (``same-gpu``), or gpusim (``dry-run``)."""
    if mode == "dry-run":
        return GpusimEngine(torch, puzzle, path)
    return NumbaEngine(torch, index if mode == "nccl" else 0, puzzle, path)
