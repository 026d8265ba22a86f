"""``gpu-puzzles graduate --devices N ...`` (and ``--dry-run``, ``--same-gpu``): the command line of the
multi-GPU run. ``add_arguments`` adds its options to graduate's parser; ``wanted`` says whether a parsed
command asks for it; ``run_command`` runs it (through ``launcher.run``) and prints one table.

Exit status as graduate's: 0 when every row is correct, 1 when one is not or nothing could run (fewer GPUs
than asked for, no torch), 2 for a usage error (raised as ``Usage`` for graduate's CLI to print).
"""

from __future__ import annotations

import argparse
import json
import sys

from .environment import NO_TORCH
from .tasks import DEFAULT_BENCH_ELEMENTS, DEFAULT_SIZES, DRY_RUN_BENCH_ELEMENTS, DRY_RUN_SIZES, parse_sizes


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("several GPUs (chapter 10's multi-device puzzles)")
    g.add_argument("--devices", type=_count, metavar="N",
                   help="one rank process per GPU, N GPUs, peers' arrays exchanged through torch.distributed "
                        "(NCCL); docs/multi-gpu.md")
    g.add_argument("--dry-run", action="store_true",
                   help="the same on the CPU: gloo between the rank processes, kernels on gpusim (default 2)")
    g.add_argument("--same-gpu", action="store_true",
                   help="every rank process on GPU 0, gloo staged through the host (a one-GPU smoke test; NCCL "
                        "refuses two ranks on one GPU)")
    g.add_argument("--sizes", type=_sizes, metavar="SPEC",
                   help="S of the collectives' benchmark cases, bytes per rank: 2^20..2^28 (the default; every "
                        "power of two between), or a list: 1MiB,64MiB (dry run: 2^12..2^16 by 4)")
    g.add_argument("--iters", type=_count0, default=20, help="timed iterations per benchmark case (default 20)")
    g.add_argument("--warmup", type=_count0, default=5, help="warm-up iterations (default 5)")
    g.add_argument("--no-cases", action="store_true", help="only the benchmark cases, not the puzzles' own cases")
    g.add_argument("--plan-jobs", type=_count, metavar="N", help="gpusim planning jobs at once (default: cores - 3)")
    g.add_argument("--plan-memory", type=float, metavar="GIB",
                   help="memory the planning jobs may use (default: 3/4 of what is free, less 6 GiB)")


def wanted(args: argparse.Namespace) -> bool:
    return args.devices is not None or args.dry_run or args.same_gpu


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _count0(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def _sizes(text: str) -> list[int]:
    try:
        return parse_sizes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def run_command(args: argparse.Namespace, prog: str, usage_error) -> int:
    """Run the multi-GPU graduate command; ``usage_error`` is the exception class graduate's CLI prints."""
    from .launcher import Options, run

    if args.dry_run and args.same_gpu:
        raise usage_error("--dry-run runs on the CPU and --same-gpu on one GPU: give one of them")
    if args.backend != "numba":
        raise usage_error("--devices runs the numba-cuda back end only (give --backend numba, the default)")
    one_gpu = (("--interpret", args.interpret), ("--ncu", args.ncu), ("--estimates-only", args.estimates_only))
    for flag, given in one_gpu:
        if given:
            raise usage_error(f"{flag} is for one GPU; it does not go with --devices, --dry-run or --same-gpu")
    mode = "dry-run" if args.dry_run else "same-gpu" if args.same_gpu else "nccl"
    devices = args.devices if args.devices is not None else 2
    items = _multi_device_items(args, usage_error)
    sizes = args.sizes or list(DRY_RUN_SIZES if mode == "dry-run" else DEFAULT_SIZES)
    bench = args.size or (DRY_RUN_BENCH_ELEMENTS if mode == "dry-run" else DEFAULT_BENCH_ELEMENTS)
    opts = Options(items=items, devices=devices, mode=mode, sizes=sizes, bench_elements=bench, warmup=args.warmup,
                   iters=args.iters, cases=not args.no_cases, out=args.out, task_timeout_s=args.timeout,
                   plan_jobs=args.plan_jobs,
                   plan_memory=int(args.plan_memory * 2**30) if args.plan_memory else None,
                   progress=lambda line: print(line, file=sys.stderr, flush=True))
    outcome = run(opts)
    if outcome.unavailable:
        hint = "" if mode == "dry-run" or outcome.unavailable.startswith(NO_TORCH) else \
            "; `--dry-run` runs the same on the CPU (gloo, gpusim)"
        print(f"{prog}: {outcome.unavailable}{hint}", file=sys.stderr)
        return 1
    if args.json:
        from ..run import _json_safe

        print(json.dumps(_json_safe(outcome.doc), indent=1))
    else:
        print(outcome.text)
    return 0 if outcome.ok else 1


def _multi_device_items(args: argparse.Namespace, usage_error):
    from ..cli import _items

    items = _items(args)
    multi = [(p, path) for p, path in items if _is_multi_device(p)]
    if args.all:
        return multi
    single = [p for p, _ in items if not _is_multi_device(p)]
    if single:
        names = ", ".join(f"{p.number} {p.slug}" for p in single)
        raise usage_error(f"{names}: not a multi-device puzzle; --devices runs chapter 10's puzzles (64-71)")
    return multi


def _is_multi_device(puzzle) -> bool:
    return puzzle.chapter == 10
