"""Graduate mode from start to finish: the GPU worker, the simulator's jobs beside it, ncu, the table.

``graduate(options)`` does, in this process (which never touches the GPU itself):

1. starts the GPU worker (``worker.py``) on every (puzzle, back end) task; its first message says which GPU
   there is and its peaks measured now, or that there is none (then nothing else happens);
2. meanwhile starts the simulator's jobs (``pool.py``): one per puzzle for the benchmark launch, skipped when
   the estimate cache already holds it, and one per puzzle at the ncu size with ``--ncu``;
3. as the worker reports each task, has its benchmark outputs checked against the spec in a CPU job; a
   task that hangs past ``task_timeout_s`` or kills its worker costs that row and a fresh worker;
4. with ``--ncu``, runs the launches under Nsight Compute (``ncu.py``) once the timing is over;
5. waits for the simulator's jobs until ``estimate_budget_s`` after the start, cuts off the rest, and builds
   the rows (``table.py``), the ncu comparison and the files in ``out``.

With ``out``, the files are rewritten after every finished row (``resume.py``: a stopped run keeps its rows),
and ``resume`` skips the rows and ncu launches a previous run left there under the same key.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import Puzzle
from . import estimates, ncu, pool, resume, table

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SIZE = 1 << 26
DEFAULT_NCU_SIZE = 1 << 20
NCU_BATCH = 10          # puzzles per ncu run (about 150 launches, under a minute on the H200)


def _default_cache() -> Path:
    """In a checkout, benchmarks/gpu/estimates.json (carried to the GPU machine with the tree); installed,
    the user's cache folder."""
    if (ROOT / "benchmarks" / "gpu").is_dir():
        return ROOT / "benchmarks" / "gpu" / "estimates.json"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpu-puzzles" / "estimates.json"


DEFAULT_CACHE = _default_cache()


@dataclass
class Options:
    items: list[tuple[Puzzle, Path]]           # puzzle and the solution file to run
    backends: list[str]
    size: int = DEFAULT_SIZE
    ncu: bool = False
    ncu_size: int = DEFAULT_NCU_SIZE
    out: Path | None = None
    cache: Path | None = DEFAULT_CACHE
    estimates: bool = True
    estimate_budget_s: float = 300.0           # from the start: simulator jobs still running then are cut off
    estimate_jobs: int | None = None
    task_timeout_s: float = 180.0
    ncu_timeout_s: float = 240.0               # per batch of NCU_BATCH puzzles
    progress: Any = None                       # a callable taking one line, or None
    worker_command: list[str] | None = None    # tests stand in for the GPU worker (worker.py's protocol)
    interpret: bool = False                    # Triton's interpreter on the CPU instead of a GPU (no timing)
    untimed: set[str] = field(default_factory=set)   # puzzles (slugs) whose cases run but which are not timed
    resume: bool = False                       # keep the finished rows of out/graduate.json (resume.py)


@dataclass
class Outcome:
    rows: list[table.Row] = field(default_factory=list)
    doc: dict = field(default_factory=dict)
    no_gpu: str = ""                           # the reason, when there is no GPU
    text: str = ""                             # the report for the terminal
    markdown: str = ""

    @property
    def ok(self) -> bool:
        return not self.no_gpu and bool(self.rows) and all(r.correct for r in self.rows)


