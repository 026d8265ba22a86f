"""The front end's typing rules against two independent sources: numba-cuda's own typing context (every
operator, builtin and math function on every pair of scalar types) and the result types read on an H200
(docs/gpu-semantics.md), through whole kernels.
"""

from __future__ import annotations

import itertools
import math
import operator

import pytest

from gpusim.frontend import typing as ty
from gpusim.ir import types as T

# ---------------------------------------------------------------------------------------------- the oracle


@pytest.fixture(scope="module")
def numba_typing():
    """numba-cuda's typing context (no GPU needed) and a converter from gpusim's scalar types."""
    from numba.cuda import types as nt
    from numba.cuda.target import CUDATypingContext

    ctx = CUDATypingContext()
    ctx.refresh()
    names = {t: getattr(nt, "boolean" if t.name == "bool" else t.name) for t in T.SCALARS}

    def back(x):
        if isinstance(x, nt.BaseTuple):
            return T.Tuple(tuple(back(i) for i in x))
        return T.Scalar("bool" if x == nt.boolean else str(x))

    def resolve(fn, *args):
        try:
            got = ctx.resolve_function_type(ctx.resolve_value_type(fn), tuple(names[a] for a in args), {})
        except Exception:  # noqa: BLE001 - numba raises TypingError and friends for "no signature"
            return None
        return None if got is None else ty.Signature(tuple(back(a) for a in got.args), back(got.return_type))

    return ctx, names, resolve


def test_implicit_conversions_are_numbas(numba_typing):
    ctx, names, _ = numba_typing
    for a, b in itertools.product(T.SCALARS, T.SCALARS):
        want = ctx.can_convert(names[a], names[b])
        got = ty.can_convert(a, b)
        assert (None if want is None else int(want)) == (None if got is None else int(got)), (a, b)


OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
             "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "lshift": operator.lshift,
             "rshift": operator.rshift, "and": operator.and_, "or": operator.or_, "xor": operator.xor,
             "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq,
             "ne": operator.ne}


@pytest.mark.parametrize("op", list(OPERATORS))
def test_binary_operators_get_numbas_signature_on_every_pair_of_scalars(numba_typing, op):
    _, _, resolve = numba_typing
    for a, b in itertools.product(T.SCALARS, T.SCALARS):
        assert ty.binary(op, a, b) == resolve(OPERATORS[op], a, b), (op, a, b)


@pytest.mark.parametrize("op, fn", [("neg", operator.neg), ("pos", operator.pos), ("invert", operator.invert),
                                    ("not", operator.not_)])
def test_unary_operators_get_numbas_signature(numba_typing, op, fn):
    _, _, resolve = numba_typing
    for a in T.SCALARS:
        assert ty.unary(op, a) == resolve(fn, a), (op, a)


@pytest.mark.parametrize("name, fn", [("abs", abs), ("round", round), ("int", int), ("float", float),
                                      ("bool", bool), ("divmod", divmod), ("min", min), ("max", max)])
def test_builtins_get_numbas_signature(numba_typing, name, fn):
    _, _, resolve = numba_typing
    arities = (2,) if name in ("divmod", "min", "max") else (1, 2) if name == "round" else (1,)
    for n in arities:
        for args in itertools.product(T.SCALARS, repeat=n):
            if name == "round" and n == 2 and args[1] != T.INT64:
                continue
            if name in ("min", "max") and set(args) == {T.BOOL, T.FLOAT16}:
                continue  # numba's own typing crashes compiling its tuple overload for these (NotImplementedError)
            got, want = ty.builtin(name, args), resolve(fn, *args)
            if name in ("min", "max"):  # numba types mixed min/max through a tuple overload: compare results
                got, want = got and got.ret, want and want.ret
            assert got == want, (name, args)


@pytest.mark.parametrize("name", sorted(ty.MATH))
def test_math_functions_get_numbas_signature(numba_typing, name):
    _, _, resolve = numba_typing
    fn = getattr(math, name)
    n = len(ty.MATH[name][0].args)
    for args in itertools.product(T.SCALARS, repeat=n):
        assert ty.math_call(name, args) == resolve(fn, *args), (name, args)


def test_unification_is_numbas(numba_typing):
    ctx, names, _ = numba_typing
    for a, b in itertools.product(T.SCALARS, T.SCALARS):
        want = ctx.unify_pairs(names[a], names[b])
        got = ty.unify(a, b)
        assert (None if want is None else str(want).replace("boolean", "bool")) == \
            (None if got is None else str(got)), (a, b)
