"""Random kernels through the lane back end, against the same code run thread by thread as plain Python.

Hypothesis writes small kernels of nested if/else, for-range (1-3 arguments, negative steps), guarded while
loops, break/continue/return taken by some threads, and/or/not, conditional expressions, min/max and a device
function with returns inside a loop. gpusim runs all threads at once as lane vectors; the reference calls the
kernel once per thread with a stand-in for ``cuda.grid``. Threads only read an input array and write their
own row of the output, so the two must agree exactly: any masking, merging or loop-exit mistake shows.
"""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import gpusim

N_IN = 64
VARS = ("x", "y", "z")

HEAD = '''from numba import cuda


@cuda.jit(device=True)
def dev(v, lo):
    if v < lo:
        return lo
    for t in range(3):
        if v % 3 == t:
            return v + t
    return v


def kern(a, out):
    i = cuda.grid(1)
    x = a[i % 64]
    y = i % 7
    z = 3
'''
TAIL = '''
    out[i, 0] = x
    out[i, 1] = y
    out[i, 2] = z
'''


def expr(draw, depth: int, names: list[str]) -> str:
    kinds = ["lit", "var", "input"]
    if depth > 0:
        kinds += ["bin", "div", "cmp", "chain", "bool", "not", "ifexp", "call", "dev"]
    k = draw(st.sampled_from(kinds))

    def sub() -> str:
        return expr(draw, depth - 1, names)

    if k == "lit":
        return str(draw(st.integers(-5, 20)))
    if k == "var":
        return draw(st.sampled_from([*VARS, *names, "i"]))
    if k == "input":
        return f"a[(i + {draw(st.integers(0, 9))}) % {N_IN}]"
    if k == "bin":
        return f"({sub()} {draw(st.sampled_from(['+', '-', '*']))} {sub()})"
    if k == "div":
        return f"({sub()} {draw(st.sampled_from(['//', '%']))} {draw(st.integers(1, 7))})"
    if k == "cmp":
        return f"({sub()} {draw(st.sampled_from(['<', '<=', '>', '>=', '==', '!=']))} {sub()})"
    if k == "chain":
        ops = draw(st.lists(st.sampled_from(['<', '<=', '>', '==', '!=']), min_size=2, max_size=3))
        return "(" + sub() + "".join(f" {op} {sub()}" for op in ops) + ")"
    if k == "bool":
        return f"({sub()} {draw(st.sampled_from(['and', 'or']))} {sub()})"
    if k == "not":
        return f"(not {sub()})"
    if k == "ifexp":
        return f"({sub()} if {sub()} else {sub()})"
    if k == "call":
        return f"{draw(st.sampled_from(['min', 'max']))}({sub()}, {sub()})"
    return f"dev({sub()}, {sub()})"


def block(draw, depth: int, indent: int, names: list[str], in_loop: bool, counter) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        lines += stmt(draw, depth, indent, names, in_loop, counter)
    return lines


def stmt(draw, depth: int, indent: int, names: list[str], in_loop: bool, counter) -> list[str]:
    pad = "    " * indent
    kinds = ["assign", "aug", "write", "return"]
    if depth > 0:
        kinds += ["if", "for", "while"]
    if in_loop:
        kinds += ["break", "continue"]
    k = draw(st.sampled_from(kinds))

    def e(d: int = 2) -> str:
        return expr(draw, d, names)

    v = draw(st.sampled_from(VARS))
    if k == "assign":
        return [f"{pad}{v} = {e()} % 1009"]
    if k == "aug":
        return [f"{pad}{v} {draw(st.sampled_from(['+=', '-=', '*=']))} {e(1)}", f"{pad}{v} %= 1009"]
    if k == "write":
        return [f"{pad}out[i, {draw(st.integers(3, 5))}] = {e()}"]
    if k in ("break", "continue", "return"):
        return [f"{pad}if {e(1)}:", f"{pad}    {k}"]
    if k == "if":
        lines = [f"{pad}if {e()}:"] + block(draw, depth - 1, indent + 1, names, in_loop, counter)
        if draw(st.booleans()):
            lines += [f"{pad}else:"] + block(draw, depth - 1, indent + 1, names, in_loop, counter)
        return lines
    c = next(counter)
    if k == "for":
        nargs = draw(st.sampled_from([1, 2, 3]))
        if nargs == 1:
            r = f"range({e(1)} % 5)"
        elif nargs == 2:
            r = f"range({e(1)} % 4, {e(1)} % 6)"
        else:
            r = f"range({e(1)} % 6, {e(1)} % 4 - 2, -{draw(st.integers(1, 3))})"
        return [f"{pad}for k{c} in {r}:"] + block(draw, depth - 1, indent + 1, [*names, f"k{c}"], True, counter)
    w = f"w{c}"   # a while loop with a guard, so every program ends
    return ([f"{pad}{w} = 0", f"{pad}while {w} < {draw(st.integers(1, 5))} and {e(1)}:", f"{pad}    {w} += 1"]
            + block(draw, depth - 1, indent + 1, [*names, w], True, counter))


@st.composite
def kernels(draw) -> str:
    return HEAD + "\n".join(block(draw, 3, 1, [], False, itertools.count())) + TAIL


class FakeCuda:
    """What the reference run's kernel sees as ``cuda``: only ``grid(1)`` is used."""

    def __init__(self) -> None:
        self.i = 0

    def grid(self, n: int) -> int:
        return self.i


_names = itertools.count()


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("random_kernels")


#: launch shapes: (blocks, threads per block)
GEOMETRIES = [(1, 48), (3, 16), (2, 24), (48, 1), (1, 40)]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=kernels(), geometry=st.sampled_from(GEOMETRIES))
def test_random_kernels_match_python_run_thread_by_thread(folder, source, geometry):
    note(source)
    name = f"random_kernel_{next(_names)}"
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    grid, block_size = geometry
    n = grid * block_size
    a = (np.arange(N_IN) * 37 % 23 - 5).astype(np.int64)
    out = np.full((n, 6), -1, np.int64)
    report = gpusim.launch(mod.kern, grid, block_size, (a, out), instrument=False)
    assert not report.faults, "\n".join(str(f) for f in report.faults)
    want = np.full((n, 6), -1, np.int64)
    mod.cuda = FakeCuda()          # after gpusim compiled it: the reference calls the plain functions
    mod.dev = mod.dev.py_func
    values = a.tolist()            # Python ints: NumPy's bool + bool is a bool, numba's is an int
    for t in range(n):
        mod.cuda.i = t
        mod.kern(values, want)
    np.testing.assert_array_equal(out, want)
