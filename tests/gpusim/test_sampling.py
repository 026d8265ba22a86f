"""Running some of a grid's blocks (``gpusim.launch(blocks=)``) and estimating a launch from a sample of its
blocks (``gpusim.sampling``). The expected counts are hand counts of the kernels' accesses: a sample scaled to
the grid must give what every block would."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from cudasim_features import reverse_rows
from numba import cuda

import gpusim
from gpusim import LaunchError
from gpusim.observe.flops import flop_total
from gpusim.sampling import MIN_RUNS, SamplingRefused, later_runs, sampled_workload

ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"


@cuda.jit
def mark(out):
    x, y = cuda.grid(2)
    out[y, x] = cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x + 1


def test_a_launch_of_some_blocks_runs_only_those_and_counts_only_theirs():
    out = np.zeros((8, 32), np.int64)               # a (4, 2) grid of (8, 4) blocks
    report = gpusim.launch(mark, (4, 2), (8, 4), (out,), trace=False, blocks=[(1, 2), (6, 1)])
    want = np.zeros_like(out)
    for b in (1, 2, 6):
        bx, by = b % 4, b // 4
        want[by * 4:(by + 1) * 4, bx * 8:(bx + 1) * 8] = b + 1
    assert (out == want).all()
    # a block's one warp stores 4 rows of 8 int64: 4 segments of 64 bytes, 2 sectors each
    assert report.metrics[ST_SECTORS] == 3 * 8
    assert report.extra["blocks_run"] == 3


@pytest.mark.parametrize("blocks", [[(2, 0)], [(3, 1), (1, 1)], [(7, 2)], [(0, 1, 2)], 5])
def test_runs_of_blocks_are_ascending_disjoint_and_inside_the_grid(blocks):
    with pytest.raises(LaunchError, match="blocks"):
        gpusim.launch(mark, (4, 2), (8, 4), (np.zeros((8, 32), np.int64),), blocks=blocks)


def test_a_kernel_that_syncs_its_grid_cannot_run_in_part():
    with pytest.raises(LaunchError, match="syncs its grid"):
        gpusim.launch(reverse_rows, 4, 16, (np.zeros((4, 64), np.int32),), blocks=[(0, 1)])


@cuda.jit
def add_one(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + 1


def test_a_sampled_map_counts_what_every_block_would():
    n = 1 << 20
    a, out = np.ones(n, np.float32), np.zeros(n, np.float32)
    got = sampled_workload(add_one, n // 128, 128, (a, out), budget_steps=2e6, max_steps=10**15)
    assert got.sampled and got.fraction < 0.5 and len(got.runs) >= 1 + MIN_RUNS
    m = got.workload.metrics
    assert m[LD_SECTORS] == m[ST_SECTORS] == n * 4 // 32
    assert m["dram__bytes_read.sum"] == m["dram__bytes_write.sum"] == n * 4
    assert m["gpusim__rounds_dram_sum"] == n // 128           # one DRAM round per block
    assert got.workload.grid == (n // 128, 1, 1)
    assert np.count_nonzero(out) == got.blocks_run * 128      # the blocks that did not run wrote nothing


@cuda.jit
def matmul(a, b, c):
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        acc = 0.0
        for k in range(a.shape[1]):
            acc += a[row, k] * b[k, col]
        c[row, col] = acc


@pytest.mark.slow
def test_a_sampled_matmul_reads_b_once_and_each_row_of_a_once(monkeypatch):
    """A row of blocks reads all of B: sampled alone, every run would pay B's DRAM bytes again. The first run
    (a warm-up) runs before the others and alone, so the others count what they read after it."""
    # 2 blocks a chunk: a small launch of many chunks, as a large one has
    monkeypatch.setattr(importlib.import_module("gpusim.launch"), "CHUNK_LANES", 256)
    n = 64
    a, b, c = (np.ones((n, n), np.float32) for _ in range(3))
    whole_steps = gpusim.launch(matmul, (2, 16), (32, 4), (a, b, c), trace=False).steps
    got = sampled_workload(matmul, (2, 16), (32, 4), (a, b, c), budget_steps=whole_steps / 2, max_steps=10**15)
    assert got.sampled
    assert all(count % 2 == 0 and first % 2 == 0 for first, count in got.runs)   # whole rows of blocks
    m = got.workload.metrics
    assert m["dram__bytes_read.sum"] == 2 * n * n * 4
    assert m["dram__bytes_write.sum"] == n * n * 4
    # a warp is 32 columns of one row: per k one sector of A and 128 bytes (4 sectors) of B
    assert m[LD_SECTORS] == (n * n // 32) * n * 5
    assert sum(flop_total(got.workload.flops).values()) == 2 * n * n * n   # a multiply and an add per k


@cuda.jit
def total(a, out):
    i = cuda.grid(1)
    if i < a.size:
        cuda.atomic.add(out, 0, a[i])


def test_blocks_that_meet_in_global_atomics_are_not_sampled():
    n = 1 << 20
    a, out = np.ones(n, np.int64), np.zeros(1, np.int64)
    with pytest.raises(SamplingRefused, match="atomics"):
        sampled_workload(total, n // 128, 128, (a, out), budget_steps=2e6)
    assert out[0] == 0                                       # memory as it was


def test_the_runs_end_equal_strata_and_the_last_ends_the_grid():
    runs = later_runs(1000, 10, 4)
    assert runs == [(240, 10), (490, 10), (740, 10), (990, 10)]
    assert later_runs(100, 10, 20) is None                   # nearly all of it: run it whole
