"""Every input a kernel can carry ends as a documented error class or a clean result, with file and line.

The cases come from fuzzing gpusim as a hostile user would (issue 14): calls with missing or extra arguments,
constants that do not fit or cannot be folded, expressions and call chains deeper than Python's own limits,
out-of-range scalar arguments, and valid numba-cuda that the old engine hid behind a catch-all error. Each
rejection is raised by the front end before any back end code runs.
"""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from simkit import load_module, one_fault, run, run_clean

import gpusim
from gpusim import KernelCompileError, KernelError, LaunchError, OutOfBounds, UnsupportedConstruct


def load(tmp_path: Path, source: str):
    return load_module(tmp_path, source)


HEAD = "import math\nimport numba\nfrom numba import cuda\n\n\ndef k(out, f, h):\n    i = cuda.grid(1)\n"
BODY_LINE = 8


# (what, statement, words the message must contain)
REJECTED = [
    ("abs()", "out[0] = abs()", "abs() takes 1 argument, 0 given"),
    ("int()", "out[0] = int()", "int() takes 1 argument, 0 given"),
    ("min()", "out[0] = min()", "min() takes at least 2 arguments"),
    ("divmod(1)", "q = divmod(1)", "divmod() takes 2 arguments, 1 given"),
    ("numba.int32()", "out[0] = numba.int32()", "takes one value to convert, 0 given"),
    ("cuda.fma(1, 2)", "out[0] = cuda.fma(1.0, 2.0)", "missing a required argument: 'c'"),
    ("atomic.add(out, 0)", "cuda.atomic.add(out, 0)", "missing a required argument: 'val'"),
    ("keywords to an atomic", "cuda.atomic.add(ary=out, idx=0, val=1)", "takes no keyword arguments"),
    ("compare_and_swap(out, 1)", "cuda.atomic.compare_and_swap(out, 1)", "missing a required argument: 'val'"),
    ("an extra argument", "cuda.syncthreads(1)", "too many positional arguments"),
    ("an unknown keyword", "cuda.syncwarp(mask=1, width=2)", "unexpected keyword argument 'width'"),
    ("2**64", "out[0] = 18446744073709551616", "does not fit in 64 bits"),
    ("10**30", "out[0] = 10**30", "does not fit in 64 bits"),
    ("-(2**63) - 1", "out[0] = -(2 ** 63) - 1", "the integer -9223372036854775809 does not fit in 64 bits"),
    ("range(float)", "for k in range(2.5):\n        out[0] = k", "range() needs integers, not float64"),
    ("math.sqrt(1, 2)", "out[0] = math.sqrt(1.0, 2.0)", "math.sqrt() takes 1 argument, 2 given"),
    ("cuda.grid(4)", "out[0] = cuda.grid(4)", "cuda.grid takes 1, 2 or 3"),
    ("print(end=)", "print(i, end='')", "print() takes no keyword arguments"),
    ("print an array", "print(out)", "print() cannot print a array"),
    ("index a 1-D array twice", "out[1, 2] = 3", "has 1 dimension but is indexed with 2"),
    ("a tuple into an element", "out[0] = (1, 2)", "cannot store a (int64, int64)"),
    ("unpack 3 into 2", "a, b = 1, 2, 3", "cannot unpack 3 values into 2 names"),
    ("a local read too early", "out[0] = zz\n    zz = 1", "'zz' is read before it is assigned"),
    ("a heterogeneous tuple by a per-lane index", "x = (1, 2.5)[i]", "cannot be indexed by a value"),
    ("float << int", "x = 1.5 << 2", "numba-cuda has no << for float64 and int64"),
    ("float(bool)", "x = float(i > 1)", "numba-cuda has no float() for bool"),
    # the syntax outside the kernel subset (test_frontend.py has the commonest: lists, dicts, strings, ...)
    ("a set comprehension", "x = {v for v in range(3)}", "a set comprehension cannot be used in a kernel"),
    ("a dict comprehension", "x = {v: v for v in range(3)}", "a dict comprehension cannot be used in a kernel"),
    ("a class", "class C:\n        pass", "a class cannot be used in a kernel"),
    ("del", "del i", "del cannot be used in a kernel"),
    ("import", "import math", "import cannot be used in a kernel"),
    ("from import", "from math import sqrt", "import cannot be used in a kernel"),
    ("assert", "assert i > 0", "assert cannot be used in a kernel"),
    ("yield", "yield i", "yield cannot be used in a kernel"),
    ("*-unpacking", "x = (*(1, 2),)", "*-unpacking cannot be used in a kernel"),
    ("*-unpacking an array into a call", "out[0] = max(*out)", "only a tuple spreads into arguments"),
    ("print(*args)", "print(*out)", "*-unpacking cannot be used in a kernel"),
    (":=", "out[0] = (y := 2)", "the := operator cannot be used in a kernel"),
    ("for/else", "for v in range(3):\n        out[0] = v\n    else:\n        out[0] = 9", "for/else is not supported"),
    ("while/else", "while i < 3:\n        i += 1\n    else:\n        out[0] = 9", "while/else is not supported"),
    ("is", "x = i is out", "`is` compares with None, True or False only"),
    ("not in", "x = i not in (1, 2)", "`in` comparisons are not supported"),
    ("@", "x = i @ i", "the @ operator is not supported"),
    ("a = b = c", "x = y = 1", "chained assignment (a = b = c) is not supported"),
    ("try/finally", "try:\n        x = 1\n    finally:\n        x = 2", "try/except cannot be used in a kernel"),
    ("match", "match i:\n        case 1:\n            pass", "the statement Match is not supported in a kernel"),
    ("async def", "async def g():\n        pass", "the statement AsyncFunctionDef is not supported"),
    ("an ordering of complex numbers", "x = 1j < 2j", "numba-cuda has no < for complex128 and complex128"),
    ("None", "x = None + 1", "None cannot be used as a value"),
    ("a loop over a number", "for v in i:\n        out[0] = v", "a kernel cannot loop over a number (int64)"),
    ("an array attribute", "x = out.T", "the array attribute .T is not supported"),
    ("an array method", "out.fill(0)", "out.fill() is not a device function or supported intrinsic"),
    ("an unknown cuda function", "out[0] = cuda.nosuch()", "cuda.nosuch is not supported by gpusim"),
    ("an unknown math name", "out[0] = math.tau2", "math.tau2 is not supported in a kernel"),
    ("a constant tuple index out of range", "out[0] = (1, 2)[5]", "tuple index 5 is out of range"),
    ("an array and a number in one conditional", "out[0] = f[0] if i else out", "cannot be unified"),
    # what numba-cuda decides at compile time: shapes, dtypes and arguments that must be constants
    ("a shared shape known at run time", "x = cuda.shared.array(i, numba.float32)",
     "the shape of cuda.shared.array must be a literal or a module-level constant"),
    ("a local shape known at run time", "x = cuda.local.array(i, numba.float32)",
     "the shape of cuda.local.array must be a literal or a module-level constant"),
    ("a negative shared shape", "x = cuda.shared.array(-1, numba.float32)", "must be non-negative integers"),
    ("not a dtype", "x = cuda.shared.array(4, 'float32x')", "'float32x' is not a dtype"),
    ("a datetime shared array", "x = cuda.shared.array(4, 'datetime64[D]')", "datetime64[D] are not supported"),
    ("a datetime local array", "x = cuda.local.array(4, 'datetime64[s]')", "datetime64[s] are not supported"),
    ("a complex stored as a real", "f[0] = 1j", "cannot convert a complex128 to float32"),
    ("syncthreads_count(float)", "x = cuda.syncthreads_count(f[0])", "needs an integer predicate, not float32"),
    ("a shuffle width", "x = cuda.shfl_down_sync(0xffffffff, f[0], 1, 16)", "has no width argument"),
    ("min() of one value", "out[0] = min(i)", "min() of one value (a sequence) is not supported"),
    ("range() as a value", "x = range(3)", "range() can only be used in a for loop"),
    ("a float warp mask", "cuda.syncwarp(1.5)", "a warp mask must be an integer, not float64"),
    ("an array as a predicate", "out[0] = cuda.ballot_sync(0xffffffff, f)", "the predicate must be an integer or"),
]


