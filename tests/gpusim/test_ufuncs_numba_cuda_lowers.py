"""gpusim runs a NumPy ufunc in a kernel only where numba-cuda 0.30.4 can compile it for a GPU.

The independent source is tests/gpusim/data/numba_cuda_ufuncs.json: every ufunc gpusim's front end types, for
each input dtype, in both forms (on numbers, and over an array into an output), compiled to sm_90 PTX by
numba-cuda itself (made by benchmarks/gpu/numba_cuda_ufuncs.py; no GPU needed). About 30 are typed by numba-cuda
and then fail in its lowering with KeyError for every dtype: gpusim refuses those with the ufunc, the line and
what to write instead; the replacements were compiled by numba-cuda too, and here gpusim checks that they
compute what the ufunc does. numba-cuda's own test suite uses none of them in a kernel (only in host code),
so the drop-in refuses them as well.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim import UnsupportedConstruct
from gpusim.frontend.ufuncs import NOT_LOWERED, UFUNCS

DATA = json.loads((Path(__file__).parent / "data" / "numba_cuda_ufuncs.json").read_text())
RESULTS = DATA["results"]
SINGLE_OUTPUT = sorted(n for n in UFUNCS if getattr(np, n).nout == 1)


def _never_lowered(name: str) -> bool:
    """No dtype compiles, in either form, and every failure but a float16 number's is the missing lowering."""
    got = [r for form in RESULTS[name].values() for r in form.items()]
    key = f"KeyError: <ufunc '{getattr(np, name).__name__}'>"    # np.mod is np.remainder
    return all(r.startswith(key) or (r.startswith("NotImplementedError: unsupported type "
                                                                           "for input operand: float16"))
               for _, r in got) and any(r.startswith("KeyError") for _, r in got)


def test_the_data_is_numba_cuda_0_30_4s_and_covers_every_ufunc_gpusim_types():
    assert DATA["numba_cuda"] == "0.30.4" and DATA["cc"] == "9.0"
    assert sorted(RESULTS) == SINGLE_OUTPUT


def test_gpusim_refuses_exactly_the_ufuncs_numba_cuda_never_lowers():
    assert set(NOT_LOWERED) == {n for n in SINGLE_OUTPUT if _never_lowered(n)}
    for name in set(SINGLE_OUTPUT) - set(NOT_LOWERED):   # the others compile, in both forms, for some dtype
        assert all("ok" in RESULTS[name][form].values() for form in ("numbers", "array")), name


def test_every_replacement_compiles_with_numba_cuda():
    assert {n: r["text"] for n, r in DATA["replacements"].items()} == NOT_LOWERED   # made from this table
    for name, r in DATA["replacements"].items():
        assert r["float32"] == r["float64"] == r["int64"] == "ok", (name, r)


def _input_dtype(name: str) -> str:
    """A dtype numba-cuda's record has for ``name`` on numbers: float64, else int64 (the bitwise ones)."""
    key = "float64" if any(k.split(",")[0] == "float64" for k in RESULTS[name]["numbers"]) else "int64"
    return ",".join([key] * getattr(np, name).nin)


def _module(tmp_path: Path, name: str, source: str):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


KERNEL_LINE = 8   # the line of the ufunc call in each generated kernel


@pytest.fixture(scope="module")
def one_line_kernels(tmp_path_factory):
    """``out[0] = np.<ufunc>(a[0], ...)`` for every ufunc, each a kernel in one file."""
    parts = ["import math\nimport numpy as np\nfrom numba import cuda\n"]
    for name in SINGLE_OUTPUT:
        nin = getattr(np, name).nin
        args = ", ".join(f"a{i}[0]" for i in range(nin))
        parts.append(f"\n\n@cuda.jit\ndef k_{name}(out, {', '.join(f'a{i}' for i in range(nin))}):\n"
                     f"    out[0] = np.{name}({args})\n")
    source = "".join(parts)
    return _module(tmp_path_factory.mktemp("ufuncs"), "ufunc_kernels", source), source


