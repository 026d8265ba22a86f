"""Time the instrumentation observers on synthetic 2^20-lane access events.

    python benchmarks/bench_instrumentation.py [log2_lanes]

Each event is one warp-level access by every lane of a 2^20-thread launch (256 threads per block), the
shape the engine sends for a 1-D map; the table gives milliseconds per event for each observer.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from gpusim.observe.counts import CountsObserver
from gpusim.observe.events import AccessEvent, ArrayInfo, LaunchInfo
from gpusim.observe.metrics import TrafficObserver
from gpusim.observe.trace import TraceObserver


def _events(n: int, tpb: int):
    rng = np.random.default_rng(0)
    gtid = np.arange(n, dtype=np.int64)
    block = gtid // tpb
    warp = block * ((tpb + 31) // 32) + (gtid % tpb) // 32
    phase = np.zeros(n, np.int64)
    t = gtid % tpb

    def glob(dtype, size):
        return ArrayInfo(1, "a", "global", np.dtype(dtype), (size,), 0x7000_0000)

    def shared(dtype, size):
        return ArrayInfo(2, "sm", "shared", np.dtype(dtype), (size,), 0)

    return {
        "global ld coalesced f32": (glob(np.float32, n), "ld", gtid),
        "global ld stride-32 f32": (glob(np.float32, 32 * n), "ld", gtid * 32),
        "global ld random gather f32": (glob(np.float32, n), "ld", rng.integers(0, n, n)),
        "global red random 1024 bins i32": (glob(np.int32, 1024), "red", rng.integers(0, 1024, n)),
        "shared ld stride-1 f32": (shared(np.float32, tpb), "ld", t),
        "shared ld stride-33 f32": (shared(np.float32, 33 * tpb), "ld", t * 33),
        "shared ld random f32": (shared(np.float32, tpb), "ld", rng.integers(0, tpb, n)),
        "shared ld stride-1 f64": (shared(np.float64, tpb), "ld", t),
    }, (gtid, block, warp, phase)


def main(log2_lanes: int = 20, reps: int = 5) -> None:
    n, tpb = 1 << log2_lanes, 256
    launch = LaunchInfo("bench", "bench.py", (n // tpb, 1, 1), (tpb, 1, 1), 0)
    events, (gtid, block, warp, phase) = _events(n, tpb)
    makers = {"traffic": TrafficObserver, "counts": CountsObserver, "trace (bounded)": TraceObserver,
              "trace (full)": lambda: TraceObserver(full=True)}
    print(f"ms per event, {n} lanes, {tpb} threads per block")
    print(f"{'event':34s}" + "".join(f"{k:>17s}" for k in makers))
    for name, (info, kind, flat) in events.items():
        ev = AccessEvent(info, kind, 1, gtid, block, warp, flat.astype(np.int64), phase)
        row = []
        for make in makers.values():
            best = float("inf")
            for _ in range(reps):
                obs = make()
                obs.start(launch, [info] if info.space == "global" else [])
                if info.space == "shared":
                    obs.on_array(info)
                t0 = time.perf_counter()
                obs.on_access(ev)
                best = min(best, time.perf_counter() - t0)
            row.append(best * 1e3)
        print(f"{name:34s}" + "".join(f"{v:17.1f}" for v in row))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
