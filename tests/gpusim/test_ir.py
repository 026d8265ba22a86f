"""The typed kernel IR: what the front end decides, read from ``Module.dump()``.

Each expected listing was written by hand from numba-cuda's rules (docs/gpu-semantics.md): ``cuda.grid`` is
int64 from int32 registers, an int literal is int64 and a float literal float64, ``float32 <op> int64`` is
float64, integer arithmetic widens to 64 bits, a value assigned under a condition that differs per lane is per
lane, a shared read is at least block-wide, and so on. The comment above each says which rules it shows.
"""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest
from numba import cuda
from simkit import line_of, run_clean

import gpusim
from gpusim.frontend import compile_module
from gpusim.ir import nodes as N
from gpusim.ir.types import INT64, NONE, array_of
from gpusim.ir.walk import children, walk_exprs, walk_stmts

TPB = 16
FULL = 0xFFFFFFFF


def signature(*args) -> tuple:
    return tuple(array_of(a) if isinstance(a, np.ndarray) else INT64 for a in args)


def dump(kernel, *args) -> str:
    return compile_module(kernel, signature(*args)).dump(lines=False)


F32 = np.zeros(4, np.float32)
F32_2D = np.zeros((4, 4), np.float32)
I64 = np.zeros(4, np.int64)
I32 = np.zeros(4, np.int32)
A1 = "array(float32, 1d, C, global)"
A2 = "array(float32, 2d, C, global)"
GRID1 = "(int64(blockIdx.x) * int64(blockDim.x)) + int64(threadIdx.x)"
GRID2 = f"({GRID1}, (int64(blockIdx.y) * int64(blockDim.y)) + int64(threadIdx.y))"


# ---------------------------------------------------------------------------------------------- kernels


