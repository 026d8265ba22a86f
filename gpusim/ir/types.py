"""The types of the kernel IR: scalars, arrays, tuples and none, as numba-cuda names them.

Every expression and local of the IR has one of these; the front end decides them by numba-cuda's rules
(``gpusim.frontend.typing``) and back ends only read them. The set is small on purpose and can grow (complex
scalars, records, ...) by adding a class here and its rules in the front end.

Records (NumPy structured dtypes) are ``Record``: the element type of an array of records. A record *value*
in a kernel is a reference to one element of such an array, as numba's record is a pointer into the array:
``RecordRef``, a tuple ``(array, index 0, index 1, ...)`` that back ends hold like any tuple. Fields are read
and written through ``FieldView`` (``gpusim.ir.nodes``), never by a back end's own rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class Type:
    """Base class of IR types (frozen dataclasses: compared and hashed by value)."""


@dataclass(frozen=True)
class Scalar(Type):
    """A number or a bool, named like its NumPy dtype ("int32", "float16", "bool")."""

    name: str

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.name)

    @property
    def kind(self) -> str:
        """NumPy's kind letter: "b" bool, "i" signed, "u" unsigned, "f" float, "c" complex."""
        return self.dtype.kind

    @property
    def bits(self) -> int:
        return 1 if self.name == "bool" else self.dtype.itemsize * 8

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def signed(self) -> bool:
        return self.kind in "if"

    def __str__(self) -> str:
        return self.name


BOOL = Scalar("bool")
INT8, INT16, INT32, INT64 = (Scalar(f"int{b}") for b in (8, 16, 32, 64))
UINT8, UINT16, UINT32, UINT64 = (Scalar(f"uint{b}") for b in (8, 16, 32, 64))
FLOAT16, FLOAT32, FLOAT64 = (Scalar(f"float{b}") for b in (16, 32, 64))
COMPLEX64, COMPLEX128 = Scalar("complex64"), Scalar("complex128")
#: numba's complex64 and complex128 (kept out of ``SCALARS``: they have their own conversion rules)
COMPLEXES = (COMPLEX64, COMPLEX128)
#: every scalar type a kernel can hold, in numba's order (bool, signed, unsigned, floats)
SCALARS = (BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, FLOAT16, FLOAT32, FLOAT64)
SIGNED = (INT8, INT16, INT32, INT64)
UNSIGNED = (UINT8, UINT16, UINT32, UINT64)
FLOATS = (FLOAT16, FLOAT32, FLOAT64)


def scalar(dtype: np.dtype | type | str) -> Scalar:
    """The IR scalar type of a NumPy dtype; ``ValueError`` for one a kernel cannot hold."""
    dt = np.dtype(dtype)
    if dt.kind not in "biufc" or not dt.isnative or dt.itemsize > 16:
        raise ValueError(f"a kernel cannot hold values of dtype {dt}")
    return Scalar(dt.name)


@dataclass(frozen=True)
class CharSeq(Type):
    """A fixed-length string, as numba's ``CharSeq`` (bytes, NumPy ``S``) and ``UnicodeCharSeq`` (str, NumPy
    ``U``) type it: the element type of an ``S``/``U`` array or record field, and of a string constant
    (``"XYZ"`` is ``CharSeq("U", 3)``). Storing one into a longer sequence pads it with NULs and into a shorter
    one truncates it, as NumPy and numba do; a kernel copies and stores them, and computes nothing with them."""

    kind: str  # "S" (bytes) or "U" (str)
    count: int

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(f"{self.kind}{max(self.count, 1)}")

    def value(self, v: str | bytes) -> np.generic:
        """The constant ``v`` as one of these (truncated to ``count`` characters; NumPy pads with NULs)."""
        return self.dtype.type(v[:self.count])

    def __str__(self) -> str:
        return f"{'bytes' if self.kind == 'S' else 'str'}[{self.count}]"


