"""How well gpusim's time model predicts a GPU: measured / estimated per puzzle, fit set and held-out set,
before (the datasheet roofline graduate mode printed) and after (``gpusim.timing_model`` now).

    python3 benchmarks/gpu/estimate_fit.py [DATA.json | GRADUATE.json [ESTIMATES.json]] [--fit] [--pack OUT]

* ``DATA.json`` (default ``benchmarks/gpu/data/h200_2026-12-01_g24.json``): a packed run — each puzzle's
  measured time and, per launch, the ``Workload`` gpusim counted (``gpusim.workload``).
* ``GRADUATE.json [ESTIMATES.json]``: the ``graduate.json`` of a ``gpu-puzzles graduate --out DIR`` run and the
  simulator cache beside it (default ``DIR/estimates.json``); its entries must carry workloads (graduate
  mode writes them since the time model has them). ``--pack OUT`` writes such a pair as a DATA file.
* ``--fit``: choose the fitted parameters (``FITTED``) again on the fit set and print the table with them
  too. The committed values in ``gpusim.timing_model.H200`` came from this fit, rounded.

The sets are fixed before any fit: a puzzle is **held out** when its catalogue number is a multiple of 3
(a third of the puzzles); the others are the **fit** set. The fit minimises the sum of squared log(meas/est)
over the fit set's rows that are memory-bound by the datasheet roofline (the rows graduate mode marks
``mem``), timed by the device (a row whose host enqueueing outlasted the spin in front of it measured the
host, not the GPU: it is listed and left out), and never looks at the held-out rows.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gpusim.roofline import GPUS  # noqa: E402
from gpusim.timing_model import Machine, time_launch  # noqa: E402
from gpusim.workload import Workload  # noqa: E402

DEFAULT_DATA = ROOT / "benchmarks" / "gpu" / "data" / "h200_2026-12-01_g24.json"
FITTED = ("launch_s", "dram_latency_s", "l2_bandwidth", "block_rate", "barrier_s")
UNITS = {"launch_s": (1e-6, "µs"), "dram_latency_s": (1e-9, "ns"), "l2_bandwidth": (1e12, "TB/s"),
         "block_rate": (1e9, "G blocks/s"), "barrier_s": (1e-9, "ns")}


@dataclass
class Row:
    number: int
    slug: str
    size: str
    time_s: float
    before_s: float | None          # what graduate mode printed beside it (the datasheet roofline)
    roofline_bound: str             # "memory" / "compute" by that roofline
    host_bound: bool                # the host's enqueueing outlasted the spin: the time is the host's
    workloads: list[Workload] | None

    @property
    def held_out(self) -> bool:
        return self.number % 3 == 0

    @property
    def at_scale(self) -> bool:
        return self.size != "max"


# ------------------------------------------------------------------------------------------------- input

def _row(g: dict, r: dict, steps: list[dict] | None) -> Row:
    timing = (r.get("extra") or {}).get("timing") or {}
    host_bound = bool(timing.get("spin_s") and timing.get("enqueue_s") and timing["enqueue_s"] > timing["spin_s"])
    workloads = [Workload.from_dict(s["workload"]) for s in steps] if steps else None
    return Row(r["number"], r["slug"], r["size"], r["time_s"], r.get("estimate_s"), r.get("bound") or "memory",
               host_bound, workloads)


def from_graduate(graduate: Path, estimates: Path) -> tuple[dict, list[Row]]:
    g = json.loads(graduate.read_text())
    entries = json.loads(estimates.read_text()).get("entries", {}) if estimates.is_file() else {}
    gpu = g["device"]["name"].removeprefix("NVIDIA ").strip()
    found: dict[tuple[str, str], list[dict]] = {}
    for e in entries.values():
        steps = e.get("steps") or []
        if steps and all("workload" in s for s in steps) and e.get("gpu") in (gpu, g["device"]["name"]):
            found.setdefault((e["puzzle"], e["size"]), steps)
    rows = [_row(g, r, found.get((r["slug"], r["size"]))) for r in g["rows"] if r.get("time_s")]
    return g, rows


def from_data(path: Path) -> tuple[dict, list[Row]]:
    d = json.loads(path.read_text())
    table = [Workload.from_dict(w) for w in d["workloads"]]
    rows = [Row(r["number"], r["slug"], r["size"], r["time_s"], r.get("before_s"), r["roofline_bound"],
                r["host_bound"], [table[i] for i in r["workloads"]] if r.get("workloads") else None)
            for r in d["rows"]]
    return d, rows


#: what the time model reads of the metrics (a packed file keeps only these)
MODEL_METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum",
                 *(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum" for op in ("ld", "st", "atom", "red")),
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")


def pack(meta: dict, rows: list[Row], out: Path) -> None:
    """The run as one file: each row's measurement and indices into one table of distinct workloads."""
    table: list[dict] = []
    index: dict[str, int] = {}

    def ref(w: Workload) -> int:
        d = w.to_dict()
        d["metrics"] = {k: v for k, v in d["metrics"].items() if v and (k in MODEL_METRICS or k.startswith("gpusim__"))}
        key = json.dumps(d, sort_keys=True)
        if key not in index:
            index[key] = len(table)
            table.append(d)
        return index[key]
    packed = [{"number": r.number, "slug": r.slug, "size": r.size, "time_s": r.time_s, "before_s": r.before_s,
               "roofline_bound": r.roofline_bound, "host_bound": r.host_bound,
               "workloads": [ref(w) for w in r.workloads] if r.workloads else None} for r in rows]
    doc = {"device": meta["device"], "peaks": meta["peaks"], "size": meta["size"], "rows": packed,
           "workloads": table}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, separators=(",", ":")) + "\n")


