"""Choosing a back end, the compiled back end's disk cache, and what it says when it cannot run a kernel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from simkit import load_module

import gpusim
from gpusim import LaunchError, Observer
from gpusim.backends.compiled import driver, entry

ROOT = Path(__file__).resolve().parents[2]

MAP = """
    from numba import cuda

    @cuda.jit
    def add_one(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = a[i] + 1
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(folder))
    return folder


def test_compiled_launch_computes_the_kernel_and_says_which_back_end_ran(tmp_path, cache):
    mod = load_module(tmp_path, MAP)
    a = np.arange(100, dtype=np.float32)
    out = np.zeros_like(a)
    report = gpusim.launch(mod.add_one, 2, 64, (a, out), backend="compiled", instrument=False)
    np.testing.assert_array_equal(out, a + 1)
    assert report.extra["backend"] == "compiled" and not report.faults
    assert list(cache.glob("k_*.py")), "the generated source is in the cache folder"


def test_auto_runs_small_launches_on_the_lanes_back_end_without_generating_code(tmp_path, cache, monkeypatch):
    mod = load_module(tmp_path, MAP)

    def refuse(*args, **kwargs):
        raise AssertionError("auto generated compiled code for a small launch with nothing cached")

    monkeypatch.setattr(entry, "generate", refuse)
    a = np.arange(100, dtype=np.float32)
    out = np.zeros_like(a)
    report = gpusim.launch(mod.add_one, 2, 64, (a, out), backend="auto", instrument=False)
    np.testing.assert_array_equal(out, a + 1)
    assert "backend" not in report.extra
    assert not list(cache.glob("k_*")), "nothing was written to the compiled cache"


def test_auto_runs_compiled_once_the_kernel_is_compiled_in_this_process(tmp_path, cache):
    mod = load_module(tmp_path, MAP)
    a = np.arange(100, dtype=np.float32)
    gpusim.launch(mod.add_one, 2, 64, (a, np.zeros_like(a)), backend="compiled", instrument=False)
    out = np.zeros_like(a)
    report = gpusim.launch(mod.add_one, 2, 64, (a, out), backend="auto", instrument=False)
    assert report.extra.get("backend") == "compiled"
    np.testing.assert_array_equal(out, a + 1)


def test_auto_starts_a_compile_for_a_large_cold_launch(tmp_path, cache, monkeypatch):
    mod = load_module(tmp_path, MAP)
    monkeypatch.setattr(entry, "AUTO_COLD_THREADS", 1024)
    a = np.arange(2048, dtype=np.float32)
    out = np.zeros_like(a)
    assert gpusim.launch(mod.add_one, 8, 256, (a, out), backend="auto", instrument=False).extra.get("backend") \
        == "compiled"
    np.testing.assert_array_equal(out, a + 1)


def test_a_construct_that_is_not_compiled_is_named_and_auto_falls_back(tmp_path, cache):
    mod = load_module(tmp_path, """
        from numba import cuda

        @cuda.jit
        def talk(out):
            i = cuda.grid(1)
            print("thread", i)
            out[i] = i
    """)
    out = np.zeros(64, np.int64)
    with pytest.raises(LaunchError, match=r"compiled back end cannot run kernel 'talk' yet: print\(\) is not"):
        gpusim.launch(mod.talk, 1, 64, (out,), backend="compiled", instrument=False)
    report = gpusim.launch(mod.talk, 1, 64, (out,), backend="auto", instrument=False)
    assert len(report.output) == 64 and "backend" not in report.extra


def test_custom_observers_and_the_full_trace_stay_on_the_lanes_back_end(tmp_path, cache):
    mod = load_module(tmp_path, MAP)
    a = np.arange(64, dtype=np.float32)

    class Counter(Observer):
        seen = 0

        def on_access(self, ev):
            Counter.seen += 1

    with pytest.raises(LaunchError, match="custom observers"):
        gpusim.launch(mod.add_one, 1, 64, (a, np.zeros_like(a)), observers=[Counter()], backend="compiled",
                      instrument=False)
    gpusim.launch(mod.add_one, 1, 64, (a, np.zeros_like(a)), observers=[Counter()], backend="auto")
    assert Counter.seen == 2