@pytest.mark.parametrize("what, stmt, words", REJECTED, ids=[r[0] for r in REJECTED])
def test_the_front_end_rejects_bad_calls_and_constants_with_file_and_line(tmp_path, no_back_end, what, stmt, words):
    mod = load(tmp_path, HEAD + "    " + stmt + "\n")
    with pytest.raises(KernelCompileError) as e:
        run(mod.k, 1, 4, np.zeros(4, np.int64), np.zeros(4, np.float32), np.zeros(4, np.float16))
    assert words in e.value.message, e.value.message
    assert e.value.filename == mod.__file__ and e.value.lineno == BODY_LINE
    assert stmt.split("\n")[0].strip() in e.value.source_line


def test_constant_folding_that_would_raise_is_left_for_the_kernel_to_fault_on(tmp_path):
    # CPython does not fold 1 // 0 or 1 << -1 either: they run, and integer division by zero is a fault
    mod = load(tmp_path, HEAD + "    if i == 0:\n        out[0] = 1 << -1\n        out[1] = 1 // 0\n")
    f = one_fault(run(mod.k, 1, 4, np.zeros(4, np.int64), np.zeros(4, np.float32), np.zeros(4, np.float16)),
                  KernelError)
    assert "division by zero" in f.summary and f.lineno == BODY_LINE + 2


