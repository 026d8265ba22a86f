"""The headless checker: run a solution through gpusim on fresh test cases of a puzzle and judge it.

The file runs in a sandboxed child (``puzzles.judge.sandbox``); its kernels are rebuilt here from its source
(``puzzles.judge.rebuild``), so this process alone makes the inputs, runs the simulator, compares with the
spec and applies the rules, and nothing the file does at import reaches any of them.

For each ``Case`` of ``puzzle.make_cases(rng)`` — ``rng`` seeded from a fresh seed each check, shown in the
result, so ``seed=`` replays a check — copy its buffers, run each ``LaunchStep`` in order on the copies, stop
the case at the first fault, compare the outputs with ``puzzle.spec`` applied to the untouched buffers (and
keep both, capped, in ``CaseResult.outputs`` for the TUI), check that every other buffer (the inputs) is bit
for bit what it was, measure ``RunStats`` and check the constraints. A solution passes when every case
passes; it earns ★ for passing and each further ``Star`` tier, in order, whose rules hold on every case.
Where numba-cuda's compiler is installed, each kernel is also compiled to sm_90 PTX (``puzzles.judge.ptx``)
and what numba-cuda rejects fails the check.

Whatever the file does, ``check_source`` and ``check_file`` return a ``CheckResult``: a compile error, a
fault, a bad launch or a bug in the simulator or the puzzle becomes a ``Failure`` with a message, never an
exception. For the TUI, ``puzzles.judge.worker.JudgeWorker`` runs the same check in a warm process.
"""

from __future__ import annotations

import contextlib
import copy
import io
import secrets
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

import gpusim
from gpusim.faults import KernelCompileError, KernelFault, KernelTimeout, LaunchError

from . import multidevice, precision
from .compare import PuzzleBug, changed_input, first_mismatch
from .judge import ptx as _ptx
from .loader import Solution, load_source, read_source
from .model import Case, Puzzle, Rule, RunStats
from .output_values import output_values
from .results import STOPPING_KINDS, CaseResult, CheckResult, Failure
from .stats import measure

__all__ = ["check_file", "check_source", "max_stars", "new_seed", "case_generator", "record_reference_use",
           "CheckResult", "CaseResult", "Failure"]

# Steps of work one launch of a check may do before gpusim stops it with a KernelTimeout (a step: one thread
# doing one simple operation; about a nanosecond of simulation). The most any reference solution's launch
# needs is about 1.1 billion (the 2-D register-tiled matmuls); five billion leaves a slower solution room
# and still stops an endless loop within seconds. `gpu-puzzles check --max-steps N` raises it for one check.
# After a timeout the remaining cases are not run: they would only time out again.
MAX_STEPS = 5_000_000_000
SEED_BITS = 32
CASE_SALT = 0x6A756467   # "judg"


def max_stars(puzzle: Puzzle) -> int:
    """The most stars a puzzle gives: its highest ``Star`` tier, or 1 when it has none."""
    return max((star.stars for star in puzzle.stars), default=1)


def case_generator(seed: int) -> np.random.Generator:
    """The generator a check with ``seed`` gives ``make_cases``. Salted, so that no check seed reproduces a
    puzzle's fixed cases (``make_cases(None)``, which a file could read and bake in)."""
    return np.random.default_rng([CASE_SALT, int(seed)])


def new_seed() -> int:
    """A fresh seed for a check's random cases."""
    return secrets.randbits(SEED_BITS)


def check_file(puzzle: Puzzle, path: str | Path, *, seed: int | None = None, trace: bool = False,
               capture_output: bool = True, ptx: bool | None = None, max_steps: int | None = None) -> CheckResult:
    """Check the solution in the file at ``path`` against ``puzzle`` (see ``check_source``)."""
    path = Path(path).expanduser()
    try:
        filename = str(path.resolve())
    except (OSError, RuntimeError):
        filename = str(path)
    started = time.perf_counter()
    try:
        source = read_source(Path(filename))
    except KernelCompileError as e:
        result = _new_result(puzzle, filename, seed)
        result.failures.append(_compile_failure(e))
        _judge(puzzle, result)
        result.seconds = time.perf_counter() - started
        return result
    return check_source(puzzle, source, filename, seed=seed, trace=trace, capture_output=capture_output, ptx=ptx,
                        max_steps=max_steps)


