"""When the compiled back end splits a launch over threads: only where a second worker saves more than its own
race records of the global arrays cost (they are tens of bytes per element), as measured on this kernel."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from gpusim.backends.compiled import driver


@pytest.fixture(autouse=True)
def assumed_memory_speed(monkeypatch):
    """The cost of a byte of records as assumed before any launch measured it (2 GB/s, cleared and read)."""
    monkeypatch.setattr(driver, "_byte_seconds", None)


def _map_kernel(lane_seconds, split_seconds=None):
    """What ``_worth_splitting`` reads of a 1-D map ``out[i] = a[i] + 1``: ``a`` only read (no records), ``out``
    written (a write record of 3 int64 per element)."""
    a = SimpleNamespace(kind="param", params=(0,), need_w=False, need_a=False, need_r=False, writes=False,
                        atomics=False)
    out = SimpleNamespace(kind="param", params=(1,), need_w=True, need_a=False, need_r=False, writes=True,
                          atomics=False)
    return SimpleNamespace(gen=SimpleNamespace(slots=[a, out]), timings={SHAPE: [lane_seconds, split_seconds, 0]})


N = 1 << 20
ARGS = [np.zeros(N, np.float32), np.zeros(N, np.float32)]
INFO = SimpleNamespace(num_threads=N, grid=(N // 256, 1, 1), block=(256, 1, 1))
SHAPE = driver._shape(INFO, ARGS)


def split(ck, info, args, workers):
    return driver._worth_splitting(ck, SHAPE, info, args, workers)


def test_a_light_kernel_over_large_arrays_stays_on_one_thread():
    # 5 ns of work per thread saves 2.6 ms on two threads; the second worker's 24 MiB of records cost more
    assert not split(_map_kernel(5e-9), INFO, ARGS, 2)


def test_a_kernel_with_real_work_per_thread_is_split():
    # 1 us per thread (a loop of a few hundred steps): half a second saved
    assert split(_map_kernel(1e-6), INFO, ARGS, 2)


def test_a_kernel_not_yet_measured_runs_on_one_thread():
    assert not split(_map_kernel(None), INFO, ARGS, 2)


def test_what_one_launch_shape_measured_does_not_decide_another():
    ck = _map_kernel(1e-6)
    assert not driver._worth_splitting(ck, (INFO.grid, INFO.block, ((N * 2,), (N * 2,))), INFO, ARGS, 2)


def test_the_memory_speed_a_launch_measured_decides():
    ck = _map_kernel(1e-7)      # saves 52 ms on two threads; 28 MiB of records at 2 GB/s cost 15 ms
    assert split(ck, INFO, ARGS, 2)
    driver._byte_seconds = 4e-9   # a launch found memory at 250 MB/s: 117 ms
    assert not split(ck, INFO, ARGS, 2)


def test_a_split_measured_slower_than_one_thread_is_not_repeated():
    # a machine whose other cores are busy: the split launch cost more per thread than the one-worker launch
    assert not split(_map_kernel(1e-6, split_seconds=1.2e-6), INFO, ARGS, 2)
    assert split(_map_kernel(1e-6, split_seconds=0.6e-6), INFO, ARGS, 2)

