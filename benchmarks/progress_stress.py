"""Progress under faults: ``kill -9`` at random moments and many processes checking at once. Prints counts.

    python -m benchmarks.progress_stress                  # 100 kill -9 runs and 100 concurrent runs
    python -m benchmarks.progress_stress --cli            # the same through real `gpu-puzzles check`s
    python -m benchmarks.progress_stress --kills 20 --concurrent 0

A **kill run** starts a process that records checks of one puzzle as fast as it can, kills it with SIGKILL at
a random moment, and then reads the file: it must load without a warning, hold every check the process had
finished (and at most the one in flight), keep the other puzzles' entries as they were, and have no
temporary file left once it has been read. With ``--cli`` the process is ``gpu-puzzles check`` itself.

A **concurrent run** starts four processes that each record ``checks`` checks of one puzzle and a fifth that
records one check of several puzzles with one ``Progress`` held throughout (what ``check --all`` does),
releases them at the same moment, and counts what the file holds afterwards: every check must be there.
With ``--cli`` they are four ``gpu-puzzles check 1 --file <reference>`` and one ``gpu-puzzles check --all``.

A run is *lost* when a finished check is missing, *corrupt* when the file does not load cleanly or an entry
changed that nobody touched. Both must be 0. ``tests/puzzles/test_progress_stress.py`` runs a few of each.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SLUG = "map"
#: an entry no run touches: it must come through every run unchanged
BYSTANDER = {"attempts": 7, "best_stars": 3, "hints_revealed": 2, "solution_revealed": True,
             "solved_at": "2025-01-01T00:00:00+00:00", "last_checked_at": "2025-01-02T00:00:00+00:00"}
ALL_SLUGS = tuple(f"puzzle-{k:02d}" for k in range(12))


@dataclass
class Tally:
    """What a series of runs found."""

    runs: int = 0
    lost: int = 0
    corrupt: int = 0
    stray_temps_seen: int = 0      # temporary files a kill left (the kill landed mid-write)
    stray_temps_left: int = 0      # ... still there after the next read: must be 0
    problems: list[str] = field(default_factory=list)

    def fail(self, kind: str, text: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.problems) < 20:
            self.problems.append(f"run {self.runs}: {kind}: {text}")

    @property
    def ok(self) -> bool:
        return self.lost == 0 and self.corrupt == 0 and self.stray_temps_left == 0


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, GPU_PUZZLES_HOME=str(home), PYTHONPATH=str(ROOT))
    env.pop("PYTHONSTARTUP", None)
    return env


def _seed(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    doc = {"schema": 1, "puzzles": {"bystander": BYSTANDER}}
    (home / "progress.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _read(home: Path) -> tuple[dict | None, list[str]]:
    """(the document's puzzles as plain dicts, or None if it is not there; the warnings of loading it)."""
    from dataclasses import asdict

    from puzzles.progress import load_progress

    path = home / "progress.json"
    if not path.exists():
        return None, []
    p = load_progress(path)
    return {slug: asdict(e) for slug, e in p.puzzles.items()}, list(p.warnings)


def _temps(home: Path) -> int:
    return sum(1 for name in os.listdir(home) if name.startswith(".progress.json.") and name.endswith(".tmp"))


# kill -9 -----------------------------------------------------------------------------------------------------------

def kill_runs(n: int, home: Path, *, cli: bool = False, seed: int = 0, reference: Path | None = None) -> Tally:
    """``n`` kill runs in ``home`` (one history: each run starts from what the last one left)."""
    rng = random.Random(seed)
    tally = Tally()
    _seed(home)
    expected = 0
    for _ in range(n):
        tally.runs += 1
        if cli:
            cmd = [sys.executable, "-m", "puzzles", "check", "1", "--file", str(reference)]
            proc = subprocess.Popen(cmd, env=_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.0, 1.6))
        else:
            cmd = [sys.executable, "-m", "benchmarks.progress_stress", "worker", "--loop"]
            proc = subprocess.Popen(cmd, env=_env(home), stdout=subprocess.PIPE, text=True, cwd=ROOT)
            assert proc.stdout is not None
            proc.stdout.readline()                      # "ready": the imports are done
            time.sleep(rng.uniform(0.0, 0.15))
        proc.send_signal(signal.SIGKILL)
        out = proc.communicate()[0] if not cli else ""
        done = out.count("\n") if not cli else 0        # one line per check the worker had finished
        if cli and proc.returncode in (0, 1):           # the check finished before the kill
            done = 1
        tally.stray_temps_seen += _temps(home)
        puzzles, warnings = _read(home)
        tally.stray_temps_left += _temps(home)
        if puzzles is None or warnings:
            tally.fail("corrupt", f"file missing or warned: {warnings}")
            _seed(home)
            expected = 0
            continue
        if puzzles.get("bystander") != BYSTANDER:
            tally.fail("corrupt", f"the bystander entry changed: {puzzles.get('bystander')}")
        got = puzzles.get(SLUG, {}).get("attempts", 0)
        in_flight = 1
        if got < expected + done:
            tally.fail("lost", f"{got} checks recorded, {expected + done} had finished")
        elif got > expected + done + in_flight:
            tally.fail("corrupt", f"{got} checks recorded, at most {expected + done + in_flight} were made")
        expected = got
    return tally


# concurrent checks -------------------------------------------------------------------------------------------------

