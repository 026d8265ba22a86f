"""What can go wrong in a kernel, as values a learner can read.

Two families:

* ``KernelCompileError`` (and its subclasses) — the kernel's source is outside what gpusim runs, or is not
  valid Python. Raised by ``compile_kernel`` / ``launch`` before any thread runs.
* ``KernelFault`` — something a thread did at run time: an out-of-bounds access, a data race, a divergent
  barrier, a read of memory nobody wrote, a loop that never ends, an error inside the kernel. Faults are
  collected in ``LaunchReport.faults``; ``LaunchReport.raise_for_faults()`` raises the first.

Every fault starts with one plain sentence, then the details: kernel, file:line, the source line, block and
thread (x, y, z), the array and the index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class KernelCompileError(Exception):
    """The kernel cannot be compiled: a syntax error or a construct gpusim does not support."""

    def __init__(self, message: str, *, filename: str = "<unknown>", lineno: int = 0, source_line: str = ""):
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.source_line = source_line
        where = f"{filename}:{lineno}" if lineno else filename
        text = f"{message} ({where})"
        if source_line:
            text += f"\n    {source_line.strip()}"
        super().__init__(text)


class UnsupportedConstruct(KernelCompileError):
    """The kernel uses Python that numba-cuda (or gpusim) does not run on a GPU."""


class KernelTypeError(UnsupportedConstruct):
    """An argument of a type numba-cuda's typing rejects (a float warp mask): numba raises its ``TypingError``
    for it when the kernel is compiled, so the drop-in raises that at ``cuda.jit(signature)``."""


class KernelSyntaxError(KernelCompileError):
    """The kernel's file is not valid Python."""


class LaunchError(Exception):
    """A launch was asked for wrongly: bad grid or block, wrong arguments, unsupported argument types."""


@dataclass
class KernelFault(Exception):
    """A fault raised by a thread at run time.

    ``block`` and ``thread`` are (x, y, z) tuples; ``array`` is the kernel's name for the array (or None);
    ``index`` the index tuple the thread used. ``count`` says how many lane-accesses hit the same fault at the
    same line (only the first, in block then thread order, is described).
    """

    summary: str
    kernel: str = ""
    filename: str = ""
    lineno: int = 0
    source_line: str = ""
    block: tuple[int, int, int] | None = None
    thread: tuple[int, int, int] | None = None
    array: str | None = None
    index: tuple[int, ...] | None = None
    count: int = 1
    details: list[str] = field(default_factory=list)

    kind = "fault"

    def __post_init__(self) -> None:
        Exception.__init__(self, self.message)

    @property
    def where(self) -> str:
        return f"{self.filename}:{self.lineno}" if self.lineno else self.filename

    @property
    def message(self) -> str:
        lines = [self.summary]
        loc = f"  in kernel {self.kernel!r} at {self.where}" if self.kernel else f"  at {self.where}"
        lines.append(loc)
        if self.source_line:
            lines.append(f"    {self.source_line.strip()}")
        if self.block is not None:
            lines.append(f"  block {fmt_xyz(self.block)}, thread {fmt_xyz(self.thread)}")
        if self.array is not None and self.index is not None:
            lines.append(f"  array {self.array!r}, index {fmt_index(self.index)}")
        lines.extend(f"  {d}" for d in self.details)
        if self.count > 1:
            lines.append(f"  ({self.count} accesses at this line hit the same fault)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict:
        return {
            "kind": type(self).__name__,
            "summary": self.summary,
            "kernel": self.kernel,
            "file": self.filename,
            "line": self.lineno,
            "source_line": self.source_line.strip(),
            "block": list(self.block) if self.block is not None else None,
            "thread": list(self.thread) if self.thread is not None else None,
            "array": self.array,
            "index": list(self.index) if self.index is not None else None,
            "count": self.count,
            "details": list(self.details),
        }

    __hash__ = Exception.__hash__


@dataclass(eq=False)
class OutOfBounds(KernelFault, IndexError):
    """An index outside some dimension of an array (negative indices are out of bounds too). Also an
    ``IndexError``, which is what numba's simulator raises for it."""

    shape: tuple[int, ...] | None = None
    access: str = "read"


@dataclass(eq=False)
class DataRace(KernelFault):
    """Two threads touched the same element, at least one wrote, not both atomically, with no barrier between.

    ``other_block``/``other_thread``/``other_lineno`` describe the earlier access of the pair.
    """

    other_block: tuple[int, int, int] | None = None
    other_thread: tuple[int, int, int] | None = None
    other_lineno: int = 0
    other_source_line: str = ""
    hazard: str = ""  # "read after write", "write after read", "write after write"


@dataclass(eq=False)
class BarrierDivergence(KernelFault):
    """A barrier or warp intrinsic reached by only part of the threads it needs. ``skipped_by_exiting``: a
    barrier that the threads missing from it skip only on their way out of the kernel (a GPU runs it as if they
    had returned first: ``gpusim.backends.lanes.barriers``)."""

    skipped_by_exiting: bool = False


@dataclass(eq=False)
class UninitializedRead(KernelFault):
    """A read of shared or local memory that no thread wrote in this launch."""


@dataclass(eq=False)
class KernelTimeout(KernelFault):
    """The launch did more work than its step budget (``max_steps``, in steps of work): the kernel probably
    never ends."""

    max_steps: int = 0


@dataclass(eq=False)
class KernelError(KernelFault):
    """An error raised inside the kernel: integer division by zero, a bad operation on a value."""


@dataclass
class KernelRaised(KernelFault):
    """The kernel's own ``raise``: ``exception`` is what it raises (an exception class or instance). numba-cuda
    raises it on the host after the launch (with ``debug=True``; numba's simulator always)."""

    exception: Any = None
    kind = "raise"


def fmt_xyz(v: tuple[int, ...] | None) -> str:
    if v is None:
        return "?"
    return "(" + ", ".join(str(int(x)) for x in v) + ")"


def fmt_index(v: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(int(x)) for x in v) + "]"
