"""gpusim behind numba's simulator API (gpusim.cudasim): each launch path, fallback, strict, faults, the
start-up hook, gpusim.install(), the pytest plugin and numba-cuda-mlir's import style.

numba's simulator replaces numba.cuda when imported, so every launch happens in a child process
(cudasim_scenarios.py, or a script or pytest run written here); expected values come from NumPy and from
numba's documented behaviour, never from gpusim.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import _gpusim_cudasim
from gpusim.cudasim.policy import FaultPolicy

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCENARIOS = HERE / "cudasim_scenarios.py"


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSIM_CUDASIM", "NUMBA_ENABLE_CUDASIM"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env.update(extra)
    return env


def _scenario(group: str, tmp_path: Path, **env: str) -> tuple[dict, str]:
    out = tmp_path / f"{group}.json"
    proc = subprocess.run([sys.executable, str(SCENARIOS), group, str(out)], env=_env(**env),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stderr


def _hook_installed() -> bool:
    dirs = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    return any((Path(d) / "gpusim_cudasim.pth").exists() for d in dirs)


needs_hook = pytest.mark.skipif(not _hook_installed(), reason="gpusim is not installed here (pip install -e .), so "
                                "its start-up hook is not in site-packages")

A = np.arange(100, dtype=np.float32)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    return _scenario("api", tmp_path_factory.mktemp("api"), GPUSIM_CUDASIM="strict",
                     NUMBA_ENABLE_CUDASIM="1")[0]


@pytest.mark.parametrize("path", ["host", "device", "device_array", "stream", "pinned_mapped", "forall",
                                  "specialize"])
def test_each_launch_path_computes_the_kernel(api, path):
    assert api[path] == (2 * A + 1).tolist()


def test_every_launch_ran_on_gpusim_in_strict_mode(api):
    # 11 launches in group_api; strict mode has no fallback, and a warp shuffle (which numba's simulator lacks)
    # came out right
    assert api["stats"] == {"gpusim": 11, "fallback": 0, "fallbacks": {}}
    assert api["warp_sum"] == [float(np.arange(32).sum())]


def test_eager_signature_casts_scalars_as_numba_does(api):
    # "void(float64[:], float32)": 0.1 arrives as a float32, then float32 * int widens to float64
    assert api["eager"] == [float(np.float64(np.float32(0.1)) * 3)]
    assert api["eager"] != [0.1 * 3]


def test_dynamic_shared_memory_from_the_launch_configuration(api):
    assert api["dynamic_shared"] == np.arange(32, dtype=np.float32)[::-1].tolist()


def test_in_out_hints_and_host_calls_of_device_functions(api):
    assert api["in_out"] == A.tolist()
    assert api["twice_on_host"] == 42


def test_fallback_runs_numba_simulator_and_says_so_once(tmp_path):
    res, stderr = _scenario("fallback", tmp_path, GPUSIM_CUDASIM="1")
    assert res["first"] == [7]
    assert res["stats"]["fallback"] == 2 and res["stats"]["gpusim"] == 0
    lines = [ln for ln in stderr.splitlines() if ln.startswith("gpusim: kernel 'take_first'")]
    assert len(lines) == 1, stderr
    # the reason is named: gpusim types the arguments before it compiles, so it is the big-endian array
    assert "runs on numba's simulator" in lines[0] and ">i4" in lines[0]


def test_strict_mode_makes_an_unrunnable_kernel_an_error(tmp_path):
    out = tmp_path / "x.json"
    proc = subprocess.run([sys.executable, str(SCENARIOS), "fallback", str(out)],
                          env=_env(GPUSIM_CUDASIM="strict"), capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "LaunchError" in proc.stderr and "GPUSIM_CUDASIM=strict" in proc.stderr
    assert not out.exists()


def test_fallback_restores_device_arrays_gpusim_wrote(tmp_path):
    res, stderr = _scenario("restore", tmp_path, GPUSIM_CUDASIM="1")
    expected = (np.arange(8) + 1).tolist()
    assert res["a"] == expected and res["b"] == expected
    assert res["stats"]["fallback"] == 1 and "KernelError" in stderr


def test_faults_raise_as_numba_simulator_raises_them(tmp_path):
    res, _ = _scenario("faults", tmp_path, GPUSIM_CUDASIM="strict", GPUSIM_CUDASIM_FAULTS="raise")
    oob = res["oob"]
    assert {"OutOfBounds", "IndexError", "KernelFault"} <= set(oob["types"])
    assert oob["message"].startswith("tid=[50, 0, 0] ctaid=[0, 0, 0]: Index 50 is out of bounds")
    assert "DataRace" in res["race"]["types"] and res["race"]["message"].startswith("tid=[")


def test_by_default_a_race_is_reported_and_an_out_of_bounds_access_raised(tmp_path):
    res, stderr = _scenario("faults", tmp_path, GPUSIM_CUDASIM="strict")
    assert "OutOfBounds" in res["oob"]["types"]
    assert res["race"]["types"] == []
    lines = [ln for ln in stderr.splitlines() if ln.startswith("gpusim: kernel") and ": race at " in ln]
    assert len(lines) == 1 and "block (0, 0, 0) thread (" in lines[0] and "GPUSIM_CUDASIM_FAULTS=raise" in lines[0]


def test_fault_policy_off_lets_a_kind_through(tmp_path):
    res, _ = _scenario("faults", tmp_path, GPUSIM_CUDASIM="strict", GPUSIM_CUDASIM_FAULTS="race=off")
    assert res["race"]["types"] == []
    assert "OutOfBounds" in res["oob"]["types"]


def test_alignment_is_refused_with_numba_simulators_error_by_default(tmp_path):
    # the expected error is numba's simulator's own, from the same kernels run on it (no GPUSIM_CUDASIM)
    sim, _ = _scenario("alignment", tmp_path, NUMBA_ENABLE_CUDASIM="1")
    ours, _ = _scenario("alignment", tmp_path, GPUSIM_CUDASIM="strict", NUMBA_ENABLE_CUDASIM="1")
    for kind in ("shared", "local"):
        assert "RuntimeError" in sim[kind]["types"] and "RuntimeError" in ours[kind]["types"]
        words = sim[kind]["message"].split(": ", 1)[1]          # after the simulator's "tid=[..] ctaid=[..]: "
        assert ours[kind]["message"].startswith(words) and "GPUSIM_CUDASIM_ALIGNMENT=gpu" in ours[kind]["message"]
    assert ours["stats"]["gpusim"] == 0 and ours["stats"]["fallback"] == 0   # refused, not run on either


def test_alignment_placed_as_on_a_gpu_when_asked(tmp_path):
    res, _ = _scenario("alignment", tmp_path, GPUSIM_CUDASIM="strict", NUMBA_ENABLE_CUDASIM="1",
                       GPUSIM_CUDASIM_ALIGNMENT="gpu")
    assert res["shared"]["types"] == [] and res["local"]["types"] == []
    assert res["out"] == [float(np.arange(32).sum())] and res["small"] == [7, 7, 7, 7]
    assert res["stats"]["gpusim"] == 2 and res["stats"]["fallback"] == 0


def test_global_arrays_are_frozen_at_the_first_launch(tmp_path):
    # numba compiles global arrays into the kernel as constants ("frozen" at compile time)
    res, _ = _scenario("frozen", tmp_path, GPUSIM_CUDASIM="strict")
    assert res["first"] == [2.0] and res["second"] == [2.0]
    # ... and device arrays by pointer: a later copy_to_device reaches the kernel (numba-cuda's docs example)
    assert res["device"] == [25.0, 50.0]


@pytest.mark.slow
def test_install_from_code_reaches_child_processes(tmp_path):
    res, _ = _scenario("install", tmp_path)
    assert res["out"] == (2 * np.arange(32) + 1).tolist()
    assert res["env"] == "strict" and res["stats"]["gpusim"] == 1
    assert res["child_rc"] == 0, res["child_stderr"]
    child = json.loads((tmp_path / "install.json.child").read_text())
    assert child["stats"]["gpusim"] == 11 and child["stats"]["fallback"] == 0


def test_install_after_numba_cuda_without_simulator_says_why(tmp_path):
    probe = "import numpy as np\nnp.row_stack = getattr(np, 'row_stack', np.vstack)\nimport numba.cuda, gpusim\n" \
            "try:\n    gpusim.install()\nexcept RuntimeError as e:\n    print('refused:', e)\n"
    proc = subprocess.run([sys.executable, "-c", probe], env=_env(), capture_output=True, text=True, timeout=300)
    assert "refused: numba.cuda was imported without its simulator" in proc.stdout, proc.stderr[-2000:]


STARTUP_SCRIPT = """
import json, subprocess, sys
import numpy as np
np.row_stack = getattr(np, "row_stack", np.vstack)
from numba import cuda
import gpusim.cudasim