@pytest.mark.parametrize("name", SINGLE_OUTPUT)
def test_a_ufunc_on_numbers_runs_if_numba_cuda_compiles_it_and_is_refused_clearly_if_not(one_line_kernels, name):
    mod, source = one_line_kernels
    ins = _input_dtype(name).split(",")
    lowered = RESULTS[name]["numbers"][",".join(ins)] == "ok"
    uf = getattr(np, name)
    args = [np.full(1, 3 if d == "int64" else 0.75, d) for d in ins]
    out = np.zeros(1, uf.resolve_dtypes(tuple(np.dtype(d) for d in ins) + (None,))[-1])
    if lowered:
        gpusim.launch(getattr(mod, f"k_{name}"), 1, 1, (out, *args))
        with np.errstate(invalid="ignore"):   # arccosh(0.75) is NaN on both sides
            want = uf(*(a[0] for a in args))
        np.testing.assert_allclose(out, want, rtol=1e-15)
        return
    with pytest.raises(UnsupportedConstruct) as e:
        gpusim.launch(getattr(mod, f"k_{name}"), 1, 1, (out, *args))
    line = source.splitlines().index(f"def k_{name}(out, {', '.join(f'a{i}' for i in range(uf.nin))}):") + 2
    assert e.value.lineno == line and f"np.{name}(" in e.value.source_line
    assert f"np.{name}() cannot run on a GPU" in e.value.message and NOT_LOWERED[name] in e.value.message
    assert RESULTS[name]["numbers"][",".join(ins)].split(":")[0] in e.value.message    # numba-cuda's KeyError


def test_a_refused_ufunc_over_an_array_is_refused_too(tmp_path):
    mod = _module(tmp_path, "whole", "import numpy as np\nfrom numba import cuda\n\n\n@cuda.jit\n"
                                     "def k(a, out):\n    np.sqrt(a, out)\n")
    assert RESULTS["sqrt"]["array"]["float32"].startswith("KeyError")
    with pytest.raises(UnsupportedConstruct, match=r"np\.sqrt\(\) cannot run on a GPU.*math\.sqrt\(x\)") as e:
        gpusim.launch(mod.k, 1, 1, (np.ones(4, np.float32), np.zeros(4, np.float32)))
    assert e.value.lineno == 7


def test_a_ufunc_of_a_float16_number_is_refused_and_over_a_float16_array_runs(tmp_path):
    assert RESULTS["sin"]["numbers"]["float16"].startswith("NotImplementedError")
    assert RESULTS["sin"]["array"]["float16"] == "ok"
    mod = _module(tmp_path, "half", "import numpy as np\nfrom numba import cuda\n\n\n@cuda.jit\n"
                                    "def one(a, out):\n    out[0] = np.sin(a[0])\n\n\n@cuda.jit\n"
                                    "def whole(a, out):\n    np.sin(a, out)\n")
    a, out = np.linspace(0, 1, 4).astype(np.float16), np.zeros(4, np.float16)
    with pytest.raises(UnsupportedConstruct, match="float16 number") as e:
        gpusim.launch(mod.one, 1, 1, (a, out))
    assert e.value.lineno == 7
    gpusim.launch(mod.whole, 1, 1, (a, out))
    np.testing.assert_allclose(out.astype(np.float64), np.sin(a.astype(np.float64)), atol=1e-3)


@pytest.fixture(scope="module")
def replacement_kernels(tmp_path_factory):
    """``out[i] = <replacement>`` for every refused ufunc, with x (or a, b) elements of float64 inputs."""
    parts = ["import math\nimport numpy as np\nfrom numba import cuda\n"]
    for name, text in sorted(NOT_LOWERED.items()):
        parts.append(f"\n\n@cuda.jit\ndef r_{name}(out, xs, ys):\n    i = cuda.grid(1)\n"
                     f"    x = xs[i]\n    a = x\n    b = ys[i]\n    out[i] = {text}\n")
    return _module(tmp_path_factory.mktemp("replacements"), "replacements", "".join(parts))


def test_each_replacement_computes_what_its_ufunc_does(replacement_kernels):
    xs = np.array([0.25, 1.5, 2.5, 3.7, -0.5, -2.0, 7.0, 0.0])
    ys = np.array([1.5, 0.5, 2.0, 1.25, 3.0, -1.5, 2.0, 1.0])
    for name in sorted(NOT_LOWERED):
        uf = getattr(np, name)
        with np.errstate(all="ignore"):
            want = uf(xs) if uf.nin == 1 else uf(xs, ys)
        out = np.zeros(xs.size)
        gpusim.launch(getattr(replacement_kernels, f"r_{name}"), 1, xs.size, (out, xs, ys))
        np.testing.assert_allclose(out, want.astype(np.float64), rtol=1e-15, atol=0, err_msg=name)
