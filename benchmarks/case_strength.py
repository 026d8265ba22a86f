"""Case strength: mutation testing of every puzzle's cases, over the shipped reference solutions.

    nice -n 10 python benchmarks/case_strength.py [--puzzles 1-20,33] [--workers 2] [--save run.json]
    nice -n 10 python benchmarks/case_strength.py --load a.json b.json --doc docs/case-strength.md

For each puzzle, the reference (solutions/*.py) is rewritten one slip at a time, the usual learner slips
(``benchmarks/mutations.py``): a comparison's strictness swapped, a guard dropped, a loop bound or an index
off by one, ``eps`` moved out of (or into) a square root or dropped, a softmax's max-shift dropped, an fp32
accumulator in a half-precision puzzle turned fp16, a ceiling division made a floor division, an integer
constant off by one. Each mutant goes through the real judge (``puzzles.checker.check_source``, what
``gpu-puzzles check`` runs: player code in a sandboxed child, the simulator and the comparison here) on each
seed of ``SEEDS``, so the audit is reproducible. A mutant the judge rejects on every seed is *rejected*; one
that passes on any seed is a *survivor*. Survivors are run again on ``--fresh`` new seeds (shown, not part of
the verdict), and each must be explained in ``VERDICTS`` (``benchmarks/case_strength_verdicts.py``): an
equivalent mutant (the same program in effect, with the reason). A survivor that was a weak case and is now
rejected is kept there as ``fixed by case ...``, and the audit checks that the named case is what rejects it.

The run prints a table per puzzle (mutants, rejected, survivors) and, with ``--doc``, writes the table and
every survivor with its verdict. It exits 1 when a survivor has no verdict, or a "fixed" mutant survives.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import multiprocessing
import os
import secrets
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from case_strength_verdicts import VERDICTS  # noqa: E402
from mutations import Mutant, mutants_of  # noqa: E402

SEEDS = (20261201, 7)
FRESH = 2
MAX_STEPS = 2_000_000_000      # the largest reference launch needs about 1.1 billion (puzzles.checker.MAX_STEPS)
DOC = ROOT / "docs" / "case-strength.md"


@dataclass
class Outcome:
    """What the judge made of one mutant."""

    key: str
    slug: str
    number: int
    chapter: int
    op: str
    line: int
    before: str
    after: str
    passed_seeds: list[int] = field(default_factory=list)
    rejected_by: dict[str, str] = field(default_factory=dict)    # seed -> "kind in case: message"
    failing_cases: dict[str, list[str]] = field(default_factory=dict)  # seed -> the names of the failing cases
    fresh: dict[str, bool] = field(default_factory=dict)         # fresh seed -> passed
    stars: dict[str, int] = field(default_factory=dict)          # seed it passed -> stars earned
    max_stars: int = 0
    unused: str = ""                                             # Mutant.unused

    @property
    def survived(self) -> bool:
        return bool(self.passed_seeds)

    @property
    def refused(self) -> bool:
        """Rejected, but only ever as a file (it does not compile, or cannot launch): no case was needed."""
        return not self.survived and all(r.startswith(("compile", "error")) for r in self.rejected_by.values())


def parse_puzzles(text: str) -> set[int]:
    """``"1-20,33,40-47"`` -> the puzzle numbers."""
    numbers: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        numbers.update(range(int(lo), int(hi or lo) + 1))
    return numbers


def _worker_init(home: str) -> None:
    os.environ["GPU_PUZZLES_PTX"] = "0"
    os.environ["GPU_PUZZLES_HOME"] = home


def _failures(result) -> tuple[list[str], str]:
    """The names of the cases that failed, and the first failure in words."""
    f = result.failures[0]
    fault = f":{type(f.fault).__name__}" if f.fault is not None else ""
    message = " ".join(f.message.split())
    names = list(dict.fromkeys(x.case for x in result.failures if x.case))
    return names, f"{f.kind}{fault} in {f.case!r}: {message[:160]}"


def judge(task: tuple[Mutant, tuple[int, ...], int]) -> Outcome:
    """Run one mutant through the judge on each fixed seed, then (a survivor) on ``fresh`` new seeds."""
    from puzzles import registry
    from puzzles.checker import check_source

    mutant, seeds, fresh = task
    puzzle = registry.get(mutant.slug)
    out = Outcome(mutant.key, mutant.slug, puzzle.number, puzzle.chapter, mutant.op, mutant.line,
                  mutant.before, mutant.after, unused=mutant.unused)
    filename = f"/virtual/mutant/{mutant.slug.replace('-', '_')}.py"
    for seed in seeds:
        result = check_source(puzzle, mutant.source, filename, seed=seed, ptx=False, max_steps=MAX_STEPS)
        if result.passed:
            out.passed_seeds.append(seed)
            out.stars[str(seed)] = result.stars
            out.max_stars = result.max_stars
        else:
            out.failing_cases[str(seed)], out.rejected_by[str(seed)] = _failures(result)
    if out.survived:
        for _ in range(fresh):
            seed = secrets.randbits(32)
            result = check_source(puzzle, mutant.source, filename, seed=seed, ptx=False, max_steps=MAX_STEPS)
            out.fresh[str(seed)] = result.passed
    return out


def audit(numbers: set[int] | None, workers: int, seeds: tuple[int, ...], fresh: int,
          ops: set[str] | None, quiet: bool = False) -> list[Outcome]:
    from puzzles import registry, workspace

    tasks = []
    for puzzle in registry.all_puzzles():
        if numbers is not None and puzzle.number not in numbers:
            continue
        source = workspace.reference_path(puzzle).read_text(encoding="utf-8")
        for m in mutants_of(puzzle, source):
            if ops is None or m.op in ops:
                tasks.append((m, seeds, fresh))
    if not quiet:
        print(f"{len(tasks)} mutants of {len({t[0].slug for t in tasks})} references, seeds {list(seeds)}, "
              f"{workers} worker(s)", flush=True)
    outcomes: list[Outcome] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="case-strength-") as home:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(workers, initializer=_worker_init, initargs=(home,)) as pool:
            for k, out in enumerate(pool.imap_unordered(judge, tasks, chunksize=1), 1):
                outcomes.append(out)
                if not quiet and (out.survived or k % 50 == 0):
                    tag = "SURVIVED" if out.survived else "rejected"
                    print(f"[{k}/{len(tasks)} {time.perf_counter() - started:6.0f}s] {tag} {out.key}", flush=True)
    outcomes.sort(key=lambda o: (o.number, o.line, o.key))
    return outcomes


def load(paths: list[Path]) -> list[Outcome]:
    """Saved outcomes; a puzzle in a later file replaces that puzzle's outcomes from the earlier ones."""
    by_slug: dict[str, list[Outcome]] = {}
    for path in paths:
        found: dict[str, list[Outcome]] = {}
        for d in json.loads(path.read_text()):
            d["failing_cases"] = {k: [v] if isinstance(v, str) else v for k, v in d["failing_cases"].items()}
            o = Outcome(**d)
            found.setdefault(o.slug, []).append(o)
        by_slug.update(found)
    outcomes = [o for group in by_slug.values() for o in group]
    outcomes.sort(key=lambda o: (o.number, o.line, o.key))
    return outcomes


