"""Are the fuzzer's "valid" kernels valid numba-cuda? Compile and run N of them with numba-cuda on a real GPU.

    python3 benchmarks/gpu/fuzz_valid_on_gpu.py 300          # seeds 0..299 of the valid family

Prints one line per kernel numba-cuda refuses (seed and the first line of its error) and the counts. Each
kernel is also run with gpusim when gpusim imports; a kernel gpusim refuses (a compile error) that numba-cuda
compiles is listed as "valid numba hidden" — the other direction of the same question. Needs only numpy and
numba-cuda (not textual or platformdirs).
"""

from __future__ import annotations

import importlib.util
import random
import sys
import tempfile
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from numba import cuda  # noqa: E402

from benchmarks.fuzz.cases import make_args  # noqa: E402
from benchmarks.fuzz.kernels import valid_kernel  # noqa: E402


def _module(source: str, folder: Path, name: str):
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    try:
        import gpusim
    except Exception:                     # gpusim needs nothing more than numpy and numba: should import
        gpusim = None
    folder = Path(tempfile.mkdtemp())
    ran = refused = hidden = 0
    for seed in range(count):
        source, launch = valid_kernel(random.Random(seed))
        kern = _module(source, folder, f"valid_{seed}").kern
        args = make_args(launch["args"])
        try:
            device = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
            kern[launch["grid"], launch["block"]](*device)
            cuda.synchronize()
            ran += 1
        except Exception as e:
            refused += 1
            print(f"numba-cuda refuses seed {seed}: {type(e).__name__}: {str(e).strip().splitlines()[0][:160]}")
            continue
        if gpusim is not None:
            try:
                gpusim.launch(kern, launch["grid"], launch["block"], make_args(launch["args"]))
            except gpusim.KernelCompileError as e:
                hidden += 1
                print(f"valid numba hidden, seed {seed}: {str(e).splitlines()[0][:160]}")
            except Exception as e:
                print(f"gpusim internal error, seed {seed}: {type(e).__name__}: {e}")
    print(f"\n{count} valid-family kernels: numba-cuda ran {ran}, refused {refused}; "
          f"gpusim refused {hidden} that numba-cuda ran")


if __name__ == "__main__":
    main()
