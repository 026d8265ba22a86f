"""How graduate mode times a launch on the GPU: the measurement discipline, in one place.

One *sample* is one run of a case (all its launch steps) between two CUDA events on one stream::

    reset the buffers the case writes  ->  flush L2  ->  spin  ->  event 0  ->  the case's launches  ->  event 1

* **Warm-up.** ``WARMUP`` unmeasured runs first: the first launch of a kernel loads its module and builds
  numba's launch configuration; later ones do not.
* **Cold L2.** Before every sample a memset writes a buffer of ``flush_bytes`` (4x the L2, at least 256 MiB),
  which evicts whatever the previous sample left in the L2; the case's own buffers are restored before
  that, so the flush also evicts the restore. Every sample therefore starts from DRAM, as a kernel in a real
  program whose inputs were produced long before.
* **The event gap measures the GPU, not the host.** numba's launch of one kernel costs tens of microseconds
  of Python on the host. If the GPU is idle when event 0 is recorded, event 0 completes at once and the gap
  then includes the host's time to launch the kernel: a kernel of 5 us reads as 30 us, and at 2^24
  elements a map kernel reads at half its bandwidth (/work/shared/GPU_FACTS.md). A back-to-back batch of
  launches between two events does not cure this when one launch is shorter than the host's launch call:
  the GPU drains the queue faster than the host fills it, and the gap is still the host's. What cures it
  is to keep the GPU busy while the host enqueues: a *spin* kernel (one thread sleeping in
  ``nanosleep`` steps) runs just before event 0, for longer than the host needs to enqueue the case, so
  that by the time event 0 completes every launch of the case is already queued behind it. The spin
  touches no memory, so the L2 stays cold. The spin's length starts at ``SPIN_FACTOR`` times the measured
  host enqueue time (at least ``MIN_SPIN_S``) and is checked: if samples with a spin four times longer are
  faster, the host was still showing and the spin is lengthened. ``Timing.ungated_median_s`` keeps a
  few samples taken the naive way (the GPU idle when event 0 is recorded), to show what the host adds.
* **Adaptive repeats, median.** Samples are taken in groups of ``GROUP`` until the 95 % confidence interval
  of the median (order statistics, no assumption about the distribution) is within ``target_rel_ci`` of it,
  or ``max_samples`` are taken, or ``budget_s`` of wall time is spent (``min_samples`` first in any case).
  The reported time is the median: robust to the odd preempted sample.

The clock (``CudaClock``: a numba-cuda stream, events, the flush buffer and the spin kernel) is passed in,
so the logic is tested against a model of a host and a GPU (``tests/puzzles/test_graduate_timing.py``).
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any

WARMUP = 3
GROUP = 5
MIN_SPIN_S = 50e-6
MAX_SPIN_S = 20e-3
SPIN_FACTOR = 3.0
SPIN_CHECK_TOLERANCE = 0.02          # a 4x longer spin may be this much faster (relative) before it counts
SPIN_CHECK_SLACK_S = 0.5e-6          # ... plus this (about the resolution of CUDA events)
UNGATED_SAMPLES = 5


@dataclass
class Timing:
    """The result of ``measure``: seconds per run of the case (all its launches)."""

    median_s: float
    ci_low_s: float                    # 95 % confidence interval of the median
    ci_high_s: float
    samples_s: list[float] = field(repr=False)
    spin_s: float                      # the gate before event 0
    enqueue_s: float                   # host time to enqueue the case's launches (median of the warm-ups)
    flush_bytes: int
    ungated_median_s: float | None = None   # the same without the spin: what the host adds
    stopped: str = ""                  # why sampling stopped: "converged", "max_samples", "budget"

    @property
    def count(self) -> int:
        return len(self.samples_s)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["count"] = self.count
        return d


def median_ci(samples: list[float], z: float = 1.96) -> tuple[float, float]:
    """Distribution-free confidence interval of the median: the order statistics at ranks
    n/2 -+ z*sqrt(n)/2 (the binomial(n, 1/2) normal approximation), clipped to the sample."""
    xs = sorted(samples)
    n = len(xs)
    if n == 0:
        raise ValueError("no samples")
    half = z * math.sqrt(n) / 2
    lo = max(0, math.floor(n / 2 - half))
    hi = min(n - 1, math.ceil(n / 2 + half) - 1)
    return xs[lo], xs[max(lo, hi)]


def converged(samples: list[float], target_rel_ci: float) -> bool:
    """True when the median's confidence interval is within ``target_rel_ci`` of the median, each side."""
    m = statistics.median(samples)
    lo, hi = median_ci(samples)
    return m > 0 and (m - lo) <= target_rel_ci * m and (hi - m) <= target_rel_ci * m