def graduate(opts: Options) -> Outcome:
    started = time.monotonic()
    say = opts.progress or (lambda line: None)
    scratch = Path(tempfile.mkdtemp(prefix="graduate-"))
    outputs_dir = scratch / "outputs"
    outputs_dir.mkdir()
    env = _child_env()
    if opts.interpret:
        env["TRITON_INTERPRET"] = "1"
    cache = estimates.EstimateCache(opts.cache)
    if cache.problem:
        say(cache.problem)
    previous = resume.Previous()
    if opts.resume and opts.out is not None:
        previous = resume.load(opts.out / "graduate.json", opts.items, opts.backends, opts.size, opts.interpret,
                               opts.ncu_size if opts.ncu else None)
        kept = estimates.EstimateCache(opts.out / "estimates.json")     # what the earlier calls computed
        cache.entries.update(kept.entries)
    paths = {p.slug: path for p, path in opts.items}
    tasks = [{"slug": p.slug, "path": str(path), "backend": b, "timed": p.slug not in opts.untimed}
             for p, path in opts.items for b in opts.backends if (p.slug, b) not in previous.records]
    if opts.resume:
        say(previous.problem or f"resuming {opts.out / 'graduate.json'}: {len(previous.records)} row(s) kept, "
            f"{len(tasks)} to run" + (f", ncu launches of {len(previous.ncu_items)} puzzle(s) kept"
                                       if opts.ncu else ""))
    worker = _Worker(tasks, opts.size, outputs_dir, env, scratch / "worker.log", opts.worker_command,
                     opts.interpret)
    jobs: pool.Pool | None = None
    records: dict[tuple[str, str], dict] = {k: dict(v) for k, v in previous.records.items()}
    device = peaks = None
    est_jobs: dict[tuple[str, int | None], pool.Job] = {}
    verify_jobs: dict[tuple[str, str], pool.Job] = {}
    try:
        first = worker.next_message(timeout=300)
        if first is None or first.get("type") != "device":
            reason = first["reason"] if first and first.get("type") == "no_gpu" else \
                "the GPU worker did not start: " + worker.log_tail()
            return Outcome(no_gpu=reason, text=reason)
        device, peaks = first["device"], first["peaks"]
        if peaks:
            say(f"device: {device['label']}; copy bandwidth {table.fmt_bytes_per_s(peaks['copy_bandwidth'])}")
        else:
            say(f"device: {device['label']}; {first.get('problem')}")
        try:
            gpu = None if opts.interpret else estimates.gpu_model(device["name"], (peaks or {}).get("copy_bandwidth"),
                                                                  (peaks or {}).get("roof"))
        except KeyError as e:
            gpu = None
            say(f"no simulator estimates: {e}")
        jobs = pool.Pool(max_jobs=opts.estimate_jobs, workdir=scratch / "jobs")
        save_to = (opts.out / "estimates.json") if opts.out is not None else opts.cache

        def checkpoint(ncu_items=None) -> None:
            """The files in ``out`` with every row finished so far (each replaced atomically)."""
            if opts.out is None:
                return
            for key, job in verify_jobs.items():
                if job.result is not None and job.result.get("ok") and key in records:
                    records[key]["verify"] = job.result        # a check that ran (pass or FAIL) is kept
            partial = assemble(opts, device, peaks, records, est_jobs, verify_jobs, ncu_items, complete=False)
            try:
                write_files(opts.out, partial)
            except OSError as e:
                say(f"the results could not be written to {opts.out} ({e})")

        def harvest() -> bool:
            """Keep every finished simulator result at once (an interrupted run keeps what it computed); True
            when a spec check finished (a row changed)."""
            fresh = checked = False
            for job in jobs.take_done():
                if job.kind == "estimate" and job.result and job.result.get("ok"):
                    cache.put(job.tag["key"], job.result["result"])
                    fresh = True
                    say(f"    gpusim: {job.tag['slug']} at {estimates.size_label(job.tag['size'])}, "
                        f"{estimates.result_summary(job.result['result'])} ({job.seconds:.0f} s)")
                elif job.kind == "estimate":
                    say(f"    gpusim: {job.tag['slug']}: {(job.result or {}).get('error')}")
                else:                                   # a spec check: its outputs file is no longer needed
                    Path(job.args["outputs"]).unlink(missing_ok=True)
                    checked = True
            if fresh and save_to is not None and opts.estimates:
                try:
                    cache.save(save_to)
                except OSError as e:
                    say(f"the estimate cache {save_to} could not be written ({e})")
            return checked

        if opts.estimates and gpu is not None:
            sizes = [opts.size] + ([opts.ncu_size] if opts.ncu and opts.ncu_size != opts.size else [])
            est_jobs = submit_estimates(jobs, cache, opts.items, sizes, gpu, priority_size=opts.ncu_size)
        done = 0
        # until ncu runs, the files keep the launches a previous run profiled
        ncu_items = {"run": ncu.NcuRun({}, [], "ncu runs once the GPU rows are done"),
                     "kept": previous.ncu_items} if opts.ncu and previous.ncu_items else None
        for msg in worker.messages(opts.task_timeout_s, tick_s=2.0):
            if harvest():
                checkpoint(ncu_items)
            if msg["type"] == "start":
                say(f"[{done + 1}/{len(tasks)}] {msg['slug']} ({msg['backend']}) ...")
            elif msg["type"] == "result":
                done += 1
                key = (msg["slug"], msg["backend"])
                puzzle = next(p for p, _ in opts.items if p.slug == msg["slug"])
                records[key] = {"key": resume.row_key(puzzle, paths[puzzle.slug], msg["backend"], opts.size,
                                                      opts.interpret),
                                "result": msg["result"], "verify": None, "peaks": peaks}
                say(_progress_line(msg["slug"], msg["backend"], msg["result"]))
                out_file = (msg["result"].get("bench") or {}).get("outputs_file")
                if out_file:
                    verify_jobs[key] = jobs.submit(pool.Job("verify", {"puzzle": msg["slug"], "size": opts.size,
                                                                        "outputs": out_file},
                                                            memory=_verify_memory(out_file), priority=0))
                checkpoint(ncu_items)
        worker.finish()                             # the GPU to itself for ncu
        ncu_run = None
        if opts.ncu:
            from gpusim.observe.metrics import METRIC_KEYS

            items = [{"slug": p.slug, "path": str(path)} for p, path in opts.items if p.slug not in previous.ncu_items]
            # ncu prints its results only when the program it profiles exits, so a run cut off by its timeout
            # keeps nothing: batches of puzzles, each its own ncu run and timeout, each kept as it finishes
            batches = [items[i:i + NCU_BATCH] for i in range(0, len(items), NCU_BATCH)]
            runs: list[ncu.NcuRun] = []
            ncu_run = ncu.NcuRun({}, [])
            for number, batch in enumerate(batches, 1):
                say(f"ncu: profiling the benchmark launches of {len(batch)} puzzle(s) at "
                    f"{estimates.size_label(opts.ncu_size)} (batch {number} of {len(batches)}) ...")
                runs.append(ncu.profile(batch, opts.ncu_size, scratch / "ncu" / str(number), list(METRIC_KEYS),
                                        opts.ncu_timeout_s, env))
                say("ncu: " + (runs[-1].error or f"{len(runs[-1].launches)} launches profiled"))
                ncu_run = ncu.merge(runs)
                ncu_items = {"run": ncu_run, "kept": previous.ncu_items}
                checkpoint(ncu_items)
            ncu_items = {"run": ncu_run, "kept": previous.ncu_items}
            checkpoint(ncu_items)
        if harvest():
            checkpoint(ncu_items)
        if jobs.pending():
            deadline = started + opts.estimate_budget_s
            say(f"waiting up to {max(0.0, deadline - time.monotonic()):.0f} s for {jobs.pending()} simulator "
                "job(s) ...")
            while jobs.pending() and time.monotonic() < deadline:
                jobs.wait(min(deadline, time.monotonic() + 2))
                if harvest():
                    checkpoint(ncu_items)
        harvest()
        jobs.close(f"not finished within --estimate-budget {opts.estimate_budget_s:.0f} s")
        for key, job in verify_jobs.items():
            if job.result is not None and job.result.get("ok") and key in records:
                records[key]["verify"] = job.result
        outcome = assemble(opts, device, peaks, records, est_jobs, verify_jobs, ncu_items)
        outcome.doc["seconds"] = round(time.monotonic() - started, 1)
        if opts.out is not None:
            write_files(opts.out, outcome, cache, scratch)
        if opts.cache is not None and opts.estimates:
            try:
                cache.save()
            except OSError as e:
                say(f"the estimate cache {opts.cache} could not be written ({e})")
        return outcome
    finally:
        worker.stop()
        if jobs is not None:
            jobs.close()
        shutil.rmtree(scratch, ignore_errors=True)


