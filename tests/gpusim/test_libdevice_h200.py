"""Every cuda.libdevice function on gpusim against the results an NVIDIA H200 gave for the same inputs.

The expected values are the GPU's, recorded by ``benchmarks/gpu/libdevice_check.py --save`` (numba-cuda
0.30.4, 2026-12-01) and kept in tests/gpusim/data/libdevice_h200.npz with a digest of the inputs they came
from (libdevice_cases.inputs: 1024 per function). A function specified bit for bit (``EXACT``: IEEE
rounding, conversions, integer and bit functions) must give the GPU's bits on every input, NaN and signed
zeros included. Every other function must stay within the distance recorded in libdevice_h200_bounds.json
(ulps; most are 1 or 2, the approximations' own error), be more than ``FAR`` (2) ulps off on no more inputs
than recorded (so that one far input, ``fast_tanf``'s inf for -inf at a pole, does not leave the rest
unguarded), and never give NaN where the GPU gave a number or the reverse. To re-record after a new GPU
run: ``libdevice_check.py --gpu-results RUN.npz --test-data SOURCE``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from libdevice_cases import EXACT, FAR, SIGNATURES, N, distance, input_digest, inputs, kernels, outputs

import gpusim

DATA = Path(__file__).parent / "data"
THREADS = 128


@pytest.fixture(scope="module")
def recorded():
    gpu = np.load(DATA / "libdevice_h200.npz")
    bounds = json.loads((DATA / "libdevice_h200_bounds.json").read_text())["bounds"]
    return {k: gpu[k] for k in gpu.files}, bounds


@pytest.fixture(scope="module")
def ks(tmp_path_factory):
    return kernels(sorted(SIGNATURES), tmp_path_factory.mktemp("h200"))


def test_the_record_covers_every_function_on_the_inputs_it_ran_on(recorded):
    gpu, bounds = recorded
    assert "H200" in str(gpu["source"])
    assert set(bounds) == set(SIGNATURES)
    stale = [name for name in SIGNATURES if str(gpu[f"{name}:inputs"]) != input_digest(inputs(name))]
    assert not stale, f"libdevice_cases.inputs changed for {stale[:5]}: re-record the GPU's results"
    for name, (_, rets) in SIGNATURES.items():
        for j, r in enumerate(rets):
            assert gpu[f"{name}:{j}"].dtype == r and gpu[f"{name}:{j}"].shape == (N,), name


def _run(ks, name) -> tuple[list[np.ndarray], list[np.ndarray]]:
    args = inputs(name)
    outs = outputs(name)
    gpusim.launch(ks[name], (N + THREADS - 1) // THREADS, THREADS, outs + args)
    return args, outs


@pytest.mark.slow
def test_gpusim_gives_the_gpus_results(recorded, ks):
    """All 317 functions (~10 s): the EXACT ones bit for bit, the others within their recorded bound."""
    gpu, bounds = recorded
    bad = []
    for name in sorted(SIGNATURES):
        args, outs = _run(ks, name)
        limit, far = (0, 0) if EXACT.match(name) else bounds[name]
        d = np.stack([distance(gpu[f"{name}:{j}"], got) for j, got in enumerate(outs)])
        wrong = (d < 0) | (d > limit)
        if wrong.any():
            j, k = (int(v[0]) for v in np.nonzero(wrong))
            xs = ", ".join(repr(a[k].item()) for a in args)
            bad.append(f"{name}({xs})[{j}]: GPU {gpu[f'{name}:{j}'][k].item()!r}, gpusim {outs[j][k].item()!r} "
                       f"({int(wrong.any(axis=0).sum())} inputs past {limit} ulp)")
        elif (d.max(axis=0) > FAR).sum() > far:
            bad.append(f"{name}: {int((d.max(axis=0) > FAR).sum())} inputs more than {FAR} ulps from the GPU, "
                       f"{far} when recorded")
    assert not bad, "\n".join(bad)


def test_the_comparison_sees_a_wrong_sign_of_zero_and_a_nan():
    """The distance the test relies on: -0 is not +0, NaN is not a number, and integers differ or not."""
    a = np.array([0.0, 1.0, np.nan, 1.0], np.float32)
    b = np.array([-0.0, np.nextafter(np.float32(1), np.float32(2)), np.nan, np.nan], np.float32)
    assert distance(a, b).tolist() == [1, 1, 0, -1]
    assert distance(np.array([-2 ** 31, 0], np.int32), np.array([0, 0], np.int32)).tolist() == [-1, 0]
