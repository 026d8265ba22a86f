"""A grid sync orders every global access before it, in any block, before every access after it
(``Runtime.globals_tracked``: the launch's global arrays, given to the runtime when it is made): a kernel whose
blocks read, after ``grid.sync()``, what other blocks wrote before it has no race; without the sync it has one.
The expected rows are a hand computation: each row is the row above reversed, plus one."""

from __future__ import annotations

import numpy as np
from cudasim_features import reverse_rows, reverse_rows_unsynced  # the drop-in test's kernels, here in-process
from simkit import faults, run, run_clean

from gpusim import DataRace

COLS, BLOCK = 64, 16


def _want(rows: int) -> list[list[int]]:
    want = [[0] * COLS]
    for _ in range(rows - 1):
        want.append([v + 1 for v in reversed(want[-1])])
    return want


def test_reads_after_a_grid_sync_of_other_blocks_writes_are_not_races():
    m = np.zeros((4, COLS), np.int32)
    run_clean(reverse_rows, COLS // BLOCK, BLOCK, m)
    assert m.tolist() == _want(4)


def test_the_same_reads_without_the_grid_sync_are_races():
    m = np.zeros((4, COLS), np.int32)
    report = run(reverse_rows_unsynced, COLS // BLOCK, BLOCK, m)
    assert faults(report, DataRace)