def submit_estimates(jobs: pool.Pool, cache: estimates.EstimateCache, items, sizes: list[int], gpu,
                     priority_size: int) -> dict:
    """One simulator job per puzzle and size, unless the cache holds the result (then a finished job)."""
    out = {}
    gpu_doc = estimates.gpu_to_dict(gpu)
    for puzzle, path in items:
        for size in sizes:
            key = estimates.cache_key(puzzle, path, size, gpu.name)
            tag = {"key": key, "slug": puzzle.slug, "size": size}
            same = next((j for j in out.values() if j.tag["key"] == key), None)
            if same is not None:                   # a single-block puzzle: one case whatever the size
                out[(puzzle.slug, size)] = same
                continue
            hit = cache.get(key)
            if hit is not None:
                out[(puzzle.slug, size)] = pool.Job("estimate", {}, 0, tag=tag, result={"ok": True, "result": hit})
                continue
            memory = predicted_memory(puzzle, size)
            hint = cache.cost_hint(puzzle.slug, size)
            job = pool.Job("estimate", {"puzzle": puzzle.slug, "path": str(path), "size": size, "gpu": gpu_doc},
                           memory=memory, priority=0 if size == priority_size else 1, tag=tag,
                           cost=hint if hint is not None else memory * 1e-8)
            out[(puzzle.slug, size)] = jobs.submit(job)
    return out


