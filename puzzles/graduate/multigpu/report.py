"""A multi-GPU run as one table (terminal and Markdown) and one JSON document.

One row per puzzle for its own cases (how many passed on the ranks), then one row per benchmark case:

* **correct**: the outputs against the spec (``checks.py``); **vs library**: each rank's result against the
  library's own collective on the same inputs ("bit-exact", "within bound", or "DIFF");
* **time**: the median iteration, each iteration the slowest rank's (``clock.py``);
* **busbw**: nccl-tests' bus bandwidth, S / time x the bus factor (``collectives.py``); **link BW**: the
  most bytes the exchange sent over one directed link, over the time (any puzzle);
* **library time / library busbw**: the library's collective at the same S, timed the same way;
  **ours/library**: our busbw over the library's;
* **per link**: bytes per directed link between rank processes, gpusim's count for the same case and what
  the exchange sent (``checks.py``); "each" when every link carried the same;
* **NVLink TX (NVML)**: the bytes each GPU sent over its NVLinks per run, by NVML's counters
  (``nvlink.py``; NCCL runs only, "n/a" where the driver does not give them).
"""

from __future__ import annotations

from .environment import MULTICAST_OFF
from .tasks import size_label

COLUMNS = ("#", "puzzle", "case", "correct", "vs library", "time", "busbw", "link BW", "library time",
           "library busbw", "ours/library", "per link: gpusim", "sent", "NVLink TX (NVML)")


def progress_line(task, outcome: dict) -> str:
    name = f"  {outcome['number']} {outcome['slug']}"
    if task.kind == "case":
        return f"{name} case {outcome['case']!r}: {outcome['status'][:200]}"
    bits = [f"{name} {outcome['label'] or task.id}: {outcome['status'][:200]}"]
    lib = outcome.get("library")
    if lib:
        bits.append("= library bit for bit" if lib["bit_exact"] else
                    ("library: within the summation bound" if lib["ok"] else "library: DIFFERS"))
    t = (outcome.get("timing") or {}).get("median_s")
    if t:
        lt = (outcome.get("library_timing") or {}).get("median_s")
        ours = fmt_time(t) + (f", busbw {fmt_rate(outcome['busbw'])}" if outcome.get("busbw") else
                              f", {fmt_rate(outcome['link_bandwidth'])} per link" if outcome.get("link_bandwidth")
                              else "")
        theirs = f" (library {fmt_time(lt)}, busbw {fmt_rate(outcome.get('lib_busbw'))})" if lt else ""
        bits.append(ours + theirs)
    return "; ".join(bits)


def document(opts, outcomes: list[dict], hello: list[dict], seconds: float) -> dict:
    return {"schema": 1, "mode": opts.mode, "devices": opts.devices, "ranks": hello, "warmup": opts.warmup,
            "iters": opts.iters, "sizes": list(opts.sizes), "bench_elements": opts.bench_elements,
            "multicast_off": dict(MULTICAST_OFF), "rows": rows(outcomes), "tasks": outcomes,
            "seconds": round(seconds, 1)}


def rows(outcomes: list[dict]) -> list[dict]:
    """Own cases folded into one row per puzzle; benchmark tasks one row each."""
    out, by_slug = [], {}
    for o in outcomes:
        if o["kind"] == "case":
            row = by_slug.get(o["slug"])
            if row is None:
                row = by_slug[o["slug"]] = {"number": o["number"], "slug": o["slug"], "kind": "cases",
                                            "passed": 0, "total": 0, "failure": ""}
                out.append(row)
            row["total"] += 1
            row["passed"] += o["correct"]
            if not o["correct"] and not row["failure"]:
                row["failure"] = f"case {o['case']!r}: {o['status']}"
        else:
            out.append({**{k: o.get(k) for k in ("number", "slug", "label", "status", "correct", "library",
                                                   "busbw", "algbw", "lib_busbw", "lib_algbw", "nbytes",
                                                   "link_bandwidth", "links", "plan_seconds", "collective",
                                                   "nvlink", "library_nvlink")},
                        "kind": "bench", "time_s": (o.get("timing") or {}).get("median_s"),
                        "ci_s": _ci(o.get("timing")), "lib_time_s": (o.get("library_timing") or {}).get("median_s"),
                        "spin_s": (o.get("timing") or {}).get("spin_s")})
    for row in out:
        if row["kind"] == "cases":
            row["correct"] = row["passed"] == row["total"] and row["total"] > 0
    # by puzzle: its own cases, then its benchmark cases from the smallest
    return sorted(out, key=lambda r: (r["number"], r["kind"] != "cases", r.get("nbytes") or 0))