def test_a_200_term_expression_compiles_and_runs(tmp_path):
    mod = load(tmp_path, HEAD + "    out[i] = " + " + ".join(["i"] * 200) + "\n")
    out = np.zeros(4, np.int64)
    run_clean(mod.k, 1, 4, out, np.zeros(4, np.float32), np.zeros(4, np.float16))
    assert out.tolist() == [200 * i for i in range(4)]


def test_an_expression_too_deep_for_python_is_a_compile_error_not_a_crash(tmp_path):
    mod = load(tmp_path, HEAD + "    out[i] = " + " + ".join(["i"] * 3000) + "\n")
    with pytest.raises(KernelCompileError, match="nested too deeply"):
        run(mod.k, 1, 4, np.zeros(4, np.int64), np.zeros(4, np.float32), np.zeros(4, np.float16))


def test_a_kernel_of_thousands_of_statements_is_refused_before_its_source_is_read(tmp_path):
    mod = load(tmp_path, "def k(out):\n    x = 0.0\n" + "    x = x * 0.5 + 1.0\n" * 6000 + "    out[0] = x\n")
    started = time.perf_counter()
    with pytest.raises(UnsupportedConstruct, match="too large for gpusim to compile") as e:
        run(mod.k, 1, 1, np.zeros(1))
    assert time.perf_counter() - started < 0.5
    assert e.value.filename == mod.__file__ and e.value.lineno == 1
    parts = "\n".join(f"@cuda.jit(device=True)\ndef f{k}(x):\n" + "    x = x * 0.5 + 1.0\n" * 3000 + "    return x\n"
                      for k in range(6))
    calls = "".join(f"    x = f{k}(x)\n" for k in range(6))
    mod = load(tmp_path, "from numba import cuda\n\n" + parts + "\ndef k(out):\n    x = 0.0\n" + calls
               + "    out[0] = x\n")
    with pytest.raises(UnsupportedConstruct, match="the kernel with the device functions it calls is"):
        run(mod.k, 1, 1, np.zeros(1))


def test_a_chain_of_600_device_functions_compiles_without_recursion(tmp_path):
    dev = "@cuda.jit(device=True)\n"
    funcs = [dev + "def f0(x):\n    return x + 1\n"] + [dev + f"def f{k}(x):\n    return f{k - 1}(x) + 1\n"
                                                       for k in range(1, 600)]
    mod = load(tmp_path, "from numba import cuda\n\n" + "\n".join(funcs)
               + "\ndef k(out):\n    i = cuda.grid(1)\n    out[i] = f599(i)\n")
    out = np.zeros(4, np.int64)
    run_clean(mod.k, 1, 4, out)
    assert out.tolist() == [600, 601, 602, 603]


