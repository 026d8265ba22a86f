"""What a launch must move and compute, for achieved GB/s and FLOP/s.

* **Bytes** = the *compulsory* traffic of the case, from its buffers alone: every array that is not an
  output is read once, every output is written once (``Case.buffers``, ``Puzzle.outputs``). It is the least
  any kernel for this case can move, whatever it does inside, so GB/s = bytes / time is the kernel's
  *effective* bandwidth, the number kernel judges report and the one compared with the device's copy
  bandwidth. (A scratch buffer of a multi-launch case counts as read once; those are small.)
* **FLOPs** = the floating-point operations gpusim counted for the same launch (``report.flops``, an FMA
  as two), i.e. what this kernel computes; they come with the simulator's estimate
  (``puzzles.graduate.estimates``), so a row without an estimate has no FLOP/s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import Case


@dataclass(frozen=True)
class Traffic:
    read_bytes: int
    write_bytes: int

    @property
    def total(self) -> int:
        return self.read_bytes + self.write_bytes


def compulsory_traffic(case: Case, outputs: tuple[str, ...]) -> Traffic:
    read = write = 0
    for name, value in case.buffers.items():
        if isinstance(value, np.ndarray):
            if name in outputs:
                write += value.nbytes
            else:
                read += value.nbytes
    return Traffic(read, write)


def case_bytes(case: Case) -> int:
    """Bytes of all the case's arrays (what a process holding the case holds)."""
    return sum(v.nbytes for v in case.buffers.values() if isinstance(v, np.ndarray))
