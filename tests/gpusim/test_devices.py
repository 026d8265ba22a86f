"""Several devices (gpusim/devices): bytes per link against counts by hand, races between devices, ordering by
synchronisation, topologies, and a ring all-reduce bit for bit against a sequential sum in the same order."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import gpusim
from gpusim import DataRace, DeviceRace, LaunchError, OutOfBounds, System, Topology


@cuda.jit
def copy_from(out, src, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = src[i]


@cuda.jit
def copy_strided(out, src, n, stride):
    i = cuda.grid(1)
    if i < n:
        out[i] = src[i * stride]


@cuda.jit
def write_to(dst, n, value):
    i = cuda.grid(1)
    if i < n:
        dst[i] = value


@cuda.jit
def read_first(out, src):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = src[0]


@cuda.jit
def add_atomically(dst, n, value):
    i = cuda.grid(1)
    if i < n:
        cuda.atomic.add(dst, i, value)


@cuda.jit
def add_atomically_used(dst, old, n, value):
    i = cuda.grid(1)
    if i < n:
        old[i] = cuda.atomic.add(dst, i, value)


@cuda.jit
def accumulate(mine, left, start, end):
    i = start + cuda.grid(1)
    if i < end:
        mine[i] += left[i]


@cuda.jit
def overwrite(mine, left, start, end):
    i = start + cuda.grid(1)
    if i < end:
        mine[i] = left[i]


def _system(n, topology=None, **arrays):
    system = System(topology or Topology.switch(n))
    placed = {name: system.place(device, array, name) for name, (device, array) in arrays.items()}
    return system, placed


# --- bytes per link, by hand ---------------------------------------------------------------------------------

def test_a_peer_read_counts_bytes_sectors_and_requests_on_the_link_into_the_reader():
    system, a = _system(2, src=(0, np.arange(100, dtype=np.float32)), out=(1, np.zeros(100, np.float32)))
    report = system.launch(1, copy_from, 1, 128, (a["out"], a["src"], 100))
    assert not report.faults
    # 100 float32 = 400 bytes, read by warps 0-3 of one block (warp 3: lanes 96-99 only):
    # warps 0-2 touch 128 bytes = 4 sectors each, warp 3 touches 16 bytes = 1 sector: 13 sectors, 4 requests.
    assert system.links.bytes == {(0, 1): 400}
    assert system.links.sectors == {(0, 1): 13}
    assert system.links.requests == {(0, 1): 4}
    assert report.extra["links"].bytes == {(0, 1): 400} and report.extra["device"] == 1
    assert system.links.received(1) == 400 and system.links.sent(0) == 400 and system.links.received(0) == 0
    assert system.links.total_bytes == 400 and system.links.total_sectors == 13
    assert system.links.to_dict() == {"bytes": {"0->1": 400}, "sectors": {"0->1": 13}, "requests": {"0->1": 4}}


def test_a_strided_peer_read_moves_more_sectors_than_bytes_need():
    system, a = _system(2, src=(1, np.arange(128, dtype=np.float32)), out=(0, np.zeros(64, np.float32)))
    system.launch(0, copy_strided, 2, 32, (a["out"], a["src"], 64, 2))
    # 64 lanes read every other float32: 256 bytes, each warp's 32 values spread over 256 bytes = 8 sectors
    assert system.links.bytes == {(1, 0): 64 * 4}
    assert system.links.sectors == {(1, 0): 2 * 8}
    assert system.links.requests == {(1, 0): 2}


def test_a_value_every_lane_reads_crosses_once_per_request():
    system, a = _system(2, src=(0, np.arange(4, dtype=np.float64)), out=(1, np.zeros(64, np.float64)))
    system.launch(1, read_first, 2, 32, (a["out"], a["src"]))
    # two warps, each one 8-byte value: 2 requests, 8 bytes and 1 sector each
    assert system.links.bytes == {(0, 1): 16} and system.links.sectors == {(0, 1): 2}


def test_stores_and_atomics_go_from_the_launcher_to_the_owner():
    system, a = _system(3, dst=(2, np.zeros(40, np.int32)), old=(0, np.zeros(40, np.int32)))
    system.launch(0, write_to, 1, 64, (a["dst"], 40, 7))
    # 40 int32 = 160 bytes: warp 0 128 bytes (4 sectors), warp 1 32 bytes (1 sector)
    assert system.links.bytes == {(0, 2): 160} and system.links.sectors == {(0, 2): 5}
    system.synchronize()
    system.launch(1, add_atomically, 1, 64, (a["dst"], 40, 1))     # value unused: only 1 -> 2
    assert system.links.bytes == {(0, 2): 160, (1, 2): 160}
    system.synchronize()
    system.launch(0, add_atomically_used, 1, 64, (a["dst"], a["old"], 40, 1))   # value used: both ways
    assert system.links.bytes == {(0, 2): 320, (1, 2): 160, (2, 0): 160}
    assert list(a["dst"][:3]) == [9, 9, 9] and list(a["old"][:3]) == [8, 8, 8]


def test_local_accesses_count_nothing():
    system, a = _system(2, src=(0, np.arange(64, dtype=np.float32)), out=(0, np.zeros(64, np.float32)))
    system.launch(0, copy_from, 2, 32, (a["out"], a["src"], 64))
    assert system.links.bytes == {} and system.links.total_bytes == 0


# --- races between devices -----------------------------------------------------------------------------------

def test_a_read_of_what_another_device_wrote_without_synchronisation_is_a_race():
    system, a = _system(2, x=(0, np.zeros(64, np.float32)), y=(1, np.zeros(64, np.float32)))
    assert not system.launch(0, write_to, 2, 32, (a["x"], 64, 1.5)).faults
    report = system.launch(1, copy_from, 2, 32, (a["y"], a["x"], 64))
    races = report.faults_of(DeviceRace)
    assert len(races) == 1 and isinstance(races[0], DataRace)
    race = races[0]
    assert (race.device, race.other_device) == (1, 0)
    assert race.hazard == "read after write" and race.array == "src" and race.index == (0,)
    assert race.block == (0, 0, 0) and race.thread == (0, 0, 0)
    assert race.other_block == (0, 0, 0) and race.other_thread == (0, 0, 0)
    assert race.lineno == copy_from.py_func.__code__.co_firstlineno + 4          # out[i] = src[i]
    assert race.other_lineno == write_to.py_func.__code__.co_firstlineno + 4     # dst[i] = value
    assert race.other_kernel == "write_to" and race.count == 64
    assert "placed as 'x'" in race.message and "device 1 read it while device 0 wrote it" in race.message
    assert system.faults == races
    as_dict = race.to_dict()
    assert (as_dict["kind"], as_dict["device"], as_dict["other_device"]) == ("DeviceRace", 1, 0)
    assert as_dict["other_thread"] == [0, 0, 0] and as_dict["hazard"] == "read after write"


def test_synchronisation_orders_the_devices():
    system, a = _system(2, x=(0, np.zeros(64, np.float32)), y=(1, np.zeros(64, np.float32)))
    system.launch(0, write_to, 2, 32, (a["x"], 64, 1.5))
    system.synchronize()
    assert not system.launch(1, copy_from, 2, 32, (a["y"], a["x"], 64)).faults
    assert (a["y"] == 1.5).all()


def test_a_write_after_a_peer_read_is_a_race_in_either_issue_order():
    system, a = _system(2, x=(0, np.zeros(64, np.float32)), y=(1, np.zeros(64, np.float32)))
    system.launch(1, copy_from, 2, 32, (a["y"], a["x"], 64))          # device 1 reads x first ...
    report = system.launch(0, write_to, 2, 32, (a["x"], 64, 2.0))     # ... device 0 overwrites it
    (race,) = report.faults_of(DeviceRace)
    assert race.hazard == "write after read" and (race.device, race.other_device) == (0, 1)


def test_writes_from_two_devices_race_and_atomics_from_two_devices_do_not():
    system, a = _system(3, x=(2, np.zeros(32, np.int32)))
    system.launch(0, write_to, 1, 32, (a["x"], 32, 1))
    (race,) = system.launch(1, write_to, 1, 32, (a["x"], 32, 2)).faults_of(DeviceRace)
    assert race.hazard == "write after write"
    system, a = _system(3, x=(2, np.zeros(32, np.int32)))
    system.launch(0, add_atomically, 1, 32, (a["x"], 32, 1))
    assert not system.launch(1, add_atomically, 1, 32, (a["x"], 32, 2)).faults
    assert (a["x"] == 3).all()
    races = system.launch(2, write_to, 1, 32, (a["x"], 32, 5)).faults_of(DeviceRace)   # plain vs atomics
    assert sorted(r.other_device for r in races) == [0, 1]      # one report per unordered device


def test_launches_on_one_device_are_ordered_by_its_stream():
    system, a = _system(2, x=(0, np.zeros(32, np.float32)), y=(1, np.zeros(32, np.float32)))
    system.launch(1, write_to, 1, 32, (a["x"], 32, 1.0))
    assert not system.launch(1, copy_from, 1, 32, (a["y"], a["x"], 32)).faults
    assert not system.launch(1, write_to, 1, 32, (a["x"], 32, 2.0)).faults


def test_a_partial_synchronisation_orders_only_its_devices_and_ordering_is_transitive():
    system, a = _system(3, x=(0, np.zeros(32, np.float32)), y=(1, np.zeros(32, np.float32)),
                        z=(2, np.zeros(32, np.float32)))
    system.launch(0, write_to, 1, 32, (a["x"], 32, 1.0))
    system.synchronize([0, 1])
    (race,) = system.launch(2, copy_from, 1, 32, (a["z"], a["x"], 32)).faults_of(DeviceRace)
    assert race.other_device == 0
    system, a = _system(3, x=(0, np.zeros(32, np.float32)), y=(1, np.zeros(32, np.float32)),
                        z=(2, np.zeros(32, np.float32)))
    system.launch(0, write_to, 1, 32, (a["x"], 32, 1.0))
    system.synchronize([0, 1])
    system.launch(1, copy_from, 1, 32, (a["y"], a["x"], 32))
    system.synchronize([1, 2])                                       # 0 -> 1 -> 2
    assert not system.launch(2, copy_from, 1, 32, (a["z"], a["x"], 32)).faults


def test_disjoint_elements_never_race():
    system, a = _system(2, x=(0, np.zeros(64, np.float32)), y=(1, np.zeros(64, np.float32)))
    system.launch(0, accumulate, 1, 32, (a["x"], a["y"], 0, 32))     # device 0: x[0:32] += y[0:32]
    assert not system.launch(1, accumulate, 1, 32, (a["y"], a["x"], 32, 64)).faults   # y[32:64] += x[32:64]


def test_each_launch_keeps_gpusims_own_checks():
    system, a = _system(2, src=(0, np.zeros(10, np.float32)), out=(1, np.zeros(40, np.float32)))
    report = system.launch(1, copy_from, 1, 64, (a["out"], a["src"], 40))     # reads src past its end
    (fault,) = report.faults_of(OutOfBounds)
    assert fault.array == "src" and fault.index == (10,)


# --- topologies and placement ----------------------------------------------------------------------------------

def test_topologies():
    ring = Topology.ring(4)
    assert ring.links == {(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2), (3, 0), (0, 3)}
    assert ring.incoming(0) == [1, 3] and not ring.linked(0, 2) and ring.linked(2, 2)
    assert Topology.ring(2).links == {(0, 1), (1, 0)} and Topology.ring(1).links == frozenset()
    assert len(Topology.switch(4).links) == 12 and Topology.switch(4).linked(0, 2)
    with pytest.raises(ValueError):
        Topology(2, frozenset({(0, 2)}))


def test_a_ring_refuses_a_peer_that_is_not_a_neighbour():
    system, a = _system(4, Topology.ring(4), src=(2, np.zeros(32, np.float32)), out=(0, np.zeros(32, np.float32)))
    with pytest.raises(LaunchError, match="no link"):
        system.launch(0, copy_from, 1, 32, (a["out"], a["src"], 32))
    assert system.launch(1, copy_from, 1, 32, (system.place(1, np.zeros(32, np.float32)), a["src"], 32)).ok


def test_placement_errors():
    system = System(2)
    x = system.place(0, np.zeros(8, np.float32))
    with pytest.raises(LaunchError, match="already placed"):
        system.place(1, x)
    with pytest.raises(LaunchError, match="overlaps"):
        system.place(1, x[2:])
    with pytest.raises(LaunchError, match="not placed"):
        system.launch(0, copy_from, 1, 8, (x, np.zeros(8, np.float32), 8))
    with pytest.raises(LaunchError, match="device must be"):
        system.launch(2, write_to, 1, 8, (x, 8, 1.0))
    assert system.device_of(x) == 0


# --- a ring all-reduce, bit for bit -------------------------------------------------------------------------------

def _ring_all_reduce(data: np.ndarray, sync: bool = True) -> tuple[System, list[np.ndarray]]:
    ranks, n = data.shape
    size = -(-n // ranks)
    system = System(Topology.ring(ranks))
    xs = [system.place(d, data[d].copy(), f"x{d}") for d in range(ranks)]

    def bounds(c):
        return c * size, min(n, (c + 1) * size)

    for kernel, offset in ((accumulate, 1), (overwrite, 0)):
        for step in range(ranks - 1):
            for d in range(ranks):
                chunk = (d - offset - step) % ranks
                system.launch(d, kernel, 1, 64, (xs[d], xs[d - 1], *bounds(chunk)))
            if sync:
                system.synchronize()
    return system, xs


def test_ring_all_reduce_gives_the_bits_of_a_sequential_sum_in_the_same_order():
    ranks, n = 4, 50
    rng = np.random.default_rng(12)
    data = (rng.normal(size=(ranks, n)) * 10.0 ** rng.integers(-3, 4, size=(ranks, n))).astype(np.float32)
    system, xs = _ring_all_reduce(data)
    assert not system.faults
    # chunk c is summed around the ring starting at device c: x_c + x_(c+1) + ... + x_(c-1), left to right
    size = 13
    expected = np.empty(n, np.float32)
    for c in range(ranks):
        part = slice(c * size, min(n, (c + 1) * size))
        acc = data[c, part].copy()
        for k in range(1, ranks):
            acc = acc + data[(c + k) % ranks, part]
        expected[part] = acc
    for x in xs:
        np.testing.assert_array_equal(x, expected)
    # the order matters: a plain sum from device 0 up differs in some bits (so the test can tell)
    assert not np.array_equal(expected, data[0] + data[1] + data[2] + data[3])
    # bytes: chunks are 13, 13, 13, 11 floats; device d receives from d - 1 chunks d-1, d-2, d-3 while
    # reducing and d, d-1, d-2 while gathering, 4 bytes each
    sizes = [13, 13, 13, 11]
    for d in range(ranks):
        got = sum(sizes[(d - 1 - s) % ranks] + sizes[(d - s) % ranks] for s in range(ranks - 1))
        assert system.links.bytes[((d - 1) % ranks, d)] == 4 * got
    assert system.links.total_bytes == 4 * 2 * (ranks - 1) * n
    assert set(system.links.bytes) == {(0, 1), (1, 2), (2, 3), (3, 0)}     # one direction of each link


def test_ring_all_reduce_without_synchronisation_is_caught():
    data = np.arange(4 * 12, dtype=np.float32).reshape(4, 12)
    system, _ = _ring_all_reduce(data, sync=False)
    assert system.faults and all(isinstance(f, DeviceRace) for f in system.faults)
    first = system.faults[0]
    assert first.other_device == (first.device - 1) % 4 or first.device == (first.other_device - 1) % 4


def test_gpusim_exports():
    assert gpusim.System is System and gpusim.DeviceRace is DeviceRace and gpusim.Topology is Topology
