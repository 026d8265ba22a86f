"""The numba-cuda back end: the solution file's own ``@cuda.jit`` kernels, compiled by numba-cuda for the GPU.

The file is loaded exactly as the checker loads it (``puzzles.loader``), but with numba-cuda's real
``cuda`` module, so its decorators produce numba-cuda dispatchers. A kernel written without ``@cuda.jit``
(gpusim accepts plain functions) is wrapped in ``cuda.jit`` here. numba compiles a kernel at its first
launch for the argument types it sees (arrays by dtype and dimensions, Python ints as int64, NumPy scalars
as themselves), so compile errors surface in ``run`` and become ``CompileFailed`` there.

Each case runs on fresh device copies of its buffers; outputs come back as host arrays. Errors from the
CUDA driver that leave the context unusable (an illegal address, a trap, a launch failure) are fatal
(``RunFailed(fatal=True)``): the process must stop using the GPU.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from ..model import Case, LaunchStep, Puzzle
from ..multidevice import case_outputs
from .backend import Backend, CompileFailed, RunFailed, Runnable, written_buffers
from .cuda_module import cuda, why_no_gpu

# CUresult codes after which the context is lost (CUDA driver API, enum CUresult)
_FATAL = {700: "an illegal memory address", 702: "a launch timeout", 710: "a device-side assert",
          714: "a hardware stack error", 715: "an illegal instruction", 716: "a misaligned address",
          717: "an invalid address space", 718: "an invalid program counter", 719: "a launch failure",
          720: "a cooperative launch that cannot run"}


class NumbaBackend(Backend):
    name = "numba"

    def unavailable(self) -> str | None:
        return why_no_gpu()

    def compile(self, puzzle: Puzzle, path: Path) -> NumbaRunnable:
        from gpusim.faults import KernelCompileError

        from ..loader import load_solution

        nc = cuda()
        try:
            solution = load_solution(path, puzzle.kernels)
        except KernelCompileError as e:
            raise CompileFailed(str(e), getattr(e, "filename", "") or str(path), getattr(e, "lineno", 0) or 0) \
                from None
        kernels = {}
        for name, k in solution.kernels.items():
            kernels[name] = k if hasattr(k, "py_func") and hasattr(k, "__getitem__") else nc.jit(k)
        return NumbaRunnable(puzzle, Path(path), kernels)


class NumbaRunnable(Runnable):
    def __init__(self, puzzle: Puzzle, path: Path, kernels: dict[str, Any]):
        self.puzzle, self.path, self.kernels = puzzle, path, kernels
        self.cuda = cuda()

    def run(self, case: Case) -> dict[str, np.ndarray]:
        dev = self._to_device(case)
        for step in case.launches:                    # a multi-device case: every rank's launch, in issue order
            self._launch(step, dev, 0)
        self._guard(self.cuda.synchronize)
        return self._to_host(dev)

    def prepare(self, case: Case) -> NumbaLaunch:
        host = {k: np.ascontiguousarray(v) for k, v in case.buffers.items() if isinstance(v, np.ndarray)}
        dev = self._to_device(case)
        for step in case.launches:                    # once, to learn which buffers the case writes
            self._launch(step, dev, 0)
        self._guard(self.cuda.synchronize)
        changed = written_buffers(host, self._to_host(dev), case_outputs(self.puzzle, case))
        pristine = {k: self._guard(self.cuda.to_device, host[k]) for k in changed}
        return NumbaLaunch(self, case.launches, dev, pristine)

    # -- internals
    def _to_device(self, case: Case) -> dict[str, Any]:
        return {k: self._guard(self.cuda.to_device, np.ascontiguousarray(v)) if isinstance(v, np.ndarray) else v
                for k, v in case.buffers.items()}

    def _to_host(self, dev: dict[str, Any]) -> dict[str, np.ndarray]:
        return {k: self._guard(v.copy_to_host) for k, v in dev.items() if hasattr(v, "copy_to_host")}

    def _launch(self, step: LaunchStep, dev: dict[str, Any], stream: Any) -> None:
        kernel = self.kernels.get(step.kernel)
        if kernel is None:
            raise RunFailed(f"the case launches {step.kernel!r}, which is not one of the puzzle's kernels")
        args = step.arg_values(dev)
        try:
            kernel[step.grid, step.block, stream, step.shared_mem](*args)
        except Exception as e:
            raise self._translate(e, step) from None

    def _guard(self, fn, *args):
        try:
            return fn(*args)
        except Exception as e:
            raise self._translate(e, None) from None

    def _translate(self, e: Exception, step: LaunchStep | None) -> Exception:
        where = f"launching {step.kernel} (grid {step.grid}, block {step.block})" if step else "on the GPU"
        code = getattr(e, "code", None)
        try:
            code = int(code) if code is not None else None
        except (TypeError, ValueError):
            code = None
        if code in _FATAL:
            return RunFailed(f"the kernel hit {_FATAL[code]} {where} (CUDA error {code})", fatal=True)
        if type(e).__name__ == "CudaAPIError":
            return RunFailed(f"the GPU rejected the launch {where}: {_first(e)}")
        if _is_numba_error(e):
            line = _solution_line(e, self.path)
            return CompileFailed(f"numba-cuda cannot compile {step.kernel if step else 'a kernel'}: {_first(e)}",
                                 str(self.path), line)
        return RunFailed(f"{type(e).__name__} {where}: {_first(e)}")


class NumbaLaunch:
    """A case on the device, for ``timing.measure``: ``reset`` restores the buffers the case writes."""

    def __init__(self, runnable: NumbaRunnable, steps: tuple[LaunchStep, ...], dev: dict[str, Any],
                 pristine: dict[str, Any]):
        self.runnable, self.steps, self.dev, self.pristine = runnable, steps, dev, pristine

    def enqueue(self, stream) -> None:
        for step in self.steps:
            self.runnable._launch(step, self.dev, stream)

    def reset(self, stream) -> None:
        for name, src in self.pristine.items():
            self.dev[name].copy_to_device(src, stream=stream)

    def release(self) -> None:
        self.dev, self.pristine = {}, {}


def _is_numba_error(e: Exception) -> bool:
    return any(c.__module__.startswith("numba") and c.__name__ in ("NumbaError", "TypingError", "LoweringError")
               for c in type(e).__mro__)


def _first(e: Exception) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(e))          # numba colours its messages
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " ".join(lines[:3])[:400] if lines else type(e).__name__


def _solution_line(e: Exception, path: Path) -> int:
    match = re.search(rf'File "{re.escape(str(path))}", line (\d+)', str(e))
    return int(match.group(1)) if match else 0
