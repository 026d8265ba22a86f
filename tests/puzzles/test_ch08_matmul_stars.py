"""Chapter 8: correct kernels that waste something stop at the star that measures it, and correct kernels that
do the job another good way earn every star. Most variants are a reference with one change, spelled out."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

import gpusim
from puzzles.ch08_matmul import (
    matrices,
    p48_matmul_coalesced,
    p49_matmul_thin_tiles,
    p50_matmul_1d_register_tiles,
    p51_matmul_2d_register_tiles,
    p52_matmul_conflict_free,
    p53_matmul_wide_loads,
    p54_matmul_double_buffer,
    p55_matmul_split_k,
)
from puzzles.checker import check_file
from puzzles.loader import load_solution

ROOT = Path(__file__).resolve().parents[2]


def variant(module, *edits: tuple[str, str]) -> str:
    """The reference solution of ``module`` with each (old, new) replacement made exactly once."""
    source = (ROOT / "solutions" / module.PUZZLE.solution_file).read_text(encoding="utf-8")
    for old, new in edits:
        assert source.count(old) == 1, f"{old!r} occurs {source.count(old)} times"
        source = source.replace(old, new)
    return source


def _check(tmp_path, module, source):
    path = tmp_path / "variant.py"
    path.write_text(source, encoding="utf-8")
    return check_file(module.PUZZLE, path)


COLUMN_MAJOR = variant(p48_matmul_coalesced, ("r = t // n\n        j = t % n", "r = t % m\n        j = t // m"))
FLOAT64_ACCUMULATOR = variant(p48_matmul_coalesced, ("acc = numba.float32(0.0)", "acc = 0.0"))
B_FROM_GLOBAL = variant(p49_matmul_thin_tiles, (
    "            acc += sa[ty, q] * sb[q, tx]",
    "            if k0 + q < k and c0 + tx < n:\n                acc += sa[ty, q] * b[k0 + q, c0 + tx]"))
A_SLICE_TRANSPOSED = variant(
    p49_matmul_thin_tiles,
    ("sa = cuda.shared.array((TILE, BK), numba.float32)", "sa = cuda.shared.array((BK, TILE), numba.float32)"),
    ("                sa[i, q] = a[r0 + i, k0 + q]", "                sa[q, i] = a[r0 + i, k0 + q]"),
    ("                sa[i, q] = 0.0", "                sa[q, i] = 0.0"),
    ("            acc += sa[ty, q] * sb[q, tx]", "            acc += sa[q, ty] * sb[q, tx]"))
BV_IN_LOOP = variant(p50_matmul_1d_register_tiles, (
    "            bv = sb[q, tx]\n            for i in range(TM):\n                acc[i] += sa[ty * TM + i, q] * bv",
    "            for i in range(TM):\n                acc[i] += sa[ty * TM + i, q] * sb[q, tx]"))
NO_REGISTER_CACHE = variant(p51_matmul_2d_register_tiles, (
    "                    acc[i, j] += ra[i] * rb[j]",
    "                    acc[i, j] += sa[ty * TM + i, q] * sb[q, tx * TN + j]"))
BLOCKED_OWNERSHIP = variant(p51_matmul_2d_register_tiles, ("def matmul_2d_tiles", "def matmul_conflict_free"))
COLUMNS_ONLY = variant(p52_matmul_conflict_free, ("ra[i] = sa[ty + TY * i, q]", "ra[i] = sa[ty * TM + i, q]"),
                       ("r = r0 + ty + TY * i", "r = r0 + ty * TM + i"))


def _transposed_a(pad: int) -> str:
    """Puzzle 52 the worklog's way: the a slice stored transposed (BK x BM + pad), rows owned in blocks."""
    return variant(
        p52_matmul_conflict_free,
        ("NT = TX * TY ", f"APAD = BM + {pad}\nNT = TX * TY "),
        ("sa = cuda.shared.array((BM, BK), numba.float32)", "sa = cuda.shared.array((BK, APAD), numba.float32)"),
        ("                sa[i, q] = a[r0 + i, k0 + q]", "                sa[q, i] = a[r0 + i, k0 + q]"),
        ("                sa[i, q] = 0.0", "                sa[q, i] = 0.0"),
        ("ra[i] = sa[ty + TY * i, q]", "ra[i] = sa[q, ty * TM + i]"),
        ("r = r0 + ty + TY * i", "r = r0 + ty * TM + i"))


