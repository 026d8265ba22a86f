"""The compiled back end against the lanes back end: every launch through both must give identical outputs,
faults (kind, message, block, thread, line, count, order), metrics, counts, flops, phase trace and arrays.

What runs through both:

* every reference solution and every plausible wrong solution (``tests/puzzles/wrong``), on every case of its
  puzzle — wrong solutions bring out-of-bounds accesses, races, divergent barriers and uninitialised reads;
* the random-kernel generator of ``test_lanes_random.py`` (divergent ifs and loops, break/continue/return
  taken by some threads, short circuits, a device function with returns inside a loop);
* the benchmark kernels and the kernels numba's simulator is checked against (``diff_kernels.py``).

numba's compile time counts (seconds per kernel on two cores), so compiled kernels are shared through one disk
cache per test session (``compiled_cache``), and the suite's default run keeps to kernels that each cover
constructs the others do not (``FAST``, a kernel of the random generator, two benchmark kernels, the numba
simulator's): about two minutes cold. ``GPUSIM_COMPILED_FULL=1`` runs everything above (every solution and
wrong solution, 25 random kernels): tens of minutes, not in CI. A file that uses a construct the compiled back
end does not translate is skipped there, with the reason.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import os
from pathlib import Path

import numpy as np
import pytest
from backend_compare import report_differences, same_array
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from test_lanes_random import HEAD

import gpusim
from gpusim.observe.rounds import ROUND_KEYS

ROOT = Path(__file__).resolve().parents[2]
#: run every solution and random kernel (tens of minutes); without it, the kernels of ``FAST`` and the few below
FULL = os.environ.get("GPUSIM_COMPILED_FULL") == "1"
ONLY_FULL = pytest.mark.skipif(not FULL, reason="the full differential sweep: GPUSIM_COMPILED_FULL=1")
#: the files of the default run: each covers a feature of the compiled back end the others do not
FAST = ("map", "shared", "shared__no_barrier", "dot_product", "guard__off_by_one", "warp_reduce", "histogram",
        "blocks__thread_index_only")


#: files where the lanes back end widens a local whose type changes under a partial mask (``np.where`` of a float32
#: value and the local's old float64 lanes is float64), so it computes some float32 operations of the IR in
#: float64 and counts them as float64 FLOPs; the compiled back end keeps one storage per (local, type), as
#: numba's SSA does on the GPU. Their outputs, faults and memory metrics are still compared; their FLOP counts
#: by dtype are not.
LANES_WIDENING = {"online_softmax", "online_softmax__empty_pair_nan", "online_softmax__no_rescale", "cross_entropy"}


#: the step budget of the compared launches: every reference solution's case within it, a wrong solution's endless
#: loop stopped within a second
MAX_STEPS = 50_000_000


@pytest.fixture(scope="session", autouse=True)
def compiled_cache(tmp_path_factory):
    """One disk cache for the session's compiled kernels (each compiles once, whichever test asks first)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("GPUSIM_CACHE_DIR", str(tmp_path_factory.mktemp("gpusim_compiled")))
    yield
    mp.undo()


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"differential_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _launch_both(kernel, grid, block, args, shared_mem, kw):
    a = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    b = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    ra = gpusim.launch(kernel, grid, block, a, shared_mem, backend="lanes", **kw)
    rb = gpusim.launch(kernel, grid, block, b, shared_mem, backend="compiled", **kw)
    return ra, rb, a, b


def both(kernel, grid, block, args, shared_mem=0, ignore_flops=False, refusal_skips=False, **kw):
    """Launch through both back ends on copies of ``args``; fail with every difference. Instrumented with
    the phase trace unless ``kw`` says otherwise, then as far as the compiled back end computes it: a kernel
    with shared arrays without the trace (their snapshots are not compiled), a kernel with a loop the
    compiler unrolls at run time uninstrumented (its regrouped requests are not compiled). ``refusal_skips``:
    a kernel the compiled back end refuses (a construct it does not translate) skips the test with the
    reason."""
    kw.setdefault("instrument", True)
    kw.setdefault("trace", True)
    while True:
        try:
            ra, rb, a, b = _launch_both(kernel, grid, block, args, shared_mem, kw)
            break
        except gpusim.LaunchError as e:
            if kw["trace"] and kw["instrument"] and "snapshots of shared memory" in str(e):
                kw["trace"] = False
            elif kw["instrument"] and "unrolls at run time" in str(e):
                kw["instrument"] = False
            elif refusal_skips and "compiled back end cannot run" in str(e):
                pytest.skip(str(e))
            else:
                raise
    if ignore_flops:
        for r in (ra, rb):
            r.flops = {}
            r.metrics = {k: v for k, v in r.metrics.items() if not k.startswith("gpusim__flops")}
    if kw["instrument"]:     # the whole metrics dict is compared: the latency rounds are in it
        assert set(ROUND_KEYS) <= set(ra.metrics)
    diffs = report_differences(ra, rb)
    for k, (x, y) in enumerate(zip(a, b)):
        if isinstance(x, np.ndarray) and not same_array(x, y):
            diffs.append(f"argument {k} differs")
    assert not diffs, "\n".join(diffs)
    assert rb.extra.get("backend") == "compiled"
    return ra, rb, a


