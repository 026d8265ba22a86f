"""The simulator's estimates for graduate mode (puzzles/graduate/estimates.py): the same launch, and the cache."""

from __future__ import annotations

import copy
import shutil

import pytest

import gpusim
from puzzles import registry, workspace
from puzzles.graduate import estimates
from puzzles.loader import load_solution


def test_simulate_is_gpusim_on_the_benchmark_case_summed_over_its_steps():
    p = registry.get("multi-block-scan")                     # three launches
    gpu = estimates.gpu_model("NVIDIA H200")
    got = estimates.simulate(p, workspace.reference_path(p), 1 << 12, gpu)
    case = p.bench_max()
    sol = load_solution(workspace.reference_path(p), p.kernels)
    bufs = copy.deepcopy(dict(case.buffers))
    reports = [gpusim.launch(sol.kernels[s.kernel], s.grid, s.block, [bufs[a] for a in s.args], trace=False)
               for s in case.launches]
    assert [s["kernel"] for s in got["steps"]] == ["scan_blocks", "scan_block_sums", "add_offsets"]
    assert got["totals"]["seconds"] == pytest.approx(sum(r.estimate(gpu).seconds for r in reports))
    assert got["steps"][0]["metrics"] == {k: reports[0].metrics[k] for k in got["steps"][0]["metrics"]}
    assert got["size"] == "max" and got["gpu"] == "H200"


def test_the_gpu_model_is_gpusims_datasheet_entry_or_the_measured_peaks():
    assert estimates.gpu_model("NVIDIA H200").bandwidth == 4.8e12
    other = estimates.gpu_model("NVIDIA L40S", 0.8e12, {"float32": 91e12})
    assert other.bandwidth == 0.8e12 and other.flops == {"float32": 91e12}
    with pytest.raises(KeyError):
        estimates.gpu_model("NVIDIA L40S")


def test_the_cache_key_follows_the_solution_the_size_and_the_gpu(tmp_path):
    p = registry.get("blocks")
    ref = workspace.reference_path(p)
    mine = tmp_path / "blocks.py"
    shutil.copy(ref, mine)
    key = estimates.cache_key(p, ref, 1 << 20, "H200")
    assert estimates.cache_key(p, mine, 1 << 20, "H200") == key         # same text, same key
    mine.write_text(ref.read_text() + "\n# changed\n")
    assert estimates.cache_key(p, mine, 1 << 20, "H200") != key
    assert estimates.cache_key(p, ref, 1 << 21, "H200") != key
    assert estimates.cache_key(p, ref, 1 << 20, "H100 SXM") != key
    fixed = registry.get("map")                                          # bench_max: one case at any size
    assert estimates.cache_key(fixed, workspace.reference_path(fixed), 1 << 20, "H200") == \
        estimates.cache_key(fixed, workspace.reference_path(fixed), 1 << 26, "H200")


def test_the_cache_key_changes_when_the_time_model_does(monkeypatch):
    from dataclasses import replace

    from gpusim.roofline import GPUS

    p = registry.get("blocks")
    ref = workspace.reference_path(p)
    key = estimates.cache_key(p, ref, 1 << 20, "H200")
    h200 = GPUS["H200"]
    monkeypatch.setitem(GPUS, "H200", replace(h200, machine=replace(h200.machine, dram_latency_s=1e-6)))
    assert estimates.cache_key(p, ref, 1 << 20, "H200") != key      # a refitted parameter: stale estimates
    monkeypatch.setattr("gpusim.timing_model.MODEL_VERSION", "another")
    monkeypatch.setitem(GPUS, "H200", h200)
    assert estimates.cache_key(p, ref, 1 << 20, "H200") != key      # a new model version: the same


def test_a_gpu_and_its_machine_survive_the_trip_to_a_worker_process():
    gpu = estimates.gpu_model("NVIDIA H200")
    again = estimates.gpu_from_dict(estimates.gpu_to_dict(gpu))
    assert again == gpu and again.machine == gpu.machine
    plain = estimates.gpu_model("NVIDIA L40S", 0.8e12, {"float32": 91e12})
    assert estimates.gpu_from_dict(estimates.gpu_to_dict(plain)).machine is None


def test_the_cache_survives_a_round_trip_and_a_corrupt_file(tmp_path):
    path = tmp_path / "estimates.json"
    cache = estimates.EstimateCache(path)
    cache.put("k", {"totals": {"seconds": 1.0}})
    cache.save()
    assert estimates.EstimateCache(path).get("k") == {"totals": {"seconds": 1.0}}
    path.write_text("{not json")
    broken = estimates.EstimateCache(path)
    assert broken.entries == {} and "could not be read" in broken.problem


def test_a_size_past_what_gpusim_runs_is_simulated_smaller_and_its_counts_scaled(monkeypatch):
    """A map's blocks all do the same work, so simulating a quarter of the size and scaling by 4 must give
    what simulating the whole size gives: the same summed counts, four times the blocks, the same time."""
    p = registry.get("blocks")
    gpu = estimates.gpu_model("NVIDIA H200")
    whole = estimates.simulate(p, workspace.reference_path(p), 1 << 14, gpu)
    monkeypatch.setattr(estimates, "SIM_ELEMENTS", 1 << 12)
    scaled = estimates.simulate(p, workspace.reference_path(p), 1 << 14, gpu)
    assert scaled["size"] == "2^14 (simulated at 2^12, counts x 4)"
    (a,), (b,) = whole["steps"], scaled["steps"]
    assert b["grid"] == a["grid"] and b["flops"] == a["flops"] == {"float64": 1 << 14}   # a[i] + 10 per element
    for key in ("dram__bytes_read.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"):
        assert b["metrics"][key] == a["metrics"][key] > 0, key
    assert scaled["totals"]["seconds"] == pytest.approx(whole["totals"]["seconds"], rel=1e-6)
