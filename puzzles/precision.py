"""When a kernel's arithmetic ran in float64 though none of its arrays is float64.

numba types a Python number as int64 or float64, and float32 combined with either is float64: ``a[i] + 10``
or ``acc = 0.0; acc += a[i]`` computes in float64 on the GPU (and in gpusim, which follows numba's rules),
at 1/2 to 1/64 of the float32 rate. ``float64_work`` reads that from the FLOPs gpusim counted per dtype.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Float64Work:
    flops: int            # float64 FLOPs of the launch
    total: int            # all its FLOPs


def float64_work(report: Any) -> Float64Work | None:
    """The launch's float64 FLOPs when it ran some but no global or shared array is float64; else None."""
    from gpusim.observe.flops import flop_total

    per_dtype = flop_total(getattr(report, "flops", None) or {})
    f64 = per_dtype.get("float64", 0)
    if not f64:
        return None
    arrays = [a for a in getattr(report, "arrays", []) or [] if a.space in ("global", "shared")]
    if any(str(a.dtype) == "float64" for a in arrays):
        return None
    return Float64Work(f64, sum(per_dtype.values()))
