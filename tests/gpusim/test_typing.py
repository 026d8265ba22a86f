"""The front end's typing rules against two independent sources: numba-cuda's own typing context (every
operator, builtin and math function on every pair of scalar types) and the result types read on an H200
(docs/gpu-semantics.md), through whole kernels.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import operator

import numba
import numpy as np
import pytest
from numba import cuda
from simkit import run_clean

from gpusim import KernelCompileError
from gpusim.frontend import compile_module
from gpusim.frontend import typing as ty
from gpusim.ir import nodes as N
from gpusim.ir import types as T
from gpusim.ir.walk import walk_stmts

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


# ---------------------------------------------------------------------------------------------- kernels


_KERNELS: dict[str, object] = {}


def kernel_of(expr: str, tmp_path_factory, prelude: str = ""):
    """A kernel ``k(out, x, y, z)`` that stores ``expr`` in ``out[0]``, from its own file (so it has source)."""
    key = prelude + expr
    if key not in _KERNELS:
        folder = tmp_path_factory.mktemp("typing")
        path = folder / f"k{len(_KERNELS)}.py"
        path.write_text("import math\n\nimport numba\nfrom numba import cuda\n\n\n"
                        "def k(out, x, y, z):\n    i = cuda.threadIdx.x\n"
                        + "".join(f"    {line}\n" for line in prelude.splitlines())
                        + f"    out[0] = {expr}\n")
        spec = importlib.util.spec_from_file_location(path.stem + str(len(_KERNELS)), path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _KERNELS[key] = mod.k
    return _KERNELS[key]


def result_type(expr: str, tmp_path_factory, x=T.INT32, y=T.INT32, z=T.FLOAT32, prelude: str = "") -> T.Type:
    """The type the front end gives ``expr`` (x, y, z: scalars of the given types, or arrays)."""
    k = kernel_of(expr, tmp_path_factory, prelude)
    module = compile_module(k, (T.Array(T.FLOAT64, 1, "C", "global"), x, y, z))
    store = [s for s in walk_stmts(module.entry.body) if isinstance(s, N.Store)][-1]
    value = store.value
    return value.value.type if isinstance(value, N.Cast) else value.type


A_I32 = T.Array(T.INT32, 1, "C", "global")
A_F32 = T.Array(T.FLOAT32, 1, "C", "global")
A_U32 = T.Array(T.UINT32, 1, "C", "global")

# expression, argument types (x, y, z), the type docs/gpu-semantics.md records from the H200
GPU_TABLE = [
    ("cuda.threadIdx.x", {}, T.INT32), ("cuda.blockIdx.y", {}, T.INT32), ("cuda.blockDim.z", {}, T.INT32),
    ("cuda.gridDim.x", {}, T.INT32), ("cuda.laneid", {}, T.INT32), ("cuda.warpsize", {}, T.INT32),
    ("cuda.grid(1)", {}, T.INT64), ("x.size", {"x": A_F32}, T.INT64), ("x.shape[0]", {"x": A_F32}, T.INT64),
    ("cuda.popc(x)", {"x": T.UINT32}, T.UINT32), ("cuda.popc(x)", {"x": T.INT64}, T.INT64),
    ("cuda.clz(x)", {"x": T.INT64}, T.INT64), ("cuda.brev(x)", {"x": T.UINT32}, T.UINT32),
    ("cuda.ffs(x)", {"x": T.INT64}, T.UINT32),
    ("cuda.ballot_sync(0xFFFFFFFF, x > 0)", {}, T.INT32), ("cuda.any_sync(0xFFFFFFFF, x > 0)", {}, T.BOOL),
    ("cuda.all_sync(0xFFFFFFFF, x > 0)", {}, T.BOOL), ("cuda.eq_sync(0xFFFFFFFF, x > 0)", {}, T.BOOL),
    ("cuda.activemask()", {}, T.UINT32), ("cuda.lanemask_lt()", {}, T.UINT32),
    ("cuda.syncthreads_count(x)", {}, T.INT32), ("cuda.syncthreads_and(x)", {}, T.INT32),
    ("cuda.syncthreads_or(x)", {}, T.INT32),
    ("cuda.shfl_sync(0xFFFFFFFF, z, 0)", {}, T.FLOAT32), ("cuda.shfl_down_sync(0xFFFFFFFF, x, 1)", {}, T.INT32),
    ("x + y", {}, T.INT64), ("x + 1", {"x": T.INT8}, T.INT64), ("x - 1", {"x": T.UINT32}, T.INT64),
    ("x // y", {}, T.INT64), ("x + y", {"x": T.UINT32, "y": T.UINT32}, T.UINT64), ("x / y", {}, T.FLOAT64),
    ("z * 2.0", {}, T.FLOAT64), ("z * 2", {}, T.FLOAT64), ("z * x", {}, T.FLOAT64), ("z ** 2", {}, T.FLOAT32),
    ("math.exp(z)", {}, T.FLOAT32), ("math.sqrt(z)", {}, T.FLOAT32), ("math.exp(x)", {}, T.FLOAT64),
    ("math.floor(z)", {}, T.FLOAT32), ("round(z)", {}, T.INT64), ("min(x, z)", {}, T.FLOAT64),
    ("abs(x)", {}, T.INT32), ("z * z", {"z": T.FLOAT16}, T.FLOAT16),
    ("cuda.atomic.add(x, 0, 1)", {"x": A_I32}, T.INT32), ("numba.float32(x)", {}, T.FLOAT32),
    ("cuda.fma(z, z, z)", {}, T.FLOAT32),
    # the two gaps docs/gpu-semantics.md recorded, now closed
    ("int(x)", {}, T.INT32), ("math.pow(z, x)", {}, T.FLOAT32),
]


@pytest.mark.parametrize("expr, types, want", GPU_TABLE, ids=[f"{e} {sorted(t.items())}" for e, t, _ in GPU_TABLE])
def test_result_types_read_on_the_gpu(tmp_path_factory, expr, types, want):
    assert result_type(expr, tmp_path_factory, **types) == want


# constructs numba-cuda rejects at compile time, with the words of its message
GPU_REJECTS = [
    ("cuda.syncthreads_count(x > 0)", {}, "integer predicate"),
    ("cuda.shfl_sync(0xFFFFFFFF, x > 0, 0)", {}, "32- and 64-bit ints and floats"),
    ("cuda.shfl_sync(0xFFFFFFFF, x, 0)", {"x": T.INT16}, "32- and 64-bit ints and floats"),
    ("cuda.shfl_xor_sync(0xFFFFFFFF, z, 1)", {"z": T.FLOAT16}, "32- and 64-bit ints and floats"),
    ("cuda.atomic.inc(x, 0, 4)", {"x": A_I32}, "no cuda.atomic.inc for int32 arrays"),
    ("cuda.atomic.dec(x, 0, 4)", {"x": T.Array(T.INT64, 1, "C", "global")}, "no cuda.atomic.dec for int64"),
    ("cuda.atomic.exch(x, 0, 1.0)", {"x": A_F32}, "no cuda.atomic.exch for float32 arrays"),
    ("cuda.atomic.add(x, 0, 1)", {"x": T.Array(T.FLOAT16, 1, "C", "global")}, "no cuda.atomic.add for float16"),
]


@pytest.mark.parametrize("expr, types, words", GPU_REJECTS, ids=[e for e, _, _ in GPU_REJECTS])
def test_what_numba_cuda_rejects_is_a_compile_error_at_its_line(tmp_path_factory, expr, types, words):
    with pytest.raises(KernelCompileError) as e:
        result_type(expr, tmp_path_factory, **types)
    assert words in e.value.message
    assert e.value.lineno == 9 and expr in e.value.source_line


def test_unsigned_inc_dec_and_integer_exch_compile_and_run():
    @cuda.jit
    def k(arr, olds):
        i = cuda.grid(1)
        olds[0, i] = cuda.atomic.inc(arr, 0, numba.uint32(4))
        olds[1, i] = cuda.atomic.exch(arr, 1, numba.uint32(i))

    arr = np.zeros(2, np.uint32)
    olds = np.zeros((2, 5), np.uint32)
    run_clean(k, 1, 5, arr, olds)
    assert sorted(olds[0].tolist()) == [0, 1, 2, 3, 4] and arr[0] == 0