# ------------------------------------------------------------------------------------------------- model

def estimate_s(row: Row, machine: Machine, gpu_name: str = "H200") -> float:
    g = GPUS[gpu_name]
    return sum(time_launch(w, g.bandwidth, g.flops, machine).seconds for w in row.workloads)


def limits(row: Row, machine: Machine, gpu_name: str = "H200") -> str:
    g = GPUS[gpu_name]
    names = [time_launch(w, g.bandwidth, g.flops, machine).limit for w in row.workloads]
    return names[0] if len(set(names)) == 1 else "/".join(sorted(set(names)))


def fit_rows(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r.workloads and not r.held_out and not r.host_bound and r.roofline_bound == "memory"]


def loss(rows: list[Row], machine: Machine) -> float:
    return sum(math.log(r.time_s / estimate_s(r, machine)) ** 2 for r in rows)


def fit(rows: list[Row], machine: Machine, rounds: int = 6) -> Machine:
    """Coordinate descent on the log of each fitted parameter, over the fit set only."""
    best, best_loss = machine, loss(rows, machine)
    step = math.log(2.0)
    for _ in range(rounds):
        for name in FITTED:
            for factor in (-3, -2, -1, -0.5, 0.5, 1, 2, 3):
                trial = replace(best, **{name: getattr(best, name) * math.exp(factor * step)})
                value = loss(rows, trial)
                if value < best_loss:
                    best, best_loss = trial, value
        step /= 2
    return best


# ------------------------------------------------------------------------------------------------ report

def _us(s: float | None) -> str:
    if s is None:
        return "—"
    return f"{s * 1e6:,.1f} µs" if s < 1e-3 else f"{s * 1e3:,.2f} ms"


def _ratio(a: float, b: float | None) -> str:
    return "—" if not b else f"{a / b:.2f}"


def params_line(m: Machine) -> str:
    return ", ".join(f"{n} {getattr(m, n) / UNITS[n][0]:.3g} {UNITS[n][1]}" for n in FITTED)