UNPADDED_WORDS = variant(p53_matmul_wide_loads, ("sb = cuda.shared.array((TILE, PADDED), numba.int32)",
                                                 "sb = cuda.shared.array((TILE, WORDS), numba.int32)"))
# puzzle 14's tiles on the int8 view: right, coalesced, conflict-free, but one byte per lane
BYTE_LOADS = (Path(__file__).resolve().parent / "right" / "matmul_wide_loads__byte_loads.py").read_text(
    encoding="utf-8")
TWO_BARRIERS = variant(p54_matmul_double_buffer, (
    "        cur = s % 2\n        if s + 1 < steps:",
    "        cur = s % 2\n        cuda.syncthreads()\n        if s + 1 < steps:"))
SUM_BY_COLUMN = variant(p55_matmul_split_k, ("        r = t // n\n        j = t % n\n        acc = numba.float32(0.0)",
                                             "        r = t % m\n        j = t // m\n        acc = numba.float32(0.0)"))


@pytest.mark.parametrize("module, source, stars, missing", [
    (p48_matmul_coalesced, COLUMN_MAJOR, 1, "per request"),
    (p48_matmul_coalesced, FLOAT64_ACCUMULATOR, 2, "float64"),
    (p49_matmul_thin_tiles, B_FROM_GLOBAL, 1, "FLOPs per byte"),
    (p49_matmul_thin_tiles, A_SLICE_TRANSPOSED, 2, "bank conflict"),
    (p50_matmul_1d_register_tiles, BV_IN_LOOP, 2, "shared-memory load instructions"),
    pytest.param(p51_matmul_2d_register_tiles, NO_REGISTER_CACHE, 2, "shared-memory load instructions",
                 marks=pytest.mark.slow),    # twice the shared loads of the reference: ~5 s
    (p52_matmul_conflict_free, BLOCKED_OWNERSHIP, 1, "sectors where"),
    (p52_matmul_conflict_free, COLUMNS_ONLY, 2, "bank conflict"),
    (p52_matmul_conflict_free, _transposed_a(0), 2, "bank conflict"),
    (p52_matmul_conflict_free, _transposed_a(4), 3, ""),
    (p53_matmul_wide_loads, UNPADDED_WORDS, 2, "bank conflict"),
    (p53_matmul_wide_loads, BYTE_LOADS, 1, "per request"),
    (p55_matmul_split_k, SUM_BY_COLUMN, 1, "sectors where"),
], ids=["naive-column-major", "naive-float64", "thin-b-from-global", "thin-a-transposed", "1d-bv-in-loop",
        "2d-no-register-cache", "free-blocked", "free-columns-only", "free-transposed-unpadded",
        "free-transposed-padded", "wide-unpadded", "wide-byte-loads", "splitk-sum-by-column"])
def test_variant_earns_the_stars_its_counts_allow(tmp_path, module, source, stars, missing):
    result = _check(tmp_path, module, source)
    assert result.passed, [f.message for f in result.failures]
    assert result.stars == stars, (result.stars, result.next_star)
    if stars < 3:
        assert missing in result.next_star, result.next_star


def test_float64_accumulator_is_refused_where_float32_is_a_constraint(tmp_path):
    source = variant(p49_matmul_thin_tiles, ("acc = numba.float32(0.0)", "acc = 0.0"))
    result = _check(tmp_path, p49_matmul_thin_tiles, source)
    assert not result.passed
    assert any(f.kind == "constraint" and "float64" in f.message for f in result.failures)


def _launch(source: str, tmp_path, kernel: str, case):
    path = tmp_path / "counted.py"
    path.write_text(source, encoding="utf-8")
    fn = load_solution(path, (kernel,)).kernels[kernel]
    buffers = copy.deepcopy(dict(case.buffers))
    step = case.steps[0]
    return gpusim.launch(fn, step.grid, step.block, [buffers[a] for a in step.args], trace=True)


def _conflicts(report) -> int:
    return int(sum(v for k, v in report.metrics.items() if k.startswith("l1tex__data_bank_conflicts")))


