"""The player's files on disk: atomic writes and never-overwriting copies kept beside a file.

Used for progress, workspace backups and the TUI's editor, so a crash, a full disk or a second program
editing the same file never loses the player's work.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    A crash or a full disk leaves either the old file or the new one, never half of one. The file keeps its
    permissions. Raises ``OSError``.
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


def sibling_name(path: Path, tag: str) -> Path:
    """A path beside ``path`` named ``<name>.<tag>-<time>`` (with ``-N`` added) that does not exist yet."""
    path = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}.{tag}-{stamp}")
    n = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.{tag}-{stamp}-{n}")
        n += 1
    return candidate
