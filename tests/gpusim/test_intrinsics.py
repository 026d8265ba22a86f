"""Warp intrinsics, bit intrinsics, math functions, casts and arithmetic: values and result types.

Where the GPU's answer is not obvious the expected value was read on an NVIDIA H200 with numba-cuda 0.30.4
(docs/gpu-semantics.md); those tests say so.
"""

from __future__ import annotations

import importlib.util
import math
import tempfile
from pathlib import Path

import numba
import numpy as np
import pytest
from numba import cuda
from simkit import one_fault, run, run_clean

import gpusim
from gpusim.frontend.compiler import compile_module
from gpusim.ir import nodes as N
from gpusim.ir import types as T
from gpusim.ir.walk import children, walk_exprs, walk_stmts
from gpusim.runtime import intrinsics as ix

FULL = 0xFFFFFFFF

# ---------------------------------------------------------------------------------------------- shuffles


@cuda.jit
def shuffles(out):
    i = cuda.threadIdx.x
    v = i * 10 + cuda.blockIdx.x * 1000
    out[cuda.blockIdx.x, 0, i] = cuda.shfl_sync(FULL, v, 0)
    out[cuda.blockIdx.x, 1, i] = cuda.shfl_sync(FULL, v, (cuda.laneid * 7) % 32)
    out[cuda.blockIdx.x, 2, i] = cuda.shfl_up_sync(FULL, v, 3)
    out[cuda.blockIdx.x, 3, i] = cuda.shfl_down_sync(FULL, v, 3)
    out[cuda.blockIdx.x, 4, i] = cuda.shfl_xor_sync(FULL, v, 5)
    # out-of-range lane arguments: the hardware uses their low five bits (read on an H200)
    out[cuda.blockIdx.x, 5, i] = cuda.shfl_up_sync(FULL, v, 33)
    out[cuda.blockIdx.x, 6, i] = cuda.shfl_sync(FULL, v, 37)
    out[cuda.blockIdx.x, 7, i] = cuda.shfl_down_sync(FULL, v, 33)
    out[cuda.blockIdx.x, 8, i] = cuda.shfl_xor_sync(FULL, v, 35)
    out[cuda.blockIdx.x, 9, i] = cuda.shfl_sync(FULL, v, -1)
    out[cuda.blockIdx.x, 10, i] = cuda.shfl_down_sync(FULL, v, 32)
    out[cuda.blockIdx.x, 11, i] = cuda.shfl_up_sync(FULL, v, -1)


def test_shuffles_read_the_right_lane_of_their_own_warp():
    out = np.zeros((3, 12, 64), np.int64)
    run_clean(shuffles, 3, 64, out)
    for b in range(3):
        for t in range(64):
            w, lane = t // 32 * 32, t % 32

            def val(src_lane, b=b, w=w):
                return b * 1000 + (w + src_lane) * 10

            own = val(lane)
            want = [val(0), val(lane * 7 % 32), val(lane - 3) if lane >= 3 else own,
                    val(lane + 3) if lane + 3 < 32 else own, val(lane ^ 5),
                    val(lane - 1) if lane >= 1 else own, val(5), val(lane + 1) if lane < 31 else own,
                    val(lane ^ 3), val(31), own, val(0) if lane == 31 else own]
            assert out[b, :, t].tolist() == want, (b, t)


