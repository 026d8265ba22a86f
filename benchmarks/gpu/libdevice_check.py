"""Every cuda.libdevice function, on the GPU (numba-cuda) and on gpusim, on the same fixed inputs.

    python3 benchmarks/gpu/libdevice_check.py                      # on the GPU machine
    python3 benchmarks/gpu/libdevice_check.py --save OUT.npz       # ... and keep the GPU's results
    python3 benchmarks/gpu/libdevice_check.py --gpu-results OUT.npz   # compare with results saved before
    python3 benchmarks/gpu/libdevice_check.py --no-gpu             # gpusim's half only (any machine)
    python3 benchmarks/gpu/libdevice_check.py --gpu-results OUT.npz --test-data "H200, numba-cuda 0.30.4, DATE"
        # ... and write tests/gpusim/data/libdevice_h200.npz (the GPU's results) and _bounds.json (gpusim's
        # distance from them now: the regression guard of tests/gpusim/test_libdevice_h200.py)

The kernels and inputs are tests/gpusim/libdevice_cases.py's (one kernel per function; 1024 inputs each:
special values, every pair of them, random values over all exponents). One line per function:

    identical            every result bit for bit (NaN counted equal to NaN, whatever its payload)
    max K ulp (n/N)      floats: the largest distance in ulps, and on how many inputs they differ
    differs (n/N)        integers, or a float NaN/number mismatch: how many differ, and the first one
    gpu error / gpusim error    the function did not run there (the message's first line)

Functions gpusim computes exactly (directed rounding, conversions, integer functions) are marked ``EXACT``
where they are not identical: those are bugs. The last lines count each verdict. numba's simulator has no
libdevice, so without a GPU only gpusim runs (and every function must run there).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "gpusim"))

from libdevice_cases import EXACT, FAR, SIGNATURES, N, distance, input_digest, inputs, kernels, ordered, outputs  # noqa: E402
from numba import cuda  # noqa: E402

THREADS = 128


def compare(gpu: list[np.ndarray], sim: list[np.ndarray], args: list[np.ndarray]) -> tuple[str, str]:
    """(verdict, detail) for one function's outputs on the inputs ``args``."""
    worst, worst_at, differ = 0, 0, np.zeros(gpu[0].shape, bool)
    for g, s in zip(gpu, sim):
        if g.dtype.kind == "f":
            same = (np.isnan(g) & np.isnan(s)) | (g.view(f"u{g.itemsize}") == s.view(f"u{s.itemsize}"))
            nan_mismatch = np.isnan(g) != np.isnan(s)
            if nan_mismatch.any():
                return "differs", _where(nan_mismatch, gpu, sim, args)
            with np.errstate(all="ignore"):
                d = np.where(same, 0, np.abs(ordered(g) - ordered(s)))
            if d.max(initial=0) > worst:
                worst, worst_at = int(d.max()), int(np.argmax(d))
        else:
            same = g == s
            if not same.all():
                return "differs", _where(~same, gpu, sim, args)
        differ |= ~same
    if not differ.any():
        return "identical", ""
    return f"max {worst} ulp", _where(differ, gpu, sim, args, worst_at)


def _where(mask, gpu, sim, args, k: int | None = None) -> str:
    """How many inputs differ, and one of them (the first, or ``k``): its arguments and both results."""
    k = int(np.argmax(mask)) if k is None else k
    xs = ", ".join(repr(a[k].item()) for a in args)
    g = ", ".join(repr(o[k].item()) for o in gpu)
    s = ", ".join(repr(o[k].item()) for o in sim)
    return f"({int(mask.sum())}/{mask.size}) e.g. ({xs}): gpu {g}, gpusim {s}"


