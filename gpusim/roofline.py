"""A launch's time on a named GPU: ``report.estimate("H200")``, and the table of GPUs it knows.

The time comes from ``gpusim.timing_model`` (launch cost, DRAM and L2 traffic, latency rounds over the
launch's waves of blocks, block starts, shared memory, atomics, FLOPs; its docstring says where every
parameter comes from). ``Estimate`` keeps the roofline's view beside it: DRAM bytes, FLOPs, the arithmetic
intensity (FLOP per DRAM byte) and the ridge point (the intensity at which the datasheet's FLOP/s and
bandwidth meet for this kernel's dtype mix: below it a kernel is memory-bound).

* ``GPU.bandwidth`` and ``GPU.flops`` are the vendor datasheet figures (NVIDIA product pages and
  architecture whitepapers) for the CUDA cores, without tensor cores and without sparsity: gpusim kernels
  are plain SIMT code. ``GPU.machine`` holds the model's physical parameters; a GPU without one (built from
  measured peaks for a device the table does not know) is estimated as launch + max(DRAM bytes ÷ bandwidth,
  FLOPs ÷ FLOP/s).
* ``Estimate.seconds = overhead_seconds + max(memory_seconds, compute_seconds)``, as before; ``limit`` names
  the term that binds and ``parts`` gives every term.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .timing_model import H200, LAUNCH_OVERHEAD_S, MODEL_VERSION, Machine, derived, time_launch
from .workload import Workload

__all__ = ["GPU", "GPUS", "Estimate", "LAUNCH_OVERHEAD_S", "MODEL_VERSION", "estimate", "get_gpu"]

T = 1e12


@dataclass(frozen=True)
class GPU:
    """Datasheet peaks (DRAM bandwidth in bytes/s, non-tensor FLOP/s per dtype) and the model's machine."""

    name: str
    bandwidth: float
    flops: dict[str, float] = field(hash=False)
    source: str = ""
    machine: Machine | None = None


GPUS: dict[str, GPU] = {g.name: g for g in (
    GPU("H100 SXM", 3.35e12, {"float64": 34 * T, "float32": 67 * T, "float16": 133.8 * T},
        "NVIDIA H100 datasheet (SXM5: HBM3 3.35 TB/s, FP64 34, FP32 67 TFLOPS); H100 whitepaper: FP16 "
        "non-tensor 133.8 TFLOPS",
        derived(3.35e12, 132, 1.98e9, 2048, 32, 228 * 1024, 1024, "derived from the H200 (same SMs), not measured")),
    GPU("H200", 4.8e12, {"float64": 34 * T, "float32": 67 * T, "float16": 133.8 * T},
        "NVIDIA H200 datasheet (SXM: HBM3e 4.8 TB/s, FP64 34, FP32 67 TFLOPS); FP16 non-tensor as H100 SXM",
        H200),
    GPU("A100 80GB", 2.039e12, {"float64": 9.7 * T, "float32": 19.5 * T, "float16": 78 * T},
        "NVIDIA A100 datasheet (80GB SXM: HBM2e 2,039 GB/s, FP64 9.7, FP32 19.5 TFLOPS); A100 whitepaper: "
        "FP16 non-tensor 78 TFLOPS",
        derived(2.039e12, 108, 1.41e9, 2048, 32, 164 * 1024, 1024, "derived from the H200, not measured")),
    GPU("RTX 4090", 1.008e12, {"float64": 1.29 * T, "float32": 82.6 * T, "float16": 82.6 * T},
        "NVIDIA Ada (AD102) whitepaper: GeForce RTX 4090, GDDR6X 1,008 GB/s, FP32 82.6 TFLOPS, FP16 "
        "non-tensor 82.6, FP64 1/64 of FP32",
        derived(1.008e12, 128, 2.52e9, 1536, 24, 100 * 1024, 1024, "derived from the H200, not measured")),
    GPU("T4", 320e9, {"float64": 0.253 * T, "float32": 8.1 * T, "float16": 16.2 * T},
        "NVIDIA T4 datasheet (GDDR6 320 GB/s, FP32 8.1 TFLOPS); Turing: FP16 non-tensor 2x FP32, FP64 "
        "1/32 of FP32",
        derived(320e9, 40, 1.59e9, 1024, 16, 64 * 1024, 0, "derived from the H200, not measured")),
)}
_ALIASES = {"h100": "H100 SXM", "h100sxm": "H100 SXM", "h100sxm5": "H100 SXM", "h200": "H200",
            "h200sxm": "H200", "a100": "A100 80GB", "a10080gb": "A100 80GB", "rtx4090": "RTX 4090",
            "4090": "RTX 4090", "t4": "T4"}