def test_bank_conflicts_of_the_variants_by_hand(tmp_path):
    rng = np.random.default_rng(7)
    a, b = matrices.eighths(rng, (128, 32)), matrices.eighths(rng, (32, 128))
    case = p52_matmul_conflict_free._case("hand", a, b, "")
    # Columns interleaved, rows in blocks: only the reads of sa conflict, 1 per request, 8 per warp and step
    # q: 8 warps x 4 slices x 8 steps x 8 = 2048.
    assert _conflicts(_launch(COLUMNS_ONLY, tmp_path, "matmul_conflict_free", case)) == 2048
    # The a slice transposed without padding: reads sa[q, ty*8 + i] are 8 words apart (no conflict), but a
    # warp's stores sa[q, i] cover 4 rows i and 8 columns q: words q*128 + i, so 8 lanes per bank: 7
    # conflicts per store request, 4 requests per warp and slice: 8 x 4 x 4 x 7 = 896. Padded to 132
    # words a row, the banks are (4q + i) % 32: all 32 different.
    assert _conflicts(_launch(_transposed_a(0), tmp_path, "matmul_conflict_free", case)) == 896
    assert _conflicts(_launch(_transposed_a(4), tmp_path, "matmul_conflict_free", case)) == 0
    # Puzzle 53 unpadded: sb[tx, w] with rows of 32 words puts all 32 lanes in one bank: 31 conflicts per
    # read. m = n = 64, k = 256: 4 blocks x 2 steps x 32 warps x 32 words x 31 = 253952.
    wide = p53_matmul_wide_loads._case("hand", p53_matmul_wide_loads._int8(rng, (64, 256)),
                                       p53_matmul_wide_loads._int8(rng, (256, 64)), "")
    assert _conflicts(_launch(UNPADDED_WORDS, tmp_path, "matmul_int8_wide", wide)) == 253952


def test_requests_of_byte_and_word_loads_by_hand(tmp_path):
    # m = n = 64, k = 256: 4 blocks of 32 warps. Words: 2 steps of 32 words; per step each warp loads one
    # row of 32 words of a4 and one of b4 (128 aligned bytes each, 4 sectors): 4 x 2 x 32 x 2 = 512
    # requests, 2048 sectors. Bytes: 8 steps of 32 bytes, one row of a8 and one of b8 per warp and step,
    # 32 bytes = 1 sector each: 4 x 8 x 32 x 2 = 2048 requests, the same 2048 sectors.
    rng = np.random.default_rng(5)
    case = p53_matmul_wide_loads._case("hand", p53_matmul_wide_loads._int8(rng, (64, 256)),
                                       p53_matmul_wide_loads._int8(rng, (256, 64)), "")
    reference = (ROOT / "solutions" / p53_matmul_wide_loads.PUZZLE.solution_file).read_text(encoding="utf-8")
    for source, requests in ((reference, 512), (BYTE_LOADS, 2048)):
        metrics = _launch(source, tmp_path, "matmul_int8_wide", case).metrics
        assert metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == requests
        assert metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 2048


def test_barriers_of_the_double_buffer_by_hand(tmp_path):
    # k = 64 is 8 slices of BK = 8. The pipeline waits once after loading slice 0 and once per step: 9. The
    # single-buffer habit (a second barrier before each prefetch) waits 2 x 8 + 1 = 17 times. One block
    # (64 x 64), so the sum over blocks equals the largest.
    rng = np.random.default_rng(8)
    case = p54_matmul_double_buffer._case("hand", matrices.eighths(rng, (64, 64)),
                                          matrices.eighths(rng, (64, 64)), "")
    reference = (ROOT / "solutions" / p54_matmul_double_buffer.PUZZLE.solution_file).read_text(encoding="utf-8")
    for source, barriers in ((reference, 9), (TWO_BARRIERS, 17)):
        report = _launch(source, tmp_path, "matmul_double_buffered", case)
        assert len(report.trace.barriers(0)) == barriers
        assert report.metrics["gpusim__barriers_max"] == report.metrics["gpusim__barriers_sum"] == barriers


def test_a_second_barrier_per_step_is_refused(tmp_path):
    result = _check(tmp_path, p54_matmul_double_buffer, TWO_BARRIERS)
    assert not result.passed
    # the 64 x 128 @ 128 x 64 case (16 slices, 2^20 FLOPs) is the one judged: 2 x 16 + 1 barriers against 17
    assert any(f.kind == "constraint" and "33 barriers for 16 slices" in f.message for f in result.failures), \
        [f.message for f in result.failures]