SIM_BYTES_PER_CASE_BYTE = 32     # gpusim's peak memory per byte of the case's arrays (measured: 22-30)
SIM_BASE_BYTES = 400 << 20


def predicted_memory(puzzle: Puzzle, size: int) -> int:
    """What a simulator job for ``puzzle`` at ``size`` will hold at its peak (from the case at 2^16)."""
    from .workload import case_bytes

    probe = min(size, 1 << 16)
    case, _ = estimates.bench_case(puzzle, probe)
    if case is None:
        return SIM_BASE_BYTES
    scale = size / probe if puzzle.bench is not None else 1
    return int(SIM_BASE_BYTES + SIM_BYTES_PER_CASE_BYTE * case_bytes(case) * scale)


def _verify_memory(out_file: str) -> int:
    try:
        return SIM_BASE_BYTES + 6 * os.path.getsize(out_file)
    except OSError:
        return SIM_BASE_BYTES


def _progress_line(slug: str, backend: str, result: dict) -> str:
    err = result.get("error")
    if err:
        return f"    {slug} ({backend}): {err['kind']}: {err['message'][:160]}"
    c = result.get("cases", {})
    t = ((result.get("bench") or {}).get("timing") or {}).get("median_s")
    return f"    {slug} ({backend}): {c.get('passed')}/{c.get('total')} cases ok" + \
        (f", {table.fmt_time(t)}" if t else "")


# ------------------------------------------------------------------------------------------ assembling

def assemble(opts: Options, device, peaks, records, est_jobs, verify_jobs, ncu_items=None,
             complete: bool = True) -> Outcome:
    """The rows, the ncu comparison and the document. ``records`` maps (slug, back end) to what the row was
    measured from (``resume.py``); with ``complete=False`` only the rows measured so far."""
    rows, stored = [], []
    for puzzle, _path in opts.items:
        est = _estimate_for(est_jobs, puzzle.slug, opts.size)
        for backend in opts.backends:
            record = records.get((puzzle.slug, backend))
            if record is None and not complete:
                continue
            verify = verify_jobs.get((puzzle.slug, backend))
            if record is not None and record.get("verify") is not None and (verify is None or verify.result is None):
                verify = pool.Job("verify", {}, 0, result=record["verify"])
            rows.append(build_row(puzzle, backend, None if record is None else record["result"], est, verify,
                                  peaks if record is None else record.get("peaks")))
            stored.append(record)
    ncu_run = None if ncu_items is None else ncu_items["run"]
    comparisons = None if ncu_items is None else ncu_comparisons(opts, ncu_items, est_jobs)
    doc = {
        "schema": 1, "device": device, "peaks": peaks, "size": opts.size, "backends": opts.backends,
        "complete": complete, "rows_expected": len(opts.items) * len(opts.backends),
        "rows": [{**table.row_dict(r), **({"measured": m} if m is not None else {})} for r, m in zip(rows, stored)],
        "ncu": None if ncu_run is None else {
            "size": opts.ncu_size, "error": ncu_run.error, "command": ncu_run.command,
            "launches": comparisons},
        "gpusim": estimates.gpusim_fingerprint(),
    }
    out = Outcome(rows=rows, doc=doc)
    out.text = render_text(out, opts)
    out.markdown = render_markdown(out, opts)
    return out


