"""Stands in for the GPU worker (puzzles/graduate/worker.py) in tests: the same protocol, no GPU.

Per task it reports every case passed and a fixed time (``TIME_S``), and writes the benchmark outputs the
spec expects, except for the puzzles named in the job's ``fake`` map: "crash" exits mid-task, "hang" never
answers, "wrong" writes wrong outputs. With ``FAKE_WORKER_TASKS`` set to a file, each worker appends the
(slug, back end) pairs it was given.
"""

import copy
import json
import os
import sys
import time

import numpy as np

TIME_S = 1e-3
DEVICE = {"name": "NVIDIA H200", "compute_capability": [9, 0], "sms": 132, "clock_hz": 1.98e9,
          "l2_bytes": 62914560, "memory_bytes": 150 << 30, "numba_cuda": "fake", "label": "NVIDIA H200 (fake)"}
PEAKS = {"copy_bandwidth": 4e12, "copy_by_size": {str(1 << 30): 4e12}, "roof": {"float32": 6.69e13,
         "float64": 3.34e13, "float16": 1.34e14}, "fma_float32": 6e13}


def main():
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    job = json.loads(sys.stdin.read())
    fake = json.loads(os.environ.get("FAKE_WORKER", "{}"))
    if os.environ.get("FAKE_WORKER_TASKS"):          # which tasks each worker was given, one JSON line per worker
        with open(os.environ["FAKE_WORKER_TASKS"], "a") as f:
            f.write(json.dumps([[t["slug"], t["backend"]] for t in job["tasks"]]) + "\n")

    def send(msg):
        proto.write(json.dumps(msg) + "\n")
        proto.flush()

    from puzzles import registry
    from puzzles.graduate.estimates import bench_case
    from puzzles.graduate.workload import compulsory_traffic

    if job["measure_device"]:
        send({"type": "device", "device": DEVICE, "peaks": PEAKS})
    for task in job["tasks"]:
        puzzle = registry.get(task["slug"])
        send({"type": "start", "slug": puzzle.slug, "backend": task["backend"]})
        what = fake.get(puzzle.slug)
        if what == "crash":
            os._exit(7)
        if what == "hang":
            time.sleep(600)
        case, label = bench_case(puzzle, job["size"])
        expected = puzzle.spec(**copy.deepcopy(dict(case.buffers)))
        outputs = {k: np.asarray(expected[k], dtype=case.buffers[k].dtype) for k in puzzle.outputs}
        if what == "wrong":
            first = puzzle.outputs[0]
            outputs[first] = outputs[first].copy()
            outputs[first].flat[-1] += 1
        path = os.path.join(job["outputs_dir"], f"{puzzle.slug}.{task['backend']}.npz")
        np.savez(path, **outputs)
        traffic = compulsory_traffic(case, puzzle.outputs)
        timing = {"median_s": TIME_S, "ci_low_s": TIME_S, "ci_high_s": TIME_S, "samples_s": [TIME_S] * 10,
                  "spin_s": 5e-5, "enqueue_s": 1e-5, "flush_bytes": 1 << 28, "ungated_median_s": TIME_S,
                  "stopped": "converged", "count": 10}
        n = len(puzzle.make_cases())
        send({"type": "result", "slug": puzzle.slug, "backend": task["backend"], "result": {
            "cases": {"passed": n, "total": n, "failure": None},
            "bench": {"case": case.name, "size": label, "note": puzzle.bench_note if label == "max" else "",
                      "read_bytes": traffic.read_bytes, "write_bytes": traffic.write_bytes,
                      "outputs_file": path, "timing": timing}}})
    send({"type": "done"})


if __name__ == "__main__":
    main()
