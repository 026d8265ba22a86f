"""The instrumentation observers through real launches, and one puzzle-sized kernel counted by hand."""

from __future__ import annotations

import numpy as np
import pytest
from ncu_cases import TPB, dot_shared
from numba import cuda

import gpusim
from gpusim.observe.metrics import METRIC_KEYS, AccessCounts, instrumentation
from gpusim.observe.trace import PhaseTrace


@cuda.jit
def copy(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i]


def test_instrumentation_fills_every_part_of_the_report():
    a = np.arange(100, dtype=np.float32)
    r = gpusim.launch(copy, 4, 32, (a, np.zeros_like(a)))
    assert set(METRIC_KEYS) <= set(r.metrics)
    assert isinstance(r.counts, AccessCounts)
    assert isinstance(r.trace, PhaseTrace)
    assert r.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 4   # 100 = 3 warps + 4 lanes
    assert r.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 3 * 4 + 1


def test_trace_switch():
    a = np.arange(64, dtype=np.float32)
    assert gpusim.launch(copy, 2, 32, (a, np.zeros_like(a)), trace=False).trace is None
    assert gpusim.launch(copy, 2, 32, (a, np.zeros_like(a)), trace="full").trace.recorded == 128
    with pytest.raises(ValueError):
        instrumentation("everything")


def test_no_instrumentation_no_metrics():
    a = np.arange(64, dtype=np.float32)
    r = gpusim.launch(copy, 2, 32, (a, np.zeros_like(a)), instrument=False)
    assert r.metrics == {} and r.counts is None and r.trace is None


def test_dot_product_counted_by_hand():
    """``dot_shared`` (tests/gpusim/ncu_cases.py): 4 blocks x 64 threads, n = 200, a tree reduction in shared.

    Global loads a[i], b[i] for i < 200. Blocks 0-2: both warps active -> 2 requests per array per block;
    block 3 (i = 192..255) only lanes i = 192..199 of warp 0 -> 1 request. Requests: (3*2 + 1) * 2 = 14.
    A full warp reads 128 aligned bytes = 4 sectors, block 3's 8 lanes 32 bytes = 1 sector:
    (6*4 + 1) * 2 = 50 sectors, and 50 is also the ideal. Stores: out[block] by thread 0: 4 requests of
    one sector each.
    Shared: cache[t] = v by all 64 threads: 2 store requests per block. The loop s = 32, 16, 8, 4, 2, 1 runs
    with t < s: only warp 0 -> per step one request each for cache[t], cache[t+s] and the store; then thread
    0 reads cache[0]. Per block: loads 6*2 + 1 = 13, stores 2 + 6 = 8; all 4 blocks: 52 and 32 requests, one
    wavefront each (consecutive words, or one lane): no bank conflict.
    Per thread, shared loads: t=0: 6*2 + 1 = 13; t=1: 5*2 = 10; t=2,3: 8; t=4..7: 6; t=8..15: 4; t=16..31:
    2; t>=32: 0. Shared stores: 1 + the steps it takes part in (t=0: 7 ... t>=32: 1). Per block both sum to
    13 + 10 + 2*8 + 4*6 + 8*4 + 16*2 = 127 -> 508 for 4 blocks.
    cache[0] is read 7 times per block (6 steps as cache[t], then thread 0's final read); cache[63] once.
    FLOPs: 200 multiplies, 4 blocks * 63 adds = 252. DRAM estimate: a and b are 800 bytes = 13 64-byte
    segments each -> 1664 bytes read; out is 16 bytes -> one segment written, 64 bytes.
    ncu on the H200 read the same requests, sectors, instructions and wavefronts (test_metrics_ncu.py).
    """
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(200).astype(np.float32), rng.standard_normal(200).astype(np.float32)
    out = np.zeros(4, np.float32)
    r = gpusim.launch(dot_shared, 4, TPB, (a, b, out, 200))
    assert not r.faults
    np.testing.assert_allclose(out, [(a[k:k + 64] * b[k:k + 64]).sum() for k in range(0, 256, 64)], rtol=1e-5)
    m = r.metrics
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 14
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 50
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] == 4
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == 4
    assert m["smsp__sass_inst_executed_op_shared_ld.sum"] == 52
    assert m["smsp__sass_inst_executed_op_shared_st.sum"] == 32
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 52
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] == 32
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0
    assert m["dram__bytes_read.sum"] == 1664 and m["dram__bytes_write.sum"] == 64
    assert r.flops == {"float32": {"mul": 200, "add": 252}} and m["gpusim__flops_total"] == 452

    c = r.counts
    assert c.ideal_sectors["ld"] == 50
    reads = c.reads_per_thread("global")
    assert reads[:200].tolist() == [2] * 200 and not reads[200:].any()
    assert np.flatnonzero(c.writes_per_thread("global")).tolist() == [0, 64, 128, 192]
    per_t = [13, 10] + [8] * 2 + [6] * 4 + [4] * 8 + [2] * 16 + [0] * 32
    assert c.reads_per_thread("shared", "cache").tolist() == per_t * 4
    assert c.writes_per_thread("shared").tolist() == ([7, 6] + [5] * 2 + [4] * 4 + [3] * 8 + [2] * 16
                                                      + [1] * 32) * 4
    assert c.totals["shared_ld"] == c.totals["shared_st"] == 508
    assert c.totals["global_ld"] == 400 and c.totals["global_st"] == 4
    cache_reads = c.element_reads("cache")
    assert cache_reads.shape == (4, TPB)
    assert cache_reads[:, 0].tolist() == [7] * 4 and cache_reads[:, 63].tolist() == [1] * 4
    assert c.element_reads("a").tolist() == [1] * 200
    assert c.coalescing["a"] == {"requested_bytes": 800, "moved_bytes": 800, "efficiency": 1.0}
    assert c.coalescing["out"]["efficiency"] == 16 / 128

    t = r.trace
    assert t.blocks() == [0, 1, 2, 3] and t.num_phases(0) == 8
    assert len(t.accesses(0, 0)) == 3 * 64                    # a, b loads and the cache store
    assert t.events(0, 6) == [(0, "cache", 0, "ld"), (0, "cache", 1, "ld"), (0, "cache", 0, "st")]
    assert [e[1:] for e in t.events(3, 7)] == [("cache", 0, "ld"), ("out", 3, "st")]