def _estimate_for(est_jobs, slug: str, size: int) -> dict:
    job = est_jobs.get((slug, size))
    if job is None:
        return {"error": "not computed (--no-estimates)"}
    if job.result is None:
        return {"error": "not finished"}
    if not job.result.get("ok"):
        return {"error": job.result.get("error", "failed")}
    return job.result["result"]


def build_row(puzzle: Puzzle, backend: str, result: dict | None, est: dict, verify: pool.Job | None,
              peaks: dict | None) -> table.Row:
    row = table.Row(puzzle.number, puzzle.slug, backend)
    if result is None:
        row.failure = "no result from the GPU worker"
        return row
    err = result.get("error")
    if err:
        where = f" ({Path(err['filename']).name}:{err['lineno']})" if err.get("lineno") else ""
        row.failure = f"{err['kind']}: {err['message']}{where}"
    cases = result.get("cases") or {}
    row.cases_passed, row.cases_total = cases.get("passed", 0), cases.get("total", 0)
    if cases.get("failure") and not row.failure:
        f = cases["failure"]
        row.extra["first_wrong_case"] = f
    bench = result.get("bench") or {}
    row.bench, row.size, row.bench_note = bench.get("case", ""), bench.get("size", ""), bench.get("note", "")
    row.bytes = bench.get("read_bytes", 0) + bench.get("write_bytes", 0)
    timing = bench.get("timing")
    if timing:
        row.time_s, row.ci_s = timing["median_s"], (timing["ci_low_s"], timing["ci_high_s"])
        row.ungated_s, row.samples = timing.get("ungated_median_s"), timing.get("count", 0)
        row.extra["timing"] = {k: timing[k] for k in ("spin_s", "enqueue_s", "flush_bytes", "stopped") if k in timing}
    if bench.get("error"):
        row.bench_check = f"not checked: {bench['error']}"
    elif verify is None:
        row.bench_check = "not checked: no outputs" if timing is None else "not checked"
    elif verify.result and verify.result.get("ok"):
        v = verify.result["result"]
        row.bench_check = "pass" if v["ok"] else f"FAIL: {v['message']}"
    else:
        row.bench_check = f"not checked: {(verify.result or {}).get('error', 'the check did not finish')}"
    flops_by_dtype = None
    if "error" in est:
        row.estimate_note = est["error"]
    else:
        totals = est["totals"]
        row.estimate_s, row.bound, row.flops = totals["seconds"], totals["bound"], int(totals["flops"])
        row.estimate_sample = totals.get("sampled")
        flops_by_dtype = {}
        for step in est["steps"]:
            for dt, n in step["flops"].items():
                flops_by_dtype[dt] = flops_by_dtype.get(dt, 0) + n
        row.extra["sim"] = {"dram_bytes": totals["dram_bytes"], "gpu": est.get("gpu"), "faults": est.get("faults"),
                            "sim_seconds": est.get("sim_seconds")}
    table.fill_numbers(row, (peaks or {}).get("copy_bandwidth"), (peaks or {}).get("roof") or {}, flops_by_dtype)
    return row


def ncu_comparisons(opts: Options, ncu_items: dict, est_jobs) -> list[dict]:
    """For every profiled launch, puzzle by puzzle: gpusim's metrics beside ncu's (``ncu.compare``); the
    launches a previous run profiled (``ncu_items["kept"]``) are compared again with today's estimates."""
    run = ncu_items["run"]
    fresh: dict[str, list[dict]] = {}
    for entry in run.manifest:
        launch = run.launches.get(entry["id"])
        item = {**entry, "ncu_kernel": launch.kernel if launch else None,
                "ncu_metrics": None if launch is None else launch.metrics}
        fresh.setdefault(entry["slug"], []).append(item)
    out = []
    for puzzle, path in opts.items:
        key = resume.ncu_key(puzzle, path, opts.ncu_size)
        for item in ncu_items["kept"].get(puzzle.slug) or fresh.get(puzzle.slug, []):
            out.append(_compare_launch({**item, "key": key}, est_jobs, opts.ncu_size))
    return out


