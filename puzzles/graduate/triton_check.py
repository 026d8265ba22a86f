"""Every reference solution through the Triton back end without a GPU: ``python3 -m puzzles.graduate.triton_check``.

    python3 -m puzzles.graduate.triton_check --interpret [PUZZLE ...]   # each case, checked against the spec
    python3 -m puzzles.graduate.triton_check --aot [PUZZLE ...]         # each program compiled for sm_90

``--interpret`` runs every case of every puzzle (all its launch steps, in order) through Triton's interpreter
on CPU torch tensors and compares the outputs with the puzzle's spec as the checker does
(``puzzles.compare.first_mismatch``, the puzzle's tolerances). ``--aot`` translates every launch of every
case and compiles each distinct program ahead of time for sm_90 (``triton.compile`` with a ``GPUTarget``),
which catches code that the interpreter accepts and the compiler rejects, and passes each launch's
arguments through Triton's own argument binder (which the interpreter does not use). Each mode is a process of its
own (Triton picks interpreter or compiler once per process). One line per puzzle, then
``N passed, M failed``; exit status 1 on any failure. Needs torch and triton (the ``[gpu]`` extra).
"""

from __future__ import annotations

import argparse
import copy
import os
import signal
import sys
import time

PER_PUZZLE_S = 300


class _Timeout(Exception):
    pass


def check_interpreted(puzzle, path, max_cases: int | None = None) -> str | None:
    """None when every case of ``puzzle`` (or its first ``max_cases``) is right under the interpreter, else
    what went wrong."""
    from ..compare import PuzzleBug, first_mismatch
    from ..multidevice import case_outputs
    from .triton_backend import TritonBackend

    runnable = TritonBackend(interpret=True).compile(puzzle, path)
    for case in puzzle.make_cases()[:max_cases]:
        before = copy.deepcopy(dict(case.buffers))
        got = runnable.run(case)
        try:
            expected = puzzle.spec(**copy.deepcopy(before))
        except PuzzleBug as e:
            return f"{case.name}: the puzzle's spec failed: {e}"
        bad = first_mismatch(case_outputs(puzzle, case), got, expected, before, puzzle.rtol, puzzle.atol)
        if bad is not None:
            return f"{case.name}: {bad.message}"
    return None


def check_compiled(puzzle, path, max_cases: int | None = None) -> str | None:
    """None when every program of every case of ``puzzle`` compiles for sm_90 and every launch's arguments
    pass Triton's argument binder (``launcher.check_binding``, on CPU tensors), else the first error."""
    import numpy as np
    import torch

    from gpusim.backends.triton import launcher

    from .triton_backend import TritonBackend

    runnable = TritonBackend(interpret=False).compile(puzzle, path)
    done = set()
    for case in puzzle.make_cases()[:max_cases]:
        host = dict(case.buffers)
        cpu = {k: torch.from_numpy(np.ascontiguousarray(v)) if isinstance(v, np.ndarray) else v
               for k, v in host.items()}
        for step in case.launches:
            program, names = runnable.program(step, host)
            try:
                if program.source not in done:
                    done.add(program.source)
                    launcher.compile_aot(program)
                bound = launcher.bind(program, dict(zip(names, step.arg_values(cpu))), step.grid, "cpu")
                launcher.check_binding(program, bound)
            except Exception as e:
                return f"{step.kernel} (block {program.block}): {type(e).__name__}: {_first(e)}"
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m puzzles.graduate.triton_check", description=__doc__.split("\n")[0])
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--interpret", action="store_true", help="run every case through Triton's interpreter")
    mode.add_argument("--aot", action="store_true", help="compile every program for sm_90 without a GPU")
    p.add_argument("puzzles", nargs="*", help="puzzle numbers or slugs (default: every puzzle)")
    p.add_argument("--max-cases", type=int, metavar="N",
                   help="only the first N cases of each puzzle (its worked examples come first)")
    args = p.parse_args(argv)
    if args.interpret:
        os.environ["TRITON_INTERPRET"] = "1"     # before anything imports triton
    else:
        os.environ.pop("TRITON_INTERPRET", None)
    from .. import registry, workspace
    from .backend import CompileFailed, RunFailed
    from .triton_backend import missing_packages

    missing = missing_packages()
    if missing:
        print(f"triton_check: {' and '.join(missing)} not installed (pip install -e \".[gpu]\")", file=sys.stderr)
        return 1
    puzzles = [registry.get(x) for x in args.puzzles] if args.puzzles else registry.all_puzzles()
    check = check_interpreted if args.interpret else check_compiled
    failures: list[str] = []
    started = time.monotonic()
    for puzzle in puzzles:
        t0 = time.monotonic()
        try:
            with _limit(PER_PUZZLE_S):
                problem = check(puzzle, workspace.reference_path(puzzle), args.max_cases)
        except CompileFailed as e:
            problem = f"does not translate: {e}"
        except RunFailed as e:
            problem = f"fails to run: {e}"
        except _Timeout:
            problem = f"did not finish within {PER_PUZZLE_S} s"
        except Exception as e:  # a bug of the back end: report it on its puzzle and go on
            problem = f"{type(e).__name__}: {_first(e)}"
        took = time.monotonic() - t0
        if problem is None:
            print(f"ok    {puzzle.number:>3} {puzzle.slug} ({took:.1f} s)", flush=True)
        else:
            failures.append(f"{puzzle.number} {puzzle.slug}: {problem}")
            print(f"FAIL  {puzzle.number:>3} {puzzle.slug}: {problem[:400]}", flush=True)
    what = "under the interpreter" if args.interpret else "compiled for sm_90"
    if args.max_cases:
        what += f", the first {args.max_cases} case(s) of each"
    print(f"\nreferences {what}, {time.monotonic() - started:.0f} s:")
    print(f"{len(puzzles) - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


class _limit:
    """``PER_PUZZLE_S`` seconds for one puzzle (SIGALRM: the main thread of a Unix process; elsewhere none)."""

    def __init__(self, seconds: int):
        self.seconds = seconds
        self.on = hasattr(signal, "SIGALRM")

    def __enter__(self):
        if self.on:
            self.old = signal.signal(signal.SIGALRM, self._fire)
            signal.alarm(self.seconds)
        return self

    @staticmethod
    def _fire(signum, frame):
        raise _Timeout()

    def __exit__(self, *exc):
        if self.on:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, self.old)
        return False


def _first(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return " ".join(lines[:6])[:600] if lines else type(e).__name__


if __name__ == "__main__":
    sys.exit(main())
