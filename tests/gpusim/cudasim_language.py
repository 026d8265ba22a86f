"""Kernels using the parts of numba-cuda's language the drop-in learnt for numba-cuda's own test suite, launched
through numba's simulator API, for test_cudasim_language.py to run in a child process:

    GPUSIM_CUDASIM=strict NUMBA_ENABLE_CUDASIM=1 python cudasim_language.py OUT.json

It writes each kernel's outputs (as lists) and ``stats`` (what ``gpusim.cudasim.stats()`` counted); the test
computes the expected values with NumPy and numba's rules. numba's simulator replaces ``numba.cuda`` when it is
imported, so none of this may run inside the test process.
"""

from __future__ import annotations

import cmath
import enum
import operator
import sys
from collections import namedtuple

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still calls np.row_stack, removed in NumPy 2.5
    np.row_stack = np.vstack

from dropin_child import save_results  # noqa: E402
from numba import cuda, float32, int32, uint32  # noqa: E402

# -- compile-time values passed to device functions: an intrinsic, a dtype, a shape, a device function ---------


@cuda.jit(device=True)
def as_is(x):
    return x


@cuda.jit(device=True)
def to_uint(x):
    return uint32(x)


@cuda.jit(device=True)
def histogram_into(out, bins, dtype, nbins, update, cast):
    t = cuda.threadIdx.x
    counts = cuda.shared.array(nbins, dtype)
    if t < nbins:
        counts[t] = 0
    cuda.syncthreads()
    update(counts, cast(bins[t] % nbins), 1)
    cuda.syncthreads()
    if t < nbins:
        out[t] = counts[t]


@cuda.jit
def histogram(out, bins):
    histogram_into(out, bins, uint32, 16, cuda.atomic.add, as_is)


@cuda.jit
def histogram_cast(out, bins):
    histogram_into(out, bins, uint32, 16, cuda.atomic.add, to_uint)


@cuda.jit(device=True)
def tile_max(out, a, dtype, shape, combine):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tile = cuda.shared.array(shape, dtype)
    tile[tx, ty] = a[tx, ty]
    cuda.syncthreads()
    if ty == 0:
        m = tile[tx, 0]
        for k in range(1, shape[1]):
            m = combine(m, tile[tx, k])
        out[tx] = m


@cuda.jit(device=True)
def larger(x, y):
    return x if x > y else y


@cuda.jit
def row_max(out, a):
    tile_max(out, a, float32, (4, 8), larger)


# -- operator-module functions through a variable --------------------------------------------------------------

OPS = (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.lt)


def op_kernel(op):
    @cuda.jit
    def apply(out, a, b):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = op(a[i], b[i])

    return apply


# -- a kernel built by exec of a string (inspect cannot read its source) ---------------------------------------

_made: dict = {}
exec("def scaled_copy(out, a, k):\n"
     "    i = cuda.grid(1)\n"
     "    if i < out.size:\n"
     "        out[i] = a[i] * k\n", {"cuda": cuda}, _made)
scaled_copy = cuda.jit(_made["scaled_copy"])


# -- cuda.fp16 ---------------------------------------------------------------------------------------------------

@cuda.jit("void(f2[:], f2, f2)")
def half_ops(out, a, b):
    out[0] = cuda.fp16.hadd(a, b)
    out[1] = cuda.fp16.hsub(a, b)
    out[2] = cuda.fp16.hmul(a, 2)          # an int literal converts to float16
    out[3] = cuda.fp16.hdiv(a, b)
    out[4] = cuda.fp16.hneg(a)
    out[5] = cuda.fp16.habs(cuda.fp16.hneg(b))
    out[6] = cuda.fp16.hfma(a, b, a)
    out[7] = cuda.fp16.hmax(a, b)
    out[8] = cuda.fp16.hmin(a, b)
    out[9] = cuda.fp16.hsqrt(b)


@cuda.jit("void(b1[:], f2, f2)")
def half_compare(out, a, b):
    out[0] = cuda.fp16.hlt(a, b)
    out[1] = cuda.fp16.hge(a, b)
    out[2] = cuda.fp16.heq(a, a)
    out[3] = cuda.fp16.hne(a, b)


@cuda.jit("void(f2[:], f2[:])")
def half_nan_max(out, a):
    out[0] = cuda.fp16.hmax(a[0], a[1])    # a[0] is NaN: CUDA's __hmax gives the other operand
    out[1] = cuda.fp16.hmin(a[1], a[0])


# -- int.bit_count(), and an int that does not fit an eager signature's type -----------------------------------

@cuda.jit("void(int32[:], uint64[:])")
def bit_counts(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i].bit_count()


