"""``--ncu``: the launches under Nsight Compute, and gpusim's metrics beside ncu's, metric by metric.

``profile`` runs a child process (``python3 -m puzzles.graduate.ncu JOB``) under::

    ncu --clock-control none --print-units base --csv --log-file LOG --metrics <gpusim's ncu names> ...

The child launches each puzzle's benchmark case once, at the ncu size (one ``LaunchStep`` after another,
nothing else: no flush, no spin), and writes a manifest of the launches in order; ncu numbers the kernels
it profiles in launch order (its ``ID`` column), so launch ``k`` of the manifest is ncu's ID ``k`` (the
kernel's name is checked too). ncu flushes the caches before each profiled kernel (its default
``--cache-control all``), as the timing does.

``parse_csv`` reads ncu's CSV however it comes: noise lines around it (``==PROF==``, ``==WARNING==``, the
program's own output), quoted fields, thousands separators ("3,840"), "n/a", unit prefixes (Kbyte, Mbyte,
...). ``compare`` pairs gpusim's ``report.metrics`` with ncu's under the same names and flags every
difference; the DRAM byte counts are gpusim's *estimates* (docs/metrics.md) and are flagged as such.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ESTIMATED = ("dram__bytes_read.sum", "dram__bytes_write.sum")
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BASE_UNITS = ("byte", "sector", "inst", "request", "wavefront", "cycle", "warp", "thread")


@dataclass
class NcuLaunch:
    """One kernel launch as ncu reported it."""

    id: int
    kernel: str
    grid: str = ""
    block: str = ""
    metrics: dict[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True)
class MetricRow:
    name: str
    gpusim: float | None
    ncu: float | None
    flag: str          # "" when equal; "DIFF"; "estimate" / "DIFF (estimate)" for gpusim's DRAM estimates


def ncu_path() -> str | None:
    """The ``ncu`` executable: on the PATH, or in the usual CUDA folders."""
    found = shutil.which("ncu")
    if found:
        return found
    for folder in ("/usr/local/cuda/bin", "/opt/nvidia/nsight-compute"):
        candidate = Path(folder) / "ncu"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


# ------------------------------------------------------------------------------------------------ parsing

def parse_csv(text: str) -> dict[int, NcuLaunch]:
    """ncu's ``--csv`` output (details page, one row per metric) -> {launch ID: NcuLaunch}."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if _is_header(ln)), None)
    if start is None:
        return {}
    header = next(csv.reader([lines[start]]))
    col = {name: i for i, name in enumerate(header)}
    out: dict[int, NcuLaunch] = {}
    for line in lines[start + 1:]:
        if not line.startswith('"') or _is_header(line):
            continue
        try:
            row = next(csv.reader(io.StringIO(line)))
        except (csv.Error, StopIteration):
            continue
        if len(row) != len(header):
            continue
        try:
            launch_id = int(row[col["ID"]])
        except ValueError:
            continue
        launch = out.setdefault(launch_id, NcuLaunch(
            launch_id, row[col["Kernel Name"]] if "Kernel Name" in col else "",
            row[col["Grid Size"]] if "Grid Size" in col else "",
            row[col["Block Size"]] if "Block Size" in col else ""))
        unit = row[col["Metric Unit"]] if "Metric Unit" in col else ""
        launch.metrics[row[col["Metric Name"]]] = parse_value(row[col["Metric Value"]], unit)
    return out


def _is_header(line: str) -> bool:
    return line.startswith('"ID"') and '"Metric Name"' in line and '"Metric Value"' in line


def parse_value(text: str, unit: str = "") -> float | None:
    """ "3,840" -> 3840.0; "n/a" -> None; a prefixed unit ("Kbyte") scales to the base unit."""
    t = text.strip().replace(",", "")
    if not t or t.lower() in ("n/a", "nan", "-"):
        return None
    try:
        value = float(t)
    except ValueError:
        return None
    return value * _unit_scale(unit)


def _unit_scale(unit: str) -> float:
    u = unit.strip()
    for base in _BASE_UNITS:
        if u.endswith(base) and u[: -len(base)] in _PREFIX:
            return _PREFIX[u[: -len(base)]]
    return 1.0


# -------------------------------------------------------------------------------------------- comparing

def compare(gpusim_metrics: dict[str, float], ncu_metrics: dict[str, float | None],
            names: tuple[str, ...] | list[str]) -> list[MetricRow]:
    rows = []
    for name in names:
        sim = gpusim_metrics.get(name)
        gpu = ncu_metrics.get(name)
        same = sim is not None and gpu is not None and float(sim) == float(gpu)
        if name in ESTIMATED:
            flag = "estimate" if same else "DIFF (estimate)"
        else:
            flag = "" if same else "DIFF"
        rows.append(MetricRow(name, None if sim is None else float(sim), gpu, flag))
    return rows


# ------------------------------------------------------------------------------------------- profiling

@dataclass
class NcuRun:
    launches: dict[int, NcuLaunch]
    manifest: list[dict]
    error: str = ""
    command: str = ""