def get_gpu(name: str | GPU) -> GPU:
    """A GPU from the table by name ("H100 SXM", "h100", "A100", "4090", ...)."""
    if isinstance(name, GPU):
        return name
    key = "".join(ch for ch in str(name).lower() if ch.isalnum())
    full = _ALIASES.get(key) or next((g for g in GPUS if "".join(c for c in g.lower() if c.isalnum()) == key),
                                     None)
    if full is None:
        raise KeyError(f"unknown GPU {name!r}; known: {', '.join(GPUS)}")
    return GPUS[full]


@dataclass(frozen=True)
class Estimate:
    """The model's time for one launch on one GPU, its terms, and the roofline's numbers beside it."""

    gpu: str
    seconds: float
    memory_seconds: float         # the largest memory-side term (see gpusim.timing_model)
    compute_seconds: float
    overhead_seconds: float       # the launch's fixed cost
    bound: str                    # "memory" or "compute"
    bytes: int                    # DRAM bytes
    flops: int
    arithmetic_intensity: float   # FLOP per DRAM byte
    ridge_point: float            # FLOP per byte where the datasheet's compute time equals its memory time
    limit: str = ""               # the term that binds: one of gpusim.timing_model.LIMITS
    parts: dict[str, float] = field(default_factory=dict, hash=False)   # every term, seconds
    resident_blocks: int = 0      # blocks per SM at a time (0: geometry unknown)
    waves: int = 0
    model: str = MODEL_VERSION

    def __str__(self) -> str:
        terms = ", ".join(f"{k} {_time(v)}" for k, v in self.parts.items() if k != "launch" and v > 0)
        return (f"{self.gpu}: ~{_time(self.seconds)}, {self.bound}-bound, limited by {self.limit} "
                f"({terms}; + {_time(self.overhead_seconds)} launch); DRAM {_bytes(self.bytes)}, "
                f"{self.flops:,} FLOP, {self.arithmetic_intensity:.3g} FLOP/byte vs ridge {self.ridge_point:.3g}")


def estimate(report, gpu: str | GPU = "H100 SXM") -> Estimate:
    """The time of ``report``'s launch on ``gpu`` (needs ``instrument=True``; a ``Workload`` works too)."""
    g = get_gpu(gpu)
    w = report if isinstance(report, Workload) else Workload.of(report)
    if "dram__bytes_read.sum" not in w.metrics:
        raise ValueError("this launch has no metrics: run it with instrument=True")
    nbytes = int(w.m("dram__bytes_read.sum") + w.m("dram__bytes_write.sum"))
    from .observe.flops import flop_total

    per_dtype = flop_total(w.flops)
    flops = sum(per_dtype.values())
    datasheet_compute = sum(n / g.flops.get(dt, g.flops["float32"]) for dt, n in per_dtype.items())
    peak = flops / datasheet_compute if datasheet_compute else g.flops["float32"]
    t = time_launch(w, g.bandwidth, g.flops, g.machine)
    return Estimate(
        gpu=g.name, seconds=t.seconds, memory_seconds=t.memory_seconds, compute_seconds=t.compute_seconds,
        overhead_seconds=t.parts["launch"], bound="compute" if t.compute_seconds > t.memory_seconds else "memory",
        bytes=nbytes, flops=flops,
        arithmetic_intensity=flops / nbytes if nbytes else float("inf") if flops else 0.0,
        ridge_point=peak / g.bandwidth, limit=t.limit, parts=dict(t.parts), resident_blocks=t.resident_blocks,
        waves=t.waves)


def _time(s: float) -> str:
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.3g} µs"
    return f"{s * 1e9:.3g} ns"


def _bytes(n: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"
