"""Enum members in kernels, as numba types them: ``Enum`` members compare by identity (``==``, ``!=``, ``is``,
``is not``), ``IntEnum`` members are also the ints they are.

A member is a scalar at run time (``EnumMember``): an ``IntEnum`` member its int, any other member its position
in its class (members that are aliases are one member, as in Python). Its class stays in the type, so two
members of different classes are never equal or identical (``Color.red == Shake.mint`` is False though both
hold 3), and an ``IntEnum`` member is an int for arithmetic and for ``==`` with any int, as numba converts it.
A member comes from a kernel argument, a global (``Color.red``, ``Color["red"]``), or a device function.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass

from ..faults import KernelCompileError
from ..ir import nodes as N
from ..ir.types import BOOL, INT64, Scalar


@dataclass(frozen=True)
class EnumMember(Scalar):
    """A member of the enum class ``enum`` (held as int64: see the module's docstring)."""

    enum: type = enum.Enum

    @property
    def is_int_enum(self) -> bool:
        return issubclass(self.enum, int)

    def __str__(self) -> str:
        return f"{self.enum.__name__} member"


@dataclass(frozen=True)
class EnumClassRef:
    """An ``Enum`` class a kernel names (``Color.red``, ``Color["red"]``)."""

    cls: type


def member_type(member: enum.Enum) -> EnumMember:
    return EnumMember("int64", type(member))


def member_value(member: enum.Enum) -> int:
    """What a member is at run time: an IntEnum member's int, another member's position in its class."""
    if isinstance(member, int):
        return int(member)
    return list(type(member)).index(member)


def member_of(cls: type, name: str) -> enum.Enum | None:
    """``cls.name`` / ``cls["name"]`` when ``name`` is a member (an alias included), else None."""
    member = cls.__members__.get(name)
    return member if isinstance(member, cls) else None


def as_plain_int(e: N.Expr) -> N.Expr:
    """An IntEnum member as the int64 it converts to (anything else unchanged)."""
    if isinstance(e.type, EnumMember) and e.type.is_int_enum:
        if isinstance(e, N.Const):
            return N.Const(e.value, type=INT64, line=e.line)
        return N.Cast(e, type=INT64, line=e.line)
    return e


class EnumLowering:
    """Mixed into ``FunctionLowering``: constants, subscripts and comparisons of enum members."""

    def enum_const(self, member: enum.Enum, node: ast.AST) -> N.Const:
        return N.Const(member_value(member), type=member_type(member), line=node.lineno)

    def enum_item(self, cls: type, node: ast.Subscript) -> N.Expr:
        """``Color["red"]``: the member named by a constant string."""
        key = node.slice
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise self.error(node, f"{cls.__name__}[...] in a kernel takes a member's name as a string constant")
        member = member_of(cls, key.value)
        if member is None:
            raise self.error(node, f"{cls.__name__} has no member {key.value!r}", KernelCompileError)
        if isinstance(member, int) and not isinstance(self.resolve(node.value), EnumClassRef):
            return self.const(int(member), node)  # an IntEnum global's members are ints (names.IntEnumRef)
        return self.enum_const(member, node)

    def enum_compare(self, op: str, left: N.Expr, right: N.Expr, node: ast.AST) -> N.Expr | None:
        """``==``/``!=`` where an operand is a non-int Enum member (None when neither is: the numbers' rules
        apply, an IntEnum member converted to its int). Members of one class compare by identity; a member is
        never equal to anything else (Python's rule; numba-cuda agrees)."""
        a, b = left.type, right.type
        plain = [isinstance(t, EnumMember) and not t.is_int_enum for t in (a, b)]
        if not any(plain):
            return None
        line = getattr(node, "lineno", left.line)
        if op not in ("eq", "ne"):
            raise self.error(node, f"the operator {N.SYMBOLS[op]} is not defined on {a} and {b} (an Enum member "
                                   "compares only with == and !=)", KernelCompileError)
        if a != b:
            return N.Const(op == "ne", type=BOOL, line=line)
        return N.Compare(op, N.Cast(left, type=INT64, line=line), N.Cast(right, type=INT64, line=line),
                         type=BOOL, line=line)

    def enum_identity(self, left: N.Expr, right: N.Expr, negate: bool, node: ast.AST) -> N.Expr | None:
        """``a is b`` where either is an enum member: the same member of the same class (None otherwise)."""
        if not (isinstance(left.type, EnumMember) or isinstance(right.type, EnumMember)):
            return None
        line = node.lineno
        if left.type != right.type:
            return N.Const(negate, type=BOOL, line=line)
        return N.Compare("ne" if negate else "eq", N.Cast(left, type=INT64, line=line),
                         N.Cast(right, type=INT64, line=line), type=BOOL, line=line)