def test_scalar_arguments_must_fit_in_64_bits():
    def k(out, n):
        out[0] = n

    with pytest.raises(LaunchError, match="does not fit in 64 bits"):
        gpusim.launch(k, 1, 1, (np.zeros(1, np.int64), 2**64))
    with pytest.raises(LaunchError, match="does not fit in 64 bits"):
        gpusim.launch(k, 1, 1, (np.zeros(1, np.int64), -(2**63) - 1))
    out = np.zeros(1, np.uint64)
    run_clean(k, 1, 1, out, 2**64 - 1)   # numba types an int from 2**63 on as uint64
    assert out[0] == 2**64 - 1


# ---------------------------------------------------------------------------------------------- valid numba-cuda


def test_int_of_a_uniform_float32_or_float16(tmp_path):
    mod = load(tmp_path, HEAD + "    out[0] = int(f[0])\n    out[1] = int(h[0])\n")
    out = np.zeros(4, np.int64)
    run_clean(mod.k, 1, 1, out, np.array([-2.7, 0, 0, 0], np.float32), np.array([3.9, 0, 0, 0], np.float16))
    assert out[:2].tolist() == [-2, 3]


def test_a_static_shared_array_declared_before_a_dynamic_one(tmp_path):
    mod = load(tmp_path, """
        import numba
        from numba import cuda

        def k(a, out):
            s = cuda.shared.array(4, numba.float32)
            d = cuda.shared.array(0, numba.float32)
            t = cuda.threadIdx.x
            if t < 4:
                s[t] = 10.0
            d[t] = a[t]
            cuda.syncthreads()
            out[t] = d[7 - t] + s[t % 4]
    """)
    out = np.zeros(8, np.float32)
    run_clean(mod.k, 1, 8, np.arange(8, dtype=np.float32), out, shared_mem=32)
    assert out.tolist() == [17.0 - t for t in range(8)]


def test_frexp_and_modf(tmp_path):
    mod = load(tmp_path, """
        import math
        from numba import cuda

        def k(a, m, e, frac, whole):
            i = cuda.grid(1)
            m[i], e[i] = math.frexp(a[i])
            frac[i], whole[i] = math.modf(a[i])
    """)
    a = np.array([1.5, -8.25, 0.0, 1e300])
    m, e, frac, whole = np.zeros(4), np.zeros(4, np.int32), np.zeros(4), np.zeros(4)
    run_clean(mod.k, 1, 4, a, m, e, frac, whole)
    assert [(float(x), int(y)) for x, y in zip(m, e)] == [math.frexp(v) for v in a]
    assert [(float(x), float(y)) for x, y in zip(frac, whole)] == [math.modf(v) for v in a]


def test_unary_plus_of_a_bool_is_an_int(tmp_path):
    mod = load(tmp_path, HEAD + "    out[i] = +(i > 1) + 1\n")
    out = np.zeros(4, np.int64)
    run_clean(mod.k, 1, 4, out, np.zeros(4, np.float32), np.zeros(4, np.float16))
    assert out.tolist() == [1, 1, 2, 2]


def test_gamma_lgamma_and_remainder_at_their_poles_give_inf_and_nan_as_the_gpu_does(tmp_path):
    mod = load(tmp_path, """
        import math
        from numba import cuda

        def k(a, out):
            i = cuda.grid(1)
            out[i, 0] = math.gamma(a[i])
            out[i, 1] = math.lgamma(a[i])
            out[i, 2] = math.remainder(a[i], 0.0)
            out[i, 3] = math.gamma(a[i] + 200.0)
    """)
    out = np.zeros((3, 4))
    run_clean(mod.k, 1, 3, np.array([0.0, -1.0, -2.5]), out)
    assert out[0, :3].tolist()[:2] == [math.inf, math.inf] and math.isnan(out[0, 2])
    assert math.isnan(out[1, 0]) and out[1, 1] == math.inf           # gamma(-1) is NaN, lgamma(-1) +inf
    assert out[2, 0] == pytest.approx(math.gamma(-2.5)) and out[2, 1] == pytest.approx(math.lgamma(-2.5))
    assert np.isinf(out[:, 3]).all()                                 # overflow: inf, not an exception


