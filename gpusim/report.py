"""``LaunchReport``: what one kernel launch did — faults, metrics, counts, trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .faults import KernelFault
from .observe.events import ArrayInfo, LaunchInfo


@dataclass(frozen=True)
class PrintRecord:
    """One line a thread printed with ``print()``: its block and thread (x, y, z), the source line, the text
    (without the newline), formatted as numba-cuda's printf formats it on the GPU."""

    block: tuple[int, int, int]
    thread: tuple[int, int, int]
    lineno: int
    text: str


@dataclass
class LaunchReport:
    """The result of ``gpusim.launch``.

    * ``faults`` — every ``KernelFault`` found, in the order found (one per kind, line and array; ``count``
      says how many lane-accesses hit it).
    * ``metrics`` — Nsight Compute metric names to values (filled by the instrumentation observers).
    * ``counts`` — per-thread and per-element access counts (``gpusim.metrics.AccessCounts``) or None.
    * ``trace`` — the per-block barrier-phase trace (``gpusim.trace.PhaseTrace``) or None.
    * ``flops`` — {dtype name: {op: count}} for floating-point work by active lanes (with ``instrument=True``).
    * ``arrays`` — every array the launch touched (global, const, shared, local).
    * ``shared_bytes_per_block`` — static + dynamic shared memory one block uses.
    * ``output`` — what the kernel printed (``PrintRecord``), in block order (linear id), then thread order,
      then the order each thread printed; at most ``launch(..., max_output_lines=)`` lines, and
      ``output_dropped`` counts the lines past that.
    * ``steps`` — the steps of work the launch was charged (``launch(..., max_steps=)`` is its budget; a
      launch needing ``steps`` runs to the end with ``max_steps=steps``).
    """

    launch: LaunchInfo
    faults: list[KernelFault] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    counts: Any = None
    trace: Any = None
    flops: dict[str, dict[str, int]] = field(default_factory=dict)
    arrays: list[ArrayInfo] = field(default_factory=list)
    shared_bytes_per_block: int = 0
    output: list[PrintRecord] = field(default_factory=list)
    output_dropped: int = 0
    steps: int = 0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.faults

    def raise_for_faults(self) -> None:
        """Raise the first fault, if any."""
        if self.faults:
            raise self.faults[0]

    def faults_of(self, cls: type) -> list[KernelFault]:
        return [f for f in self.faults if isinstance(f, cls)]

    def worst_bank_request(self):
        """The recorded shared-memory request whose busiest bank serves the most distinct words, bank by bank
        (``gpusim.observe.banks.BankRequest``), or None without a trace or shared loads and stores."""
        from .observe.banks import worst_request

        return worst_request(self.trace) if self.trace is not None else None

    def estimate(self, gpu: str = "H100 SXM"):
        """Roofline estimate of this launch's time on a named GPU (see ``gpusim.roofline``)."""
        from .roofline import estimate

        return estimate(self, gpu)
