"""Tests for puzzles/files.py: atomic writes and creation, copies that never overwrite, the lock between
processes (held, timed out, released by kill -9), and removing what killed writes left."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from puzzles import files


def test_write_atomic_keeps_permissions_and_a_symbolic_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    files.write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["link.json", "real.json"]


def test_create_atomic_never_overwrites(tmp_path):
    path = tmp_path / "sub" / "f.py"
    assert files.create_atomic(path, "first")
    assert not files.create_atomic(path, "second")
    assert path.read_text() == "first" and os.listdir(path.parent) == ["f.py"]


def test_keep_beside_never_overwrites_and_keeps_one_copy_of_the_same_bytes(tmp_path):
    path = tmp_path / "progress.json"
    a = files.keep_beside(path, "bak", b"one")
    b = files.keep_beside(path, "bak", b"two")
    assert a != b and a.read_bytes() == b"one" and b.read_bytes() == b"two"
    assert files.keep_beside(path, "bak", b"one") == a
    assert files.keep_beside(path, "other", b"one") not in (a, b)      # another tag: another copy


def test_sibling_name_skips_a_dangling_link(tmp_path):
    path = tmp_path / "f"
    first = files.sibling_name(path, "bak")
    first.symlink_to(tmp_path / "nowhere")
    assert files.sibling_name(path, "bak") != first


def test_remove_stray_temps_only_of_that_file_and_only_old_ones(tmp_path):
    path = tmp_path / "f.py"
    old, new, other = (tmp_path / ".f.py.aaaa.tmp", tmp_path / ".f.py.bbbb.tmp", tmp_path / ".g.py.cccc.tmp")
    for p in (old, new, other):
        p.write_text("x")
    hour_ago = time.time() - 3600
    os.utime(old, (hour_ago, hour_ago))
    assert files.remove_stray_temps(path, older_than=60) == 1
    assert not old.exists() and new.exists() and other.exists()
    assert files.remove_stray_temps(path) == 1 and other.exists()


HOLD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from puzzles import files
    with files.locked(Path(sys.argv[1])):
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
""")


def _holder(lock, seconds):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(lock), str(seconds)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline() == "held\n"
    return proc


def test_the_lock_excludes_another_process_and_names_it(tmp_path):
    lock = tmp_path / ".f.lock"
    proc = _holder(lock, 30)
    try:
        t0 = time.monotonic()
        with pytest.raises(files.LockTimeout, match=f"process {proc.pid}"):
            with files.locked(lock, timeout=0.3):
                pass
        assert time.monotonic() - t0 < 5
    finally:
        proc.kill()
        proc.wait()


def test_the_lock_waits_for_a_short_holder(tmp_path):
    lock = tmp_path / ".f.lock"
    proc = _holder(lock, 0.5)
    t0 = time.monotonic()
    with files.locked(lock, timeout=20) as held:
        assert held and time.monotonic() - t0 > 0.3       # it waited for the holder to finish
    assert proc.wait(10) == 0


def test_kill_9_releases_the_lock(tmp_path):
    lock = tmp_path / ".f.lock"
    proc = _holder(lock, 300)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with files.locked(lock, timeout=1) as held:
        assert held


def test_two_locks_in_one_process_exclude_each_other(tmp_path):
    lock = tmp_path / ".f.lock"
    with files.locked(lock):
        with pytest.raises(files.LockTimeout):
            with files.locked(lock, timeout=0.1):
                pass


def test_no_place_for_a_lock_file_goes_on_without_one(tmp_path):
    with files.locked(tmp_path / "missing" / ".f.lock") as held:
        assert held is False