SHARED_COPY = """
    from numba import cuda
    import numpy as np

    @cuda.jit
    def through_shared(a, out):
        t = cuda.threadIdx.x
        sh = cuda.shared.array(64, np.float32)
        sh[t] = a[t]
        cuda.syncthreads()
        out[t] = sh[63 - t]
"""


def test_instrumented_launches_run_compiled_except_a_traced_kernel_with_shared_arrays(tmp_path, cache, monkeypatch):
    """``launch`` defaults to the lanes back end; an instrumented launch runs compiled (``auto`` picks it by the
    same rules as an uninstrumented one), with the latency rounds in its metrics; the phase trace's snapshots
    of shared memory are not compiled, so a traced launch of a kernel with shared arrays is refused with the
    reason (``compiled``) or runs on the lanes back end (``auto``)."""
    mod = load_module(tmp_path, MAP)
    monkeypatch.setattr(entry, "AUTO_COLD_THREADS", 1)
    a = np.arange(64, dtype=np.float32)
    assert "backend" not in gpusim.launch(mod.add_one, 1, 64, (a, np.zeros_like(a))).extra
    report = gpusim.launch(mod.add_one, 1, 64, (a, np.zeros_like(a)), backend="compiled")
    # 64 float32 = 256 bytes = 4 segments, first touched by one load per warp: one DRAM round per block
    assert report.extra["backend"] == "compiled" and report.metrics["gpusim__rounds_dram_sum"] == 1
    assert report.trace is not None and len(report.trace.table) == 128      # 64 loads, 64 stores
    assert gpusim.launch(mod.add_one, 1, 64, (a, np.zeros_like(a)), backend="auto").extra["backend"] == "compiled"
    shared = load_module(tmp_path, SHARED_COPY)
    with pytest.raises(LaunchError, match=r"does not record the phase trace's snapshots of shared memory"):
        gpusim.launch(shared.through_shared, 1, 64, (a, np.zeros_like(a)), backend="compiled")
    assert "backend" not in gpusim.launch(shared.through_shared, 1, 64, (a, np.zeros_like(a)), backend="auto").extra
    out = np.zeros_like(a)
    report = gpusim.launch(shared.through_shared, 1, 64, (a, out), backend="compiled", trace=False)
    np.testing.assert_array_equal(out, a[::-1])
    assert report.metrics["gpusim__barriers_sum"] == 1 and report.metrics["gpusim__rounds_shared_sum"] == 1


ENDLESS = """
    from numba import cuda

    @cuda.jit
    def spin(a, out):
        i = cuda.grid(1)
        k = 0
        while a[i % a.size] >= 0:          # never false: every a[...] is >= 0
            k += 1
        out[i] = k

    @cuda.jit
    def spin_all(out):
        x = 0
        while True:                         # every thread together, left only by the step budget
            x += 1
        out[0] = x
"""


def test_the_step_budget_stops_both_back_ends_at_the_same_step(tmp_path, cache):
    """The compiled back end charges the lanes back end's work per loop iteration and function entry, so a
    launch past ``max_steps`` ends at the same line, thread and step count (the steps are numbers of
    ``gpusim.backends.lanes.work``, not of the implementation)."""
    from backend_compare import report_differences

    mod = load_module(tmp_path, ENDLESS)
    reports = []
    for backend in ("lanes", "compiled"):
        a = np.arange(100, dtype=np.float32)
        reports.append(gpusim.launch(mod.spin, 2, 64, (a, np.zeros(128, np.int64)), backend=backend,
                                     instrument=False, max_steps=3_000_000))
    lanes, compiled = reports
    assert [type(f).__name__ for f in compiled.faults] == ["KernelTimeout"] and compiled.faults[0].thread == (0, 0, 0)
    assert compiled.steps > 3_000_000 and not report_differences(lanes, compiled)
    # a uniform loop of scalar work only, which numba miscompiles into a crash: refused, and auto runs it on lanes
    with pytest.raises(LaunchError, match="the uniform loop at line .* does only scalar work"):
        gpusim.launch(mod.spin_all, 1, 32, (np.zeros(1, np.int64),), backend="compiled", instrument=False)
    report = gpusim.launch(mod.spin_all, 1, 32, (np.zeros(1, np.int64),), backend="auto", instrument=False,
                           max_steps=1_000_000)
    assert [type(f).__name__ for f in report.faults] == ["KernelTimeout"] and "backend" not in report.extra


