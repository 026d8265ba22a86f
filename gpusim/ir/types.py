"""The types of the kernel IR: scalars, arrays, tuples and none, as numba-cuda names them.

Every expression and local of the IR has one of these; the front end decides them by numba-cuda's rules
(``gpusim.frontend.typing``) and back ends only read them. The set is small on purpose and can grow (complex
scalars, records, ...) by adding a class here and its rules in the front end.
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


#: where an array lives; "const" arrays are read-only
SPACES = ("global", "shared", "local", "const")


@dataclass(frozen=True)
class Array(Type):
    """An array: its element type, rank, layout ("C" row-major, "F" column-major, "A" any strides) and
    memory space."""

    dtype: Scalar
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


def array_of(value: np.ndarray, space: str = "global") -> Array:
    """The IR type of a NumPy array argument, as numba's ``typeof`` gives it."""
    if value.flags.c_contiguous:
        layout = "C"
    elif value.flags.f_contiguous and value.ndim > 1:
        layout = "F"
    else:
        layout = "A"
    return Array(scalar(value.dtype), value.ndim, layout, space)
