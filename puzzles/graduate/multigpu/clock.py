"""How a multi-GPU run is timed: the same loop for the puzzle's kernels and for the library's collective.

One iteration, on every rank at once::

    reset the case's arrays  ->  barrier  ->  spin  ->  event 0  ->  the run  ->  event 1

* **barrier**: a one-element all-reduce on the stream (NCCL), so every GPU starts the iteration within a
  few microseconds of the others — what the ranks of a collective do when they meet;
* **spin**: one thread sleeping on the GPU (``puzzles.graduate.kernels.spin``) for three times the longest
  host enqueue time of a run measured on any rank in the warm-up (at least 50 us): while it runs the host
  enqueues the whole run, so the events time the GPUs, not Python's launch calls (the reason is in
  ``puzzles.graduate.timing``). All ranks spin for the same time.
* **the time of an iteration** is the longest of the ranks' ``event 1 - event 0``: a collective is done
  when its last rank is. The report gives the median over ``iters`` iterations (after ``warmup``) and the
  95 % confidence interval of the median (``timing.median_ci``). nccl-tests averages a batch instead; a
  median is robust to the odd preempted iteration. No L2 flush: sizes from 1 MiB up cross the links, and
  from 64 MiB up exceed the 60 MB L2 anyway.

With gloo (``--dry-run``, ``--same-gpu``) gloo's own barrier and wall-clock time replace the events and
the spin; those times describe the CPU and its sockets, not a GPU.
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Any

MIN_SPIN_S = 50e-6
MAX_SPIN_S = 20e-3
SPIN_FACTOR = 3.0


class EventClock:
    """CUDA events on torch's current stream, NCCL's all-reduce as the barrier, numba-cuda's spin kernel."""

    def __init__(self, torch: Any, dist: Any, engine: Any):
        from ..kernels import spin

        self.torch, self.dist, self.engine = torch, dist, engine
        self.flag = torch.zeros(1, device=engine.device)
        self._spin = spin
        self._per_step = self._calibrate()

    def barrier(self) -> None:
        self.dist.all_reduce(self.flag)

    def spin(self, seconds: float) -> None:
        self._spin[1, 1, self.engine.stream](max(1, math.ceil(seconds / self._per_step)))

    def mark(self):
        event = self.torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def elapsed(self, a, b) -> float:
        return a.elapsed_time(b) * 1e-3

    def synchronize(self) -> None:
        self.engine.synchronize()

    def agree(self, value: float) -> float:
        """The largest ``value`` over the ranks."""
        t = self.torch.tensor([value], dtype=self.torch.float64, device=self.engine.device)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return float(t.item())

    def worst(self, values: list[float]) -> list[float]:
        t = self.torch.tensor(values, dtype=self.torch.float64, device=self.engine.device)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return [float(v) for v in t.tolist()]

    def _calibrate(self) -> float:
        steps = 400
        self._spin[1, 1, self.engine.stream](steps)
        a, b = self.mark(), None
        self._spin[1, 1, self.engine.stream](steps)
        b = self.mark()
        self.synchronize()
        return max(1e-7, self.elapsed(a, b) / steps)


class WallClock:
    """gloo: its barrier, and the host's clock after the device has finished its work."""

    gated = False

    def __init__(self, torch: Any, dist: Any, engine: Any):
        self.torch, self.dist, self.engine = torch, dist, engine

    def barrier(self) -> None:
        self.engine.synchronize()
        self.dist.barrier()

    def spin(self, seconds: float) -> None:
        pass

    def mark(self) -> float:
        self.engine.synchronize()
        return time.perf_counter()

    def elapsed(self, a: float, b: float) -> float:
        return b - a

    def synchronize(self) -> None:
        self.engine.synchronize()

    def agree(self, value: float) -> float:
        t = self.torch.tensor([value], dtype=self.torch.float64)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return float(t.item())

    def worst(self, values: list[float]) -> list[float]:
        t = self.torch.tensor(values, dtype=self.torch.float64)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return [float(v) for v in t.tolist()]


def measure(clock: Any, reset, run, warmup: int, iters: int) -> dict:
    """Time ``run`` (module docstring): every rank calls this at the same point with the same counts."""
    from ..timing import median_ci

    enqueue = []
    for _ in range(warmup):
        reset()
        clock.barrier()
        t0 = time.perf_counter()
        run()
        enqueue.append(time.perf_counter() - t0)
        clock.synchronize()
    spin = 0.0
    if getattr(clock, "gated", True):
        spin = min(MAX_SPIN_S, max(MIN_SPIN_S, SPIN_FACTOR * clock.agree(max(enqueue) if enqueue else 0.0)))
    marks = []
    for _ in range(iters):
        reset()
        clock.barrier()
        clock.spin(spin)
        a = clock.mark()
        run()
        b = clock.mark()
        marks.append((a, b))
    clock.synchronize()
    mine = [clock.elapsed(a, b) for a, b in marks]
    worst = clock.worst(mine)
    lo, hi = median_ci(worst)
    return {"median_s": statistics.median(worst), "ci_low_s": lo, "ci_high_s": hi, "min_s": min(worst),
            "samples": len(worst), "spin_s": spin, "enqueue_s": statistics.median(enqueue) if enqueue else None,
            "rank_median_s": statistics.median(mine)}
