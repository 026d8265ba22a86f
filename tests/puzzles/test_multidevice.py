"""puzzles/multidevice.py: multi-device cases through the checker — placement by name, outputs per device,
Sync steps and int arguments, faults that name the device, per-link numbers in the stats, JSON-safe results,
and the transfers a graduate run on real GPUs would make."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from puzzle_fixtures import write

from puzzles import multidevice
from puzzles.checker import check_file
from puzzles.compare import PuzzleBug
from puzzles.model import Case, Devices, LaunchStep, Puzzle, Sync

# each device copies its left neighbour's vector into its own output, then doubles it in a second round
SOLUTION = '''
    from numba import cuda


    @cuda.jit
    def pull(out, mine, left, n):
        i = cuda.grid(1)
        if i < n:
            out[i] = left[i]


    @cuda.jit
    def double(out, n):
        i = cuda.grid(1)
        if i < n:
            out[i] = out[i] * 2
'''


def _cases(sync: bool = True, ranks: int = 3, place_all: bool = True):
    def make(rng=None):
        n = 40
        buffers = {f"x@{d}": np.arange(n, dtype=np.float32) + 100 * d for d in range(ranks)}
        buffers.update({f"out@{d}": np.full(n, np.nan, np.float32) for d in range(ranks)})
        if not place_all:
            buffers["stray"] = np.zeros(4, np.float32)
        steps: list = [LaunchStep("pull", 1, 64, (f"out@{d}", f"x@{d}", f"x@{(d - 1) % ranks}", n), device=d)
                       for d in range(ranks)]
        if sync:
            steps.append(Sync())
        steps += [LaunchStep("double", 1, 64, (f"out@{d}", n), device=d) for d in range(ranks)]
        ideal = {f"{(d - 1) % ranks}->{d}": n * 4 for d in range(ranks)}
        return (Case("three devices", buffers, tuple(steps), devices=Devices(ranks, "ring", ideal)),)
    return make


def _spec(**b):
    ranks = sum(1 for k in b if k.startswith("x@"))
    return {f"out@{d}": b[f"x@{(d - 1) % ranks}"] * 2 for d in range(ranks)}


def _puzzle(**case_options) -> Puzzle:
    return Puzzle(slug="pull-left", number=902, title="Pull left", chapter=10, difficulty=1, description="",
                  kernels=("pull", "double"), spec=_spec, make_cases=_cases(**case_options), outputs=("out",))


def test_a_multi_device_case_passes_with_link_stats(tmp_path):
    result = check_file(_puzzle(), write(tmp_path, "s.py", SOLUTION))
    assert result.passed, [f.message for f in result.failures]
    stats = result.cases[0].stats
    # each device reads its left neighbour's 40 float32 once: 160 bytes, 5 sectors, on one link each
    assert stats.link_bytes == {"0->1": 160, "1->2": 160, "2->0": 160}
    assert stats.link_sectors == {"0->1": 5, "1->2": 5, "2->0": 5}
    assert stats.ideal_link_bytes == stats.link_bytes and stats.peer_store_bytes == 0
    # two rounds: the pulls (round 0) and, after the Sync, the doublings (round 1), all writing memory
    assert stats.device_launches == ((0, 0, "pull", True), (0, 1, "pull", True), (0, 2, "pull", True),
                                     (1, 0, "double", True), (1, 1, "double", True), (1, 2, "double", True))
    assert stats.launches == 6
    json.dumps(result.to_dict())                          # tuples and string-keyed links stay JSON-safe


def test_a_race_between_devices_fails_with_the_device_named(tmp_path):
    # device d clears its own x while device d + 1 reads it as its left neighbour's, in the same round
    racy = SOLUTION.replace("out[i] = left[i]", "out[i] = left[i]\n            mine[i] = 0")
    result = check_file(_puzzle(), write(tmp_path, "s.py", racy))
    assert not result.passed
    fault = next(f for f in result.failures if f.kind == "fault")
    assert fault.detail["device"] == 1 and fault.detail["between_devices"]     # device 1 reads x@0 after
    assert (fault.fault.device, fault.fault.other_device, fault.fault.array) == (1, 0, "left")
    assert "DataRace" in fault.detail["faults"]
    assert fault.message.startswith(f"on device {fault.detail['device']}: Data race between devices")


def test_peer_stores_are_counted(tmp_path):
    # device d writes its left neighbour's x back (only device d touches it: no race): the 40 stores cross
    # the link from d to d - 1 (160 bytes), and the two loads of left[i] (two instructions) 320 bytes the
    # other way
    pusher = SOLUTION.replace("out[i] = left[i]", "out[i] = left[i]\n            left[i] = left[i]")
    result = check_file(_puzzle(), write(tmp_path, "s.py", pusher))
    assert result.passed, [f.message for f in result.failures]
    stats = result.cases[0].stats
    assert stats.peer_store_bytes == 3 * 160
    assert stats.link_bytes == {"0->1": 320, "1->2": 320, "2->0": 320, "1->0": 160, "2->1": 160, "0->2": 160}


def test_a_mismatch_names_the_device_buffer(tmp_path):
    wrong = SOLUTION.replace("out[i] * 2", "out[i] * 3")
    result = check_file(_puzzle(), write(tmp_path, "s.py", wrong))
    mismatch = next(f for f in result.failures if f.kind == "mismatch")
    assert "`out@0`" in mismatch.message


def test_an_array_without_a_device_is_a_puzzle_bug(tmp_path):
    result = check_file(_puzzle(place_all=False), write(tmp_path, "s.py", SOLUTION))
    assert any(f.kind == "error" and "'stray'" in f.message and "has a bug" in f.message for f in result.failures)


def test_names_and_outputs():
    assert multidevice.device_of("x@12") == 12 and multidevice.device_of("x") is None
    assert multidevice.device_of("a@b") is None and multidevice.device_of("@3") is None
    assert multidevice.base_name("send@0") == "send" and multidevice.base_name("lr") == "lr"
    buffers = {"out@1": 0, "out@0": 0, "out@10": 0, "x@0": 0}
    assert multidevice.output_names(_puzzle(), buffers) == ("out@0", "out@1", "out@10")
    with pytest.raises(PuzzleBug):
        multidevice.output_names(_puzzle(), {"x@0": 0})
    case = _cases()()[0]
    assert multidevice.case_outputs(_puzzle(), case) == ("out@0", "out@1", "out@2")
    single = dataclasses.replace(case, devices=None)
    assert multidevice.case_outputs(_puzzle(), single) == ("out",)


def test_case_launches_leave_out_the_syncs():
    case = _cases()()[0]
    assert len(case.steps) == 7 and [s.kernel for s in case.launches] == ["pull"] * 3 + ["double"] * 3
    assert case.launches[0].arg_values(case.buffers)[3] == 40        # an int argument passes as it is


def test_peer_reads_list_the_transfers_a_real_run_needs():
    case = _cases()()[0]
    # step d pulls x@(d-1) onto device d; x@d and the doublings are local; scalars are not transfers
    assert multidevice.peer_reads(case) == [(0, 0, "x@2", 2), (1, 1, "x@0", 0), (2, 2, "x@1", 1)]