@cuda.jit("void(int32[:], int32)")
def leading_zeros(out, x):
    out[0] = cuda.clz(x)


# -- tuple and namedtuple arguments ------------------------------------------------------------------------------

Params = namedtuple("Params", ("scale", "shift"))


@cuda.jit
def tuple_args(out, pair, nested):
    out[0] = pair[0] + pair[1]
    out[1] = nested[1][0] * nested[0]
    out[2] = len(nested[1])


@cuda.jit
def arrays_in_tuple(arrays):
    i = cuda.grid(1)
    src, dst = arrays
    if i < dst.size:
        dst[i] = src[i] + 1


@cuda.jit
def affine(out, a, p):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] * p.scale + p.shift


# -- complex numbers -----------------------------------------------------------------------------------------------

@cuda.jit
def complex_ops(out, parts, z, w):
    i = cuda.grid(1)
    if i < out.shape[0]:
        a = z[i] * w[i] + 1j                  # complex64 * complex128: complex128
        out[i, 0] = a.conjugate() / (w[i] + 2)
        out[i, 1] = cmath.sqrt(z[i]) + cmath.exp(w[i])
        out[i, 2] = complex(parts[i, 0], parts[i, 1]) ** 2
        out[i, 3] = pow(w[i], 0.5)
        parts[i, 0] = abs(a)
        parts[i, 1] = z[i].imag - w[i].real   # float32 - float64
        parts[i, 2] = cmath.phase(z[i])


# -- NumPy ufuncs: on numbers, and over whole arrays into an output array -----------------------------------------

@cuda.jit
def ufuncs_whole(a, b, s, t, m):
    np.arctan2(a, b, s)                   # float32 arrays: the float32 loop, one thread does it all
    np.less(a, b, t)
    np.maximum(a, 0.25, m)                # a number is used at every element


@cuda.jit
def ufunc_scalar(out, x, k):
    # ufuncs numba-cuda 0.30.4 can lower (numba/cuda/ufuncs.py's table): np.sqrt and np.exp2 are typed but
    # missing from it, and fail on a real GPU with KeyError: <ufunc 'sqrt'>
    i = cuda.grid(1)
    if i < out.size:
        out[i] = np.fmax(x[i], 1.5) + np.left_shift(k, 1)


# -- for over arrays, tuples, enumerate and zip -------------------------------------------------------------------

WEIGHTS = (0.5, 1.5, 2.5)


@cuda.jit
def iterate(out, x, y):
    c = 0.0
    for i, (a, b) in enumerate(zip(x, y)):   # zip stops at the shorter array
        c += i * a + b
    for v in x:
        c += v
    for k, w in enumerate(WEIGHTS):
        c += k * w
    out[0] = c


# -- round(x, ndigits) ---------------------------------------------------------------------------------------------

@cuda.jit("void(float32[:], float32, int32)")
def round_f4(out, x, n):
    out[0] = round(x, n)


@cuda.jit("void(float64[:], float64[:], int32)")
def round_f8(out, x, n):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = round(x[i], n)


# -- a local assigned once from a literal, as a shared array's shape ---------------------------------------------

@cuda.jit
def reverse_in_shared(a):
    n = 16
    buf = cuda.shared.array(n, float32)
    t = cuda.threadIdx.x
    buf[t] = a[t]
    cuda.syncthreads()
    a[t] = buf[n - 1 - t]


# -- IntEnum members are their ints ----------------------------------------------------------------------------

class Status(enum.IntEnum):
    OK = 200
    MISSING = 404


@cuda.jit
def status_offsets(out, codes):
    i = cuda.grid(1)
    if i < codes.size:
        out[i] = codes[i] - Status.MISSING if codes[i] > Status.OK else codes[i] + int32(Status.OK)


@cuda.jit
def polar_parts(out, z):
    i = cuda.grid(1)
    if i < z.size:
        r_phi = cmath.polar(z[i])
        out[i] = complex(*r_phi)               # a tuple spread into a builtin's arguments


