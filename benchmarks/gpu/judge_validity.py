"""On a real GPU: what the judge refuses as "would not run on a GPU" must fail there, and the libdevice
functions and dim3 locals gpusim now runs must give the GPU's bits.

    python3 benchmarks/gpu/judge_validity.py            # on the GPU machine (numba-cuda, a GPU)
    python3 benchmarks/gpu/judge_validity.py --no-gpu   # gpusim's side only (any machine)

1. Each refused file of tests/puzzles/wrong/ (REFUSED) is loaded and launched with numba-cuda on its
   puzzle's first case: "fails on the GPU" (with numba-cuda's error) is what the judge's verdict claims.
2. The warp-mask file (undefined behaviour in PTX): what the GPU computed, for the record.
3. Kernels using cuda.libdevice and a dim3 local, run on the GPU and on gpusim: bit for bit, but for the rows
   a libdevice approximation computes (expf, exp, atan2f), whose ulps are printed.
One line per item; the last line counts the items that contradict the judge.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "gpu"))
sys.path.insert(0, str(ROOT / "tests" / "gpusim"))

from libdevice_kernels import bit_functions, dim3_locals, math_functions, rounded_arithmetic  # noqa: E402

WRONG = ROOT / "tests" / "puzzles" / "wrong"
REFUSED = {  # file: puzzle
    "histogram__atomic_inc_on_int32.py": "histogram",
    "map__threadidx_imported_by_itself.py": "map",
    "map__device_function_launched.py": "map",
    "map__no_cuda_jit.py": "map",
    "map__helper_without_device_jit.py": "map",
}
MASK = ("warp_reduce__mask_names_only_the_lanes_kept.py", "warp-reduce")
N = 64


#: rows computed by a libdevice approximation (expf, exp, atan2f): gpusim's NumPy value may differ by a few
#: ulps (docs/gpu-semantics.md); reported, not counted. Every other row must be bit-for-bit the GPU's.
APPROXIMATE = {"libdevice math": (0, 1, 2)}


def _bit_cases():
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    x, y = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    y[::4] = np.nan
    v = np.array([0, 1, 6, -1, 2**31 - 1, -(2**31), 1 << 20, 12345], np.int32)
    return {
        "libdevice rounded arithmetic": (rounded_arithmetic, 1, N, [np.zeros((7, N), np.float32), a, b, c]),
        "libdevice math": (math_functions, 1, N, [np.zeros((7, N), np.float64), x, y]),
        "libdevice bit functions": (bit_functions, 1, v.size, [np.zeros((5, v.size), np.int64), v]),
        "dim3 locals": (dim3_locals, 3, 4, [np.zeros((3, 12), np.int32)]),
    }


def _first_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {' '.join(lines[:2])[:160]}"


def refused_on_gpu(name: str, slug: str) -> bool:
    from run_solutions import load, run_gpu

    from puzzles.registry import get

    try:
        mod = load(WRONG / name)
        case = get(slug).make_cases()[0]
        run_gpu(mod, case)
    except Exception as e:
        print(f"refused {name:42s} fails on the GPU: {_first_line(e)}")
        return True
    print(f"refused {name:42s} RUNS on the GPU (the judge refuses it)")
    return False


def mask_on_gpu() -> None:
    from run_solutions import load, run_case

    from puzzles.registry import get

    name, slug = MASK
    try:
        verdict = run_case(load(WRONG / name), get(slug), get(slug).make_cases()[1])
        print(f"mask    {name:42s} on the GPU: {verdict or 'runs, matches the spec'} (undefined in PTX)")
    except Exception as e:
        print(f"mask    {name:42s} on the GPU: {_first_line(e)}")


def bits(gpu: bool) -> int:
    import gpusim

    bad = 0
    for name, (kernel, grid, block, args) in _bit_cases().items():
        sim = [np.copy(x) for x in args]
        report = gpusim.launch(kernel, grid, block, sim)
        if report.faults:
            print(f"bits    {name:42s} gpusim fault: {report.faults[0].message.splitlines()[0]}")
            bad += 1
            continue
        if not gpu:
            print(f"bits    {name:42s} gpusim ran")
            continue
        try:
            dev = [cuda.to_device(np.copy(x)) for x in args]
            kernel[grid, block](*dev)
            out_gpu, out_sim = dev[0].copy_to_host(), sim[0]
        except Exception as e:
            print(f"bits    {name:42s} the GPU run failed: {_first_line(e)}")
            bad += 1
            continue
        from run_solutions import ulp_diff

        ulps = [ulp_diff(out_sim[r], out_gpu[r]) for r in range(out_gpu.shape[0])]
        exact_bad = [r for r, u in enumerate(ulps) if u and r not in APPROXIMATE.get(name, ())]
        approx = {r: ulps[r] for r in APPROXIMATE.get(name, ())}
        verdict = "bit-for-bit equal" if not any(ulps) else f"rows differing {exact_bad or 'none of the exact ones'}"
        extra = f"; transcendental rows, ulps: {approx}" if approx else ""
        print(f"bits    {name:42s} {verdict}{extra}")
        bad += bool(exact_bad)
    return bad


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-gpu", action="store_true")
    args = ap.parse_args()
    bad = 0
    if not args.no_gpu:
        for name, slug in REFUSED.items():
            bad += not refused_on_gpu(name, slug)
        mask_on_gpu()
    bad += bits(not args.no_gpu)
    print(f"{bad} contradict the judge" if bad else "0 contradict the judge")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