def concurrent_runs(n: int, base: Path, *, cli: bool = False, procs: int = 4, checks: int = 10,
                    reference: Path | None = None, all_count: int = 3) -> Tally:
    """``n`` runs, each in a fresh home under ``base``: ``procs`` checkers of one puzzle and one "all"."""
    tally = Tally()
    for r in range(n):
        tally.runs += 1
        home = base / f"run{r:03d}"
        _seed(home)
        go = home / "go"
        env = _env(home)
        if cli:
            slugs = _cli_all_setup(home, all_count)
            cmds = [[sys.executable, "-m", "puzzles", "check", "1", "--file", str(reference)]] * procs
            cmds.append([sys.executable, "-m", "puzzles", "check", "--all"])
            started = [subprocess.Popen(c, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True) for c in cmds]
            expected = {s: 1 for s in slugs}
            expected[slugs[0]] = procs + 1     # puzzle 1 is among the started ones: --all checks it too
        else:
            worker = [sys.executable, "-m", "benchmarks.progress_stress", "worker", "--go", str(go)]
            cmds = [worker + ["--checks", str(checks)]] * procs + [worker + ["--all"]]
            started = [subprocess.Popen(c, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        cwd=ROOT) for c in cmds]
            for p in started:
                assert p.stdout is not None
                p.stdout.readline()                 # "ready"
            go.write_text("")
            expected = {s: 1 for s in ALL_SLUGS}
            expected[SLUG] = procs * checks
        errors = []
        for p in started:
            _, err = p.communicate(timeout=300)
            if "warning" in (err or "") or "Traceback" in (err or "") or "internal error" in (err or ""):
                errors.append(err.strip()[-300:])
        puzzles, warnings = _read(home)
        if puzzles is None or warnings or errors:
            tally.fail("corrupt", f"warnings {warnings}, stderr {errors}")
            continue
        if puzzles.get("bystander") != BYSTANDER:
            tally.fail("corrupt", "the bystander entry changed")
        got = {s: puzzles.get(s, {}).get("attempts", 0) for s in expected}
        if got != expected:
            missing = {s: (got[s], expected[s]) for s in expected if got[s] != expected[s]}
            tally.fail("lost" if all(g < e for g, e in missing.values()) else "corrupt",
                       f"(recorded, made): {missing}")
    return tally


def _cli_all_setup(home: Path, count: int) -> list[str]:
    """Workspace files (the references) for the first ``count`` puzzles, so ``check --all`` checks them."""
    from puzzles import registry, workspace

    slugs, before = [], os.environ.get(workspace.ENV_HOME)
    os.environ[workspace.ENV_HOME] = str(home)
    try:
        for puzzle in registry.all_puzzles()[:count]:
            text = workspace.reference_path(puzzle).read_text(encoding="utf-8")
            workspace.workspace_path(puzzle).write_text(text, encoding="utf-8")
            slugs.append(puzzle.slug)
    finally:
        if before is None:
            del os.environ[workspace.ENV_HOME]
        else:
            os.environ[workspace.ENV_HOME] = before
    return slugs


# the worker process ------------------------------------------------------------------------------------------------

def _worker(args: argparse.Namespace) -> int:
    from puzzles import progress

    passed = SimpleNamespace(passed=True, stars=1)
    print("ready", flush=True)
    if args.go:
        go = Path(args.go)
        while not go.exists():
            time.sleep(0.001)
    if args.all:
        held = progress.load_progress()                 # held throughout, as `check --all` does
        for slug in ALL_SLUGS:
            progress.record_check(SimpleNamespace(slug=slug), passed, held)
            _complain(held)
        return 0
    k = 0
    while args.loop or k < args.checks:
        p = progress.record_check(SimpleNamespace(slug=SLUG), passed)
        _complain(p)
        k += 1
        print(k, flush=True)
    return 0


def _complain(p) -> None:
    for text in p.warnings:
        print(f"warning: {text}", file=sys.stderr, flush=True)
    p.warnings.clear()


def _report(name: str, tally: Tally, seconds: float, extra: str = "") -> None:
    print(f"{name:<28} runs {tally.runs:>4}  lost {tally.lost}  corrupt {tally.corrupt}  "
          f"stray temps seen {tally.stray_temps_seen}, left {tally.stray_temps_left}  {extra}"
          f"({seconds:.0f} s)")
    for text in tally.problems:
        print(f"    {text}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command")
    w = sub.add_parser("worker")
    w.add_argument("--loop", action="store_true")
    w.add_argument("--all", action="store_true")
    w.add_argument("--checks", type=int, default=10)
    w.add_argument("--go")
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--concurrent", type=int, default=100)
    parser.add_argument("--checks", type=int, default=10, help="checks per process in a concurrent run")
    parser.add_argument("--cli", action="store_true", help="run real `gpu-puzzles check` processes")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "worker":
        return _worker(args)
    reference = ROOT / "solutions" / "map.py"
    ok = True
    with tempfile.TemporaryDirectory(prefix="progress-stress-") as tmp:
        mode = "gpu-puzzles check" if args.cli else "record_check loop"
        if args.kills:
            t0 = time.perf_counter()
            tally = kill_runs(args.kills, Path(tmp) / "kills", cli=args.cli, seed=args.seed, reference=reference)
            _report(f"kill -9 ({mode})", tally, time.perf_counter() - t0)
            ok &= tally.ok
        if args.concurrent:
            t0 = time.perf_counter()
            tally = concurrent_runs(args.concurrent, Path(tmp) / "concurrent", cli=args.cli,
                                    checks=args.checks, reference=reference)
            shape = "4 x check 1 + check --all " if args.cli else f"4 x {args.checks} checks + 1 all "
            _report(f"concurrent ({mode})", tally, time.perf_counter() - t0, shape)
            ok &= tally.ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
