"""The launches whose counts chapter 8's tests derive by hand, for Nsight Compute to read on a GPU.

    python3 benchmarks/gpu/ch08_ncu.py                      # gpusim's counts, one line per launch (CPU)
    ncu --clock-control none --csv --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__sass_inst_executed_op_shared_ld.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum \
    python3 benchmarks/gpu/ch08_ncu.py --gpu > ch08_ncu.csv  # the GPU's, the same launches in the same order

Each launch is printed (or run) in order with gpusim's value of every metric above; ncu's CSV lists the
launches in the same order, so the two tables compare row by row. The cases are the tests' hand counts
(tests/puzzles/test_ch08_matmul.py and test_ch08_matmul_stars.py): the coalesced and column-major naive
kernels, the thin tiles, 1-D and 2-D register tiles, the interleaved and transposed-A layouts, the int8 word
tiles with and without padding, split-K's two launches.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

METRICS = ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
           "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
           "smsp__sass_inst_executed_op_shared_ld.sum",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")


def _source(slug_file: str, *edits: tuple[str, str]) -> str:
    source = (ROOT / "solutions" / slug_file).read_text()
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


def launches():
    """(label, source, case) for every launch to compare."""
    from puzzles.ch08_matmul import (
        matrices,
        p48_matmul_coalesced,
        p49_matmul_thin_tiles,
        p50_matmul_1d_register_tiles,
        p51_matmul_2d_register_tiles,
        p52_matmul_conflict_free,
        p53_matmul_wide_loads,
        p55_matmul_split_k,
    )

    rng = np.random.default_rng(0)

    def mm(module, m, k, n):
        return module._case("ncu", matrices.eighths(rng, (m, k)), matrices.eighths(rng, (k, n)), "")

    transposed = _source("matmul_conflict_free.py",
                         ("NT = TX * TY ", "APAD = BM + 0\nNT = TX * TY "),
                         ("sa = cuda.shared.array((BM, BK), numba.float32)",
                          "sa = cuda.shared.array((BK, APAD), numba.float32)"),
                         ("sa[i, q] = a[r0 + i, k0 + q]", "sa[q, i] = a[r0 + i, k0 + q]"),
                         ("sa[i, q] = 0.0", "sa[q, i] = 0.0"),
                         ("ra[i] = sa[ty + TY * i, q]", "ra[i] = sa[q, ty * TM + i]"),
                         ("r = r0 + ty + TY * i", "r = r0 + ty * TM + i"))
    wide = p53_matmul_wide_loads._case("ncu", p53_matmul_wide_loads._int8(rng, (64, 256)),
                                       p53_matmul_wide_loads._int8(rng, (256, 64)), "")
    split = next(c for c in p55_matmul_split_k.make_cases() if c.name.startswith("random 32x1024"))
    return [
        ("48 row-major 64x40x64", _source("matmul_coalesced.py"), mm(p48_matmul_coalesced, 64, 40, 64)),
        ("48 column-major 64x40x64", _source("matmul_coalesced.py", ("r = t // n\n        j = t % n",
                                                                     "r = t % m\n        j = t // m")),
         mm(p48_matmul_coalesced, 64, 40, 64)),
        ("49 thin tiles 64x64x64", _source("matmul_thin_tiles.py"), mm(p49_matmul_thin_tiles, 64, 64, 64)),
        ("50 1-D tiles 64x64x64", _source("matmul_1d_register_tiles.py"),
         mm(p50_matmul_1d_register_tiles, 64, 64, 64)),
        ("51 2-D tiles 128x32x128", _source("matmul_2d_register_tiles.py"),
         mm(p51_matmul_2d_register_tiles, 128, 32, 128)),
        ("52 interleaved 128x32x128", _source("matmul_conflict_free.py"), mm(p52_matmul_conflict_free, 128, 32, 128)),
        ("52 transposed a, unpadded", transposed, mm(p52_matmul_conflict_free, 128, 32, 128)),
        ("53 int8 words 64x256x64", _source("matmul_wide_loads.py"), wide),
        ("53 int8 words, unpadded", _source("matmul_wide_loads.py", (
            "sb = cuda.shared.array((TILE, PADDED), numba.int32)",
            "sb = cuda.shared.array((TILE, WORDS), numba.int32)")), wide),
        ("53 int8 bytes (a8, b8)", (ROOT / "tests" / "puzzles" / "right" / "matmul_wide_loads__byte_loads.py")
         .read_text(), wide),
        ("55 split-K 32x1024x32 S=8", _source("matmul_split_k.py"), split),
    ]


def load(source: str, name: str):
    path = Path(tempfile.mkdtemp(prefix="ch08_ncu_")) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", action="store_true", help="launch on the GPU (run under ncu); else print gpusim's")
    args = ap.parse_args()
    if args.gpu:
        if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
            np.row_stack = np.vstack
        from numba import cuda
    else:
        import gpusim
        from puzzles.loader import load_solution
        print("launch," + ",".join(METRICS))
    for i, (label, source, case) in enumerate(launches()):
        mod, path = load(source, f"ch08_ncu_{i}")
        buffers = copy.deepcopy(dict(case.buffers))
        for step in case.steps:
            if args.gpu:
                dev = {k: cuda.to_device(v) if isinstance(v, np.ndarray) else v for k, v in buffers.items()}
                getattr(mod, step.kernel)[step.grid, step.block](*[dev[a] for a in step.args])
                cuda.synchronize()
                buffers = {k: v.copy_to_host() if hasattr(v, "copy_to_host") else v for k, v in dev.items()}
            else:
                kernel = load_solution(path, (step.kernel,)).kernels[step.kernel]
                report = gpusim.launch(kernel, step.grid, step.block, [buffers[a] for a in step.args])
                print(f"{label} / {step.kernel}," + ",".join(str(int(report.metrics.get(m, 0))) for m in METRICS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