@cuda.jit
def warp_sum(a, out):
    i = cuda.grid(1)
    v = a[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_a_shfl_down_tree_sums_each_warp_and_keeps_the_dtype(dtype):
    a = (np.arange(128) % 13).astype(dtype)
    out = np.zeros(4, dtype)
    run_clean(warp_sum, 2, 64, a, out)
    np.testing.assert_array_equal(out, a.reshape(4, 32).sum(axis=1))


@cuda.jit
def float_shuffle(a, out):
    i = cuda.threadIdx.x
    out[i] = cuda.shfl_xor_sync(FULL, a[i], 1)


def test_a_float32_shuffle_moves_the_exact_bits():
    a = (np.arange(32, dtype=np.float32) + np.float32(0.1)) / np.float32(3)
    out = np.zeros(32, np.float32)
    run_clean(float_shuffle, 1, 32, a, out)
    np.testing.assert_array_equal(out, a.reshape(16, 2)[:, ::-1].reshape(-1))


@cuda.jit
def partial_warp_shuffle(out):
    g = cuda.grid(1)
    out[g, 0] = cuda.shfl_down_sync(FULL, g, 4)
    out[g, 1] = cuda.shfl_sync(FULL, g, 0)


def test_shuffles_in_a_partial_warp_never_read_another_block():
    # 40 threads per block: the second warp of each block has 8 lanes, then the next block starts
    out = np.zeros((80, 2), np.int64)
    run_clean(partial_warp_shuffle, 2, 40, out)
    for g in range(80):
        t = g % 40
        lane, warp_start = t % 32, g - t % 32
        size = 32 if t < 32 else 8
        if lane + 4 < size:
            assert out[g, 0] == g + 4
        else:  # the source lane does not exist: undefined on a GPU, but never another block's thread
            assert out[g, 0] // 40 == g // 40
        assert out[g, 1] == warp_start


def test_a_shuffle_width_argument_is_rejected_like_numba_cuda_does():
    @cuda.jit
    def with_width(out):
        i = cuda.threadIdx.x
        out[i] = cuda.shfl_down_sync(FULL, i, 1, 16)

    with pytest.raises(gpusim.UnsupportedConstruct, match="width"):
        run(with_width, 1, 32, np.zeros(32, np.int64))


# ---------------------------------------------------------------------------------------------- votes


@cuda.jit
def votes(a, out):
    i = cuda.threadIdx.x
    p = a[i] > 0
    out[0, i] = cuda.ballot_sync(FULL, p)
    out[1, i] = cuda.any_sync(FULL, p)
    out[2, i] = cuda.all_sync(FULL, p)
    out[3, i] = cuda.eq_sync(FULL, p)
    out[4, i] = cuda.ballot_sync(FULL, True)
    out[5, i] = cuda.activemask()
    out[6, i] = cuda.lanemask_lt()
    out[7, i] = cuda.popc(cuda.ballot_sync(FULL, p))


def test_votes_over_a_full_warp():
    a = np.zeros(64, np.int64)
    a[3] = a[40] = 1
    a[32:] = 1
    a[33] = 0
    out = np.zeros((8, 64), np.int64)
    run_clean(votes, 1, 64, a, out)
    w0, w1 = 1 << 3, (0xFFFFFFFF & ~(1 << 1))
    as_i32 = int(np.uint32(w1).view(np.int32))
    np.testing.assert_array_equal(out[0], [w0] * 32 + [as_i32] * 32)  # ballot_sync is int32 on the GPU
    np.testing.assert_array_equal(out[1], 1)
    np.testing.assert_array_equal(out[2], 0)
    np.testing.assert_array_equal(out[3], 0)
    np.testing.assert_array_equal(out[4], -1)          # every lane: 0xFFFFFFFF as int32 (read on an H200)
    np.testing.assert_array_equal(out[5], 0xFFFFFFFF)  # activemask is uint32
    np.testing.assert_array_equal(out[6], [(1 << (t % 32)) - 1 for t in range(64)])
    np.testing.assert_array_equal(out[7], [1] * 32 + [31] * 32)


@cuda.jit
def votes_all_true(out):
    i = cuda.threadIdx.x
    out[0, i] = cuda.all_sync(FULL, i < 100)
    out[1, i] = cuda.eq_sync(FULL, i > 100)
    out[2, i] = cuda.any_sync(FULL, i > 100)
    out[3, i] = cuda.ballot_sync(FULL, i >= 16)


def test_all_eq_any_and_a_high_bit_ballot():
    out = np.zeros((4, 32), np.int64)
    run_clean(votes_all_true, 1, 32, out)
    np.testing.assert_array_equal(out[0], 1)
    np.testing.assert_array_equal(out[1], 1)
    np.testing.assert_array_equal(out[2], 0)
    np.testing.assert_array_equal(out[3], -65536)  # 0xFFFF0000 as int32 (read on an H200)


@cuda.jit
def divergent_votes(out):
    i = cuda.threadIdx.x
    if i % 2 == 0:
        out[0, i] = cuda.ballot_sync(0x55555555, i % 4 == 0)
        out[1, i] = cuda.activemask()
    else:
        out[0, i] = cuda.ballot_sync(0xAAAAAAAA, True)
        out[1, i] = cuda.activemask()


def test_votes_in_a_divergent_branch_see_only_their_side():
    out = np.zeros((2, 32), np.int64)
    run_clean(divergent_votes, 1, 32, out)
    even = np.arange(32) % 2 == 0
    np.testing.assert_array_equal(out[0][even], 0x11111111)
    np.testing.assert_array_equal(out[0][~even], int(np.uint32(0xAAAAAAAA).view(np.int32)))
    np.testing.assert_array_equal(out[1][even], 0x55555555)
    np.testing.assert_array_equal(out[1][~even], 0xAAAAAAAA)


@cuda.jit
def partial_warp_votes(out):
    i = cuda.threadIdx.x
    out[0, i] = cuda.ballot_sync(FULL, True)
    out[1, i] = cuda.activemask()
    out[2, i] = cuda.all_sync(FULL, True)


def test_votes_in_a_partial_warp_name_only_existing_lanes():
    out = np.zeros((3, 20), np.int64)
    run_clean(partial_warp_votes, 1, 20, out)
    np.testing.assert_array_equal(out[0], 0xFFFFF)
    np.testing.assert_array_equal(out[1], 0xFFFFF)
    np.testing.assert_array_equal(out[2], 1)


@cuda.jit
def block_votes(a, out):
    i = cuda.threadIdx.x
    b = cuda.blockIdx.x
    p = a[b, i]
    c = cuda.syncthreads_count(p)
    x = cuda.syncthreads_and(p)
    o = cuda.syncthreads_or(p)
    out[b, 0, i] = c
    out[b, 1, i] = x
    out[b, 2, i] = o


def test_syncthreads_count_and_or_reduce_over_the_block():
    a = np.zeros((3, 96), np.int32)
    a[0, [0, 5, 70]] = 1
    a[1, :] = 2
    a[2, 95] = -1
    out = np.zeros((3, 3, 96), np.int64)
    run_clean(block_votes, 3, 96, a, out)
    np.testing.assert_array_equal(out, np.repeat(np.array([[3, 0, 1], [96, 1, 1], [1, 0, 1]])[:, :, None], 96, 2))


def test_syncthreads_count_of_a_bool_is_a_compile_error_as_in_numba_cuda():
    @cuda.jit
    def k(out):
        i = cuda.threadIdx.x
        out[i] = cuda.syncthreads_count(i > 3)

    with pytest.raises(gpusim.UnsupportedConstruct, match="syncthreads_count"):
        run(k, 1, 32, np.zeros(32, np.int64))


def test_a_vote_whose_mask_names_inactive_lanes_is_a_barrier_divergence():
    @cuda.jit
    def k(out):
        i = cuda.threadIdx.x
        if i < 16:
            out[i] = cuda.ballot_sync(FULL, True)

    f = one_fault(run(k, 1, 32, np.zeros(32, np.int64)), gpusim.BarrierDivergence)
    assert "ballot" in f.summary and f.thread == (0, 0, 0)


# ---------------------------------------------------------------------------------------------- bits


@cuda.jit
def bit_ops(x32, x64, out):
    i = cuda.grid(1)
    out[i, 0] = cuda.popc(x32[i])
    out[i, 1] = cuda.clz(x32[i])
    out[i, 2] = cuda.ffs(x32[i])
    out[i, 3] = cuda.brev(numba.uint32(x32[i]))
    out[i, 4] = cuda.popc(x64[i])
    out[i, 5] = cuda.clz(x64[i])
    out[i, 6] = cuda.ffs(x64[i])
    out[i, 7] = cuda.brev(numba.uint64(x64[i]))


def brev(v: int, bits: int) -> int:
    return int(format(v & ((1 << bits) - 1), f"0{bits}b")[::-1], 2)


def test_popc_clz_ffs_brev_values_on_32_and_64_bit_integers():
    x32 = np.array([0, 1, 8, -1, 0x00F0F000, 2**31 - 1, -2**31, 12345], np.int32)
    x64 = np.array([0, 1, 1 << 40, -1, 0x00F0F000F0, 2**63 - 1, -2**63, 12345], np.int64)
    out = np.zeros((8, 8), np.uint64)
    run_clean(bit_ops, 1, 8, x32, x64, out)
    for i in range(8):
        u32, u64 = int(x32[i]) & 0xFFFFFFFF, int(x64[i]) & 0xFFFFFFFFFFFFFFFF
        want = [bin(u32).count("1"), 32 - u32.bit_length(), (u32 & -u32).bit_length(), brev(u32, 32),
                bin(u64).count("1"), 64 - u64.bit_length(), (u64 & -u64).bit_length(), brev(u64, 64)]
        assert [int(v) for v in out[i]] == want, i


def test_bit_intrinsic_result_types_match_numba_cuda():
    # read on an H200: popc/clz keep the argument's type, ffs is uint32, brev of a non-uint64 is uint32
    for dt in (np.int32, np.int64, np.uint32, np.uint64, np.int8):
        v = np.array([5, 6], dt)
        assert ix.bits("popc", v).dtype == dt
        assert ix.bits("clz", v).dtype == dt
        assert ix.bits("ffs", v).dtype == np.uint32
        assert ix.bits("brev", v).dtype == (np.uint64 if dt == np.uint64 else np.uint32)
    assert ix.bits("clz", np.int8(1)) == 7           # clz counts within the argument's width
    assert ix.bits("popc", np.int8(-1)) == 8
    assert ix.bits("brev", np.int64(1)) == 2**31      # brev(int64) converts to uint32 first (H200)
    assert ix.bits("ffs", np.int64(1 << 40)) == 41


# ---------------------------------------------------------------------------------------------- fma, math


@cuda.jit
def fma_kernel(a, b, c, out32, out64):
    i = cuda.grid(1)
    out32[i] = cuda.fma(a[i], b[i], c[i])
    out64[i] = cuda.fma(numba.float64(a[i]), numba.float64(b[i]), numba.float64(c[i]))


def test_fma_rounds_once():
    x = np.float32(1 + 2**-12)
    a = np.array([x, 2, 3], np.float32)
    b = np.array([x, 4, 5], np.float32)
    c = np.array([-(x * x), 1, -15], np.float32)   # x*x rounded to float32 loses 2**-24
    out32, out64 = np.zeros(3, np.float32), np.zeros(3)
    run_clean(fma_kernel, 1, 3, a, b, c, out32, out64)
    assert out32[0] == np.float32(2**-24)          # a separate multiply and add would give 0
    np.testing.assert_array_equal(out32[1:], [9, 0])
    np.testing.assert_array_equal(out64, a.astype(np.float64) * b + c)


@cuda.jit
def math_kernel(x32, x64, n, out):
    i = cuda.grid(1)
    f, d, k = x32[i], x64[i], n[i]
    out[i, 0] = math.sqrt(f)
    out[i, 1] = math.exp(f)
    out[i, 2] = math.sin(f)
    out[i, 3] = math.log(f)
    out[i, 4] = math.pow(f, f)
    out[i, 5] = math.atan2(f, f + numba.float32(1))
    out[i, 6] = math.tanh(f)
    out[i, 7] = math.sqrt(d)
    out[i, 8] = math.exp(d)
    out[i, 9] = math.sqrt(k)
    out[i, 10] = math.floor(f * numba.float32(2.5))
    out[i, 11] = math.ceil(-d)
    out[i, 12] = math.isnan(f) + 2 * math.isinf(d)
    out[i, 13] = math.fabs(-f)
    out[i, 14] = math.hypot(f, f)
    out[i, 15] = math.erf(f)


def test_math_on_float32_computes_in_float32_and_on_float64_or_int_in_float64():
    x32 = (np.arange(1, 9, dtype=np.float32) * np.float32(0.37))
    x64 = x32.astype(np.float64) * 1.1
    n = np.arange(2, 10, dtype=np.int64)
    out = np.zeros((8, 16), np.float64)
    run_clean(math_kernel, 1, 8, x32, x64, n, out)
    f = x32
    one = np.float32(1)
    want32 = [np.sqrt(f), np.exp(f), np.sin(f), np.log(f), np.power(f, f), np.arctan2(f, f + one), np.tanh(f)]
    for k, w in enumerate(want32):
        assert w.dtype == np.float32
        np.testing.assert_array_equal(out[:, k], w.astype(np.float64), err_msg=f"column {k}")
    np.testing.assert_array_equal(out[:, 7], np.sqrt(x64))
    np.testing.assert_array_equal(out[:, 8], np.exp(x64))
    np.testing.assert_array_equal(out[:, 9], np.sqrt(n.astype(np.float64)))
    np.testing.assert_array_equal(out[:, 10], np.floor(f * np.float32(2.5)))
    np.testing.assert_array_equal(out[:, 11], np.ceil(-x64))
    np.testing.assert_array_equal(out[:, 12], 0)
    np.testing.assert_array_equal(out[:, 13], f)
    np.testing.assert_array_equal(out[:, 14], np.hypot(f, f).astype(np.float64))
    np.testing.assert_allclose(out[:, 15], [math.erf(v) for v in f], rtol=1e-6)


_MATH_KERNELS: dict[tuple[str, int], object] = {}


def math_fn(name: str, *args):
    """``math.<name>(*args)`` as a kernel computes it: the front end types the call (numba-cuda's rules), the
    lanes back end runs it; the result comes back in the type the IR gives it."""
    key = (name, len(args))
    if key not in _MATH_KERNELS:
        params = ", ".join(f"x{k}" for k in range(len(args)))
        values = ", ".join(f"x{k}[i]" for k in range(len(args)))
        path = Path(tempfile.mkdtemp()) / f"math_{name}_{len(args)}.py"
        path.write_text(f"import math\n\nfrom numba import cuda\n\n\ndef k(out, {params}):\n"
                        f"    i = cuda.grid(1)\n    out[i] = math.{name}({values})\n")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _MATH_KERNELS[key] = mod.k
    kern = _MATH_KERNELS[key]
    vecs = [np.atleast_1d(np.asarray(a)) for a in args]
    n = max(v.size for v in vecs)
    vecs = [np.broadcast_to(v, (n,)).copy() for v in vecs]
    module = compile_module(kern, (T.array_of(np.zeros(n)),) + tuple(T.array_of(v) for v in vecs))
    result = next(e for s in walk_stmts(module.entry.body) for e in walk_children(s)
                  if isinstance(e, N.Intrinsic)).type
    out = np.zeros(n, result.dtype)
    run_clean(kern, 1, n, out, *vecs)
    return out if np.ndim(args[0]) else out[0]


def walk_children(stmt):
    for e in children(stmt):
        yield from walk_exprs(e)


def test_math_result_types_match_numba_cuda():
    f32, f64, i64 = np.float32(2.5), np.float64(2.5), np.int64(3)
    for name in ("sqrt", "exp", "log", "sin", "tanh", "fabs", "erf", "floor", "ceil", "trunc"):
        assert math_fn(name, f32).dtype == np.float32, name
        assert math_fn(name, f64).dtype == np.float64, name
        assert math_fn(name, i64).dtype == np.float64, name   # math.floor(int) is float64 on the GPU
    assert math_fn("pow", f32, f32).dtype == np.float32
    assert math_fn("atan2", i64, i64).dtype == np.float64
    assert math_fn("isnan", f32).dtype == np.bool_
    v = np.array([1.5, -2.5], np.float32)
    assert math_fn("floor", v).dtype == np.float32


def test_math_remainder_and_fmod_are_the_ieee_and_c_functions():
    assert math_fn("remainder", np.float64(7.5), np.float64(2.0)) == -0.5   # H200: -0.5
    assert math_fn("fmod", np.float64(-7.5), np.float64(2.0)) == -1.5       # H200: -1.5
    r = math_fn("remainder", np.array([7.5, 5.0], np.float32), np.array([2, 2], np.float32))
    assert r.dtype == np.float32 and r.tolist() == [-0.5, 1.0]


# ---------------------------------------------------------------------------------------------- casts, builtins


@cuda.jit
def casts(x, out):
    i = cuda.grid(1)
    v = x[i]
    out[i, 0] = int(v)
    out[i, 1] = numba.int32(v)
    out[i, 2] = numba.uint8(numba.int64(v) + 256)
    out[i, 3] = numba.float32(v * 1.1)
    out[i, 4] = float(i) / 4
    out[i, 5] = np.int32(2147483647 + numba.int64(i))
    out[i, 6] = numba.int64(v < 0)


def test_casts_truncate_toward_zero_and_wrap_to_the_type():
    x = np.array([2.7, -2.7, 0.5, -0.5, 300.9, -1e3], np.float64)
    out = np.zeros((6, 7), np.float64)
    run_clean(casts, 1, 6, x, out)
    for i, v in enumerate(x):
        assert out[i, 0] == math.trunc(v)
        assert out[i, 1] == math.trunc(v)
        assert out[i, 2] == (math.trunc(v) + 256) % 256
        assert out[i, 3] == float(np.float32(v * 1.1))
        assert out[i, 4] == i / 4
        assert out[i, 5] == int(np.int64(2147483647 + i).astype(np.int32))
        assert out[i, 6] == (v < 0)


@cuda.jit
def float_of_float32(x, out):
    i = cuda.grid(1)
    out[i] = float(x[i]) / numba.float32(3)


def test_float_of_a_float32_stays_float32():
    x = np.arange(1, 5, dtype=np.float32)
    out = np.zeros(4, np.float64)
    run_clean(float_of_float32, 1, 4, x, out)
    np.testing.assert_array_equal(out, (x / np.float32(3)).astype(np.float64))  # H200: float(float32) is float32


@cuda.jit
def builtins_kernel(x, n, out):
    i = cuda.grid(1)
    out[i, 0] = abs(x[i])
    out[i, 1] = abs(n[i])
    out[i, 2] = min(x[i], 1.0)
    out[i, 3] = max(n[i], 0, i - 3)
    out[i, 4] = round(x[i])
    out[i, 5] = min(n[i], i)
    out[i, 6] = round(x[i], 1)


def test_abs_min_max_and_round_half_to_even():
    x = np.array([2.5, -2.5, 3.5, -0.25, 1.04, 7.0], np.float64)
    n = np.array([-4, 3, -1, 9, 0, -7], np.int64)
    out = np.zeros((6, 7), np.float64)
    run_clean(builtins_kernel, 1, 6, x, n, out)
    for i in range(6):
        assert out[i, :6].tolist() == [abs(x[i]), abs(n[i]), min(x[i], 1.0), max(n[i], 0, i - 3), round(x[i]),
                                       min(n[i], i)]
        assert out[i, 6] == pytest.approx(round(x[i], 1))


@cuda.jit
def int_arith(a, b, out):
    i = cuda.grid(1)
    out[i, 0] = a[i] + a[i]        # int32 + int32 is int64 in numba: no overflow
    out[i, 1] = a[i] * b[i]
    out[i, 2] = a[i] / b[i]
    out[i, 3] = a[i] // b[i]
    out[i, 4] = a[i] % b[i]
    out[i, 5] = -a[i] // b[i]
    out[i, 6] = a[i] ** 2


def test_integer_arithmetic_widens_like_numba_and_divides_like_python():
    a = np.array([2**31 - 1, -7, 7, 100000, -2**31], np.int32)
    b = np.array([2, 2, -2, 70000, 3], np.int32)
    out = np.zeros((5, 7), np.float64)
    run_clean(int_arith, 1, 5, a, b, out)
    for i in range(5):
        x, y = int(a[i]), int(b[i])
        assert out[i].tolist() == [float(v) for v in (2 * x, x * y, x / y, x // y, x % y, -x // y, x ** 2)], i


@cuda.jit
def float_division(x, y, out):
    i = cuda.grid(1)
    out[i] = x[i] / y[i]


def test_float_division_by_zero_is_inf_or_nan_not_a_fault():
    x = np.array([1.0, -1.0, 0.0])
    y = np.zeros(3)
    out = np.zeros(3)
    run_clean(float_division, 1, 3, x, y, out)
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])


# ---------------------------------------------------------------------------------------------- numba's lowering


@cuda.jit
def lowering(x, n, u, out):
    i = cuda.grid(1)
    out[i, 0] = x[i] ** 3                 # float32 ** int: repeated squaring in float32
    out[i, 1] = n[i] ** -1                # int ** negative int: 0 but for 1 and -1
    out[i, 2] = ~u[i]                     # ~uint8 in 8 bits, then widened
    out[i, 3] = numba.int8(x[i] * 1e6)    # float -> int saturates
    out[i, 4] = cuda.selp(n[i] > 0, numba.float64(n[i]), 0.5)
    out[i, 5] = cuda.cbrt(numba.float64(n[i]))


def test_arithmetic_follows_numba_cudas_lowering():
    x = np.array([1.1, -3.7, 0.3, 2.0], np.float32)
    n = np.array([1, -1, 2, 27], np.int64)
    u = np.array([0, 1, 200, 255], np.uint8)
    out = np.zeros((4, 6))
    run_clean(lowering, 1, 4, x, n, u, out)
    # numba squares and multiplies in float32: x**3 is x * (x*x), each product rounded to float32
    assert out[:, 0].tolist() == [float(v * (v * v)) for v in x]
    assert out[:, 1].tolist() == [1, -1, 0, 0]
    assert out[:, 2].tolist() == [255, 254, 55, 0]
    assert out[:, 3].tolist() == [127, -128, 127, 127]
    assert out[:, 4].tolist() == [1.0, 0.5, 2.0, 27.0]
    assert out[:, 5].tolist() == pytest.approx([1.0, -1.0, 2 ** (1 / 3), 3.0])


@cuda.jit
def nan_atomics(arr, vals):
    i = cuda.grid(1)
    cuda.atomic.max(arr, 0, vals[i])
    cuda.atomic.nanmax(arr, 1, vals[i])
    cuda.atomic.min(arr, 2, vals[i])
    cuda.atomic.nanmin(arr, 3, vals[i])


def test_atomic_max_keeps_a_stored_nan_and_nanmax_replaces_it():
    # numba-cuda's atomic max/min return early when the stored value or the new one is NaN; nanmax/nanmin only
    # skip a NaN value (cudadrv/nvvm.py's ir_numba_atomic_minmax)
    arr = np.full(4, np.nan)
    vals = np.array([3.0, np.nan, -2.0, 7.0])
    run_clean(nan_atomics, 1, 4, arr, vals)
    assert np.isnan(arr[0]) and arr[1] == 7.0 and np.isnan(arr[2]) and arr[3] == -2.0
