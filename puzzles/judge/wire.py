"""What crosses from the sandbox to the judge: length-prefixed frames of JSON and raw array bytes.

The sandbox runs the player's file, so everything it sends is untrusted: the judge never unpickles it and
never evaluates it. A frame is one type byte, a 4-byte big-endian length and the payload. ``FrameReader``
refuses a frame longer than the budget left, an unknown type, or a payload that is not what its type says,
with ``WireError``; ``decode_value`` turns a described value back into a number, a tuple, a NumPy array or a
reference, and refuses anything else.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np

EVENT = b"E"      # JSON: something the file did that the judge must know at once (it read the reference)
VALUES = b"V"     # JSON: the module's names and what each one is (see ``describe`` in sandbox.py)
ARRAY = b"A"      # raw bytes of one NumPy array, in the order the VALUES frame lists them
DONE = b"D"       # empty: the sandbox finished sending
TYPES = (EVENT, VALUES, ARRAY, DONE)

HEADER = struct.Struct(">cI")
MAX_TOTAL_BYTES = 256 * 1024 * 1024     # all frames of one load together
MAX_JSON_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 8                           # nesting of tuples inside tuples
NUMERIC_KINDS = "biuf"                  # bool, signed and unsigned integers, floats


class WireError(Exception):
    """The sandbox sent something that is not a well-formed frame or value."""


def frame(kind: bytes, payload: bytes) -> bytes:
    return HEADER.pack(kind, len(payload)) + payload


def json_frame(kind: bytes, doc: Any) -> bytes:
    return frame(kind, json.dumps(doc, allow_nan=False, separators=(",", ":")).encode("utf-8"))


class FrameReader:
    """Splits a byte stream into frames; ``feed`` returns the frames completed by the new bytes."""

    def __init__(self, budget: int = MAX_TOTAL_BYTES):
        self.buffer = bytearray()
        self.budget = budget

    def feed(self, data: bytes) -> list[tuple[bytes, bytes]]:
        self.budget -= len(data)
        if self.budget < 0:
            raise WireError(f"the sandbox sent more than {MAX_TOTAL_BYTES // (1024 * 1024)} MiB")
        self.buffer += data
        frames = []
        while len(self.buffer) >= HEADER.size:
            kind, length = HEADER.unpack_from(self.buffer)
            if kind not in TYPES:
                raise WireError(f"unknown frame type {kind!r}")
            if kind != ARRAY and length > MAX_JSON_BYTES:
                raise WireError("a description frame is too long")
            if len(self.buffer) < HEADER.size + length:
                break
            payload = bytes(self.buffer[HEADER.size:HEADER.size + length])
            del self.buffer[:HEADER.size + length]
            frames.append((kind, payload))
        return frames


def load_json(payload: bytes) -> Any:
    try:
        return json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise WireError(f"a frame is not JSON: {e}") from None


# --------------------------------------------------------------------------------------------- values


def encode_float(x: float) -> str:
    return float(x).hex()


def decode_float(text: Any) -> float:
    if not isinstance(text, str):
        raise WireError("a float must be sent as hex text")
    try:
        return float.fromhex(text)
    except ValueError:
        raise WireError(f"bad float {text!r}") from None


def numeric_dtype(text: Any) -> np.dtype:
    """A NumPy dtype from its ``.str`` form, only if it is a plain numeric one (never object or void)."""
    if not isinstance(text, str) or len(text) > 8:
        raise WireError(f"bad dtype {text!r}")
    try:
        dtype = np.dtype(text)
    except TypeError:
        raise WireError(f"bad dtype {text!r}") from None
    if dtype.kind not in NUMERIC_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise WireError(f"dtype {text!r} is not numeric")
    return dtype


def decode_value(doc: Any, arrays: list[bytes], depth: int = 0) -> tuple[str, Any]:
    """One described value -> (kind, value). Kinds: "number", "tuple", "array", "dtype", "module", "ref",
    "function", "other". Raises ``WireError`` for anything malformed."""
    if not isinstance(doc, dict) or not isinstance(doc.get("k"), str):
        raise WireError("a value description must be an object with a kind")
    kind = doc["k"]
    if kind == "bool":
        return "number", bool(_typed(doc.get("v"), bool))
    if kind == "int":
        value = _typed(doc.get("v"), int)
        if not -(2 ** 63) <= value < 2 ** 64:
            raise WireError("an integer constant is out of the 64-bit range")
        return "number", value
    if kind == "float":
        return "number", decode_float(doc.get("v"))
    if kind == "scalar":
        dtype = numeric_dtype(doc.get("dtype"))
        raw = _hex_bytes(doc.get("v"), dtype.itemsize)
        return "number", np.frombuffer(raw, dtype=dtype)[0]
    if kind == "tuple":
        if depth >= MAX_DEPTH:
            raise WireError("tuples nest too deeply")
        items = doc.get("items")
        if not isinstance(items, list):
            raise WireError("a tuple needs items")
        decoded = [decode_value(item, arrays, depth + 1) for item in items]
        if any(k not in ("number", "tuple") for k, _ in decoded):
            return "other", "tuple"
        return "tuple", tuple(v for _, v in decoded)
    if kind == "array":
        dtype = numeric_dtype(doc.get("dtype"))
        shape = doc.get("shape")
        index = doc.get("blob")
        if not (isinstance(shape, list) and all(isinstance(s, int) and s >= 0 for s in shape) and len(shape) <= 8):
            raise WireError("bad array shape")
        if not isinstance(index, int) or not 0 <= index < len(arrays):
            raise WireError("an array's bytes are missing")
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        raw = arrays[index]
        if len(raw) != count * dtype.itemsize:
            raise WireError("an array's bytes do not match its shape")
        return "array", np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    if kind == "dtype":
        return "dtype", numeric_dtype(doc.get("v"))
    if kind in ("module", "ref", "function", "other"):
        plain = (str, int, bool, list, dict, type(None))
        return kind, {k: v for k, v in doc.items() if k != "k" and isinstance(v, plain)}
    raise WireError(f"unknown value kind {kind!r}")


def _typed(value: Any, cls: type) -> Any:
    if cls is int and isinstance(value, bool) or not isinstance(value, cls):
        raise WireError(f"expected a {cls.__name__}")
    return value


def _hex_bytes(text: Any, size: int) -> bytes:
    if not isinstance(text, str) or len(text) != 2 * size:
        raise WireError("bad scalar bytes")
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise WireError("bad scalar bytes") from None