def main(path: str) -> None:
    res: dict = {}
    bins = np.array([(7 * k * k + 3) % 23 for k in range(32)], dtype=np.uint32)
    for name, kernel in (("histogram", histogram), ("histogram_cast", histogram_cast)):
        out = np.zeros(16, dtype=np.uint32)
        kernel[1, 32](out, bins)
        res[name] = out.tolist()
    res["bins"] = bins.tolist()
    a = ((np.arange(32).reshape(4, 8) * 37) % 11).astype(np.float32)
    out = np.zeros(4, dtype=np.float32)
    row_max[1, (4, 8)](out, a)
    res["row_max"] = out.tolist()
    res["tile"] = a.tolist()

    x = np.linspace(1.0, 4.0, 8)
    y = np.linspace(0.5, 2.0, 8)
    for op in OPS:
        out = np.zeros(8)
        op_kernel(op)[1, 8](out, x, y)
        res[f"op_{op.__name__}"] = out.tolist()

    out = np.zeros(8)
    scaled_copy[1, 8](out, x, 3.0)
    res["scaled_copy"] = out.tolist()

    out = np.zeros(10, dtype=np.float16)
    half_ops[1, 1](out, np.float16(3.1415926), np.float16(2.5))
    res["half_ops"] = out.astype(float).tolist()
    flags = np.zeros(4, dtype=np.bool_)
    half_compare[1, 1](flags, np.float16(1.5), np.float16(2.5))
    res["half_compare"] = flags.tolist()
    out = np.zeros(2, dtype=np.float16)
    half_nan_max[1, 1](out, np.array([np.nan, 1.25], dtype=np.float16))
    res["half_nan_max"] = out.astype(float).tolist()

    words = np.array([0, 1, 0xFF, 0xF0F0, 0xFFFFFFFFFFFFFFFF, 0x8000000000000001], dtype=np.uint64)
    counts = np.zeros(words.size, dtype=np.int32)
    bit_counts[1, 8](counts, words)
    res["bit_counts"] = counts.tolist()
    res["words"] = [int(w) for w in words]
    zeros = np.zeros(1, dtype=np.int32)
    leading_zeros[1, 1](zeros, 0xFFFFFFFF)
    res["clz_wrapped"] = zeros.tolist()

    out = np.zeros(3)
    tuple_args[1, 1](out, (2, 5), (1.5, (4, 7)))
    res["tuple_args"] = out.tolist()
    src = np.arange(6.0)
    dst = np.zeros(6)
    arrays_in_tuple[1, 8]((cuda.to_device(src), dst))
    res["arrays_in_tuple"] = dst.tolist()
    out = np.zeros(6)
    affine[1, 8](out, src, Params(2.0, -1.0))
    res["affine"] = out.tolist()

    z = (np.arange(4) - 1.5 + 1j * np.arange(4)[::-1]).astype(np.complex64)
    w = np.array([1 + 1j, -2 + 0.5j, 0.5j, 3 - 4j])
    parts = np.stack([np.arange(4.0), -np.arange(4.0), np.zeros(4)], axis=1)
    out = np.zeros((4, 4), dtype=np.complex128)
    res["complex_in"] = {"z": [[c.real, c.imag] for c in z.tolist()], "w": [[c.real, c.imag] for c in w.tolist()],
                         "parts": parts.tolist()}
    complex_ops[1, 4](out, parts, z, w)
    res["complex_out"] = [[[c.real, c.imag] for c in row] for row in out.tolist()]
    res["complex_parts"] = parts.tolist()

    ua = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
    ub = np.linspace(0.5, -0.5, 6, dtype=np.float32).reshape(2, 3)
    us, ut, um = np.zeros_like(ua), np.zeros(ua.shape, np.bool_), np.zeros_like(ua)
    ufuncs_whole[1, 1](ua, ub, us, ut, um)
    res["ufuncs_whole"] = {"a": ua.tolist(), "b": ub.tolist(), "s": us.tolist(), "t": ut.tolist(), "m": um.tolist()}
    out = np.zeros(4)
    ufunc_scalar[1, 4](out, np.arange(4.0), 3)
    res["ufunc_scalar"] = out.tolist()

    out = np.zeros(1)
    iterate[1, 1](out, np.arange(5.0), np.arange(4.0) * 2)
    res["iterate"] = out.tolist()

    out = np.zeros(1, dtype=np.float32)
    round_f4[1, 1](out, 0.3425, 3)
    res["round_f4"] = out.tolist()
    xs = np.array([2.675, 1234.5, -2.5, 0.125, 1e300])
    out = np.zeros_like(xs)
    round_f8[1, 8](out, xs, 2)
    res["round_f8"] = out.tolist()

    rev = np.arange(16, dtype=np.float32)
    reverse_in_shared[1, 16](rev)
    res["reverse_in_shared"] = rev.tolist()

    codes = np.array([100, 200, 404, 500], dtype=np.int64)
    out = np.zeros(4, dtype=np.int64)
    status_offsets[1, 4](out, codes)
    res["status_offsets"] = out.tolist()

    pz = np.array([3 + 4j, -1j, -2.0])
    out = np.zeros(3, dtype=np.complex128)
    polar_parts[1, 4](out, pz)
    res["polar_parts"] = [[c.real, c.imag] for c in out.tolist()]

    save_results(res, path)


if __name__ == "__main__":
    main(sys.argv[1])
