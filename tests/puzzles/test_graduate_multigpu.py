"""The multi-GPU graduate run without torch: the exchange plan gpusim makes, placement, sizes, bus bandwidth,
the comparison with a library's collective, the environment of the rank processes, the command line.

Expected values come from the puzzles' descriptions worked by hand, from the puzzles' own link budgets
(counted by the puzzle modules, not by the plan), from ``gpusim.devices.System``'s link counts, and from
nccl-tests' definitions of bus bandwidth.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from puzzles import registry, workspace
from puzzles.graduate import cli as graduate_cli
from puzzles.graduate.multigpu import environment, report
from puzzles.graduate.multigpu.collectives import COLLECTIVES, bandwidths
from puzzles.graduate.multigpu.plan import Plan, make_plan, mask_ranges
from puzzles.graduate.multigpu.tasks import Task, make_tasks, parse_sizes, placement, size_label
from puzzles.loader import load_solution
from puzzles.model import Sync
from puzzles.multidevice import build_system

WRONG = Path(__file__).parent / "wrong"
CHAPTER = ["ring-all-reduce", "reduce-scatter", "all-gather", "column-parallel", "row-parallel", "pipeline-1f1b",
           "ring-attention", "expert-all-to-all"]


def _reference(slug):
    puzzle = registry.get(slug)
    return puzzle, load_solution(workspace.reference_path(puzzle), puzzle.kernels)


def _case(puzzle, name):
    return next(c for c in puzzle.make_cases() if c.name == name)


# ------------------------------------------------------------------------------------------------ the plan

def test_the_plan_of_a_two_rank_ring_all_reduce_is_the_chunks_the_description_names():
    """n = 37, two ranks: chunk = ceil(37 / 2) rounded up to 8 = 24. Reduce step 0: rank d reads chunk
    (d - 1) % 2 of its left neighbour; gather step 0: chunk d % 2 (the puzzle's description)."""
    puzzle, solution = _reference("ring-all-reduce")
    plan = make_plan(puzzle, solution, _case(puzzle, "2 ranks n=37"))
    got = [(t.epoch, t.owner, t.reader, t.buffer, t.ranges) for t in plan.transfers]
    assert got == [(0, 0, 1, "x@0", [(0, 24)]), (0, 1, 0, "x@1", [(24, 37)]),
                   (1, 0, 1, "x@0", [(24, 37)]), (1, 1, 0, "x@1", [(0, 24)])]
    assert plan.epochs == 3 and plan.runnable is None and plan.races_checked
    assert plan.sent_link_bytes() == {"0->1": 37 * 4, "1->0": 37 * 4}


def test_the_plan_of_a_two_rank_all_gather_reads_one_row_of_the_peer_twice_over():
    """Two ranks: left and right are the same peer; rank d copies row 1 - d, half from 'left' and half from
    'right' — one buffer, one transfer of the whole row."""
    puzzle, solution = _reference("all-gather")
    plan = make_plan(puzzle, solution, _case(puzzle, "2 ranks S=48"))
    assert [(t.owner, t.reader, t.buffer, t.ranges) for t in plan.transfers] == \
        [(0, 1, "out@0", [(0, 48)]), (1, 0, "out@1", [(48, 96)])]


@pytest.mark.parametrize("slug", CHAPTER)
def test_every_reference_sends_what_gpusim_and_the_puzzle_count_per_link(slug):
    """For each reference case the exchange moves, per directed link, exactly the bytes gpusim's System
    counts and the puzzle's own bandwidth-optimal budget (each element read once per epoch)."""
    puzzle, solution = _reference(slug)
    for case in puzzle.make_cases():
        plan = make_plan(puzzle, solution, case)
        assert plan.runnable is None, (case.name, plan.runnable)
        assert plan.sent_link_bytes() == plan.sim_link_bytes == dict(case.devices.ideal_link_bytes), case.name
        system = _system_links(puzzle, solution, case)
        assert plan.sim_link_bytes == system, case.name


def _system_links(puzzle, solution, case) -> dict:
    import copy

    buffers = copy.deepcopy(dict(case.buffers))
    system = build_system(case, buffers)
    for step in case.steps:
        if isinstance(step, Sync):
            system.synchronize(step.devices or None)
            continue
        system.launch(step.device, solution.kernels[step.kernel], step.grid, step.block, step.arg_values(buffers),
                      step.shared_mem)
    return {f"{s}->{d}": n for (s, d), n in sorted(system.links.bytes.items())}


def test_without_the_race_tracker_the_plan_is_the_same():
    puzzle, solution = _reference("reduce-scatter")
    case = next(c for c in puzzle.make_cases() if c.devices.count == 4)
    with_races, without = make_plan(puzzle, solution, case, races=True), make_plan(puzzle, solution, case, races=False)
    assert without.transfers == with_races.transfers and without.sim_link_bytes == with_races.sim_link_bytes
    assert not without.races_checked


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def _variant(tmp_path, slug, old, new):
    puzzle = registry.get(slug)
    text = workspace.reference_path(puzzle).read_text()
    assert old in text
    return puzzle, load_solution(_write(tmp_path, "variant.py", text.replace(old, new)), puzzle.kernels)


def test_a_kernel_that_stores_into_a_peer_is_not_mapped_onto_sends(tmp_path):
    puzzle, solution = _variant(tmp_path, "ring-all-reduce", "        x[i] = left[i]", "        left[i] = x[i]")
    plan = make_plan(puzzle, solution, _case(puzzle, "2 ranks n=37"))
    assert plan.peer_writes and "stores into x@1" in plan.peer_writes[0]
    assert "write other devices' memory" in plan.runnable


def test_a_kernel_that_faults_in_gpusim_is_not_run_on_the_gpus(tmp_path):
    puzzle, solution = _variant(tmp_path, "ring-all-reduce", "if j < chunk and i < x.size:", "if j < chunk:")
    plan = make_plan(puzzle, solution, _case(puzzle, "2 ranks n=37"))
    assert plan.faults and "out of bounds" in plan.faults[0]
    assert plan.runnable.startswith("gpusim found a fault")


def test_a_race_between_devices_stops_the_plan():
    """Every rank reducing chunk ``step`` at once: rank d reads its left neighbour's chunk while that neighbour
    adds into it. gpusim's System reports the race between devices and the case is not run on the GPUs;
    without the tracker (the benchmark cases) the plan does not see it."""
    puzzle = registry.get("ring-all-reduce")
    solution = load_solution(WRONG / "ring_all_reduce__same_chunk_everywhere.py", puzzle.kernels)
    case = next(c for c in puzzle.make_cases() if c.devices.count == 4)
    plan = make_plan(puzzle, solution, case, races=True)
    assert plan.faults and "race between devices" in plan.faults[0].lower(), plan.faults
    assert make_plan(puzzle, solution, case, races=False).faults == []


def test_the_plan_survives_json():
    import json

    puzzle, solution = _reference("expert-all-to-all")
    plan = make_plan(puzzle, solution, puzzle.make_cases()[1])
    again = Plan.from_dict(json.loads(json.dumps(plan.to_dict())))
    assert again == plan


@pytest.mark.parametrize("mask, ranges", [
    ([0, 1, 1, 0, 1], [(1, 3), (4, 5)]),
    ([1, 1, 1], [(0, 3)]),
    ([0, 0], []),
    ([1, 0, 1, 0, 1], [(0, 1), (2, 3), (4, 5)]),
])
def test_mask_ranges(mask, ranges):
    assert mask_ranges(np.array(mask, bool)) == ranges


# ------------------------------------------------------------------------------------ tasks, sizes, placing

@pytest.mark.parametrize("ranks, processes, expected", [
    (2, 2, [0, 1]), (4, 2, [0, 0, 1, 1]), (3, 2, [0, 0, 1]), (8, 2, [0, 0, 0, 0, 1, 1, 1, 1]), (2, 4, [0, 1]),
    (5, 1, [0, 0, 0, 0, 0]),
])
def test_placement(ranks, processes, expected):
    assert placement(ranks, processes) == expected


def test_sizes():
    assert parse_sizes("2^20..2^28") == [1 << k for k in range(20, 29)]
    assert parse_sizes("1MiB,4MiB, 2^20") == [1 << 20, 4 << 20]
    assert parse_sizes("4096") == [4096]
    for bad in ("", "2^28..2^20", "lots", "2"):
        with pytest.raises(ValueError):
            parse_sizes(bad)
    assert [size_label(n) for n in (1 << 20, 256 << 20, 16320, 100)] == ["1 MiB", "256 MiB", "15.9 KiB", "100 B"]


def test_tasks_put_the_own_cases_first_and_benchmarks_by_size():
    items = [(registry.get(s), workspace.reference_path(registry.get(s)))
             for s in ("ring-all-reduce", "ring-attention")]
    tasks = make_tasks(items, 2, [1 << 22, 1 << 20], 1 << 20)
    kinds = [t.kind for t in tasks]
    assert kinds == ["case"] * (len(tasks) - 3) + ["bench"] * 3
    benches = tasks[-3:]
    assert [(t.slug, t.n, t.ranks) for t in benches] == [("ring-attention", None, 2), ("ring-all-reduce", 1 << 18, 2),
                                                         ("ring-all-reduce", 1 << 20, 2)]
    assert Task.from_dict(benches[1].to_dict()) == benches[1]


# ------------------------------------------------------------------------------- collectives, bandwidth

def test_bus_factors_are_nccl_tests():
    ar, rs, ag = COLLECTIVES["ring-all-reduce"], COLLECTIVES["reduce-scatter"], COLLECTIVES["all-gather"]
    assert [ar.bus_factor(n) for n in (2, 4, 8)] == [1.0, 1.5, 1.75]
    assert [rs.bus_factor(n) for n in (2, 4, 8)] == [0.5, 0.75, 0.875] == [ag.bus_factor(n) for n in (2, 4, 8)]
    assert bandwidths(1 << 20, 1e-3, 1.75) == (1048576000.0, 1835008000.0)
    assert bandwidths(1 << 20, None, 1.0) == (None, None)


def test_the_size_of_a_collective_is_nccl_tests_s():
    """S: the all-reduced vector; reduce-scatter's whole input; all-gather's whole output."""
    for slug, n in (("ring-all-reduce", 1024), ("reduce-scatter", 1024), ("all-gather", 1024)):
        puzzle = registry.get(slug)
        case = puzzle.bench(n, 2)
        assert COLLECTIVES[slug].size_bytes(case.buffers) == 4 * n


def test_an_other_summation_order_is_within_the_bound_and_a_wrong_sum_is_not():
    rng = np.random.default_rng(0)
    xs = [(rng.normal(0, 1, 1000) * 10.0 ** rng.integers(-3, 4, 1000)).astype(np.float32) for _ in range(3)]
    left = (xs[0] + xs[1]) + xs[2]
    right = xs[0] + (xs[1] + xs[2])
    assert not np.array_equal(left, right)                 # the orders really differ somewhere
    ar = COLLECTIVES["ring-all-reduce"]
    verdict = ar.compare(left, right, xs, 0)
    assert verdict["ok"] and not verdict["bit_exact"] and verdict["differing"] > 0
    wrong = right.copy()
    wrong[7] += 1.0 + abs(wrong[7]) * 1e-3
    assert not ar.compare(left, wrong, xs, 0)["ok"]
    assert ar.compare(left, left.copy(), xs, 0)["bit_exact"]
    ag = COLLECTIVES["all-gather"]
    assert not ag.compare(left, right, xs, 0)["ok"]        # a copy must be exact


# ------------------------------------------------------------------------------ environment and the CLI

def test_the_multicast_variables_are_forced_off_whatever_the_caller_said():
    env = {"NCCL_NVLS_ENABLE": "1", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "0"}
    environment.apply(env)
    assert env["NCCL_NVLS_ENABLE"] == "0" and env["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
    assert env["NVSHMEM_DISABLE_NVLS"] == "1"


def test_without_torch_it_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)       # import torch raises ImportError
    reason = environment.why_not("nccl", 2)
    assert "needs torch" in reason and ".[gpu]" in reason


def _parse(argv):
    p = argparse.ArgumentParser()
    graduate_cli.add_arguments(p)
    return p.parse_args(argv)


def test_without_two_gpus_it_says_how_many_it_found_and_suggests_dry_run(monkeypatch, capsys):
    pytest.importorskip("torch", reason="torch is not installed: the message is then about torch")
    monkeypatch.setattr(environment, "gpu_count", lambda torch: 1)
    code = graduate_cli.run_command(_parse(["--devices", "2", "--reference", "64"]))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1
    assert "--devices 2 needs 2 CUDA GPUs, found 1" in err[0] and "--dry-run" in err[0]


@pytest.mark.parametrize("argv, message", [
    (["--devices", "2", "--reference", "12"], "not a multi-device puzzle"),
    (["--devices", "2", "--reference", "64", "--backend", "triton"], "numba-cuda back end only"),
    (["--dry-run", "--same-gpu", "--reference", "64"], "give one of them"),
    (["--devices", "2", "--reference", "64", "--ncu"], "is for one GPU"),
])
def test_usage_errors(argv, message, capsys):
    assert graduate_cli.run_command(_parse(argv)) == 2
    assert message in capsys.readouterr().err


def test_sizes_that_do_not_parse_are_argparse_errors(capsys):
    with pytest.raises(SystemExit):
        _parse(["--devices", "2", "--sizes", "big", "64"])
    assert "not a size" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------- report

def test_per_link_bytes_read_as_one_number_when_every_link_carried_the_same():
    assert report.per_link({"0->1": 1 << 20, "1->0": 1 << 20}) == "1 MiB each"
    assert report.per_link({"0->1": 1 << 20}) == "1 MiB (0->1)"
    assert report.per_link({"0->1": 1024, "1->0": 2048}) == "0->1 1 KiB, 1->0 2 KiB"
    assert report.per_link({}) == ""


def test_own_cases_fold_into_one_row_per_puzzle_and_a_failure_shows():
    def case(i, ok):
        return {"kind": "case", "number": 64, "slug": "ring-all-reduce", "case": f"c{i}", "correct": ok,
                "status": "pass" if ok else "FAIL: wrong"}
    rows = report.rows([case(0, True), case(1, False), case(2, True)])
    assert len(rows) == 1 and rows[0]["passed"] == 2 and rows[0]["total"] == 3 and not rows[0]["correct"]
    assert "c1" in report.problems(rows)[0]


# ------------------------------------------------------------------------------------------ NVML counters

class _FakeNvml:
    """pynvml's calls that nvlink.py makes, with counters in KiB as NVML keeps them."""

    def __init__(self, tx_kib, rx_kib, status=0):
        self.tx, self.rx, self.status, self.asked = tx_kib, rx_kib, status, []

    def nvmlInit(self):
        pass

    def nvmlDeviceGetHandleByPciBusId(self, address):
        self.asked.append(address)
        return "handle"

    def nvmlDeviceGetHandleByIndex(self, index):
        return "handle"

    def nvmlDeviceGetFieldValues(self, handle, fields):
        assert fields == [138, 139]
        return [SimpleNamespace(nvmlReturn=self.status, value=SimpleNamespace(ullVal=v)) for v in (self.tx, self.rx)]


def _fake_torch():
    props = SimpleNamespace(pci_bus_id=0x19, pci_domain_id=0, pci_device_id=0)
    return SimpleNamespace(cuda=SimpleNamespace(get_device_properties=lambda i: props))


def test_nvml_counters_are_kib_and_found_by_pci_address(monkeypatch):
    from puzzles.graduate.multigpu import nvlink

    fake = _FakeNvml(1000, 2000)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    counters = nvlink.NvlinkCounters(_fake_torch(), 0)
    assert fake.asked == ["00000000:19:00.0"] and not counters.why
    before = counters.read()
    fake.tx, fake.rx = 1000 + 4 * 1024, 2000 + 4 * 1024      # 4 runs of 1 MiB each way
    assert nvlink.per_run(before, counters.read(), 4) == {"tx": 1 << 20, "rx": 1 << 20}
    assert nvlink.per_run(None, before, 4) is None


def test_nvml_without_the_counters_says_why(monkeypatch):
    from puzzles.graduate.multigpu import nvlink

    monkeypatch.setitem(sys.modules, "pynvml", _FakeNvml(0, 0, status=13))     # NVML_ERROR_NOT_SUPPORTED
    counters = nvlink.NvlinkCounters(_fake_torch(), 0)
    assert counters.read() is None and "13" in counters.why
    monkeypatch.setitem(sys.modules, "pynvml", None)
    assert "not available" in nvlink.NvlinkCounters(_fake_torch(), 0).why