def test_an_unknown_back_end_is_a_launch_error(tmp_path):
    mod = load_module(tmp_path, MAP)
    a = np.arange(4, dtype=np.float32)
    with pytest.raises(LaunchError, match="backend must be one of 'auto', 'lanes', 'compiled'"):
        gpusim.launch(mod.add_one, 1, 4, (a, np.zeros_like(a)), backend="gpu")


def test_jit_passes_its_launch_options_to_every_launch(tmp_path, cache):
    mod = load_module(tmp_path, MAP)
    k = gpusim.jit(mod.add_one, backend="compiled", instrument=False, device=False)
    a = np.arange(10, dtype=np.float32)
    out = np.zeros_like(a)
    k[1, 32](a, out)
    assert k.last_report.extra["backend"] == "compiled"
    np.testing.assert_array_equal(out, a + 1)


def test_the_same_kernel_on_other_argument_types_or_aliasing_is_another_specialisation(tmp_path, cache):
    mod = load_module(tmp_path, MAP)
    a = np.arange(64, dtype=np.float32)
    gpusim.launch(mod.add_one, 1, 64, (a, np.zeros_like(a)), backend="compiled", instrument=False)
    b = np.arange(64, dtype=np.int64)
    out = np.zeros(64, np.int64)
    gpusim.launch(mod.add_one, 1, 64, (b, out), backend="compiled", instrument=False)
    np.testing.assert_array_equal(out, b + 1)
    same = np.arange(64, dtype=np.float64)
    gpusim.launch(mod.add_one, 1, 64, (same, same), backend="compiled", instrument=False)   # one array passed twice
    np.testing.assert_array_equal(same, np.arange(64) + 1)
    assert len(list(cache.glob("k_*.py"))) == 3


_SECOND = """
import json, sys
sys.path.insert(0, sys.argv[1])
import importlib.util
import numpy as np
import gpusim
spec = importlib.util.spec_from_file_location("cached_kernel", sys.argv[2])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
a = np.arange(100, dtype=np.float32)
out = np.zeros_like(a)
r = gpusim.launch(mod.add_one, 2, 64, (a, out), backend="compiled", instrument=False)
from gpusim.backends.compiled.driver import _kernels
ck = next(iter(next(iter(_kernels.values())).values()))
stats = ck.run.stats
hits = {str(k): v for k, v in stats.cache_hits.items()}
misses = {str(k): v for k, v in stats.cache_misses.items()}
print(json.dumps({"ok": bool((out == a + 1).all()), "hits": hits, "misses": misses}))
"""


