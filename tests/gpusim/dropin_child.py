"""The two halves of a drop-in test that launches in a child process (numba's simulator replaces numba.cuda
when it is imported, so no launch through it may happen in the test process): ``run_child`` runs a kernels
script under ``GPUSIM_CUDASIM=strict NUMBA_ENABLE_CUDASIM=1`` and returns the JSON it wrote; the script ends
with ``save_results``, which adds what ``gpusim.cudasim.stats()`` counted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def dropin_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSIM_CUDASIM", "NUMBA_ENABLE_CUDASIM"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env.update(GPUSIM_CUDASIM="strict", NUMBA_ENABLE_CUDASIM="1")
    return env


def run_child(script: Path, out: Path) -> dict:
    proc = subprocess.run([sys.executable, str(script), str(out)], env=dropin_env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def save_results(res: dict, path: str) -> None:
    """Write ``res`` to ``path`` with the drop-in's launch counts (none where gpusim is not installed: the same
    script run on a GPU machine through numba-cuda itself)."""
    try:
        import gpusim.cudasim
    except ImportError:
        res["stats"] = None
    else:
        st = gpusim.cudasim.stats()
        res["stats"] = {"gpusim": st.gpusim_launches, "fallback": st.fallback_launches, "fallbacks": st.fallbacks}
    with open(path, "w") as f:
        json.dump(res, f)
