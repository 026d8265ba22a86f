"""The Triton back end of graduate mode: the solution's kernels, translated by gpusim into Triton programs
(``gpusim.backends.triton``: one program per CUDA block), run on the GPU or through Triton's interpreter.

The file is loaded as the checker loads it (``puzzles.loader``); each kernel is compiled by gpusim's front
end for the argument types of the launch (numba's typing, as the simulator runs it) and translated for the
launch's block shape and dynamic shared memory, once per such key. What cannot be translated is a
``CompileFailed`` naming the construct and the line (raised by ``run`` or ``prepare``, where the argument
types are known; ``programs`` translates a case's launches up front, for ``gpu-puzzles triton``).

Where it runs: ``TritonBackend(interpret=True)`` runs programs through Triton's interpreter on CPU torch
tensors (correctness only, no timing); by default it follows Triton's own switch, ``TRITON_INTERPRET=1``,
which Triton reads once per process. On the GPU, arrays are torch tensors on the current device, and a
prepared case enqueues its programs on the timing code's stream (``torch.cuda.ExternalStream`` of the
numba-cuda stream's handle), so ``timing.measure`` times them exactly as it times numba-cuda's launches.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..model import Case, LaunchStep, Puzzle
from ..multidevice import case_outputs
from .backend import Backend, CompileFailed, RunFailed, Runnable, written_buffers
from .cuda_module import restore_row_stack

#: words in a torch/CUDA error after which the context is lost
_FATAL = ("illegal memory access", "illegal instruction", "misaligned address", "unspecified launch failure",
          "device-side assert", "launch timed out")


def missing_packages() -> list[str]:
    """Which of torch and triton this Python cannot import (without importing them)."""
    missing = []
    for m in ("torch", "triton"):
        try:
            found = importlib.util.find_spec(m) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(m)
    return missing


class TritonBackend(Backend):
    name = "triton"

    def __init__(self, interpret: bool | None = None):
        self.interpret = os.environ.get("TRITON_INTERPRET") == "1" if interpret is None else interpret

    def unavailable(self) -> str | None:
        missing = missing_packages()
        if missing:
            verb = "is" if len(missing) == 1 else "are"
            return f"{' and '.join(missing)} {verb} not installed (pip install -e \".[gpu]\")"
        if self.interpret:
            return None
        import torch

        if not torch.cuda.is_available():
            return "no CUDA GPU here (torch sees none)"
        return None

    def compile(self, puzzle: Puzzle, path: Path) -> TritonRunnable:
        from gpusim.faults import KernelCompileError

        from ..loader import load_solution

        restore_row_stack()
        try:
            solution = load_solution(path, puzzle.kernels)
        except KernelCompileError as e:
            raise CompileFailed(str(e), getattr(e, "filename", "") or str(path), getattr(e, "lineno", 0) or 0) \
                from None
        kernels = {name: getattr(k, "py_func", k) for name, k in solution.kernels.items()}
        return TritonRunnable(puzzle, Path(path), kernels, self.interpret)


class TritonRunnable(Runnable):
    def __init__(self, puzzle: Puzzle, path: Path, kernels: dict[str, Any], interpret: bool):
        self.puzzle, self.path, self.kernels, self.interpret = puzzle, path, kernels, interpret
        self.device = "cpu" if interpret else "cuda"
        self._programs: dict[tuple, Any] = {}

    # -- translation ---------------------------------------------------------------------------------------
    def program(self, step: LaunchStep, host: dict[str, Any]):
        """The Triton program for ``step`` with the case's host buffers (their types pick the specialisation)."""
        from gpusim.backends.triton import translate
        from gpusim.faults import KernelCompileError
        from gpusim.frontend.compiler import compile_module
        from gpusim.launch import arg_type

        func = self.kernels.get(step.kernel)
        if func is None:
            raise RunFailed(f"the case launches {step.kernel!r}, which is not one of the puzzle's kernels")
        names = func.__code__.co_varnames[:func.__code__.co_argcount]
        try:
            sig = tuple(arg_type(v, n) for v, n in zip(step.arg_values(host), names))
        except Exception as e:           # a LaunchError: an argument a kernel cannot take
            raise RunFailed(f"launching {step.kernel}: {e}") from None
        key = (step.kernel, sig, _dims(step.block), int(step.shared_mem))
        hit = self._programs.get(key)
        if hit is None:
            try:
                program = translate(compile_module(func, sig), key[2], key[3], guard=self.interpret)
            except KernelCompileError as e:
                raise CompileFailed(str(e), e.filename or str(self.path), e.lineno) from None
            hit = self._programs[key] = (program, names)
        return hit

    def programs(self, case: Case) -> list[tuple[LaunchStep, Any]]:
        """Every distinct program of ``case``'s launches, in launch order (``CompileFailed`` if one fails)."""
        out, seen = [], set()
        for step in case.launches:
            program, _ = self.program(step, dict(case.buffers))
            if id(program) not in seen:
                seen.add(id(program))
                out.append((step, program))
        return out

    # -- running -------------------------------------------------------------------------------------------
    def run(self, case: Case) -> dict[str, np.ndarray]:
        dev = self._to_device(case)
        bound = [self._bind(step, case, dev) for step in case.launches]
        for program, kernel, args in bound:
            self._launch(program, kernel, args)
        self._sync()
        return self._to_host(dev)

    def prepare(self, case: Case) -> TritonLaunch:
        if self.interpret:
            raise RunFailed("the interpreter runs on the CPU: nothing to time")
        host = {k: np.ascontiguousarray(v) for k, v in case.buffers.items() if isinstance(v, np.ndarray)}
        dev = self._to_device(case)
        bound = [self._bind(step, case, dev) for step in case.launches]
        for program, kernel, args in bound:        # once, to learn which buffers the case writes
            self._launch(program, kernel, args)
        self._sync()
        changed = written_buffers(host, self._to_host(dev), case_outputs(self.puzzle, case))
        pristine = {k: self._guard(lambda k=k: self._tensor(host[k])) for k in changed}
        return TritonLaunch(self, bound, dev, pristine)

    # -- internals -----------------------------------------------------------------------------------------
    def _tensor(self, a: np.ndarray):
        import torch

        t = torch.from_numpy(np.ascontiguousarray(a).copy())
        return t if self.interpret else t.to(self.device)

    def _to_device(self, case: Case) -> dict[str, Any]:
        from gpusim.backends.triton import launcher

        try:
            launcher.use_mode(self.interpret)
        except launcher.ModeConflict as e:
            raise RunFailed(str(e)) from None
        return {k: self._guard(lambda v=v: self._tensor(v)) if isinstance(v, np.ndarray) else v
                for k, v in case.buffers.items()}

    def _to_host(self, dev: dict[str, Any]) -> dict[str, np.ndarray]:
        return {k: self._guard(lambda v=v: v.cpu().numpy()) for k, v in dev.items() if hasattr(v, "cpu")}

    def _bind(self, step: LaunchStep, case: Case, dev: dict[str, Any]):
        from gpusim.backends.triton import launcher

        program, names = self.program(step, dict(case.buffers))
        try:
            kernel = launcher.load(program, self.interpret)
        except Exception as e:
            raise CompileFailed(f"triton cannot load the program for {step.kernel}: {_first(e)}", str(self.path)) \
                from None
        values = dict(zip(names, step.arg_values(dev)))
        args = self._guard(lambda: launcher.bind(program, values, _dims(step.grid), self.device))
        return program, kernel, args

    def _launch(self, program, kernel, args, stream=None) -> None:
        from gpusim.backends.triton import launcher

        try:
            with np.errstate(all="ignore"):        # the interpreter computes masked-off lanes too
                launcher.launch(program, kernel, args)
        except Exception as e:
            raise self._translate(e, program) from None

    def _sync(self) -> None:
        if not self.interpret:
            import torch

            self._guard(torch.cuda.synchronize)

    def _guard(self, fn):
        try:
            return fn()
        except (CompileFailed, RunFailed):
            raise
        except Exception as e:
            raise self._translate(e, None) from None

    def _translate(self, e: Exception, program) -> Exception:
        where = f"running {program.name} (grid of blocks {program.block})" if program is not None else "on the GPU"
        text = _first(e)
        if any(w in text.lower() for w in _FATAL):
            return RunFailed(f"the program hit an error that loses the GPU context {where}: {text}", fatal=True)
        if type(e).__name__ in ("CompilationError", "CompileTimeAssertionFailure"):
            return CompileFailed(f"triton rejected the generated program for {program.name if program else '?'} "
                                 f"(a bug of the Triton back end): {text}", str(self.path))
        return RunFailed(f"{type(e).__name__} {where}: {text}")