def char_seq(dtype: np.dtype) -> CharSeq | None:
    """The ``CharSeq`` of an ``S``/``U`` dtype, None for any other dtype."""
    dt = np.dtype(dtype)
    if dt.kind == "S":
        return CharSeq("S", dt.itemsize)
    if dt.kind == "U":
        return CharSeq("U", dt.itemsize // 4)
    return None


@dataclass(frozen=True)
class Field:
    """One field of a record: its element type, its shape (``()`` for a number, else a nested array) and its
    byte offset in the record."""

    name: str
    type: Scalar | Record | CharSeq
    shape: tuple[int, ...]
    offset: int

    @property
    def count(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class Record(Type):
    """A NumPy structured dtype, as numba's ``Record`` type: its fields in order and its size in bytes."""

    fields: tuple[Field, ...]
    itemsize: int
    aligned: bool = False

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype({"names": [f.name for f in self.fields],
                         "formats": [f.type.dtype if not f.shape else (f.type.dtype, f.shape) for f in self.fields],
                         "offsets": [f.offset for f in self.fields], "itemsize": self.itemsize,
                         "aligned": self.aligned})

    def __str__(self) -> str:
        inner = ", ".join(f"{f.name}: {f.type}{list(f.shape) if f.shape else ''}" for f in self.fields)
        return f"record({inner})"


def record(dtype: np.dtype) -> Record:
    """The IR record type of a structured dtype; ``ValueError`` for one a kernel cannot hold (a field that is
    an array of records, or an object)."""
    dt = np.dtype(dtype)
    if dt.fields is None:
        raise ValueError(f"{dt} is not a structured dtype")
    fields = []
    for name in dt.names:
        fdt, offset = dt.fields[name][:2]
        base, shape = (fdt.subdtype if fdt.subdtype is not None else (fdt, ()))
        if base.fields is not None:
            if shape:
                raise ValueError(f"field {name!r} is an array of records (not supported by gpusim yet)")
            fields.append(Field(name, record(base), (), int(offset)))
            continue
        try:
            t = char_seq(base) or scalar(base)
        except ValueError:
            raise ValueError(f"field {name!r} has dtype {base}, which a kernel cannot hold") from None
        fields.append(Field(name, t, tuple(int(d) for d in shape), int(offset)))
    return Record(tuple(fields), int(dt.itemsize), bool(dt.isalignedstruct))


def element(dtype: np.dtype) -> Scalar | Record:
    """The IR type of an array's elements: a scalar, a record for a structured dtype, a ``CharSeq`` for an
    ``S``/``U`` one."""
    dt = np.dtype(dtype)
    return record(dt) if dt.fields is not None else (char_seq(dt) or scalar(dt))


#: where an array lives; "const" arrays are read-only
SPACES = ("global", "shared", "local", "const")


@dataclass(frozen=True)
class Array(Type):
    """An array: its element type, rank, layout ("C" row-major, "F" column-major, "A" any strides) and
    memory space."""

    dtype: Scalar | Record | CharSeq
    ndim: int
    layout: str
    space: str

    def __str__(self) -> str:
        return f"array({self.dtype}, {self.ndim}d, {self.layout}, {self.space})"


@dataclass(frozen=True)
class Tuple(Type):
    """A fixed-length tuple of values, each with its own type (``cuda.grid(2)``, ``divmod``, ``a.shape``)."""

    items: tuple[Type, ...]
    #: a namedtuple's field names (numba's NamedTuple/NamedUniTuple), None for a plain tuple
    fields: tuple[str, ...] | None = None

    @property
    def uniform(self) -> Type | None:
        """The one item type when every item has it (numba's UniTuple), else None."""
        if self.items and all(t == self.items[0] for t in self.items):
            return self.items[0]
        return None

    def __str__(self) -> str:
        inner = ", ".join(str(t) for t in self.items)
        return f"({inner},)" if len(self.items) == 1 else f"({inner})"


@dataclass(frozen=True)
class NoneType(Type):
    """The type of statements' values and of device functions that return nothing."""

    def __str__(self) -> str:
        return "none"


NONE = NoneType()


@dataclass(frozen=True)
class RecordRef(Tuple):
    """A reference to one record of an array of records, as numba's record value is a pointer into the array:
    held as the tuple ``(array, index 0, index 1, ...)`` (the array, then one int64 index per dimension).
    Reading or writing a field goes through the array; copying the reference copies no data."""

    record: Record | None = None

    def __str__(self) -> str:
        return f"ref({self.record})"


@dataclass(frozen=True)
class Optional(Tuple):
    """numba's ``Optional(T)``: a value of ``T`` or None, the return type of a device function that returns a
    value on some paths and nothing on others. Held as the tuple ``(value, present)``: ``present`` a bool,
    ``value`` meaningless where it is False. ``x is None`` reads ``present``; using ``x`` as a ``T`` is a fault
    on a thread whose ``x`` is None."""

    value_type: Type | None = None

    def __str__(self) -> str:
        return f"optional({self.value_type})"


def optional(t: Type) -> Optional:
    return Optional((t, BOOL), None, t)


def record_ref(array: Array) -> RecordRef:
    return RecordRef((array,) + (INT64,) * array.ndim, None, array.dtype)


def array_of(value: np.ndarray, space: str = "global") -> Array:
    """The IR type of a NumPy array argument, as numba's ``typeof`` gives it."""
    if value.flags.c_contiguous:
        layout = "C"
    elif value.flags.f_contiguous and value.ndim > 1:
        layout = "F"
    else:
        layout = "A"
    return Array(element(value.dtype), value.ndim, layout, space)