def merge(runs: list[NcuRun]) -> NcuRun:
    """Several ``profile`` runs (one per batch of puzzles) as one: each child numbers its launches from 0, so
    each run's IDs, in its manifest and in ncu's rows alike, are shifted past the runs before it."""
    launches: dict[int, NcuLaunch] = {}
    manifest: list[dict] = []
    offset = 0
    for run in runs:
        width = max([e["id"] + 1 for e in run.manifest] + [k + 1 for k in run.launches] + [0])
        for k, launch in run.launches.items():
            launches[k + offset] = NcuLaunch(k + offset, launch.kernel, launch.grid, launch.block, launch.metrics)
        manifest += [{**e, "id": e["id"] + offset} for e in run.manifest]
        offset += width
    errors = [r.error for r in runs if r.error]
    return NcuRun(launches, manifest, "; ".join(errors), " && ".join(r.command for r in runs if r.command))


def load_saved(folder: Path) -> NcuRun:
    """What a run left in ``folder`` (``ncu.csv``, ``ncu_manifest.jsonl``: ``--out``'s copies), read again: for a
    comparison made after the GPU run, e.g. when the run was cut off before its comparison."""
    numbered = sorted(folder.glob("ncu-*.csv"), key=lambda p: int(p.stem.split("-")[1]))
    pairs = [(p, folder / f"ncu_manifest-{p.stem.split('-')[1]}.jsonl") for p in numbered] or \
        [(folder / "ncu.csv", folder / "ncu_manifest.jsonl")]
    runs = []
    for csv_path, manifest_path in pairs:
        if not csv_path.is_file() or not manifest_path.is_file():
            raise FileNotFoundError(f"{folder} has no {csv_path.name} and {manifest_path.name} (saved by --ncu --out)")
        lines = manifest_path.read_text(encoding="utf-8").splitlines()
        launches = parse_csv(csv_path.read_text(encoding="utf-8", errors="replace"))
        runs.append(NcuRun(launches, [json.loads(ln) for ln in lines if ln.strip()],
                           "" if launches else f"no ncu rows in {csv_path}", f"(read from {csv_path})"))
    return merge(runs)


def profile(items: list[dict], size: int, workdir: Path, metrics: list[str], timeout_s: float,
            env: dict | None = None) -> NcuRun:
    """Run the child under ncu; ``items`` are ``{"slug", "path"}``."""
    exe = ncu_path()
    if exe is None:
        return NcuRun({}, [], "Nsight Compute (ncu) is not installed here")
    workdir.mkdir(parents=True, exist_ok=True)
    job, manifest, log = workdir / "ncu_job.json", workdir / "ncu_manifest.jsonl", workdir / "ncu.csv"
    for p in (manifest, log):
        p.unlink(missing_ok=True)
    job.write_text(json.dumps({"items": items, "size": size, "manifest": str(manifest)}), encoding="utf-8")
    cmd = [exe, "--clock-control", "none", "--print-units", "base", "--csv", "--log-file", str(log),
           "--metrics", ",".join(metrics), sys.executable, "-m", "puzzles.graduate.ncu", str(job)]
    root = Path(__file__).resolve().parents[2]
    try:
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout_s)
        stdout, stderr, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        stdout = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr, rc = f"ncu did not finish within {timeout_s:.0f} s", -1
    text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    launches = parse_csv(text) or parse_csv(stdout)
    entries = [json.loads(ln) for ln in manifest.read_text().splitlines() if ln.strip()] if manifest.is_file() else []
    error = ""
    if rc != 0 or not launches:
        tail = " | ".join(ln.strip() for ln in (stderr or stdout or text).splitlines()[-4:] if ln.strip())
        error = f"ncu exited with status {rc}" + (f": {tail[:500]}" if tail else "")
    return NcuRun(launches, entries, error, " ".join(cmd))


def child_main(job_path: str) -> int:
    """Inside ncu: launch each item's benchmark case once and write the manifest (one JSON line per launch)."""
    from .cuda_module import cuda, restore_row_stack

    restore_row_stack()
    nc = cuda()
    os.dup2(2, 1)
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    from .. import registry
    from .backend import CompileFailed, RunFailed
    from .estimates import bench_case
    from .numba_backend import NumbaBackend

    backend = NumbaBackend()
    launch_id = 0
    with open(job["manifest"], "a", encoding="utf-8") as manifest:
        for item in job["items"]:
            puzzle = registry.get(item["slug"])
            try:
                runnable = backend.compile(puzzle, Path(item["path"]))
                case, label = bench_case(puzzle, job["size"])
                if case is None:
                    continue
                dev = runnable._to_device(case)
                for index, step in enumerate(case.launches):
                    runnable._launch(step, dev, 0)
                    manifest.write(json.dumps({"id": launch_id, "slug": puzzle.slug, "case": case.name,
                                               "size": label, "step": index, "kernel": step.kernel}) + "\n")
                    manifest.flush()
                    launch_id += 1
                nc.synchronize()
            except (CompileFailed, RunFailed) as e:
                print(f"ncu child: {puzzle.slug}: {e}", file=sys.stderr)
                if isinstance(e, RunFailed) and e.fatal:
                    return 3
    return 0


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1]))
