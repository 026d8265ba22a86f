"""``gpu-puzzles``: list, read and check puzzles from the command line; with no command, start the TUI.

Exit status: 0 when a check passes (or a command succeeds), 1 when a check fails or something cannot be
done, 2 for a usage error. Problems are printed as one plain message; no traceback reaches the player
(``--debug`` shows it, for bug reports). The TUI is imported only when it is started, so ``list`` and
``check`` never load Textual.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback
from pathlib import Path

from gpusim.faults import KernelTimeout

from . import checker, progress, registry, render, workspace

SCHEMA = 1


class UsageError(Exception):
    """The command line asks for something that makes no sense (exit status 2)."""


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:        # --help, or argparse already printed a usage error
        return e.code if isinstance(e.code, int) else 2
    try:
        if args.command is None:
            return _no_command()
        return args.handler(args)
    except UsageError as e:
        _error(str(e))
        return 2
    except registry.UnknownPuzzle as e:
        _error(str(e))
        return 2
    except (registry.RegistryError, workspace.WorkspaceError) as e:
        _error(str(e))
        return 1
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:        # `gpu-puzzles list | head`: the reader left; say nothing more
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except Exception as e:
        if args.debug:
            traceback.print_exc()
        _error(f"internal error, a bug in gpu-puzzles ({type(e).__name__}: {e}); --debug shows the details")
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpu-puzzles", description="GPU puzzles on a SIMT simulator.")
    parser.add_argument("--debug", action="store_true", help="show internal tracebacks (for bug reports)")
    parser.set_defaults(command=None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("list", help="list the puzzles and your stars")
    p.add_argument("--json", action="store_true", help="print a JSON document")
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("check", help="check a solution (yours, a file, or the reference)")
    p.add_argument("puzzle", nargs="?", help="puzzle number or slug")
    p.add_argument("--all", action="store_true", help="check every puzzle")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--file", type=Path, help="check this file instead of your workspace file")
    which.add_argument("--reference", action="store_true", help="check the reference solution")
    p.add_argument("--seed", type=_seed, help="replay a check: draw the random cases from this seed")
    p.add_argument("--ptx", action=argparse.BooleanOptionalAction, default=None,
                   help="also compile each kernel to PTX with numba-cuda (default: when its compiler is "
                        "installed)")
    p.add_argument("--max-steps", type=_steps, default=None, metavar="N",
                   help=f"the step budget of each launch, in steps of work (default {checker.MAX_STEPS:,}): "
                        "for a kernel meant to do more")
    p.add_argument("--json", action="store_true", help="print a JSON document")
    p.set_defaults(handler=cmd_check)

    for name, handler, text in (("show", cmd_show, "show a puzzle: task, constraints, stars, your file"),
                                ("hint", cmd_hint, "reveal the next hint"),
                                ("path", cmd_path, "print your file's path (created from the starter)")):
        p = sub.add_parser(name, help=text)
        p.add_argument("puzzle", help="puzzle number or slug")
        p.set_defaults(handler=handler)

    p = sub.add_parser("solution", help="show the reference solution (needs --yes)")
    p.add_argument("puzzle", help="puzzle number or slug")
    p.add_argument("--yes", action="store_true", help="yes, show it (it is recorded in your progress)")
    p.set_defaults(handler=cmd_solution)
    _add_graduate(sub)
    p = sub.add_parser("triton", help="print the Triton program a solution becomes (graduate mode's compiler)")
    from .graduate.triton_show import add_arguments as triton_arguments

    triton_arguments(p)
    p.set_defaults(handler=cmd_triton)
    return parser


def _add_graduate(sub) -> None:
    """``graduate``: the same files on a real NVIDIA GPU (puzzles/graduate/; numba-cuda only, no Textual)."""
    from .graduate.cli import add_arguments

    p = sub.add_parser("graduate", help="run solutions on a real NVIDIA GPU: correct?, time, GB/s, vs gpusim")
    add_arguments(p)
    p.set_defaults(handler=cmd_graduate)


def cmd_graduate(args: argparse.Namespace) -> int:
    from .graduate.cli import run_command

    return run_command(args)


def cmd_triton(args: argparse.Namespace) -> int:
    from .graduate.triton_show import run

    return run(args)


def cmd_list(args: argparse.Namespace) -> int:
    puzzles = registry.all_puzzles()
    prog = _load_progress()
    if args.json:
        rows = [{
            "number": p.number, "slug": p.slug, "title": p.title, "chapter": p.chapter,
            "difficulty": p.difficulty, "stars": prog.stars(p.slug), "max_stars": checker.max_stars(p),
            "attempts": prog.puzzles[p.slug].attempts if p.slug in prog.puzzles else 0,
            "solved": bool(prog.puzzles.get(p.slug) and prog.puzzles[p.slug].solved_at),
        } for p in puzzles]
        _print_json({"schema": SCHEMA, "puzzles": rows})
    else:
        print(render.puzzle_list(puzzles, prog))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    if args.all:
        if args.puzzle or args.file:
            raise UsageError("`check --all` checks every puzzle: give no puzzle and no --file")
        return _check_all(args.reference, args.json, args.seed, args.ptx, args.max_steps)
    if not args.puzzle:
        raise UsageError("which puzzle? `gpu-puzzles check PUZZLE` (or `check --all`)")
    puzzle = registry.get(args.puzzle)
    if args.file is not None:
        path = args.file.expanduser()
        if not path.is_file():
            raise UsageError(f"no such file: {path}")
    elif args.reference:
        path = workspace.reference_path(puzzle)
        if not path.is_file():
            raise workspace.WorkspaceError(f"puzzle {puzzle.number} has no reference solution ({path})")
    else:
        path = workspace.ensure_starter(puzzle)
    result = checker.check_file(puzzle, path, seed=args.seed, ptx=args.ptx, max_steps=args.max_steps)
    if not args.reference:
        prog = _load_progress()
        checker.record_reference_use(puzzle, result, prog)
        _warn(progress.record_check(puzzle, result, prog).warnings)
    if args.json:
        _print_json(_located(result.to_dict()))
    else:
        print(render.check_report(result, puzzle.title))
        budget = _timed_out(result)
        if budget:
            print(f"\nA check stops a launch after {budget:,} steps of work. If your kernel is meant to do more, "
                  f"give it a larger budget: gpu-puzzles check {puzzle.number} --max-steps {2 * budget}")
        if args.debug:
            for text in result.debug:
                print(text, file=sys.stderr)
    return 0 if result.passed else 1


def _timed_out(result) -> int:
    """The step budget a launch of ``result`` ran out of (0: none did)."""
    for failure in result.failures:
        if isinstance(failure.fault, KernelTimeout):
            return failure.fault.max_steps or checker.MAX_STEPS
    return 0


def _steps(text: str) -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""), 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a step budget is a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("a step budget is at least 1")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed is a whole number, not {text!r}") from None
    if not 0 <= value < 2 ** 63:
        raise argparse.ArgumentTypeError("a seed is between 0 and 2**63 - 1")
    return value


def _check_all(reference: bool, as_json: bool, seed: int | None = None, ptx: bool | None = None,
               max_steps: int | None = None) -> int:
    prog = None if reference else _load_progress()
    rows, passed = [], 0
    for puzzle in registry.all_puzzles():
        path = workspace.reference_path(puzzle) if reference else workspace.workspace_path(puzzle)
        result, status = None, "not started"
        if reference and not path.is_file():
            status = "no reference solution"
        elif path.is_file():
            result = checker.check_file(puzzle, path, seed=seed, ptx=ptx, max_steps=max_steps)
            status = "pass" if result.passed else "fail"
            passed += result.passed
            if prog is not None:
                checker.record_reference_use(puzzle, result, prog)
                progress.record_check(puzzle, result, prog)
        rows.append((puzzle, status, result))
        if not as_json:
            print(render.check_line(puzzle.number, puzzle.slug, status, result), flush=True)
    if prog is not None:
        _warn(prog.warnings)
    if as_json:
        results = [{"puzzle": p.slug, "number": p.number, "status": status,
                    "result": _located(r.to_dict()) if r is not None else None} for p, status, r in rows]
        _print_json({"schema": SCHEMA, "reference": reference, "passed": passed, "total": len(rows),
                     "results": results})
    else:
        print(f"\n{passed} of {len(rows)} puzzles pass.")
    return 0 if rows and passed == len(rows) else 1


def cmd_show(args: argparse.Namespace) -> int:
    puzzle = registry.get(args.puzzle)
    print(render.puzzle_page(puzzle, _load_progress(), workspace.workspace_path(puzzle)))
    return 0


def cmd_hint(args: argparse.Namespace) -> int:
    puzzle = registry.get(args.puzzle)
    if not puzzle.hints:
        print(f"Puzzle {puzzle.number} has no hints.")
        return 0
    prog = _load_progress()
    revealed = progress.reveal_hint(puzzle, prog)
    _warn(prog.warnings)
    if revealed is None:
        print(f"All {len(puzzle.hints)} hints are already revealed:")
        for i, hint in enumerate(puzzle.hints, 1):
            print(f"  {i}. {hint}")
    else:
        number, text = revealed
        print(f"Hint {number} of {len(puzzle.hints)}: {text}")
    return 0


def cmd_solution(args: argparse.Namespace) -> int:
    puzzle = registry.get(args.puzzle)
    if not args.yes:
        print(f"This shows the reference solution of puzzle {puzzle.number} and records that you saw it.\n"
              f"To go ahead: gpu-puzzles solution {puzzle.slug} --yes")
        return 2
    prog = _load_progress()
    text = progress.reveal_solution(puzzle, prog)
    _warn(prog.warnings)
    print(text.rstrip("\n"))
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    print(workspace.ensure_starter(registry.get(args.puzzle)))
    return 0


def _no_command() -> int:
    """Start the TUI in a terminal when it is installed; otherwise print the list and how to play."""
    if sys.stdout.isatty() and sys.stdin.isatty():
        run = _tui_entry()
        if run is not None:
            status = run()
            return status if isinstance(status, int) else 0
    print(render.puzzle_list(registry.all_puzzles(), _load_progress()))
    print("\nTo play: `gpu-puzzles show 1`, edit the file `gpu-puzzles path 1` prints, then "
          "`gpu-puzzles check 1`.")
    return 0


def _tui_entry():
    """``tui.app.run`` if the TUI is there and imports; None (with a note if it is broken) otherwise."""
    import importlib.util

    try:
        if importlib.util.find_spec("tui.app") is None:
            return None
    except ImportError:
        return None
    try:
        from tui.app import run
    except Exception as e:
        _error(f"the terminal UI could not start ({type(e).__name__}: {e}); here is the list instead")
        return None
    return run


def _load_progress() -> progress.Progress:
    prog = progress.load_progress()
    _warn(prog.warnings)
    prog.warnings.clear()
    return prog


def _warn(warnings: list[str]) -> None:
    for text in warnings:
        print(f"gpu-puzzles: warning: {text}", file=sys.stderr)
    warnings.clear()


def _error(text: str) -> None:
    print(f"gpu-puzzles: {text}", file=sys.stderr)


def _located(doc: dict) -> dict:
    """Every failure of a check's JSON names its file and line: a fault's come from the fault itself."""
    failures = list(doc.get("failures", []))
    for case in doc.get("cases", []):
        failures += case.get("failures", [])
    for failure in failures:
        fault = failure.get("fault") or {}
        if not failure.get("file") and fault.get("file"):
            failure["file"] = fault["file"]
        if not failure.get("line") and fault.get("line"):
            failure["line"] = fault["line"]
    return doc


def _print_json(doc: dict) -> None:
    print(json.dumps(_json_safe(doc), indent=2, ensure_ascii=False, allow_nan=False))


def _json_safe(value):
    """Strict JSON: non-finite floats become "nan" / "inf" / "-inf" strings."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


if __name__ == "__main__":
    sys.exit(main())
