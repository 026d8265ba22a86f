"""The back-end interface of graduate mode: what a way of running solution files on a real GPU provides.

A back end compiles a solution file for one puzzle into a ``Runnable``; the runnable runs a ``Case``
(every ``LaunchStep`` in order, on copies of the case's buffers) and hands back the outputs, or prepares it
once on the device so that ``puzzles.graduate.timing`` can time it::

    backend = get_backend("numba")
    reason = backend.unavailable()            # None when it can run here, else one sentence
    runnable = backend.compile(puzzle, path)   # raises CompileFailed
    outputs = runnable.run(case)               # {buffer name: host array} after the last step; RunFailed
    launch = runnable.prepare(case)            # device buffers ready to be launched again and again
    samples = runnable.time(case)              # timing.measure(runnable.prepare(case)): a Timing

``Launch`` is the contract with the timing code: ``enqueue(stream)`` enqueues every step of the case on
``stream`` (a numba-cuda ``Stream``; ``int(stream)`` is its ``CUstream`` handle, for torch's
``torch.cuda.ExternalStream``) without waiting, and ``reset(stream)`` enqueues restoring every buffer the
steps write, so that each timed repeat starts from the case's inputs. Both return at once; the timing code
records CUDA events around them on the same stream.

A new back end (the Triton one) is a module with a class implementing ``Backend``; it is registered by
adding one line to ``BACKENDS``. Nothing else in graduate mode changes.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..model import Case, Puzzle

#: back-end name -> "module:Class", or None for a back end that is not built yet
BACKENDS: dict[str, str | None] = {
    "numba": "puzzles.graduate.numba_backend:NumbaBackend",
    "triton": "puzzles.graduate.triton_backend:TritonBackend",
}

NOT_BUILT: dict[str, str] = {}


class CompileFailed(Exception):
    """The file, or one of its kernels, does not compile for this back end."""

    def __init__(self, message: str, filename: str = "", lineno: int = 0):
        super().__init__(message)
        self.filename, self.lineno = filename, lineno


class RunFailed(Exception):
    """A launch was rejected or the kernel faulted on the device.

    ``fatal`` is True when the device context is lost (an illegal address, a trap, a kernel that timed out):
    nothing more can run in this process.
    """

    def __init__(self, message: str, fatal: bool = False):
        super().__init__(message)
        self.fatal = fatal


class Launch(Protocol):
    """A case prepared on the device (see the module docstring)."""

    def enqueue(self, stream: Any) -> None: ...

    def reset(self, stream: Any) -> None: ...

    def release(self) -> None: ...


class Runnable(ABC):
    """A solution compiled for one puzzle by one back end."""

    @abstractmethod
    def run(self, case: Case) -> dict[str, np.ndarray]:
        """Run every step of ``case`` on copies of its buffers; return every array buffer afterwards."""

    @abstractmethod
    def prepare(self, case: Case) -> Launch:
        """Copy ``case``'s buffers to the device once and return what ``timing.measure`` launches."""

    def time(self, case: Case, **options: Any):
        """Time ``case`` the way ``puzzles.graduate.timing`` does (warm-up, flushed L2, CUDA events)."""
        from .timing import measure

        launch = self.prepare(case)
        try:
            return measure(launch, **options)
        finally:
            launch.release()


class Backend(ABC):
    name: str = ""

    @abstractmethod
    def unavailable(self) -> str | None:
        """None when this back end can run on this machine, else one sentence saying why not."""

    @abstractmethod
    def compile(self, puzzle: Puzzle, path: Path) -> Runnable:
        """Load ``path`` and compile its kernels for ``puzzle``; raise ``CompileFailed``."""


class UnknownBackend(LookupError):
    pass


def backend_names() -> list[str]:
    return list(BACKENDS)


def get_backend(name: str) -> Backend:
    """The back end called ``name``; ``UnknownBackend`` if there is none, ``NotBuilt`` if not built yet."""
    if name not in BACKENDS:
        raise UnknownBackend(f"unknown back end {name!r}; known: {', '.join(BACKENDS)}")
    target = BACKENDS[name]
    if target is None:
        raise NotBuilt(NOT_BUILT.get(name, f"the {name} back end is not built yet"))
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)()


class NotBuilt(Exception):
    """The back end is part of the design but has no implementation yet."""


def written_buffers(before: Mapping[str, Any], after: Mapping[str, Any], outputs: tuple[str, ...]) -> list[str]:
    """Names of the array buffers a run changed (bit for bit), plus the puzzle's outputs: what ``reset``
    must restore before each timed repeat."""
    names = []
    for name, value in before.items():
        if not isinstance(value, np.ndarray):
            continue
        if name in outputs or not _same_bits(value, after[name]):
            names.append(name)
    return names


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))