def check_source(puzzle: Puzzle, source: str, filename: str, *, seed: int | None = None, trace: bool = False,
                 capture_output: bool = True, ptx: bool | None = None, max_steps: int | None = None) -> CheckResult:
    """Check ``source``, the text of a solution file named ``filename`` (exactly this text: the TUI passes its
    editor's), against ``puzzle``.

    ``seed`` replays a check (None draws a fresh one; ``CheckResult.seed`` says which was used). ``trace`` asks
    gpusim for the barrier-phase trace of each launch (kept in ``CaseResult.reports``, for the TUI).
    ``capture_output`` keeps what the kernels print out of the terminal (in ``CheckResult.stdout``, with what
    the file printed while it loaded). ``ptx``: compile each kernel with numba-cuda as well — None does it
    when numba-cuda's compiler is installed. ``max_steps``: the step budget of each launch (None: ``MAX_STEPS``).
    """
    started = time.perf_counter()
    result = _new_result(puzzle, filename, seed)
    sink = io.StringIO()
    redirect = contextlib.redirect_stdout(sink) if capture_output else contextlib.nullcontext()
    try:
        with redirect:
            _check(puzzle, source, filename, result, trace, ptx, max_steps or MAX_STEPS)
    except Exception as e:  # last line of defence: a bug in the checker itself
        result.failures.append(_internal_error("the checker", e, result))
    result.stdout += sink.getvalue()
    _judge(puzzle, result)
    result.seconds = time.perf_counter() - started
    return result


def record_reference_use(puzzle: Puzzle, result: CheckResult, prog: Any) -> None:
    """A check whose file used the reference solution counts as having revealed it: mark it in ``prog`` (a
    ``puzzles.progress.Progress``, saved by ``progress.reveal_solution``). Call it before ``record_check``."""
    if not result.reference_use:
        return
    from . import progress, workspace

    try:
        progress.reveal_solution(puzzle, prog)
    except workspace.WorkspaceError:     # the game ships no reference for this puzzle: nothing to reveal
        pass


def _new_result(puzzle: Puzzle, filename: str, seed: int | None) -> CheckResult:
    return CheckResult(puzzle=puzzle.slug, number=puzzle.number, file=filename, max_stars=max_stars(puzzle),
                       seed=new_seed() if seed is None else int(seed))


def _check(puzzle: Puzzle, source: str, filename: str, result: CheckResult, trace: bool,
           ptx: bool | None, max_steps: int) -> None:
    from . import workspace

    try:
        solution = load_source(source, filename, puzzle.kernels, solutions_dir=workspace.SOLUTIONS_DIR)
    except KernelCompileError as e:
        result.stdout = getattr(e, "stdout", "") or ""
        _note_reference(result, getattr(e, "reference_use", []))
        result.failures.append(_compile_failure(e))
        return
    result.stdout = solution.stdout
    _note_reference(result, solution.reference_use)
    try:
        cases = tuple(puzzle.make_cases(case_generator(result.seed)))
    except Exception as e:
        result.failures.append(_puzzle_bug(puzzle, f"make_cases() failed: {type(e).__name__}: {e}"))
        return
    if not cases:
        result.failures.append(_puzzle_bug(puzzle, "it has no test cases"))
        return
    signature_failures = _ptx.check_signatures(solution.rebuilt, cases, filename)
    if signature_failures:
        result.failures.extend(signature_failures)
        return
    result.cases = [CaseResult(name=case.name, note=case.note) for case in cases]
    for case, outcome in zip(cases, result.cases):
        started = time.perf_counter()
        _run_case(puzzle, solution, case, outcome, trace, result, max_steps)
        outcome.seconds = time.perf_counter() - started
        for failure in outcome.failures:
            if not _already_reported(result, failure):
                result.failures.append(failure)
        timed_out = any(isinstance(f, KernelTimeout) for report in outcome.reports for f in report.faults)
        if timed_out or any(f.kind in STOPPING_KINDS for f in outcome.failures):
            break   # a launch that ran out of steps (even behind another fault) would only do so again
    if _ptx.wanted(ptx):
        for failure in _ptx.compile_kernels(solution.rebuilt, cases, puzzle.kernels, filename):
            result.failures.append(failure)
        result.ptx_checked = True
    elif ptx:
        result.notes.append("the kernels were not compiled to PTX: numba-cuda's compiler is not installed "
                            "(pip install \"gpu-puzzles[ptx]\")")


def _note_reference(result: CheckResult, uses: list[str]) -> None:
    if uses:
        result.reference_use = list(uses)
        result.notes.append("your file uses the reference solution (" + "; ".join(uses) + "): this check "
                            "counts as having seen it")


def _compile_failure(e: KernelCompileError) -> Failure:
    return Failure("compile", str(e), filename=getattr(e, "filename", "") or "", lineno=getattr(e, "lineno", 0) or 0)


