"""The estimate at the puzzle's benchmark size (issue 10, item 8): 2^24 elements for a puzzle with bench(n),
its largest valid launch for one whose launch cannot grow; and the float64 work a Python number causes."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import cuda

import gpusim
from puzzles import registry
from puzzles.at_scale import REALISTIC_N, at_scale, target_size
from puzzles.precision import float64_lines, float64_work


def plus_ten(out, a):              # `+ 10` with float32 `a`: numba computes it in float64
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + 10


def plus_ten_f32(out, a):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + numba.float32(10)


def launch(kernel, n=40):
    a = np.arange(n, dtype=np.float32)
    return gpusim.launch(kernel, 2, 32, (np.zeros_like(a), a))


def test_a_python_number_makes_float64_work_and_float32_of_it_does_not():
    work = float64_work(launch(plus_ten))
    assert (work.flops, work.total) == (40, 40)            # one add per element of the 40, all float64
    assert float64_work(launch(plus_ten_f32)) is None


def test_a_puzzle_with_a_benchmark_is_scaled_to_two_to_the_24():
    report = launch(plus_ten)
    assert target_size(registry.get("blocks")) == (REALISTIC_N, "n = 2^24", "")
    scaled = at_scale(report, "H100 SXM", registry.get("blocks"))
    nbytes = report.metrics["dram__bytes_read.sum"] + report.metrics["dram__bytes_write.sum"]
    factor = REALISTIC_N / 40
    assert scaled.n == 40 and scaled.target == REALISTIC_N and scaled.factor == pytest.approx(factor)
    # by hand: scaled counts carry no launch geometry, so gpusim's time model falls back to the roofline at
    # the H100 SXM's achievable numbers: DRAM bytes / its copy bandwidth, float64 FLOPs / (34 TFLOP/s x the
    # fraction FMA chains reach), plus the launch (gpusim/timing_model.py)
    from gpusim.roofline import GPUS
    m = GPUS["H100 SXM"].machine
    memory = nbytes * factor / m.dram_bandwidth
    compute = 40 * factor / (34e12 * m.fp_efficiency)
    assert scaled.estimate.seconds == pytest.approx(max(memory, compute) + m.launch_s, rel=1e-9)
    assert scaled.estimate.bound == "memory"


def test_a_one_block_puzzle_is_scaled_only_to_its_largest_valid_launch():
    target = target_size(registry.get("map"))
    assert target[:2] == (1024, "its largest valid launch (n = 1,024)") and "one block by design" in target[2]
    scaled = at_scale(launch(plus_ten), "H100 SXM", registry.get("map"))
    assert scaled.target == 1024 and scaled.factor == pytest.approx(1024 / 40)


def test_a_launch_at_the_size_already_is_not_scaled():
    assert at_scale(launch(plus_ten), "H100 SXM", target=(40, "n = 40", "")) is None


TYPED_IR = float64_lines(plus_ten, (np.zeros(4, np.float32),) * 2) is not None
needs_typed_ir = pytest.mark.skipif(not TYPED_IR, reason="this gpusim has no typed kernel IR to read the lines from")


def line_of(func, text: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(func)
    return first + next(k for k, line in enumerate(lines) if text in line)


def accumulate(out, a):
    i = cuda.grid(1)
    acc = 0.0
    for j in range(4):
        acc += a[j]
    out[i] = acc * numba.float32(2) + a[i] * i


F32 = (np.zeros(64, np.float32), np.zeros(64, np.float32))


@needs_typed_ir
def test_the_line_a_python_number_promotes_is_named_with_the_number_as_written():
    (only,) = float64_lines(plus_ten, F32)
    assert only.line == line_of(plus_ten, "a[i] + 10") and only.source == "out[i] = a[i] + 10"
    assert only.causes == ("the number 10",) and only.function == "plus_ten"
    assert float64_lines(plus_ten_f32, F32) == ()


@needs_typed_ir
def test_a_float64_local_and_an_integer_are_named_as_the_causes():
    found = {p.line: p.causes for p in float64_lines(accumulate, F32)}
    start = line_of(accumulate, "acc = 0.0")
    assert found[line_of(accumulate, "acc += a[j]")] == (f"`acc`, float64 since line {start} (`acc = 0.0`)",)
    # acc is float64 already there, so only a[i] * i promotes: float32 times the int64 i
    assert found[line_of(accumulate, "out[i] =")] == ("`i`, an int64 (float32 with an int64 is float64)",)
    assert float64_lines(accumulate, (np.zeros(64, np.float64), np.zeros(64, np.float64))) == ()
