"""``gpusim.kernel_cache``: a function object made from code already compiled, with its names bound to the same
values, gets the compiled kernel without running the front end; a changed signature, source, file, global,
closure value, global array or device function's global compiles anew, and runs with the new value."""

from __future__ import annotations

import importlib.util
import sys
import types

import numpy as np
import pytest
from numba import cuda

import gpusim
from gpusim import kernel_cache
from gpusim.launch import compile_kernel

SCALE = 2.0
OFFSET = 10
TABLE = np.array([1.0, 2.0, 3.0, 4.0])


@cuda.jit(device=True)
def shifted(x):
    return x + OFFSET


def scaled(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = SCALE * i + TABLE[i % 4] + shifted(0)


def made(func, **globals_):
    """A new function object of ``func``'s code, with some globals bound otherwise."""
    return types.FunctionType(func.__code__, {**func.__globals__, **globals_}, func.__name__)


def closure(k):
    def add_k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = i + k
    return add_k


@pytest.fixture
def front_end_runs(monkeypatch):
    """How many times the front end runs (each a miss of both caches)."""
    launch_module = sys.modules["gpusim.launch"]
    calls = []
    real = launch_module.compile_module

    def counting(*a, **kw):
        calls.append(a[0])
        return real(*a, **kw)

    monkeypatch.setattr(launch_module, "compile_module", counting)
    kernel_cache.clear()
    return calls


def run(func, n=8, dtype=np.float64):
    out = np.zeros(n, dtype)
    gpusim.launch(func, 1, n, (out,)).raise_for_faults()
    return out


def expected(scale=SCALE, table=TABLE, offset=OFFSET, n=8):
    i = np.arange(n)
    return scale * i + table[i % 4] + offset


def test_same_code_and_values_is_compiled_once(front_end_runs):
    assert np.array_equal(run(made(scaled)), expected())
    assert np.array_equal(run(made(scaled)), expected())
    assert np.array_equal(run(made(scaled, TABLE=TABLE.copy())), expected())  # an equal array: the same kernel
    assert len(front_end_runs) == 1
    a, b = closure(3), closure(3)
    assert np.array_equal(run(a), np.arange(8) + 3) and np.array_equal(run(b), np.arange(8) + 3)
    assert len(front_end_runs) == 2
    assert compile_kernel(made(scaled), args=(np.zeros(8),)) is compile_kernel(made(scaled), args=(np.zeros(8),))


def test_a_new_specialisation_misses(front_end_runs):
    run(made(scaled))
    run(made(scaled), dtype=np.float32)
    run(made(scaled), n=16)  # same types: a hit
    assert len(front_end_runs) == 2


def test_a_changed_global_closure_value_or_array_misses_and_is_used(front_end_runs):
    run(made(scaled))
    assert np.array_equal(run(made(scaled, SCALE=3.0)), expected(scale=3.0))
    assert np.array_equal(run(made(scaled, SCALE=-0.0)), expected(scale=-0.0))
    table = TABLE[::-1].copy()
    assert np.array_equal(run(made(scaled, TABLE=table)), expected(table=table))
    assert np.array_equal(run(closure(4)), np.arange(8) + 4)
    assert np.array_equal(run(closure(5)), np.arange(8) + 5)
    assert len(front_end_runs) == 6


def test_a_device_function_rebound_or_with_a_changed_global_misses(front_end_runs, monkeypatch):
    run(made(scaled))

    @cuda.jit(device=True)
    def other(x):
        return x - 1

    assert np.array_equal(run(made(scaled, shifted=other)), expected(offset=-1))
    monkeypatch.setitem(shifted.py_func.__globals__, "OFFSET", 100)
    assert np.array_equal(run(made(scaled)), expected(offset=100))
    assert len(front_end_runs) == 3


def test_changed_source_or_another_file_misses(tmp_path, front_end_runs):
    text = ("from numba import cuda\n\n\ndef k(out):\n    i = cuda.grid(1)\n    if i < out.size:\n"
            "        out[i] = i * {}\n")
    kernels = []
    for name, factor in (("one", 2), ("two", 2), ("three", 5)):
        path = tmp_path / f"kc_{name}.py"
        path.write_text(text.format(factor))
        spec = importlib.util.spec_from_file_location(f"kc_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        kernels.append(mod.k)
    assert kernels[0].__code__ == kernels[1].__code__  # Python compares code objects without their file
    outs = [run(k) for k in kernels]
    assert np.array_equal(outs[0], np.arange(8) * 2) and np.array_equal(outs[2], np.arange(8) * 5)
    assert len(front_end_runs) == 3
    comps = [compile_kernel(k, args=(np.zeros(8),)) for k in kernels[:2]]
    assert comps[0].filename.endswith("kc_one.py") and comps[1].filename.endswith("kc_two.py")


def test_a_global_of_a_kind_not_known_to_be_fixed_is_not_shared():
    kernel_cache.clear()
    listed = made(scaled, SCALE=[2.0])  # a list: its contents could change under the same identity
    kernel_cache.store(listed, "key", [listed], "compiled")
    assert kernel_cache.lookup(made(scaled, SCALE=[2.0]), "key") is None
    plain = made(scaled)
    kernel_cache.store(plain, "key", [plain], "compiled")
    assert kernel_cache.lookup(made(scaled), "key") == "compiled"
    assert kernel_cache.lookup(made(scaled), "other key") is None


def test_a_module_attribute_the_code_reads_is_in_the_fingerprint():
    kernel_cache.clear()
    mod = types.ModuleType("kc_mod")
    mod.K = 1

    def reads(out):
        out[0] = kc_mod.K  # noqa: F821 (bound by made)

    first = made(reads, kc_mod=mod)
    kernel_cache.store(first, "key", [first], "compiled")
    assert kernel_cache.lookup(made(reads, kc_mod=mod), "key") == "compiled"
    mod.K = 2
    assert kernel_cache.lookup(made(reads, kc_mod=mod), "key") is None
    mod.K = 1
    mod.unrelated = [1]  # a name the code does not read: not in the fingerprint
    assert kernel_cache.lookup(made(reads, kc_mod=mod), "key") == "compiled"


def test_generated_text_is_compiled_once():
    from gpusim.backends.lanes import codegen

    kernel_cache.clear()
    one = compile_kernel(made(scaled), args=(np.zeros(8),))
    kernel_cache.clear()
    two = compile_kernel(made(scaled), args=(np.zeros(8),))
    assert one is not two and one.source == two.source
    assert one.func.__code__ is two.func.__code__  # the front end ran twice, Python's compiler once
    other = compile_kernel(made(scaled, SCALE=3.0), args=(np.zeros(8),))
    assert np.array_equal(run(made(scaled, SCALE=3.0)), expected(scale=3.0))
    assert codegen._code_of("x = 1\n", "<t>") is codegen._code_of("x = 1\n", "<t>")
    assert codegen._code_of("x = 1\n", "<t>") is not codegen._code_of("x = 2\n", "<t>")
    assert other.func is not one.func
