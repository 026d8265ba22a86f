"""Seed conditioning: how close each puzzle's fresh cases come to failing a correct float32 kernel, without the
simulator — fast enough for hundreds of seeds per puzzle, where ``seed_sweep`` runs the judge on tens.

    nice -n 10 python -m benchmarks.seed_conditioning --seeds 200 [--puzzles 60-80] [--ulps 4] [--top 3]

A correct kernel's float32 rounding acts like a small change of its inputs (a backward error of a few ulps).
For each seed, each case's float inputs (the buffers that are not outputs, float32/float16 arrays) are moved
by ``--ulps`` ulps with random signs, and the spec is evaluated on both. A float output that moves by a
large fraction of the tolerance (``atol + rtol * |expected|``) is an ill-conditioned case: the same shift
of a kernel's own rounding could fail a right answer (puzzle 74's 'large logits' before its lead rule moved
by 1.8x the tolerance at check seed 1032785527, 4 ulps; 0.04x after). Prints, per puzzle, the worst ratio
and where it was; ratio >= 1 is flagged ``!!``.

Only float outputs compared with a tolerance are measured. Exact outputs (integers, bf16 bits, a float
output with rtol = atol = 0) are a function of the exact inputs, so moving the inputs moves them whatever
the case: their margins from rounding boundaries and ties are checked by tests/puzzles/test_decision_margins.py.
"""

from __future__ import annotations

import argparse
import copy
import sys

import numpy as np

from benchmarks.seed_sweep import parse_puzzles


def perturb(buffers: dict, outputs: set[str], rng: np.random.Generator, ulps: float) -> dict:
    """``buffers`` with each float array that is not an output moved by up to ``ulps`` ulps (random signs)."""
    moved = copy.deepcopy(dict(buffers))
    for name, value in moved.items():
        if name in outputs or not isinstance(value, np.ndarray) or value.dtype not in (np.float32, np.float16):
            continue
        finite = np.isfinite(value)
        step = np.spacing(np.abs(value).astype(value.dtype)).astype(np.float64)
        shift = rng.integers(-1, 2, value.shape) * rng.uniform(0, ulps, value.shape) * step
        moved[name] = np.where(finite, value.astype(np.float64) + shift, value).astype(value.dtype)
    return moved


def worst_ratio(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> tuple[float, tuple]:
    """The largest |got - want| / (atol + rtol |want|) over the elements of a float output."""
    want64, got64 = want.astype(np.float64), got.astype(np.float64)
    both = np.isfinite(want64) & np.isfinite(got64)
    if not both.any():
        return 0.0, ()
    tol = atol + rtol * np.abs(want64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(both, np.abs(got64 - want64) / np.where(tol > 0, tol, np.finfo(np.float64).tiny), 0.0)
    index = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    return float(ratio[index]), tuple(int(i) for i in index)


def condition(puzzle, seeds: range, ulps: float) -> list[tuple[float, int, str, str, tuple]]:
    """(ratio, seed, case, output, index) for every case output, over ``seeds``."""
    from puzzles.checker import case_generator

    found = []
    if not (puzzle.rtol or puzzle.atol):
        return found
    outputs = set(puzzle.outputs)
    for seed in seeds:
        for case in puzzle.make_cases(case_generator(seed)):
            buffers = dict(case.buffers)
            names = outputs | {n for n in buffers if any(n.startswith(o + "@") or n.endswith("_" + o) for o in
                                                         outputs)}
            want = puzzle.spec(**copy.deepcopy(buffers))
            rng = np.random.default_rng([seed, 0xC0D])
            got = puzzle.spec(**perturb(buffers, set(want) | names, rng, ulps))
            for name in want:
                if name not in buffers or not isinstance(buffers[name], np.ndarray):
                    continue
                dtype = buffers[name].dtype
                if not np.issubdtype(dtype, np.floating):
                    continue
                w, g = np.asarray(want[name]).astype(dtype), np.asarray(got[name]).astype(dtype)
                if w.shape != g.shape:
                    continue
                ratio, index = worst_ratio(g, w, puzzle.rtol, puzzle.atol)
                found.append((ratio, seed, case.name, name, index))
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=200)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--puzzles", help="puzzle numbers, e.g. 1-20,33,74 (default: all)")
    p.add_argument("--ulps", type=float, default=4.0)
    p.add_argument("--top", type=int, default=2, help="worst cases shown per puzzle")
    args = p.parse_args(argv)
    from puzzles import registry

    numbers = parse_puzzles(args.puzzles) if args.puzzles else None
    flagged = 0
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    for puzzle in registry.all_puzzles():
        if numbers is not None and puzzle.number not in numbers:
            continue
        try:
            found = sorted(condition(puzzle, seeds, args.ulps), key=lambda f: -f[0])
        except Exception as e:     # a spec that cannot take a moved input: say so, go on
            print(f"{puzzle.number:3d} {puzzle.slug:28s} skipped: {type(e).__name__}: {e}", flush=True)
            continue
        if not found:
            continue
        bad = sum(1 for f in found if f[0] >= 1)
        flagged += bad > 0
        worst = "; ".join(f"{r:.3g} seed {s} {c!r} {o}{list(i)}" for r, s, c, o, i in found[:args.top])
        print(f"{'!!' if bad else '  '} {puzzle.number:3d} {puzzle.slug:28s} {bad:4d}/{len(found):<5d} {worst}",
              flush=True)
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
