"""How long a launch takes on a real GPU, from what gpusim counted: limits with named, physical parameters.

``gpusim.roofline.estimate(report, gpu)`` calls ``time_launch(Workload.of(report), gpu)``. The model is a
handful of throughput limits and one latency chain, each computed from counts gpusim makes exactly (the
metrics of ``gpusim.observe``: sectors, DRAM segments, shared-memory wavefronts, atomics, FLOPs per dtype,
the latency rounds of ``gpusim.observe.rounds``) and the launch geometry::

    time = launch + max(latency + max(dram, l2),  blocks,  shared,  atomics,  compute)

* **launch** — what a launch costs the GPU before and after its blocks run (``Machine.launch_s``).
* **dram** — DRAM bytes (``dram__bytes_read.sum + dram__bytes_write.sum``: the distinct 64-byte segments the
  launch touches) ÷ the DRAM bandwidth a copy reaches (``Machine.dram_bandwidth``; not the datasheet's).
* **l2** — sectors moved between the SMs and L2 (loads, stores and atomics: ``l1tex__t_sectors_*``) × 32 B ÷
  ``Machine.l2_bandwidth``. An uncoalesced access moves more sectors than bytes it needs, and they cost here
  even where DRAM moves each segment once (a naive transpose re-reads its columns' sectors from L2).
* **latency** — *Little's law*. A warp waits for its rounds one after another (a round: loads issued
  together, then the wait for the first use; ``gpusim.observe.rounds``): DRAM rounds ``dram_latency_s``, L2
  rounds ``l2_latency_s``, shared-memory rounds ``shared_latency_s``, each barrier ``barrier_s``, and each
  floating-point instruction of a thread ``fp_latency_s`` (as if they formed one dependent chain; a special
  function as the FMAs it stands for, below). A block lives as long as its slowest warp; the SMs hold
  ``resident`` blocks at a time (occupancy: threads, blocks and shared memory per SM, ``Machine``), so the
  blocks run in ``waves = ceil(blocks / (SMs × resident))`` and the chain costs
  ``waves × mean block chain`` (never less than the longest block's chain: the tail). Equivalently: the bytes
  in flight are what the resident warps have asked for, and bandwidth = bytes in flight ÷ latency.
  Why ``latency + max(dram, l2)`` and not the max of the two: with a queue in front of DRAM the wait of a
  round is the idle latency plus its queueing delay, and for a queue with utilisation ρ the delay grows like
  ``latency / (1 - ρ)``; solving bandwidth = (rounds in flight ÷ wait) for ρ gives exactly
  ``time = rounds × latency ÷ rounds in flight + bytes ÷ bandwidth``. So a kernel with few bytes in flight
  (one 4-byte load per thread) never reaches the copy bandwidth, and one with many (four loads in flight per
  thread, or a grid-stride loop with every SM full) comes close.
* **blocks** — the GPU starts blocks at a limited rate (``Machine.block_rate``, blocks per second for the
  whole GPU): a launch of 2^21 blocks of 8 threads takes at least 2^21 ÷ rate however little each does.
* **shared** — shared-memory wavefronts (``l1tex__data_pipe_lsu_wavefronts_mem_shared_*``, bank conflicts
  included) plus shared-atomic passes, at one per clock per SM (32 banks × 4 bytes).
* **atomics** — the busiest global address's atomic operations, one after another at
  ``Machine.atomic_rate`` (atomics to one address are serialised in the L2 slice that owns it; atomics to
  many addresses are limited by their sectors in ``l2``).
* **compute** — FLOPs per dtype ÷ (the SMs' FLOP/s roof for that dtype × ``Machine.fp_efficiency``), a
  special function (exp, log, sqrt, sin, ...) counted at what it costs in FMA slots, not as one FLOP.

The estimate says which term binds (``Estimate.limit``: "dram", "l2", "latency", "blocks", "shared",
"atomics", "compute" or "launch") and gives every term (``Estimate.parts``).

Parameters of the H200 (``H200``) and where each number comes from:

* SMs 132, clock 1.98 GHz, 2,048 threads, 32 blocks and 228 KB of shared memory per SM, 1 KB of it reserved
  per block: the device's own report (graduate mode's device line) and the CUDA C++ Programming Guide's
  table for compute capability 9.0. Registers per thread are not known to gpusim: occupancy ignores them.
* ``dram_bandwidth`` 4.26 TB/s: device-to-device copies of 1 GiB on this H200, read + written bytes
  (graduate mode measures it in every run; docs/graduate.md). The datasheet says 4.8.
* ``shared_latency_s`` 30 cycles, ``fp_latency_s`` 4 cycles (a dependent FFMA), ``l2_latency_s`` 270
  cycles: the order of magnitude published microbenchmarks of Volta to Hopper report (not fitted; they are
  second-order terms here).
* ``atomic_rate``: one operation per clock on one address (NVIDIA's Kepler whitepaper gave one operation
  per clock for atomics to a common address; assumed for the H200, not measured there: no puzzle at scale
  hammers one address).
* ``fp_efficiency`` 0.49: float32 FMA chains measured 32.9 TFLOP/s on this H200 against the SMs' roof of
  66.9 (graduate mode's peaks line).
* ``special_flops_fp32`` 16: the SFU returns 16 results per clock per SM against 128 FMAs (CUDA C++
  Programming Guide, arithmetic instruction throughput, CC 9.0), so one float32 exp costs 8 FMA slots,
  16 FLOPs. ``special_flops_fp64`` 40: float64 functions have no hardware unit; libdevice computes them
  with a polynomial of about 20 double-precision FMAs. (A ``math.exp`` of a float64 — ``acc = 0.0``
  makes one — is the usual way a puzzle kernel becomes compute-bound.)
* Fitted to graduate mode's H200 run of the reference solutions at 2^24 (2026-12-01), on the *fit* set
  only (puzzles whose number is not a multiple of 3), never per puzzle; ``benchmarks/gpu/estimate_fit.py``
  prints the held-out set separately and ``--fit`` redoes the fit: ``launch_s`` 2.9 µs (back-to-back tiny
  launches read 2.3-3.4 µs each), ``dram_latency_s`` 380 ns (750 cycles: an idle HBM round trip as a warp
  sees it), ``l2_bandwidth`` 7.0 TB/s, ``block_rate`` 1.4 G blocks/s (one block per 94 ns per SM; 2^21
  blocks of 8 threads read 1.27 ms) and ``barrier_s`` 100 ns. docs/graduate.md has the fit and the
  meas/est of every puzzle.

Other GPUs (H100 SXM, A100, RTX 4090, T4) get machines *derived* from the H200's: their own SM counts,
clocks, occupancy limits and datasheet bandwidth × the H200's copy / datasheet ratio; the DRAM latency kept
in nanoseconds, the other latencies in cycles, L2 bandwidth and block rate scaled by SMs × clock. Not
measured.

Without the launch geometry or the rounds (a report made before they were counted, or scaled counts) the
model falls back to ``launch + max(dram, compute)``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, replace

from .device import WARP_SIZE
from .observe.flops import flop_total
from .workload import Workload

MODEL_VERSION = "rounds-2"   # 2: remainder trips of runtime-unrolled loops wait one by one
SECTOR = 32
LIMITS = ("launch", "dram", "l2", "latency", "blocks", "shared", "atomics", "compute")


@dataclass(frozen=True)
class Machine:
    """The physical parameters the model needs of one GPU (see the module docstring for each one's source)."""

    sms: int
    clock_hz: float
    max_threads_per_sm: int
    max_blocks_per_sm: int
    shared_per_sm: int                 # bytes of shared memory the blocks of one SM may use together
    shared_reserved_per_block: int     # bytes the system keeps per resident block
    dram_bandwidth: float              # bytes/s (read + written) a device-to-device copy reaches
    l2_bandwidth: float                # bytes/s of sectors between the SMs and L2
    dram_latency_s: float              # a DRAM round trip on an idle memory system, as a warp sees it
    l2_latency_s: float
    shared_latency_s: float
    barrier_s: float                   # one syncthreads: the barrier and the skew of the warps meeting at it
    fp_latency_s: float                # one dependent floating-point operation
    block_rate: float                  # blocks per second the GPU can start
    launch_s: float                    # a launch's fixed cost on the GPU
    atomic_rate: float                 # atomic operations per second on one address
    fp_efficiency: float               # the fraction of the FLOP/s roof dependent FMA chains reach
    special_flops_fp32: float = 16     # FLOP-equivalents of one float32 special function (exp, log, sqrt, ...)
    special_flops_fp64: float = 40     # ... and of one float64 special function
    note: str = ""

    def flop_equivalents(self, flops: dict[str, dict[str, int]]) -> dict[str, float]:
        """FLOPs per dtype with special functions at their cost in FMA issue slots (an FMA is 2 FLOPs)."""
        out = {}
        for dt, n in flop_total(flops).items():
            special = flops.get(dt, {}).get("special", 0)
            cost = self.special_flops_fp64 if dt == "float64" else self.special_flops_fp32
            out[dt] = n - special + special * cost
        return out

    def dependent_ops(self, flops: dict[str, dict[str, int]]) -> float:
        """Floating-point instructions of every lane, a special function as the FMA chain it stands for."""
        total = 0.0
        for dt, ops in flops.items():
            special = ops.get("special", 0)
            cost = self.special_flops_fp64 if dt == "float64" else self.special_flops_fp32
            total += sum(ops.values()) - special + special * cost / 2
        return total

    def resident_blocks(self, w: Workload) -> int:
        """Blocks one SM holds at a time: the smallest of the thread, block and shared-memory limits."""
        threads = w.warps_per_block * WARP_SIZE
        limit = min(self.max_blocks_per_sm, self.max_threads_per_sm // max(threads, 1))
        if w.shared_bytes_per_block:
            limit = min(limit, self.shared_per_sm // (w.shared_bytes_per_block + self.shared_reserved_per_block))
        return max(limit, 1)


def cycles(n: float, clock_hz: float) -> float:
    return n / clock_hz


H200_CLOCK = 1.98e9

#: The H200 SXM as measured (copy bandwidth, FMA chains) and fitted (launch, latency, L2, block rate, barrier).
H200 = Machine(
    sms=132, clock_hz=H200_CLOCK, max_threads_per_sm=2048, max_blocks_per_sm=32,
    shared_per_sm=228 * 1024, shared_reserved_per_block=1024,
    dram_bandwidth=4.26e12, l2_bandwidth=7.0e12,
    dram_latency_s=0.38e-6, l2_latency_s=cycles(270, H200_CLOCK), shared_latency_s=cycles(30, H200_CLOCK),
    barrier_s=0.10e-6, fp_latency_s=cycles(4, H200_CLOCK),
    block_rate=1.4e9, launch_s=2.9e-6, atomic_rate=H200_CLOCK, fp_efficiency=32.9 / 66.9,
    note="measured and fitted on an H200 (docs/graduate.md)")


def derived(datasheet_bandwidth: float, sms: int, clock_hz: float, max_threads_per_sm: int,
            max_blocks_per_sm: int, shared_per_sm: int, reserved: int, note: str) -> Machine:
    """A machine for another GPU, scaled from the H200's (see the module docstring): not measured."""
    h = H200
    scale = sms * clock_hz / (h.sms * h.clock_hz)
    return replace(
        h, sms=sms, clock_hz=clock_hz, max_threads_per_sm=max_threads_per_sm, max_blocks_per_sm=max_blocks_per_sm,
        shared_per_sm=shared_per_sm, shared_reserved_per_block=reserved,
        dram_bandwidth=datasheet_bandwidth * h.dram_bandwidth / 4.8e12,
        l2_bandwidth=h.l2_bandwidth * scale, block_rate=h.block_rate * scale,
        l2_latency_s=h.l2_latency_s * h.clock_hz / clock_hz,
        shared_latency_s=h.shared_latency_s * h.clock_hz / clock_hz,
        fp_latency_s=h.fp_latency_s * h.clock_hz / clock_hz, barrier_s=h.barrier_s * h.clock_hz / clock_hz,
        atomic_rate=clock_hz, note=note)


def fingerprint(machines) -> str:
    """Changes whenever the model or any machine's parameters change (part of graduate mode's cache key)."""
    text = MODEL_VERSION + repr(sorted((k, asdict(m)) for k, m in machines.items() if m is not None))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Times:
    """Every term of the model for one launch, in seconds, and what they came from."""

    parts: dict[str, float]
    seconds: float
    limit: str
    memory_seconds: float        # the largest memory-side term: latency + max(dram, l2), blocks, shared, atomics
    compute_seconds: float
    resident_blocks: int = 0     # per SM
    waves: int = 0


def time_launch(w: Workload, bandwidth: float, roof: dict[str, float], machine: Machine | None) -> Times:
    """The model's time for one launch (``bandwidth`` and ``roof``: the GPU's datasheet peaks, used where
    ``machine`` is None)."""
    per_dtype = machine.flop_equivalents(w.flops) if machine else flop_total(w.flops)
    dram_bytes = w.m("dram__bytes_read.sum") + w.m("dram__bytes_write.sum")
    efficiency = machine.fp_efficiency if machine else 1.0
    compute = sum(n / (roof.get(dt, roof["float32"]) * efficiency) for dt, n in per_dtype.items())
    if machine is None or not w.geometry or "gpusim__rounds_dram_sum" not in w.metrics:
        launch = machine.launch_s if machine else LAUNCH_OVERHEAD_S
        dram = dram_bytes / (machine.dram_bandwidth if machine else bandwidth)
        parts = {"launch": launch, "dram": dram, "compute": compute}
        return _times(parts, dram, compute, launch)
    m = machine
    sectors = sum(w.m(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum") for op in ("ld", "st", "atom", "red"))
    wavefronts = (w.m("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
                  + w.m("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum") + w.m("gpusim__shared_atomic_passes"))
    blocks = max(w.num_blocks, 1)
    resident = m.resident_blocks(w)
    waves = math.ceil(blocks / (m.sms * resident))
    threads = blocks * w.threads_per_block
    fp_chain = m.dependent_ops(w.flops) / threads * m.fp_latency_s

    def chain(agg: str) -> float:
        return (w.m(f"gpusim__rounds_dram_{agg}") * m.dram_latency_s + w.m(f"gpusim__rounds_l2_{agg}") * m.l2_latency_s
                + w.m(f"gpusim__rounds_shared_{agg}") * m.shared_latency_s
                + w.m(f"gpusim__barriers_{agg}") * m.barrier_s)

    latency = max(waves * (chain("sum") / blocks + fp_chain), chain("max") + fp_chain)
    parts = {
        "launch": m.launch_s,
        "dram": dram_bytes / m.dram_bandwidth,
        "l2": sectors * SECTOR / m.l2_bandwidth,
        "latency": latency,
        "blocks": blocks / m.block_rate,
        "shared": wavefronts / (m.sms * m.clock_hz),
        "atomics": w.m("gpusim__atomic_max_per_address") / m.atomic_rate,
        "compute": compute,
    }
    memory = max(latency + max(parts["dram"], parts["l2"]), parts["blocks"], parts["shared"], parts["atomics"])
    return _times(parts, memory, compute, m.launch_s, resident, waves)


LAUNCH_OVERHEAD_S = 3e-6   # the fallback's launch cost where a GPU has no machine (the roofline's old constant)


def _times(parts: dict[str, float], memory: float, compute: float, launch: float, resident: int = 0,
           waves: int = 0) -> Times:
    body = max(memory, compute)
    if launch >= body:
        limit = "launch"
    elif compute >= memory:
        limit = "compute"
    else:
        limit = _memory_limit(parts, memory)
    return Times(parts, launch + body, limit, memory, compute, resident, waves)


def _memory_limit(parts: dict[str, float], memory: float) -> str:
    queue = parts.get("latency", 0.0) + max(parts.get("dram", 0.0), parts.get("l2", 0.0))
    for name in ("blocks", "shared", "atomics"):
        if name in parts and parts[name] >= memory and parts[name] > queue:
            return name
    if parts.get("latency", 0.0) > max(parts.get("dram", 0.0), parts.get("l2", 0.0)):
        return "latency"
    return "l2" if parts.get("l2", 0.0) > parts.get("dram", 0.0) else "dram"
