"""Two gpusims on every puzzle: each case of every reference solution and of every wrong solution that
launches, in both, compared bit for bit (every buffer after the launches) and fault for fault (class, line,
block, thread, array, index, count). For a change to the engine that must not change behaviour.

    git archive main gpusim | tar -x -C /tmp/other
    python -m benchmarks.compare_engines --other /tmp/other [PUZZLE ...]

The puzzles, solutions and cases are this checkout's; only the gpusim package differs. Each launch has the
judge's step budget (``puzzles.checker.MAX_STEPS``: steps of instrumented lane-work, a 256^3 matmul needs
about 50 million), so every reference runs to its end and a wrong file that never ends stops where the
checker stops it. Multi-device cases run
their launches in issue order with every array in one memory (as on one GPU).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RUNNER = r"""
import copy, hashlib, importlib.util, json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
root = Path(sys.argv[2])
sys.path.insert(1, str(root))
import numpy as np
import gpusim
assert Path(gpusim.__file__).resolve().is_relative_to(Path(sys.argv[1]).resolve()), gpusim.__file__
from puzzles.checker import MAX_STEPS
from puzzles.registry import all_puzzles
only = set(json.loads(sys.argv[4]))
res = {}
for p in all_puzzles():
    if only and p.slug not in only and str(p.number) not in only:
        continue
    files = [root / "solutions" / p.solution_file]
    for w in sorted((root / "tests" / "puzzles" / "wrong").glob(p.solution_file[:-3] + "__*.py")):
        # files that never launch, and the cheats that attack the judge at import, are left out
        if "expect=compile" not in w.read_text().splitlines()[0] and "__cheat_" not in w.name:
            files.append(w)
    for path in files:
        spec = importlib.util.spec_from_file_location(f"compared_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for case in p.make_cases():
            bufs = {k: copy.deepcopy(v) for k, v in case.buffers.items()}
            faults = []
            try:
                for step in case.launches:
                    r = gpusim.launch(getattr(mod, step.kernel), step.grid, step.block, step.arg_values(bufs),
                                      step.shared_mem, max_steps=MAX_STEPS)
                    faults += [[type(f).__name__, f.lineno, list(f.block or ()), list(f.thread or ()), f.array,
                                [int(i) for i in f.index or ()], f.count] for f in r.faults]
                    if r.faults:
                        break
            except Exception as e:
                faults.append(["raised", type(e).__name__, str(e)[:300]])
            out = {k: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()
                   for k, v in bufs.items() if isinstance(v, np.ndarray)}
            res[f"{path.stem} | {case.name}"] = {"out": out, "faults": faults}
json.dump(res, open(sys.argv[3], "w"))
"""


def run(gpusim_root: Path, out: Path, puzzles: list[str] = ()) -> dict:
    subprocess.run([sys.executable, "-c", RUNNER, str(gpusim_root), str(ROOT), str(out), json.dumps(list(puzzles))],
                   check=True,
                   timeout=7200, cwd=tempfile.gettempdir())
    return json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--other", type=Path, required=True, help="a folder holding the other gpusim package")
    ap.add_argument("puzzles", nargs="*", metavar="PUZZLE", help="only these puzzles (numbers or slugs)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        other = run(args.other, Path(tmp) / "other.json", args.puzzles)
        this = run(ROOT, Path(tmp) / "this.json", args.puzzles)
    outputs = [k for k in this if k in other and this[k]["out"] != other[k]["out"]]
    faults = [k for k in this if k in other and this[k]["faults"] != other[k]["faults"]]
    only = sorted(set(this) ^ set(other))
    print(f"{len(this)} cases: outputs differ in {len(outputs)}, faults in {len(faults)}, "
          f"{len(only)} in one run only")
    for k in outputs:
        print(f"  output  {k}: {sorted(n for n in this[k]['out'] if this[k]['out'][n] != other[k]['out'].get(n))}")
    for k in faults:
        print(f"  faults  {k}: {other[k]['faults'][:2]} -> {this[k]['faults'][:2]}")
    for k in only:
        print(f"  only in {'this' if k in this else 'the other'} run: {k}")
    sys.exit(1 if outputs or faults or only else 0)


if __name__ == "__main__":
    main()
