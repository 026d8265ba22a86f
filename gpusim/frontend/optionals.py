"""numba's ``Optional(T)`` in kernels: a device function that returns a value on some paths and None on others
returns ``Optional(T)`` (``gpusim.ir.types.Optional``, held as the tuple ``(value, present)``), as numba types
it. ``x is None`` reads ``present`` (``ExprLowering.identity``); ``x`` used as a ``T`` (stored, computed with,
tested for truth, converted) is ``unwrap(x)``: the value where present, and on a thread where it is None a
``KernelError`` at that line, where numba raises "expected T, got None". Only numbers are held so.
"""

from __future__ import annotations

from ..ir import nodes as N
from ..ir.types import BOOL, Optional, Scalar, Type, optional


class OptionalLowering:
    def unwrap(self, e: N.Expr) -> N.Expr:
        """An Optional value used as its value type, as numba casts ``Optional(T)`` to ``T``: a thread whose
        value is None faults there (numba raises "expected T, got None"); any other value unchanged."""
        if not isinstance(e.type, Optional):
            return e
        name = self.tmp()
        v = N.Var(name, type=e.type, line=e.line)
        t = e.type.value_type
        body = N.Select(N.TupleItem(v, 1, type=BOOL, line=e.line), N.TupleItem(v, 0, type=t, line=e.line),
                        N.Trap(f"expected {t}, got None: a value returned as None is used as a number", type=t,
                               line=e.line), type=t, line=e.line)
        return N.Let(name, e, body, type=t, line=e.line)

    def optional_returns(self, ret: Type, values: list[N.Return]) -> Optional:
        """Every return of a function that returns ``ret`` on some paths and None (or an Optional) on others,
        made an ``Optional(ret)``; the function's return type."""
        if not isinstance(ret, Scalar):
            r = next((r for r in self.returns if r.value is None), values[0])
            raise self.error(r.line, f"device function {self.func.__name__!r} returns a {ret} on some paths and "
                                     "None on others: gpusim holds an Optional of a number only")
        opt = optional(ret)
        for r in self.returns:
            if r.value is None:
                r.value = N.MakeTuple([N.Const(0, type=ret, line=r.line), N.Const(False, type=BOOL, line=r.line)],
                                      type=opt, line=r.line)
            elif isinstance(r.value.type, Optional):
                r.value = self.cast(r.value, opt)
            else:
                r.value = N.MakeTuple([self.cast(r.value, ret), N.Const(True, type=BOOL, line=r.line)], type=opt,
                                      line=r.line)
        return opt