def compare_saved(folder: Path, opts: Options) -> str:
    """``--ncu-from DIR``: the ncu comparison of a GPU run made again from what it left in ``DIR`` (ncu's CSV and
    manifest, ``graduate.json``'s device, ``estimates.json``), with no GPU: gpusim's metrics come from the estimate
    caches, and the launches they lack are simulated here (within ``--estimate-budget``)."""
    say = opts.progress or (lambda line: None)
    saved = ncu.load_saved(folder)
    device = json.loads((folder / "graduate.json").read_text(encoding="utf-8"))["device"]
    cache = estimates.EstimateCache(opts.cache)
    cache.entries.update(estimates.EstimateCache(folder / "estimates.json").entries)
    gpu = estimates.gpu_model(device["name"])
    slugs = {e["slug"] for e in saved.manifest}
    items = [(p, path) for p, path in opts.items if p.slug in slugs]
    scratch = Path(tempfile.mkdtemp(prefix="graduate-ncu-"))
    jobs = pool.Pool(max_jobs=opts.estimate_jobs, workdir=scratch / "jobs")
    try:
        est_jobs = submit_estimates(jobs, cache, items, [opts.ncu_size], gpu, priority_size=opts.ncu_size)
        if jobs.pending():
            say(f"simulating {jobs.pending()} launch(es) the estimate caches do not hold ...")
        deadline = time.monotonic() + opts.estimate_budget_s
        while jobs.pending() and time.monotonic() < deadline:
            jobs.wait(min(deadline, time.monotonic() + 2))
        jobs.close(f"not finished within --estimate-budget {opts.estimate_budget_s:.0f} s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    comparisons = ncu_comparisons(Options(items=items, backends=[], ncu=True, ncu_size=opts.ncu_size),
                                  {"run": saved, "kept": {}}, est_jobs)
    return ncu_text({"size": opts.ncu_size, "error": saved.error, "command": saved.command,
                     "launches": comparisons})


def _compare_launch(item: dict, est_jobs, ncu_size: int) -> dict:
    from gpusim.observe.metrics import METRIC_KEYS

    item = {**item, "rows": [], "problem": ""}
    est = _estimate_for(est_jobs, item["slug"], ncu_size)
    if item["ncu_metrics"] is None:
        item["problem"] = "ncu reported no such launch"
    elif item["kernel"] not in (item["ncu_kernel"] or ""):
        item["problem"] = f"ncu's launch {item['id']} is {item['ncu_kernel'][:60]!r}, not {item['kernel']}"
    elif "error" in est:
        item["problem"] = f"no gpusim metrics ({est['error']})"
    else:
        sim = est["steps"][item["step"]]["metrics"]
        item["rows"] = [r.__dict__ for r in ncu.compare(sim, item["ncu_metrics"], list(METRIC_KEYS))]
    return item


# ------------------------------------------------------------------------------------------- rendering

def render_text(out: Outcome, opts: Options) -> str:
    doc = out.doc
    parts = []
    if doc.get("ncu"):
        parts.append(ncu_text(doc["ncu"]))
    parts += table.header(doc["device"], doc["peaks"], opts.size)
    parts.append("")
    parts.append(table.text_table(out.rows))
    for title, lines in (("wrong", table.problems(out.rows)), ("notes", table.notes(out.rows))):
        if lines:
            parts.append(f"\n{title}:")
            parts += [f"  {ln}" for ln in lines]
    n_ok = sum(r.correct for r in out.rows)
    where = "under Triton's interpreter" if opts.interpret else "on the GPU"
    parts.append(f"\n{n_ok} of {len(out.rows)} correct {where}.")
    if doc.get("complete") is False:
        parts.append(f"Partial: {len(out.rows)} of {doc['rows_expected']} rows so far (the run goes on, or was "
                     "stopped: `--resume` runs the rest).")
    return "\n".join(parts)


def ncu_text(ncu_doc: dict) -> str:
    lines = [f"ncu vs gpusim, launch by launch, at {estimates.size_label(ncu_doc['size'])} "
             "(DIFF = the numbers differ; DRAM bytes are gpusim's estimates; metrics 0 on both sides not shown):"]
    if ncu_doc.get("error"):
        lines.append(f"  ncu: {ncu_doc['error']}")
    for item in ncu_doc["launches"]:
        lines.append(f"\n  {item['slug']}, launch {item['step'] + 1} ({item['kernel']}), {item['case']}")
        if item["problem"]:
            lines.append(f"    {item['problem']}")
            continue
        for r in _shown(item["rows"]):
            lines.append(f"    {r['name']:<62} {_num(r['gpusim']):>16} {_num(r['ncu']):>16}  {r['flag']}")
    lines.append("")
    lines += ["  " + ln for ln in ncu_summary(ncu_doc)]
    return "\n".join(lines)