@cuda.jit
def map_add(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + 10


def test_map_float32_plus_an_int_literal_is_float64_then_stored_as_float32():
    assert dump(map_add, F32, F32) == textwrap.dedent(f"""\
        kernel map_add(a: {A1}, grid, out: {A1}, grid)
            i = {GRID1}  # int64, lane
            if i < a.size:  # lane
                out[i] = float32(float64(a[i]) + 10.0)
        """)


@cuda.jit
def guarded_2d(a, out):
    r, c = cuda.grid(2)
    if r < out.shape[0] and c < out.shape[1]:
        out[r, c] = a[r, c] * 2


def test_guarded_2d_grid_is_a_tuple_and_the_guard_short_circuits():
    assert dump(guarded_2d, F32_2D, F32_2D) == textwrap.dedent(f"""\
        kernel guarded_2d(a: {A2}, grid, out: {A2}, grid)
            $t1 = {GRID2}  # (int64, int64), lane
            r = $t1[0]  # int64, lane
            c = $t1[1]  # int64, lane
            if (r < out.shape[0]) and (c < out.shape[1]):  # lane
                out[r, c] = float32(float64(a[r, c]) * 2.0)
        """)


@cuda.jit
def tiled_matmul(a, b, c):
    sa = cuda.shared.array((TPB, TPB), numba.float32)
    sb = cuda.shared.array((TPB, TPB), numba.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = numba.float32(0)
    for k0 in range(0, a.shape[1], TPB):
        sa[ty, tx] = a[y, k0 + tx]
        sb[ty, tx] = b[k0 + ty, x]
        cuda.syncthreads()
        for k in range(TPB):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    c[y, x] = acc


def test_tiled_matmul_shared_declarations_barriers_grid_loops_and_a_fused_float32_accumulation():
    # the tile loops' bounds are grid-wide, so the loops are too (a Triton program can keep them scalar);
    # acc += sa*sb is one float32 fused multiply-add (both products float32, acc float32)
    assert dump(tiled_matmul, F32_2D, F32_2D, F32_2D) == textwrap.dedent(f"""\
        kernel tiled_matmul(a: {A2}, grid, b: {A2}, grid, c: {A2}, grid)
            sa = shared.array((16, 16), float32)
            sb = shared.array((16, 16), float32)
            $t1 = {GRID2}  # (int64, int64), lane
            x = $t1[0]  # int64, lane
            y = $t1[1]  # int64, lane
            tx = threadIdx.x  # int32, lane
            ty = threadIdx.y  # int32, lane
            acc = float32(0.0)  # float32, lane
            $t2 = a.shape[1]  # int64, grid
            for k0 in range(0, $t2, 16):  # k0: int64, grid; loop grid
                sa[int64(ty), int64(tx)] = a[y, k0 + int64(tx)]
                sb[int64(ty), int64(tx)] = b[k0 + int64(ty), x]
                syncthreads()
                for k in range(0, 16, 1):  # k: int64, grid; loop grid; trip 16
                    acc = fma(sa[int64(ty), k], sb[k, int64(tx)], acc)  # float32, lane
                syncthreads()
            c[y, x] = acc
        """)


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


def test_warp_reduction_shuffle_keeps_the_value_type_and_the_offset_loop_is_grid_wide():
    # the mask is a uint32 and the delta an int32 (numba-cuda's shfl_sync intrinsic); float32 + float32
    # stays float32; laneid (int32) == 0 (int64) compares as int64
    assert dump(warp_sum, F32, F32) == textwrap.dedent(f"""\
        kernel warp_sum(a: {A1}, grid, out: {A1}, grid)
            i = {GRID1}  # int64, lane
            v = a[i]  # float32, lane
            off = 16  # int64, grid
            while off > 0:  # grid
                v = v + shfl_down_sync(uint32(4294967295), v, int32(off))  # float32, lane
                off = off // 2  # int64, grid
            if int64(laneid) == 0:  # lane
                out[i // 32] = v
        """)


@cuda.jit
def warp_leader(a, out):
    i = cuda.grid(1)
    v = a[i]
    first = cuda.shfl_sync(FULL, v, 0)
    votes = cuda.ballot_sync(FULL, v > 0)
    mine = cuda.shfl_sync(FULL, v, cuda.laneid ^ 1)
    if votes != 0:
        out[i] = first + mine
    if cuda.any_sync(FULL, v > first):
        out[i] += 1.0


def test_votes_and_a_shuffle_from_one_lane_are_warp_wide():
    # a shuffle from a lane every thread names alike (0) gives one value per warp; from laneid ^ 1, one per
    # lane; a ballot is int32 (numba-cuda's signature) and, like any_sync (a bool), the same in the whole
    # warp, so branching on it never splits a warp; laneid (int32) ^ 1 (int64) is int64, cast to the int32 lane
    assert dump(warp_leader, F32, F32) == textwrap.dedent(f"""\
        kernel warp_leader(a: {A1}, grid, out: {A1}, grid)
            i = {GRID1}  # int64, lane
            v = a[i]  # float32, lane
            first = shfl_sync(uint32(4294967295), v, int32(0))  # float32, warp
            votes = ballot_sync(uint32(4294967295), float64(v) > 0.0)  # int32, warp
            mine = shfl_sync(uint32(4294967295), v, int32(int64(laneid) ^ 1))  # float32, lane
            if int64(votes) != 0:  # warp
                out[i] = first + mine
            if any_sync(uint32(4294967295), v > first):  # warp
                out[i] = float32(float64(out[i]) + 1.0)
        """)


@cuda.jit
def first_negative(a, out):
    i = cuda.grid(1)
    found = -1
    for k in range(a.shape[1]):
        if a[i, k] < 0:
            found = k
            break
    out[i] = found


def test_a_break_taken_per_lane_makes_its_loop_per_lane():
    # float32 < int literal compares in float64; the break sits under a per-lane condition, so the loop (and
    # its variable) is per lane although its bounds are grid-wide
    assert dump(first_negative, F32_2D, I64) == textwrap.dedent(f"""\
        kernel first_negative(a: {A2}, grid, out: array(int64, 1d, C, global), grid)
            i = {GRID1}  # int64, lane
            found = -1  # int64, lane
            $t1 = a.shape[1]  # int64, grid
            for k in range(0, $t1, 1):  # k: int64, lane; loop lane
                if float64(a[i, k]) < 0.0:  # lane
                    found = k  # int64, lane
                    break  # lane
            out[i] = found
        """)


@cuda.jit(device=True)
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@cuda.jit
def clamped(a, out, hi):
    i = cuda.grid(1)
    out[i] = clamp(a[i], 0, hi)
    out[i] += clamp(hi, 0, 10)


def test_a_device_function_is_specialised_on_argument_types_and_levels():
    # clamp(int64 per lane, ...) returns per lane; clamp(grid, grid, grid) is a second specialisation whose
    # result is grid-wide; a return's level is where it is taken (under a per-lane if: lane)
    assert dump(clamped, I64, I64, 5) == textwrap.dedent("""\
        kernel clamped(a: array(int64, 1d, C, global), grid, out: array(int64, 1d, C, global), grid, hi: int64, grid)
            i = (int64(blockIdx.x) * int64(blockDim.x)) + int64(threadIdx.x)  # int64, lane
            out[i] = clamp(a[i], 0, hi)
            out[i] = out[i] + clamp@GGG(hi, 0, 10)

        device clamp(x: int64, lane, lo: int64, grid, hi: int64, grid) -> int64, lane
            if x < lo:  # lane
                return lo  # lane
            if x > hi:  # lane
                return hi  # lane
            return x  # grid

        device clamp@GGG(x: int64, grid, lo: int64, grid, hi: int64, grid) -> int64, grid
            if x < lo:  # grid
                return lo  # grid
            if x > hi:  # grid
                return hi  # grid
            return x  # grid
        """)


@cuda.jit
def histogram(data, hist):
    sh = cuda.shared.array(8, numba.int32)
    t = cuda.threadIdx.x
    if t < 8:
        sh[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(sh, data[i] % 8, 1)
    cuda.syncthreads()
    if t < 8:
        cuda.atomic.add(hist, t, sh[t])


def test_atomic_histogram_values_take_the_array_type_and_indices_are_int64():
    assert dump(histogram, I64, I32) == textwrap.dedent("""\
        kernel histogram(data: array(int64, 1d, C, global), grid, hist: array(int32, 1d, C, global), grid)
            sh = shared.array(8, int32)
            t = threadIdx.x  # int32, lane
            if int64(t) < 8:  # lane
                sh[int64(t)] = int32(0)
            syncthreads()
            i = (int64(blockIdx.x) * int64(blockDim.x)) + int64(threadIdx.x)  # int64, lane
            if i < data.size:  # lane
                atomic.add(sh[data[i] % 8], int32(1))
            syncthreads()
            if int64(t) < 8:  # lane
                atomic.add(hist[int64(t)], sh[int64(t)])
        """)


@cuda.jit
def by_block(out):
    b = cuda.blockIdx.x
    if b % 2 == 0:
        v = b * 2
    else:
        v = 7
    out[cuda.grid(1)] = v


def test_block_index_values_are_block_wide_not_per_lane():
    assert dump(by_block, I64) == textwrap.dedent(f"""\
        kernel by_block(out: array(int64, 1d, C, global), grid)
            b = blockIdx.x  # int32, block
            if (int64(b) % 2) == 0:  # block
                v = int64(b) * 2  # int64, block
            else:
                v = 7  # int64, block
            out[{GRID1}] = v
        """)


@cuda.jit
def chains(a, out, n):
    i = cuda.grid(1)
    ok = 0 < i < n and a[i] > 0.5
    out[i] = a[i] if ok else -1.0
    out[i] += 1 < a[i] < a[i + 1]


def test_chained_comparisons_and_conditional_expressions():
    # a < b < c evaluates b once: a temporary bound by `let` when b is not a plain name; the select unifies
    # float32 and float64 to float64; a bool added to a float32 element: float32 + bool -> float32
    assert dump(chains, F32, F32, 5) == textwrap.dedent(f"""\
        kernel chains(a: {A1}, grid, out: {A1}, grid, n: int64, grid)
            i = {GRID1}  # int64, lane
            ok = ((0 < i) and (i < n)) and (float64(a[i]) > 0.5)  # bool, lane
            out[i] = float32(float64(a[i]) if ok else -1.0)
            out[i] = out[i] + float32(let $t1 = a[i] in ((1.0 < float64($t1)) and ($t1 < a[i + 1])))
        """)


@cuda.jit
def int_types(x, out):
    t = cuda.threadIdx.x
    s = t + t
    w = int(t)
    p = cuda.popc(x[t])
    out[t] = s + w + p + math.pow(numba.float32(2), t)


def test_integer_typing_int_of_int32_popc_and_pow_of_float32_by_int32():
    # int32 + int32 is int64; int(int32) is int32 (the GPU); popc keeps int32; math.pow(float32, int32) is
    # float32 (numba-cuda's cudamath case); int64 + float32 is float64
    assert dump(int_types, I32, np.zeros(4)) == textwrap.dedent("""\
        kernel int_types(x: array(int32, 1d, C, global), grid, out: array(float64, 1d, C, global), grid)
            t = threadIdx.x  # int32, lane
            s = int64(t) + int64(t)  # int64, lane
            w = t  # int32, lane
            p = popc(x[int64(t)])  # int32, lane
            out[int64(t)] = float64((s + int64(w)) + int64(p)) + float64(math.pow(float32(2.0), t))
        """)


@cuda.jit
def block_sum(a, out):
    sh = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    sh[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


def test_tree_reduction_barrier_in_a_grid_wide_loop():
    assert dump(block_sum, F32, F32) == textwrap.dedent(f"""\
        kernel block_sum(a: {A1}, grid, out: {A1}, grid)
            sh = shared.array(64, float32)
            t = threadIdx.x  # int32, lane
            sh[int64(t)] = a[{GRID1}]
            syncthreads()
            s = 32  # int64, grid
            while s > 0:  # grid
                if int64(t) < s:  # lane
                    $t1 = int64(t)  # int64, lane
                    sh[$t1] = sh[$t1] + sh[int64(t) + s]
                syncthreads()
                s = s // 2  # int64, grid
            if int64(t) == 0:  # lane
                out[int64(blockIdx.x)] = sh[0]
        """)


@cuda.jit
def printer(a):
    i = cuda.grid(1)
    q, r = divmod(i, 3)
    print("thread", i, q, r, a[i])


def test_divmod_is_a_tuple_of_floor_division_and_remainder_and_print_keeps_its_strings():
    assert dump(printer, F32) == textwrap.dedent(f"""\
        kernel printer(a: {A1}, grid)
            i = {GRID1}  # int64, lane
            $t1 = (i // 3, i % 3)  # (int64, int64), lane
            q = $t1[0]  # int64, lane
            r = $t1[1]  # int64, lane
            print('thread', i, q, r, a[i])
        """)


@cuda.jit
def merges(a, out):
    i = cuda.grid(1)
    x = 0
    if a[i] > 0:
        x = a[i]
    acc = 0
    for _k in range(3):
        acc += a[i] * 0.5
    out[i] = x + acc


def test_types_merge_where_control_flow_joins_with_explicit_casts():
    # x is int64 before the if and float32 inside: float64 after it (numba unifies by NumPy's promotion), by a
    # cast at the end of the branch and of the path that skips it; acc becomes float64 in the loop, so its
    # int64 start is cast before the loop
    assert dump(merges, F32, F32) == textwrap.dedent(f"""\
        kernel merges(a: {A1}, grid, out: {A1}, grid)
            i = {GRID1}  # int64, lane
            x = 0  # int64, lane
            if float64(a[i]) > 0.0:  # lane
                x = a[i]  # float32, lane
                x = float64(x)  # float64, lane
            else:
                x = float64(x)  # float64, lane
            acc = 0  # int64, lane
            acc = float64(acc)  # float64, lane
            for _k in range(0, 3, 1):  # _k: int64, grid; loop grid; trip 3
                acc = fma(float64(a[i]), 0.5, acc)  # float64, lane
            out[i] = float32(x + acc)
        """)


# ---------------------------------------------------------------------------------------------- lines, completeness


def test_the_listing_gives_each_statement_its_source_line():
    text = compile_module(first_negative, signature(F32_2D, I64)).dump()
    rows = dict(line.split(": ", 1) for line in text.splitlines()[1:])
    assert rows[f"{line_of(first_negative, 'found = -1'):4d}"].startswith("found = -1")
    assert rows[f"{line_of(first_negative, 'break'):4d}"].strip().startswith("break")
    assert rows[f"{line_of(first_negative, 'out[i] = found'):4d}"].startswith("out[i] = found")


ALL = [(map_add, (F32, F32)), (guarded_2d, (F32_2D, F32_2D)), (tiled_matmul, (F32_2D, F32_2D, F32_2D)),
       (warp_sum, (F32, F32)), (warp_leader, (F32, F32)), (first_negative, (F32_2D, I64)), (clamped, (I64, I64, 5)),
       (histogram, (I64, I32)), (by_block, (I64,)), (chains, (F32, F32, 5)), (int_types, (I32, np.zeros(4))),
       (block_sum, (F32, F32)), (printer, (F32,)), (merges, (F32, F32))]


@pytest.mark.parametrize("kernel, args", ALL, ids=[k.__name__ for k, _ in ALL])
def test_every_expression_has_a_type_a_level_and_a_line(kernel, args):
    module = compile_module(kernel, signature(*args))
    for fn in module.functions.values():
        for s in walk_stmts(fn.body):
            assert s.line > 0, s
            for top in children(s):
                for e in walk_exprs(top):
                    assert e.line > 0, e
                    assert isinstance(e.uni, N.Uni)
                    if not isinstance(e, N.Call):
                        assert e.type != NONE, e


TABLE_OF_THREE = np.array([5.0, 7.0, 11.0])


@cuda.jit
def scaled(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] * TABLE_OF_THREE[i % 3] + clamp(i, 1, 6)


def test_the_module_is_plain_data_that_runs_where_the_kernel_was_never_imported(tmp_path):
    a = np.arange(10, dtype=np.float64)
    module = compile_module(scaled, signature(a, a))
    TABLE_OF_THREE[:] = -1  # the module froze the array when it was compiled, as numba does
    try:
        blob = tmp_path / "module.pickle"
        blob.write_bytes(pickle.dumps(module))
    finally:
        TABLE_OF_THREE[:] = [5.0, 7.0, 11.0]
    script = textwrap.dedent(f"""
        import pickle, sys
        import numpy as np
        import gpusim
        module = pickle.loads(open({str(blob)!r}, "rb").read())
        assert "test_ir" not in sys.modules and not any("tests.gpusim" in m for m in sys.modules)
        a = np.arange(10, dtype=np.float64)
        out = np.zeros(10)
        report = gpusim.launch(module, 1, 16, (a, out))
        assert not report.faults, report.faults
        print(",".join(repr(float(v)) for v in out))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    got = [float(v) for v in done.stdout.strip().split(",")]
    want = [i * [5.0, 7.0, 11.0][i % 3] + min(max(i, 1), 6) for i in range(10)]
    assert got == want


def test_a_module_runs_only_for_the_types_it_was_compiled_for():
    module = compile_module(map_add, signature(F32, F32))
    with pytest.raises(gpusim.LaunchError, match="compiled for"):
        gpusim.launch(module, 1, 4, (np.zeros(4), np.zeros(4)))


def test_the_lanes_back_end_reads_the_ir_not_the_syntax_tree():
    folder = Path(gpusim.__file__).parent / "backends" / "lanes"
    for path in folder.glob("*.py"):
        text = path.read_text()
        assert "import ast" not in text and "from ast" not in text, path


# ---------------------------------------------------------------------------------------------- the fma pass


@cuda.jit
def contractions(a, b, c, out, n):
    i = cuda.threadIdx.x
    out[i, 0] = a[i] * b[i] + c[i]
    out[i, 1] = a[i] * b[i] - c[i]
    out[i, 2] = c[i] - a[i] * b[i]
    out[i, 3] = a[i] * b[i] + c[i] * a[i]
    acc = c[i]
    acc -= a[i] * b[i]
    out[i, 4] = acc
    out[i, 5] = n * n + c[i]


def test_the_fma_pass_fuses_every_form_and_only_float_products():
    text = compile_module(contractions, signature(F32, F32, F32, F32_2D, 3)).dump(lines=False)
    assert "out[int64(i), 0] = fma(a[int64(i)], b[int64(i)], c[int64(i)])" in text
    assert "out[int64(i), 1] = fma(a[int64(i)], b[int64(i)], -c[int64(i)])" in text
    assert "out[int64(i), 2] = fma(-a[int64(i)], b[int64(i)], c[int64(i)])" in text
    # the left product is fused; the right one stays a product
    assert "out[int64(i), 3] = fma(a[int64(i)], b[int64(i)], c[int64(i)] * a[int64(i)])" in text
    assert "acc = fma(-a[int64(i)], b[int64(i)], acc)" in text
    # an int64 product is not fused: int64 * int64, converted, plus float32 is a float64 add
    assert "out[int64(i), 5] = float32(float64(n * n) + float64(c[int64(i)]))" in text


def test_fused_products_round_once_in_the_kernel():
    x = np.float32(1 + 2**-12)
    a = np.full(4, x, np.float32)
    b = np.full(4, x, np.float32)
    c = np.full(4, -(x * x), np.float32)        # x*x rounded to float32 loses 2**-24
    out = np.zeros((4, 6), np.float32)
    run_clean(contractions, 1, 4, a, b, c, out, 3)
    assert out[0, 0] == np.float32(2**-24)      # fused: the exact product minus its rounding
    assert not np.float32(x * x) + c[0]           # unfused, the same sum is 0


@cuda.jit
def mixed_accumulator(a, b, out):
    i = cuda.threadIdx.x
    acc = 0.0
    acc += a[i] * b[i]
    acc += a[i] * 2.0
    out[i] = acc


def test_a_product_is_fused_only_into_a_sum_of_its_own_type():
    # float32 * float32 is a float32 product; acc is float64: the conversion between them stops LLVM's
    # contraction (read on an H200), so the product is rounded to float32 and then added. a[i] * 2.0 is a
    # float64 product (a[i] converted first), so it fuses into the float64 sum.
    assert dump(mixed_accumulator, F32, F32, np.zeros(4)) == textwrap.dedent(f"""\
        kernel mixed_accumulator(a: {A1}, grid, b: {A1}, grid, out: array(float64, 1d, C, global), grid)
            i = threadIdx.x  # int32, lane
            acc = 0.0  # float64, lane
            acc = acc + float64(a[int64(i)] * b[int64(i)])  # float64, lane
            acc = fma(float64(a[int64(i)]), 2.0, acc)  # float64, lane
            out[int64(i)] = acc
        """)


def test_a_device_array_captured_by_pointer_is_read_as_it_is_at_each_launch():
    # numba-cuda freezes a NumPy global when it compiles the kernel but captures a device array by pointer
    # (numba-cuda's doc example test_ex_globals_device_array_capture); the drop-in marks the latter
    from gpusim.frontend.names import CapturedDeviceArray

    frozen = np.array([1.0, 2.0])
    behind = np.array([10.0, 20.0])
    live = CapturedDeviceArray(behind)

    @cuda.jit
    def read_both(out):
        out[0] = frozen[1]
        out[1] = live[1]

    out = np.zeros(2)
    run_clean(read_both, 1, 1, out)
    frozen[1], behind[1] = -2.0, -20.0
    run_clean(read_both, 1, 1, out)
    assert out.tolist() == [2.0, -20.0]
    module = compile_module(read_both, signature(out))
    arrays = [e for s in walk_stmts(module.entry.body) for top in children(s) for e in walk_exprs(top)
              if isinstance(e, N.ConstArray)]
    assert [(a.name, a.by_pointer, a.data is behind) for a in arrays] == [("frozen", False, False),
                                                                         ("live", True, True)]


# ------------------------------------------------------------------------------ the uniformity pass's check


@cuda.jit
def array_by_lane(a, b, out):
    i = cuda.grid(1)
    src = a
    if i % 2 == 0:
        src = b
    out[i] = src[i]


def test_an_array_chosen_per_lane_is_rejected_at_its_line_before_any_back_end(no_back_end):
    # numba-cuda runs this (both arrays have one type); gpusim holds one array per variable for every thread,
    # so the uniformity pass refuses it, as a gpusim limit, where the divergent assignment is
    with pytest.raises(gpusim.UnsupportedConstruct) as e:
        gpusim.launch(array_by_lane, 1, 4, (np.zeros(4), np.ones(4), np.zeros(4)))
    err = e.value
    assert "the array variable 'src' is assigned inside divergent code" in err.message
    assert "gpusim cannot hold a different array per thread" in err.message
    assert err.lineno == line_of(array_by_lane, "src = b") and err.source_line.strip() == "src = b"
