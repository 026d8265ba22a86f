"""Record what another gpusim (the engine before the typed IR) computes for random kernels, for the
before/after test (tests/gpusim/test_random_before_after.py).

The kernels come from the generator of tests/gpusim/test_lanes_random.py (hypothesis, a fixed seed). Each
runs in the other gpusim through its public API (``gpusim.launch``) on an int64 input and on a float64 one;
what it wrote (a SHA-256 of the output array) and its faults (class and line) go to
tests/gpusim/data/random_kernels_before.json.

    git archive df0008a gpusim | tar -x -C /tmp/base
    python -m benchmarks.random_kernels_before --baseline /tmp/base [--count 120]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "gpusim" / "data" / "random_kernels_before.json"
sys.path.insert(0, str(ROOT / "tests" / "gpusim"))

#: input dtypes every kernel runs on (int64: the generator's own; float64: float arithmetic and conversions on top)
INPUTS = ("int64", "float64")

#: what runs in the other gpusim: {"source", "grid", "block", "input"} per line of stdin -> one JSON per line
RUNNER = r"""
import json, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, ".")
import gpusim
from random_kernels_io import launch_one
folder = Path(tempfile.mkdtemp(prefix="random_kernels_"))
for n, line in enumerate(sys.stdin):
    case = json.loads(line)
    print(json.dumps(launch_one(gpusim, folder, f"before_{n}", case)), flush=True)
"""


def collect(count: int, seed: int) -> list[dict]:
    """``count`` distinct kernels and launch shapes from the random-kernel generator, the same for one seed."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st
    from test_lanes_random import GEOMETRIES, kernels

    found: dict[str, tuple[int, int]] = {}

    @hseed(seed)
    @settings(max_examples=count * 5, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(source=kernels(), geometry=st.sampled_from(GEOMETRIES))
    def gather(source, geometry):
        found.setdefault(source, geometry)

    gather()
    longest = sorted(found, key=len, reverse=True)[:count]   # the generator's early examples are tiny
    return [{"source": s, "grid": found[s][0], "block": found[s][1]} for s in sorted(longest)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", type=Path, required=True, help="a folder holding the other gpusim package")
    ap.add_argument("--count", type=int, default=120, help="how many kernels")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    kernels = collect(args.count, args.seed)
    cases = [dict(k, input=dt) for k in kernels for dt in INPUTS]
    done = subprocess.run([sys.executable, "-c", RUNNER, str(args.baseline.resolve())],
                          input="".join(json.dumps(c) + "\n" for c in cases),
                          capture_output=True, text=True, timeout=3600, cwd=ROOT / "tests" / "gpusim")
    if done.returncode:
        sys.exit(done.stderr)
    results = iter(json.loads(line) for line in done.stdout.splitlines())
    for k in kernels:
        k["results"] = {dt: next(results) for dt in INPUTS}
    OUT.write_text(json.dumps({"baseline": str(args.baseline), "seed": args.seed, "kernels": kernels}, indent=1)
                   + "\n")
    faulted = sum(1 for k in kernels for r in k["results"].values() if r.get("faults") or "compile_error" in r)
    print(f"{len(cases)} launches of {len(kernels)} kernels recorded in {OUT.relative_to(ROOT)} "
          f"({faulted} with faults or compile errors)")


if __name__ == "__main__":
    main()
