"""Graduate mode's sampled estimates (``estimates.simulate(..., budget_s=)`` through ``gpusim.sampling``) against
the estimate from every block, on a map, a reduction and a matmul: within the tolerance that
benchmarks/gpu/estimate_sampling.py measured over every puzzle (docs/graduate.md, "Sampled estimates").
gpusim's chunks are made small here (as the benchmark's ``--chunk-lanes``) so that small launches have the many
chunks a launch at 2^24 has, and get sampled."""

from __future__ import annotations

import importlib

import pytest

from puzzles import registry, workspace
from puzzles.graduate import estimates, table

#: |sampled / whole - 1| at most this: the benchmark's worst over every puzzle it samples, rounded up
TOLERANCE = 0.06


@pytest.mark.parametrize(("slug", "log2", "chunk_lanes"), [
    ("blocks", 20, 8192),              # a map
    ("dot-product", 20, 8192),         # a reduction: a block's partial sum, then the partials
    pytest.param("matmul-coalesced", 16, 4096, marks=pytest.mark.slow),  # rows of blocks share A's rows, all B
])
def test_a_sampled_estimate_is_within_the_tolerance_of_the_whole_one(monkeypatch, slug, log2, chunk_lanes):
    monkeypatch.setattr(importlib.import_module("gpusim.launch"), "CHUNK_LANES", chunk_lanes)
    p = registry.get(slug)
    gpu = estimates.gpu_model("H200")
    path = workspace.reference_path(p)
    whole = estimates.simulate(p, path, 1 << log2, gpu)
    assert "sampled" not in whole["totals"]
    part = estimates.simulate(p, path, 1 << log2, gpu, budget_s=whole["sim_steps"] / 16 / estimates.STEPS_PER_SECOND)
    sample = part["totals"]["sampled"]
    assert 0 < sample["blocks"] < sample["of"] and sample["fraction"] == sample["blocks"] / sample["of"]
    assert part["sim_steps"] < whole["sim_steps"]
    assert part["totals"]["seconds"] == pytest.approx(whole["totals"]["seconds"], rel=TOLERANCE)
    assert "sampled" in estimates.result_summary(part)


def test_a_sampled_estimate_is_marked_in_the_table_and_its_fraction_is_in_the_json():
    row = table.Row(48, "matmul-coalesced", "numba", cases_passed=3, cases_total=3, time_s=0.1, estimate_s=0.05,
                    bound="memory", estimate_sample={"blocks": 256, "of": 65536, "fraction": 256 / 65536})
    plain = table.Row(6, "blocks", "numba", cases_passed=3, cases_total=3, time_s=1e-4, estimate_s=1e-4,
                      bound="memory")
    assert table.cells(row)[9].startswith(table.SAMPLED_MARK)
    assert not table.cells(plain)[9].startswith(table.SAMPLED_MARK)
    [note] = table.notes([row, plain])
    assert "256 of its 65,536 blocks" in note and "0.391 %" in note
    assert table.row_dict(row)["estimate_sample"]["fraction"] == 256 / 65536
