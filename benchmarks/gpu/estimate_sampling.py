"""Sampled estimates against whole ones: for each puzzle, gpusim's estimate of its benchmark launch from every
block and from a sample of its blocks (``gpusim.sampling``, as graduate mode uses for launches too big to
simulate whole), side by side, with the ratio sampled / whole of the time and of the terms it is made of.

    python benchmarks/gpu/estimate_sampling.py --size 20 [--fraction 0.0625] [--chunk-lanes L] [--json F] [PUZZLE ...]

``--fraction``: the sample's budget as a share of the whole launch's steps (the budget graduate mode gives
a launch at 2^24 is a few per cent of it). ``--chunk-lanes``: gpusim's lanes per chunk for both estimates
(default its own, 65,536): smaller chunks put a small launch in the regime of a large one — many chunks, runs
shorter than a grid row — at a fraction of the cost. The table's worst ratio is the tolerance docs/graduate.md states
and tests/puzzles/test_estimate_sampling.py asserts for a few puzzles. Runs on the CPU only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TERMS = ("dram", "l2", "latency", "shared", "compute")


def compare(puzzle, path: Path, size: int, fraction: float, gpu) -> dict:
    from puzzles.graduate.estimates import STEPS_PER_SECOND, simulate

    whole = simulate(puzzle, path, size, gpu)
    if "error" in whole:
        return {"slug": puzzle.slug, "error": whole["error"]}
    budget_s = whole["sim_steps"] * fraction / STEPS_PER_SECOND
    part = simulate(puzzle, path, size, gpu, budget_s=budget_s)
    out = {"number": puzzle.number, "slug": puzzle.slug, "size": whole["size"],
           "whole_s": whole["totals"]["seconds"], "sampled_s": part["totals"]["seconds"],
           "ratio": part["totals"]["seconds"] / whole["totals"]["seconds"],
           "sample": part["totals"].get("sampled"),
           "whole_cpu_s": whole["sim_cpu_seconds"], "sampled_cpu_s": part["sim_cpu_seconds"],
           "limit": (whole["steps"][0]["estimate"].get("limit"), part["steps"][0]["estimate"].get("limit")),
           "terms": {}}
    for term in TERMS:
        a = sum(s["estimate"]["parts"].get(term, 0.0) for s in whole["steps"])
        b = sum(s["estimate"]["parts"].get(term, 0.0) for s in part["steps"])
        if a > 0 or b > 0:
            out["terms"][term] = b / a if a else float("inf")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("puzzles", nargs="*", help="numbers or slugs (default: every puzzle with bench(n))")
    ap.add_argument("--size", type=int, default=20, help="log2 of the benchmark size (default 20)")
    ap.add_argument("--fraction", type=float, default=1 / 16)
    ap.add_argument("--chunk-lanes", type=int, default=None)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if args.chunk_lanes:
        import importlib

        importlib.import_module("gpusim.launch").CHUNK_LANES = args.chunk_lanes

    from puzzles import registry
    from puzzles.graduate.cuda_module import restore_row_stack
    from puzzles.graduate.estimates import gpu_model

    restore_row_stack()
    gpu = gpu_model("H200")
    chosen = [registry.get(int(k) if k.isdigit() else k) for k in args.puzzles] or \
        [p for p in registry.all_puzzles() if p.bench is not None]
    rows = []
    print(f"{'#':>3} {'puzzle':26} {'whole':>10} {'sampled':>10} {'ratio':>6} {'blocks':>15} {'cpu s':>11}  terms "
          "(sampled / whole)", flush=True)
    for p in chosen:
        path = ROOT / "solutions" / f"{p.slug.replace('-', '_')}.py"
        if not path.is_file():
            continue
        t = time.perf_counter()
        try:
            r = compare(p, path, 1 << args.size, args.fraction, gpu)
        except Exception as e:     # a puzzle gpusim cannot run at this size: say so, go on
            r = {"slug": p.slug, "error": f"{type(e).__name__}: {e}"}
        r["wall_s"] = time.perf_counter() - t
        rows.append(r)
        if "error" in r:
            print(f"{p.number:>3} {p.slug:26} {r['error'][:80]}", flush=True)
            continue
        s = r["sample"]
        blocks = f"{s['blocks']:,}/{s['of']:,}" if s else "whole"
        terms = " ".join(f"{k} {v:.3f}" for k, v in r["terms"].items())
        print(f"{p.number:>3} {p.slug:26} {r['whole_s'] * 1e6:8.1f}µs {r['sampled_s'] * 1e6:8.1f}µs "
              f"{r['ratio']:6.3f} {blocks:>15} {r['whole_cpu_s']:5.0f}/{r['sampled_cpu_s']:<5.0f}  {terms}", flush=True)
    sampled = [r for r in rows if r.get("sample")]
    if sampled:
        worst = max(sampled, key=lambda r: abs(r["ratio"] - 1))
        print(f"{len(sampled)} sampled: worst ratio {worst['ratio']:.3f} ({worst['slug']}); "
              f"median |ratio - 1| {sorted(abs(r['ratio'] - 1) for r in sampled)[len(sampled) // 2]:.4f}")
    if args.json:
        args.json.write_text(json.dumps({"size": args.size, "fraction": args.fraction,
                                         "chunk_lanes": args.chunk_lanes, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
