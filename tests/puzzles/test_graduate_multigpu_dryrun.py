"""The multi-GPU run on the CPU (``--dry-run``): rank processes on gloo, kernels on gpusim, the same exchange
and the same checks as on GPUs. Needs torch (CPU build: ``pip install torch==2.13.0``); skipped without it.

What is independent here: the spec (the puzzle's NumPy), gloo's own collectives, gpusim's link counts,
and the environment each rank process reports about itself.
"""

from __future__ import annotations

import copy
import json
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0, the CPU build)")

from puzzles import registry, workspace  # noqa: E402
from puzzles.compare import first_mismatch  # noqa: E402
from puzzles.graduate.multigpu import environment, launcher  # noqa: E402
from puzzles.graduate.multigpu.engines import GpusimEngine  # noqa: E402
from puzzles.graduate.multigpu.exchange import Exchange, RankShare  # noqa: E402
from puzzles.graduate.multigpu.plan import make_plan  # noqa: E402
from puzzles.loader import load_solution  # noqa: E402
from puzzles.multidevice import output_names  # noqa: E402

if not torch.distributed.is_available() or not torch.distributed.is_gloo_available():
    pytest.skip("this torch has no gloo", allow_module_level=True)


def _run_in_one_process(puzzle, case, plan):
    """Every logical rank in this process (one device: every transfer a local copy), mirrors poisoned."""
    engine = GpusimEngine(torch, puzzle, workspace.reference_path(puzzle))
    share = RankShare.build(engine, case, list(range(plan.ranks)))
    exchange = Exchange(plan, share, 0, [0] * plan.ranks, transport=None)
    for e, launches in enumerate(share.epochs):
        share.poison_mirrors()
        exchange.epoch(e)
        for step, args in launches:
            engine.launch(step, args)
    return {name: engine.host(t) for name, t in share.arrays.items()}


def _mismatch(puzzle, case, got):
    before = copy.deepcopy(dict(case.buffers))
    return first_mismatch(output_names(puzzle, case.buffers), got, puzzle.spec(**copy.deepcopy(before)), before,
                          puzzle.rtol, puzzle.atol)


@pytest.mark.parametrize("slug", ["ring-all-reduce", "row-parallel", "expert-all-to-all"])
def test_the_exchange_carries_exactly_what_the_kernels_read(slug):
    """With the plan's elements the outputs match the spec; with one range of one transfer left out the
    mirrors keep their poison there and the outputs are wrong: nothing else reached the kernels."""
    puzzle = registry.get(slug)
    solution = load_solution(workspace.reference_path(puzzle), puzzle.kernels)
    case = next(c for c in puzzle.make_cases() if c.devices.count >= 3)
    plan = make_plan(puzzle, solution, case)
    assert _mismatch(puzzle, case, _run_in_one_process(puzzle, case, plan)) is None
    cut = copy.deepcopy(plan)
    t = max(cut.transfers, key=lambda t: t.elements)
    s, e = t.ranges[-1]
    t.ranges[-1] = (s, e - 1) if e - s > 1 else t.ranges.pop() and None
    t.ranges = [r for r in t.ranges if r]
    assert _mismatch(puzzle, case, _run_in_one_process(puzzle, case, cut)) is not None


def _options(items, devices=2, **kw):
    return launcher.Options(items=items, devices=devices, mode="dry-run", sizes=kw.pop("sizes", [1 << 12]),
                            bench_elements=1 << 10, warmup=1, iters=2, task_timeout_s=120, **kw)


def _items(*slugs):
    return [(registry.get(s), workspace.reference_path(registry.get(s))) for s in slugs]


