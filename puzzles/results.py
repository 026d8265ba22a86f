"""What a check found, as values: ``CheckResult`` for a solution, ``CaseResult`` per test case, ``Failure``.

The CLI and the TUI render these; ``to_dict()`` is the stable JSON form (``SCHEMA`` is bumped on any change
that could break a reader).

Failure kinds:

* ``compile``    — the file is not valid Python, fails (or exits) as it runs, lacks a kernel, defines one a
                   GPU could not launch, uses a construct that gpusim does not run, or (where numba-cuda's
                   compiler is installed) does not compile to PTX.
* ``fault``      — a thread faulted (out of bounds, data race, divergent barrier, uninitialised read, endless
                   loop, error in the kernel); ``fault`` holds the ``KernelFault``.
* ``mismatch``   — an output differs from the spec, or an input changed; ``detail`` holds the first wrong
                   element (``detail["changed_input"]`` is True for an input).
* ``constraint`` — a constraint of the puzzle does not hold; ``detail`` holds the rule's description.
* ``error``      — the launch could not be made, or the simulator or the puzzle has a bug.

``CaseResult.outputs`` holds, for each output of a case that ran (to its end, or until a launch faulted), what
the kernel left in it and what the spec expects (``OutputValues``: the whole array up to
``output_values.MAX_KEPT`` elements, else a box around the first difference), both made by the judging
process. They are for drawing and are not part of ``to_dict()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import RunStats
from .stats import stats_to_dict

SCHEMA = 1
STOPPING_KINDS = ("compile", "error")   # failures after which the other cases are not run


@dataclass
class Failure:
    """One reason a solution fails: its kind, a message for the player, and where it happened."""

    kind: str
    message: str
    case: str | None = None
    fault: Any = None                               # the KernelFault for kind "fault"
    detail: dict[str, Any] = field(default_factory=dict)
    filename: str = ""                              # where a compile error is (kind "compile")
    lineno: int = 0

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "message": self.message,
            "case": self.case,
            "fault": self.fault.to_dict() if self.fault is not None else None,
            "detail": dict(self.detail),
            "file": self.filename,
            "line": self.lineno,
        }


@dataclass
class OutputValues:
    """One output of a case: the kernel's values against the spec's, whole or a box of the whole array.

    ``got``, ``expected`` and ``differs`` have the box's shape; ``got[0, ...]`` is element ``origin`` of the
    whole output (all zeros when the box is the whole array). ``expected`` holds the spec's values as they
    were compared (a float output's rounded to its dtype); ``differs`` marks the elements the comparison
    rejected; ``wrong`` and ``first_wrong`` are about the whole output.
    """

    name: str
    shape: tuple[int, ...]
    dtype: str
    origin: tuple[int, ...]
    got: Any
    expected: Any
    differs: Any
    wrong: int = 0
    first_wrong: tuple[int, ...] | None = None

    @property
    def size(self) -> int:
        count = 1
        for n in self.shape:
            count *= n
        return count

    @property
    def whole(self) -> bool:
        return tuple(self.got.shape) == tuple(self.shape)


@dataclass
class CaseResult:
    """The outcome of one test case. ``status`` is "pass", "fail" or "not run"."""

    name: str
    note: str = ""
    status: str = "not run"
    failures: list[Failure] = field(default_factory=list)
    stats: RunStats | None = None
    stats_complete: bool = False
    unmeasured: list[str] = field(default_factory=list)  # why some stats could not be measured
    reports: list[Any] = field(default_factory=list)  # the LaunchReport of every launch that ran
    outputs: dict[str, OutputValues] = field(default_factory=dict)   # each output against the spec, in order
    float64_lines: list[Any] = field(default_factory=list)   # per launch (with trace): precision.float64_lines
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "note": self.note,
            "status": self.status,
            "failures": [f.to_dict() for f in self.failures],
            "stats": stats_to_dict(self.stats) if self.stats is not None else None,
            "stats_complete": self.stats_complete,
            "unmeasured": list(self.unmeasured),
            "seconds": round(self.seconds, 4),
        }


@dataclass
class CheckResult:
    """The verdict on one solution file for one puzzle."""

    puzzle: str                 # slug
    number: int
    file: str
    passed: bool = False
    stars: int = 0
    max_stars: int = 1
    failures: list[Failure] = field(default_factory=list)
    cases: list[CaseResult] = field(default_factory=list)
    next_star: str | None = None
    notes: list[str] = field(default_factory=list)  # things the player should know that are not failures
    stdout: str = ""            # what the file and its kernels printed
    seed: int = 0               # the seed of the random cases: `check --seed N` replays this check
    reference_use: list[str] = field(default_factory=list)   # how the file used the reference solution
    ptx_checked: bool = False   # the kernels were compiled to PTX by numba-cuda as well
    seconds: float = 0.0
    debug: list[str] = field(default_factory=list)  # internal tracebacks, for bug reports only

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "puzzle": self.puzzle,
            "number": self.number,
            "file": self.file,
            "passed": self.passed,
            "stars": self.stars,
            "max_stars": self.max_stars,
            "next_star": self.next_star,
            "failures": [f.to_dict() for f in self.failures],
            "cases": [c.to_dict() for c in self.cases],
            "notes": list(self.notes),
            "stdout": self.stdout,
            "seed": self.seed,
            "reference_use": list(self.reference_use),
            "ptx_checked": self.ptx_checked,
            "seconds": round(self.seconds, 4),
        }