class TritonLaunch:
    """A case on the GPU for ``timing.measure``: ``enqueue`` launches its programs on the timing stream,
    ``reset`` restores the buffers the case writes."""

    def __init__(self, runnable: TritonRunnable, bound: list, dev: dict[str, Any], pristine: dict[str, Any]):
        self.runnable, self.bound, self.dev, self.pristine = runnable, bound, dev, pristine
        self._streams: dict[int, Any] = {}

    def _stream(self, stream):
        import torch

        handle = int(stream)
        s = self._streams.get(handle)
        if s is None:
            s = self._streams[handle] = torch.cuda.ExternalStream(handle)
        return s

    def enqueue(self, stream) -> None:
        import torch

        with torch.cuda.stream(self._stream(stream)):
            for program, kernel, args in self.bound:
                self.runnable._launch(program, kernel, args)

    def reset(self, stream) -> None:
        import torch

        with torch.cuda.stream(self._stream(stream)):
            for name, src in self.pristine.items():
                self.dev[name].copy_(src, non_blocking=True)

    def release(self) -> None:
        self.dev, self.pristine, self.bound = {}, {}, []


def _dims(d) -> tuple[int, int, int]:
    d = (int(d),) if isinstance(d, (int, np.integer)) else tuple(int(x) for x in d)
    return d + (1,) * (3 - len(d))


def _first(e: Exception) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return " ".join(lines[:4])[:500] if lines else type(e).__name__