@cuda.jit
def inc(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += cuda.shfl_xor_sync(0xFFFFFFFF, 1, 1)

a = np.zeros(32, dtype=np.int32)
inc[1, 32](a)
child = None
if len(sys.argv) == 1:
    child = json.loads(subprocess.run([sys.executable, __file__, "child"], capture_output=True, text=True).stdout)
print(json.dumps({"a": a.tolist(), "gpusim": gpusim.cudasim.stats().gpusim_launches, "child": child}))
"""


@needs_hook
@pytest.mark.slow
def test_startup_hook_runs_every_process_on_gpusim(tmp_path):
    script = tmp_path / "startup.py"
    script.write_text(STARTUP_SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], env=_env(GPUSIM_CUDASIM="strict"), cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    assert res["a"] == [1] * 32 and res["gpusim"] == 1
    assert res["child"] == {"a": [1] * 32, "gpusim": 1, "child": None}


@needs_hook
def test_startup_hook_costs_nothing_when_unset():
    probe = "import sys; print(sorted(m for m in sys.modules if 'gpusim' in m or m.startswith('numba')))"
    proc = subprocess.run([sys.executable, "-c", probe], env=_env(), capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "[]"
    proc = subprocess.run([sys.executable, "-c", probe], env=_env(GPUSIM_CUDASIM="1"), capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout.strip() == "['_gpusim_cudasim']"  # the finder only: gpusim waits for numba.cuda


PLUGIN_TEST = """
import numpy as np
np.row_stack = getattr(np, "row_stack", np.vstack)
from numba import cuda


@cuda.jit
def lane_sum(out):
    v = cuda.shfl_down_sync(0xFFFFFFFF, cuda.threadIdx.x, 1)
    if cuda.threadIdx.x == 0:
        out[0] = v


def test_runs_on_gpusim():
    import gpusim.cudasim

    out = np.zeros(1, dtype=np.int64)
    lane_sum[1, 32](out)
    assert out[0] == 1
    assert gpusim.cudasim.stats().gpusim_launches == 1


def test_out_of_bounds_is_an_index_error():
    import pytest

    with pytest.raises(IndexError, match=r"tid=\\[0, 0, 0\\] ctaid=\\[0, 0, 0\\]"):
        lane_sum[1, 32](np.zeros(0, dtype=np.int64))
"""


@pytest.mark.slow
def test_pytest_plugin_sets_up_before_numba_cuda_is_imported(tmp_path):
    (tmp_path / "test_kernels.py").write_text(PLUGIN_TEST)
    plugin = [] if _hook_installed() else ["-p", "_gpusim_cudasim.pytest_plugin"]
    proc = subprocess.run([sys.executable, "-m", "pytest", *plugin, "--gpusim-strict", "-p", "no:cacheprovider",
                           "-q", "-W", "error", str(tmp_path)], cwd=tmp_path, env=_env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 passed" in proc.stdout
    assert "gpusim: 2 launches on gpusim" in proc.stdout


RACY_TEST = """
import numpy as np
from numba import cuda

@cuda.jit
def racy(out):
    out[0] += 1

def test_racy():
    racy[1, 64](np.zeros(1))
"""


@pytest.mark.parametrize("how", ["option", "install"])
def test_race_reports_turn_off_as_the_readme_says(tmp_path, how):
    # README: GPUSIM_CUDASIM_FAULTS=race=off (test_fault_policy_off_lets_a_kind_through), --gpusim-faults=race=off
    # or gpusim.install(faults="race=off")
    (tmp_path / "test_racy.py").write_text(RACY_TEST)
    plugin = [] if _hook_installed() else ["-p", "_gpusim_cudasim.pytest_plugin"]

    def run(off: bool) -> str:
        if how == "install":
            faults = ', faults="race=off"' if off else ""
            (tmp_path / "conftest.py").write_text(f'import gpusim\ngpusim.install("strict"{faults})\n')
            extra = []
        else:
            extra = ["--gpusim-strict"] + (["--gpusim-faults=race=off"] if off else [])
        proc = subprocess.run([sys.executable, "-m", "pytest", *plugin, *extra, "-p", "no:cacheprovider", "-q",
                               str(tmp_path)], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
        return proc.stdout + proc.stderr

    assert ": race at " in run(False)          # reported by default, and the test passes
    assert ": race at " not in run(True)


MLIR_SCRIPT = """
import json
import numpy as np
np.row_stack = getattr(np, "row_stack", np.vstack)
from numba_cuda_mlir import cuda
import numba_cuda_mlir.cuda.random as rnd
import gpusim.cudasim

@cuda.jit
def add(a, b):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += b[i] + cuda.laneid

a = cuda.to_device(np.ones(40))
add[2, 32](a, np.ones(40))
print(json.dumps({"a": a.copy_to_host().tolist(), "name": cuda.__spec__.name, "rnd": rnd.__name__,
                  "gpusim": gpusim.cudasim.stats().gpusim_launches}))
"""


@pytest.mark.slow
def test_numba_cuda_mlir_import_style_runs_on_gpusim(tmp_path):
    # a stand-in numba_cuda_mlir whose own cuda module must never load: the drop-in replaces it
    pkg = tmp_path / "numba_cuda_mlir"
    (pkg / "cuda").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "cuda" / "__init__.py").write_text("raise ImportError('the real numba_cuda_mlir.cuda was imported')\n")
    (tmp_path / "mlir_style.py").write_text(MLIR_SCRIPT)
    env = _env(GPUSIM_CUDASIM="strict")
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    run = [sys.executable, "-c", "import _gpusim_cudasim; _gpusim_cudasim.from_environment(); "
           f"import runpy; runpy.run_path({str(tmp_path / 'mlir_style.py')!r}, run_name='__main__')"]
    proc = subprocess.run(run, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    assert res["a"] == [2.0 + (i % 32) for i in range(40)]
    assert res["name"] == "numba.cuda" and res["rnd"] == "numba.cuda.random" and res["gpusim"] == 1


# ------------------------------------------------------------------------------------ in-process units

def test_fault_policy_parses_all_and_per_kind():
    default = dict(FaultPolicy.parse(None).actions)
    assert default["race"] == default["uninit"] == "report" and default["oob"] == default["divergence"] == "raise"
    assert set(dict(FaultPolicy.parse("raise").actions).values()) == {"raise"}
    assert set(dict(FaultPolicy.parse("off").actions).values()) == {"off"}
    per = dict(FaultPolicy.parse("race=off, uninit=off").actions)
    assert per["race"] == per["uninit"] == "off" and per["oob"] == "raise"
    with pytest.raises(ValueError, match="kind=raise"):
        FaultPolicy.parse("races=off")


def test_mode_values():
    assert _gpusim_cudasim.parse_mode("1") == "fallback"
    assert _gpusim_cudasim.parse_mode("STRICT") == "strict"
    assert _gpusim_cudasim.parse_mode("") is None and _gpusim_cudasim.parse_mode("0") is None
    with pytest.raises(ValueError, match="GPUSIM_CUDASIM='maybe'"):
        _gpusim_cudasim.parse_mode("maybe")


def test_bad_mode_in_the_environment_is_said_not_raised():
    proc = subprocess.run([sys.executable, "-c", "import _gpusim_cudasim as g; g.from_environment(); "
                           "print(g.settings)"], env=_env(GPUSIM_CUDASIM="maybe"), capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.strip() == "None"
    assert "GPUSIM_CUDASIM='maybe'" in proc.stderr and "the drop-in is off" in proc.stderr


def test_pth_line_imports_nothing_unless_the_variable_is_set():
    line = (REPO / "_gpusim_cudasim" / "gpusim_cudasim.pth").read_text().strip()
    assert line.startswith("import os; os.environ.get(\"GPUSIM_CUDASIM\") and ")
    assert "\n" not in line