def _shown(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["flag"] or r["gpusim"] or r["ncu"]]


def ncu_summary(ncu_doc: dict) -> list[str]:
    """How many launches agree on every exact metric, and which differ where."""
    compared = [x for x in ncu_doc["launches"] if x["rows"]]
    differ = [x for x in compared if any(r["flag"] == "DIFF" for r in x["rows"])]
    lines = [f"launches whose exact metrics all equal ncu's: {len(compared) - len(differ)} of {len(compared)}"
             + (f" ({len(ncu_doc['launches']) - len(compared)} not compared)" if len(compared) <
                len(ncu_doc["launches"]) else "")]
    for x in differ:
        names = ", ".join(r["name"] for r in x["rows"] if r["flag"] == "DIFF")
        lines.append(f"  {x['slug']} launch {x['step'] + 1}: {names}")
    return lines


def _num(v) -> str:
    if v is None:
        return "n/a"
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.2f}"


def render_markdown(out: Outcome, opts: Options) -> str:
    doc = out.doc
    parts = ["# Graduate mode on a real GPU", ""]
    parts += [f"- {ln}" for ln in table.header(doc["device"], doc["peaks"], opts.size)]
    parts += ["", table.markdown_table(out.rows)]
    for title, lines in (("Wrong", table.problems(out.rows)), ("Notes", table.notes(out.rows))):
        if lines:
            parts += ["", f"## {title}", ""] + [f"- {ln}" for ln in lines]
    if doc.get("ncu"):
        parts += ["", f"## ncu vs gpusim at {estimates.size_label(doc['ncu']['size'])}", "",
                  "Metrics that are 0 on both sides are left out; DIFF flags every difference; DRAM bytes are "
                  "gpusim's estimates (docs/metrics.md).", ""]
        if doc["ncu"].get("error"):
            parts.append(f"ncu: {doc['ncu']['error']}\n")
        for item in doc["ncu"]["launches"]:
            parts.append(f"### {item['slug']}, launch {item['step'] + 1} (`{item['kernel']}`), {item['case']}\n")
            if item["problem"]:
                parts.append(item["problem"] + "\n")
                continue
            parts += ["| metric | gpusim | ncu | |", "|---|---:|---:|---|"]
            parts += [f"| `{r['name']}` | {_num(r['gpusim'])} | {_num(r['ncu'])} | {r['flag']} |"
                      for r in _shown(item["rows"])]
            parts.append("")
        parts += [f"- {ln}" for ln in ncu_summary(doc["ncu"])]
    return "\n".join(parts) + "\n"


def write_files(out_dir: Path, outcome: Outcome, cache=None, scratch: Path | None = None) -> None:
    """graduate.md, .json and .txt (each replaced atomically); at the end of a run (``scratch``) also the
    estimate cache, ncu's raw output and the worker's log."""
    resume.write_atomic(out_dir / "graduate.json", json.dumps(_json_safe(outcome.doc), indent=1))
    resume.write_atomic(out_dir / "graduate.txt", outcome.text + "\n")
    resume.write_atomic(out_dir / "graduate.md", outcome.markdown)
    if scratch is None:
        return
    cache.save(out_dir / "estimates.json")
    batches = sorted((p for p in (scratch / "ncu").glob("*") if p.name.isdigit()), key=lambda p: int(p.name)) \
        if (scratch / "ncu").is_dir() else []
    for folder in batches:                      # ncu-1.csv, ncu_manifest-1.jsonl, ...: ncu.load_saved reads them
        for name in ("ncu.csv", "ncu_manifest.jsonl"):
            src = folder / name
            if src.is_file():
                stem, ext = name.split(".")
                shutil.copy(src, out_dir / f"{stem}-{folder.name}.{ext}")
    log = scratch / "worker.log"
    if log.is_file():
        shutil.copy(log, out_dir / "worker.log")


