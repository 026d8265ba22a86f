"""Floating-point work: operations executed by active lanes, per dtype and op, and FLOP totals.

The engine calls ``on_flops(op, dtype, count)`` for every floating-point add, sub, mul, div, fma and special
function (exp, log, sqrt, sin, ...) that ``count`` active lanes executed. ``report.flops`` holds the raw
operation counts ({dtype: {op: count}}); FLOP totals count an ``fma`` as 2 FLOPs (a multiply and an add, the
convention of vendor peak numbers) and every other op, special functions included, as 1.

On a GPU the compiler fuses a multiply and a dependent add into one FFMA; ncu's
``smsp__sass_thread_inst_executed_op_{fadd,fmul,ffma}_pred_on.sum`` then count instructions, not source
operations. FLOP totals agree either way (an FFMA is 2 FLOPs). Checked on the H200 for the cases of
tests/gpusim/ncu_cases.py: the dot product's 200 multiplies and 252 adds, 768 adds of a 4-term loop.
"""

from __future__ import annotations

import numpy as np

from .events import Observer

FLOPS_PER_OP = {"add": 1, "sub": 1, "mul": 1, "div": 1, "fma": 2, "special": 1}


def flop_total(flops: dict[str, dict[str, int]]) -> dict[str, int]:
    """{dtype: FLOPs} from {dtype: {op: count}} (fma counts 2)."""
    return {dt: sum(n * FLOPS_PER_OP.get(op, 1) for op, n in ops.items()) for dt, ops in flops.items()}


class FlopsObserver(Observer):
    """Aggregates ``on_flops`` into ``report.flops`` and adds ``gpusim__flops_*`` metrics."""

    def __init__(self):
        self.flops: dict[str, dict[str, int]] = {}

    def on_flops(self, op: str, dtype: np.dtype, count: int) -> None:
        ops = self.flops.setdefault(np.dtype(dtype).name, {})
        ops[op] = ops.get(op, 0) + int(count)

    def finish(self, report) -> None:
        if not report.flops:
            report.flops = {dt: dict(ops) for dt, ops in self.flops.items()}
        per_dtype = flop_total(report.flops)
        report.metrics["gpusim__flops_total"] = sum(per_dtype.values())
        for dt, n in sorted(per_dtype.items()):
            report.metrics[f"gpusim__flops_{dt}"] = n
