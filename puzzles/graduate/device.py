"""What GPU there is, and its peaks: the copy bandwidth measured in the same run, and its FLOP/s roofs.

* **Copy bandwidth** (the memory roof a kernel is judged against): a device-to-device ``cuMemcpyDtoDAsync``
  of ``COPY_SIZES`` bytes, timed like every kernel (``puzzles.graduate.timing``); bytes moved = 2 x size
  (read + write). The largest of the sizes' bandwidths is the device's copy bandwidth. On the H200 a copy
  reached 3.1 / 3.9 / 4.1 TB/s at 64 MiB / 256 MiB / 1 GiB (/work/shared/GPU_FACTS.md): small copies read low.
* **FLOP/s roof** per dtype = SMs x results per clock per SM x 2 (an FMA is two FLOPs) x the SM clock
  (``CLOCK_RATE``, the boost clock). Results per clock per SM of the CUDA cores (no tensor cores), from the
  CUDA C++ Programming Guide's table of arithmetic instruction throughput (fp16 counts ``half2``
  instructions, two results each). H200: 132 SMs x 128 x 2 x 1.98 GHz = 66.9 TFLOP/s float32.
* **Measured FMA rate** (float32): a kernel of independent FMA chains, for comparison with the roof.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .timing import measure

MIB = 1 << 20
COPY_SIZES = (64 * MIB, 256 * MIB, 1024 * MIB)

# compute capability -> results per clock per SM (CUDA C++ Programming Guide, "Arithmetic Instructions")
_PER_SM = {
    (7, 0): {"float16": 128, "float32": 64, "float64": 32},
    (7, 5): {"float16": 128, "float32": 64, "float64": 2},
    (8, 0): {"float16": 256, "float32": 64, "float64": 32},
    (8, 6): {"float16": 256, "float32": 128, "float64": 2},
    (8, 7): {"float16": 256, "float32": 128, "float64": 2},
    (8, 9): {"float16": 128, "float32": 128, "float64": 2},
    (9, 0): {"float16": 256, "float32": 128, "float64": 64},
}


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    compute_capability: tuple[int, int]
    sms: int
    clock_hz: float              # SM boost clock
    l2_bytes: int
    memory_bytes: int
    numba_cuda: str

    def roof(self) -> dict[str, float]:
        """FLOP/s per dtype from the SM count and clock (empty for a compute capability not in the table)."""
        per_sm = _PER_SM.get(self.compute_capability) or _PER_SM.get((self.compute_capability[0], 0), {})
        return {dt: self.sms * n * 2 * self.clock_hz for dt, n in per_sm.items()} if self.clock_hz else {}

    def label(self) -> str:
        cc = ".".join(map(str, self.compute_capability))
        return f"{self.name} (CC {cc}, {self.sms} SMs, {self.clock_hz / 1e6:.0f} MHz, " \
               f"{self.memory_bytes / 2**30:.0f} GiB)"


@dataclass
class Peaks:
    copy_bandwidth: float                        # bytes/s: the best of the copy sizes
    copy_by_size: dict[int, float] = field(default_factory=dict)
    roof: dict[str, float] = field(default_factory=dict)
    fma_float32: float = 0.0                     # measured FLOP/s

    def to_dict(self) -> dict:
        d = asdict(self)
        d["copy_by_size"] = {str(k): v for k, v in self.copy_by_size.items()}
        return d


def probe() -> DeviceInfo:
    """The current device, as numba-cuda reports it (call only when ``cuda_module.why_no_gpu()`` is None)."""
    from .cuda_module import cuda

    nc = cuda()
    dev = nc.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    try:
        from importlib.metadata import version

        numba_cuda = version("numba-cuda")
    except Exception:
        numba_cuda = "?"
    return DeviceInfo(
        name=name, compute_capability=tuple(dev.compute_capability), sms=int(dev.MULTIPROCESSOR_COUNT),
        clock_hz=_sm_clock_hz(dev), l2_bytes=int(_attribute(dev, "L2_CACHE_SIZE") or 0),
        memory_bytes=int(nc.current_context().get_memory_info()[1]), numba_cuda=numba_cuda)


def _attribute(dev, name: str):
    try:
        return getattr(dev, name)
    except Exception:          # an attribute this driver or binding no longer has
        return None


def _sm_clock_hz(dev) -> float:
    """The SM's boost clock: the driver attribute, else nvidia-smi's clocks.max.sm, else 0 (no FLOP roof)."""
    khz = _attribute(dev, "CLOCK_RATE")
    if khz:
        return float(khz) * 1e3
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout.split()
        return float(out[0]) * 1e6
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return 0.0


def measure_peaks(info: DeviceInfo) -> Peaks:
    """Copy bandwidth at each of ``COPY_SIZES`` and the float32 FMA rate, on this device, now."""
    from .cuda_module import cuda

    nc = cuda()
    by_size = {}
    for size in COPY_SIZES:
        if 3 * size > nc.current_context().get_memory_info()[0]:
            continue
        t = measure(_Copy(nc, size), min_samples=10, max_samples=50, budget_s=1.0, ungated=False)
        by_size[size] = 2 * size / t.median_s
    return Peaks(copy_bandwidth=max(by_size.values()), copy_by_size=by_size, roof=info.roof(),
                 fma_float32=_fma_rate(nc, info))


class _Copy:
    """A ``Launch`` that copies one device buffer into another (nothing to reset)."""

    def __init__(self, nc, size: int):
        self.src = nc.device_array(size, dtype="uint8")
        self.dst = nc.device_array(size, dtype="uint8")

    def enqueue(self, stream) -> None:
        self.dst.copy_to_device(self.src, stream=stream)

    def reset(self, stream) -> None:
        pass

    def release(self) -> None:
        self.src = self.dst = None


FMA_STEPS = 2048


def _fma_rate(nc, info: DeviceInfo) -> float:
    import numpy as np

    from .kernels import CHAINS, fma_chains

    blocks, tpb = info.sms * 8, 256
    out = nc.device_array(blocks * tpb, dtype=np.float32)
    coef = nc.to_device(np.array([0.999, 0.001], dtype=np.float32))

    class Chain:
        def enqueue(self, stream):
            fma_chains[blocks, tpb, stream](out, coef, FMA_STEPS)

        def reset(self, stream):
            pass

        def release(self):
            pass

    t = measure(Chain(), min_samples=5, max_samples=20, budget_s=1.0, ungated=False)
    flops = blocks * tpb * FMA_STEPS * CHAINS * 2
    return flops / t.median_s if t.median_s > 0 and math.isfinite(t.median_s) else 0.0

