"""An environment in which Textual, platformdirs, torch and triton cannot be imported (the GPU machine has
neither of the first two, and graduate mode needs none of them): a ``sitecustomize`` that refuses them."""

from __future__ import annotations

import os
from pathlib import Path

FORBIDDEN = ("textual", "platformdirs", "torch", "triton")

SITECUSTOMIZE = f"""
import sys

class _Forbidden:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {FORBIDDEN!r}:
            raise ImportError("graduate mode must not import " + name)

sys.meta_path.insert(0, _Forbidden())
"""


def blocking_env(tmp_path: Path, **extra: str) -> dict:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = dict(os.environ, PYTHONPATH=str(site), GPU_PUZZLES_HOME=str(tmp_path / "home"), **extra)
    if "NUMBA_ENABLE_CUDASIM" not in extra:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    return env
