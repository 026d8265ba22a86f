"""The command line of graduate mode: ``gpu-puzzles graduate ...`` and ``python3 -m puzzles.graduate ...``.

Both take the same arguments (``add_arguments``) and end in ``run_command``. This module imports only the
standard library and the puzzle registry at load time, so that ``gpu-puzzles --help`` stays fast and the
GPU machine (no Textual, no platformdirs) can run it from the repository without installing anything.

Exit status: 0 when every row is correct, 1 when one is not or nothing could run (no GPU), 2 for a usage
error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

PROG = "gpu-puzzles graduate"


class Usage(Exception):
    pass


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .run import DEFAULT_CACHE, DEFAULT_NCU_SIZE, DEFAULT_SIZE

    p.add_argument("puzzles", nargs="*", metavar="PUZZLE", help="puzzle numbers or slugs")
    p.add_argument("--all", action="store_true", help="every puzzle")
    p.add_argument("--backend", choices=("numba", "triton", "all"), default="numba",
                   help="numba-cuda (default), the SIMT-to-Triton compiler, or both")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--reference", action="store_true", help="run the reference solutions")
    which.add_argument("--file", type=Path, help="run this file (one puzzle)")
    p.add_argument("--interpret", action="store_true",
                   help="no GPU: run the Triton translation through TRITON_INTERPRET=1 on the CPU (the Triton "
                        "back end only; the cases are checked, nothing is timed)")
    p.add_argument("--ncu", action="store_true", help="also profile the launches with Nsight Compute and "
                   "print gpusim's metrics beside ncu's")
    p.add_argument("--size", type=_positive, default=None,
                   help=f"elements of work of the benchmark launch (default {DEFAULT_SIZE:,} = 2^26; with "
                        "--devices 2^20, for the puzzles that are not collectives)")
    p.add_argument("--json", action="store_true", help="print a JSON document instead of the table")
    p.add_argument("--out", type=Path, help="also write graduate.md, graduate.json, graduate.txt, "
                   "estimates.json (and ncu.csv) into this folder; the first three after every finished row")
    p.add_argument("--resume", action="store_true",
                   help="with --out: keep the rows (and ncu launches) already in DIR/graduate.json for the same "
                        "solution file, puzzle, back end and size, and run only the rest")
    p.add_argument("--ncu-size", type=_positive, default=DEFAULT_NCU_SIZE,
                   help=f"elements of work of the launches ncu profiles (default {DEFAULT_NCU_SIZE:,} = 2^20)")
    p.add_argument("--ncu-timeout", type=float, default=240.0, metavar="S",
                   help="seconds one ncu run (a batch of ten puzzles) may take (default 240)")
    p.add_argument("--ncu-from", type=Path, metavar="DIR",
                   help="no GPU: print the ncu comparison again from what an --ncu --out run left in DIR")
    est = p.add_mutually_exclusive_group()
    est.add_argument("--estimates", type=Path, default=DEFAULT_CACHE,
                     help="the simulator's estimate cache (default benchmarks/gpu/estimates.json)")
    est.add_argument("--no-estimates", action="store_true", help="skip the simulator's estimates")
    p.add_argument("--estimate-budget", type=float, default=300.0, metavar="S",
                   help="seconds from the start after which unfinished simulator jobs are cut off (default 300)")
    p.add_argument("--jobs", type=_positive, help="simulator jobs at once (default: the cores less 3, as "
                   "memory allows)")
    p.add_argument("--timeout", type=float, default=180.0, metavar="S",
                   help="seconds one puzzle may take on the GPU before it is stopped (default 180)")
    p.add_argument("--estimates-only", action="store_true",
                   help="no GPU: only fill the estimate cache (for --gpu), e.g. before a GPU run")
    p.add_argument("--gpu", default="H200", help="with --estimates-only: the GPU to estimate for (default H200)")
    from .multigpu.command import add_arguments as add_multigpu_arguments

    add_multigpu_arguments(p)


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def run_command(args: argparse.Namespace) -> int:
    import signal

    def _terminated(signum, frame):   # a time limit's SIGTERM: stop the worker and the jobs on the way out
        raise KeyboardInterrupt

    try:
        old = signal.signal(signal.SIGTERM, _terminated)
    except ValueError:                # not the main thread (the app): leave the signal alone
        old = None
    try:
        return _run(args)
    except Usage as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if getattr(args, "debug", False):
            raise
        print(f"{PROG}: internal error, a bug in graduate mode ({type(e).__name__}: {e}); "
              "`gpu-puzzles --debug graduate ...` shows the traceback", file=sys.stderr)
        return 1
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


def _run(args: argparse.Namespace) -> int:
    from .backend import BACKENDS, NOT_BUILT
    from .multigpu import command as multigpu

    if multigpu.wanted(args):
        return multigpu.run_command(args, PROG, Usage)
    from .run import DEFAULT_SIZE

    args.size = args.size or DEFAULT_SIZE

    built = [name for name, target in BACKENDS.items() if target is not None]
    if args.backend != "all" and BACKENDS[args.backend] is None:
        print(f"{PROG}: {NOT_BUILT[args.backend]}; `--backend numba` runs the numba-cuda back end",
              file=sys.stderr)
        return 1
    if args.interpret and BACKENDS.get("triton") is None:
        print(f"{PROG}: --interpret runs the Triton back end through TRITON_INTERPRET=1, and "
              f"{NOT_BUILT['triton']}", file=sys.stderr)
        return 1
    backends = built if args.backend == "all" else [args.backend]
    if args.interpret:                 # the interpreter runs Triton programs; numba-cuda needs a GPU
        backends = ["triton"]
        if args.ncu or args.estimates_only:
            raise Usage("--interpret runs on the CPU: it takes neither --ncu nor --estimates-only")
    if getattr(args, "resume", False) and args.out is None:
        raise Usage("--resume continues the run whose files are in --out DIR: give --out")
    items = _items(args)
    if args.estimates_only:
        return _estimates_only(args, items)
    from .run import Options, compare_saved, graduate

    if args.ncu_from is not None:
        opts = Options(items=items, backends=[], ncu=True, ncu_size=args.ncu_size,
                       cache=None if args.no_estimates else args.estimates, estimate_budget_s=args.estimate_budget,
                       estimate_jobs=args.jobs, progress=lambda line: print(line, file=sys.stderr, flush=True))
        try:
            print(compare_saved(args.ncu_from, opts))
        except (OSError, ValueError, KeyError) as e:
            raise Usage(f"--ncu-from {args.ncu_from}: {e}") from None
        return 0

    for name in BACKENDS:
        if args.backend == "all" and BACKENDS[name] is None:
            print(f"{PROG}: {name}: {NOT_BUILT[name]}; running {', '.join(backends)}", file=sys.stderr)
    opts = Options(items=items, backends=backends, size=args.size, ncu=args.ncu, ncu_size=args.ncu_size,
                   out=args.out, cache=None if args.no_estimates else args.estimates,
                   estimates=not (args.no_estimates or args.interpret), estimate_budget_s=args.estimate_budget,
                   estimate_jobs=args.jobs, task_timeout_s=args.timeout, interpret=args.interpret,
                   progress=lambda line: print(line, file=sys.stderr, flush=True),
                   resume=getattr(args, "resume", False), ncu_timeout_s=args.ncu_timeout)
    if args.ncu:
        from .ncu import ncu_path

        if ncu_path() is None:
            print(f"{PROG}: --ncu: Nsight Compute (ncu) is not installed here; going on without it",
                  file=sys.stderr)
            opts.ncu = False
    outcome = graduate(opts)
    if outcome.no_gpu:
        hint = "`--interpret` runs the Triton back end on the CPU" if BACKENDS.get("triton") else \
            "`--interpret` will run the Triton back end on the CPU once it is built"
        print(f"{PROG}: {outcome.no_gpu}; {hint}", file=sys.stderr)
        return 1
    if args.json:
        from .run import _json_safe

        print(json.dumps(_json_safe(outcome.doc), indent=1))
    else:
        print(outcome.text)
    return 0 if outcome.ok else 1


def _items(args: argparse.Namespace):
    from .. import registry

    if args.all and args.puzzles:
        raise Usage("give puzzles or --all, not both")
    if not args.all and not args.puzzles:
        raise Usage("which puzzles? `gpu-puzzles graduate PUZZLE...` or `--all`")
    try:
        puzzles = registry.all_puzzles() if args.all else [registry.get(p) for p in args.puzzles]
    except registry.RegistryError as e:      # UnknownPuzzle included
        raise Usage(str(e)) from None
    if args.file is not None:
        if len(puzzles) != 1:
            raise Usage("--file runs one file: give exactly one puzzle")
        path = args.file.expanduser().resolve()
        if not path.is_file():
            raise Usage(f"no such file: {path}")
        return [(puzzles[0], path)]
    from .. import workspace

    if args.reference:
        return [(p, workspace.reference_path(p)) for p in puzzles]
    try:
        paths = [(p, workspace.workspace_path(p)) for p in puzzles]
    except ImportError:
        raise Usage("your workspace folder needs platformdirs (or set GPU_PUZZLES_HOME); "
                    "--reference or --file need neither") from None
    found = [(p, path) for p, path in paths if path.is_file()]
    if not found:
        raise Usage("none of these puzzles has a file in your workspace yet (`gpu-puzzles path N` makes one)")
    for p, path in paths:
        if not path.is_file():
            print(f"{PROG}: puzzle {p.number} has no file in your workspace yet; skipped", file=sys.stderr)
    return found


def _estimates_only(args: argparse.Namespace, items) -> int:
    """Fill the estimate cache on the CPU, for a later GPU run on the ``--gpu`` model."""
    from . import estimates, pool
    from .run import submit_estimates

    try:
        gpu = estimates.gpu_model(args.gpu)
    except KeyError as e:
        raise Usage(str(e)) from None
    if args.no_estimates:
        raise Usage("--estimates-only with --no-estimates has nothing to do")
    cache = estimates.EstimateCache(args.estimates)
    jobs = pool.Pool(max_jobs=args.jobs)
    sizes = [args.size] + ([args.ncu_size] if args.ncu else [])
    submitted = submit_estimates(jobs, cache, items, sizes, gpu, priority_size=args.ncu_size)
    cached = [key for key, job in submitted.items() if job.result is not None and job.result.get("ok")]
    print(f"{PROG}: {len(submitted) - len(cached)} simulator job(s) for {gpu.name}, {len(cached)} already "
          f"cached; at most {jobs.max_jobs} at once within {jobs.memory_budget / 2**30:.1f} GiB", file=sys.stderr)
    for slug, size in cached:
        print(f"  {slug} at {estimates.size_label(size)}: cached, "
              f"{estimates.result_summary(submitted[(slug, size)].result['result'])}")
    failed = 0
    deadline = time.monotonic() + args.estimate_budget
    try:
        while True:
            for job in jobs.take_done():
                failed += not _record(cache, job)
            if not jobs.pending():
                break
            if time.monotonic() >= deadline:   # what has not finished is cut off and said so, as in a GPU run
                for job in jobs.close(f"not finished within --estimate-budget {args.estimate_budget:g} s"):
                    failed += not _record(cache, job)
                break
            time.sleep(0.5)
        for job in jobs.take_done():
            failed += not _record(cache, job)
    finally:
        jobs.close("interrupted")
    return 1 if failed else 0


def _record(cache, job) -> bool:
    from . import estimates

    tag = job.tag
    where = f"  {tag['slug']} at {estimates.size_label(tag['size'])}"
    if job.result and job.result.get("ok"):
        cache.put(tag["key"], job.result["result"])
        cache.save()
        print(f"{where}: {estimates.result_summary(job.result['result'])} (gpusim took {job.seconds:.0f} s)",
              flush=True)
        return True
    print(f"{where}: {(job.result or {}).get('error')}", flush=True)
    return False
