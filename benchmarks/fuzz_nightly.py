"""The nightly fuzz run: ≥ 10,000 generated kernels and hundreds of solution files through gpusim and the CLI.

    python -m benchmarks.fuzz_nightly                          # 10,000 kernels, 600 files, resource cases
    python -m benchmarks.fuzz_nightly --kernels 500 --files 50 --out /tmp/fuzz    # a quick one
    python -m benchmarks.fuzz_nightly --kernels 0 --files 0    # only the resource-limit table

Every case runs in a forked child under a watchdog (``benchmarks/fuzz/pool.py``): more than ``--hang-seconds``
(60) is a hang, and its Python stack is kept. The target (issue 14) is a clean outcome for every case: a
documented error (``KernelCompileError`` and subclasses, ``LaunchError``) or a result, with or without faults
— never an internal error, a hang or a crash. The run prints its counts by outcome and by family, then each
distinct finding once; for each it writes a minimal reproducer (``--out``/repro/NN_<label>.py, run it with
``python``) and ``findings.md``, a summary for the engineers who fix them. Then the resource-limit cases,
each in a fresh process: refused in < 1 s under 500 MB is the target. Exit status 0 when nothing was found.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.fuzz.cases import Case  # noqa: E402
from benchmarks.fuzz.execute import Outcome  # noqa: E402
from benchmarks.fuzz.generate import files, kernels  # noqa: E402
from benchmarks.fuzz.launches import resource_cases, runaway_cases  # noqa: E402
from benchmarks.fuzz.measure import measure  # noqa: E402
from benchmarks.fuzz.pool import Pool  # noqa: E402
from benchmarks.fuzz.reduce import reduce_case  # noqa: E402

SLOW_SECONDS = 10.0
REFUSE_SECONDS, REFUSE_MB = 1.0, 500.0
RUNAWAY_SECONDS = 5.0


def group(case: Case, outcome: Outcome) -> str:
    """What makes two findings the same: the outcome and where in our code (a hang: without the line)."""
    if outcome.label == "hang":
        where = outcome.where.split(" in ")
        place = f"{where[0].rsplit(':', 1)[0]} in {where[1]}" if len(where) == 2 else "?"
        return f"hang [{case.family}] {place}"
    return outcome.signature


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    (out / "repro").mkdir(parents=True, exist_ok=True)
    cases = kernels(args.kernels, args.seed) + files(args.files, args.seed)
    counts: collections.Counter = collections.Counter()
    by_family: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    findings: dict[str, list[tuple[Case, Outcome]]] = {}
    suspects: dict[str, int] = collections.Counter()
    no_line: dict[str, int] = collections.Counter()
    slow = []
    t0 = time.perf_counter()
    log = open(out / "all_findings.jsonl", "w", encoding="utf-8")
    with Pool(args.workers, args.hang_seconds, args.memory_mb) as pool:
        for n, (case, outcome) in enumerate(pool.run(cases), 1):
            counts[outcome.label] += 1
            by_family[case.family][_short(outcome.label)] += 1
            if outcome.suspect:
                suspects[outcome.suspect[:120]] += 1
            if outcome.no_line:
                no_line[f"{outcome.label}: {outcome.detail[:100]}"] += 1
            if outcome.seconds > SLOW_SECONDS and not outcome.finding:
                slow.append((case, outcome))
            if outcome.finding:
                findings.setdefault(group(case, outcome), []).append((case, outcome))
                log.write(json.dumps({"seed": case.seed, "kind": case.kind, "family": case.family,
                                      "label": outcome.label, "where": outcome.where,
                                      "detail": outcome.detail}) + "\n")
            if n % 500 == 0:
                print(f"  ... {n} of {len(cases)} cases, {sum(len(v) for v in findings.values())} findings, "
                      f"{time.perf_counter() - t0:.0f} s", flush=True)
        seconds = time.perf_counter() - t0
        log.close()
        reproducers = _reduce_all(findings, pool, out, args)
    total = sum(counts.values())
    print(f"\n{total} cases ({args.kernels} kernels, {args.files} files) in {seconds:.0f} s, "
          f"{args.workers} workers, hang = more than {args.hang_seconds:g} s\n")
    print("Counts by outcome:")
    for label, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        mark = "  <- finding" if label.startswith(("internal:", "hang", "crash:", "check:internal",
                                                   "check:escaped:")) else ""
        print(f"  {n:>6}  {label}{mark}")
    print("\nBy family (outcome: count):")
    for family in sorted(by_family):
        row = ", ".join(f"{k} {v}" for k, v in sorted(by_family[family].items(), key=lambda kv: -kv[1]))
        print(f"  {family:<14} {row}")
    n_findings = sum(len(v) for v in findings.values())
    print(f"\nFindings: {n_findings} cases, {len(findings)} distinct")
    for key, items in sorted(findings.items(), key=lambda kv: -len(kv[1])):
        case, outcome = items[0]
        print(f"  {len(items):>5} x {key}\n          {outcome.detail[:140]}\n          first: {case.kind} "
              f"{case.family} seed {case.seed}; reproducer {reproducers.get(key, '-')}")
    if suspects:
        print(f"\nKernelError faults from gpusim's catch-all ('may be a gpusim limitation'): "
              f"{sum(suspects.values())}")
        for text, n in suspects.most_common(15):
            print(f"  {n:>5} x {text}")
    if no_line:
        print(f"\nCompile errors and faults without a line number: {sum(no_line.values())}")
        for text, n in no_line.most_common(10):
            print(f"  {n:>5} x {text}")
    if slow:
        print(f"\nClean but slow (> {SLOW_SECONDS:g} s): {len(slow)}")
        for case, outcome in slow[:10]:
            print(f"  {outcome.seconds:6.1f} s  {case.family} seed {case.seed}: {outcome.label}")
    table = _resources(args) if args.resources else []
    _write_summary(out, args, counts, findings, reproducers, suspects, table, seconds)
    print(f"\nWrote {out / 'findings.md'} and {len(reproducers)} reproducers in {out / 'repro'}")
    bad_resources = [m for m in table if not m[1]]
    return 0 if not findings and not bad_resources else 1


def _short(label: str) -> str:
    return label if not label.startswith("check:fail:") else "check:fail"


def _reduce_all(findings, pool: Pool, out: Path, args) -> dict[str, str]:
    """A minimal reproducer per distinct finding (hangs are reduced under a shorter watchdog)."""
    written: dict[str, str] = {}
    quick = None
    try:
        for k, (key, items) in enumerate(sorted(findings.items(), key=lambda kv: -len(kv[1])), 1):
            case, outcome = items[0]
            if args.reduce:
                if outcome.label == "hang":
                    quick = quick or Pool(1, min(args.hang_seconds, args.reduce_hang_seconds), args.memory_mb)
                    target, budget = quick, args.reduce_hang_trials
                else:
                    target, budget = pool, args.reduce_trials
                case, _ = reduce_case(case, outcome, lambda batch, t=target: [o for _, o in t.run(batch)],
                                      budget)
            name = f"{k:02d}_{outcome.label.replace(':', '_')}.py"
            header = (f"# fuzz finding {k}: {key}\n# {outcome.detail[:200]}\n# {len(items)} cases; first: "
                      f"{case.kind} family {case.family} seed {case.seed}\n")
            (out / "repro" / name).write_text(header + case.reproducer(), encoding="utf-8")
            written[key] = name
    finally:
        if quick is not None:
            quick.close()
    return written


def _resources(args) -> list[tuple[str, bool, str]]:
    print(f"\nResource-limit cases, each in a fresh process (target: refused in < {REFUSE_SECONDS:g} s of CPU "
          f"time under {REFUSE_MB:g} MB; runaway loops stopped in < {RUNAWAY_SECONDS:g} s of CPU time):")
    rows = []
    for case in resource_cases(args.huge_kernel_mb):
        m = measure(case, timeout=args.hang_seconds * 2, memory_mb=args.memory_mb)
        ok = m.refused_within(REFUSE_SECONDS, REFUSE_MB)
        rows.append((m.name, ok, m.line()))
        print(("  ok    " if ok else "  FAIL  ") + m.line(), flush=True)
    for case in runaway_cases():
        m = measure(case, timeout=args.hang_seconds, memory_mb=args.memory_mb)
        ok = m.label == "fault:KernelTimeout" and m.cpu_seconds < RUNAWAY_SECONDS
        rows.append((m.name, ok, m.line()))
        print(("  ok    " if ok else "  FAIL  ") + m.line(), flush=True)
    return rows


def _write_summary(out: Path, args, counts, findings, reproducers, suspects, table, seconds) -> None:
    lines = ["# Fuzz findings", "",
             f"`python -m benchmarks.fuzz_nightly --kernels {args.kernels} --files {args.files} --seed {args.seed}`"
             f" — {sum(counts.values())} cases in {seconds:.0f} s; hang = more than {args.hang_seconds:g} s.", "",
             "## Counts by outcome", "", "| outcome | cases |", "|---|---:|"]
    lines += [f"| {label} | {n} |" for label, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    lines += ["", f"## Distinct findings ({len(findings)})", "",
              "Each has a minimal reproducer in `repro/` (`python repro/<file>`).", ""]
    for k, (key, items) in enumerate(sorted(findings.items(), key=lambda kv: -len(kv[1])), 1):
        case, outcome = items[0]
        repro = reproducers.get(key, "")
        lines += [f"{k}. **{key}** — {len(items)} cases, e.g. {case.family} seed {case.seed}: "
                  f"{outcome.detail[:160]}", ""]
        path = out / "repro" / repro if repro else None
        if path is not None and path.exists():
            text = path.read_text(encoding="utf-8")
            body = _kernel_part(text)
            if len(body) < 2500:
                lines += ["   ```python", *("   " + line for line in body.rstrip().split("\n")), "   ```", ""]
            else:
                lines += [f"   (reproducer `{repro}`: {len(body):,} characters)", ""]
    if suspects:
        lines += ["## KernelError faults made by gpusim's catch-all", "",
                  "Not failures of the contract, but each is a Python error inside generated code:", ""]
        lines += [f"- {n} x {text}" for text, n in suspects.most_common(15)]
        lines += [""]
    if table:
        lines += ["## Resource-limit cases (fresh process each)", "",
                  f"Target: refused in < {REFUSE_SECONDS:g} s of CPU time under {REFUSE_MB:g} MB; runaway loops "
                  f"stopped in < {RUNAWAY_SECONDS:g} s.", "", "```"]
        lines += [("ok    " if ok else "FAIL  ") + line for _, ok, line in table]
        lines += ["```", ""]
    (out / "findings.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _kernel_part(text: str) -> str:
    """A reproducer without its header comment and without the imports every kernel repeats."""
    keep = [line for line in text.split("\n") if not line.startswith("# fuzz finding")]
    return "\n".join(keep).strip("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0, help="first seed (cases are seed, seed+1, ...)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--hang-seconds", type=float, default=60.0)
    parser.add_argument("--memory-mb", type=int, default=2500, help="address-space limit of each case")
    parser.add_argument("--out", default=None, help="where findings.md and repro/ go (default: a new temp folder)")
    parser.add_argument("--no-reduce", dest="reduce", action="store_false")
    parser.add_argument("--reduce-trials", type=int, default=300)
    parser.add_argument("--reduce-hang-trials", type=int, default=12)
    parser.add_argument("--reduce-hang-seconds", type=float, default=15.0)
    parser.add_argument("--no-resources", dest="resources", action="store_false")
    parser.add_argument("--huge-kernel-mb", type=float, default=10.0)
    args = parser.parse_args(argv)
    args.out = args.out or tempfile.mkdtemp(prefix="fuzz-nightly-")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