def test_a_loop_variable_reused_at_another_type_where_no_thread_set_it_yet(tmp_path):
    # j is an int32 in the first loop (a range of an int32), an int64 in the second: the front end converts
    # it where the paths meet, also where no thread ever ran the first loop (puzzle 71's route kernel, one
    # token per device); numba converts the undefined value harmlessly
    mod = load(tmp_path, """
        from numba import cuda


        def k(out, n):
            i = cuda.threadIdx.x
            if i < 1:
                for j in range(i):
                    out[i] += 100
            if i != 1:
                for j in range(n):
                    out[i] += j
            for g in range(cuda.gridDim.x - 1):     # the same for every thread, and never runs
                out[i] += 1000
            for g in range(n):
                out[i] += 10 * g
        """)
    out = np.zeros(4, np.int64)
    run_clean(mod.k, 1, 4, out, 3)
    assert out.tolist() == [33, 30, 33, 33]


def test_an_out_of_bounds_read_at_a_uniform_index_is_one_fault_and_the_kernel_goes_on(tmp_path):
    mod = load(tmp_path, """
        from numba import cuda

        def k(a, out, n):
            x = a[n]
            if x > 0:
                out[0] = 1
            out[1] = 2
    """)
    out = np.zeros(2)
    f = one_fault(run(mod.k, 1, 1, np.arange(4.0), out, 10), OutOfBounds)
    assert f.index == (10,) and out[1] == 2


# ---------------------------------------------------------------------------------------------- threads


def test_threads_making_the_first_launch_of_one_kernel_together_get_no_false_errors(tmp_path):
    mod = load(tmp_path, """
        from numba import cuda

        @cuda.jit(device=True)
        def helper(x):
            return x * 2

        @cuda.jit(device=True)
        def twice(x):
            return helper(x) + helper(x + 1)

        def k(out):
            i = cuda.grid(1)
            out[i] = twice(i)
    """)
    n = 16
    start = threading.Barrier(n)
    outs = [np.zeros(32, np.int64) for _ in range(n)]
    errors: list[BaseException] = []

    def worker(out):
        try:
            start.wait()
            gpusim.launch(mod.k, 1, 32, (out,)).raise_for_faults()
        except BaseException as e:  # noqa: BLE001 - any error at all fails the test
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(o,)) for o in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    want = [2 * i + 2 * (i + 1) for i in range(32)]
    assert all(o.tolist() == want for o in outs)


def test_a_local_read_on_a_path_that_never_assigned_it_is_a_fault_naming_it(tmp_path):
    mod = load(tmp_path, """
        from numba import cuda

        def k(out, n):
            if n > 3:
                x = 5
            out[0] = x
    """)
    f = one_fault(run(mod.k, 1, 1, np.zeros(1), 1), KernelError)
    assert f.summary == "The variable 'x' is read before it is assigned on the path the threads took."
    assert f.lineno == 7


def test_grids_past_the_gpus_limits_or_the_simulators_are_launch_errors_before_anything_is_allocated():
    def k(out):
        out[0] = 1

    out = np.zeros(1)
    with pytest.raises(LaunchError, match="y dimension is at most 65,535"):
        gpusim.launch(k, (65536, 65536), 1, (out,))
    with pytest.raises(LaunchError, match="z dimension is at most 64"):
        gpusim.launch(k, 1, (1, 1, 65), (out,))
    with pytest.raises(LaunchError, match="more than the simulator can track"):
        gpusim.launch(k, 2**31 - 1, 1, (out,))
