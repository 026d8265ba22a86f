"""Race detection: shadow memory with barrier epochs. Positive and negative cases for every kind of hazard.

A race is two accesses to one element by different threads, at least one a write, not both atomic, and not
ordered by a barrier (``syncthreads`` within a block; ``syncwarp`` also within a warp). Blocks are never
ordered within a launch. Lanes run in lockstep in the simulator, so none of these tests can pass by luck.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda
from simkit import faults, line_of, one_fault, run, run_clean

from gpusim import DataRace
from gpusim.observe import races

# ---------------------------------------------------------------------------------------------- not races


@cuda.jit
def atomics_to_one_address(count, sh_out):
    sh = cuda.shared.array(1, numba.int32)
    if cuda.threadIdx.x == 0:
        sh[0] = 0
    cuda.syncthreads()
    cuda.atomic.add(sh, 0, 1)
    cuda.atomic.add(count, 0, 1)
    cuda.atomic.max(count, 1, cuda.threadIdx.x)
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        sh_out[cuda.blockIdx.x] = sh[0]


def test_atomics_to_one_address_are_not_a_race():
    count = np.zeros(2, np.int64)
    sh_out = np.zeros(4, np.int32)
    run_clean(atomics_to_one_address, 4, 96, count, sh_out)
    assert count[0] == 4 * 96 and count[1] == 95
    np.testing.assert_array_equal(sh_out, 96)


@cuda.jit
def own_write_then_read(a, out):
    sh = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i]
    sh[t] = sh[t] * 2
    out[i] = a[i]
    out[i] = out[i] + sh[t]
    a[i] = out[i]


def test_reading_and_rewriting_your_own_element_is_not_a_race():
    a = np.arange(128, dtype=np.float32)
    out = np.zeros_like(a)
    run_clean(own_write_then_read, 2, 64, a, out)
    np.testing.assert_array_equal(out, np.arange(128) * 3)


@cuda.jit
def everyone_reads_one_element(a, out):
    sh = cuda.shared.array(1, numba.float32)
    if cuda.threadIdx.x == 0:
        sh[0] = a[0]
    cuda.syncthreads()
    i = cuda.grid(1)
    out[i] = sh[0] + a[0]


def test_concurrent_reads_are_not_a_race():
    a = np.array([1.5], np.float32)
    out = np.zeros(256, np.float32)
    run_clean(everyone_reads_one_element, 4, 64, a, out)
    np.testing.assert_array_equal(out, 3.0)


@cuda.jit
def warp_exchange(a, out, sync):
    sh = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    if sync:
        cuda.syncwarp()
    out[t] = sh[t ^ 1]


def test_a_warp_exchange_separated_by_syncwarp_is_not_a_race():
    a = np.arange(64, dtype=np.float32)
    out = np.zeros_like(a)
    run_clean(warp_exchange, 1, 64, a, out, True)
    np.testing.assert_array_equal(out, a.reshape(32, 2)[:, ::-1].reshape(-1))


def test_a_warp_exchange_without_syncwarp_is_a_race():
    a = np.arange(64, dtype=np.float32)
    out = np.zeros_like(a)
    f = one_fault(run(warp_exchange, 1, 64, a, out, False), DataRace)
    assert f.hazard == "read after write" and f.array == "sh"
    assert f.lineno == line_of(warp_exchange, "out[t] = sh[t ^ 1]")
    assert f.other_lineno == line_of(warp_exchange, "sh[t] = a[t]")
    # thread 0 reads sh[1], written by thread 1 of the same block
    assert f.thread == (0, 0, 0) and f.other_thread == (1, 0, 0) and f.block == f.other_block == (0, 0, 0)
    assert f.index == (1,)


@cuda.jit
def cross_warp_exchange(a, out, mode):
    sh = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    if mode == 1:
        cuda.syncwarp()
    elif mode == 2:
        cuda.syncthreads()
    out[t] = sh[(t + 32) % 64]


@pytest.mark.parametrize("mode, racy", [(0, True), (1, True), (2, False)])
def test_syncwarp_does_not_order_threads_of_different_warps_but_syncthreads_does(mode, racy):
    a = np.arange(64, dtype=np.float32)
    out = np.zeros_like(a)
    report = run(cross_warp_exchange, 1, 64, a, out, mode)
    assert bool(faults(report, DataRace)) == racy
    if racy:
        f = one_fault(report, DataRace)
        assert f.hazard == "read after write" and f.other_thread == (32, 0, 0) and f.thread == (0, 0, 0)
    np.testing.assert_array_equal(out, np.roll(a, -32))


# ---------------------------------------------------------------------------------------------- races


@cuda.jit
def war_shift(a, out):
    sh = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    if t < 63:
        v = sh[t + 1]
        sh[t] = v          # thread t-1 read sh[t] above: a write after read with no barrier
    cuda.syncthreads()
    out[t] = sh[t]


def test_write_after_read_in_shared_memory():
    a = np.arange(64, dtype=np.float32)
    out = np.zeros_like(a)
    f = one_fault(run(war_shift, 1, 64, a, out), DataRace)
    assert f.hazard == "write after read" and f.array == "sh"
    assert f.lineno == line_of(war_shift, "sh[t] = v")
    assert f.other_lineno == line_of(war_shift, "v = sh[t + 1]")
    assert f.index == (1,) and f.thread == (1, 0, 0) and f.other_thread == (0, 0, 0)


@cuda.jit
def waw_shared(out):
    sh = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 3 or t == 40:
        sh[0] = t
    cuda.syncthreads()
    out[t] = sh[0]


def test_write_after_write_in_shared_memory_across_warps():
    out = np.zeros(64, np.int64)
    f = one_fault(run(waw_shared, 1, 64, out), DataRace)
    assert f.hazard == "write after write" and f.index == (0,)
    assert {f.thread, f.other_thread} == {(3, 0, 0), (40, 0, 0)}


@cuda.jit
def global_cross_block(buf, out, sync):
    i = cuda.grid(1)
    buf[i] = i
    if sync:
        cuda.syncthreads()
    out[i] = buf[(i + 32) % buf.size]


@pytest.mark.parametrize("sync", [False, True])
def test_blocks_are_never_ordered_even_with_syncthreads(sync):
    # 2 blocks of 32: thread i reads the element the other block's thread wrote
    buf = np.zeros(64, np.int64)
    out = np.zeros(64, np.int64)
    f = one_fault(run(global_cross_block, 2, 32, buf, out, sync), DataRace)
    assert f.hazard == "read after write" and f.array == "buf"
    assert f.block != f.other_block
    assert any("different blocks" in d for d in f.details)


@pytest.mark.parametrize("sync, racy", [(False, True), (True, False)])
def test_global_memory_within_a_block_is_ordered_by_syncthreads(sync, racy):
    # one block of 64: thread i reads what thread i+32 (another warp) wrote
    buf = np.zeros(64, np.int64)
    out = np.zeros(64, np.int64)
    report = run(global_cross_block, 1, 64, buf, out, sync)
    assert bool(faults(report, DataRace)) == racy
    np.testing.assert_array_equal(out, np.roll(np.arange(64), -32))


@cuda.jit
def global_waw_across_blocks(out):
    out[0] = cuda.blockIdx.x


def test_write_after_write_in_global_memory_across_blocks():
    out = np.zeros(1, np.int64)
    f = one_fault(run(global_waw_across_blocks, 3, 1, out), DataRace)
    assert f.hazard == "write after write" and f.block != f.other_block


@cuda.jit
def global_war_across_blocks(a):
    i = cuda.grid(1)
    v = a[(i + 32) % a.size]
    a[i] = v


def test_write_after_read_in_global_memory_across_blocks():
    # 2 blocks of 32: each thread overwrites the element a thread of the other block read
    a = np.arange(64, dtype=np.int64)
    f = one_fault(run(global_war_across_blocks, 2, 32, a), DataRace)
    assert f.hazard == "write after read" and f.lineno == line_of(global_war_across_blocks, "a[i] = v")
    assert (f.block, f.thread, f.index) == ((0, 0, 0), (0, 0, 0), (0,))
    assert (f.other_block, f.other_thread) == ((1, 0, 0), (0, 0, 0))
    assert f.count == 64


@cuda.jit
def atomic_then_plain_read(out, sync):
    sh = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        sh[0] = 0
    cuda.syncthreads()
    cuda.atomic.add(sh, 0, 1)
    if sync:
        cuda.syncthreads()
    if t == 0:
        out[0] = sh[0]


@pytest.mark.parametrize("sync, racy", [(False, True), (True, False)])
def test_a_plain_read_of_an_atomically_updated_element_needs_a_barrier(sync, racy):
    out = np.zeros(1, np.int64)
    report = run(atomic_then_plain_read, 1, 64, out, sync)
    assert bool(faults(report, DataRace)) == racy
    if not racy:
        assert out[0] == 64


@cuda.jit
def init_then_atomics(out, sync):
    sh = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        sh[0] = 0
    if sync:
        cuda.syncthreads()
    cuda.atomic.add(sh, 0, 1)
    cuda.syncthreads()
    if t == 0:
        out[0] = sh[0]


@pytest.mark.parametrize("sync, racy", [(False, True), (True, False)])
def test_atomics_racing_with_the_store_that_initialised_the_counter(sync, racy):
    # thread 0's own atomic comes right after its store: the other threads' atomics still race with the store
    out = np.zeros(1, np.int64)
    report = run(init_then_atomics, 1, 64, out, sync)
    if racy:
        f = one_fault(report, DataRace)
        assert f.hazard == "write after write" and f.other_thread == (0, 0, 0) and f.thread == (1, 0, 0)
    else:
        assert not report.faults and out[0] == 64


@cuda.jit
def last_thread_reads_the_total(out):
    sh = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        sh[0] = 0
    cuda.syncthreads()
    cuda.atomic.add(sh, 0, 1)
    if t == cuda.blockDim.x - 1:
        out[0] = sh[0]        # no barrier: the other threads' atomics may not have happened yet


def test_reading_an_atomic_total_without_a_barrier_races_even_for_the_last_atomic_thread():
    f = one_fault(run(last_thread_reads_the_total, 1, 64, np.zeros(1, np.int64)), DataRace)
    assert f.hazard == "read after write" and f.thread == (63, 0, 0)


# ---------------------------------------------------------------------------------------------- the classic bug


@cuda.jit
def block_sum(a, out, sync):
    sh = cuda.shared.array(128, numba.float32)
    t = cuda.threadIdx.x
    sh[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    s = 64
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        if sync:
            cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


def test_a_missing_syncthreads_in_a_reduction_is_found_on_every_run():
    a = np.arange(512, dtype=np.float32)
    for _ in range(3):
        out = np.zeros(4, np.float32)
        f = one_fault(run(block_sum, 4, 128, a, out, False), DataRace)
        assert f.array == "sh" and f.hazard == "read after write"
        assert f.lineno == line_of(block_sum, "sh[t] += sh[t + s]")
        assert f.other_lineno == f.lineno
        assert f.thread != f.other_thread and f.block == f.other_block


def test_the_same_reduction_with_its_barrier_is_clean_and_right():
    a = np.arange(512, dtype=np.float32)
    out = np.zeros(4, np.float32)
    run_clean(block_sum, 4, 128, a, out, True)
    np.testing.assert_array_equal(out, a.reshape(4, 128).sum(axis=1))


def test_a_race_message_names_both_accesses():
    a = np.arange(64, dtype=np.float32)
    f = one_fault(run(warp_exchange, 1, 64, a, np.zeros_like(a), False), DataRace)
    text = str(f)
    first = text.splitlines()[0]
    assert first.startswith("Data race on shared array 'sh'") and first.endswith(".")
    assert "out[t] = sh[t ^ 1]" in text and "sh[t] = a[t]" in text
    d = f.to_dict()
    assert d["kind"] == "DataRace" and d["thread"] == [0, 0, 0] and d["index"] == [1]


# ---------------------------------------------------------------------------------------------- the tracker itself


T_MODEL, BLOCKS_MODEL = 64, 2          # two warps per block, two blocks
THREADS_MODEL = [0, 1, 31, 32, 33, 64, 65, 100]
KINDS = {"read": races.READ, "write": races.WRITE, "atomic": races.ATOMIC}


@st.composite
def access_histories(draw):
    """Access groups (one instruction: distinct threads, ascending) and barriers, in program order."""
    steps = []
    for _ in range(draw(st.integers(1, 14))):
        what = draw(st.sampled_from(["access", "access", "access", "syncthreads", "syncwarp"]))
        if what == "access":
            tids = sorted(draw(st.sets(st.sampled_from(THREADS_MODEL), min_size=1, max_size=3)))
            steps.append(("access", draw(st.sampled_from(list(KINDS))),
                          [(t, draw(st.integers(0, 2))) for t in tids]))
        elif what == "syncthreads":
            steps.append(("syncthreads", draw(st.integers(0, BLOCKS_MODEL - 1))))
        else:
            steps.append(("syncwarp", draw(st.integers(0, 2 * BLOCKS_MODEL - 1))))
    return steps


def reference_verdicts(steps):
    """Per access group: (race?, uninitialised read?) by brute force over every earlier access."""
    events, barriers, verdicts = [], [], []
    for time, step in enumerate(steps):
        if step[0] == "syncthreads":
            barriers.append((time, step[1], None))
            continue
        if step[0] == "syncwarp":
            barriers.append((time, step[1] // 2, step[1]))
            continue
        _, kind, lanes = step
        race = uninit = False
        for tid, elem in lanes:
            block, warp = tid // T_MODEL, tid // 32

            def ordered(p_time, p_tid, block=block, warp=warp, time=time):
                if p_tid // T_MODEL != block:
                    return False
                return any(p_time < bt < time and bb == block and (bw is None or (bw == warp == p_tid // 32))
                           for bt, bb, bw in barriers)

            for p_time, p_tid, p_elem, p_kind in events:
                if p_elem != elem or p_tid == tid or (p_kind == "read" and kind == "read"):
                    continue
                if p_kind == "atomic" and kind == "atomic":
                    continue
                if not ordered(p_time, p_tid):
                    race = True
            if kind != "write" and not any(e[2] == elem and e[3] != "read" for e in events):
                uninit = True
            events.append((time, tid, elem, kind))
        verdicts.append((race, uninit))
    return verdicts


def tracker_verdicts(steps):
    shadow = races.Shadow(3)
    bar = np.full(BLOCKS_MODEL, -1, np.int64)
    wbar = np.full(2 * BLOCKS_MODEL, -1, np.int64)
    verdicts = []
    for time, step in enumerate(steps):   # time doubles as the runtime's clock: barriers sit between groups
        if step[0] == "syncthreads":
            bar[step[1]] = time
            wbar[2 * step[1]:2 * step[1] + 2] = time
        elif step[0] == "syncwarp":
            wbar[step[1]] = time
        else:
            _, kind, lanes = step
            gt = np.array([t for t, _ in lanes], np.int64)
            el = np.array([e for _, e in lanes], np.int64)
            res = races.record(shadow, el, gt, T_MODEL, 2, time, 1, KINDS[kind], True, 0, bar, wbar)
            verdicts.append((bool(res[races.R_RACES]), bool(res[races.R_UNINITS])))
    return verdicts


@settings(max_examples=300, deadline=None)
@given(access_histories())
def test_the_shadow_tracker_agrees_with_a_brute_force_check_of_every_pair(steps):
    """The tracker keeps only the last write and a summary of the reads since, so after a first race it may
    stay silent about later accesses that race with the same old access (that race is already reported).
    Up to and including the first race it must agree exactly; after it, never report a race that is not
    there; uninitialised reads it must always get exactly right."""
    got, want = tracker_verdicts(steps), reference_verdicts(steps)
    assert [u for _, u in got] == [u for _, u in want]
    races_got, races_want = [r for r, _ in got], [r for r, _ in want]
    first = races_want.index(True) if True in races_want else len(races_want)
    assert races_got[:first + 1] == races_want[:first + 1]
    assert all(w for g, w in zip(races_got, races_want) if g), "a race reported where there is none"
