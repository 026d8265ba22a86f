"""Time one benchmark case under numba's CUDA simulator. Run with NUMBA_ENABLE_CUDASIM=1 (a subprocess)."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.cases import CASES  # noqa: E402


def main() -> None:
    name, size = sys.argv[1], int(sys.argv[2])
    kern, grid, block, args = CASES[name](size)
    t0 = time.perf_counter()
    kern[grid, block](*args)
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "checksum": float(sum(float(x.sum()) for x in args[-1:]))}))


if __name__ == "__main__":
    main()