# ------------------------------------------------------------------------------------------ verdicts


def verdict(out: Outcome) -> tuple[str, bool]:
    """(the verdict's text, whether it is in order). A survivor needs an "equivalent:" verdict, or "loses a
    star:" where it passes with fewer stars than the reference (checked where the run recorded stars); "open:"
    is a weak case found and not yet fixed (never in order). A mutant
    recorded as "fixed by case 'NAME'" must be rejected on every seed by that case (NAME may hold ``*`` for
    the sizes a case name draws)."""
    text = VERDICTS.get(out.key, "")
    if not text and out.unused:
        text = f"equivalent: {out.unused} is read by nothing in the file (the launch comes from the case)"
    if text.startswith("loses a star:"):     # passes, but the judge withholds a star the reference earns
        ok = out.survived and all(v < out.max_stars for v in out.stars.values())
        return text if ok or not out.stars else f"{text} -- BUT IT EARNS EVERY STAR", ok
    if text.startswith("open:"):            # a weak case this audit found and did not fix
        return text, False
    if text.startswith("fixed by case "):
        quoted = text[len("fixed by case "):]
        name = quoted[1:].split(quoted[0])[0]
        ok = not out.survived and all(any(fnmatch.fnmatchcase(c, name) for c in cases)
                                      for cases in out.failing_cases.values())
        return text if ok else f"{text} -- BUT NOW {'SURVIVES' if out.survived else 'rejected by another case'}", ok
    if out.survived:
        if text.startswith("equivalent"):      # "equivalent:", "equivalent on the puzzle's inputs:", ...
            return text, True
        return "UNEXPLAINED: no verdict (a weak case, or an equivalent mutant not yet examined)", False
    return "", True


