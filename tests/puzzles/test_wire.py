"""What the sandbox sends is untrusted: puzzles/judge/wire.py accepts plain data only, and refuses the rest."""

from __future__ import annotations

import numpy as np
import pytest

from puzzles.judge import wire
from puzzles.judge.sandbox import describe


def _round_trip(value):
    arrays: list[bytes] = []
    doc = describe("x", value, arrays)
    return wire.decode_value(doc, arrays)


def test_plain_values_come_back_exactly():
    assert _round_trip(3) == ("number", 3) and _round_trip(True) == ("number", True)
    assert _round_trip(0.1) == ("number", 0.1)                          # bit-exact through float.hex
    kind, value = _round_trip(np.float32(1.5))
    assert kind == "number" and value.dtype == np.float32 and value == 1.5
    assert _round_trip((1, (2.5, 3))) == ("tuple", (1, (2.5, 3)))
    kind, array = _round_trip(np.arange(6, dtype=np.int16).reshape(2, 3))
    assert kind == "array" and array.dtype == np.int16 and array.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert array.flags.writeable and array.flags.c_contiguous
    assert _round_trip(np.float16) == ("dtype", np.dtype(np.float16))


def test_anything_else_is_only_named():
    assert _round_trip({"a": 1})[0] == "other"
    assert _round_trip(np.array(["a"]))[0] == "other"                   # not numeric
    assert _round_trip(np.zeros(2, dtype=object))[0] == "other"
    assert _round_trip((1, "s"))[0] == "other"                          # a tuple kernels cannot use
    assert _round_trip(10 ** 30)[0] == "other"

    class Liar:
        def __getattribute__(self, name):
            raise RuntimeError("no")

    assert describe("x", Liar(), [])["k"] == "other"


@pytest.mark.parametrize("doc", [
    {"k": "array", "dtype": "|O", "shape": [1], "blob": 0},
    {"k": "array", "dtype": "<f4", "shape": [3], "blob": 0},            # 3 floats need 12 bytes
    {"k": "array", "dtype": "<f4", "shape": [-1], "blob": 0},
    {"k": "array", "dtype": "<f4", "shape": [1], "blob": 5},
    {"k": "scalar", "dtype": "V8", "v": "00" * 8},
    {"k": "int", "v": 2 ** 70},
    {"k": "int", "v": True},
    {"k": "float", "v": 1.0},                                           # floats travel as hex text
    {"k": "tuple", "items": "no"},
    {"k": "pickle", "v": "..."},
    [],
])
def test_malformed_descriptions_are_refused(doc):
    with pytest.raises(wire.WireError):
        wire.decode_value(doc, [b"\x00" * 8])


def test_frames_split_anywhere_and_bad_frames_are_refused():
    data = wire.json_frame(wire.VALUES, {"values": {}}) + wire.frame(wire.ARRAY, b"abc") + wire.frame(wire.DONE, b"")
    reader = wire.FrameReader()
    frames = [f for i in range(len(data)) for f in reader.feed(data[i:i + 1])]
    assert [k for k, _ in frames] == [wire.VALUES, wire.ARRAY, wire.DONE] and frames[1][1] == b"abc"
    with pytest.raises(wire.WireError):
        wire.FrameReader().feed(b"Z" + b"\x00" * 4)
    with pytest.raises(wire.WireError):
        wire.FrameReader(budget=10).feed(b"x" * 11)
    with pytest.raises(wire.WireError):
        wire.load_json(b"\xff not json")
