"""FLOP counting: per dtype and op, fma counted twice in totals, only active lanes."""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

import gpusim
from gpusim.observe.flops import FlopsObserver, flop_total


@cuda.jit
def axpy_exp(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i] / 2.0 + math.exp(x[i])


def test_flops_per_dtype_and_op_for_active_lanes_only():
    x = np.linspace(0, 1, 40).astype(np.float64)
    r = gpusim.launch(axpy_exp, 2, 32, (2.0, x, x.copy(), np.zeros_like(x)))
    assert not r.faults
    ops = r.flops["float64"]
    # a * x[i] + ... is contracted into one fused multiply-add, as on the GPU (2 FLOPs each)
    assert ops == {"fma": 40, "div": 40, "add": 40, "special": 40}
    assert r.metrics["gpusim__flops_total"] == r.metrics["gpusim__flops_float64"] == 200


def test_fma_counts_two_flops():
    assert flop_total({"float32": {"fma": 10, "add": 1}, "float64": {"special": 3}}) == {
        "float32": 21, "float64": 3}


def test_observer_aggregates_events():
    obs = FlopsObserver()
    obs.on_flops("add", np.dtype(np.float32), 5)
    obs.on_flops("add", np.dtype(np.float32), 7)
    obs.on_flops("fma", np.dtype(np.float16), 2)

    class Report:
        flops: dict = {}
        metrics: dict = {}

    rep = Report()
    obs.finish(rep)
    assert rep.flops == {"float32": {"add": 12}, "float16": {"fma": 2}}
    assert rep.metrics["gpusim__flops_total"] == 16
