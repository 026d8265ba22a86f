"""The numba-cuda back end (puzzles/graduate/numba_backend.py) without a GPU: through numba's own simulator.

``NUMBA_ENABLE_CUDASIM=1`` makes ``numba.cuda`` numba's CPU simulator, so the back end's compile / run /
prepare paths run the reference files exactly as on a GPU, only slowly. It replaces ``numba.cuda`` when
imported, so it runs in a child process. The expected outputs are the puzzles' NumPy specs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from graduate_blocker import blocking_env

REPO = Path(__file__).resolve().parents[2]

CHILD = r"""
import copy, json, sys
import numpy as np
from puzzles import registry, workspace
from puzzles.compare import first_mismatch
from puzzles.graduate.backend import written_buffers
from puzzles.graduate.numba_backend import NumbaBackend

out = {}
backend = NumbaBackend()
out["unavailable"] = backend.unavailable()
for slug in sys.argv[1:]:
    p = registry.get(slug)
    runnable = backend.compile(p, workspace.reference_path(p))
    wrong = []
    for case in p.make_cases():
        got = runnable.run(case)
        want = p.spec(**copy.deepcopy(dict(case.buffers)))
        m = first_mismatch(p.outputs, got, want, case.buffers, p.rtol, p.atol)
        if m is not None:
            wrong.append(f"{case.name}: {m.message}")
    out[slug] = {"cases": len(p.make_cases()), "wrong": wrong}

# prepare/reset: the histogram accumulates with atomics, so a second launch without a reset doubles it
from numba import cuda
p = registry.get("histogram")
case = p.make_cases()[-1]
launch = NumbaBackend().compile(p, workspace.reference_path(p)).prepare(case)
s = cuda.stream()
launch.reset(s); launch.enqueue(s); launch.reset(s); launch.enqueue(s)
after_reset = launch.dev["hist"].copy_to_host()
launch.enqueue(s)
without_reset = launch.dev["hist"].copy_to_host()
want = p.spec(**copy.deepcopy(dict(case.buffers)))["hist"]
out["reset"] = {"after_reset": bool(np.array_equal(after_reset, want)),
                "without_reset_doubles": bool(np.array_equal(without_reset, 2 * want)),
                "written": sorted(launch.pristine)}

# graduate's FMA probe computes x = x * m + c (the spin uses nanosleep, which numba's simulator lacks)
from puzzles.graduate import kernels
res = cuda.device_array(64, dtype=np.float32)
coef = np.array([0.5, 0.25], dtype=np.float32)
kernels.fma_chains[2, 32](res, cuda.to_device(coef), 3)
x = (np.arange(64) % 1024).astype(np.float32)[:, None] * coef[1] + coef[1] * np.arange(8, dtype=np.float32)
for _ in range(3):
    x = x * coef[0] + coef[1]
out["fma"] = bool(np.allclose(res.copy_to_host(), x.sum(axis=1), rtol=1e-6))
print("RESULT " + json.dumps(out))
"""


@pytest.mark.slow
def test_reference_solutions_pass_their_cases_through_numba_cuda_on_numba_simulator(tmp_path):
    """... with Textual, platformdirs, torch and triton unimportable, as on the GPU machine."""
    slugs = ["blocks", "shared", "transpose-tiled", "histogram"]
    env = blocking_env(tmp_path, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-c", CHILD, *slugs], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    out = json.loads(line[len("RESULT "):])
    assert "simulator is on" in out["unavailable"]          # no timing on numba's simulator
    for slug in slugs:
        assert out[slug]["cases"] >= 5 and out[slug]["wrong"] == [], out[slug]
    assert out["reset"] == {"after_reset": True, "without_reset_doubles": True, "written": ["hist"]}
    assert out["fma"]
