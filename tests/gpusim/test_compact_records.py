"""Race records and access counts are made lazily and narrow (``Shadow.need``, counts that widen): an access
group that has not been made yet reads as "none" / zero. These cases make the group appear in the middle of a
launch, after the array's first access of another kind, so that reading a group as none when it is not would
miss the race or the count (expected values by hand: blocks are never ordered within a launch)."""

from __future__ import annotations

import numpy as np
from numba import cuda
from simkit import line_of, one_fault, run, run_clean

import gpusim
from gpusim import DataRace
from gpusim.observe import races


@cuda.jit
def write_first_then_war_across_blocks(a):
    i = cuda.grid(1)             # 2 blocks of 32; a has 128 elements
    a[64 + i] = 1                # the array's first access: a write (each thread its own element)
    v = a[(i + 32) % 64]         # the first read: an element the other block's thread overwrites next
    a[i] = v


def test_a_write_after_a_read_in_another_block_is_found_when_the_arrays_first_access_was_a_write():
    a = np.zeros(128, np.int64)
    f = one_fault(run(write_first_then_war_across_blocks, 2, 32, a), DataRace)
    assert f.hazard == "write after read" and f.lineno == line_of(write_first_then_war_across_blocks, "a[i] = v")
    assert (f.block, f.thread, f.index) == ((0, 0, 0), (0, 0, 0), (0,))
    assert (f.other_block, f.other_thread) == ((1, 0, 0), (0, 0, 0))
    assert f.count == 64


@cuda.jit
def write_first_then_atomics_then_read(a, out):
    i = cuda.grid(1)             # 2 blocks of 32; a has 128 elements
    a[64 + i] = 1                # first access: a write, elsewhere in the array
    cuda.atomic.add(a, 0, 1)     # the first atomics: every thread of both blocks, no race among themselves
    out[i] = a[0]                # a plain read of what atomics of the other block (unordered) updated


def test_a_read_after_atomics_of_another_block_is_found_when_the_arrays_first_access_was_a_write():
    a = np.zeros(128, np.int64)
    out = np.zeros(64, np.int64)
    f = one_fault(run(write_first_then_atomics_then_read, 2, 32, a, out), DataRace)
    assert f.hazard == "read after write"
    assert f.lineno == line_of(write_first_then_atomics_then_read, "out[i] = a[0]")
    assert f.count == 64 and a[0] == 64


@cuda.jit
def read_then_own_write_then_read(a, out):
    i = cuda.grid(1)
    v = a[i]                     # read group made here
    a[i] = v + 1                 # own element: clears this thread's read record, no race
    out[i] = a[i]                # reads what this thread wrote: no race


def test_own_reads_and_writes_stay_clean_when_the_groups_appear_mid_launch():
    a = np.arange(64, dtype=np.int64)
    out = np.zeros(64, np.int64)
    run_clean(read_then_own_write_then_read, 2, 32, a, out)
    assert out.tolist() == list(range(1, 65))


def test_groups_are_made_only_for_the_kinds_that_happen():
    sh = races.Shadow(4)
    assert sh.w_tid.dtype == np.int32 and sh.w_time.dtype == np.int64 and not sh.w_tid.any()
    assert sh.r_tid.size == 0 and sh.a_tid.size == 0
    bar, wbar = np.zeros(1, np.int64), np.zeros(1, np.int64)
    one = np.array([2], np.int64)
    races.record(sh, one, np.array([5], np.int64), 32, 1, 1, 7, races.WRITE, False, 0, bar, wbar)
    assert sh.r_tid.size == 0 and sh.a_tid.size == 0          # a write needs neither group
    assert sh.w_tid.tolist() == [0, 0, 6, 0]                   # thread 5, stored + 1
    races.record(sh, one, np.array([5], np.int64), 32, 1, 2, 8, races.READ, False, 0, bar, wbar)
    assert sh.r_tid.size == 4 and sh.a_tid.size == 0 and sh.r_tid.tolist() == [0, 0, 6, 0]


@cuda.jit
def one_element_read_over_and_over(a, out):
    acc = 0.0
    for _ in range(300):
        acc += a[0]
    out[cuda.threadIdx.x] = acc


def test_counts_past_a_byte_and_past_two_bytes_stay_exact():
    # 256 threads read a[0] 300 times: 300 reads per thread (past 255), 76,800 of a[0] (past 65,535)
    a = np.ones(1, np.float32)
    out = np.zeros(256, np.float32)
    report = gpusim.launch(one_element_read_over_and_over, 1, 256, (a, out))
    assert not report.faults and (out == 300).all()
    c = report.counts
    assert c.reads_per_thread("global", "a").tolist() == [300] * 256
    assert c.element_reads("a").tolist() == [76_800]
    assert c.writes_per_thread("global", "a").tolist() == [0] * 256      # never written: never made, reads 0
    assert c.element_writes("a").tolist() == [0]
    assert c.totals["global_ld"] == 76_800