def run_gpusim(name, k, args) -> list[np.ndarray]:
    import gpusim
    outs = outputs(name)
    gpusim.launch(k, (N + THREADS - 1) // THREADS, THREADS, outs + args)
    return outs


def run_gpu(name, k, args) -> list[np.ndarray]:
    dev = [cuda.to_device(a) for a in outputs(name) + args]
    k[(N + THREADS - 1) // THREADS, THREADS](*dev)
    cuda.synchronize()
    return [d.copy_to_host() for d in dev[:len(SIGNATURES[name][1])]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-gpu", action="store_true", help="run gpusim's half only")
    ap.add_argument("--save", help="write the GPU's results to this .npz file")
    ap.add_argument("--gpu-results", help="compare with the GPU's results saved in this .npz file")
    ap.add_argument("--only", help="a regular expression: the functions to run")
    ap.add_argument("--test-data", metavar="SOURCE", help="with --gpu-results: write the test data of "
                    "tests/gpusim/test_libdevice_h200.py; SOURCE says where the results came from")
    opts = ap.parse_args()
    names = sorted(n for n in SIGNATURES if not opts.only or re.search(opts.only, n))
    saved = dict(np.load(opts.gpu_results)) if opts.gpu_results else None
    on_gpu = saved is None and not opts.no_gpu and cuda.is_available()
    if saved is None and not on_gpu:
        print("no GPU here (numba's simulator has no libdevice): gpusim's half only")
    ks = kernels(names)
    from gpusim.frontend.libdevice import REFUSED

    counts: dict[str, int] = {}
    keep: dict[str, np.ndarray] = {}
    test_data: dict[str, np.ndarray] = {}
    bounds: dict[str, list[int]] = {}
    t0 = time.time()
    for name in names:
        gpu, gpu_error = None, ""
        args = inputs(name)
        if saved is not None and f"{name}:in0" in saved:     # the inputs the GPU ran on
            args = [saved[f"{name}:in{j}"] for j in range(len(args))]
        if on_gpu:
            keep.update({f"{name}:in{j}": a for j, a in enumerate(args)})
            try:
                gpu = run_gpu(name, ks[name], args)
                keep.update({f"{name}:{j}": g for j, g in enumerate(gpu)})
            except Exception as e:          # noqa: BLE001 - reported, and the run goes on
                gpu_error = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:150]}"
        elif saved is not None:
            if f"{name}:0" in saved:
                gpu = [saved[f"{name}:{j}"] for j in range(len(SIGNATURES[name][1]))]
            else:
                gpu_error = "not in the saved results"
        if name in REFUSED:
            verdict, detail = "refused by gpusim", REFUSED[name]
        else:
            try:
                sim = run_gpusim(name, ks[name], args)
            except Exception as e:          # noqa: BLE001
                verdict, detail = "gpusim error", f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:150]}"
            else:
                if gpu_error:
                    verdict, detail = "gpu error", gpu_error
                elif gpu is None:
                    verdict, detail = "ran on gpusim", ""
                else:
                    verdict, detail = compare(gpu, sim, args)
                    if opts.test_data:
                        test_data.update({f"{name}:{j}": g for j, g in enumerate(gpu)})
                        test_data[f"{name}:inputs"] = np.array(input_digest(args))
                        d = np.stack([distance(g, s_) for g, s_ in zip(gpu, sim)])
                        bounds[name] = [int(d.max()), int((d.max(axis=0) > FAR).sum())]
        flag = "EXACT " if EXACT.match(name) and verdict in ("differs", "gpusim error") or (
            EXACT.match(name) and verdict.startswith("max")) else ""
        key = verdict.split(" ulp")[0] if verdict.startswith("max") else verdict
        key = "within ulps" if key.startswith("max") else key
        counts[flag + key] = counts.get(flag + key, 0) + 1
        print(f"{name:<20} {flag}{verdict} {detail}".rstrip(), flush=True)
    if opts.test_data and test_data:
        data = ROOT / "tests" / "gpusim" / "data"
        test_data["source"] = np.array(opts.test_data)
        np.savez_compressed(data / "libdevice_h200.npz", **test_data)
        head = {"note": f"per function: gpusim's largest distance from the GPU's results (ulps; 0 the same "
                        f"bits), and on how many inputs it is more than {FAR} ulps away; written by "
                        "benchmarks/gpu/libdevice_check.py --test-data", "source": opts.test_data}
        lines = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(bounds.items())]
        (data / "libdevice_h200_bounds.json").write_text(
            json.dumps(head, indent=1)[:-2] + ',\n "bounds": {\n  ' + ",\n  ".join(lines) + "\n }\n}\n")
        print(f"wrote the test data to {data}")
    if opts.save and keep:
        np.savez_compressed(opts.save, **keep)
        print(f"saved the GPU's results to {opts.save}")
    print(f"{len(names)} functions in {time.time() - t0:.0f} s: "
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    bad = sum(v for k, v in counts.items() if k.startswith("EXACT") or k == "gpusim error")
    print(f"{bad} functions specified bit for bit differ, or failed on gpusim")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