def measure(launch: Any, clock: Any = None, *, min_samples: int = 10, max_samples: int = 200,
            budget_s: float = 2.0, target_rel_ci: float = 0.01, ungated: bool = True) -> Timing:
    """Time ``launch`` (see ``puzzles.graduate.backend.Launch``) on ``clock`` (a ``CudaClock`` by default)."""
    clock = clock if clock is not None else CudaClock.shared()
    enqueue = []
    for _ in range(WARMUP):
        launch.reset(clock.stream)
        t0 = clock.now()
        launch.enqueue(clock.stream)
        enqueue.append(clock.now() - t0)
        clock.synchronize()
    enqueue_s = statistics.median(enqueue)
    spin = min(MAX_SPIN_S, max(MIN_SPIN_S, SPIN_FACTOR * enqueue_s))
    while spin < MAX_SPIN_S:
        short = statistics.median(_samples(launch, clock, spin, GROUP))
        long = statistics.median(_samples(launch, clock, 4 * spin, GROUP))
        if short <= long * (1 + SPIN_CHECK_TOLERANCE) + SPIN_CHECK_SLACK_S:
            break
        spin = min(MAX_SPIN_S, 4 * spin)
    samples: list[float] = []
    started = clock.now()
    stopped = "max_samples"
    while len(samples) < max_samples:
        samples += _samples(launch, clock, spin, min(GROUP, max_samples - len(samples)))
        if len(samples) < min_samples:
            continue
        if converged(samples, target_rel_ci):
            stopped = "converged"
            break
        if clock.now() - started > budget_s:
            stopped = "budget"
            break
    lo, hi = median_ci(samples)
    gate_off = statistics.median(_ungated_samples(launch, clock, UNGATED_SAMPLES)) if ungated else None
    return Timing(median_s=statistics.median(samples), ci_low_s=lo, ci_high_s=hi, samples_s=samples,
                  spin_s=spin, enqueue_s=enqueue_s, flush_bytes=clock.flush_bytes, ungated_median_s=gate_off,
                  stopped=stopped)


def _samples(launch: Any, clock: Any, spin_s: float, count: int) -> list[float]:
    """``count`` samples enqueued back to back, then one synchronisation."""
    s = clock.stream
    pairs = []
    for _ in range(count):
        launch.reset(s)
        clock.flush(s)
        clock.spin(s, spin_s)
        e0, e1 = clock.event(), clock.event()
        e0.record(s)
        launch.enqueue(s)
        e1.record(s)
        pairs.append((e0, e1))
    clock.synchronize()
    return [clock.elapsed(e0, e1) for e0, e1 in pairs]


def _ungated_samples(launch: Any, clock: Any, count: int) -> list[float]:
    """The naive measurement, for comparison: the GPU is idle when event 0 is recorded."""
    s = clock.stream
    out = []
    for _ in range(count):
        launch.reset(s)
        clock.flush(s)
        clock.synchronize()
        e0, e1 = clock.event(), clock.event()
        e0.record(s)
        launch.enqueue(s)
        e1.record(s)
        clock.synchronize()
        out.append(clock.elapsed(e0, e1))
    return out


class CudaClock:
    """The real thing: a numba-cuda stream, timing events, an L2 flush buffer and a spin kernel."""

    _shared: CudaClock | None = None

    def __init__(self) -> None:
        from .cuda_module import cuda

        self.cuda = cuda()
        dev = self.cuda.get_current_device()
        l2 = int(getattr(dev, "L2_CACHE_SIZE", 0) or 0)
        self.flush_bytes = max(256 << 20, 4 * l2)
        self.stream = self.cuda.stream()
        self._flush = self.cuda.device_array(self.flush_bytes, dtype="uint8")
        from .kernels import spin

        self._spin_kernel = spin
        self._spin_per_step_s = self._calibrate()

    @classmethod
    def shared(cls) -> CudaClock:
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    def now(self) -> float:
        return time.perf_counter()

    def event(self):
        return self.cuda.event(timing=True)

    def elapsed(self, e0, e1) -> float:
        return e0.elapsed_time(e1) * 1e-3

    def synchronize(self) -> None:
        self.stream.synchronize()

    def flush(self, stream) -> None:
        from numba.cuda.cudadrv import driver

        driver.device_memset(self._flush, 0, self.flush_bytes, stream)

    def spin(self, stream, seconds: float) -> None:
        steps = max(1, math.ceil(seconds / self._spin_per_step_s))
        self._spin_kernel[1, 1, stream](steps)

    def _calibrate(self) -> float:
        """Seconds per ``nanosleep`` step of the spin kernel on this GPU (it sleeps roughly, not exactly)."""
        steps = 400
        self._spin_kernel[1, 1, self.stream](steps)          # load the module
        e0, e1 = self.event(), self.event()
        e0.record(self.stream)
        self._spin_kernel[1, 1, self.stream](steps)
        e1.record(self.stream)
        self.synchronize()
        return max(1e-7, self.elapsed(e0, e1) / steps)

