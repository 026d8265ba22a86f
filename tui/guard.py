"""Give the terminal back in a usable state whatever happens to the app.

Textual restores the terminal when the app ends or raises, but not when its process dies: a crash inside a
check (a fault in compiled code, ``os._exit`` at a solution's import, the out-of-memory killer, ``kill -9``)
would leave the terminal in raw mode on the alternate screen, with the mouse reporting and no cursor.
``run_guarded`` runs the app in a child process and, if the child dies, restores the terminal settings it
saved and switches those modes off, then says what happened. The player's text is on disk already (the
editor autosaves), so the message can say so.
"""

from __future__ import annotations

import signal
import subprocess
import sys

# leave the alternate screen, show the cursor, stop mouse reports and bracketed paste, wrap long lines again
# (Textual turns auto-wrap off: the message below was cut at the terminal's edge), reset colours
RESTORE = ("\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l\x1b[?2004l\x1b[?7h"
           "\x1b[0m")
CHILD_FLAG = "--in-guard"


def run_guarded(argv: list[str] | None = None) -> int:
    """Run the app (``argv``: the child's command line) and restore the terminal if it dies; its exit status."""
    if argv is None:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            from .app import run_here

            return run_here()
        argv = [sys.executable, "-m", "tui", CHILD_FLAG]
    try:
        import termios
        saved = termios.tcgetattr(sys.stdin.fileno())
    except (ImportError, OSError, ValueError):
        termios, saved = None, None
    child = subprocess.Popen(argv)
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGQUIT)}

    def forward(signum, _frame):
        child.send_signal(signum)

    for s in (signal.SIGTERM, signal.SIGHUP):
        previous[s] = signal.signal(s, forward)
    try:
        status = child.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if status == 0:
        return 0
    if saved is not None:
        try:
            termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, saved)
        except OSError:
            pass
    sys.stdout.write(RESTORE)
    sys.stdout.flush()
    why = f"signal {-status} ({signal.Signals(-status).name})" if status < 0 else f"exit status {status}"
    sys.stderr.write(f"gpu-puzzles stopped unexpectedly ({why}). Your files are saved; start it again with "
                     "`gpu-puzzles`.\n")
    return 1
