"""How long a check takes: in the warm judging worker (what the app uses) and as a fresh in-process check.

    python benchmarks/bench_judge.py [SLUG ...]      # default: map, dot-product, warp-reduce, matmul

Issue 11 asks a check in the app to stay well under a second: the "warm" column is that number (median of
five checks of the reference, each on fresh seeded cases, after one warm-up). PTX compilation is off, as in
the app by default when numba-cuda's compiler is absent.
"""

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from puzzles import registry, workspace  # noqa: E402
from puzzles.checker import check_source  # noqa: E402
from puzzles.judge.worker import JudgeWorker  # noqa: E402


def _median(fn, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    slugs = sys.argv[1:] or ["map", "dot-product", "warp-reduce", "matmul"]
    worker = JudgeWorker(env={**os.environ, "GPU_PUZZLES_PTX": "0"})
    started = time.perf_counter()
    worker.start()
    print(f"{'puzzle':16s} {'warm worker s':>14s} {'in-process s':>13s}")
    try:
        for slug in slugs:
            puzzle = registry.get(slug)
            source = workspace.reference_path(puzzle).read_text()
            assert worker.check(puzzle, source, "/virtual/bench.py", ptx=False).passed
            if slug == slugs[0]:
                print(f"(worker start and first check: {time.perf_counter() - started:.2f} s)")
            warm = _median(lambda p=puzzle, s=source: worker.check(p, s, "/virtual/bench.py", ptx=False))
            local = _median(lambda p=puzzle, s=source: check_source(p, s, "/virtual/bench.py", ptx=False), runs=3)
            print(f"{slug:16s} {warm:14.3f} {local:13.3f}")
    finally:
        worker.close()


if __name__ == "__main__":
    main()
