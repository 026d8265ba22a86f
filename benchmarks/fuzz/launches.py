"""Odd launches and odd arguments for valid kernels, and the resource-limit cases.

* ``launch_case``: grid, block and ``shared_mem`` values a caller can pass wrongly (zero, negative, bool,
  float, strings, four dimensions, NumPy integers, just past the hardware limits);
* ``args_case``: arguments of the wrong count, type, dtype, layout or range (ints past int64, NaN, NumPy
  scalars, 0-d, empty, read-only, strided, Fortran-ordered and reversed arrays, an array passed twice);
* ``RESOURCE_CASES``: launches a GPU refuses or that would need gigabytes to simulate — grids of 2^31-1 and
  (65536, 65536) blocks, a 2^28-float shared array, 2^28 bytes of dynamic shared memory, a 10^8-element
  local array, a 10 MB kernel. Each must be refused (a documented error or a fault) in under a second and
  500 MB (``tests/gpusim/test_fuzz.py``). ``RUNAWAY_CASES``: loops that never end, which must stop within a
  few seconds at any launch size.
"""

from __future__ import annotations

import random

from .cases import Case
from .kernels import HEADER, OUT_LEN, valid_kernel

GRIDS = (0, -1, True, False, 1.5, "4", None, (), (1, 2, 3, 4), (0, 1), (2, -1), [2, 1], (1.0,), ((1,),),
         (2, 2), (1, 1, 1), (2, 1, 2), 2 ** 64, -(2 ** 63), (2, 0, 1), complex(1, 0))
BLOCKS = (0, -32, True, 1.5, "32", None, (), (1, 2, 3, 4), (1025,), 1025, (32, 33), (1, 1, 65), (1024, 1, 1),
          (1, 1, 64), (4, 4, 4), (33, 31), [32], (32.0,), 2 ** 63, (8, 8, 16), (16, 64))
SHARED = (-1, 1.5, "16", None, True, 2 ** 63, -(2 ** 70), 48 * 1024, 227 * 1024 + 1)
SCALARS = (2 ** 63, 2 ** 70, -(2 ** 70), 2 ** 64, -(2 ** 63), 2 ** 63 - 1, float("inf"), float("nan"), 1e308,
           -0.0, True, None, "3", [1], (1, 2), 1j, b"x", 5e-324)
NP_SCALARS = (("int8", 127), ("uint64", 2 ** 64 - 1), ("float16", 1.0), ("bool_", True), ("int16", -1),
              ("uint8", 255), ("float32", 3e38), ("float64", float("nan")), ("int64", -(2 ** 63)),
              ("uint32", 2 ** 32 - 1), ("float16", 65504.0))
ARRAYS = (("float32", (), "c"), ("float32", (0,), "empty"), ("complex64", (OUT_LEN,), "c"),
          ("bool", (OUT_LEN,), "c"), ("float16", (OUT_LEN,), "c"), ("int8", (OUT_LEN,), "c"),
          ("uint64", (OUT_LEN,), "c"), ("float32", (16, 16), "c"), ("float32", (OUT_LEN,), "readonly"),
          ("float32", (OUT_LEN,), "strided"), ("float32", (16, 16), "fortran"),
          ("float32", (OUT_LEN,), "reversed"), ("float32", (1,) * 20, "c"), ("object", (OUT_LEN,), "c"),
          ("datetime64[s]", (OUT_LEN,), "c"), ("U1", (8,), "c"), ("float32", (1,), "c"),
          ("float64", (OUT_LEN, 1), "c"), ("int64", (2, 2, 2, 2), "c"))


def launch_case(rng: random.Random, seed: int) -> Case:
    source, launch = valid_kernel(rng)
    which = rng.choice(["grid", "block", "shared", "both"])
    if which in ("grid", "both"):
        launch["grid"] = rng.choice(GRIDS)
    if which in ("block", "both"):
        launch["block"] = rng.choice(BLOCKS)
    case = Case("kernel", "launch", seed, source=source, **launch)
    if which == "shared":
        case = case.with_(shared_mem=rng.choice(SHARED))
    return case


def args_case(rng: random.Random, seed: int) -> Case:
    source, launch = valid_kernel(rng)
    args = list(launch["args"])
    for _ in range(rng.choice([1, 1, 2])):
        k = rng.randrange(len(args))
        what = rng.choice(["drop", "add", "scalar", "scalar", "np", "np", "array", "array", "same"])
        if what == "drop" and len(args) > 1:
            del args[k]
        elif what == "add":
            args.append(("scalar", 1))
        elif what == "scalar":
            args[k] = ("scalar", rng.choice(SCALARS))
        elif what == "np":
            args[k] = ("np", *rng.choice(NP_SCALARS))
        elif what == "array":
            args[k] = ("array", *rng.choice(ARRAYS))
        elif k > 0 and args[0][0] == "array":
            args[k] = ("same", 0)
    launch["args"] = tuple(args)
    return Case("kernel", "args", seed, source=source, **launch)


# resource limits ------------------------------------------------------------------------------------------------

