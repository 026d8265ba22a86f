"""The multi-GPU run on real GPUs (skipped without them): one GPU (one process, and two processes on gloo),
and two GPUs on NCCL. Run on a GPU machine with
``python3 -m pytest -m gpu tests/puzzles/test_graduate_multigpu_gpu.py``.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

from puzzles import registry, workspace  # noqa: E402
from puzzles.graduate.multigpu import environment, launcher  # noqa: E402

GPUS = environment.gpu_count(torch)
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(GPUS < 1, reason="no CUDA GPU")]


def _items(*slugs):
    return [(registry.get(s), workspace.reference_path(registry.get(s))) for s in slugs]


def _run(mode, devices, **kw):
    return launcher.run(launcher.Options(items=_items("ring-all-reduce", "reduce-scatter", "all-gather"),
                                         devices=devices, mode=mode, sizes=[1 << 20], bench_elements=1 << 16,
                                         warmup=2, iters=5, **kw))


def test_one_process_holds_every_rank_and_passes():
    out = _run("nccl", 1)
    assert out.ok, out.text
    for row in out.doc["rows"]:
        if row["kind"] == "bench":
            assert row["time_s"] > 0 and row["library"] is None and row["links"]["sent"] == {}


def test_two_processes_on_one_gpu_through_gloo_match_the_library():
    out = _run("same-gpu", 2)
    assert out.ok, out.text
    assert all(r["library"]["bit_exact"] for r in out.doc["rows"] if r["kind"] == "bench")


@pytest.mark.skipif(GPUS < 2, reason="needs two CUDA GPUs")
def test_two_gpus_on_nccl_match_nccl_and_send_what_gpusim_counts():
    out = _run("nccl", 2)
    assert out.ok, out.text
    assert [h["env"] for h in out.doc["ranks"]] == [environment.MULTICAST_OFF] * 2
    for row in out.doc["rows"]:
        if row["kind"] == "bench":
            assert row["library"]["bit_exact"] and row["links"]["sent"] == row["links"]["gpusim"]
            assert row["busbw"] > 1e9 and row["lib_busbw"] > 1e9        # NVLink or PCIe: well above 1 GB/s