def _ci(timing: dict | None):
    return (timing["ci_low_s"], timing["ci_high_s"]) if timing else None


def cells(row: dict) -> list[str]:
    if row["kind"] == "cases":
        return [str(row["number"]), row["slug"], "own cases", f"{row['passed']}/{row['total']}"] + [""] * 10
    lib = row.get("library")
    versus = "" if lib is None else ("bit-exact" if lib["bit_exact"] else "within bound" if lib["ok"] else "DIFF")
    ratio = row["busbw"] / row["lib_busbw"] if row.get("busbw") and row.get("lib_busbw") else None
    links = row.get("links") or {}
    status = "pass" if row["status"] == "pass" else ("FAIL" if row["status"].startswith("FAIL") else "error")
    return [str(row["number"]), row["slug"], row.get("label") or "", status, versus, fmt_time(row.get("time_s")),
            fmt_rate(row.get("busbw")), fmt_rate(row.get("link_bandwidth")), fmt_time(row.get("lib_time_s")),
            fmt_rate(row.get("lib_busbw")), f"{ratio:.3g}" if ratio else "", per_link(links.get("gpusim")),
            per_link(links.get("sent")), nvlink_cell(row.get("nvlink"))]


def nvlink_cell(per_rank: list | None) -> str:
    """NVML's NVLink bytes sent per run, per GPU ("each" when equal); why not, when it could not be read."""
    if not per_rank:
        return ""
    sent = {f"GPU{i}": int(round(r["tx"])) for i, r in enumerate(per_rank) if r and "tx" in r}
    if not sent:
        return "n/a"
    return per_link(sent) if len(sent) > 1 else size_label(next(iter(sent.values())))


def text_table(table_rows: list[dict]) -> str:
    grid = [list(COLUMNS)] + [cells(r) for r in table_rows]
    widths = [max(len(r[i]) for r in grid) for i in range(len(COLUMNS))]
    right = {0, 5, 6, 7, 8, 9, 10}
    lines = []
    for k, r in enumerate(grid):
        lines.append("  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
                     .rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(table_rows: list[dict]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---:" if i in (0, 5, 6, 7, 8, 9, 10) else "---"
                                                               for i in range(len(COLUMNS))) + "|"]
    lines += ["| " + " | ".join(cells(r)) + " |" for r in table_rows]
    return "\n".join(lines)


def header(doc: dict) -> list[str]:
    ranks = doc["ranks"]
    where = ", ".join(f"rank {h['rank']} {h.get('device', 'CPU')}" for h in ranks) or "no rank reported"
    first = ranks[0] if ranks else {}
    peer = all(all(h.get("peer_access") or [False]) for h in ranks)
    lines = [f"mode {doc['mode']} ({_mode_words(doc['mode'])}); {doc['devices']} rank process(es): {where}",
             f"torch {first.get('torch', '?')}, back end {first.get('backend', '?')}"
             + (f", NCCL {first['nccl']}" if first.get("nccl") else "")
             + (f"; peer access between the GPUs: {'yes' if peer else 'no'}"
                if first.get("peer_access") is not None else "")]
    envs = {tuple(sorted((h.get("env") or {}).items())) for h in ranks}
    if len(envs) == 1 and dict(next(iter(envs))) == dict(MULTICAST_OFF):
        lines.append("every rank process had " + " ".join(f"{k}={v}" for k, v in MULTICAST_OFF.items()))
    else:
        lines.append("WARNING: the rank processes' multicast variables differ from "
                     + " ".join(f"{k}={v}" for k, v in MULTICAST_OFF.items()) + f": {[h.get('env') for h in ranks]}")
    lines.append(f"timing: {doc['warmup']} warm-up iterations, then the median of {doc['iters']}, each the slowest "
                 "rank's; busbw = S/t x 2(n-1)/n (all-reduce) or x (n-1)/n (reduce-scatter, all-gather), as "
                 "nccl-tests defines it")
    if doc["mode"] != "nccl":
        lines.append("times here are gloo's and the CPU's: they exercise the code path and measure nothing about "
                     "GPU links")
    return lines


