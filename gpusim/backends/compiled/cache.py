"""Where compiled kernels live on disk, so a second process pays no compile.

The generated source of a kernel specialisation is written once to ``<cache dir>/k_<hash>.py``, named by a
hash of its text and of the compiled helpers' source; numba's own cache (``cache=True``) keeps the machine
code next to it in ``__pycache__``. A ``.ok`` marker is written after the first successful launch, so that
``gpusim.launch(backend="auto")`` can tell a kernel whose machine code is on disk from one that would have
to be compiled.

The directory is ``$GPUSIM_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/gpusim/compiled``, else
``~/.cache/gpusim/compiled``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

#: bump when the generated code's meaning changes in a way the text does not show
FORMAT = 1


def cache_dir() -> Path:
    env = os.environ.get("GPUSIM_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "gpusim" / "compiled"


def _helpers_digest() -> str:
    here = Path(__file__).resolve().parent
    h = hashlib.sha256(str(FORMAT).encode())
    for name in ("rtlib.py", "layout.py"):
        h.update((here / name).read_bytes())
    import numba
    import numpy

    h.update(f"{numba.__version__} {numpy.__version__} {sys.version_info[:2]}".encode())
    return h.hexdigest()


_DIGEST: str | None = None


def key_of(text: str) -> str:
    global _DIGEST
    if _DIGEST is None:
        _DIGEST = _helpers_digest()
    return hashlib.sha256((_DIGEST + text).encode()).hexdigest()[:24]


def path_of(key: str) -> Path:
    return cache_dir() / f"k_{key}.py"


def is_warm(key: str) -> bool:
    """Has this specialisation run before (its machine code is in numba's cache)?"""
    return (cache_dir() / f"k_{key}.ok").exists()


def mark_warm(key: str) -> None:
    try:
        (cache_dir() / f"k_{key}.ok").touch()
    except OSError:
        pass


def load(key: str, text: str):
    """Import the module of ``text`` from the cache directory (writing it first if it is not there)."""
    folder = cache_dir()
    path = path_of(key)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.replace(tmp, path)
    except OSError:  # a read-only cache: compile in a private folder (no disk cache)
        folder = Path(tempfile.mkdtemp(prefix="gpusim-compiled-"))
        path = folder / f"k_{key}.py"
        path.write_text(text)
    name = f"gpusim_compiled_{key}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