def _files():
    from puzzles.registry import all_puzzles

    out = []
    for p in all_puzzles():
        out.append((p, ROOT / "solutions" / p.solution_file))
        for w in sorted((ROOT / "tests" / "puzzles" / "wrong").glob(p.solution_file[:-3] + "__*.py")):
            # as benchmarks/compare_engines.py: files that never launch and the cheats that attack the judge
            if "expect=compile" not in w.read_text().splitlines()[0] and "__cheat_" not in w.name:
                out.append((p, w))
    return out


FILES = _files()
PARAMS = [pytest.param(p, path, id=path.stem, marks=() if path.stem in FAST else (pytest.mark.slow, ONLY_FULL))
          for p, path in FILES]


@pytest.mark.parametrize("puzzle, path", PARAMS)
def test_every_solution_runs_identically_on_both_back_ends(puzzle, path):
    mod = _load(path)
    for case in puzzle.make_cases():
        bufs = {k: copy.deepcopy(v) for k, v in case.buffers.items()}
        for step in case.launches:     # a multi-device case's launches in issue order, in one memory
            args = list(step.arg_values(bufs))
            ra, _, outs = both(getattr(mod, step.kernel), step.grid, step.block, args, step.shared_mem,
                               ignore_flops=path.stem in LANES_WIDENING, refusal_skips=path.stem not in FAST,
                               max_steps=MAX_STEPS)
            for name, new in zip(step.args, outs):  # the case's next step reads what this one wrote
                if isinstance(new, np.ndarray) and not isinstance(name, int):
                    bufs[name][...] = new
            if ra.faults:
                break


# ---------------------------------------------------------------------------------------------- random kernels

_names = itertools.count()


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("compiled_random_kernels")


def _random_case(folder, source):
    name = f"compiled_random_{next(_names)}"
    path = folder / f"{name}.py"
    path.write_text(source)
    return _load(path)


@pytest.mark.slow
@ONLY_FULL
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), geometry=st.sampled_from([(1, 48), (3, 16), (2, 24), (48, 1), (1, 40)]))
def test_random_kernels_run_identically_on_both_back_ends(folder, data, geometry):
    from test_lanes_random import N_IN, kernels

    source = data.draw(kernels())
    note(source)
    mod = _random_case(folder, source)
    grid, block = geometry
    a = (np.arange(N_IN) * 37 % 23 - 5).astype(np.int64)
    out = np.full((grid * block, 6), -1, np.int64)
    both(mod.kern, grid, block, (a, out), max_steps=MAX_STEPS)


# one kernel the generator drew (its head, the device function included, is the generator's own)
RANDOM_FAST = HEAD + '''    for k0 in range(x % 5):
        if (y > k0) and (dev(x, y) % 2 == 0):
            z += dev(z, k0) % 1009
            continue
        w1 = 0
        while w1 < 4 and x < 30:
            w1 += 1
            x = (x * 3 + 1) % 1009
            if x % 5 == 1:
                break
        if i % 11 == 3:
            return
        y = (y if x > y else z) % 1009
    out[i, 0] = x
    out[i, 1] = y
    out[i, 2] = z
    out[i, 3] = min(x, y) // 3 - (z % 4)
'''


def test_a_kernel_of_the_random_generator_runs_identically(folder):
    """Divergent loops with break/continue/return, short circuits, a device function returning in a loop."""
    mod = _random_case(folder, RANDOM_FAST)
    a = (np.arange(64) * 37 % 23 - 5).astype(np.int64)
    for grid, block in ((3, 16), (1, 40)):
        out = np.full((grid * block, 6), -1, np.int64)
        both(mod.kern, grid, block, (a, out), max_steps=MAX_STEPS)


# ---------------------------------------------------------------------------------------------- other kernels

@pytest.mark.slow
@pytest.mark.parametrize("name, size", [("block_sum", 1 << 12), ("matmul", 32)])   # map: FAST's "map"
def test_benchmark_kernels_run_identically(name, size):
    from benchmarks.cases import CASES

    kern, grid, block, args = CASES[name](size)
    both(kern, grid, block, args)


@pytest.mark.slow
def test_the_kernels_checked_against_numbas_simulator_run_identically():
    import diff_kernels as dk

    rng = np.random.default_rng(5)
    a = rng.standard_normal(300)
    both(dk.map_kernel, 3, 128, (a, np.zeros(300)))
    both(dk.zip_guard, 4, 100, (a, a[::-1].copy(), np.float64(2.5), 300, np.zeros(300)))
    m = rng.standard_normal((9, 11))
    both(dk.map_2d, (3, 3), (4, 4), (m, np.zeros_like(m)))
    both(dk.block_sum, 3, 128, (a, np.zeros(3)))
