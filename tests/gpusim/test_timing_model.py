"""The time model (gpusim/timing_model.py): launches whose expected time is worked out by hand from the H200's
named parameters — the counts from the kernel's shape, the terms from the model's formula."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import cuda

import gpusim
from gpusim.roofline import GPUS, estimate
from gpusim.timing_model import H200, LIMITS, Machine, fingerprint
from gpusim.workload import Workload

F32 = np.float32
MIB = 1 << 20


@cuda.jit
def scale(out, a, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] * F32(2)


@cuda.jit
def transpose_naive(a, out, rows, cols):
    t = cuda.grid(1)
    if t < rows * cols:
        j = t // rows
        i = t % rows
        out[j, i] = a[i, j]


@cuda.jit
def one_bin(values, hist):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(hist, 0, values[i])


@cuda.jit
def count_all(flags, count):
    i = cuda.grid(1)
    if i < flags.size:
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def reverse8(out, a):
    s = cuda.shared.array(8, F32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    out[cuda.grid(1)] = s[7 - t]


@cuda.jit
def big_tile(out, a):
    s = cuda.shared.array(12288, F32)          # 48 KiB
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    out[cuda.grid(1)] = s[t]


def test_a_coalesced_map_is_latency_rounds_over_its_waves_plus_dram_bytes_at_the_copy_bandwidth():
    n, tpb = 1 << 20, 256
    a = np.ones(n, F32)
    r = gpusim.launch(scale, n // tpb, tpb, (np.zeros_like(a), a, n), trace=False)
    e = r.estimate("H200")
    m = H200
    # 4,096 blocks of 256 threads: 8 fit on an SM (2,048 threads), 132 x 8 = 1,056 at a time -> 4 waves
    assert (e.resident_blocks, e.waves) == (8, 4)
    # each block: one warp-round to DRAM (the load), one float32 multiply per thread
    assert r.metrics["gpusim__rounds_dram_sum"] == 4096
    latency = 4 * (m.dram_latency_s + 1 * m.fp_latency_s)
    dram = 8 * MIB / m.dram_bandwidth                     # 4 MiB read + 4 MiB written, once each
    l2 = (n // 8 + n // 8) * 32 / m.l2_bandwidth          # coalesced: 4 sectors per warp, loads and stores
    assert e.parts["latency"] == pytest.approx(latency)
    assert e.parts["dram"] == pytest.approx(dram) and e.parts["l2"] == pytest.approx(l2)
    assert e.parts["blocks"] == pytest.approx(4096 / m.block_rate)
    assert e.seconds == pytest.approx(m.launch_s + latency + max(dram, l2))
    assert e.limit == ("dram" if dram > latency else "latency") and e.bound == "memory"
    # the old fields keep their meaning: seconds = launch + max(memory side, compute side)
    assert e.seconds == pytest.approx(e.overhead_seconds + max(e.memory_seconds, e.compute_seconds))
    assert e.bytes == 8 * MIB and e.flops == n


def test_a_naive_transpose_pays_for_eight_times_its_bytes_in_l2_sectors():
    rows = cols = 1024
    a = np.arange(rows * cols, dtype=F32).reshape(rows, cols)
    out = np.zeros_like(a)
    r = gpusim.launch(transpose_naive, rows * cols // 256, 256, (a, out, rows, cols), trace=False)
    e = r.estimate("H200")
    m = H200
    # a warp's 32 loads walk down a column: 32 sectors for 128 bytes; its stores are coalesced (4 sectors)
    ld = r.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    st = r.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
    assert ld * 32 == 8 * a.nbytes and st * 32 == a.nbytes
    # DRAM still moves each 64-byte segment once: 4 MiB in, 4 MiB out
    assert e.bytes == 8 * MIB
    # a block is 256 threads of one column; the 16 columns sharing a 64-byte segment are read at the same
    # time (in one chunk of gpusim's blocks, as in one wave on the GPU), so every block waits on DRAM once
    blocks = rows * cols // 256
    assert r.metrics["gpusim__rounds_dram_sum"] == blocks and r.metrics["gpusim__rounds_l2_sum"] == 0
    latency = 4 * m.dram_latency_s
    l2 = 9 * a.nbytes / m.l2_bandwidth
    assert e.parts["l2"] == pytest.approx(l2) and e.parts["latency"] == pytest.approx(latency)
    assert e.seconds == pytest.approx(m.launch_s + latency + l2)
    assert e.limit == "l2"
    # against the same bytes moved coalesced: the difference is the sector traffic
    c = gpusim.launch(scale, rows * cols // 256, 256, (np.zeros(rows * cols, F32), a.reshape(-1), rows * cols),
                      trace=False).estimate("H200")
    assert e.seconds - c.seconds == pytest.approx(l2 - c.parts["dram"] + latency - c.parts["latency"])


@cuda.jit
def two_passes(out, out2, a, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] * F32(2)
        out2[i] = a[i] + F32(1)    # out might be a: a[i] is loaded again, after the store, and found on chip


def test_a_second_read_of_the_same_data_waits_on_l2_not_dram():
    n = 1 << 14
    a = np.ones(n, F32)
    r = gpusim.launch(two_passes, n // 128, 128, (np.zeros_like(a), np.zeros_like(a), a, n), trace=False)
    blocks = n // 128
    assert r.metrics["gpusim__rounds_dram_sum"] == blocks and r.metrics["gpusim__rounds_l2_sum"] == blocks
    e = r.estimate("H200")
    m = H200
    # 128 blocks: one wave; the chain is a DRAM round, an L2 round and two float32 operations
    assert e.waves == 1
    assert e.parts["latency"] == pytest.approx(m.dram_latency_s + m.l2_latency_s + 2 * m.fp_latency_s)


def test_atomics_on_one_address_are_served_one_after_another():
    n = 1 << 16
    values = np.ones(n, F32)
    r = gpusim.launch(one_bin, n // 256, 256, (values, np.zeros(1, F32)), trace=False)
    e = r.estimate("H200")
    # float atomics are never aggregated: 65,536 additions to hist[0], at one per clock
    assert r.metrics["gpusim__atomic_max_per_address"] == n
    assert e.parts["atomics"] == pytest.approx(n / H200.atomic_rate)
    assert e.seconds == pytest.approx(H200.launch_s + n / H200.atomic_rate)
    assert e.limit == "atomics"
    # an integer count on one address: the compiler has one lane per warp do it (2,048 warps)
    r = gpusim.launch(count_all, n // 256, 256, (values, np.zeros(1, np.int32)), trace=False)
    assert r.metrics["gpusim__atomic_max_per_address"] == n // 32
    assert r.estimate("H200").parts["atomics"] == pytest.approx(n // 32 / H200.atomic_rate)


def test_a_one_block_launch_is_its_launch_cost_and_one_round_trip():
    a = np.ones(32, F32)
    r = gpusim.launch(scale, 1, 32, (np.zeros_like(a), a, 32), trace=False)
    e = r.estimate("H200")
    m = H200
    chain = m.dram_latency_s + m.fp_latency_s              # one block: no waves to share, the chain is the time
    assert e.parts["latency"] == pytest.approx(chain)
    # 128 B read and 128 B written, each in its own two 64-byte segments
    assert e.seconds == pytest.approx(m.launch_s + chain + 256 / m.dram_bandwidth)
    assert e.limit == "launch" and e.overhead_seconds == m.launch_s


def test_tiny_blocks_are_limited_by_how_fast_the_gpu_starts_blocks():
    n = 1 << 19
    a = np.ones(n, F32)
    r = gpusim.launch(reverse8, n // 8, 8, (np.zeros_like(a), a), trace=False)
    e = r.estimate("H200")
    m = H200
    # 65,536 blocks of one 8-lane warp; 32 blocks per SM -> ceil(65,536 / 4,224) = 16 waves
    assert (e.resident_blocks, e.waves) == (32, 16)
    assert r.metrics["gpusim__barriers_sum"] == n // 8 and r.metrics["gpusim__rounds_shared_sum"] == n // 8
    chain = m.dram_latency_s + m.barrier_s + m.shared_latency_s
    assert e.parts["latency"] == pytest.approx(16 * chain)
    assert e.parts["blocks"] == pytest.approx((n // 8) / m.block_rate)
    assert e.seconds == pytest.approx(m.launch_s + (n // 8) / m.block_rate) and e.limit == "blocks"


def test_shared_memory_limits_how_many_blocks_an_sm_holds():
    n, tpb = 1 << 16, 256
    a = np.ones(n, F32)
    r = gpusim.launch(big_tile, n // tpb, tpb, (np.zeros_like(a), a), trace=False)
    assert r.shared_bytes_per_block == 48 * 1024
    e = r.estimate("H200")
    # 228 KiB per SM, 48 KiB + 1 KiB reserved per block: 4 blocks, not the 8 the threads would allow
    assert e.resident_blocks == 228 // 49
    assert e.waves == math.ceil((n // tpb) / (132 * 4))


def test_without_geometry_or_rounds_the_model_is_the_roofline_at_the_copy_bandwidth():
    class Counts:     # what tui/realistic.py hands over: scaled metrics and FLOPs, no launch
        metrics = {"dram__bytes_read.sum": 1 << 30, "dram__bytes_write.sum": 1 << 30}
        flops = {"float32": {"add": 1 << 28}}
    e = estimate(Counts(), "H200")
    assert e.seconds == pytest.approx(H200.launch_s + (2 << 30) / H200.dram_bandwidth)
    assert e.limit == "dram" and e.resident_blocks == 0 and set(e.parts) == {"launch", "dram", "compute"}
    # a GPU with no machine (graduate mode's measured peaks for an unknown device): its bandwidth, 3 µs
    from gpusim.roofline import GPU
    plain = GPU("L40S", 0.8e12, {"float32": 91e12})
    assert estimate(Counts(), plain).seconds == pytest.approx(3e-6 + (2 << 30) / 0.8e12)


def test_a_workload_round_trips_through_json_and_estimates_the_same():
    a = np.ones(4096, F32)
    r = gpusim.launch(scale, 16, 256, (np.zeros_like(a), a, 4096), trace=False)
    w = Workload.of(r)
    again = Workload.from_dict(w.to_dict())
    assert again == w
    assert estimate(again, "H200") == r.estimate("H200")


def test_the_fingerprint_follows_every_parameter():
    base = fingerprint({g: GPUS[g].machine for g in GPUS})
    from dataclasses import replace
    moved = {g: GPUS[g].machine for g in GPUS} | {"H200": replace(H200, barrier_s=H200.barrier_s * 1.01)}
    assert fingerprint(moved) != base
    assert set(LIMITS) >= {"dram", "l2", "latency", "blocks", "shared", "atomics", "compute", "launch"}


def test_every_known_gpu_has_a_machine_with_its_own_sm_count():
    sms = {g: GPUS[g].machine.sms for g in GPUS}
    assert sms == {"H100 SXM": 132, "H200": 132, "A100 80GB": 108, "RTX 4090": 128, "T4": 40}
    for g in GPUS.values():
        assert isinstance(g.machine, Machine)
        assert g.machine.dram_bandwidth < g.bandwidth       # achievable, not the datasheet's
