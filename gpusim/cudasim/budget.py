"""The step budget of a launch under the drop-in.

The budget is there to end an endless loop with a ``KernelTimeout`` instead of a hang, not to stop a big
launch: it grows with the launch. A launch may do ``STEPS_PER_THREAD`` steps for each of its threads, and at
least ``MAX_STEPS`` whatever its size; ``GPUSIM_CUDASIM_MAX_STEPS`` sets one budget for every launch instead.

``MAX_STEPS`` is twenty times ``gpusim.launch``'s budget (4e10, about half a minute of work), since a test
suite's kernels are bigger than a puzzle's: numba's own heat-equation example does 1.3e10 steps (1001 threads,
10,000 grid-synchronised steps). ``STEPS_PER_THREAD`` is what lets numba-cuda's ``doc_examples/test_random``
run (2,097,152 threads writing 216 random float32s each, about 9e4 steps a thread): a quarter of a million
steps a thread is 2.5 times that, and it ends an endless loop in a launch of a million threads after 2.5e11
steps (a few minutes here), where a fixed budget large enough for that test would let a one-block endless loop
run for as long.
"""

from __future__ import annotations

import os
import sys

from ..faults import KernelTimeout
from ..launch import DEFAULT_MAX_STEPS

#: the least budget of any launch
MAX_STEPS = 20 * DEFAULT_MAX_STEPS
#: the steps a launch may do for each of its threads, where that comes to more than ``MAX_STEPS``
STEPS_PER_THREAD = 250_000
ENV = "GPUSIM_CUDASIM_MAX_STEPS"
_said_bad: set[str] = set()  # bad values of it already said on stderr


def for_launch(threads: int) -> int:
    """The budget of a launch of ``threads`` threads: ``GPUSIM_CUDASIM_MAX_STEPS`` where set (a positive
    integer, ``2e10`` or ``20_000`` style accepted; a bad value is said once on stderr and ignored), else
    ``max(MAX_STEPS, threads * STEPS_PER_THREAD)``."""
    scaled = max(MAX_STEPS, int(threads) * STEPS_PER_THREAD)
    text = os.environ.get(ENV, "").strip()
    if not text:
        return scaled
    try:
        value = float(text.replace("_", "")) if any(c in text for c in ".eE") else int(text.replace("_", ""))
        if value >= 1 and value == int(value):
            return int(value)
    except ValueError:
        pass
    if text not in _said_bad:
        _said_bad.add(text)
        sys.stderr.write(f"gpusim: {ENV}={text!r} is not a positive whole number of steps; using the default "
                         f"({STEPS_PER_THREAD:,} steps a thread, at least {MAX_STEPS:,} a launch)\n")
    return scaled


def with_hint(error: BaseException) -> BaseException:
    """A step-budget fault says how to give a kernel that really is this long more steps."""
    if isinstance(error, KernelTimeout) and hasattr(error, "add_note"):
        error.add_note(f"gpusim: if the kernel really is this long, {ENV} raises the budget (now "
                       f"{error.max_steps:,} steps)")
    return error
