"""The front end: reading a kernel's source, resolving its names, and rejecting what is outside the subset.

Kernels that need their own imports live in small module files written to a temporary folder and imported
from there, so their source is real and ``inspect`` reads it as it would a player's file.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numba
import numpy as np
import pytest
from numba import cuda
from simkit import load_module, run, run_clean

import gpusim
from gpusim import KernelCompileError, KernelError, KernelSyntaxError, UnsupportedConstruct

_counter = itertools.count()


def load(tmp_path: Path, source: str):
    """Write ``source`` to a fresh module file and import it."""
    return load_module(tmp_path, source)


def line_in(path: str, needle: str) -> int:
    for k, text in enumerate(Path(path).read_text().splitlines(), 1):
        if needle in text:
            return k
    raise AssertionError(needle)


# ---------------------------------------------------------------------------------------------- names


IMPORT_STYLES = {
    "from numba import cuda": """
        from numba import cuda

        @cuda.jit
        def k(out):
            i = cuda.grid(1)
            out[i] = cuda.threadIdx.x + 10 * cuda.blockIdx.x
    """,
    "import numba.cuda as cuda": """
        import numba.cuda as cuda

        @cuda.jit
        def k(out):
            i = cuda.grid(1)
            out[i] = cuda.threadIdx.x + 10 * cuda.blockIdx.x
    """,
    "import numba": """
        import numba

        @numba.cuda.jit
        def k(out):
            i = numba.cuda.grid(1)
            out[i] = numba.cuda.threadIdx.x + 10 * numba.cuda.blockIdx.x
    """,
    "from numba.cuda import threadIdx, ...": """
        from numba.cuda import blockIdx, grid, jit, threadIdx

        @jit
        def k(out):
            i = grid(1)
            out[i] = threadIdx.x + 10 * blockIdx.x
    """,
    "undecorated": """
        from numba import cuda

        def k(out):
            i = cuda.grid(1)
            out[i] = cuda.threadIdx.x + 10 * cuda.blockIdx.x
    """,
}


@pytest.mark.parametrize("style", list(IMPORT_STYLES))
def test_every_way_of_importing_numba_cuda(tmp_path, style):
    mod = load(tmp_path, IMPORT_STYLES[style])
    out = np.zeros(12, np.int64)
    run_clean(mod.k, 3, 4, out)
    np.testing.assert_array_equal(out, np.arange(12) % 4 + 10 * (np.arange(12) // 4))


def test_stub_imports_for_barriers_shared_memory_and_atomics(tmp_path):
    mod = load(tmp_path, """
        from numba import float32, int64
        from numba.cuda import atomic, blockDim, jit, shared, syncthreads, threadIdx

        @jit
        def k(a, total):
            sh = shared.array(64, float32)
            t = threadIdx.x
            sh[t] = a[t]
            syncthreads()
            atomic.add(total, 0, int64(sh[blockDim.x - 1 - t]))
    """)
    total = np.zeros(1, np.int64)
    run_clean(mod.k, 1, 64, np.arange(64, dtype=np.float32), total)
    assert total[0] == sum(range(64))


def test_dtypes_from_numba_numpy_and_their_aliases(tmp_path):
    mod = load(tmp_path, """
        import numba as nb
        import numpy as np
        from numba import cuda, float32, types
        from numpy import int16

        @cuda.jit
        def k(out):
            t = cuda.threadIdx.x
            a = cuda.shared.array(4, float32)
            b = cuda.shared.array(4, np.float64)
            c = cuda.local.array(2, nb.int32)
            d = cuda.local.array(2, int16)
            e = cuda.local.array(1, types.uint8)
            f = cuda.local.array(1, dtype="float32")
            a[t] = 1.5
            b[t] = 2.5
            c[0] = 3
            d[0] = 4
            e[0] = 300
            f[0] = 0.1
            cuda.syncthreads()
            out[t, 0] = a[t] + b[t] + c[0] + d[0]
            out[t, 1] = e[0]
            out[t, 2] = f[0]
            out[t, 3] = nb.float32(0.1)
            out[t, 4] = np.int8(t - 130)
    """)
    out = np.zeros((4, 5), np.float64)
    report = run_clean(mod.k, 1, 4, out)
    np.testing.assert_array_equal(out[:, 0], 11.0)
    np.testing.assert_array_equal(out[:, 1], 300 % 256)
    np.testing.assert_array_equal(out[:, 2], float(np.float32(0.1)))
    np.testing.assert_array_equal(out[:, 3], float(np.float32(0.1)))
    np.testing.assert_array_equal(out[:, 4], (np.arange(4) - 130).astype(np.int8))
    dtypes = {a.name: a.dtype for a in report.arrays}
    assert dtypes == {"out": np.float64, "a": np.float32, "b": np.float64, "c": np.int32, "d": np.int16,
                      "e": np.uint8, "f": np.float32}


def test_module_constants_closures_and_device_functions(tmp_path):
    mod = load(tmp_path, """
        import math

        import numpy as np
        from numba import cuda

        TPB = 8
        SHAPE = (2, TPB)
        SCALE = 0.5
        ENABLED = True
        OFFSETS = np.array([10, 20, 30], np.int64)

        @cuda.jit(device=True)
        def twice(x):
            return 2 * x

        @cuda.jit(device=True)
        def add(x, y):
            return x + y

        def make(bias, helper):
            @cuda.jit
            def k(out):
                sh = cuda.shared.array(SHAPE, np.float64)
                t = cuda.threadIdx.x
                sh[0, t] = t * SCALE
                sh[1, t] = helper(t)
                cuda.syncthreads()
                if ENABLED:
                    out[t] = add(sh[0, t], sh[1, t]) + bias + twice(OFFSETS[t % 3]) + math.floor(2.5)
            return k
    """)
    k = mod.make(100, mod.twice)
    out = np.zeros(8)
    run_clean(k, 1, 8, out)
    t = np.arange(8)
    np.testing.assert_array_equal(out, t * 0.5 + 2 * t + 100 + 2 * np.array([10, 20, 30])[t % 3] + 2.0)


def test_decorators_are_not_kernel_code(tmp_path):
    mod = load(tmp_path, """
        from numba import cuda

        def tag(label, **options):
            def wrap(f):
                return f
            return wrap

        @tag("a string and a dict", opts={"x": 1})
        @cuda.jit(debug=False, lineinfo=True)
        def k(out):
            out[cuda.grid(1)] = 7
    """)
    out = np.zeros(4, np.int64)
    run_clean(mod.k, 1, 4, out)
    assert out.tolist() == [7] * 4


def test_const_array_like(tmp_path):
    mod = load(tmp_path, """
        import numpy as np
        from numba import cuda

        COEF = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)

        @cuda.jit
        def k(out):
            c = cuda.const.array_like(COEF)
            t = cuda.threadIdx.x
            out[t] = c[t // 2, t % 2] + c.shape[0] * 10
    """)
    out = np.zeros(4, np.float32)
    run_clean(mod.k, 1, 4, out)
    np.testing.assert_array_equal(out, [21, 22, 23, 24])


def test_a_kernel_is_compiled_once():
    @cuda.jit
    def k(out):
        out[cuda.grid(1)] = 1

    first = gpusim.compile_kernel(k, instrument=False)
    assert gpusim.compile_kernel(k, instrument=False) is first
    assert gpusim.compile_kernel(k.py_func, instrument=False) is first


@cuda.jit
def ratio(a, out):
    out[0] = a[0] / a[1]


def test_the_compile_cache_is_keyed_on_argument_dtypes_ranks_and_layouts():
    # numba specialises a kernel on its argument types: float32 / float32 is a float32 division (1/3 rounded
    # to float32), float64 / float64 a float64 one; launching the float64 case after the float32 one must not
    # reuse the float32 code
    out = np.zeros(1)
    run_clean(ratio, 1, 1, np.array([1, 3], np.float32), out)
    assert out[0] == float(np.float32(1) / np.float32(3)) != 1 / 3
    run_clean(ratio, 1, 1, np.array([1.0, 3.0]), out)
    assert out[0] == 1 / 3
    run_clean(ratio, 1, 1, np.array([1, 3], np.int32), out)
    assert out[0] == 1 / 3

    def compiled(kernel, *args):
        return gpusim.compile_kernel(kernel, instrument=False, args=args)

    base = compiled(ratio, np.zeros(2), out)
    assert compiled(ratio, np.ones(7), np.zeros(5)) is base                # shapes and values are not in the key
    assert compiled(ratio, np.zeros(2, np.float32), out) is not base        # dtype
    assert compiled(ratio, np.zeros(2), np.zeros(1, np.int64)) is not base  # dtype of another argument
    c2 = np.zeros((2, 4))
    plain = compiled(size_of, c2, out)
    assert compiled(size_of, np.ones((3, 3)), out) is plain
    assert compiled(size_of, np.asfortranarray(c2), out) is not plain      # layout: C against F
    assert compiled(size_of, c2[:, ::2], out) is not plain                  # layout: C against any strides
    assert compiled(size_of, np.zeros(8), out) is not plain                 # rank


@cuda.jit
def size_of(a, out):
    out[0] = a.size


def test_docstrings_and_annotated_assignments_are_accepted():
    @cuda.jit
    def k(out):
        """A kernel with a docstring."""
        i: int = cuda.grid(1)
        y: float  # noqa: F842 - an annotation without a value is accepted and ignored
        out[i] = i * 2

    out = np.zeros(4, np.int64)
    run_clean(k, 1, 4, out)
    np.testing.assert_array_equal(out, [0, 2, 4, 6])


# ---------------------------------------------------------------------------------------------- rejections


REJECTED = [
    ("a list", "x = [1, 2]", "x = [1, 2]"),
    ("a dict", "x = {1: 2}", "x = {1: 2}"),
    ("operators on strings", 'x = "hello" + "!"', 'x = "hello" + "!"'),
    ("an f-string", 'x = f"{i}"', 'x = f"{i}"'),
    ("a lambda", "f = lambda v: v", "f = lambda v: v"),
    ("a list comprehension", "x = [v for v in range(3)]", "x = [v for v in range(3)]"),
    ("a generator", "x = sum(v for v in range(3))", "x = sum(v for v in range(3))"),
    ("try/except", "try:\n        x = 1\n    except Exception:\n        x = 2", "try:"),
    ("a with block", "with open('f') as fh:\n        x = 1", "with open"),
    ("a loop over a number", "for v in i:\n        x = v", "for v in i:"),
    ("sorted", "x = sorted(i)", "x = sorted(i)"),
    ("'undefined_thing' is not defined", "x = undefined_thing + 1", "undefined_thing"),
    ("raise", "raise ValueError(i)", "raise ValueError(i)"),   # an argument known only at run time
    ("a set", "x = {1, 2}", "x = {1, 2}"),
    ("`in`", "x = i in (1, 2)", "x = i in (1, 2)"),
    ("global", "global out2", "global out2"),
    ("return a value", "return i", "return i"),
]


@pytest.mark.parametrize("construct, stmt, needle", REJECTED, ids=[r[0] for r in REJECTED])
def test_constructs_outside_the_subset_are_named_with_file_and_line(tmp_path, no_back_end, construct, stmt, needle):
    mod = load(tmp_path, f"from numba import cuda\n\n\ndef k(out):\n    i = cuda.grid(1)\n    {stmt}\n    out[i] = 1\n")
    with pytest.raises(KernelCompileError) as e:
        run(mod.k, 1, 4, np.zeros(4, np.int64))
    err = e.value
    assert err.filename == mod.__file__
    assert err.lineno == line_in(mod.__file__, needle)
    assert needle.split("\n")[0].strip() in err.source_line
    words = construct.split()[-1].strip("`'")
    assert words.lower() in err.message.lower(), err.message
    text = str(err)
    assert f"{mod.__file__}:{err.lineno}" in text
    assert "Traceback" not in text


def test_unsupported_builtins_are_named_as_unsupported_not_undefined(tmp_path):
    mod = load(tmp_path, """
        from numba import cuda

        def k(out):
            i = cuda.grid(1)
            x = input(i)
            out[i] = sorted(i)
    """)
    with pytest.raises(UnsupportedConstruct) as e:
        run(mod.k, 1, 1, np.zeros(1))
    assert "input()" in e.value.message and "not defined" not in e.value.message
    assert e.value.lineno == line_in(mod.__file__, "input(i)")


def test_recursion_runs_per_lane_to_each_lanes_depth(tmp_path):
    mod = load(tmp_path, """
        from numba import cuda

        @cuda.jit(device=True)
        def fact(n):
            if n <= 1:
                return 1
            return n * fact(n - 1)

        @cuda.jit
        def k(out):
            i = cuda.grid(1)
            out[i] = fact(i)
    """)
    out = np.zeros(6, np.int64)
    run_clean(mod.k, 1, 6, out)
    assert out.tolist() == [1, 1, 2, 6, 24, 120]




def test_a_runaway_recursion_is_a_fault_at_the_function_and_the_thread(tmp_path):
    mod = load(tmp_path, """
        from numba import cuda

        @cuda.jit(device=True)
        def down(n):
            if n == 0:
                return 0
            return down(n - 1)

        @cuda.jit
        def k(out, start):
            i = cuda.grid(1)
            out[i] = down(start[i])
    """)
    report = run(mod.k, 1, 3, np.zeros(3, np.int64), np.array([2, 1, -3], np.int64))
    (fault,) = report.faults
    assert isinstance(fault, KernelError) and "'down' recursed more than 200 calls deep" in fault.message
    assert fault.thread == (2, 0, 0) and fault.lineno == line_in(mod.__file__, "def down(n):")


def test_a_recursive_call_before_the_base_case_is_typed_by_the_base_case(tmp_path):
    # numba types the recursion by the returns that do not need it: `return 0` (int64), `return 1.0` (float64)
    mod = load(tmp_path, """
        from numba import cuda

        @cuda.jit(device=True)
        def depth(n):
            if n > 0:
                return depth(n - 1) + 1
            return 0

        @cuda.jit(device=True)
        def power(x, n):
            if n > 0:
                y = power(x, n - 1)
                return y * x
            return 1.0

        @cuda.jit
        def k(ints, floats, x):
            i = cuda.grid(1)
            ints[i] = depth(i)
            floats[i] = power(x, i)
    """)
    ints, floats = np.zeros(5, np.int64), np.zeros(5)
    run_clean(mod.k, 1, 5, ints, floats, 2.0)
    assert ints.tolist() == [0, 1, 2, 3, 4] and floats.tolist() == [1.0, 2.0, 4.0, 8.0, 16.0]


def test_a_recursion_no_return_types_is_refused(tmp_path):
    mod = load(tmp_path, """
        from numba import cuda

        @cuda.jit(device=True)
        def forever(n):
            return forever(n + 1)

        @cuda.jit
        def k(out):
            out[0] = forever(0)
    """)
    with pytest.raises(UnsupportedConstruct, match="cannot type infer runaway recursion") as e:
        run(mod.k, 1, 1, np.zeros(1, np.int64))
    assert e.value.lineno == line_in(mod.__file__, "return forever(n + 1)")


def test_a_global_of_an_unusable_kind_is_named(tmp_path):
    mod = load(tmp_path, """
        from numba import cuda

        CONFIG = {"n": 3}

        def k(out):
            out[0] = CONFIG
    """)
    with pytest.raises(KernelCompileError, match="CONFIG") as e:
        run(mod.k, 1, 1, np.zeros(1))
    assert e.value.lineno == line_in(mod.__file__, "out[0] = CONFIG")


def test_an_unknown_cuda_attribute_is_named(tmp_path):
    mod = load(tmp_path, """
        from numba import cuda

        def k(out):
            out[0] = cuda.not_a_thing(3)
    """)
    with pytest.raises(UnsupportedConstruct, match="not_a_thing"):
        run(mod.k, 1, 1, np.zeros(1))


def test_device_function_called_with_the_wrong_number_of_arguments(tmp_path):
    mod = load(tmp_path, """
        from numba import cuda

        def helper(a, b):
            return a + b

        def k(out):
            out[0] = helper(1)
    """)
    with pytest.raises(KernelCompileError, match="helper") as e:
        run(mod.k, 1, 1, np.zeros(1))
    assert e.value.lineno == line_in(mod.__file__, "helper(1)")


def test_a_syntax_error_in_the_file_is_a_kernel_syntax_error_with_its_line(tmp_path):
    mod = load(tmp_path, """
        from numba import cuda

        def k(out):
            i = cuda.grid(1)
            out[i] = 1
    """)
    path = Path(mod.__file__)
    # the player saves a broken edit after the module was imported
    path.write_text(path.read_text().replace("out[i] = 1", "out[i] = = 1"))
    with pytest.raises(KernelSyntaxError) as e:
        run(mod.k, 1, 1, np.zeros(1))
    assert e.value.lineno == line_in(str(path), "= = 1") and e.value.filename == str(path)


def test_errors_are_raised_before_any_thread_runs():
    @cuda.jit
    def k(out):
        out[0] = 1
        x = [1]
        out[1] = x[0]

    out = np.zeros(2, np.int64)
    with pytest.raises(UnsupportedConstruct):
        run(k, 1, 1, out)
    assert out.tolist() == [0, 0]


def test_numba_types_namespace_is_accepted_as_a_cast():
    @cuda.jit
    def k(out):
        out[0] = numba.float32(1) / numba.float32(3)
        out[1] = numba.types.int16(70000)

    out = np.zeros(2)
    run_clean(k, 1, 1, out)
    assert out[0] == float(np.float32(1) / np.float32(3))
    assert out[1] == np.int64(70000).astype(np.int16)


def _assigned_on_another_loop_path(result, x, v, n):
    for i in range(n):
        if i == 0:
            if i == x:
                pass
            else:
                late = v
        else:
            if i == x:
                pass
            else:
                late = late + v
    result[0] = late


def test_a_local_read_in_a_loop_before_its_assignment_on_another_path_compiles():
    # numba-cuda's test_ssa issue 5482: i = 0 assigns v, i = 1 skips, i = 2 adds v (Python gives 2 * v)
    res = np.zeros(1, np.int64)
    rep = gpusim.launch(_assigned_on_another_loop_path, 1, 1, (res, 1, 5, 3))
    assert not rep.faults and res[0] == 10
    rep = gpusim.launch(_assigned_on_another_loop_path, 1, 1, (res, 0, 5, 3))  # read unassigned at i = 1
    assert rep.faults and "late" in str(rep.faults[0])


def _identity_tests(out, pred, n):
    out[0] = 1 if pred is True else 0
    out[1] = 1 if pred is not False else 0
    out[2] = 1 if n is None else 0
    out[3] = 1 if n is not None else 0
    out[4] = 1 if n is True else 0  # an int is never the object True


def test_is_compares_with_none_true_and_false_as_python_does_for_kernel_values():
    out = np.full(5, -1, np.int64)
    rep = gpusim.launch(_identity_tests, 1, 1, (out, True, 1))
    assert not rep.faults and out.tolist() == [1, 1, 0, 1, 0]
    gpusim.launch(_identity_tests, 1, 1, (out, False, 1))
    assert out.tolist() == [0, 0, 0, 1, 0]
