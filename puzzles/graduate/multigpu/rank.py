"""One rank process of a multi-GPU run (started by ``launcher.py`` through ``torch.multiprocessing``).

``main(index, job)`` runs in process ``index`` of ``job["world"]``: it sets the multicast-off variables
(``environment.py``) before torch touches NCCL, joins the process group (NCCL on ``cuda:index``, or gloo),
and then, task after task (``tasks.py``), waits for the task's plan (``plan.py``, written by the
launcher), and

1. builds its share of the case (``exchange.RankShare``: its ranks' arrays and its mirrors);
2. runs it once with poisoned mirrors: each epoch's exchange, then its launches in issue order;
3. saves the outputs of its ranks (``<task>.rank<i>.npz``);
4. for a benchmark case: for a collective with one rank per process, runs the library's own collective
   on the same inputs and saves its result beside; then times both (``clock.measure``).

It writes ``<task>.rank<i>.json`` after each task. A task that fails on every rank alike before anything
was exchanged (the file does not load) is recorded and the next one starts; a failure in the middle of a
run (a fault, a numba-cuda compile error at the first launch) is written down and the process exits with
status 3: its peers may be waiting in the exchange, so the launcher stops the group and starts a new one
for the tasks left. What the solution files print goes to ``rank<i>.log``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path

from . import environment

EXIT_TASK_FAILED = 3


def main(index: int, job: dict) -> None:
    environment.apply()
    root = Path(job["dir"])
    log = open(root / f"rank{index}.log", "a", buffering=1)
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    sys.stdout = sys.stderr = log
    warnings.filterwarnings("ignore", message=".*is deprecated.*", category=FutureWarning)
    try:
        _serve(index, job, root, log)
    except BaseException as e:       # joining the group failed, or a bug: the log's last line says what
        traceback.print_exc(file=log)
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print(f"rank process {index} stopped: {type(e).__name__}: {first}", file=log, flush=True)
        raise


def _serve(index: int, job: dict, root: Path, log) -> None:
    from ..cuda_module import restore_row_stack

    restore_row_stack()
    import torch
    import torch.distributed as dist

    mode, world = job["mode"], job["world"]
    from datetime import timedelta

    options = {"backend": "nccl" if mode == "nccl" else "gloo", "init_method": f"file://{job['store']}",
               "rank": index, "world_size": world, "timeout": timedelta(seconds=job["timeout_s"])}
    if mode == "nccl":
        torch.cuda.set_device(index)
        options["device_id"] = torch.device("cuda", index)
    elif mode == "same-gpu":
        torch.cuda.set_device(0)
    dist.init_process_group(**options)
    first = torch.ones(1, device=f"cuda:{index}" if mode == "nccl" else "cpu")
    dist.all_reduce(first)          # every rank takes part in the first operation (batch_isend_irecv needs it)
    hello = {"rank": index, "env": environment.snapshot(), "torch": torch.__version__, "backend": options["backend"],
             "pid": os.getpid(), "world": world}
    if mode != "dry-run":
        hello["device"] = torch.cuda.get_device_name(index if mode == "nccl" else 0)
        if mode == "nccl":
            try:
                version = torch.cuda.nccl.version()
                hello["nccl"] = ".".join(map(str, version)) if isinstance(version, tuple) else str(version)
                hello["peer_access"] = [torch.cuda.can_device_access_peer(index, j) for j in range(world)
                                        if j != index]
            except Exception as e:       # only for the report's header
                hello["nccl"] = f"unknown ({type(e).__name__})"
    _write(root / f"hello.rank{index}.json", hello)
    engines: dict = {}
    for task_dict in job["tasks"]:
        from .tasks import Task

        task = Task.from_dict(task_dict)
        (root / "results" / f"{task.id}.rank{index}.start").write_text(str(time.time()))
        try:
            result, fatal = run_task(task, index, job, torch, dist, engines)
        except Exception as e:
            result, fatal = {"error": {"kind": "internal", "message": f"{type(e).__name__}: {e} (rank process {index})",
                                       "traceback": traceback.format_exc(limit=8)}}, True
        result["fatal"] = fatal
        _write(root / "results" / f"{task.id}.rank{index}.json", result)
        if fatal:
            log.flush()
            os._exit(EXIT_TASK_FAILED)
    dist.destroy_process_group()


def run_task(task, index: int, job: dict, torch, dist, engines: dict) -> tuple[dict, bool]:
    """(the result of this rank, whether the group must stop)."""
    import numpy as np

    from ... import registry
    from ...multidevice import case_outputs, device_of
    from ..backend import CompileFailed, RunFailed
    from .clock import EventClock, WallClock, measure
    from .collectives import collective_for
    from .engines import make_engine
    from .exchange import Exchange, RankShare, Transport
    from .nvlink import per_run
    from .plan import Plan
    from .tasks import build_case, placement

    root = Path(job["dir"])
    plan = Plan.from_dict(_wait_for(root / "plans" / f"{task.id}.json"))
    if plan.runnable is not None:
        return {"skipped": plan.runnable}, False
    puzzle = registry.get(task.slug)
    mode, world = job["mode"], job["world"]
    key = (task.slug, task.path)
    problem = None
    if key not in engines:
        try:
            engines[key] = make_engine(mode, torch, index, puzzle, Path(task.path))
        except CompileFailed as e:
            engines[key] = e
    engine = engines[key]
    if isinstance(engine, Exception):
        problem = {"kind": "compile", "message": str(engine), "filename": engine.filename, "lineno": engine.lineno}
    if _any_rank(torch, dist, mode, index, problem is not None):          # every rank skips alike
        return {"error": problem or {"kind": "compile", "message": "another rank could not load the file"}}, False
    t0 = time.perf_counter()
    case = build_case(puzzle, task)
    place = placement(plan.ranks, world)
    mine = [r for r in range(plan.ranks) if place[r] == index]
    share = RankShare.build(engine, case, mine)
    exchange = Exchange(plan, share, index, place, Transport(dist, stage_through_host=mode == "same-gpu"))

    def run() -> None:
        for e, launches in enumerate(share.epochs):
            exchange.epoch(e)
            for step, args in launches:
                engine.launch(step, args)

    def checked_run() -> None:
        for e, launches in enumerate(share.epochs):
            share.poison_mirrors()
            exchange.epoch(e)
            for step, args in launches:
                engine.launch(step, args)

    try:
        checked_run()
        engine.synchronize()
    except (CompileFailed, RunFailed) as e:
        kind = "compile" if isinstance(e, CompileFailed) else "fault"
        return {"error": {"kind": kind, "message": f"{e} (rank process {index})",
                          "filename": getattr(e, "filename", ""), "lineno": getattr(e, "lineno", 0)}}, True
    result: dict = {"rank": index, "ranks": mine, "sent": dict(exchange.sent), "device": engine.label}
    exchange.reset_counts()
    outputs = {name: engine.host(share.arrays[name]) for name in case_outputs(puzzle, case)
               if device_of(name) in mine}
    coll = collective_for(task.slug)
    compare = task.kind == "bench" and coll is not None and plan.ranks == world and world >= 2
    library = {}
    if compare:
        host_input = coll.local_input(case.buffers, index)
        # gloo's collectives take host tensors: with --same-gpu the library's collective runs on the host
        inp = engine.tensor(host_input) if mode == "nccl" else torch.from_numpy(host_input.copy())
        reset_c, run_c, finish_c = coll.prepare(torch, inp, world)
        reset_c()
        run_c()
        library[f"library:{coll.output}@{index}"] = finish_c().cpu().numpy().copy()
    out_file = root / "results" / f"{task.id}.rank{index}.npz"
    np.savez(out_file, **outputs, **library)
    result["outputs"] = str(out_file)
    result["check_seconds"] = round(time.perf_counter() - t0, 3)
    if task.kind == "bench" and job["iters"] > 0:
        clock = (EventClock if mode == "nccl" else WallClock)(torch, dist, engine)
        pristine = {name: t.clone() for name, t in share.arrays.items()}

        def reset() -> None:
            for name, t in share.arrays.items():
                t.copy_(pristine[name])

        nvlink = _nvlink(engines, mode, torch, index)
        runs = job["warmup"] + job["iters"]
        try:
            before = nvlink.read() if nvlink else None
            result["timing"] = measure(clock, reset, run, job["warmup"], job["iters"])
        except (CompileFailed, RunFailed) as e:
            return {"error": {"kind": "fault", "message": f"{e} (rank process {index}, timed runs)"}}, True
        if nvlink:
            result["nvlink"] = per_run(before, nvlink.read(), runs) or {"why": nvlink.why}
        if compare:
            before = nvlink.read() if nvlink else None
            result["library_timing"] = measure(clock, reset_c, run_c, job["warmup"], job["iters"])
            if nvlink:
                result["library_nvlink"] = per_run(before, nvlink.read(), runs) or {"why": nvlink.why}
        del pristine
    return result, False


def _nvlink(engines: dict, mode: str, torch, index: int):
    """This process's NVML NVLink counters (made once), on NCCL runs only."""
    if mode != "nccl":
        return None
    if "nvlink" not in engines:
        from .nvlink import NvlinkCounters

        engines["nvlink"] = NvlinkCounters(torch, index)
    return engines["nvlink"]


def _any_rank(torch, dist, mode: str, index: int, flag: bool) -> bool:
    t = torch.tensor([1.0 if flag else 0.0], device=f"cuda:{index}" if mode == "nccl" else "cpu")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item() > 0)


def _wait_for(path: Path, poll_s: float = 0.05) -> dict:
    """The plan, once the launcher has written it (the launcher stops the group if it never comes)."""
    while not path.exists():
        time.sleep(poll_s)
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path: Path, doc: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, default=_plain), encoding="utf-8")
    os.replace(tmp, path)


def _plain(value):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")
