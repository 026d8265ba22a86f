"""What the Triton generator knows about each generated value while it writes the program.

A ``Val`` is the text of a Triton expression plus what the generator must know to use it: its IR type, its
*shape* (``vec``: a tensor with one entry per lane, else a scalar shared by the whole program), whether it is
a bare Python literal (written as ``10`` inside an operator, as ``tl.full((), 10, tl.int64)`` elsewhere), and,
for integer values that are an affine function of the thread index, that function (``Affine``), which is how
the generator recognises a shared-memory store at the thread's own element.

Tuples are unrolled at generation time (``items``); arrays are ``ArrayRef`` descriptors (a pointer with its
shape and strides, a register tensor, or a per-lane register table), never values of the program.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.types import Array, Scalar, Type

#: Triton's names of the IR's scalar types
TL_TYPES = {"bool": "tl.int1", "int8": "tl.int8", "int16": "tl.int16", "int32": "tl.int32", "int64": "tl.int64",
            "uint8": "tl.uint8", "uint16": "tl.uint16", "uint32": "tl.uint32", "uint64": "tl.uint64",
            "float16": "tl.float16", "float32": "tl.float32", "float64": "tl.float64"}
#: the signed integer type of the same width, for bit-exact selection of floats
BITS_OF = {"float16": "tl.int16", "float32": "tl.int32", "float64": "tl.int64"}
#: pointer element types in a Triton signature ("*fp32"), for compiling ahead of time
SIG_TYPES = {"bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
             "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "fp16", "float32": "fp32",
             "float64": "fp64"}


def tl_type(t: Scalar) -> str:
    return TL_TYPES[t.name]


@dataclass(frozen=True)
class Affine:
    """``x*tx + y*ty + z*tz + c + sum(coef * v for v, coef in u)`` with integer coefficients: an index known
    exactly in terms of the thread. ``u`` holds block-uniform terms: the variable of an enclosing loop of
    constant bounds (its program name), valid only inside that loop (``ProgramGen.loop`` drops them at its
    end); an index with ``u`` terms is not a constant element of the thread (``fixed``)."""

    x: int = 0
    y: int = 0
    z: int = 0
    c: int = 0
    u: tuple[tuple[str, int], ...] = ()

    def __add__(self, o: Affine) -> Affine:
        return Affine(self.x + o.x, self.y + o.y, self.z + o.z, self.c + o.c, _merge(self.u, o.u, 1))

    def scale(self, k: int) -> Affine:
        return Affine(self.x * k, self.y * k, self.z * k, self.c * k, _merge((), self.u, k))

    @property
    def fixed(self) -> bool:
        """No uniform terms: the same element of each thread wherever it is used."""
        return not self.u


def _merge(a: tuple, b: tuple, k: int) -> tuple:
    terms = dict(a)
    for name, coef in b:
        terms[name] = terms.get(name, 0) + coef * k
    return tuple(sorted((n, c) for n, c in terms.items() if c))


@dataclass
class ArrayRef:
    """An array as the generated program holds it.

    ``kind``: "ptr" (global memory, a constant array, or shared memory in the per-program scratch region:
    ``base`` is a pointer, elements at ``sum(index[k] * strides[k])``), "reg" (a shared array held in
    registers as ``planes``: for each way the kernel stores into it, an element-of-the-thread map and a
    ``[lanes]`` tensor of what each thread stored there), "local" (a per-thread array held as a
    ``[lanes, L]`` register table: ``base`` names it). ``shape``/``strides`` are code (names or numbers).
    """

    kind: str
    base: str
    type: Array
    shape: list[str]
    strides: list[str]
    name: str
    decl: int | None = None
    scratch: bool = False            # shared memory in the scratch region: fenced with barriers
    width: int = 0                   # "local": the table's padded row length
    split: bool = False              # "local": one [lanes] tensor per element, ``{base}_{k}`` (constant indices)
    planes: list[tuple[Affine, str]] = field(default_factory=list)   # "reg": (store map, tensor) pairs

    @property
    def dtype(self) -> Scalar:
        return self.type.dtype

    @property
    def numel(self) -> str:
        return " * ".join(self.shape) if self.shape else "1"


@dataclass
class Val:
    code: str
    type: Type
    vec: bool = False
    lit: bool = False                # ``code`` is a bare Python literal (its value: ``value``)
    value: object = None
    affine: Affine | None = None
    items: list[Val] | None = None   # a tuple's items
    array: ArrayRef | None = None    # an array
    pure: bool = True                # no memory access or effect was needed to compute it

    @property
    def scalar_type(self) -> Scalar:
        assert isinstance(self.type, Scalar)
        return self.type


@dataclass
class Frame:
    """One inlined function: its locals' names in the program, where its result goes, its exit mask."""

    fn: object
    prefix: str
    names: dict[tuple[str, Type], str] = field(default_factory=dict)
    arrays: dict[str, ArrayRef] = field(default_factory=dict)
    affine: dict[str, Affine] = field(default_factory=dict)
    consts: dict[str, Val] = field(default_factory=dict)   # loop variables of a written-out iteration
    result: str = ""                 # the result variable of a device function
    done: str = ""                   # the mask of lanes that returned (a name), or "" until needed
    single: set[str] = field(default_factory=set)   # locals assigned exactly once, at the top level


def is_array(t: Type) -> bool:
    return isinstance(t, Array)
