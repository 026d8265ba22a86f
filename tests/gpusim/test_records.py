"""Records (NumPy structured dtypes) in kernels: fields read and written through arrays of records and single
records, nested array fields, whole-record copies, const record arrays, and what the observers see (a field
access touches the field's bytes at the record's offset). Expected values come from NumPy doing the same
assignments on the host, and sector counts from the addresses worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import gpusim
from gpusim.faults import DataRace, KernelCompileError, OutOfBounds
from gpusim.ir.types import INT64, Array, Record, RecordRef

REC = np.dtype([("a", np.float64), ("b", np.int32), ("c", np.complex64), ("d", np.uint8, (5,))], align=True)
NESTED = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])
PAIR = np.dtype([("x", np.float64), ("y", np.int32)], align=True)     # 16 bytes: x at 0, y at 8
CONST_PAIRS = np.array([(1.5, 2), (3.5, 4), (5.5, 6)], dtype=PAIR)


def _sample() -> np.ndarray:
    a = np.zeros(4, REC)
    for k in range(4):
        a[k] = (k / 2, k + 1, complex(0, k), [k] * 5)
    return a


def _run(kernel, grid, block, *args):
    r = gpusim.launch(kernel, grid, block, args)
    r.raise_for_faults()
    return r


def set_fields(ary, v):
    i = cuda.grid(1)
    if i < ary.shape[0]:
        ary[i].a = v * i
        ary[i]["b"] = i * 10
        r = ary[i]
        r.c = complex(i, -i)
        r.d[i] = 7


def test_fields_written_through_an_array_of_records_match_numpy():
    got, want = _sample(), _sample()
    _run(set_fields, 1, 8, got, 1.25)
    for i in range(4):
        want[i]["a"] = 1.25 * i
        want[i]["b"] = i * 10
        want[i]["c"] = complex(i, -i)
        want[i]["d"][i] = 7
    assert got.tobytes() == want.tobytes()


def copy_record(ary, i, j):
    ary[i] = ary[j]


def test_a_whole_record_assignment_copies_every_field_and_nothing_else():
    got, want = _sample(), _sample()
    _run(copy_record, 1, 1, got, 0, 3)
    want[0] = want[3]
    assert got.tobytes() == want.tobytes()


def read_one(r, out):
    out[0] = r.a + r["b"] + r[1] + r.d[4]


def write_nested(r):
    r.i = 3
    for k in range(3):
        r.j[k, 0] = k + 0.5
        r.j[k, 1] = -k


def test_one_record_argument_is_read_and_written_in_place():
    a = _sample()
    out = np.zeros(1)
    _run(read_one, 1, 1, a[2], out)
    assert out[0] == 1.0 + 3 + 3 + 2
    n = np.zeros(2, NESTED)
    _run(write_nested, 1, 1, n[1])
    want = np.zeros(2, NESTED)
    want[1]["i"] = 3
    want[1]["j"] = [[0.5, 0], [1.5, -1], [2.5, -2]]
    assert n.tobytes() == want.tobytes()


def assign_nested(dest, src, other):
    dest["j"] = src
    other.j = dest.j


def test_a_nested_array_is_copied_whole_from_an_array_and_from_another_record():
    dest, other = np.zeros(1, NESTED), np.zeros(3, NESTED)
    src = np.arange(6, dtype=np.int16).reshape(3, 2) * 3
    _run(assign_nested, 1, 1, dest[0], src, other[2])
    assert (dest[0]["j"] == src).all() and (other[2]["j"] == src).all() and (other[:2]["j"] == 0).all()


@cuda.jit(device=True)
def first_of(ary):
    return ary[1]


def store_returned(ary, out):
    out[0] = first_of(ary)
    r = first_of(ary)
    out[1].x = r.x * 2


def test_a_device_function_returns_a_reference_to_a_record():
    ary = np.array([(1.0, 1), (2.5, 7)], PAIR)
    out = np.zeros(2, PAIR)
    _run(store_returned, 1, 1, ary, out)
    assert out[0]["x"] == 2.5 and out[0]["y"] == 7 and out[1]["x"] == 5.0 and out[1]["y"] == 0


def read_const(xs, ys):
    c = cuda.const.array_like(CONST_PAIRS)
    i = cuda.grid(1)
    if i < c.shape[0]:
        xs[i] = c[i]["x"]
        ys[i] = c[i].y


def test_const_record_arrays_are_read_by_field():
    xs, ys = np.zeros(3), np.zeros(3, np.int64)
    _run(read_const, 1, 4, xs, ys)
    assert xs.tolist() == CONST_PAIRS["x"].tolist() and ys.tolist() == CONST_PAIRS["y"].tolist()


def write_const(ys):
    c = cuda.const.array_like(CONST_PAIRS)
    c[0].y = 1
    ys[0] = 0


def test_a_const_record_cannot_be_written():
    with pytest.raises(KernelCompileError, match="constant memory"):
        gpusim.launch(write_const, 1, 1, (np.zeros(1, np.int64),))


def test_arguments_are_typed_as_records_and_references():
    from gpusim.launch import arg_type

    a = np.zeros(3, PAIR)
    t = arg_type(a, "a")
    assert isinstance(t, Array) and isinstance(t.dtype, Record) and [f.name for f in t.dtype.fields] == ["x", "y"]
    assert t.dtype.fields[1].offset == 8 and t.dtype.itemsize == 16
    r = arg_type(a[0], "r")
    assert isinstance(r, RecordRef) and r.items[0].dtype == t.dtype and r.items[1:] == (INT64,)


def nested_oob(r, k):
    r.h[k] = 1.0


def test_an_out_of_bounds_nested_index_names_the_field_and_the_index():
    dt = np.dtype([("g", np.int32), ("h", np.float32, (2,))])
    a = np.zeros(1, dt)
    rep = gpusim.launch(nested_oob, 1, 1, (a[0], 2))
    f = next(f for f in rep.faults if isinstance(f, OutOfBounds))
    assert "r.h" in str(f) and "2" in str(f) and f.lineno == nested_oob.__code__.co_firstlineno + 1
    assert (a["h"] == 0).all()


def race_same_field(ary):
    ary[0].y = cuda.threadIdx.x


def fields_apart(ary):
    i = cuda.threadIdx.x
    if i == 0:
        ary[0].x = 1.0
    else:
        ary[0].y = 2


def test_two_threads_writing_one_field_race_and_two_fields_do_not():
    rep = gpusim.launch(race_same_field, 1, 2, (np.zeros(1, PAIR),))
    assert any(isinstance(f, DataRace) for f in rep.faults)
    a = np.zeros(1, PAIR)
    rep = gpusim.launch(fields_apart, 1, 2, (a,))
    assert not rep.faults and a[0]["x"] == 1.0 and a[0]["y"] == 2


def read_y(ary, out):
    i = cuda.grid(1)
    out[i] = ary[i].y


def read_x(ary, out):
    i = cuda.grid(1)
    out[i] = ary[i].x


def read_both(ary, out):
    i = cuda.grid(1)
    out[i] = ary[i].x + ary[i].y


def test_a_field_load_touches_the_fields_bytes_at_the_records_offset():
    # 32 lanes read ary[i].y: 4 bytes at 256-aligned base + 16*i + 8, spanning 512 bytes: two records per 32-byte
    # sector, 16 sectors for the one request (a packed int32 array would need 4)
    ary = np.zeros(32, PAIR)
    m = _run(read_y, 1, 32, ary, np.zeros(32, np.int32)).metrics
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 1
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 16
    # the 8-byte x at offset 0 of each record: the same 16 sectors; DRAM reads the records' 512 bytes once even
    # when both fields are read (one footprint for the array of records)
    m = _run(read_x, 1, 32, ary, np.zeros(32)).metrics
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 16
    assert m["dram__bytes_read.sum"] == 512
    m = _run(read_both, 1, 32, ary, np.zeros(32)).metrics
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 32 and m["dram__bytes_read.sum"] == 512


YARD = np.dtype([("statue", np.float64), ("newspaper", np.float64, (6,))])
GOOSE = np.dtype([("garden", np.float64, (12,)), ("backyard", YARD)], align=True)


def nested_records(f, g):
    f.backyard.newspaper[3] = 2.0
    f.backyard.newspaper[3] += 3.0
    f.backyard.statue = f.garden[1]
    g[0] = g[1]


def test_a_record_inside_a_record_is_read_written_and_copied_with_its_parent():
    f, g = np.zeros(1, GOOSE), np.zeros(2, GOOSE)
    f[0]["garden"][1] = 4.5
    g[1]["backyard"]["newspaper"][2], g[1]["garden"][3] = 9, 4
    _run(nested_records, 1, 1, f[0], g)
    assert f[0]["backyard"]["newspaper"].tolist() == [0, 0, 0, 5, 0, 0] and f[0]["backyard"]["statue"] == 4.5
    assert g[0].tobytes() == g[1].tobytes()


def through_shared(x, y):
    sm = cuda.shared.array(4, dtype=NESTED)
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.x * 4 + tx
    sm[tx] = x[i]
    cuda.syncthreads()
    y[i] = sm[3 - tx]


def test_records_pass_through_shared_memory_per_block():
    x = np.zeros(8, NESTED)
    x["i"] = np.arange(8)
    x["j"] = np.arange(48, dtype=np.float32).reshape(8, 3, 2)
    y = np.zeros(8, NESTED)
    _run(through_shared, 2, 4, x, y)
    want = np.concatenate([x[:4][::-1], x[4:][::-1]])
    assert y.tobytes() == want.tobytes()


def shared_unwritten(y):
    sm = cuda.shared.array(4, dtype=PAIR)
    y[0] = sm[1].x


def test_reading_an_unwritten_shared_record_field_is_found():
    rep = gpusim.launch(shared_unwritten, 1, 1, (np.zeros(1),))
    assert rep.faults and "before any thread wrote it" in str(rep.faults[0]) and "sm.x" in str(rep.faults[0])


def count_into_field(ary):
    cuda.atomic.add(ary.y, 0, 1)
    cuda.atomic.add(ary.x, cuda.threadIdx.x % 2, 0.5)


def test_an_atomic_updates_one_field_of_an_array_of_records():
    a = np.zeros(2, PAIR)
    _run(count_into_field, 1, 6, a)
    assert a["y"].tolist() == [6, 0] and a["x"].tolist() == [1.5, 1.5]


@cuda.jit(device=True)
def total(h):
    s = 0.0
    for k in range(h.shape[0]):
        s += h[k]
    return s


def nested_as_a_value(r, out):
    h = r.j[1]
    out[0] = total(r.j[2]) + h[0] * 10


def test_a_nested_array_field_is_an_array_a_local_or_a_device_function_can_hold():
    n = np.zeros(1, NESTED)
    n[0]["j"] = [[1, 2], [3, 4], [5, 6]]
    out = np.zeros(1)
    _run(nested_as_a_value, 1, 1, n[0], out)
    assert out[0] == 5 + 6 + 3 * 10