def test_a_second_process_loads_the_compiled_kernel_from_the_disk_cache(tmp_path, cache):
    path = tmp_path / "cached_kernel.py"
    path.write_text(textwrap.dedent(MAP))
    env = dict(os.environ, GPUSIM_CACHE_DIR=str(cache))
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _SECOND, str(ROOT), str(path)], capture_output=True, text=True,
                             env=env, timeout=900)
        assert out.returncode == 0, out.stderr[-3000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert runs[0]["ok"] and runs[1]["ok"]
    assert sum(runs[0]["misses"].values()) == 1 and not runs[0]["hits"]
    assert sum(runs[1]["hits"].values()) == 1 and not runs[1]["misses"], "the second process compiled again"


def test_the_cache_folder_follows_xdg_cache_home(monkeypatch, tmp_path):
    from gpusim.backends.compiled.cache import cache_dir

    monkeypatch.delenv("GPUSIM_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "gpusim" / "compiled"
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


_ = driver


RACY = """
    from numba import cuda

    @cuda.jit
    def last_writer(a, out, hist):
        i = cuda.grid(1)
        if i < a.size:
            out[i % 1000] = a[i]                 # blocks of different chunks write one element
            cuda.atomic.add(hist, i % 7, 1)      # and update bins together
"""


@pytest.mark.parametrize("kernel_source, name", [(MAP, "add_one"), (RACY, "last_writer")])
def test_the_report_is_the_same_whatever_the_thread_count(tmp_path, cache, monkeypatch, kernel_source, name):
    """Two chunks of blocks (2^17 threads) on one thread and on two: identical reports and outputs, and
    identical to the lanes back end, including a race between blocks of different chunks."""
    from backend_compare import report_differences, same_array

    mod = load_module(tmp_path, kernel_source)
    monkeypatch.setattr(driver, "SPLIT", "always")   # a map this size runs faster on one thread: split it anyway
    n = 1 << 17
    a = np.arange(n, dtype=np.float32)

    def args():
        return (a, np.zeros(n, np.float32)) if name == "add_one" else (a, np.zeros(1000, np.float32),
                                                                       np.zeros(7, np.int64))

    runs = []
    for backend, threads in (("lanes", "1"), ("compiled", "1"), ("compiled", "2")):
        monkeypatch.setenv("GPUSIM_THREADS", threads)
        x = args()
        runs.append((gpusim.launch(getattr(mod, name), n // 256, 256, x, backend=backend, instrument=False), x))
    for report, x in runs[1:]:
        assert not report_differences(runs[0][0], report)
        assert all(same_array(p, q) for p, q in zip(runs[0][1], x))
    if name == "last_writer":
        f = runs[2][0].faults[0]
        assert type(f).__name__ == "DataRace" and f.other_block != f.block
        assert runs[2][0].extra["threads"] == 1, "the race between workers made it run on one thread"
    else:
        assert runs[2][0].extra["threads"] == 2


#: constructs the front end gained after the compiled back end was written; each is refused with its reason
#: (so auto runs it on lanes) until the compiled back end translates it identically
NEW_CONSTRUCTS = """
    from numba import cuda

    @cuda.jit
    def raises(a, out):
        i = cuda.grid(1)
        if a[i] < 0:
            raise ValueError("negative input")
        out[i] = a[i]

    @cuda.jit
    def grid_synced(a, out):
        i = cuda.grid(1)
        out[i] = a[i]
        cuda.cg.this_grid().sync()
        out[i] += a[(i + 1) % a.size]

    @cuda.jit
    def complex_math(a, out):
        i = cuda.grid(1)
        z = complex(a[i], 1.0)
        out[i] = (z * z).real

    @cuda.jit
    def row_view(m, out):
        i = cuda.grid(1)
        row = m[i, :]
        out[i] = row[0] + row[1]

    @cuda.jit
    def from_tuple(t, out):
        i = cuda.grid(1)
        out[i] = t[0] + t[1]

    @cuda.jit
    def copy_any(a, out):
        i = cuda.grid(1)
        out[i] = a[i]
"""


def _new_construct_launches():
    f = np.arange(32, dtype=np.float64)
    rec = np.zeros(32, dtype=[("x", np.float64), ("y", np.int32)])
    return [
        ("raises", (f, np.zeros(32)), "the kernel's own raise"),
        ("grid_synced", (f, np.zeros(32)), r"a grid group's sync\(\)"),
        ("complex_math", (f, np.zeros(32)), "complex128 are not compiled"),
        ("row_view", (np.ones((32, 4)), np.zeros(32)), "ArrayView expressions"),
        ("from_tuple", ((1.0, 2.0), np.zeros(32)), "argument 0 is a tuple"),
        ("copy_any", (f.astype(np.float16), np.zeros(32, np.float16)), "array of float16"),
        ("copy_any", (np.arange(32).astype("datetime64[s]"), np.zeros(32, "datetime64[s]")), "datetime64"),
        ("copy_any", (rec, rec.copy()), r"array of \[\("),
    ]


def test_constructs_new_to_the_front_end_are_refused_with_the_reason_and_auto_runs_them_on_lanes(tmp_path, cache):
    mod = load_module(tmp_path, NEW_CONSTRUCTS)
    for name, args, reason in _new_construct_launches():
        kernel = getattr(mod, name)
        with pytest.raises(LaunchError, match=f"compiled back end cannot run kernel {name!r} yet: .*{reason}"):
            gpusim.launch(kernel, 1, 32, args, backend="compiled", instrument=False)
        want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        lanes = gpusim.launch(kernel, 1, 32, want, backend="lanes", instrument=False)
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        auto = gpusim.launch(kernel, 1, 32, got, backend="auto", instrument=False)
        assert "backend" not in auto.extra, name
        assert [str(f) for f in auto.faults] == [str(f) for f in lanes.faults], name
        for x, y in zip(want, got):
            if isinstance(x, np.ndarray):
                np.testing.assert_array_equal(x, y)
    assert not list(cache.glob("k_*")), "a refused kernel generates nothing"


NAN_TO_INT = """
    from numba import cuda
    import numpy as np

    @cuda.jit
    def convert(x32, x64, out):
        i = cuda.grid(1)
        if i < x32.size:
            out[i, 0] = np.int32(x32[i])
            out[i, 1] = np.int32(x64[i])
            out[i, 2] = np.int64(x32[i])
            out[i, 3] = np.uint32(x64[i])
"""


def test_a_nan_converts_to_an_integer_as_the_gpu_converts_it(tmp_path, cache):
    """The H200's answers (docs/gpu-semantics.md): 0 from a float32 to a 32-bit integer, the top bit alone from a
    float64 or to a 64-bit integer; infinities and finite values saturate and truncate as PTX cvt.rzi does."""
    mod = load_module(tmp_path, NAN_TO_INT)
    x = np.array([np.nan, np.inf, -np.inf, -2.5, 3.9e9], np.float64)
    out = np.zeros((5, 4), np.int64)
    report = gpusim.launch(mod.convert, 1, 32, (x.astype(np.float32), x, out), backend="compiled", instrument=False)
    assert report.extra["backend"] == "compiled" and not report.faults
    i32, u32 = np.iinfo(np.int32), np.iinfo(np.uint32)
    np.testing.assert_array_equal(out[0], [0, -2**31, -2**63, 2**31])
    np.testing.assert_array_equal(out[1:, 0], [i32.max, i32.min, -2, i32.max])
    np.testing.assert_array_equal(out[1:, 3], [u32.max, 0, 0, 3_900_000_000])


EXITING_BARRIER = """
    from numba import cuda

    @cuda.jit
    def guarded_sync(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = a[i]
            cuda.syncthreads()
            out[i] += a[a.size - 1 - i]

    @cuda.jit(device=True)
    def fact(n):
        if n <= 1:
            return 1
        return n * fact(n - 1)

    @cuda.jit
    def factorials(out):
        i = cuda.grid(1)
        out[i] = fact(i % 6)
"""


def test_a_barrier_skipped_only_by_leaving_threads_is_the_same_fault_and_recursion_is_refused(tmp_path, cache):
    """Threads past the guard leave the kernel without reaching the barrier: both back ends report the barrier
    marked ``skipped_by_exiting`` (gpusim.backends.lanes.barriers), with the same words."""
    from backend_compare import report_differences

    mod = load_module(tmp_path, EXITING_BARRIER)
    reports = []
    for backend in ("lanes", "compiled"):
        a = np.arange(40, dtype=np.float64)
        reports.append(gpusim.launch(mod.guarded_sync, 1, 64, (a, np.zeros(40)), backend=backend, instrument=False))
    lanes, compiled = reports
    assert [type(f).__name__ for f in compiled.faults] == ["BarrierDivergence"]
    assert compiled.faults[0].skipped_by_exiting and "leaves the kernel" in str(compiled.faults[0])
    assert not report_differences(lanes, compiled) and str(lanes.faults[0]) == str(compiled.faults[0])
    with pytest.raises(LaunchError, match=r"recursive device functions \(fact\) are not compiled"):
        gpusim.launch(mod.factorials, 1, 32, (np.zeros(32, np.int64),), backend="compiled", instrument=False)