@pytest.mark.slow
def test_two_rank_processes_on_gloo_pass_every_case_and_match_gloos_collectives(tmp_path, monkeypatch):
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")              # the launcher must override what the caller set
    out = launcher.run(_options(_items("ring-all-reduce", "all-gather"), out=tmp_path / "out"))
    assert not out.unavailable and out.ok, out.text
    rows = out.doc["rows"]
    cases = {r["slug"]: r for r in rows if r["kind"] == "cases"}
    assert cases["ring-all-reduce"]["passed"] == cases["ring-all-reduce"]["total"] == 6
    assert cases["all-gather"]["passed"] == 5
    benches = [r for r in rows if r["kind"] == "bench"]
    assert [r["slug"] for r in benches] == ["ring-all-reduce", "all-gather"]
    for r in benches:
        assert r["status"] == "pass" and r["library"]["bit_exact"], r      # two ranks: the same additions
        assert r["links"]["sent"] == r["links"]["gpusim"] == r["links"]["ideal"]
        assert r["time_s"] > 0 and r["busbw"] > 0 and r["lib_time_s"] > 0
    ar = benches[0]
    assert ar["nbytes"] == 4096 and ar["links"]["sent"] == {"0->1": 4096, "1->0": 4096}
    assert ar["busbw"] == pytest.approx(ar["algbw"])                       # 2(n-1)/n = 1 for n = 2
    assert benches[1]["busbw"] == pytest.approx(benches[1]["algbw"] / 2)   # (n-1)/n
    # what each rank process saw of its own environment
    assert [h["env"] for h in out.doc["ranks"]] == [environment.MULTICAST_OFF] * 2
    assert len({h["pid"] for h in out.doc["ranks"]}) == 2
    doc = json.loads((tmp_path / "out" / "multi-gpu.json").read_text())
    assert doc["rows"] == json.loads(json.dumps(rows))
    assert "| 64 | ring-all-reduce | 4 KiB | pass | bit-exact |" in (tmp_path / "out" / "multi-gpu.md").read_text()


@pytest.mark.slow
def test_three_ranks_sum_in_another_order_than_gloo_and_stay_within_the_bound():
    out = launcher.run(_options(_items("ring-all-reduce"), devices=3, cases=False, sizes=[1 << 14]))
    assert out.ok, out.text
    (row,) = out.doc["rows"]
    assert row["library"]["ok"] and row["links"]["sent"] == row["links"]["gpusim"]
    assert set(row["links"]["sent"]) == {"0->1", "1->2", "2->0"}          # the ring, one direction


@pytest.mark.slow
def test_a_wrong_file_fails_and_a_rank_that_faults_costs_its_task_not_the_run(tmp_path):
    reference = workspace.reference_path(registry.get("ring-all-reduce")).read_text()
    wrong = tmp_path / "wrong.py"
    wrong.write_text(reference.replace("c = (rank - step) % ranks", "c = (rank + step) % ranks"))
    # faults on the rank processes only (the plan, in a job's main process, sees a correct kernel)
    faulty = tmp_path / "faulty.py"
    gather = "        x[i] = left[i]\n"
    assert reference.count(gather) == 1
    only_in_ranks = textwrap.indent(textwrap.dedent("""\
        if IN_RANK and rank == 1 and j == 0:
            x[x.size + 100] = 1.0
        """), "    ")
    faulty.write_text('import multiprocessing\nIN_RANK = multiprocessing.current_process().name != "MainProcess"\n'
                      + reference.replace(gather, gather + only_in_ranks))
    puzzle = registry.get("ring-all-reduce")
    out = launcher.run(_options([(puzzle, wrong)], sizes=[]))
    assert not out.ok
    (row,) = out.doc["rows"]
    assert 0 < row["passed"] < row["total"] and "wrong output" in row["failure"]
    out = launcher.run(_options([(puzzle, faulty)], sizes=[]))
    statuses = [t["status"] for t in out.tasks]
    assert statuses[0].startswith("error: fault") and "out of bounds" in statuses[0]
    assert sum(s.startswith("error: fault") for s in statuses) == launcher.MAX_RESTARTS_PER_PUZZLE
    assert all(s.startswith("not run: the file failed") for s in statuses[launcher.MAX_RESTARTS_PER_PUZZLE:])
    assert len(statuses) == 6


def test_poison_is_nan_for_floats_and_zero_for_integers():
    engine = GpusimEngine(torch, registry.get("ring-all-reduce"),
                          workspace.reference_path(registry.get("ring-all-reduce")))
    f, i = engine.tensor(np.ones(3, np.float32)), engine.tensor(np.ones(3, np.int32))
    engine.poison(f)
    engine.poison(i)
    assert np.isnan(engine.host(f)).all() and (engine.host(i) == 0).all()
