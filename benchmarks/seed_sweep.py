"""Seed sweep: every shipped reference, and every right-but-different solution, through the judge on fresh seeds.

    nice -n 10 python -m benchmarks.seed_sweep --seeds 20 [--puzzles 1-20,74] [--workers 2] [--save run.json]
    python -m benchmarks.seed_sweep --load run.json [--doc docs/seed-sweep.md]
    python -m benchmarks.seed_sweep --puzzles 74 --seed-list 1032785527     # replay seeds

Each check draws a fresh seed for its cases' random data (``puzzles.checker.new_seed``). A correct solution
must pass on every one of them: a case that puts a value at a rounding boundary, a tie in an argmax or a
sort, or a magnitude the tolerance does not cover can fail a right answer on one seed in a thousand. This
runs each puzzle's reference (``solutions/``, what ``gpu-puzzles check --reference`` checks) and each file of
``tests/puzzles/right/`` through ``puzzles.checker.check_file`` — the real judge: the file in a sandboxed
child, the simulator, the spec and the comparison here — on the same N fresh seeds per puzzle, and prints
one row per file: seeds run, failures, and each failing seed with its first failing case and message.

PTX compilation is off (``--ptx`` turns it on): it depends on the argument types, not on the seed, and the
reference tests compile every reference already. Exit status 1 when any file failed on any seed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import secrets
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RIGHT_DIR = ROOT / "tests" / "puzzles" / "right"
DOC = ROOT / "docs" / "seed-sweep.md"
RIGHT_HEADER = re.compile(r"^# RIGHT: (?P<slug>[a-z0-9-]+)\s*$")
MESSAGE_CHARS = 200


@dataclass
class Run:
    """One file checked on one seed."""

    number: int
    slug: str
    file: str               # "reference", or the name of a file in tests/puzzles/right/
    seed: int
    passed: bool
    case: str | None = None     # the first failing case
    kind: str = ""              # its failure's kind (mismatch, fault, ...)
    message: str = ""           # its message, on one line, capped
    seconds: float = 0.0


@dataclass
class Row:
    """One file over its seeds."""

    number: int
    slug: str
    file: str
    seeds: int = 0
    failures: list[Run] = field(default_factory=list)
    seconds: float = 0.0


def parse_puzzles(text: str) -> set[int]:
    """``"1-20,33,40-47"`` -> the puzzle numbers."""
    numbers: set[int] = set()
    for part in text.split(","):
        if part.strip():
            lo, _, hi = part.strip().partition("-")
            numbers.update(range(int(lo), int(hi or lo) + 1))
    return numbers


def right_files(directory: Path = RIGHT_DIR) -> dict[str, list[Path]]:
    """slug -> the right-but-different solutions of that puzzle (first line ``# RIGHT: <slug>``)."""
    found: dict[str, list[Path]] = {}
    for path in sorted(directory.glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        match = RIGHT_HEADER.match(lines[0]) if lines else None
        if match:
            found.setdefault(match["slug"], []).append(path)
    return found


def one_line(text: str, limit: int = MESSAGE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _worker_init(home: str, ptx: bool) -> None:
    os.environ["GPU_PUZZLES_HOME"] = home
    if not ptx:
        os.environ["GPU_PUZZLES_PTX"] = "0"


def check(task: tuple[str, str, str, int, bool]) -> Run:
    """Check one file of one puzzle on one seed through the judge."""
    from puzzles import registry
    from puzzles.checker import check_file

    slug, label, path, seed, ptx = task
    puzzle = registry.get(slug)
    started = time.perf_counter()
    result = check_file(puzzle, path, seed=seed, ptx=ptx)
    run = Run(puzzle.number, slug, label, seed, bool(result.passed), seconds=time.perf_counter() - started)
    if not result.passed:
        first = result.failures[0] if result.failures else None
        if first is None:
            failing = next((c for c in result.cases if not c.passed), None)
            run.case, run.message = (failing.name if failing else None), "no failure recorded"
        else:
            run.case, run.kind, run.message = first.case, first.kind, one_line(first.message)
    return run


def tasks_for(numbers: set[int] | None, seeds: int, seed_list: list[int] | None, right: bool,
              ptx: bool) -> list[tuple[str, str, str, int, bool]]:
    """Every (slug, label, path, seed, ptx) to check: per puzzle the same seeds for its reference and its
    right files, drawn fresh per puzzle unless ``seed_list`` names them."""
    from puzzles import registry, workspace

    rights = right_files() if right else {}
    tasks = []
    for puzzle in registry.all_puzzles():
        if numbers is not None and puzzle.number not in numbers:
            continue
        files = []
        reference = workspace.reference_path(puzzle)
        if reference.is_file():
            files.append(("reference", str(reference)))
        files += [(p.name, str(p)) for p in rights.get(puzzle.slug, [])]
        drawn = list(seed_list) if seed_list else [secrets.randbits(32) for _ in range(seeds)]
        for seed in drawn:
            tasks += [(puzzle.slug, label, path, seed, ptx) for label, path in files]
    return tasks


def sweep(tasks: list, workers: int, log=print) -> list[Run]:
    runs: list[Run] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="seed-sweep-") as home:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(workers, initializer=_worker_init, initargs=(home, tasks[0][4] if tasks else False)) as pool:
            for k, run in enumerate(pool.imap_unordered(check, tasks, chunksize=1), 1):
                runs.append(run)
                if not run.passed:
                    log(f"[{k}/{len(tasks)} {time.perf_counter() - started:6.0f}s] FAILED {run.number} {run.slug} "
                        f"{run.file} seed {run.seed}: {run.kind} in {run.case!r}: {run.message}")
                elif k % 25 == 0:
                    log(f"[{k}/{len(tasks)} {time.perf_counter() - started:6.0f}s] {run.number} {run.slug} ok")
    return runs


def rows_of(runs: list[Run]) -> list[Row]:
    """One row per (puzzle, file), reference first, in puzzle order; failures in seed order."""
    rows: dict[tuple[int, str, str], Row] = {}
    for run in runs:
        row = rows.setdefault((run.number, run.slug, run.file), Row(run.number, run.slug, run.file))
        row.seeds += 1
        row.seconds += run.seconds
        if not run.passed:
            row.failures.append(run)
    for row in rows.values():
        row.failures.sort(key=lambda r: r.seed)
    return sorted(rows.values(), key=lambda r: (r.number, r.file != "reference", r.file))


def _failing(row: Row) -> str:
    return "; ".join(f"seed {r.seed}: {r.kind} in {r.case!r}: {r.message}" for r in row.failures)


def format_table(rows: list[Row], markdown: bool = False) -> list[str]:
    """The table: puzzle, file, seeds run, failures, the failing seeds (first failing case, message)."""
    total_seeds, total_failed = sum(r.seeds for r in rows), sum(len(r.failures) for r in rows)
    failed_files = sum(1 for r in rows if r.failures)
    if markdown:
        lines = ["| # | puzzle | file | seeds | failures | failing seeds (first failing case: message) |",
                 "|---:|---|---|---:|---:|---|"]
        lines += [f"| {r.number} | {r.slug} | {r.file} | {r.seeds} | {len(r.failures)} | "
                  f"{_failing(r).replace('|', '/') or '—'} |" for r in rows]
        lines.append(f"| | **all** | {len(rows)} files | {total_seeds} | {total_failed} | "
                     f"{failed_files} file(s) failed |")
        return lines
    lines = [f"{'#':>3} {'puzzle':28s} {'file':44s} {'seeds':>5} {'fail':>4}  failing seeds"]
    for r in rows:
        lines.append(f"{r.number:3d} {r.slug:28s} {r.file[:44]:44s} {r.seeds:5d} {len(r.failures):4d}  "
                     f"{_failing(r)}")
    lines.append(f"{'':3} {'total':28s} {str(len(rows)) + ' files':44s} {total_seeds:5d} {total_failed:4d}  "
                 f"{failed_files} file(s) failed")
    return lines


def load(paths: list[Path]) -> list[Run]:
    """Saved runs; a (puzzle, file) in a later file replaces its runs from the earlier ones."""
    by_file: dict[tuple[str, str], list[Run]] = {}
    for path in paths:
        found: dict[tuple[str, str], list[Run]] = {}
        for d in json.loads(path.read_text(encoding="utf-8")):
            run = Run(**d)
            found.setdefault((run.slug, run.file), []).append(run)
        by_file.update(found)
    return [run for group in by_file.values() for run in group]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=20, help="fresh seeds per puzzle (default 20)")
    p.add_argument("--seed-list", help="check these seeds instead of fresh ones, comma-separated")
    p.add_argument("--puzzles", help="puzzle numbers, e.g. 1-20,33,74 (default: all)")
    p.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    p.add_argument("--no-right", action="store_true", help="only the references, not tests/puzzles/right/")
    p.add_argument("--ptx", action="store_true", help="also compile each kernel to PTX (seed-independent)")
    p.add_argument("--save", type=Path, help="save every run as JSON")
    p.add_argument("--load", type=Path, nargs="+", help="read saved runs instead of running")
    p.add_argument("--doc", type=Path, nargs="?", const=DOC, help=f"write the table as Markdown (default {DOC})")
    args = p.parse_args(argv)
    if args.load:
        runs = load(args.load)
    else:
        numbers = parse_puzzles(args.puzzles) if args.puzzles else None
        seed_list = [int(s) for s in args.seed_list.split(",")] if args.seed_list else None
        tasks = tasks_for(numbers, args.seeds, seed_list, not args.no_right, args.ptx)
        print(f"{len(tasks)} checks of {len({t[:2] for t in tasks})} files, {args.workers} worker(s)", flush=True)
        runs = sweep(tasks, max(1, args.workers), log=lambda s: print(s, flush=True))
        if args.save:
            args.save.write_text(json.dumps([asdict(r) for r in runs], indent=1), encoding="utf-8")
    rows = rows_of(runs)
    print("\n" + "\n".join(format_table(rows)))
    if args.doc:
        args.doc.write_text("\n".join(format_table(rows, markdown=True)) + "\n", encoding="utf-8")
        print(f"wrote {args.doc}")
    return 1 if any(r.failures for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