def _mode_words(mode: str) -> str:
    return {"nccl": "NCCL, one GPU per rank, kernels by numba-cuda",
            "same-gpu": "gloo staged through the host, every rank on GPU 0, kernels by numba-cuda",
            "dry-run": "gloo on the CPU, kernels on gpusim"}[mode]


def problems(table_rows: list[dict]) -> list[str]:
    out = []
    for r in table_rows:
        if r["kind"] == "cases" and r["failure"]:
            out.append(f"{r['number']} {r['slug']}: {r['failure']}")
        elif r["kind"] == "bench" and r["status"] != "pass":
            out.append(f"{r['number']} {r['slug']} {r.get('label') or ''}: {r['status']}")
        elif r["kind"] == "bench" and r.get("library") and not r["library"]["ok"]:
            worst = max(r["library"]["ranks"], key=lambda c: c.get("worst_ratio", 0))
            out.append(f"{r['number']} {r['slug']} {r['label']}: differs from the library's collective "
                       f"({worst['differing']} of {worst['elements']} elements; {worst['rule']})")
    return out


def notes(table_rows: list[dict]) -> list[str]:
    out = []
    for r in table_rows:
        links = r.get("links") or {}
        if r["kind"] == "bench" and links.get("gpusim") and links.get("sent") and links["gpusim"] != links["sent"]:
            out.append(f"{r['number']} {r['slug']} {r['label']}: the exchange sent {per_link(links['sent'])} per link "
                       f"where gpusim counted {per_link(links['gpusim'])} (a kernel that loads a peer's element "
                       "twice crosses the link twice in gpusim, once in the exchange)")
    return out


def text(doc: dict) -> str:
    parts = header(doc) + ["", text_table(doc["rows"])]
    for title, lines in (("wrong", problems(doc["rows"])), ("notes", notes(doc["rows"]))):
        if lines:
            parts += [f"\n{title}:"] + [f"  {ln}" for ln in lines]
    ok = sum(1 for r in doc["rows"] if r["correct"])
    parts.append(f"\n{ok} of {len(doc['rows'])} rows correct ({doc['seconds']:.0f} s).")
    return "\n".join(parts)


def markdown(doc: dict) -> str:
    parts = ["# Chapter 10 on several GPUs", ""] + [f"- {ln}" for ln in header(doc)] + ["", markdown_table(doc["rows"])]
    for title, lines in (("Wrong", problems(doc["rows"])), ("Notes", notes(doc["rows"]))):
        if lines:
            parts += ["", f"## {title}", ""] + [f"- {ln}" for ln in lines]
    return "\n".join(parts) + "\n"


def fmt_time(s: float | None) -> str:
    if not s:
        return ""
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def fmt_rate(b: float | None) -> str:
    if not b:
        return ""
    if b >= 1e8:
        return f"{b / 1e9:.1f} GB/s"
    return f"{b / 1e6:.1f} MB/s" if b >= 1e5 else f"{b / 1e3:.1f} kB/s"


def per_link(links: dict[str, int] | None) -> str:
    if not links:
        return ""
    values = set(links.values())
    if len(values) == 1:
        return f"{size_label(next(iter(values)))}" + (" each" if len(links) > 1 else f" ({next(iter(links))})")
    return ", ".join(f"{k} {size_label(v)}" for k, v in links.items())


