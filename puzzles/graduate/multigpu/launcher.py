"""The multi-GPU run from start to finish: plans on the CPU, rank processes on the GPUs, checks, the table.

``run(options)``, in this process (which never touches a GPU itself):

1. says in one sentence why it cannot run here, if it cannot (``environment.why_not``);
2. sets the multicast-off variables in its own environment (the rank processes inherit them and set them
   again), lists the tasks (``tasks.py``) and starts their plans in CPU jobs beside the GPUs
   (``planjob.PlanPool``: gpusim, memory-budgeted, smallest first);
3. starts the rank processes (``torch.multiprocessing``, start method spawn, one per device:
   ``rank.main``); each takes the tasks in order, waiting for each plan;
4. as plans finish, writes them where the ranks look; as all ranks report a task, checks it
   (``checks.py``); a rank group that dies (a fault, a compile error at the first launch) or hangs past
   ``task_timeout_s`` costs that task and is started again for the tasks left;
5. builds the table (``report.py``) and writes the files into ``out``.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...model import Puzzle
from .. import pool
from . import checks, environment, report
from .plan import Plan
from .planjob import PlanPool, predicted_memory
from .tasks import Task, build_case, make_tasks


@dataclass
class Options:
    items: list[tuple[Puzzle, Path]]
    devices: int = 2
    mode: str = "nccl"                       # environment.MODES
    sizes: list[int] = field(default_factory=list)
    bench_elements: int = 1 << 20
    warmup: int = 5
    iters: int = 20
    cases: bool = True                       # the puzzles' own cases too (not only the benchmark cases)
    out: Path | None = None
    task_timeout_s: float = 180.0
    plan_jobs: int | None = None
    plan_memory: int | None = None           # bytes the planner may use (default: pool's share of free memory)
    progress: Any = None


@dataclass
class Outcome:
    unavailable: str = ""                    # why nothing could run here
    tasks: list[dict] = field(default_factory=list)
    doc: dict = field(default_factory=dict)
    text: str = ""
    markdown: str = ""

    @property
    def ok(self) -> bool:
        return not self.unavailable and bool(self.tasks) and all(t["correct"] for t in self.tasks)


def run(opts: Options) -> Outcome:
    reason = environment.why_not(opts.mode, opts.devices)
    if reason is not None:
        return Outcome(unavailable=reason)
    environment.apply()
    logging.getLogger("torch.multiprocessing.spawn").setLevel(logging.ERROR)   # its SIGTERM notices
    say = opts.progress or (lambda line: None)
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="graduate-multigpu-"))
    for sub in ("plans", "results", "planjobs"):
        (scratch / sub).mkdir()
    tasks = make_tasks(opts.items, opts.devices, opts.sizes, opts.bench_elements, cases=opts.cases)
    puzzles = {p.slug: p for p, _ in opts.items}
    planner = PlanPool(max_jobs=opts.plan_jobs, memory_budget=opts.plan_memory, workdir=scratch / "planjobs")
    group = RankGroup(opts, scratch)
    progress = _Progress(tasks, say)
    plans: dict[str, Plan] = {}
    outcomes: dict[str, dict] = {}
    try:
        group.start(tasks)                          # the ranks import torch and join while the plans start
        _submit_plans(planner, tasks, puzzles)
        say(f"{len(tasks)} tasks on {opts.devices} rank process(es), mode {opts.mode}; planning on up to "
            f"{planner.max_jobs} CPU job(s) within {planner.memory_budget / 2**30:.1f} GiB")
        while group.pending:
            for job in planner.take_done():
                for task, plan in zip(job.tag, _plans_of(job)):
                    plans[task.id] = plan
                    _write_plan(scratch, task.id, plan)
            finished, failed, ended = group.poll(plans)
            for task_id, rank_results in finished:
                task = group.task(task_id)
                outcomes[task_id] = checks.check(puzzles[task.slug], task, plans[task_id], rank_results,
                                                 opts.devices)
                progress.done(task, outcomes[task_id])
            if failed is not None:
                task, message, kind = failed
                doomed = [task] + ([t for t in group.pending if t.slug == task.slug] if kind == "compile" else [])
                for t in doomed:
                    outcomes[t.id] = checks.failure(puzzles[t.slug], t, plans.get(t.id), message)
                    progress.done(t, outcomes[t.id])
                left = [t for t in group.pending if t not in doomed]
                group.stop()
                left = _give_up_on_repeat_faults(left, outcomes, puzzles, plans, progress)
                if left:
                    say(f"  starting the rank processes again for the {len(left)} task(s) left")
                    group.start(left)
            elif ended and group.pending:            # a task's failure ended the group; it is recorded
                left = list(group.pending)
                group.stop()
                left = _give_up_on_repeat_faults(left, outcomes, puzzles, plans, progress)
                if left:
                    say(f"  starting the rank processes again for the {len(left)} task(s) left")
                    group.start(left)
            time.sleep(0.05)
        group.stop()
        hello = group.hello()
        ordered = [outcomes[t.id] for t in tasks if t.id in outcomes]
        doc = report.document(opts, ordered, hello, time.monotonic() - started)
        out = Outcome(tasks=ordered, doc=doc)
        out.text = report.text(doc)
        out.markdown = report.markdown(doc)
        if opts.out is not None:
            _write_files(opts.out, out, scratch)
        return out
    finally:
        group.stop()
        planner.close("the run ended")
        shutil.rmtree(scratch, ignore_errors=True)


class _Progress:
    """One line per benchmark case; for the puzzles' own cases, one line per puzzle (and one per failure)."""

    def __init__(self, tasks: list[Task], say):
        self.say = say
        self.total: dict[str, int] = {}
        for t in tasks:
            if t.kind == "case":
                self.total[t.slug] = self.total.get(t.slug, 0) + 1
        self.done_count: dict[str, int] = {}
        self.passed: dict[str, int] = {}

    def done(self, task: Task, outcome: dict) -> None:
        if task.kind != "case":
            self.say(report.progress_line(task, outcome))
            return
        self.done_count[task.slug] = self.done_count.get(task.slug, 0) + 1
        self.passed[task.slug] = self.passed.get(task.slug, 0) + bool(outcome["correct"])
        if not outcome["correct"]:
            self.say(report.progress_line(task, outcome))
        if self.done_count[task.slug] == self.total[task.slug]:
            self.say(f"  {outcome['number']} {task.slug}: {self.passed[task.slug]}/{self.total[task.slug]} own "
                     "cases correct")


