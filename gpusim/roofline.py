"""Roofline estimate of a launch's time on a named GPU: ``report.estimate("H100 SXM")``.

time = max(DRAM bytes ÷ peak bandwidth, Σ FLOPs of each dtype ÷ that dtype's peak) + launch overhead

* DRAM bytes: ``dram__bytes_read.sum + dram__bytes_write.sum`` of the report (gpusim's estimate, see
  ``gpusim.observe.dram``); FLOPs: ``report.flops`` with an fma as 2 (``gpusim.observe.flops``).
* Peaks are the vendor datasheet figures (NVIDIA product pages and architecture whitepapers) for the CUDA
  cores, without tensor cores and without sparsity: gpusim kernels are plain SIMT code. A real kernel reaches
  perhaps 70-90 % of peak bandwidth and less of peak FLOP/s, so the estimate is a lower bound.
* ``LAUNCH_OVERHEAD_S``: an empty kernel takes a few microseconds from launch to completion (about 2-5 µs
  on recent GPUs and drivers); 3 µs is added to every estimate.

The arithmetic intensity is FLOPs ÷ DRAM bytes; the ridge point is the intensity at which the two limits
meet for this kernel's dtype mix: below it a kernel is memory-bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LAUNCH_OVERHEAD_S = 3e-6
T = 1e12


@dataclass(frozen=True)
class GPU:
    """Datasheet peaks: DRAM bandwidth in bytes/s and non-tensor FLOP/s per dtype."""

    name: str
    bandwidth: float
    flops: dict[str, float] = field(hash=False)
    source: str = ""


GPUS: dict[str, GPU] = {g.name: g for g in (
    GPU("H100 SXM", 3.35e12, {"float64": 34 * T, "float32": 67 * T, "float16": 133.8 * T},
        "NVIDIA H100 datasheet (SXM5: HBM3 3.35 TB/s, FP64 34, FP32 67 TFLOPS); H100 whitepaper: FP16 "
        "non-tensor 133.8 TFLOPS"),
    GPU("H200", 4.8e12, {"float64": 34 * T, "float32": 67 * T, "float16": 133.8 * T},
        "NVIDIA H200 datasheet (SXM: HBM3e 4.8 TB/s, FP64 34, FP32 67 TFLOPS); FP16 non-tensor as H100 SXM"),
    GPU("A100 80GB", 2.039e12, {"float64": 9.7 * T, "float32": 19.5 * T, "float16": 78 * T},
        "NVIDIA A100 datasheet (80GB SXM: HBM2e 2,039 GB/s, FP64 9.7, FP32 19.5 TFLOPS); A100 whitepaper: "
        "FP16 non-tensor 78 TFLOPS"),
    GPU("RTX 4090", 1.008e12, {"float64": 1.29 * T, "float32": 82.6 * T, "float16": 82.6 * T},
        "NVIDIA Ada (AD102) whitepaper: GeForce RTX 4090, GDDR6X 1,008 GB/s, FP32 82.6 TFLOPS, FP16 "
        "non-tensor 82.6, FP64 1/64 of FP32"),
    GPU("T4", 320e9, {"float64": 0.253 * T, "float32": 8.1 * T, "float16": 16.2 * T},
        "NVIDIA T4 datasheet (GDDR6 320 GB/s, FP32 8.1 TFLOPS); Turing: FP16 non-tensor 2x FP32, FP64 "
        "1/32 of FP32"),
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
    """A roofline estimate of one launch on one GPU."""

    gpu: str
    seconds: float
    memory_seconds: float
    compute_seconds: float
    overhead_seconds: float
    bound: str                    # "memory" or "compute"
    bytes: int
    flops: int
    arithmetic_intensity: float   # FLOP per DRAM byte
    ridge_point: float            # FLOP per byte where compute time equals memory time

    def __str__(self) -> str:
        return (f"{self.gpu}: ~{_time(self.seconds)}, {self.bound}-bound "
                f"(memory {_time(self.memory_seconds)} for {_bytes(self.bytes)}, "
                f"compute {_time(self.compute_seconds)} for {self.flops:,} FLOP, "
                f"+ {_time(self.overhead_seconds)} launch); "
                f"{self.arithmetic_intensity:.3g} FLOP/byte vs ridge {self.ridge_point:.3g}")


def estimate(report, gpu: str | GPU = "H100 SXM") -> Estimate:
    """Roofline time of ``report``'s launch on ``gpu`` (needs ``instrument=True``)."""
    from .observe.flops import flop_total

    g = get_gpu(gpu)
    if "dram__bytes_read.sum" not in report.metrics:
        raise ValueError("this launch has no metrics: run it with instrument=True")
    nbytes = int(report.metrics["dram__bytes_read.sum"] + report.metrics["dram__bytes_write.sum"])
    per_dtype = flop_total(report.flops or {})
    flops = sum(per_dtype.values())
    compute = sum(n / g.flops.get(dt, g.flops["float32"]) for dt, n in per_dtype.items())
    memory = nbytes / g.bandwidth
    peak = flops / compute if compute else g.flops["float32"]
    return Estimate(
        gpu=g.name, seconds=max(memory, compute) + LAUNCH_OVERHEAD_S, memory_seconds=memory,
        compute_seconds=compute, overhead_seconds=LAUNCH_OVERHEAD_S,
        bound="compute" if compute > memory else "memory", bytes=nbytes, flops=flops,
        arithmetic_intensity=flops / nbytes if nbytes else float("inf") if flops else 0.0,
        ridge_point=peak / g.bandwidth)


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