def table(outcomes: list[Outcome]) -> list[tuple]:
    """(chapter, number, slug, mutants, rejected, of them refused as a file, survivors) per puzzle."""
    rows: dict[tuple, list[int]] = {}
    for o in outcomes:
        row = rows.setdefault((o.chapter, o.number, o.slug), [0, 0, 0, 0])
        row[0] += 1
        row[1] += not o.survived
        row[2] += o.refused
        row[3] += o.survived
    return [(*k, *v) for k, v in sorted(rows.items())]


def print_table(outcomes: list[Outcome]) -> None:
    print(f"\n{'ch':>2} {'#':>3} {'puzzle':28s} {'mutants':>7} {'rejected':>8} {'refused':>7} {'survivors':>9}")
    rows = table(outcomes)
    for chapter, number, slug, n, rejected, refused, survivors in rows:
        print(f"{chapter:2d} {number:3d} {slug:28s} {n:7d} {rejected:8d} {refused:7d} {survivors:9d}")
    total = [sum(r[i] for r in rows) for i in range(3, 7)]
    print(f"{'':2} {'':3} {'total':28s} {total[0]:7d} {total[1]:8d} {total[2]:7d} {total[3]:9d}")


def write_doc(outcomes: list[Outcome], path: Path, seeds: tuple[int, ...]) -> None:
    chapters: dict[int, list[int]] = {}
    for chapter, _, _, *counts in table(outcomes):
        c = chapters.setdefault(chapter, [0, 0, 0, 0, 0])
        c[0] += 1
        for i, v in enumerate(counts, 1):
            c[i] += v
    ops = Counter((o.op, o.survived) for o in outcomes)
    lines = [
        "# Case strength: mutation audit of the puzzles' cases",
        "",
        "Written by `benchmarks/case_strength.py` (do not edit by hand; re-run it). Each reference solution is",
        "rewritten one learner slip at a time (`benchmarks/mutations.py`) and every mutant is run through the",
        f"judge (`puzzles.checker.check_source`) on seeds {', '.join(map(str, seeds))}. *Rejected*: the judge",
        "fails it on every seed. *Survivor*: it passes on some seed; each survivor is either an equivalent",
        "mutant (the same program in effect, reason given) or was a weak case whose puzzle has been given a",
        "case that now rejects it (listed under \"Fixed\"; the audit checks that the named case rejects it).",
        "A survivor may also pass with fewer stars than the reference (\"caught by a star\"), or be a weak case",
        "found and not yet fixed (\"open\").",
        "",
        "*Refused*: rejected only as a file (it does not compile or cannot launch), so no case was needed.",
        "",
        "| chapter | puzzles | mutants | rejected | of them refused | survivors |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for chapter, (p, n, r, f, s) in sorted(chapters.items()):
        lines.append(f"| {chapter} | {p} | {n} | {r} | {f} | {s} |")
    total = [sum(c[i] for c in chapters.values()) for i in range(5)]
    lines.append(f"| **all** | {total[0]} | {total[1]} | {total[2]} | {total[3]} | {total[4]} |")
    lines += ["", "By kind of slip:", "", "| slip | mutants | rejected | survivors |", "|---|---:|---:|---:|"]
    for op in sorted({o.op for o in outcomes}):
        s, r = ops[(op, True)], ops[(op, False)]
        lines.append(f"| {op} | {s + r} | {r} | {s} |")
    lines += ["", "## Per puzzle", "", "| # | puzzle | mutants | rejected | of them refused | survivors |",
              "|---:|---|---:|---:|---:|---:|"]
    for _, number, slug, n, rejected, refused, survivors in table(outcomes):
        lines.append(f"| {number} | {slug} | {n} | {rejected} | {refused} | {survivors} |")
    seeds_of = {o.slug: set(o.passed_seeds) | {int(k) for k in o.rejected_by} for o in outcomes}
    ops_of: dict[str, set[str]] = {}
    for o in outcomes:
        ops_of.setdefault(o.slug, set()).add(o.op)
    partial = sorted({(o.number, o.slug, "constant" in ops_of[o.slug]) for o in outcomes
                      if len(seeds_of[o.slug]) < len(seeds)})
    if partial:
        lines += ["", f"**Partial coverage.** These puzzles were audited on fewer seeds than {len(seeds)} (a run with "
                  "`--seeds`), and those marked * without the `constant` slips (a run with `--ops`), to keep the run "
                  "inside its time: " + ", ".join(f"{n} {slug}{'' if c else '*'}" for n, slug, c in partial) + "."]
    survivors = [o for o in outcomes if o.survived]
    fixed = [o for o in outcomes if VERDICTS.get(o.key, "").startswith("fixed by case ")]

    def item(o: Outcome) -> str:
        stars = f" (★{max(o.stars.values())} of {o.max_stars})" if o.stars else ""
        return f"- **{o.slug}** line {o.line}, {o.op}: `{o.before}` → `{o.after}`{stars} — {verdict(o)[0]}"

    groups = (("Open: weak cases found and not fixed", lambda t: t.startswith("open:")),
              ("Unexplained", lambda t: t.startswith(("UNEXPLAINED", "fixed by case"))),
              ("Caught by a star: passes, with fewer stars than the reference", lambda t: t.startswith("loses a star")),
              ("Equivalent mutants", lambda t: t.startswith("equivalent")))
    lines += ["", f"## Survivors ({len(survivors)})"]
    for title, belongs in groups:
        group = [o for o in survivors if belongs(verdict(o)[0])]
        if group:
            lines += ["", f"### {title} ({len(group)})", ""] + [item(o) for o in group]
    lines += ["", f"## Fixed: weak cases found by this audit and strengthened ({len(fixed)})", "",
              "Each passed the judge before its puzzle got the named case; each is now rejected by it on every seed.",
              ""]
    lines += [item(o) for o in fixed]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--puzzles", help="puzzle numbers, e.g. 1-20,33,40-47 (default: all)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seeds", default=",".join(map(str, SEEDS)), help="the fixed seeds, comma-separated")
    p.add_argument("--fresh", type=int, default=FRESH, help="fresh seeds for each survivor")
    p.add_argument("--ops", help="only these kinds of slip, comma-separated")
    p.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    p.add_argument("--save", type=Path, help="save the outcomes as JSON")
    p.add_argument("--load", type=Path, nargs="+", help="read saved outcomes instead of running")
    p.add_argument("--doc", type=Path, nargs="?", const=DOC, help=f"write the report (default {DOC})")
    args = p.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    numbers = parse_puzzles(args.puzzles) if args.puzzles else None
    ops = set(args.ops.split(",")) if args.ops else None
    if args.list:
        from puzzles import registry, workspace

        for puzzle in registry.all_puzzles():
            if numbers is None or puzzle.number in numbers:
                for m in mutants_of(puzzle, workspace.reference_path(puzzle).read_text(encoding="utf-8")):
                    if ops is None or m.op in ops:
                        print(m.key)
        return 0
    if args.load:
        outcomes = load(args.load)
    else:
        outcomes = audit(numbers, args.workers, seeds, args.fresh, ops)
    if args.save:
        args.save.write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    print_table(outcomes)
    bad = 0
    for o in outcomes:
        text, ok = verdict(o)
        if o.survived or not ok:
            fresh = ", ".join(f"{s}: {'passed' if v else 'rejected'}" for s, v in o.fresh.items())
            print(f"{'  ' if ok else '!!'} {o.key}\n     passes seeds {o.passed_seeds}"
                  f"{'; fresh ' + fresh if fresh else ''}\n     {text}")
        bad += not ok
    if args.doc:
        write_doc(outcomes, args.doc, seeds)
        print(f"wrote {args.doc}")
    print(f"{bad} survivor(s) without an accepted verdict" if bad else "every survivor has a verdict")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