MAX_RESTARTS_PER_PUZZLE = 2


def _give_up_on_repeat_faults(left: list[Task], outcomes: dict, puzzles: dict, plans: dict, progress) -> list[Task]:
    """Each fault on the ranks costs a new group (tens of seconds on GPUs): after ``MAX_RESTARTS_PER_PUZZLE``
    of one puzzle, its other tasks are not run."""
    faults: dict[str, int] = {}
    for o in outcomes.values():
        if o["status"].startswith("error:") and not o["status"].startswith("error: compile"):
            faults[o["slug"]] = faults.get(o["slug"], 0) + 1
    keep = []
    for t in left:
        if faults.get(t.slug, 0) >= MAX_RESTARTS_PER_PUZZLE:
            outcomes[t.id] = checks.failure(puzzles[t.slug], t, plans.get(t.id),
                                            f"the file failed on the ranks {faults[t.slug]} times already", "not run")
            progress.done(t, outcomes[t.id])
        else:
            keep.append(t)
    return keep


def _submit_plans(planner: PlanPool, tasks: list[Task], puzzles: dict) -> None:
    """One job for each puzzle's own cases (small: one process saves the start-up of many), one per
    benchmark case; in the order the ranks take them."""
    batches: list[list[Task]] = []
    own: dict[str, list[Task]] = {}
    for task in tasks:
        if task.kind == "case":
            if task.slug not in own:
                own[task.slug] = []
                batches.append(own[task.slug])
            own[task.slug].append(task)
        else:
            batches.append([task])
    for order, batch in enumerate(batches):
        races = batch[0].kind == "case"             # the race tracker on the puzzle's own cases only
        memory = max(predicted_memory(case_bytes(puzzles[t.slug], t), races) for t in batch)
        planner.submit(pool.Job("plan", {"tasks": [t.to_dict() for t in batch], "races": races}, memory=memory,
                                priority=0, cost=float(order), tag=batch))


PROBE_ELEMENTS = 1 << 20     # up to here the case is built; above, one of this size is, and scaled


def case_bytes(puzzle: Puzzle, task: Task) -> int:
    """The bytes of a task's arrays, from a small case scaled (building a 2^28-byte case takes seconds)."""
    from dataclasses import replace

    probe = task
    if task.kind == "bench" and task.n is not None and task.n > PROBE_ELEMENTS:
        probe = replace(task, n=PROBE_ELEMENTS)
    case = build_case(puzzle, probe)
    nbytes = sum(int(v.nbytes) for v in case.buffers.values() if hasattr(v, "nbytes"))
    return int(nbytes * task.n / probe.n) if probe is not task else nbytes


def _plans_of(job: pool.Job) -> list[Plan]:
    if job.result and job.result.get("ok"):
        return [Plan.from_dict(d) for d in job.result["result"]]
    why = f"gpusim could not plan the case: {(job.result or {}).get('error')}"
    return [Plan(t.slug, t.id, 0, 0, error=why) for t in job.tag]


def _write_plan(scratch: Path, task_id: str, plan: Plan) -> None:
    path = scratch / "plans" / f"{task_id}.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(plan.to_dict()), encoding="utf-8")
    tmp.replace(path)


