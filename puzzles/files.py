"""The player's files on disk: atomic writes, copies kept beside a file, and a lock between processes.

Used for progress, the workspace and the TUI's editor, so a crash, ``kill -9``, a full disk or a second
program using the same files never loses the player's work:

* ``write_atomic`` and ``create_atomic`` write through a temporary file in the same folder, so a reader sees
  the old file or the new one, never half of one. A temporary file is named ``.<name>.<random>.tmp``; one
  left by a killed process is removed by ``remove_stray_temps``.
* ``keep_beside`` and ``move_aside`` keep a file as ``<name>.<tag>-<time>`` and never overwrite another.
* ``locked`` holds an exclusive lock on a lock file (``fcntl.flock`` on POSIX, ``msvcrt.locking`` on
  Windows). The kernel releases it when the holder dies, even by ``kill -9``: no stale lock to clear.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:             # Windows
    fcntl = None                # type: ignore[assignment]
    import msvcrt

#: how long ``locked`` waits for another process before giving up
LOCK_TIMEOUT = 10.0


class LockTimeout(OSError):
    """Another process held the lock for longer than the timeout."""


def write_atomic(path: Path, text: str | bytes, durable: bool = True) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    A crash or a full disk leaves either the old file or the new one, never half of one. An existing file
    keeps its permissions (a new one gets the usual ones, after the umask); a symbolic link is kept and the
    file it points to is replaced. ``durable=False`` skips the fsyncs: the write survives the process dying
    (``kill -9``), not the machine losing power, and costs a fraction of a millisecond instead of tens.
    Raises ``OSError``.
    """
    path = Path(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        mode = None
    tmp = _write_temp(path, text, durable)
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    if durable:
        _sync_folder(path.parent)


def create_atomic(path: Path, text: str | bytes) -> bool:
    """Create ``path`` holding ``text``, all at once; False (and nothing written) if it exists already.

    The file appears whole or not at all (a hard link from a finished temporary file), so a crash or a full
    disk never leaves an empty or half-written file under its name. Raises ``OSError``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _write_temp(path, text)
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EXDEV):
                raise
            if os.path.lexists(path):       # a file system without hard links: check, then rename
                return False
            os.replace(tmp, path)
    finally:
        _unlink_quietly(tmp)
    _sync_folder(path.parent)
    return True


def sibling_name(path: Path, tag: str) -> Path:
    """A path beside ``path`` named ``<name>.<tag>-<time>`` (with ``-N`` added) that does not exist yet."""
    path = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}.{tag}-{stamp}")
    n = 1
    while os.path.lexists(candidate):
        candidate = path.with_name(f"{path.name}.{tag}-{stamp}-{n}")
        n += 1
    return candidate


def keep_beside(path: Path, tag: str, data: str | bytes) -> Path:
    """Keep ``data`` beside ``path`` as ``<name>.<tag>-<time>``, never overwriting; return that path.

    If an earlier copy with this tag holds exactly ``data``, that one is returned and no new copy is made,
    so a file that keeps being found odd does not fill the folder with copies. Raises ``OSError``.
    """
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    prefix = f"{path.name}.{tag}-"
    with contextlib.suppress(OSError), os.scandir(path.parent) as entries:
        for entry in entries:
            if (entry.name.startswith(prefix) and entry.is_file(follow_symlinks=False)
                    and entry.stat(follow_symlinks=False).st_size == len(raw)
                    and Path(entry.path).read_bytes() == raw):
                return Path(entry.path)
    while True:
        candidate = sibling_name(path, tag)
        if create_atomic(candidate, raw):
            return candidate


def move_aside(path: Path, tag: str) -> Path:
    """Rename ``path`` (whatever it is: a file, a FIFO, a folder) to ``<name>.<tag>-<time>``; return that.

    Raises ``OSError``. Two processes moving files aside in the same second should hold a ``locked`` lock.
    """
    aside = sibling_name(path, tag)
    os.replace(path, aside)
    return aside


def remove_stray_temps(path: Path, older_than: float = 0.0) -> int:
    """Remove the temporary files that writes of ``path`` left behind (a process killed mid-write).

    Only those older than ``older_than`` seconds are removed: pass 0 only while holding the lock that every
    writer of ``path`` holds, else a write in progress could lose its file. Returns how many were removed.
    """
    path = Path(path)
    prefix, removed, now = f".{path.name}.", 0, time.time()
    try:
        with os.scandir(path.parent) as entries:
            for entry in entries:
                if not (entry.name.startswith(prefix) and entry.name.endswith(".tmp")):
                    continue
                try:
                    if older_than and now - entry.stat(follow_symlinks=False).st_mtime < older_than:
                        continue
                    os.unlink(entry.path)
                    removed += 1
                except OSError:
                    pass
    except OSError:
        pass
    return removed


@contextlib.contextmanager
def locked(lock_file: Path, timeout: float | None = None) -> Iterator[bool]:
    """Hold an exclusive lock on ``lock_file`` (created if needed) for the ``with`` block.

    Yields True while the lock is held, or False when no lock file can be made there (a read-only or missing
    folder: then nothing can be written there either, and the caller goes on without the lock). Raises
    ``LockTimeout`` when another process holds it for more than ``timeout`` seconds (``LOCK_TIMEOUT`` unless
    given). The lock is released
    when the block ends, and by the operating system if the process dies. Locks taken through two different
    calls exclude each other even within one process, so threads are covered too. The lock file is never
    removed (removing it would let two processes lock two different files).
    """
    try:
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError:
        yield False
        return
    try:
        deadline = time.monotonic() + (LOCK_TIMEOUT if timeout is None else timeout)
        pause = 0.001
        while not _try_lock(fd):
            if time.monotonic() > deadline:
                raise LockTimeout(errno.EAGAIN, f"{lock_file} is held by {_holder(fd)}")
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
        with contextlib.suppress(OSError):      # who holds it, for the timeout message of the next one
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        yield True
    finally:
        if fcntl is None:
            with contextlib.suppress(OSError):
                os.lseek(fd, 0, os.SEEK_SET)
                msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        os.close(fd)                            # closing also releases an flock


def _try_lock(fd: int) -> bool:
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError as e:
        if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK, errno.EDEADLK):
            return False
        raise
    return True


def _holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        pid = os.read(fd, 32).decode().strip()
    except (OSError, UnicodeDecodeError):
        pid = ""
    return f"process {pid}" if pid.isdigit() else "another process"


def _write_temp(path: Path, text: str | bytes, durable: bool = True) -> str:
    """A finished (``durable``: synced) temporary file beside ``path`` holding ``text``; its name."""
    raw = text.encode("utf-8") if isinstance(text, str) else text
    while True:
        tmp = str(path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp"))
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            if durable:
                os.fsync(f.fileno())
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return tmp


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX); nothing where folders cannot be opened."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
