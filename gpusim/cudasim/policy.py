"""What a fault found under the drop-in does, and the exception it becomes.

A fault is raised the way numba's simulator raises a thread's exception — its message starts with
``tid=[x, y, z] ctaid=[x, y, z]:``, the thread and block that hit it — and it keeps gpusim's type, so a test can
catch ``gpusim.OutOfBounds`` or, as it would on numba's simulator, ``IndexError``.

The policy is an action for every kind, or per kind (``"race=raise,uninit=off"``): ``raise`` the fault,
``report`` it (one line on stderr per kernel and kind, naming the block, thread and line; the launch's results
stand), or ``off``. By default a fault a GPU turns into a crash or an error is raised (out of bounds, a divergent
barrier, a launch past its step budget or a limit) and a hazard that a GPU runs through with a result that may
differ from run to run is reported (a data race, a read of shared memory no thread wrote, a barrier skipped by
threads on their way out of the kernel, which a GPU passes once they have exited): a test suite that
passed on numba's simulator still passes, and says where its kernels are unsafe. ``raise`` makes every kind
an error (``GPUSIM_CUDASIM_FAULTS=raise``, ``pytest --gpusim-faults=raise``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..faults import (
    BarrierDivergence,
    DataRace,
    KernelError,
    KernelFault,
    KernelRaised,
    KernelTimeout,
    OutOfBounds,
    UninitializedRead,
)

#: policy name -> the fault class it governs ("skipped": a barrier skipped only by threads leaving the kernel,
#: ``BarrierDivergence.skipped_by_exiting``; "divergence": every other)
KINDS: dict[str, type] = {
    "oob": OutOfBounds, "race": DataRace, "skipped": BarrierDivergence, "divergence": BarrierDivergence,
    "uninit": UninitializedRead, "timeout": KernelTimeout, "limit": KernelError,
}
ACTIONS = ("raise", "report", "off")
#: the kinds a GPU runs through without an error: reported by default
HAZARDS = ("race", "uninit", "skipped")


def _governs(kind: str, fault: KernelFault) -> bool:
    if not isinstance(fault, KINDS[kind]):
        return False
    if isinstance(fault, BarrierDivergence):
        return fault.skipped_by_exiting == (kind == "skipped")
    return True


@dataclass(frozen=True)
class FaultPolicy:
    """The action for each kind of fault (``KINDS``)."""

    actions: tuple[tuple[str, str], ...] = tuple((k, "report" if k in HAZARDS else "raise") for k in KINDS)

    @classmethod
    def parse(cls, text: str | None) -> FaultPolicy:
        """``None`` (the default), an action for every kind, or comma-separated ``kind=action`` pairs over the
        default."""
        actions = dict(cls().actions)
        if text is None or not text.strip():
            return cls(tuple(actions.items()))
        for part in text.split(","):
            part = part.strip()
            if part in ACTIONS:
                actions = dict.fromkeys(actions, part)
                continue
            kind, _, action = part.partition("=")
            kind, action = kind.strip(), action.strip()
            if kind not in KINDS or action not in ACTIONS:
                raise ValueError(f"fault policy {text!r}: write raise, report, off, or kind=raise|report|off with "
                                 f"kind one of {', '.join(KINDS)}")
            actions[kind] = action
        return cls(tuple(actions.items()))

    def action(self, fault: KernelFault) -> str:
        for kind, action in self.actions:
            if _governs(kind, fault):
                return action
        return "raise"

    def first_to_raise(self, faults: list[KernelFault]) -> KernelFault | None:
        return next((f for f in faults if self.action(f) == "raise"), None)

    def to_report(self, faults: list[KernelFault]) -> list[KernelFault]:
        return [f for f in faults if self.action(f) == "report"]


def kind_of(fault: KernelFault) -> str:
    """The policy's name for the fault's kind ("race", "uninit", ...)."""
    return next((k for k in KINDS if _governs(k, fault)), "fault")


def report_line(where: str, fault: KernelFault) -> str:
    """The one line the drop-in writes for a reported fault: kernel, kind, block, thread, line, what."""
    block = "" if fault.block is None else f" block {tuple(fault.block)} thread {tuple(fault.thread)}"
    more = f" ({fault.count} accesses at this line)" if fault.count > 1 else ""
    return (f"gpusim: kernel {where}: {kind_of(fault)} at {fault.where}{block}: {fault.summary}{more} "
            f"[reported, not raised: GPUSIM_CUDASIM_FAULTS=raise makes it an error]")


def is_limitation(fault: KernelFault) -> bool:
    """A Python error inside gpusim's code for the kernel (``__cause__`` is that error): gpusim, not the
    kernel, is the likelier culprit, so the drop-in treats it as a kernel gpusim cannot run."""
    return isinstance(fault, KernelError) and fault.__cause__ is not None


def as_raised(fault: KernelFault) -> BaseException:
    """The fault as the drop-in raises it: numba's simulator's ``tid=[..] ctaid=[..]:`` prefix, same type; the
    kernel's own ``raise`` as the exception it raised, its message so prefixed (as numba's simulator does)."""
    if fault.thread is None or fault.block is None:
        return fault
    prefix = f"tid={list(fault.thread)} ctaid={list(fault.block)}"
    if isinstance(fault, KernelRaised) and fault.exception is not None:
        exc = fault.exception
        made = exc() if isinstance(exc, type) else exc
        text = str(made)
        try:
            return type(made)(f"{prefix}: {text}" if text else prefix)
        except Exception:  # an exception class whose constructor wants other arguments: as it was made
            return made
    return dataclasses.replace(fault, summary=f"{prefix}: {fault.summary}")
