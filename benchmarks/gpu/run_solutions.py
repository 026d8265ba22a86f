"""Run every reference solution on a real GPU through numba-cuda, compare with the puzzle's NumPy spec, and
compare gpusim's outputs with the GPU's, element by element (in units in the last place for floats).

    python3 benchmarks/gpu/run_solutions.py [--json out.json] [--wrong]

``--wrong`` also runs the wrong solutions whose expected failure is a mismatch (deterministic outputs) and
compares gpusim with the GPU on them. The same files the simulator judges must run unchanged on hardware,
and the simulator must compute what the hardware computes.
"""

import argparse
import copy
import importlib.util
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from puzzles.multidevice import case_outputs  # noqa: E402
from puzzles.registry import all_puzzles  # noqa: E402

# A multi-device case (chapter 10) runs here on one GPU: its launches in issue order (a valid order of the
# devices' streams, since the simulator proved the case race-free), its Sync steps skipped, every array in
# this GPU's memory; its outputs are x@0, x@1, ... for an output x.


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"gpu_solution_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ulp_diff(a: np.ndarray, b: np.ndarray) -> int:
    """Largest distance in units in the last place between two float arrays of one dtype (0 = identical)."""
    if a.dtype.kind != "f":
        return int(np.count_nonzero(a != b))
    both_nan = np.isnan(a) & np.isnan(b)
    it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia, ib = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    ia = np.where(ia < 0, np.iinfo(it).min - ia, ia)
    ib = np.where(ib < 0, np.iinfo(it).min - ib, ib)
    d = np.abs(ia - ib)
    d[both_nan] = 0
    return int(d.max()) if d.size else 0


def run_sim(mod, puzzle, case) -> dict:
    import gpusim

    bufs = {k: copy.deepcopy(v) for k, v in case.buffers.items()}
    for step in case.launches:
        gpusim.launch(getattr(mod, step.kernel), step.grid, step.block, step.arg_values(bufs),
                      step.shared_mem, instrument=False)
    return bufs


def run_gpu(mod, case) -> dict:
    bufs = {k: copy.deepcopy(v) for k, v in case.buffers.items()}
    dev = {k: cuda.to_device(v) if isinstance(v, np.ndarray) else v for k, v in bufs.items()}
    for step in case.launches:
        kern = getattr(mod, step.kernel)
        args = step.arg_values(dev)
        if step.shared_mem:
            kern[step.grid, step.block, 0, step.shared_mem](*args)
        else:
            kern[step.grid, step.block](*args)
    cuda.synchronize()
    return {k: v.copy_to_host() if hasattr(v, "copy_to_host") else v for k, v in dev.items()}


def sim_vs_gpu(mod, puzzle, case) -> int:
    """Largest ulp (or count of differing integer elements) between gpusim's and the GPU's outputs."""
    g = run_gpu(mod, case)
    s = run_sim(mod, puzzle, case)
    return max(ulp_diff(np.asarray(s[n]), np.asarray(g[n])) for n in case_outputs(puzzle, case))


def run_case(mod, puzzle, case) -> str | None:
    got = run_gpu(mod, case)
    expected = puzzle.spec(**{k: copy.deepcopy(v) for k, v in case.buffers.items()})
    for name in case_outputs(puzzle, case):
        g, e = np.asarray(got[name]), np.asarray(expected[name])
        if g.shape != e.shape:
            return f"{name}: shape {g.shape} != {e.shape}"
        if e.dtype.kind == "f" or g.dtype.kind == "f":
            ok = np.allclose(g, e, rtol=max(puzzle.rtol, 1e-6), atol=max(puzzle.atol, 1e-6), equal_nan=False)
        else:
            ok = np.array_equal(g, e)
        if not ok:
            bad = np.argwhere(~np.isclose(g, e, rtol=max(puzzle.rtol, 1e-6), atol=max(puzzle.atol, 1e-6))
                              if e.dtype.kind == "f" else g != e)
            idx = tuple(bad[0]) if len(bad) else ()
            return f"{name}{list(idx)}: got {g[idx] if idx else g}, expected {e[idx] if idx else e}"
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--wrong", action="store_true")
    ap.add_argument("--only", nargs="*", help="puzzle slugs")
    args = ap.parse_args()
    results = []
    failures = 0
    for p in all_puzzles():
        if args.only and p.slug not in args.only:
            continue
        path = ROOT / "solutions" / p.solution_file
        t0 = time.perf_counter()
        try:
            mod = load(path)
            cases = p.make_cases()
            errs = [(c.name, run_case(mod, p, c)) for c in cases]
            errs = [(n, e) for n, e in errs if e]
            status = "pass" if not errs else f"FAIL {errs[0][0]}: {errs[0][1]}"
            ulps = max(sim_vs_gpu(mod, p, c) for c in cases)
            status += f"; gpusim vs GPU: {'identical' if ulps == 0 else f'max {ulps} ulp'}"
            if args.wrong:
                for w in sorted((ROOT / "tests" / "puzzles" / "wrong").glob(p.solution_file[:-3] + "__*.py")):
                    head = w.read_text().splitlines()[0]
                    if "expect=mismatch" not in head:
                        continue
                    wm = load(w)
                    wu = max(sim_vs_gpu(wm, p, c) for c in cases)
                    status += f"; {w.stem.split('__')[1]}: {'identical' if wu == 0 else f'max {wu} ulp'}"
        except Exception as e:
            status = f"ERROR {type(e).__name__}: {str(e).splitlines()[0][:200]}"
            traceback.print_exc(limit=2)
        failures += not status.startswith("pass")
        dt = time.perf_counter() - t0
        results.append({"number": p.number, "slug": p.slug, "status": status, "seconds": round(dt, 2)})
        print(f"{p.number:3d} {p.slug:28s} {status}  ({dt:.1f} s)", flush=True)
    print(f"{len(results) - failures} passed, {failures} failed")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
