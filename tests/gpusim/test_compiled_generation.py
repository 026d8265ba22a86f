"""What the compiled back end generates depends on every access of an array, wherever it is in the kernel."""

from __future__ import annotations

import numpy as np
from backend_compare import report_differences
from simkit import load_module

import gpusim

READ_THEN_WRITTEN = """
    from numba import cuda

    @cuda.jit
    def read_then_written(x, out):
        i = cuda.grid(1)
        v = x[0]              # every thread reads x[0]: generated before the write below
        if i == 40:
            x[0] = v + 1      # a thread of block 1 writes it: a race with block 0's reads
        out[i] = v
"""


def test_a_read_generated_before_the_arrays_first_write_is_checked_for_races(tmp_path, monkeypatch):
    """The read records of an array learn it is written only at its write; a read generated before that was
    replayed from elements it never staged (garbage: a segfault in multi_block_scan__offset_off_by_one, a race
    missed or misplaced elsewhere). The race and everything else must be the lanes back end's."""
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path / "cache"))
    mod = load_module(tmp_path, READ_THEN_WRITTEN)
    runs = []
    for backend in ("lanes", "compiled"):
        x, out = np.full(1, 5.0, np.float32), np.zeros(64, np.float32)
        runs.append(gpusim.launch(mod.read_then_written, 2, 32, (x, out), backend=backend, instrument=False))
    assert [type(f).__name__ for f in runs[0].faults] == ["DataRace"]
    assert not report_differences(runs[0], runs[1])