def _json_safe(value):
    """Strict JSON, as the rest of the CLI writes it (non-finite floats as strings)."""
    from ..cli import _json_safe as strict

    return strict(value)


def _child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


# ------------------------------------------------------------------------------------------ the worker

TIMEOUT = {"type": "timeout"}


class _Worker:
    """The GPU worker process, restarted after a crash or a hang with the tasks that are left."""

    def __init__(self, tasks: list[dict], size: int, outputs_dir: Path, env: dict, log: Path,
                 command: list[str] | None = None, interpret: bool = False):
        self.command = command or [sys.executable, "-m", "puzzles.graduate.worker"]
        self.left = list(tasks)
        self.size, self.outputs_dir, self.env, self.log = size, outputs_dir, env, log
        self.measure_device = True
        self.interpret = interpret
        self.proc: subprocess.Popen | None = None
        self.lines: queue.Queue = queue.Queue()
        self._start()

    def _start(self) -> None:
        job = {"tasks": self.left, "size": self.size, "outputs_dir": str(self.outputs_dir),
               "measure_device": self.measure_device, "interpret": self.interpret}
        self.measure_device = False
        logf = open(self.log, "ab")
        self.proc = subprocess.Popen(self.command, cwd=ROOT, env=self.env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=logf)
        logf.close()
        self.proc.stdin.write(json.dumps(job).encode())
        self.proc.stdin.close()
        self.lines = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self.lines), daemon=True).start()

    @staticmethod
    def _read(proc: subprocess.Popen, lines: queue.Queue) -> None:
        for raw in proc.stdout:
            try:
                lines.put(json.loads(raw))
            except ValueError:
                continue
        lines.put(None)

    def next_message(self, timeout: float) -> dict | None:
        """The next message; None when the worker's output ended; ``TIMEOUT`` when none came in time."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return TIMEOUT

    def messages(self, task_timeout_s: float, tick_s: float | None = None):
        """Every start/result message until all tasks are done; a crash or a hang becomes a result. With
        ``tick_s``, a ``{"type": "tick"}`` every ``tick_s`` seconds without a message (the caller's chance to
        keep what finished meanwhile)."""
        current = None
        while self.left:
            deadline = time.monotonic() + (task_timeout_s if current else 600)
            while True:
                left = deadline - time.monotonic()
                msg = self.next_message(max(0.0, min(left, tick_s)) if tick_s else max(0.0, left))
                if msg is TIMEOUT and tick_s and time.monotonic() < deadline:
                    yield {"type": "tick"}
                    continue
                break
            if isinstance(msg, dict) and msg.get("type") == "start":
                current = (msg["slug"], msg["backend"])
                yield msg
                continue
            if isinstance(msg, dict) and msg.get("type") == "result":
                self.left = [t for t in self.left if (t["slug"], t["backend"]) != (msg["slug"], msg["backend"])]
                current = None
                yield msg
                if msg["result"].get("fatal") and self.left:
                    self._restart()
                continue
            if isinstance(msg, dict) and msg.get("type") in ("done", "device", "no_gpu"):
                if msg["type"] == "done":
                    return
                continue
            # a timeout (a hang) or the end of the worker's output (it died)
            self.stop()
            why = (f"did not finish within {task_timeout_s:.0f} s (a kernel that never ends?)" if msg is TIMEOUT
                   else f"the GPU worker died ({self.log_tail()})")
            if current is None and self.left:
                current = (self.left[0]["slug"], self.left[0]["backend"])
            if current is not None:
                self.left = [t for t in self.left if (t["slug"], t["backend"]) != current]
                yield {"type": "result", "slug": current[0], "backend": current[1],
                       "result": {"error": {"kind": "fault", "message": why}}}
                current = None
            if self.left:
                self._restart()

    def _restart(self) -> None:
        self.stop()
        self._start()

    def finish(self, timeout: float = 30) -> None:
        """Let the worker exit on its own (it is done), or stop it."""
        if self.proc is not None:
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.stop()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def log_tail(self) -> str:
        try:
            lines = [ln for ln in self.log.read_text(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return "no log"
        return lines[-1][:300] if lines else f"exit status {self.proc.returncode if self.proc else '?'}"