def table(rows: list[Row], machines: dict[str, Machine]) -> list[str]:
    names = list(machines)
    head = f"{'#':>3}  {'puzzle':<24} {'set':<8} {'size':<5} {'measured':>10}  {'before':>10} {'m/e':>5}"
    for n in names:
        head += f"  {n + ' est':>12} {'m/e':>5} {'limit':<8}"
    out = [head, "-" * len(head)]
    for r in rows:
        kind = "held-out" if r.held_out else "fit"
        line = f"{r.number:>3}  {r.slug:<24} {kind:<8} {r.size:<5} {_us(r.time_s):>10}  {_us(r.before_s):>10} " \
               f"{_ratio(r.time_s, r.before_s):>5}"
        for n in names:
            if r.workloads:
                est = estimate_s(r, machines[n])
                line += f"  {_us(est):>12} {r.time_s / est:>5.2f} {limits(r, machines[n]):<8}"
            else:
                line += f"  {'—':>12} {'—':>5} {'':<8}"
        notes = []
        if r.host_bound:
            notes.append("host-bound time, left out")
        if r.roofline_bound == "compute":
            notes.append("compute")
        if not r.workloads:
            notes.append("no workload")
        out.append(line + ("  (" + "; ".join(notes) + ")" if notes else ""))
    return out


def summary(rows: list[Row], machines: dict[str, Machine]) -> list[str]:
    out = []
    groups = [("memory-bound at scale", lambda r: r.at_scale and r.roofline_bound == "memory"),
              ("single-block (max)", lambda r: not r.at_scale and r.roofline_bound == "memory"),
              ("compute-bound", lambda r: r.roofline_bound == "compute")]
    for label, keep in groups:
        for held in (False, True):
            sel = [r for r in rows if keep(r) and r.held_out == held and r.workloads and not r.host_bound]
            if not sel:
                continue
            line = f"{label:<22} {'held-out' if held else 'fit':<8} n={len(sel):<3}"
            before = [r.time_s / r.before_s for r in sel if r.before_s]
            line += "  before " + _stats(before)
            for n, m in machines.items():
                line += f"  {n} " + _stats([r.time_s / estimate_s(r, m) for r in sel])
            out.append(line)
    return out


def _stats(ratios: list[float]) -> str:
    if not ratios:
        return "—"
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    within = sum(1 for x in ratios if 0.5 <= x <= 2.0)
    return f"[{min(ratios):.2f}, {max(ratios):.2f}] geo {geo:.2f}, within 2x {within}/{len(ratios)}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--fit", action="store_true", help="fit the parameters again on the fit set")
    ap.add_argument("--pack", type=Path, help="write the run as a DATA file")
    args = ap.parse_args(argv)
    files = args.files or [DEFAULT_DATA]
    first = json.loads(files[0].read_text())
    if len(files) == 1 and "workloads" in first:
        meta, rows = from_data(files[0])
    else:
        estimates = files[1] if len(files) > 1 else files[0].with_name("estimates.json")
        meta, rows = from_graduate(files[0], estimates)
    if args.pack:
        pack(meta, rows, args.pack)
        print(f"wrote {args.pack} ({sum(1 for r in rows if r.workloads)} of {len(rows)} rows with workloads)")
        return 0
    machine = GPUS["H200"].machine
    machines = {"now": machine}
    if args.fit:
        fitted = fit(fit_rows(rows), machine)
        machines["refit"] = fitted
    dev = meta["device"]
    print(f"gpusim's time model against {dev.get('label', dev.get('name'))}, benchmark size {meta.get('size')}")
    print(f"copy bandwidth measured {meta['peaks']['copy_bandwidth'] / 1e12:.2f} TB/s; model's dram_bandwidth "
          f"{machine.dram_bandwidth / 1e12:.2f} TB/s")
    for n, m in machines.items():
        print(f"{n}: {params_line(m)}")
    print("before: the datasheet roofline graduate mode printed (DRAM bytes / 4.8 TB/s or FLOPs / roof, + 3 µs)")
    print("held out: puzzles whose number is a multiple of 3; the fit uses the others (memory-bound rows only)\n")
    print("\n".join(table(rows, machines)))
    print()
    print("\n".join(summary(rows, machines)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
