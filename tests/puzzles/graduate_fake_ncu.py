"""Stands in for Nsight Compute in tests: ``ncu [options] --metrics M1,M2 PROGRAM...``.

It runs PROGRAM (graduate's ncu child) with numba's CUDA simulator in place of a GPU, then writes a CSV in
ncu's format (``--log-file``) for the launches the child's manifest lists. The numbers are gpusim's for
the same launch, except that ``FAKE_NCU_DIFF`` names a metric to report one higher in the first launch, so
a test can see that exactly that difference is flagged. Noise lines go to stdout, as ncu's do.
"""

import csv
import io
import json
import os
import subprocess
import sys


def main(argv):
    log = argv[argv.index("--log-file") + 1]
    metrics = argv[argv.index("--metrics") + 1].split(",")
    program = argv[argv.index("--metrics") + 2:]
    print("==PROF== Connected to process 1234")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    rc = subprocess.run(program, env=env).returncode
    job = json.load(open(program[-1]))
    entries = [json.loads(ln) for ln in open(job["manifest"]) if ln.strip()]

    from puzzles import registry
    from puzzles.graduate.estimates import gpu_model, simulate

    sims = {}
    for item in job["items"]:
        sims[item["slug"]] = simulate(registry.get(item["slug"]), item["path"], job["size"], gpu_model("H200"))
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
                "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"])
    diff = os.environ.get("FAKE_NCU_DIFF", "")
    for e in entries:
        step = sims[e["slug"]]["steps"][e["step"]]
        for m in metrics:
            value = step["metrics"][m] + (1 if e["id"] == 0 and m == diff else 0)
            w.writerow([e["id"], 1234, "python3", "127.0.0.1", f"{e['kernel']}[v1,abc](Array<float, 1, C>)", 1, 7,
                        str(tuple(step["block"])), str(tuple(step["grid"])), 0, "9.0", "Command line profiler metrics",
                        m, "byte" if m.startswith("dram") else "", f"{value:,}"])
    with open(log, "w") as f:
        f.write(out.getvalue())
    print("==PROF== Disconnected from process 1234")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
