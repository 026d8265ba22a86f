"""``gpu-puzzles triton PUZZLE [--reference | --file F]``: print the Triton program(s) a solution becomes.

The kernels are translated for the launches of the puzzle's first case (the argument types and block shapes
they have there); each distinct program is printed once, under a line naming the launch. Translating needs
neither torch nor triton. Exit status 0, or 1 when the file cannot be loaded or translated (the message
names the construct and the line), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PROG = "gpu-puzzles triton"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("puzzle", help="puzzle number or slug")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--reference", action="store_true", help="translate the reference solution")
    which.add_argument("--file", type=Path, help="translate this file instead of your workspace file")


def generated(puzzle, path: Path) -> str:
    """The programs for ``path``'s kernels, as ``gpu-puzzles triton`` prints them (``CompileFailed``)."""
    from .triton_backend import TritonBackend

    runnable = TritonBackend(interpret=False).compile(puzzle, path)
    case = puzzle.make_cases()[0]
    parts = []
    for step, program in runnable.programs(case):
        parts.append(f"# {step.kernel}, launched with grid {step.grid} and blocks of {step.block} threads "
                     f"(puzzle {puzzle.number}, case {case.name!r})\n\n{program.source}")
    return "\n\n".join(parts)


def run(args: argparse.Namespace) -> int:
    from .. import registry, workspace
    from .backend import CompileFailed, RunFailed

    try:
        puzzle = registry.get(args.puzzle)
    except registry.RegistryError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    if args.file is not None:
        path = args.file.expanduser().resolve()
        if not path.is_file():
            print(f"{PROG}: no such file: {path}", file=sys.stderr)
            return 2
    elif args.reference:
        path = workspace.reference_path(puzzle)
    else:
        try:
            path = workspace.workspace_path(puzzle)
        except ImportError:
            print(f"{PROG}: your workspace folder needs platformdirs (or set GPU_PUZZLES_HOME); --reference or "
                  "--file need neither", file=sys.stderr)
            return 2
        if not path.is_file():
            print(f"{PROG}: puzzle {puzzle.number} has no file in your workspace yet (`gpu-puzzles path "
                  f"{puzzle.number}` makes one)", file=sys.stderr)
            return 1
    try:
        text = generated(puzzle, path)
    except (CompileFailed, RunFailed) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    print(text.rstrip("\n"))
    return 0
