"""Launch limits are checked before anything is allocated (issue 14): the GPU's, by the numbers NVIDIA
publishes for compute capability 9.0 (grid 2^31-1 x 65535 x 65535, 1024 threads per block, 48 KiB static
and 227 KiB total shared memory per block, 512 KiB of local memory per thread), and the simulator's own
(threads per launch, memory per chunk of blocks). Each refusal comes in well under a second and without the
gigabytes the launch would need: ``tests/gpusim/test_fuzz.py`` measures time and memory in fresh processes.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import cuda
from simkit import line_of, one_fault, run, run_clean

import gpusim
from gpusim import KernelError, LaunchError, limits


@cuda.jit
def one_write(out):
    if cuda.grid(1) == 0:
        out[0] = 1.0


@cuda.jit
def dynamic_shared(out):
    sh = cuda.shared.array(0, numba.float32)
    sh[cuda.threadIdx.x] = 1.0
    cuda.syncthreads()
    out[cuda.grid(1)] = sh[0]


@cuda.jit
def local_of_one_mib(out):
    loc = cuda.local.array(262144, numba.float32)     # 1 MiB per thread
    loc[0] = 1.0
    out[0] = loc[0]


@cuda.jit
def local_of_256_kib(out):
    loc = cuda.local.array(65536, numba.float32)      # 256 KiB per thread: within the GPU's 512 KiB
    loc[cuda.threadIdx.x] = 1.0
    out[cuda.grid(1)] = loc[cuda.threadIdx.x]


@pytest.mark.parametrize("grid, block, words", [
    (2**31, 1, "x dimension is at most 2,147,483,647"),
    ((1, 65536), 1, "y dimension is at most 65,535"),
    (1, (1, 1, 65), "z dimension is at most 64"),
    (1, (32, 33), "at most 1024 threads"),
    (2**31 - 1, 1, "more than the simulator can track"),             # legal on a GPU: 2^31-1 threads
    ((65535, 65535), 1024, "more than the simulator can track"),
])
def test_grids_and_blocks_past_the_limits_are_launch_errors(grid, block, words):
    with pytest.raises(LaunchError, match=words):
        gpusim.launch(one_write, grid, block, (np.zeros(1),))


def test_the_simulator_runs_up_to_2_to_the_24_threads():
    assert limits.MAX_SIMULATED_THREADS == 2**24
    with pytest.raises(LaunchError, match="16,777,217 threads"):
        gpusim.launch(one_write, 2**24 + 1, 1, (np.zeros(1),))


def test_dynamic_shared_memory_past_227_kib_is_a_launch_error_and_up_to_it_runs():
    with pytest.raises(LaunchError, match="232,448"):
        gpusim.launch(dynamic_shared, 1, 32, (np.zeros(32),), shared_mem=227 * 1024 + 1)
    out = np.zeros(64)
    run_clean(dynamic_shared, 2, 32, out, shared_mem=227 * 1024)
    assert (out == 1).all()


def test_static_and_dynamic_shared_memory_together_past_227_kib_is_a_launch_error():
    @cuda.jit
    def both(out):
        st = cuda.shared.array(8192, numba.float32)   # 32 KiB static
        dy = cuda.shared.array(0, numba.float32)
        st[0] = 1.0
        dy[0] = 2.0
        out[0] = st[0] + dy[0]

    with pytest.raises(LaunchError, match="32,768 bytes of static and 200,000 of dynamic"):
        gpusim.launch(both, 1, 1, (np.zeros(1),), shared_mem=200_000)


def test_local_arrays_past_512_kib_per_thread_are_refused_before_running_at_the_declaration():
    out = np.full(1, 7.0)
    f = one_fault(run(local_of_one_mib, 1, 1, out), KernelError)
    assert f.summary == ("The kernel declares 1048576 bytes of local arrays per thread; a GPU allows 524288 "
                         "(512 KiB).")
    assert f.lineno == line_of(local_of_one_mib, "cuda.local.array") and out[0] == 7.0


def test_a_block_whose_arrays_pass_the_simulators_chunk_memory_is_a_launch_error():
    # 256 KiB of local data for each of 1024 threads is 256 MiB (and as much again of initialisation flags)
    with pytest.raises(LaunchError, match="one block needs 512 MiB of simulator memory"):
        gpusim.launch(local_of_256_kib, 1, 1024, (np.zeros(1024),))


def test_large_local_arrays_run_in_smaller_chunks_with_the_same_result(monkeypatch):
    out = np.zeros(4 * 64)
    run_clean(local_of_256_kib, 4, 64, out)           # 4 blocks of 64 threads: 32 MiB each
    assert (out == 1).all()
    mem = limits.Memory(local=256 * 1024)
    assert limits.blocks_per_chunk(mem, 64, 0, 1 << 16) == 8          # 256 MiB in blocks of 32 MiB


def test_the_access_counts_of_a_huge_instrumented_launch_are_refused_and_it_runs_uninstrumented():
    @cuda.jit
    def shared_per_block(out):
        sh = cuda.shared.array(12288, numba.float32)  # 48 KiB per block: counted per element of every block
        sh[cuda.threadIdx.x] = 1.0
        if cuda.threadIdx.x == 0:
            out[cuda.blockIdx.x] = sh[0]

    out = np.zeros(65536)  # 65536 blocks x 12288 elements x (a read and a write count of one byte) = 1.5 GiB
    with pytest.raises(LaunchError, match="access counts of this launch would take 1.5 GiB"):
        gpusim.launch(shared_per_block, 65536, 1, (out,))
    report = gpusim.launch(shared_per_block, 65536, 1, (out,), instrument=False)
    assert not report.faults and (out == 1).all()
