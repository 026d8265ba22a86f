"""The timing discipline (puzzles/graduate/timing.py) against a model of a host and a GPU sharing one stream.

The model: the host spends time on each call (``host_cost``); each enqueued operation runs on the GPU after
the previous one finishes and no earlier than the host enqueued it; an event completes when the GPU reaches
it. A kernel of 5 us launched by a host that needs 30 us per launch is the case numba-cuda is in at small
sizes: events around the launch alone read the host's 30 us; the discipline must read the GPU's 5 us.
"""

from __future__ import annotations

import statistics

import pytest

from puzzles.graduate import timing


class Model:
    """Host clock and GPU timeline of one stream."""

    def __init__(self):
        self.host = 0.0
        self.gpu = 0.0
        self.log: list[str] = []

    def op(self, name: str, host_cost: float, gpu_time: float) -> None:
        self.host += host_cost
        self.gpu = max(self.gpu, self.host) + gpu_time
        self.log.append(name)


class Event:
    def __init__(self, model: Model):
        self.model, self.time = model, None

    def record(self, stream) -> None:
        self.model.op("event", 1e-6, 0.0)
        self.time = self.model.gpu


class Clock:
    flush_bytes = 1 << 28

    def __init__(self, model: Model, flush_s: float = 2e-6):
        self.model, self.flush_s = model, flush_s
        self.stream = object()
        self.spins: list[float] = []

    def now(self) -> float:
        return self.model.host

    def event(self) -> Event:
        return Event(self.model)

    def elapsed(self, e0: Event, e1: Event) -> float:
        return e1.time - e0.time

    def synchronize(self) -> None:
        self.model.host = max(self.model.host, self.model.gpu)

    def flush(self, stream) -> None:
        self.model.op("flush", 2e-6, self.flush_s)

    def spin(self, stream, seconds: float) -> None:
        self.spins.append(seconds)
        self.model.op("spin", 5e-6, seconds)


class Launch:
    """A case of one kernel: ``kernel_s`` on the GPU, ``host_s`` of host time per launch call."""

    def __init__(self, model: Model, kernel_s: float, host_s, reset_s: float = 1e-6):
        self.model, self.kernel_s, self.host_s, self.reset_s = model, kernel_s, host_s, reset_s
        self.calls = 0

    def enqueue(self, stream) -> None:
        host = self.host_s(self.calls) if callable(self.host_s) else self.host_s
        self.calls += 1
        self.model.op("kernel", host, self.kernel_s)

    def reset(self, stream) -> None:
        self.model.op("reset", 3e-6, self.reset_s)

    def release(self) -> None:
        pass


def test_the_spin_hides_a_host_slower_than_the_kernel():
    model = Model()
    t = timing.measure(Launch(model, kernel_s=5e-6, host_s=30e-6), Clock(model))
    assert t.median_s == pytest.approx(5e-6, abs=1e-12)
    assert t.ungated_median_s == pytest.approx(30e-6 + 5e-6, rel=0.05)   # the naive way reads the host
    assert t.enqueue_s == pytest.approx(30e-6)
    assert t.spin_s >= 2 * t.enqueue_s


def test_a_long_kernel_needs_no_help_and_reads_its_own_time():
    model = Model()
    t = timing.measure(Launch(model, kernel_s=2e-3, host_s=30e-6), Clock(model))
    assert t.median_s == pytest.approx(2e-3, abs=1e-12)
    assert t.ungated_median_s == pytest.approx(2e-3, rel=0.05)


def test_the_spin_grows_when_the_warm_up_underestimated_the_host():
    """Fast enqueues during warm-up, slow ones afterwards (a host that got busy): the 4x check must see that
    a longer spin reads faster and lengthen the spin until the GPU's time shows."""
    model = Model()
    launch = Launch(model, kernel_s=5e-6, host_s=lambda k: 1e-6 if k < timing.WARMUP else 400e-6)
    clock = Clock(model)
    t = timing.measure(launch, clock)
    assert t.spin_s > 400e-6
    assert t.median_s == pytest.approx(5e-6, abs=1e-12)
    assert min(clock.spins) < 400e-6 and max(clock.spins) == 4 * t.spin_s   # the last check passed


def test_every_sample_restores_the_buffers_then_flushes_then_spins_before_the_first_event():
    model = Model()
    timing.measure(Launch(model, kernel_s=1e-4, host_s=10e-6), Clock(model), ungated=False)
    log = model.log[:]
    starts = [i for i, name in enumerate(log) if name == "kernel"][timing.WARMUP:]
    for i in starts:
        assert log[i - 4:i + 2] == ["reset", "flush", "spin", "event", "kernel", "event"], log[i - 4:i + 2]


def test_sampling_stops_when_the_median_is_pinned_down_and_never_before_min_samples():
    model = Model()
    t = timing.measure(Launch(model, kernel_s=1e-4, host_s=10e-6), Clock(model), min_samples=10)
    assert t.stopped == "converged" and 10 <= t.count <= 10 + timing.GROUP
    noisy_values = iter([1e-4 * (1 + 0.3 * ((k * 7919) % 13 - 6) / 6) for k in range(10_000)])
    model = Model()
    launch = Launch(model, kernel_s=0.0, host_s=10e-6)
    original = launch.enqueue

    def noisy(stream):
        original(stream)
        model.gpu += next(noisy_values)            # a kernel whose time jitters by +-30 %

    launch.enqueue = noisy
    t = timing.measure(launch, Clock(model), max_samples=40, budget_s=10.0)
    assert t.stopped == "max_samples" and t.count == 40


def test_median_ci_is_the_order_statistics_around_the_middle():
    xs = [float(v) for v in range(10)]           # n = 10: 1.96 * sqrt(10) / 2 = 3.10 -> ranks 1 and 8
    assert timing.median_ci(xs) == (1.0, 8.0)
    xs = [float(v) for v in range(100)]          # n = 100: 9.8 -> ranks 40 and 59
    assert timing.median_ci(xs) == (40.0, 59.0)
    assert timing.median_ci([3.0]) == (3.0, 3.0)
    assert timing.converged([1.0] * 10, 0.01)
    assert not timing.converged([1.0, 2.0] * 10, 0.01)
    assert statistics.median([1.0, 2.0] * 10) == 1.5
