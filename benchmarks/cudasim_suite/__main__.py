"""Run numba-cuda's own test suite on numba's simulator and on gpusim, and print the counts side by side.

    python -m benchmarks.cudasim_suite                         # simulator, GPUSIM_CUDASIM=1, =strict
    python -m benchmarks.cudasim_suite --engines strict --check-floor    # what CI runs
    python -m benchmarks.cudasim_suite --unskip                # test_warp_ops and doc_examples, on gpusim
    python -m benchmarks.cudasim_suite --out results/ --write  # keep the records; rewrite docs/cudasim-suite.md
    python -m benchmarks.cudasim_suite --engines strict --faults raise   # races, uninitialised reads raised

The suite is the one in numba-cuda's wheel (``numba.cuda.tests``), run as the repository's ``testing/`` folder
runs it: ``--pyargs numba.cuda.tests``, its warning filters (every warning an error, less the ones it lists), its
conftest's option and fixture (``plugin.py``), with ``NUMBA_ENABLE_CUDASIM=1``. Needs ``requirements.txt``
beside this file, and gpusim installed (``pip install -e .``: ``GPUSIM_CUDASIM`` is read by the start-up hook).

``baseline.json`` holds the simulator's counts (measured with numba-cuda 0.30.4) and the floor: the number of
tests that must pass under ``GPUSIM_CUDASIM=strict``; ``--check-floor`` exits 1 below it. Raise the floor as
gpusim runs more of the language.

``--unskip`` runs, instead, the tests numba's simulator skips because it lacks what they need (warp intrinsics,
a ``cuda`` imported inside a function): ``test_warp_ops`` and ``doc_examples``, on gpusim only, less those in
``LEFT_OUT``. (``test_montecarlo`` creates a million ``cuda.random`` states: it needs the drop-in's vectorised
set-up of them, since numba-cuda's loop runs in object mode under its simulator, for hours.)
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BASELINE = HERE / "baseline.json"
DOC = ROOT / "docs" / "cudasim-suite.md"

#: what --unskip runs
UNSKIPPED = ["numba.cuda.tests.cudapy.test_warp_ops"] + [
    f"numba.cuda.tests.doc_examples.test_{m}" for m in
    ("cg", "cpointer", "cpu_gpu_compat", "ffi", "globals", "laplace", "matmul", "montecarlo", "random",
     "reduction", "sessionize", "ufunc", "vecadd")]
#: un-skipped modules not run, and why
LEFT_OUT: dict[str, str] = {}
#: un-skipped modules that cost much more than the rest, and what (measured 2026-12-02 on the shared 2-core machine)
COSTLY = {
    "numba.cuda.tests.doc_examples.test_random":
        "its kernel fills a 701x900x719 float32 array (453 million elements) from 2,097,152 threads, about 2e11 "
        "steps of work (the drop-in's step budget grows with a launch's threads: 250,000 a thread); it passes "
        "under strict in 95 s of CPU (313 s wall on the loaded machine) at 9.3 GB resident when run alone (11.2 GB "
        "at the peak of a whole --unskip run), 7.3 GB of it the race records of the array (16 bytes an element)",
}

ENGINES = {
    "simulator": ("numba's simulator", None),
    "gpusim": ("gpusim, GPUSIM_CUDASIM=1", "1"),
    "strict": ("gpusim, GPUSIM_CUDASIM=strict", "strict"),
}

#: the warning filters numba-cuda's testing/pytest.ini sets (every warning is an error, except these)
IGNORED_WARNINGS = [
    r".*Grid size .* will likely result in GPU under-utilization.+:numba.cuda.core.errors.NumbaPerformanceWarning",
    r".*Grid size .* will likely result in GPU under-utilization.+:numba.core.errors.NumbaPerformanceWarning",
    r".*dynamic initialization is not supported for a function-scope static __shared__.*:UserWarning",
    r".*The keyword argument .nopython=False. was supplied.+:numba.core.errors.NumbaDeprecationWarning",
    r".*nvJitLink is not installed or too old.*:RuntimeWarning",
    r".*libnvJitLink.*is too old.*:RuntimeWarning",
    r".*float16 relies on LTO for performance. LTO requires nvjitlink.*:numba.cuda.core.errors.NumbaPerformanceWarning",
    r".*The CUDA driver version is older than the backend version.*:RuntimeWarning",
    r'.*class "double4" was declared deprecated.*:UserWarning',
    r"All-NaN slice encountered:RuntimeWarning",
    r"Mean of empty slice:RuntimeWarning",
    r"(invalid value|divide by zero) encountered in.+:RuntimeWarning",
    r".*Compilation is falling back to object mode WITHOUT looplifting enabled.*:numba.cuda.core.errors.NumbaWarning",
    r"\nCompilation is falling back to object mode WITHOUT looplifting enabled.*:numba.core.errors.NumbaWarning",
    r"overflow encountered in scalar .+:RuntimeWarning",
    r".*Host array used in CUDA kernel will incur copy overhead.*:numba.cuda.core.errors.NumbaPerformanceWarning",
    r"NVRTC log messages.*Architectures prior to.*are deprecated.*:UserWarning",
    r"Benchmark machine_info is different:pytest_benchmark.logger.PytestBenchmarkWarning",
]


def _ini(tests: str) -> str:
    addopts = f"--pyargs {tests}"
    if importlib.util.find_spec("pytest_benchmark") is not None:
        addopts = "--benchmark-disable " + addopts
    lines = ["[pytest]", "minversion = 8.0", "consider_namespace_packages = true", f"addopts = {addopts}",
             "filterwarnings =", "    error"]
    lines += [f"    ignore:{w}" for w in IGNORED_WARNINGS]
    return "\n".join(lines) + "\n"


def run_engine(engine: str, out: Path, unskip: bool, timeout: float, tests: str = "numba.cuda.tests",
               faults: str | None = None) -> dict:
    """One run of the suite (or of the packages or modules in ``tests``, space-separated); returns the
    per-test records and the run's wall time."""
    label, mode = ENGINES[engine]
    if faults is not None and mode is not None:
        label += f", GPUSIM_CUDASIM_FAULTS={faults}"
    record = out / f"{engine}{'-unskip' if unskip else ''}.jsonl"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "pytest.ini").write_text(_ini(tests))
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUSIM_CUDASIM")}
        env["NUMBA_ENABLE_CUDASIM"] = "1"
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
        if mode is not None:
            env["GPUSIM_CUDASIM"] = mode
            if faults is not None:
                env["GPUSIM_CUDASIM_FAULTS"] = faults
        cmd = [sys.executable, "-m", "pytest", "-c", str(Path(tmp) / "pytest.ini"), "--rootdir", tmp,
               "-p", "benchmarks.cudasim_suite.plugin", "-p", "no:cacheprovider", "-q", "--no-header",
               f"--suite-record={record}"]
        if unskip:
            cmd.append("--unskip-gpusim-targets")
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - t0
    (out / f"{record.stem}.log").write_text(proc.stdout + proc.stderr)
    tests = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    closing = next((ln for ln in reversed(proc.stdout.splitlines()) if " in " in ln and ("passed" in ln or
                                                                                        "failed" in ln)), "")
    if not tests:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
        raise SystemExit(f"{label}: the suite recorded no test (exit {proc.returncode}):\n{tail}")
    if mode is not None and not any("gpusim" in t for t in tests):
        raise SystemExit(f"{label}: GPUSIM_CUDASIM had no effect; install gpusim (pip install -e .) so that its "
                         "start-up hook is in site-packages")
    return {"engine": engine, "label": label, "wall": wall, "tests": tests, "closing": closing}


