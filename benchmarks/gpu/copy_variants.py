"""Why a one-element-per-thread map reads ~60 % of the copy bandwidth on an H200, and what reaches more.

    python3 benchmarks/gpu/copy_variants.py [--sizes 26 24] [--samples 15] [--json OUT]

Times variants of ``out[i] = a[i] + 10`` over float32 arrays (numba-cuda, CUDA events, L2 flushed before
every sample, a spin kernel in front of the first event so the launch is queued before the clock starts,
median of the samples) beside a device-to-device copy of the same bytes, in one run:

* ``k1 +10``: puzzle 6's kernel as written — one element per thread, ``a[i] + 10`` (numba computes it in
  float64: a float32 plus an integer literal), at 128, 256, 512 and 1024 threads per block;
* ``k1 f32``: the same with ``np.float32(10)`` (float32 arithmetic);
* ``k2`` / ``k4``: 2 or 4 elements per thread, all loads issued before the first store (4 loads in flight
  per thread), 256 threads per block, both constants;
* ``stride``: a grid-stride loop over 132 × 8 blocks of 256 (every SM full for the whole launch).

The columns say what Little's law needs: threads an SM holds (``resident``), the bytes of loads each SM
has in flight when every resident warp waits on its loads (``in flight/SM``), and the bandwidth reached
(bytes read + written ÷ time) as a share of the copy's. Runs on the H200 machine with nothing but NumPy and
numba-cuda (no textual, no platformdirs); about 20-30 s there. ``NUMBA_ENABLE_CUDASIM=1 ... --sizes 12
--samples 2`` runs it on numba's simulator on a CPU (the times then mean nothing; it checks the script).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

SIM = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
SMS, THREADS_PER_SM, BLOCKS_PER_SM = 132, 2048, 32      # an H200 (CC 9.0); the device's own count is used
TEN32 = np.float32(10)


@cuda.jit
def k1_int(out, a, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = a[i] + 10


@cuda.jit
def k1_f32(out, a, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = a[i] + TEN32


def _many(items: int, f32: bool):
    """A kernel doing ``items`` elements per thread: block b covers items × blockDim consecutive elements,
    thread t the ones at t, t + blockDim, ... (each load coalesced), every load before any store."""
    @cuda.jit
    def kernel(out, a, n):
        t = cuda.threadIdx.x
        bd = cuda.blockDim.x
        base = cuda.blockIdx.x * bd * items + t
        v = cuda.local.array(items, np.float32)
        for k in range(items):
            i = base + k * bd
            if i < n:
                v[k] = a[i]
        for k in range(items):
            i = base + k * bd
            if i < n:
                if f32:
                    out[i] = v[k] + TEN32
                else:
                    out[i] = v[k] + 10
    return kernel


K2_INT, K2_F32, K4_INT, K4_F32 = _many(2, False), _many(2, True), _many(4, False), _many(4, True)


@cuda.jit
def stride_f32(out, a, n):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        out[i] = a[i] + TEN32
        i += step


@cuda.jit
def fill(buf, value):
    i = cuda.grid(1)
    if i < buf.size:
        buf[i] = value


@cuda.jit
def spin(rounds):
    for _ in range(rounds):
        cuda.nanosleep(1000)


# ------------------------------------------------------------------------------------------------ timing

class Timer:
    """Median event time of a launch: flush L2, spin, event, launch, event."""

    def __init__(self, l2_bytes: int, samples: int):
        self.stream = cuda.stream()
        self.flush = cuda.device_array(1024 if SIM else max(4 * l2_bytes, 256 << 20) // 4, np.uint32)
        self.samples = samples
        self.spin_rounds = 0 if SIM else 200          # ~200 µs: longer than numba's host launch path

    def time(self, launch) -> float:
        s = self.stream
        out = []
        for _ in range(self.samples):
            fill[(self.flush.size + 255) // 256, 256, s](self.flush, 1)
            if self.spin_rounds:
                spin[1, 1, s](self.spin_rounds)
            e0, e1 = cuda.event(), cuda.event()
            e0.record(s)
            launch(s)
            e1.record(s)
            e1.synchronize()
            out.append(e0.elapsed_time(e1) / 1e3)
        return float(np.median(out))


def resident_threads(tpb: int, blocks: int, sms: int) -> int:
    per_sm = min(BLOCKS_PER_SM, THREADS_PER_SM // tpb) * tpb
    return min(per_sm, math.ceil(blocks / sms) * tpb)


def variants(n: int, sms: int):
    """(name, threads per block, elements per thread, blocks, kernel)."""
    out = []
    for tpb in (128, 256, 512, 1024):
        out.append(("k1 +10", tpb, 1, math.ceil(n / tpb), k1_int))
    for tpb in (128, 256, 512, 1024):
        out.append(("k1 f32", tpb, 1, math.ceil(n / tpb), k1_f32))
    for name, items, kern in (("k2 +10", 2, K2_INT), ("k2 f32", 2, K2_F32), ("k4 +10", 4, K4_INT),
                              ("k4 f32", 4, K4_F32)):
        out.append((name, 256, items, math.ceil(n / (256 * items)), kern))
    out.append(("stride f32", 256, math.ceil(n / (sms * 8 * 256)), sms * 8, stride_f32))
    return out


def run_size(log2n: int, timer: Timer, sms: int) -> list[dict]:
    n = 1 << log2n
    a = cuda.to_device(np.arange(n, dtype=np.float32) % 1000)
    out = cuda.device_array(n, np.float32)
    expect = (np.arange(n, dtype=np.float32) % 1000) + np.float32(10)
    moved = 2 * 4 * n
    copy_s = timer.time(lambda s: out.copy_to_device(a, stream=s))
    rows = [{"size": log2n, "variant": "device copy", "tpb": 0, "items": 0, "blocks": 0, "resident": 0,
             "inflight": 0, "seconds": copy_s, "bytes": moved}]
    for name, tpb, items, blocks, kern in variants(n, sms):
        kern[blocks, tpb](out, a, n)     # compile and check once
        cuda.synchronize()
        ok = bool(np.array_equal(out.copy_to_host(), expect))
        seconds = timer.time(lambda s, k=kern, b=blocks, t=tpb: k[b, t, s](out, a, n))
        res = resident_threads(tpb, blocks, sms)
        loads_in_flight = res * (items if name.startswith(("k2", "k4")) else 1)
        rows.append({"size": log2n, "variant": name, "tpb": tpb, "items": items, "blocks": blocks, "resident": res,
                     "inflight": loads_in_flight * 4, "seconds": seconds, "bytes": moved, "correct": ok})
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"{'n':>5} {'variant':<12} {'tpb':>5} {'el/thr':>6} {'blocks':>9} {'resident':>8} {'in flight/SM':>12} "
          f"{'time':>10} {'GB/s':>7} {'% copy':>7}  ok")
    for size in sorted({r["size"] for r in rows}, reverse=True):
        sel = [r for r in rows if r["size"] == size]
        copy = next(r for r in sel if r["variant"] == "device copy")
        copy_bw = copy["bytes"] / copy["seconds"]
        for r in sel:
            bw = r["bytes"] / r["seconds"]
            inflight = f"{r['inflight'] / 1024:.0f} KiB" if r["inflight"] else ""
            print(f"2^{size:<3} {r['variant']:<12} {r['tpb'] or '':>5} {r['items'] or '':>6} {r['blocks'] or '':>9} "
                  f"{r['resident'] or '':>8} {inflight:>12} {r['seconds'] * 1e6:>8.1f}µs {bw / 1e9:>7.0f} "
                  f"{100 * bw / copy_bw:>6.1f}%  {'' if 'correct' not in r else ('yes' if r['correct'] else 'NO')}")


def parse_args(argv, doc: str) -> argparse.Namespace:
    """The options this script and ``transpose_variants.py`` share."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[26, 24], help="log2 of the element counts")
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--json", help="also write the rows here")
    return ap.parse_args(argv)


def device() -> tuple[int, int, str]:
    """(SMs, L2 bytes, name) of the current device (an H200's SMs and a 1 MiB L2 on numba's simulator)."""
    if SIM:
        return SMS, 1 << 20, "numba's simulator (times are meaningless)"
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    return dev.MULTIPROCESSOR_COUNT, dev.L2_CACHE_SIZE, name


def finish(rows: list[dict], started: float, json_path: str | None) -> int:
    """Print the time taken, write the rows, and the exit status: 0 when every output was right."""
    print(f"({time.perf_counter() - started:.1f} s)")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if all(r.get("correct", True) for r in rows) else 1


def main(argv=None) -> int:
    args = parse_args(argv, __doc__)
    started = time.perf_counter()
    sms, l2, name = device()
    print(f"device: {name}, {sms} SMs, L2 {l2 >> 20} MiB; float32 arrays; median of {args.samples} samples, "
          "L2 flushed, launch queued behind a spin")
    timer = Timer(l2, args.samples)
    rows = []
    for log2n in args.sizes:
        rows += run_size(log2n, timer, sms)
    print_table(rows)
    return finish(rows, started, args.json)


if __name__ == "__main__":
    sys.exit(main())
