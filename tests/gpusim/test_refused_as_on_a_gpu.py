"""Kernels gpusim once ran that numba-cuda 0.30.4 refuses on a GPU (measured on the H200, 2026-12-02): each is
now refused at compile time, naming the construct and the line and saying what numba-cuda accepts instead. A
string element copied into an S/U cell of another length ("No implementation of function setitem(array([char x
3], 1d, C), int64, [char x 2])"), a recursion through another device function or through the same one with
other argument types ("'JITCUDACodegen' object has no attribute 'insert_unresolved_ref'"), and a plain Python
function called from a kernel ("Untyped global name ...: Cannot determine Numba type of <class 'function'>").
What numba-cuda does accept beside each still runs.

Under the drop-in (numba's simulator API) a plain Python helper still runs, as numba's simulator runs it: that
half is in test_cudasim_more_language.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from simkit import line_of, load_module, run, run_clean

from gpusim import KernelCompileError, UnsupportedConstruct


def test_a_string_element_of_another_length_is_refused_at_the_store(tmp_path):
    mod = load_module(tmp_path, """
        from numba import cuda

        @cuda.jit
        def k(tags, src):
            i = cuda.grid(1)
            if i < tags.shape[0]:
                tags[i] = src[1]
    """)
    cases = ((np.full(2, b"zz", "S3"), np.array([b"ab", b"cd"], "S2"), "bytes[2] element into a bytes[3] cell", "S2"),
             (np.full(2, "zz", "<U2"), np.array(["abc", "def"], "<U3"), "str[3] element into a str[2] cell", "U3"))
    for dst, src, what, own in cases:
        with pytest.raises(KernelCompileError) as e:
            run(mod.k, 1, 2, dst, src)
        assert f"cannot store a {what}" in e.value.message and f"of its own length ({own} here)" in e.value.message
        assert "store a string constant" in e.value.message
        assert e.value.lineno == line_of(mod.k, "tags[i] = src[1]")


def test_a_string_element_of_the_same_length_and_constants_still_store(tmp_path):
    mod = load_module(tmp_path, """
        from numba import cuda

        @cuda.jit
        def k(tags, src, recs):
            i = cuda.grid(1)
            if i < tags.shape[0]:
                tags[i] = src[1 - i]
                recs[i].label = b"a label longer than eight"
    """)
    tags, recs = np.zeros(2, "S2"), np.zeros(2, [("label", "S8")])
    run_clean(mod.k, 1, 2, tags, np.array([b"ab", b"c"], "S2"), recs)
    assert tags.tolist() == [b"c", b"ab"] and recs["label"].tolist() == [b"a label "] * 2


def test_mutual_recursion_is_refused_naming_the_cycle_and_the_line(tmp_path):
    mod = load_module(tmp_path, """
        from numba import cuda

        @cuda.jit(device=True)
        def ping(n):
            if n <= 0:
                return 0
            return pong(n - 1) + 1

        @cuda.jit(device=True)
        def pong(n):
            return ping(n) * 2

        @cuda.jit
        def k(out):
            i = cuda.grid(1)
            out[i] = ping(i)
    """)
    with pytest.raises(UnsupportedConstruct) as e:
        run(mod.k, 1, 4, np.zeros(4, np.int64))
    msg = e.value.message
    assert "mutual recursion: device functions call each other (ping -> pong -> ping)" in msg
    assert "calls itself with the same argument types" in msg and "loop" in msg
    assert e.value.lineno == line_of(mod.pong, "return ping(n) * 2")


def test_a_recursion_with_other_argument_types_is_refused_and_with_its_own_runs(tmp_path):
    # numba-cuda's own test of the first (test_recursion.py test_type_change) is skipped: "Needs
    # insert_unresolved_ref support in target"
    mod = load_module(tmp_path, """
        from numba import cuda

        @cuda.jit(device=True)
        def walk(x, y):
            if x > 1 and y > 0:
                return x + walk(x - y, y)
            return y

        @cuda.jit
        def k(out, x, y):
            out[0] = walk(x, y)
    """)
    with pytest.raises(UnsupportedConstruct) as e:  # x - y: int64 - float64 is a float64
        run(mod.k, 1, 1, np.zeros(1), 13, 0.125)
    assert "'walk' is called again, before it is compiled, with other argument types (float64, float64; first " \
           "int64, float64)" in e.value.message
    assert e.value.lineno == line_of(mod.walk, "return x + walk(x - y, y)")
    out = np.zeros(1)
    run_clean(mod.k, 1, 1, out, 3.0, 0.5)  # float64 throughout: it calls itself with its own types
    assert out[0] == 3.0 + 2.5 + 2.0 + 1.5 + 0.5  # stops at x = 1.0, returning y


def test_a_plain_python_helper_is_refused_asking_for_the_decorator(tmp_path):
    mod = load_module(tmp_path, """
        from numba import cuda

        def add_ten(x):
            return x + 10

        @cuda.jit(device=True)
        def twice_plus_ten(x):
            return add_ten(2 * x)

        @cuda.jit
        def direct(out):
            out[0] = add_ten(1)

        @cuda.jit
        def through_a_device_function(out):
            out[0] = twice_plus_ten(1)
    """)
    for kernel, caller, line in ((mod.direct, mod.direct, "add_ten(1)"),
                                 (mod.through_a_device_function, mod.twice_plus_ten, "add_ten(2 * x)")):
        with pytest.raises(UnsupportedConstruct) as e:
            run(kernel, 1, 1, np.zeros(1, np.int64))
        assert "add_ten() is a plain Python function: numba-cuda cannot call it from a kernel" in e.value.message
        assert "decorate it with @cuda.jit(device=True)" in e.value.message
        assert e.value.lineno == line_of(caller, line)
