"""Issue 10, item 4: the terminal is usable again after the app's process dies (a crash inside a check)."""

from __future__ import annotations

import os
import pty
import select
import sys
import textwrap

import pytest

from tui.guard import RESTORE

# The "app": puts the terminal in raw mode on the alternate screen with mouse reports on and auto-wrap off
# (as Textual does), then dies the way a crash in compiled code does, with no chance to clean up.
DYING_APP = textwrap.dedent("""
    import os, signal, sys, tty
    tty.setraw(sys.stdin.fileno())
    sys.stdout.write("\\x1b[?1049h\\x1b[?1000h\\x1b[?25l\\x1b[?7l")
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGSEGV)
""")

GUARD = textwrap.dedent("""
    import sys, termios
    from tui.guard import run_guarded
    status = run_guarded([sys.executable, "-c", {app!r}])
    lflag = termios.tcgetattr(sys.stdin.fileno())[3]
    print("status", status, "canonical", bool(lflag & termios.ICANON), "echo", bool(lflag & termios.ECHO))
""")


def run_in_a_terminal(code: str, timeout: float = 30.0) -> str:
    pid, fd = pty.fork()
    if pid == 0:                                   # the child: a process on a terminal, like the player's
        os.execv(sys.executable, [sys.executable, "-c", code])
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            os.kill(pid, 9)
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out.decode(errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX terminal")
def test_a_dying_app_leaves_the_terminal_cooked_and_says_what_happened():
    out = run_in_a_terminal(GUARD.format(app=DYING_APP))
    assert "status 1 canonical True echo True" in out           # the saved terminal settings are back
    assert out.index(RESTORE) > out.index("\x1b[?1049h")        # alternate screen, mouse, cursor: undone
    assert out.rindex("\x1b[?7h") > out.index("\x1b[?7l")        # long lines wrap again (Textual turns it off)
    assert "stopped unexpectedly (signal 11 (SIGSEGV))" in out and "Your files are saved" in out


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX terminal")
def test_a_clean_exit_is_left_alone():
    out = run_in_a_terminal(GUARD.format(app="print('bye')"))
    assert "status 0" in out and RESTORE not in out and "unexpectedly" not in out
