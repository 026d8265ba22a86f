"""What a fault found under the drop-in does, and the exception it becomes.

A fault is raised the way numba's simulator raises a thread's exception — its message starts with
``tid=[x, y, z] ctaid=[x, y, z]:``, the thread and block that hit it — and it keeps gpusim's type, so a test can
catch ``gpusim.OutOfBounds`` or, as it would on numba's simulator, ``IndexError``.

The policy is ``raise`` or ``off`` for every kind, or per kind: ``"race=off,uninit=off"``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..faults import (
    BarrierDivergence,
    DataRace,
    KernelError,
    KernelFault,
    KernelTimeout,
    OutOfBounds,
    UninitializedRead,
)

#: policy name -> the fault class it governs
KINDS: dict[str, type] = {
    "oob": OutOfBounds, "race": DataRace, "divergence": BarrierDivergence, "uninit": UninitializedRead,
    "timeout": KernelTimeout, "limit": KernelError,
}
ACTIONS = ("raise", "off")


@dataclass(frozen=True)
class FaultPolicy:
    """The action for each kind of fault (``KINDS``)."""

    actions: tuple[tuple[str, str], ...] = tuple((k, "raise") for k in KINDS)

    @classmethod
    def parse(cls, text: str | None) -> FaultPolicy:
        """``None``/"raise"/"off", or comma-separated ``kind=action`` pairs over the default (all raise)."""
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
                raise ValueError(f"fault policy {text!r}: write raise, off, or kind=raise|off with kind one of "
                                 f"{', '.join(KINDS)}")
            actions[kind] = action
        return cls(tuple(actions.items()))

    def action(self, fault: KernelFault) -> str:
        for kind, action in self.actions:
            if isinstance(fault, KINDS[kind]):
                return action
        return "raise"

    def first_to_raise(self, faults: list[KernelFault]) -> KernelFault | None:
        return next((f for f in faults if self.action(f) == "raise"), None)


def is_limitation(fault: KernelFault) -> bool:
    """A Python error inside gpusim's code for the kernel (``__cause__`` is that error): gpusim, not the
    kernel, is the likelier culprit, so the drop-in treats it as a kernel gpusim cannot run."""
    return isinstance(fault, KernelError) and fault.__cause__ is not None


def as_raised(fault: KernelFault) -> KernelFault:
    """The fault as the drop-in raises it: numba's simulator's ``tid=[..] ctaid=[..]:`` prefix, same type."""
    if fault.thread is None or fault.block is None:
        return fault
    prefix = f"tid={list(fault.thread)} ctaid={list(fault.block)}: "
    return dataclasses.replace(fault, summary=prefix + fault.summary)
