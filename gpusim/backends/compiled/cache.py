"""Where compiled kernels live on disk, so a second process pays no compile.

The generated source of a kernel specialisation is written once to ``<cache dir>/k_<hash>.py``, named by a
hash of its text and of the compiled back end's own sources (``sources_digest``); numba's own cache
(``cache=True``) keeps the machine code next to it in ``__pycache__``.

numba checks a cached function against its own file only, not against the functions it calls nor the constants
it took in: after an edit of ``rt_access.py`` the helpers of ``external.py``, which call it, would load their old
machine code. So the package's numba cache is emptied when the digest of its sources changes
(``refresh_helper_cache``, run when the package is imported), and kernels are keyed by that digest too.

A ``.ok`` marker is written after the first successful launch, so that
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


#: the compiled back end's folder; its Python files are what compiled code is made of
PACKAGE = Path(__file__).resolve().parent
#: files outside the package, relative to ``gpusim/``, whose constants its compiled code takes in
OUTSIDE = ("device.py", "observe/banks.py", "observe/coalescing.py", "runtime/intrinsics.py")


#: the package's files numba's cached helpers are compiled from (``driver.py``'s and ``parallel.py``'s few
#: functions call nothing of the package: numba's check of their own file is enough)
HELPER_SOURCES = ("external.py", "rt*.py", "layout.py", "values.py")


def sources_digest(patterns: tuple[str, ...] = ("*.py",)) -> str:
    """A hash of the compiled back end's Python files matching ``patterns`` (every file: what a kernel's
    machine code depends on besides its text) and of ``OUTSIDE``, ``FORMAT``, and numba's, NumPy's and
    Python's versions."""
    import numba
    import numpy

    h = hashlib.sha256(f"{FORMAT} {numba.__version__} {numpy.__version__} {sys.version_info[:2]}".encode())
    gpusim = PACKAGE.parents[1]
    files = sorted({path for pattern in patterns for path in PACKAGE.glob(pattern)})
    for path in files + [gpusim / name for name in OUTSIDE]:
        h.update(path.name.encode())
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"missing")
    return h.hexdigest()


_DIGEST: str | None = None


def digest() -> str:
    """``sources_digest()``, computed once per process."""
    global _DIGEST
    if _DIGEST is None:
        _DIGEST = sources_digest()
    return _DIGEST


def key_of(text: str) -> str:
    return hashlib.sha256((digest() + text).encode()).hexdigest()[:24]


#: the file in numba's cache folder of the package that names the sources its machine code was compiled from
STAMP = "gpusim-sources.sha256"


def refresh_helper_cache(folder: Path | None = None) -> bool:
    """Empty numba's cache of the package's own functions (``folder``: where numba keeps it) if it was filled
    from other ``HELPER_SOURCES`` than these; True if it was emptied (or had no stamp yet). Best effort: a
    folder that cannot be read or written leaves numba to its own checks."""
    try:
        if folder is None:
            from numba.core.caching import FunctionCache

            folder = Path(FunctionCache(refresh_helper_cache).cache_path)
        stamp = folder / STAMP
        want = sources_digest(HELPER_SOURCES)
        if stamp.exists() and stamp.read_text() == want:
            return False
        folder.mkdir(parents=True, exist_ok=True)
        for path in list(folder.glob("*.nbi")) + list(folder.glob("*.nbc")):
            path.unlink(missing_ok=True)
        stamp.write_text(want)
        return True
    except OSError:
        return False


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