def _run_case(puzzle: Puzzle, solution: Solution, case: Case, outcome: CaseResult, trace: bool,
              result: CheckResult, max_steps: int) -> None:
    """Run one case and record its failures on ``outcome``; every exception becomes a ``Failure``."""
    try:
        _launch_all(puzzle, solution, case, outcome, trace, max_steps)
    except KernelCompileError as e:
        outcome.failures.append(Failure("compile", str(e), case.name, filename=getattr(e, "filename", ""),
                                        lineno=getattr(e, "lineno", 0) or 0))
    except LaunchError as e:
        outcome.failures.append(Failure("error", f"the kernel could not be launched: {e}", case.name))
    except KernelFault as fault:  # gpusim collects faults in the report; accept a raised one all the same
        outcome.failures.append(Failure("fault", fault.message, case.name, fault=fault))
    except PuzzleBug as e:
        outcome.failures.append(_puzzle_bug(puzzle, str(e), case.name))
    except RecursionError as e:
        outcome.failures.append(Failure("error", f"the simulator ran out of stack: {e}", case.name))
    except Exception as e:
        outcome.failures.append(_internal_error("the simulator", e, result, case.name))
    outcome.status = "fail" if outcome.failures else "pass"


def _launch_all(puzzle: Puzzle, solution: Solution, case: Case, outcome: CaseResult, trace: bool,
                max_steps: int) -> None:
    buffers = copy.deepcopy(dict(case.buffers))
    before = copy.deepcopy(dict(case.buffers))
    system = multidevice.build_system(case, buffers) if case.devices is not None else None
    for number, step in enumerate(case.steps, 1):
        if system is not None and multidevice.synchronize(system, step):
            continue
        kernel = solution.kernels.get(step.kernel)
        if kernel is None:
            raise PuzzleBug(f"case {case.name!r} launches {step.kernel!r}, not one of the puzzle's kernels")
        unknown = [a for a in step.args if not isinstance(a, int) and a not in buffers]
        if unknown:
            raise PuzzleBug(f"case {case.name!r} passes unknown buffers {unknown}")
        args = step.arg_values(buffers)
        if system is None:
            report = gpusim.launch(kernel, step.grid, step.block, args, shared_mem=step.shared_mem, trace=trace,
                                   max_steps=max_steps)
        else:   # several devices (chapter 10): the launch runs on its device of the case's System
            report = system.launch(step.device, kernel, step.grid, step.block, args, step.shared_mem, trace=trace,
                                   max_steps=max_steps)
        outcome.reports.append(report)
        outcome.float64_lines.append(_float64_lines(kernel, args, report) if trace else None)
        if report.faults:
            outcome.failures.append(_fault_failure(case, step, number, report))
            with contextlib.suppress(PuzzleBug):    # what the outputs held when it stopped, for the TUI
                _keep_outputs(puzzle, case, buffers, _spec(puzzle, before), outcome)
            return
    expected = _spec(puzzle, before)
    mismatch = first_mismatch(multidevice.case_outputs(puzzle, case), buffers, expected, before, puzzle.rtol,
                              puzzle.atol, written=_written(outcome.reports, case, solution))
    _keep_outputs(puzzle, case, buffers, expected, outcome)
    if mismatch is not None:
        outcome.failures.append(Failure("mismatch", mismatch.message, case.name, detail=mismatch.to_dict()))
    kept = tuple(puzzle.outputs) + tuple(getattr(puzzle, "scratch", ()) or ())
    changed = changed_input(multidevice.buffer_names(kept, buffers), buffers, before)
    if changed is not None:
        outcome.failures.append(Failure("mismatch", changed.message, case.name, detail=changed.to_dict()))
    measured = measure(outcome.reports)
    stats = measured.stats if system is None else multidevice.with_devices(measured.stats, case, system,
                                                                            outcome.reports)
    outcome.stats, outcome.stats_complete = stats, measured.complete
    outcome.unmeasured = list(measured.missing)
    for rule in puzzle.constraints:
        why = _apply(rule, stats)
        if why is not None:
            outcome.failures.append(Failure(
                "constraint", f"constraint not met ({rule.description}): {why}", case.name,
                detail={"rule": rule.description, "reason": why}))


def _float64_lines(kernel: Any, args: tuple, report: Any) -> Any:
    """For the TUI's roofline: the lines that promote float32 work to float64, when the launch did such work."""
    if precision.float64_work(report) is None:
        return None
    return precision.float64_lines(kernel, args)


def _keep_outputs(puzzle: Puzzle, case: Case, buffers: dict[str, Any], expected: dict[str, Any],
                  outcome: CaseResult) -> None:
    """Each output as the kernel left it against the spec's values, capped (``output_values``)."""
    outcome.outputs = {name: output_values(name, buffers[name], expected[name], puzzle.rtol, puzzle.atol)
                       for name in multidevice.case_outputs(puzzle, case) if name in buffers and name in expected}


