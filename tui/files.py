"""Reading and writing the player's files: atomic writes, and a guard against clobbering outside edits."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path


def read_text(path: Path) -> str:
    return Path(path).read_text(encoding="utf-8")


def mtime(path: Path) -> float | None:
    try:
        return Path(path).stat().st_mtime
    except OSError:
        return None


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    A crash or a full disk leaves either the old file or the new one, never half of one. Raises ``OSError``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = None
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def keep_copy(path: Path, text: str, why: str = "disk") -> Path:
    """Save ``text`` beside ``path`` as ``<name>.<why>-<time>`` (never overwriting) and return that path."""
    path = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    copy = path.with_name(f"{path.name}.{why}-{stamp}")
    n = 1
    while copy.exists():
        copy = path.with_name(f"{path.name}.{why}-{stamp}-{n}")
        n += 1
    write_atomic(copy, text)
    return copy
