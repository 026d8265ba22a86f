"""The typed kernel IR: plain dataclasses that every back end reads.

A ``Module`` holds one kernel and every device function it calls (``Function``), keyed by name. A function
body is a list of statements; statements hold expressions. Every node has the source ``line`` it came
from; every expression has a ``type`` (``gpusim.ir.types``) decided by the front end by numba-cuda's rules,
and a uniformity level ``uni`` (``Uni``) set by the uniformity pass (``gpusim.ir.uniformity``).

What a back end may rely on:

* Implicit conversions are explicit: ``Cast`` nodes. ``Binary`` operands have the result's type, except the
  exponent of a float ``pow`` (an integer); ``Compare`` operands share one type; ``Store`` values have the
  array's element type; ``Select``/``Logical`` operands have the result's type; every array index is int64.
* Calls are resolved: ``Intrinsic`` (a pure function of its operands, named in ``INTRINSICS``), ``Call`` (a
  device function of the module), and one node per effectful operation (``Atomic``, ``Shuffle``, ``Vote``,
  ``Match``, ``ActiveMask``, ``BarrierReduce``) or statement (``Barrier``, ``SyncWarp``, ``Fence``,
  ``Print``). No strings to re-parse, no Python objects to call.
* Fused multiply-adds are ``Fma`` nodes, made by the named pass ``gpusim.ir.fma`` (and by ``cuda.fma``):
  ``x*y + z`` with one rounding. Every back end computes the same bits.
* Constants are folded (shapes, dtypes, module constants); module-level arrays are embedded
  (``ConstArray``, frozen at compile time, except a device array captured by pointer: ``by_pointer``, read as
  it is at each launch); the module is self-contained and picklable.
* ``Let`` binds a temporary inside an expression (for ``a < b < c`` evaluated once each, in order);
  temporaries and front-end locals are named ``$...`` and cannot clash with the kernel's names.

Semantics a back end must reproduce exactly are stated on the node classes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np

from .types import INT32, INT64, NONE, Array, Record, Scalar, Type


class Uni(IntEnum):
    """How widely a value is shared: the same in every thread of the grid, of a block, of a warp, or per lane.

    GRID values depend only on arguments, constants, launch dimensions and memory read at a GRID index (the
    same for every thread that reads it at one time). The lanes back end keeps GRID values as scalars; a
    back end running one block per program can keep BLOCK values as scalars too.
    """

    GRID = 0
    BLOCK = 1
    WARP = 2
    LANE = 3

    def __str__(self) -> str:
        return self.name.lower()


def join(*levels: Uni) -> Uni:
    return Uni(max(levels, default=Uni.GRID))


# ---------------------------------------------------------------------------------------------- base


@dataclass(eq=False)
class Node:
    line: int = field(default=0, kw_only=True)


@dataclass(eq=False)
class Expr(Node):
    type: Type = field(default=NONE, kw_only=True)
    uni: Uni = field(default=Uni.LANE, kw_only=True)


@dataclass(eq=False)
class Stmt(Node):
    pass


# ---------------------------------------------------------------------------------------------- values


@dataclass(eq=False)
class Const(Expr):
    """A scalar constant: ``value`` is a Python bool, int or float, exactly representable in ``type``."""

    value: Any


@dataclass(eq=False)
class Var(Expr):
    """A local variable, a parameter, or a temporary (``$``-names)."""

    name: str


#: special registers and their types: thread and block indices, launch dimensions, lane geometry
SPECIALS: dict[str, Scalar] = {
    **{f"{reg}.{axis}": INT32 for reg in ("threadIdx", "blockIdx", "blockDim", "gridDim") for axis in "xyz"},
    "laneid": INT32, "warpsize": INT32, "lanemask_lt": Scalar("uint32"),
}


@dataclass(eq=False)
class Special(Expr):
    """A special register: ``name`` is a key of ``SPECIALS`` ("threadIdx.x", "laneid", ...)."""

    name: str


@dataclass(eq=False)
class Cast(Expr):
    """``value`` converted to ``type`` as the GPU converts (``gpusim.ir.values.convert``): int -> narrower int
    keeps the low bits; float -> int truncates toward zero and saturates, NaN giving 0; number -> bool is
    ``value != 0`` (NaN is true); bool -> number is 0 or 1; to a float rounds to nearest even."""

    value: Expr


#: unary operators: "neg" (-x), "invert" (~x: bitwise, or logical on a bool), "not" (``not x`` on a bool)
UNARY_OPS = ("neg", "invert", "not")


@dataclass(eq=False)
class Unary(Expr):
    op: str
    operand: Expr


#: binary arithmetic: integer ops wrap; "floordiv"/"mod" follow Python (floor, sign of the divisor), integer
#: division by zero is a ``KernelError`` fault; "truediv" divides floats; "pow" of an integer base with a
#: negative exponent is a fault; a float base with an integer exponent is computed in float64 and rounded to
#: the base's type; shifts take the shift count as given (NumPy's result for counts outside 0..63)
BINARY_OPS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and", "or", "xor")
SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
           "lshift": "<<", "rshift": ">>", "and": "&", "or": "|", "xor": "^", "lt": "<", "le": "<=",
           "gt": ">", "ge": ">=", "eq": "==", "ne": "!=", "neg": "-", "invert": "~", "not": "not "}


@dataclass(eq=False)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


COMPARE_OPS = ("lt", "le", "gt", "ge", "eq", "ne")


@dataclass(eq=False)
class Compare(Expr):
    """A comparison of two values of one type; the result is a bool (NaN compares unequal to everything)."""

    op: str
    left: Expr
    right: Expr


@dataclass(eq=False)
class Logical(Expr):
    """``left and right`` / ``left or right`` with Python's short circuit: ``right`` is evaluated only
    where ``left`` is true ("and") or false ("or"), and the result is the operand that decided (both have the
    result's type; a bool result is plain logic)."""

    op: str  # "and" | "or"
    left: Expr
    right: Expr


@dataclass(eq=False)
class Select(Expr):
    """``then if cond else orelse``: each side evaluated only where it is chosen."""

    cond: Expr
    then: Expr
    orelse: Expr


@dataclass(eq=False)
class Let(Expr):
    """Evaluate ``value``, bind it to the temporary ``name``, then evaluate ``body`` (the result)."""

    name: str
    value: Expr
    body: Expr


@dataclass(eq=False)
class MakeTuple(Expr):
    items: list[Expr]


@dataclass(eq=False)
class TupleItem(Expr):
    """Item ``index`` (a constant) of a tuple value."""

    value: Expr
    index: int


@dataclass(eq=False)
class TupleIndex(Expr):
    """Item ``index`` (an int64 computed per lane) of a tuple whose items all have one type; an index outside
    it is an ``OutOfBounds`` fault."""

    value: Expr
    index: Expr


@dataclass(eq=False)
class Trap(Expr):
    """Reaching this (on any active lane) is a ``KernelError`` fault with ``message``, and ends the launch:
    the front end found an operation that fails whenever it runs (an array indexed by a float). With
    ``raised`` (an exception class or instance, a constant of the kernel) it is the kernel's own ``raise``: a
    ``KernelRaised`` fault carrying it."""

    message: str
    raised: Any = None


# ---------------------------------------------------------------------------------------------- arrays


@dataclass(eq=False)
class ConstArray(Expr):
    """A module-level NumPy array (or ``cuda.const.array_like``), read-only, embedded by value: ``data`` is
    frozen when the kernel is compiled. ``by_pointer``: a device array the kernel captures by pointer (as
    numba-cuda does): ``data`` is the live array, and a launch reads its contents as they are then."""

    name: str
    data: np.ndarray
    by_pointer: bool = False

    def __deepcopy__(self, memo: dict) -> ConstArray:
        # a copy of the node shares ``data``: frozen data is read-only, and a live array must stay the one array
        new = copy.copy(self)
        memo[id(self)] = new
        return new


@dataclass(eq=False)
class Load(Expr):
    """``array[index]``: one int64 index per dimension, bounds-checked per dimension on active lanes
    (``OutOfBounds``; negative indices do not wrap)."""

    array: Expr
    index: list[Expr]


@dataclass(eq=False)
class FieldView(Expr):
    """The field ``field`` of every record of ``array`` (an array of records), as an array of the field's
    element type: dimensions the record array's, then the field's own shape (a nested array). The view shares
    the records' memory: element ``[i..., j...]`` is at the record's address plus the field's offset plus
    ``j`` in the field's row-major order, and an access touches the field's bytes only. The fields "real" and
    "imag" of an array of complex numbers are the arrays of their parts (at offset 0 and half the itemsize)."""

    array: Expr
    field: str


#: how an ``ArrayView`` takes each dimension of its array: "i" one index (the dimension is dropped), or "s"
#: and three flags, whether a slice's start, stop and step are given ("s101": ``a:``...``:c``)
VIEW_KINDS = ("i",) + tuple("s" + "".join(f) for f in ("000", "001", "010", "011", "100", "101", "110", "111"))


@dataclass(eq=False)
class ArrayView(Expr):
    """``array[...]`` with slices (or fewer indices than dimensions): a view sharing the array's memory, of
    ``type`` (the dimensions that are sliced). ``kinds`` says, per dimension of ``array``, which of ``parts``
    (int64, in order) it takes (``VIEW_KINDS``). Slices follow Python's rules (negative bounds count from the
    end, bounds are clipped, a zero step is a ``KernelError`` fault); an index outside its dimension is an
    ``OutOfBounds`` fault. An access through the view is bounds-checked against the view, then is an access of
    the array (its races and traffic). ``text`` names the view in fault messages."""

    array: Expr
    parts: list[Expr]
    kinds: tuple[str, ...]
    text: str


@dataclass(eq=False)
class Reshape(Expr):
    """``array.reshape(shape)``: the same elements in row-major order, in the new shape (int64 sizes, one may be
    -1: whatever the others leave), a view of ``array``. An array that is not contiguous, or a shape whose size
    differs from the array's, is a ``KernelError`` fault."""

    array: Expr
    shape: list[Expr]
    text: str


@dataclass(eq=False)
class Reinterpret(Expr):
    """``array.view(dtype)`` of a 1-D contiguous global or const array: its bytes read as ``type``'s elements
    (their count is the byte length over the new itemsize; a length that does not divide is a ``KernelError``
    fault). Races between the two views of the bytes are not tracked."""

    array: Expr
    text: str


@dataclass(eq=False)
class ArrayShape(Expr):
    """``array.shape[dim]`` (int64), for arrays whose shape is known only at launch."""

    array: Expr
    dim: int


@dataclass(eq=False)
class ArraySize(Expr):
    """``array.size`` (int64), for arrays whose shape is known only at launch."""

    array: Expr


# ---------------------------------------------------------------------------------------------- calls

#: pure intrinsics: name -> what it computes. Math functions compute in their (already cast) argument type
#: the C library function of that name; "math.isnan"/"isinf"/"isfinite" give a bool. "popc", "clz" keep the
#: argument's type; "ffs" gives uint32; "brev" reverses the bits of a uint32 or uint64. "abs", "min", "max"
#: ("min"/"max" propagate NaN), "round" (half to even, to int64), "round_ndigits" (NumPy's ``round``).
#: "frexp" and "modf" give tuples. "selp": ``a if test else b`` with both evaluated. Besides these,
#: "libdevice.<name>" is the libdevice function of that name as the GPU computes it
#: (``gpusim.runtime.libdevice``), on operands of the types numba-cuda declares for it.
INTRINSICS = (
    "math.sqrt", "math.exp", "math.exp2", "math.expm1", "math.log", "math.log2", "math.log10", "math.log1p",
    "math.sin", "math.cos", "math.tan", "math.asin", "math.acos", "math.atan", "math.atan2", "math.sinh",
    "math.cosh", "math.tanh", "math.asinh", "math.acosh", "math.atanh", "math.pow", "math.fabs", "math.floor",
    "math.ceil", "math.trunc", "math.erf", "math.erfc", "math.gamma", "math.lgamma", "math.hypot",
    "math.copysign", "math.fmod", "math.remainder", "math.nextafter", "math.radians", "math.degrees",
    "math.ldexp", "math.frexp", "math.modf", "math.isnan", "math.isinf", "math.isfinite", "math.cbrt",
    "popc", "clz", "ffs", "brev", "abs", "min", "max", "round", "round_ndigits", "selp",
)


@dataclass(eq=False)
class Intrinsic(Expr):
    name: str
    args: list[Expr]


@dataclass(eq=False)
class Fma(Expr):
    """``a*b + c`` rounded once to ``type`` (all three operands already of that float type). float16 and
    float32: the float64 value ``a*b + c`` (the product is exact) rounded to the type; float64: the exact
    result rounded once (``gpusim.runtime.core.fma64``)."""

    a: Expr
    b: Expr
    c: Expr


@dataclass(eq=False)
class Call(Expr):
    """A call of the module's device function ``function`` (a key of ``Module.functions``)."""

    function: str
    args: list[Expr]


#: atomic operations: the old value is returned; "inc"/"dec" wrap at ``value`` as CUDA's atomicInc/atomicDec;
#: "max"/"min" keep a NaN already stored only for "nanmax"/"nanmin" (``max``/``min`` replace it);
#: "cas" stores ``value`` where the element equals ``compare``. Lanes apply in lane order.
ATOMIC_OPS = ("add", "sub", "max", "min", "nanmax", "nanmin", "exch", "inc", "dec", "and", "or", "xor", "cas")


@dataclass(eq=False)
class Atomic(Expr):
    op: str
    array: Expr
    index: list[Expr]
    value: Expr
    compare: Expr | None = None
    result_used: bool = True   # False when the old value is discarded (a "reduction", RED in SASS)


@dataclass(eq=False)
class Shuffle(Expr):
    """``shfl_sync`` ("idx"), ``shfl_up_sync`` ("up"), ``shfl_down_sync`` ("down"), ``shfl_xor_sync``
    ("xor") over the whole warp (width 32): the value of another lane; a source outside the warp gives the
    lane's own value. ``lane`` is the source lane, delta or xor mask; the hardware reads its low five bits."""

    kind: str
    mask: Expr
    value: Expr
    lane: Expr


@dataclass(eq=False)
class Vote(Expr):
    """``ballot_sync`` (int32 bits of lanes in the mask whose predicate holds), ``any_sync``, ``all_sync``,
    ``eq_sync`` (bool) over the lanes of the mask that execute it."""

    kind: str  # "ballot" | "any" | "all" | "eq"
    mask: Expr
    predicate: Expr


@dataclass(eq=False)
class Match(Expr):
    """``match_any_sync`` (int32: the lanes of the mask holding the same value) or ``match_all_sync``
    ((int32, bool): the mask and True if every lane of the mask holds the same value, else (0, False))."""

    kind: str  # "any" | "all"
    mask: Expr
    value: Expr


@dataclass(eq=False)
class ActiveMask(Expr):
    """``activemask()``: the uint32 bits of the lanes of the warp executing it."""


@dataclass(eq=False)
class BarrierReduce(Expr):
    """``syncthreads_count/_and/_or(predicate)``: a block barrier that also returns, to every thread, the
    number of threads whose int predicate is non-zero ("count"), or 1/0 whether all ("and") or any ("or")."""

    op: str
    predicate: Expr


# ---------------------------------------------------------------------------------------------- statements


@dataclass(eq=False)
class Assign(Stmt):
    """``target = value`` for a local (the local then has ``value.type``)."""

    target: str
    value: Expr


@dataclass(eq=False)
class Store(Stmt):
    """``array[index] = value`` (value of the array's element type; bounds-checked like ``Load``)."""

    array: Expr
    index: list[Expr]
    value: Expr


@dataclass(eq=False)
class ExprStmt(Stmt):
    value: Expr


@dataclass(eq=False)
class SharedDecl(Stmt):
    """``target = cuda.shared.array(shape, dtype)``: one array per block for this declaration (``decl``
    names it in the module); ``dynamic`` (shape 0) takes the launch's dynamic shared memory, every dynamic
    array starting at its first byte. ``name`` is the array's name for reports. ``alignment`` (numba-cuda's
    ``alignment=``, bytes, a power of two) places a static array at a multiple of it (at least 16)."""

    target: str
    name: str
    shape: tuple[int, ...]
    dtype: Scalar | Record
    dynamic: bool
    decl: int
    alignment: int | None = None


@dataclass(eq=False)
class LocalDecl(Stmt):
    """``target = cuda.local.array(shape, dtype)``: one array per thread. ``alignment`` as for shared arrays
    (local arrays have no modelled address: kept for the record)."""

    target: str
    name: str
    shape: tuple[int, ...]
    dtype: Scalar | Record
    decl: int
    alignment: int | None = None


@dataclass(eq=False)
class If(Stmt):
    """``cond`` is a bool; ``uni`` is its level: above the back end's scalar level the branch diverges."""

    cond: Expr
    body: list[Stmt]
    orelse: list[Stmt]
    uni: Uni = field(default=Uni.LANE, kw_only=True)


@dataclass(eq=False)
class ForRange(Stmt):
    """``for var in range(start, stop, step)`` (operands of the loop variable's type; a zero step is a
    ``KernelError`` fault). ``trip`` is the trip count when the front end knows it. ``uni``: the loop's level,
    the join of its bounds and of the breaks and continues that leave it per lane."""

    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: list[Stmt]
    trip: int | None = None
    uni: Uni = field(default=Uni.LANE, kw_only=True)


@dataclass(eq=False)
class While(Stmt):
    cond: Expr
    body: list[Stmt]
    uni: Uni = field(default=Uni.LANE, kw_only=True)


@dataclass(eq=False)
class Break(Stmt):
    """``uni`` above the back end's scalar level: only some lanes leave (the rest go on)."""

    uni: Uni = field(default=Uni.LANE, kw_only=True)


@dataclass(eq=False)
class Continue(Stmt):
    uni: Uni = field(default=Uni.LANE, kw_only=True)


@dataclass(eq=False)
class Return(Stmt):
    value: Expr | None = None
    uni: Uni = field(default=Uni.LANE, kw_only=True)


@dataclass(eq=False)
class Barrier(Stmt):
    """``syncthreads()``: every live thread of the block must reach it (else ``BarrierDivergence``). ``grid``:
    a grid group's ``sync()``, which every live thread of the grid must reach; it orders every access before
    it, in any block, before every access after it."""

    grid: bool = False


@dataclass(eq=False)
class SyncWarp(Stmt):
    """``syncwarp(mask)``: every lane of the mask must reach it, and only lanes of the mask may."""

    mask: Expr


@dataclass(eq=False)
class Fence(Stmt):
    """``threadfence()`` ("device"), ``threadfence_block()`` ("block"), ``threadfence_system()`` ("system"):
    orders memory; the lanes model already executes in order."""

    scope: str


@dataclass(eq=False)
class Print(Stmt):
    """``print(...)``: one line per active lane, items joined by spaces: ``str`` items as they are, numbers as
    numba-cuda's printf formats them (integers ``%lld``/``%llu``, floats ``%f``, bools True/False, tuples in
    parentheses)."""

    items: list[Expr | str]


# ---------------------------------------------------------------------------------------------- functions


@dataclass(eq=False)
class Param:
    name: str
    type: Type
    uni: Uni = Uni.GRID


@dataclass(eq=False)
class Function:
    """A kernel or a device function, specialised on its argument types (and, after the uniformity pass,
    on their levels). ``var_uni`` (set by that pass) is each local's level: the join over its assignments."""

    name: str
    py_name: str
    params: list[Param]
    body: list[Stmt]
    return_type: Type
    is_kernel: bool
    filename: str
    line: int
    return_uni: Uni = Uni.GRID
    var_uni: dict[str, Uni] = field(default_factory=dict)


@dataclass(eq=False)
class Module:
    """A kernel and everything it calls: self-contained and picklable."""

    kernel: str                        # the entry's key in ``functions``
    functions: dict[str, Function]
    filename: str
    lines: tuple[str, ...]             # the kernel file's lines, for fault messages
    shared_decls: int = 0              # number of SharedDecl/LocalDecl ids used

    @property
    def entry(self) -> Function:
        return self.functions[self.kernel]

    @property
    def signature(self) -> tuple[Type, ...]:
        """The argument types the module was compiled for (with the source, a compiled back end's cache key)."""
        return tuple(p.type for p in self.entry.params)

    def source_line(self, lineno: int) -> str:
        return self.lines[lineno - 1].rstrip("\n") if 1 <= lineno <= len(self.lines) else ""

    def dump(self, lines: bool = True) -> str:
        """A readable listing (``gpusim.ir.dump``); ``lines=False`` leaves out the source line numbers."""
        from .dump import dump

        return dump(self, lines)


def is_array(t: Type) -> bool:
    return isinstance(t, Array)


INDEX = INT64