def _fault_failure(case: Case, step: Any, number: int, report: Any) -> Failure:
    """The first fault of a launch, naming the others (and, with several devices, the launch's device)."""
    first, others = report.faults[0], report.faults[1:]
    message = first.message
    if others:
        named = ", ".join(f"{type(f).__name__} at line {f.lineno}" for f in others[:3])
        message += f"\n  also in this launch: {named}" + (" and more" if len(others) > 3 else "")
    detail = {"launch": number, "kernel": step.kernel, "faults": [multidevice.fault_kind(f) for f in report.faults]}
    if case.devices is not None:
        detail.update(device=step.device, between_devices=multidevice.between_devices(report.faults))
        message = f"on device {step.device}: " + message
    return Failure("fault", message, case.name, fault=first, detail=detail)


def _written(reports: list[Any], case: Case, solution: Solution):
    """``written(name)`` -> per-element write counts of buffer ``name`` over every launch of the case, or None
    where the simulator did not count them."""
    def written(name: str) -> np.ndarray | None:
        total = None
        for report, step in zip(reports, case.launches):
            if name not in step.args or report.counts is None:
                continue
            code = getattr(solution.kernels.get(step.kernel), "__code__", None)
            param = code.co_varnames[step.args.index(name)] if code is not None else name
            try:
                counts = np.asarray(report.counts.element_writes(param))
            except Exception:
                return None
            total = counts if total is None else total + counts
        return total

    return written


def _spec(puzzle: Puzzle, before: dict[str, Any]) -> dict[str, Any]:
    try:
        expected = puzzle.spec(**copy.deepcopy(before))
    except Exception as e:
        raise PuzzleBug(f"its spec failed: {type(e).__name__}: {e}") from None
    if not hasattr(expected, "keys"):
        raise PuzzleBug(f"its spec returned a {type(expected).__name__}, not a mapping of outputs")
    return dict(expected)


def _apply(rule: Rule, stats: RunStats) -> str | None:
    try:
        return rule.check(stats)
    except Exception as e:
        raise PuzzleBug(f"its rule {rule.description!r} failed: {type(e).__name__}: {e}") from None


def _judge(puzzle: Puzzle, result: CheckResult) -> None:
    """Decide pass or fail, the stars, and what the next star needs."""
    result.passed = bool(result.cases) and not result.failures and all(c.passed for c in result.cases)
    if not result.passed:
        result.stars = 0
        result.next_star = "★ needs every test case to pass and every constraint to hold"
        return
    result.stars = 1
    missing = sorted({m for c in result.cases for m in c.unmeasured})
    if missing:
        result.notes.append("some numbers were not measured (" + "; ".join(missing) + "): constraints on "
                            "them were not judged and stars beyond the first cannot be awarded")
    for tier in sorted(puzzle.stars, key=lambda s: s.stars):
        mark = "★" * tier.stars
        if missing:
            result.next_star = f"{mark} {tier.description}: needs measurements the simulator did not make"
            return
        try:
            why = _first_violation(tier.rules, result.cases)
        except PuzzleBug as e:
            result.failures.append(_puzzle_bug(puzzle, str(e)))
            result.passed, result.stars = False, 0
            return
        if why is not None:
            result.next_star = f"{mark} {tier.description}: {why}"
            return
        result.stars = tier.stars
    result.next_star = None


def _first_violation(rules: tuple[Rule, ...], cases: list[CaseResult]) -> str | None:
    for case in cases:
        for rule in rules:
            why = _apply(rule, case.stats)
            if why is not None:
                return f"{why} (case {case.name!r})"
    return None


def _already_reported(result: CheckResult, failure: Failure) -> bool:
    """A constraint broken in several cases is listed once in ``CheckResult.failures`` (each case has it)."""
    if failure.kind != "constraint":
        return False
    return any(f.kind == "constraint" and f.detail.get("rule") == failure.detail.get("rule")
               for f in result.failures)


def _puzzle_bug(puzzle: Puzzle, what: str, case: str | None = None) -> Failure:
    return Failure("error", f"the puzzle {puzzle.slug!r} has a bug (not your kernel): {what}", case)


def _internal_error(where: str, error: Exception, result: CheckResult, case: str | None = None) -> Failure:
    result.debug.append(traceback.format_exc())
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    message = (f"{where} failed: this is a bug in gpu-puzzles, not in your kernel "
               f"({type(error).__name__}{': ' + text if text else ''})")
    return Failure("error", message, case)