TRIVIAL = HEADER + """

@cuda.jit
def kern(out):
    i = cuda.grid(1)
    if i == 0:
        out[0] = 1.0
"""


def _kernel(body: str) -> str:
    lines = "\n".join("    " + line for line in body.strip("\n").split("\n"))
    return f"{HEADER}\n\n@cuda.jit\ndef kern(out):\n{lines}\n"


def _huge_source(megabytes: float) -> str:
    line = "x = x * 0.5 + 1.0"
    count = int(megabytes * 1e6 / (len(line) + 5))
    return _kernel("x = 0.0\n" + "\n".join([line] * count) + "\nout[0] = x")


def _resource(name: str, source: str, grid, block, shared_mem=0) -> Case:
    return Case("kernel", "resource", 0, source=source, grid=grid, block=block, shared_mem=shared_mem,
                args=(("array", "float32", (4,), "c"),), tags=(name,))


def resource_cases(huge_source_mb: float = 10.0) -> list[Case]:
    """The resource-limit cases of issue 14, each named in ``Case.tags[0]``."""
    return [
        _resource("grid of 2^31-1 blocks", TRIVIAL, 2 ** 31 - 1, 1),
        _resource("grid of 2^31 blocks (past the x limit)", TRIVIAL, 2 ** 31, 1),
        _resource("grid of (65536, 65536) blocks (past the y limit)", TRIVIAL, (65536, 65536), 1),
        _resource("grid of (2^31-1, 65535, 65535) blocks of 1024", TRIVIAL, (2 ** 31 - 1, 65535, 65535), 1024),
        _resource("grid of (65535, 65535) blocks of 1024", TRIVIAL, (65535, 65535), 1024),
        _resource("grid of 2^20 blocks of 1024", TRIVIAL, 2 ** 20, 1024),
        _resource("static shared array of 2^28 floats",
                  _kernel("sh = cuda.shared.array(268435456, numba.float32)\nsh[0] = 1.0\nout[0] = sh[0]"), 1, 1),
        _resource("static shared array of 2^14 x 2^14 doubles",
                  _kernel("sh = cuda.shared.array((16384, 16384), numba.float64)\nsh[0, 0] = 1.0\n"
                          "out[0] = sh[0, 0]"), 1, 1),
        _resource("static shared just past 48 KiB",
                  _kernel("sh = cuda.shared.array(12289, numba.float32)\nsh[0] = 1.0\nout[0] = sh[0]"), 1, 1),
        _resource("2^28 bytes of dynamic shared memory, used",
                  _kernel("sh = cuda.shared.array(0, numba.float32)\nsh[0] = 1.0\nout[0] = sh[0]"), 1, 1,
                  1 << 28),
        _resource("2^28 bytes of dynamic shared memory, unused", TRIVIAL, 1, 1, 1 << 28),
        _resource("2^28 bytes of dynamic shared memory over 1024 blocks", TRIVIAL, 1024, 32, 1 << 28),
        _resource("local array of 10^8 floats at one thread",
                  _kernel("loc = cuda.local.array(100000000, numba.float32)\nloc[0] = 1.0\nout[0] = loc[0]"),
                  1, 1),
        _resource("local array of 2^20 floats at 1024 threads",
                  _kernel("loc = cuda.local.array(1048576, numba.float32)\nloc[0] = 1.0\n"
                          "if cuda.grid(1) == 0:\n    out[0] = loc[0]"), 1, 1024),
        _resource(f"a {huge_source_mb:g} MB kernel", _huge_source(huge_source_mb), 1, 1),
    ]


def runaway_cases() -> list[Case]:
    """Kernels that never end: each must stop (a ``KernelTimeout``) within a few seconds."""
    spin = "j = 0\nwhile j < 1000000000 + cuda.threadIdx.x:\n    j += 1\nout[0] = j"
    return [
        _resource("endless loop, one thread", _kernel("j = 0\nwhile True:\n    j += 1\nout[0] = j"), 1, 1),
        _resource("divergent loop, 2 x 1024 threads", _kernel(spin), 2, 1024),
        _resource("divergent loop, 64 x 1024 threads", _kernel(spin), 64, 1024),
        _resource("divergent loop, 2^24 threads", _kernel(spin), 16384, 1024),
        _resource("nested loops, 8 x 256 threads",
                  _kernel("t = 0\nfor p in range(100000):\n    for q in range(100000):\n        t += p ^ q\n"
                          "out[0] = t"), 8, 256),
    ]


def resource_case(rng: random.Random, seed: int) -> Case:
    """A resource-limit launch of a valid kernel (the random stream's share of them)."""
    source, launch = valid_kernel(rng)
    choice = rng.choice([("grid", 2 ** 31 - 1), ("grid", (65536, 65536)), ("grid", (2 ** 16, 2 ** 10)),
                         ("shared", 1 << 28), ("shared", 1 << 40), ("grid", 2 ** 24)])
    if choice[0] == "grid":
        launch["grid"] = choice[1]
    case = Case("kernel", "resource", seed, source=source, **launch)
    return case.with_(shared_mem=choice[1]) if choice[0] == "shared" else case