def counts(run: dict) -> dict:
    """pytest's own counts (its closing line: modules skipped whole have no per-test record), and the
    launches and kernel seconds the records add up to."""
    c = {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0}
    found = re.findall(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?)", run["closing"])
    for n, word in found:
        key = {"error": "failed", "errors": "failed", "xpassed": "failed"}.get(word, word)
        c[key] += int(n)
    if not found:  # the run was cut short: count what was recorded
        for t in run["tests"]:
            c[{"error": "failed", "xpassed": "failed"}.get(t["outcome"], t["outcome"])] += 1
    c["launches"] = sum(t.get("launches", 0) for t in run["tests"])
    c["kernel_seconds"] = sum(t.get("kernel_seconds", 0.0) for t in run["tests"])
    c["gpusim"] = sum(t.get("gpusim", 0) for t in run["tests"])
    c["fallback"] = sum(t.get("fallback", 0) for t in run["tests"])
    return c


def summary(runs: list[dict], baseline: dict, whole_suite: bool = True) -> str:
    rows = ["| engine | passed | failed | skipped | xfailed | wall s | kernel s | launches (gpusim / fallback) |",
            "|---|---:|---:|---:|---:|---:|---:|---|"]
    if whole_suite and not any(r["engine"] == "simulator" for r in runs):
        b = baseline["simulator"]
        rows.append(f"| numba's simulator (recorded, numba-cuda {baseline['numba_cuda']}) | {b['passed']} | "
                    f"{b['failed']} | {b['skipped']} | {b['xfailed']} | | | |")
    for r in runs:
        c = counts(r)
        split = f"{c['gpusim']} / {c['fallback']}" if r["engine"] != "simulator" else ""
        rows.append(f"| {r['label']} | {c['passed']} | {c['failed']} | {c['skipped']} | {c['xfailed']} | "
                    f"{r['wall']:.0f} | {c['kernel_seconds']:.1f} | {c['launches']} {split} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.cudasim_suite", description=__doc__.split("\n")[0])
    p.add_argument("--engines", default=None,
                   help="comma-separated, of: simulator, gpusim (GPUSIM_CUDASIM=1), strict (default: all three; "
                        "with --unskip, the two gpusim ones)")
    p.add_argument("--unskip", action="store_true",
                   help="run test_warp_ops and doc_examples, which numba's simulator skips (gpusim engines only)")
    p.add_argument("--tests", default=None,
                   help="the packages or modules to run, comma-separated (default: numba.cuda.tests, all of it)")
    p.add_argument("--out", type=Path, default=None, help="keep the per-test records and logs here")
    p.add_argument("--check-floor", action="store_true",
                   help="exit 1 if fewer tests pass under strict than baseline.json's strict_floor")
    p.add_argument("--write", action="store_true", help=f"rewrite {DOC.relative_to(ROOT)} from this run")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per run (default 1800)")
    p.add_argument("--faults", default=None, metavar="POLICY",
                   help="GPUSIM_CUDASIM_FAULTS for the gpusim engines (default: the drop-in's, races and "
                        "uninitialised reads reported; raise: every fault an error)")
    args = p.parse_args(argv)
    if args.engines is None:
        args.engines = "gpusim,strict" if args.unskip else "simulator,gpusim,strict"
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    tests = args.tests.split(",") if args.tests else UNSKIPPED if args.unskip else ["numba.cuda.tests"]
    bad = [e for e in engines if e not in ENGINES]
    if bad:
        p.error(f"unknown engine(s) {', '.join(bad)}; choose from {', '.join(ENGINES)}")
    baseline = json.loads(BASELINE.read_text())
    version = importlib.metadata.version("numba-cuda")
    out = args.out or Path(tempfile.mkdtemp(prefix="cudasim-suite-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"numba-cuda {version}'s test suite (numba.cuda.tests, run as its testing/ folder runs it)"
          + (", test_warp_ops and doc_examples un-skipped" if args.unskip else ""))
    if version != baseline["numba_cuda"]:
        print(f"note: baseline.json was measured with numba-cuda {baseline['numba_cuda']}")
    runs = []
    for e in engines:
        runs.append(run_engine(e, out, args.unskip, args.timeout, " ".join(tests), args.faults))
        c = counts(runs[-1])
        print(f"  {runs[-1]['label']}: {c['passed']} pass, {c['failed']} fail, {c['skipped']} skip "
              f"({runs[-1]['wall']:.0f} s)", flush=True)
    print(summary(runs, baseline, whole_suite=tests == ["numba.cuda.tests"]))
    from .causes import comparison, write_doc

    sim = next((r for r in runs if r["engine"] == "simulator"), None)
    for r in runs:
        if sim is not None and r is not sim:
            print(comparison(sim, r))
    print(f"records: {out}")
    if args.write:
        write_doc(DOC, runs, baseline, version, args.unskip, LEFT_OUT, COSTLY)
        print(f"wrote {DOC.relative_to(ROOT)}")
    if args.check_floor:
        strict = next((r for r in runs if r["engine"] == "strict"), None)
        if strict is None:
            p.error("--check-floor needs the strict engine")
        floor = baseline["strict_floor"]
        passed = counts(strict)["passed"]
        verdict = "ok" if passed >= floor else "BELOW THE FLOOR"
        print(f"strict floor (benchmarks/cudasim_suite/baseline.json): {floor}; passed under strict: {passed}: "
              f"{verdict}")
        if passed < floor:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
