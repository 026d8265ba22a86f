"""gpusim against numba's own CUDA simulator, on kernels the simulator runs correctly, with generated inputs.

Hypothesis generates the launches (sizes, values, block and grid shapes) for every kernel in
diff_kernels.py first; gpusim runs each in this process, and numba's simulator runs the whole batch once in a
subprocess (cudasim_runner.py with ``NUMBA_ENABLE_CUDASIM=1``: importing it here would replace numba.cuda).
Every array argument must come out the same. Integers must match exactly; floats to a few float32 ulps,
because numba's simulator computes ``float32 * 3`` in float32 (NumPy's rule) where numba-cuda and gpusim
widen to float64 as the GPU does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import diff_kernels as dk
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays as np_arrays

import gpusim

HERE = Path(__file__).resolve().parent
EXAMPLES_PER_KERNEL = 12


@dataclass
class Case:
    """One launch: a kernel of diff_kernels.py, its geometry and its arguments (arrays and typed scalars)."""

    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    args: list = field(default_factory=list)   # ("array", ndarray) | ("scalar", value, dtype name)

    def values(self) -> list:
        return [a[1].copy() if a[0] == "array" else np.dtype(a[2]).type(a[1]) for a in self.args]

    def describe(self) -> str:
        parts = [f"{self.kernel}[{self.grid}, {self.block}]"]
        for a in self.args:
            parts.append(f"  {a[1].dtype}{list(a[1].shape)} = {a[1].tolist()!r}" if a[0] == "array"
                         else f"  {a[2]}({a[1]!r})")
        return "\n".join(parts)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


BLOCKS_1D = st.sampled_from([1, 3, 8, 32, 33, 64, 100, 128])
INTS = st.integers(-1000, 1000)


def arrays(dtype, shape, elements):
    """Arrays whose every element is drawn (Hypothesis otherwise fills most of an array with one value)."""
    return np_arrays(dtype, shape, elements=elements, fill=st.nothing())


def float_elements(dtype: str):
    return st.floats(-1000, 1000, allow_nan=False, allow_infinity=False, width=32 if dtype == "float32" else 64)


@st.composite
def map_cases(draw):
    dtype = draw(st.sampled_from(["float32", "float64", "int32", "int64"]))
    n = draw(st.integers(1, 300))
    block = draw(BLOCKS_1D)
    grid = cdiv(n, block) + draw(st.integers(0, 2))
    elements = INTS if dtype.startswith("int") else float_elements(dtype)
    a = draw(arrays(dtype, n, elements=elements))
    return Case("map_kernel", (grid,), (block,), [("array", a), ("array", np.zeros(n, dtype))])


@st.composite
def zip_cases(draw):
    m = draw(st.integers(1, 250))
    n = draw(st.integers(0, m))
    block = draw(BLOCKS_1D)
    grid = max(1, cdiv(m, block))
    a = draw(arrays("float32", m, elements=float_elements("float32")))
    b = draw(arrays("float32", m, elements=float_elements("float32")))
    s = draw(st.floats(-4, 4, allow_nan=False))
    return Case("zip_guard", (grid,), (block,), [("array", a), ("array", b), ("scalar", s, "float64"),
                                                 ("scalar", n, "int64"), ("array", np.full(m, -7, np.float32))])


@st.composite
def map_2d_cases(draw):
    rows, cols = draw(st.integers(1, 20)), draw(st.integers(1, 20))
    bx, by = draw(st.sampled_from([(1, 1), (4, 4), (8, 2), (3, 5), (16, 16), (2, 32)]))
    grid = (cdiv(rows, bx) + draw(st.integers(0, 1)), cdiv(cols, by))
    a = draw(arrays("int64", (rows, cols), elements=INTS))
    return Case("map_2d", grid, (bx, by), [("array", a), ("array", np.zeros((rows, cols), np.int64))])


@st.composite
def block_sum_cases(draw):
    block = draw(st.sampled_from([1, 2, 8, 32, 64, 128]))
    n = draw(st.integers(1, 400))
    grid = cdiv(n, block) + draw(st.integers(0, 1))
    a = draw(arrays("float64", n, elements=st.integers(-10_000, 10_000).map(float)))
    return Case("block_sum", (grid,), (block,), [("array", a), ("array", np.zeros(grid))])


@st.composite
def matmul_cases(draw):
    m, k, n = (draw(st.integers(1, 10)) for _ in range(3))
    small = st.integers(-8, 8).map(float)
    a = draw(arrays("float32", (m, k), elements=small))
    b = draw(arrays("float32", (k, n), elements=small))
    t = dk.TILE
    return Case("matmul_tiled", (cdiv(n, t), cdiv(m, t)), (t, t),
                [("array", a), ("array", b), ("array", np.full((m, n), -1, np.float32))])


@st.composite
def divergent_cases(draw):
    n = draw(st.integers(1, 120))
    block = draw(BLOCKS_1D)
    a = draw(arrays("int64", n, elements=st.integers(0, 60)))
    limit = draw(st.integers(0, 40))
    return Case("divergent_loops", (cdiv(n, block),), (block,),
                [("array", a), ("scalar", limit, "int64"), ("array", np.zeros((n, 4), np.int64))])


@st.composite
def device_function_cases(draw):
    n = draw(st.integers(1, 150))
    block = draw(BLOCKS_1D)
    x = draw(arrays("float64", n, elements=st.integers(-50, 150).map(lambda v: v / 10)))
    table = np.sort(draw(arrays("float64", draw(st.integers(1, 8)), elements=st.integers(0, 100).map(float))))
    lo = draw(st.integers(-2, 5))
    hi = lo + draw(st.integers(0, 10))
    return Case("device_functions", (cdiv(n, block),), (block,),
                [("array", x), ("array", table), ("scalar", float(lo), "float64"), ("scalar", float(hi), "float64"),
                 ("array", np.zeros((n, 3)))])


@st.composite
def histogram_cases(draw):
    n = draw(st.integers(1, 300))
    block = draw(BLOCKS_1D)
    nbins = draw(st.integers(1, 16))
    a = draw(arrays("int64", n, elements=st.integers(0, 1000)))
    return Case("histogram", (cdiv(n, block),), (block,),
                [("array", a), ("scalar", nbins, "int64"), ("array", np.zeros(nbins, np.int32)),
                 ("array", np.zeros(1, np.int64))])


STRATEGIES = {
    "map_kernel": map_cases(), "zip_guard": zip_cases(), "map_2d": map_2d_cases(), "block_sum": block_sum_cases(),
    "matmul_tiled": matmul_cases(), "divergent_loops": divergent_cases(),
    "device_functions": device_function_cases(), "histogram": histogram_cases(),
}


def generate(strategy, n: int) -> list[Case]:
    """Draw ``n`` examples from a Hypothesis strategy up front (they are checked together, in one batch)."""
    found: list[Case] = []

    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(case):
        found.append(case)

    collect()
    return found


def run_cudasim(cases: list[Case], tmp: Path) -> list[dict[str, np.ndarray]]:
    """Run every case under numba's CUDA simulator in one subprocess; return each case's arrays afterwards."""
    arrays_in: dict[str, np.ndarray] = {}
    manifest = []
    for c, case in enumerate(cases):
        args = []
        for j, a in enumerate(case.args):
            if a[0] == "array":
                key = f"c{c}_{j}"
                arrays_in[key] = a[1]
                args.append({"array": key})
            else:
                args.append({"scalar": a[1], "dtype": a[2]})
        manifest.append({"kernel": case.kernel, "grid": list(case.grid), "block": list(case.block), "args": args})
    np.savez(tmp / "in.npz", __manifest__=np.array(json.dumps(manifest)), **arrays_in)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, str(HERE / "cudasim_runner.py"), str(HERE / "diff_kernels.py"),
                           str(tmp / "in.npz"), str(tmp / "out.npz")], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"numba's CUDA simulator failed:\n{proc.stderr[-3000:]}"
    out = np.load(tmp / "out.npz")
    return [{j: out[f"c{c}_{j}"] for j, a in enumerate(case.args) if a[0] == "array"}
            for c, case in enumerate(cases)]


@dataclass
class Outcome:
    case: Case
    ours: dict[int, np.ndarray]
    theirs: dict[int, np.ndarray]
    faults: list


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, list[Outcome]]:
    cases = [c for name in STRATEGIES for c in generate(STRATEGIES[name], EXAMPLES_PER_KERNEL)]
    ours = []
    for case in cases:
        values = case.values()
        report = gpusim.launch(getattr(dk, case.kernel), case.grid, case.block, values)
        ours.append(({j: v for j, v in enumerate(values) if isinstance(v, np.ndarray)}, report.faults))
    theirs = run_cudasim(cases, tmp_path_factory.mktemp("cudasim"))
    result: dict[str, list[Outcome]] = {}
    for case, (mine, fs), other in zip(cases, ours, theirs):
        result.setdefault(case.kernel, []).append(Outcome(case, mine, other, fs))
    return result


@pytest.mark.parametrize("kernel", list(STRATEGIES))
def test_gpusim_matches_numbas_cuda_simulator(outcomes, kernel):
    runs = outcomes[kernel]
    assert len(runs) >= EXAMPLES_PER_KERNEL // 2, "Hypothesis generated too few launches"
    for o in runs:
        assert not o.faults, f"{o.case.describe()}\n" + "\n".join(str(f) for f in o.faults)
        for j, want in o.theirs.items():
            got = o.ours[j]
            assert got.dtype == want.dtype and got.shape == want.shape
            msg = f"argument {j} differs for\n{o.case.describe()}\ngpusim:  {got.tolist()}\ncudasim: {want.tolist()}"
            if got.dtype.kind == "f":
                scale = max(1.0, float(np.abs(want).max(initial=0)))
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 * scale, err_msg=msg)
            else:
                np.testing.assert_array_equal(got, want, err_msg=msg)


def test_the_kernels_really_compute_something(outcomes):
    """Guard against a vacuous comparison: the outputs are not just the untouched inputs."""
    o = outcomes["map_kernel"][0]
    a = o.case.args[0][1]
    np.testing.assert_allclose(o.theirs[1], a.astype(np.float64) * 3 - 1, rtol=1e-6, atol=1e-3)
    assert any(int(r.theirs[2].sum()) > 0 for r in outcomes["histogram"])
