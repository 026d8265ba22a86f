"""Every reference solution through the Triton back end beside numba-cuda, on a real GPU, in one run.

    python3 benchmarks/gpu/triton_check.py [--size N] [--timed CHAPTERS] [--out DIR] [PUZZLE ...]

From a checkout, nothing installed (numba-cuda, torch and triton as the GPU machine has them; no Textual,
no platformdirs). Every puzzle's own cases run on both back ends and are checked against the spec; the
puzzles of the ``--timed`` chapters (default 1-3) are also timed on their benchmark case at ``--size``
elements of work (default 2^26), as ``gpu-puzzles graduate`` times them (``puzzles/graduate/timing.py``),
and their benchmark outputs are checked too. It prints graduate mode's table, then for each timed puzzle
Triton's time over numba-cuda's (issue 8's target: at most 1.5 on chapters 1-3), then the rows that are
wrong. The simulator's estimates are left out (``gpu-puzzles graduate`` has them), to keep the run short.
Exit status 0 when every row is correct.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TARGET = 1.5


def main(argv: list[str] | None = None) -> int:
    from puzzles import registry, workspace
    from puzzles.graduate import table
    from puzzles.graduate.run import DEFAULT_SIZE, Options, graduate

    p = argparse.ArgumentParser(prog="triton_check", description=__doc__.split("\n\n")[0])
    p.add_argument("puzzles", nargs="*", help="puzzle numbers or slugs (default: every puzzle)")
    p.add_argument("--size", type=int, default=DEFAULT_SIZE, help="elements of work of the timed launches")
    p.add_argument("--timed", default="1,2,3", help="chapters whose puzzles are timed (default 1,2,3)")
    p.add_argument("--out", type=Path, help="also write graduate.md/.json/.txt there")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds one puzzle may take on the GPU")
    args = p.parse_args(argv)
    chapters = {int(c) for c in args.timed.split(",") if c.strip()}
    puzzles = [registry.get(x) for x in args.puzzles] if args.puzzles else registry.all_puzzles()
    items = [(pz, workspace.reference_path(pz)) for pz in puzzles]
    untimed = {pz.slug for pz in puzzles if pz.chapter not in chapters}
    opts = Options(items=items, backends=["numba", "triton"], size=args.size, out=args.out, cache=None,
                   estimates=False, task_timeout_s=args.timeout, untimed=untimed,
                   progress=lambda line: print(line, file=sys.stderr, flush=True))
    outcome = graduate(opts)
    if outcome.no_gpu:
        print(f"triton_check: {outcome.no_gpu}", file=sys.stderr)
        return 1
    print(outcome.text)
    by = {(r.slug, r.backend): r for r in outcome.rows}
    print(f"\nTriton / numba-cuda time on the timed puzzles (target <= {TARGET}):")
    worst = []
    for pz in puzzles:
        if pz.slug in untimed:
            continue
        nb, tr = by.get((pz.slug, "numba")), by.get((pz.slug, "triton"))
        if nb is None or tr is None or not nb.time_s or not tr.time_s:
            print(f"  {pz.number:>3} {pz.slug:<24} not timed on both")
            continue
        ratio = tr.time_s / nb.time_s
        worst.append(ratio)
        flag = "" if ratio <= TARGET else "  OVER"
        print(f"  {pz.number:>3} {pz.slug:<24} numba {table.fmt_time(nb.time_s):>10}  triton "
              f"{table.fmt_time(tr.time_s):>10}  ratio {ratio:5.2f}{flag}")
    if worst:
        over = sum(r > TARGET for r in worst)
        print(f"  {len(worst) - over} of {len(worst)} within {TARGET}x; worst {max(worst):.2f}")
    triton_rows = [r for r in outcome.rows if r.backend == "triton"]
    ok = sum(r.correct for r in triton_rows)
    print(f"\nTriton back end: {ok} of {len(triton_rows)} references correct on the GPU; "
          f"numba-cuda: {sum(r.correct for r in outcome.rows if r.backend == 'numba')} of "
          f"{sum(r.backend == 'numba' for r in outcome.rows)}")
    return 0 if outcome.ok else 1


if __name__ == "__main__":
    sys.exit(main())