def _write_files(out_dir: Path, out: Outcome, scratch: Path) -> None:
    from ..run import _json_safe

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "multi-gpu.md").write_text(out.markdown, encoding="utf-8")
    (out_dir / "multi-gpu.json").write_text(json.dumps(_json_safe(out.doc), indent=1), encoding="utf-8")
    (out_dir / "multi-gpu.txt").write_text(out.text + "\n", encoding="utf-8")
    for log in sorted(scratch.glob("rank*.log")):
        shutil.copy(log, out_dir / log.name)


class RankGroup:
    """The rank processes: started on a list of tasks, polled for finished tasks, stopped, started again."""

    def __init__(self, opts: Options, scratch: Path):
        self.opts, self.scratch = opts, scratch
        self.pending: list[Task] = []
        self.generation = 0
        self.context = None
        self._tasks: dict[str, Task] = {}
        self._plan_seen: dict[str, float] = {}

    def task(self, task_id: str) -> Task:
        return self._tasks[task_id]

    def start(self, tasks: list[Task]) -> None:
        import torch.multiprocessing as mp

        from . import rank

        self.generation += 1
        self.pending = list(tasks)
        self._tasks.update({t.id: t for t in tasks})
        job = {"mode": self.opts.mode, "world": self.opts.devices, "dir": str(self.scratch),
               "store": str(self.scratch / f"store{self.generation}"), "tasks": [t.to_dict() for t in tasks],
               "warmup": self.opts.warmup, "iters": self.opts.iters,
               "timeout_s": max(60.0, self.opts.task_timeout_s)}
        for t in tasks:                              # results of an earlier, failed group are not this one's
            for f in (self.scratch / "results").glob(f"{t.id}.rank*"):
                f.unlink()
        self.context = mp.start_processes(rank.main, args=(job,), nprocs=self.opts.devices, join=False,
                                          start_method="spawn")

    def poll(self, plans: dict) -> tuple[list[tuple[str, list[dict]]], tuple[Task, str, str] | None, bool]:
        """Tasks every rank has finished (with the ranks' results); the task that failed without every
        rank reporting it, if one did: (task, message, kind); and whether a finished task ended the group
        (a rank stops after a fault: the tasks left need a new group)."""
        finished, ended = [], False
        while self.pending and not ended:
            task = self.pending[0]
            results = self._results(task)
            if results is None:
                break
            finished.append((task.id, results))
            self.pending.pop(0)
            ended = any(r.get("fatal") for r in results)
        if not self.pending or ended:
            return finished, None, ended
        task = self.pending[0]
        died = self._died()
        if died is not None:          # in this task: a finished one that ended the group was caught above
            return finished, self._failure(task, died), False
        if task.id in plans:
            seen = self._plan_seen.setdefault(task.id, time.monotonic())
            if time.monotonic() - seen > self.opts.task_timeout_s:
                return finished, (task, f"did not finish within {self.opts.task_timeout_s:.0f} s on the ranks "
                                  "(a kernel that never ends, or a rank waiting for a peer)", "timeout"), False
        return finished, None, False

    def _results(self, task: Task) -> list[dict] | None:
        out = []
        for i in range(self.opts.devices):
            path = self.scratch / "results" / f"{task.id}.rank{i}.json"
            if not path.exists():
                return None
            out.append(json.loads(path.read_text(encoding="utf-8")))
        return out

    def _died(self) -> str | None:
        if self.context is None:
            return "the rank processes are not running"
        try:
            done = self.context.join(timeout=0, grace_period=2)
        except Exception as e:          # torch's ProcessExitedException / ProcessRaisedException
            return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if done:
            return "the rank processes ended before this task"
        return None

    def _failure(self, task: Task, died: str) -> tuple[Task, str, str]:
        reported = []
        for i in range(self.opts.devices):
            path = self.scratch / "results" / f"{task.id}.rank{i}.json"
            if path.exists():
                reported.append(json.loads(path.read_text(encoding="utf-8")))
        err = checks.first_error(reported)
        if err:
            where = f" ({Path(err['filename']).name}:{err['lineno']})" if err.get("lineno") else ""
            return task, f"{err['kind']}: {err['message']}{where}", err["kind"]
        return task, f"a rank process died ({died}); {self._log_tail()}", "died"

    def _log_tail(self) -> str:
        lines = []
        for log in sorted(self.scratch.glob("rank*.log")):
            text = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
            if text:
                lines.append(f"{log.stem}: {text[-1][:200]}")
        return "; ".join(lines) or "no log"

    def stop(self) -> None:
        self.pending = []
        if self.context is None:
            return
        for process in self.context.processes:
            if process.is_alive():
                process.kill()
        for process in self.context.processes:
            process.join(timeout=30)
        self.context = None

    def hello(self) -> list[dict]:
        out = []
        for i in range(self.opts.devices):
            path = self.scratch / f"hello.rank{i}.json"
            if path.exists():
                out.append(json.loads(path.read_text(encoding="utf-8")))
        return out
