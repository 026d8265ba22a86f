"""Which NumPy ufuncs numba-cuda lowers in a kernel: each ufunc gpusim's front end types, for each input dtype,
compiled to sm_90 PTX with numba-cuda's own compiler (``numba.cuda.compile_ptx``; no GPU needed), in both forms
a kernel may use — on numbers (``out[0] = np.<ufunc>(a[0])``) and over an array with an output
(``np.<ufunc>(a, out)``).

    python benchmarks/gpu/numba_cuda_ufuncs.py [--out tests/gpusim/data/numba_cuda_ufuncs.json]

Needs numba-cuda with its NVVM (``pip install -e ".[ptx]"``). The JSON it writes is the test data of
tests/gpusim/test_ufuncs_numba_cuda_lowers.py: the versions, and for each ufunc, form and input dtypes "ok" or
numba-cuda's error (its class and first line); input dtypes NumPy has no loop for are left out. And for each
ufunc gpusim refuses (``gpusim.frontend.ufuncs.NOT_LOWERED``), its replacement, compiled for float32, float64
and int64 inputs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 with NumPy >= 2.5
    np.row_stack = np.vstack

import numba  # noqa: E402
import numba_cuda  # noqa: E402
from numba import cuda  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gpusim.frontend.ufuncs import NOT_LOWERED, UFUNCS  # noqa: E402

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
          "float64", "complex64", "complex128"]
MIXED = [("int32", "float32"), ("int64", "float64"), ("float32", "float64"), ("int32", "uint32")]
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def kernel(name: str, nin: int, form: str):
    args = ", ".join(f"a{i}" for i in range(nin))
    if form == "numbers":
        body = f"out[0] = np.{name}({', '.join(f'a{i}[0]' for i in range(nin))})"
    else:
        body = f"np.{name}({args}, out)"
    namespace = {"np": np}
    exec(f"def k(out, {args}):\n    {body}\n", namespace)
    return namespace["k"]


def compile_one(name: str, ins: tuple[str, ...], form: str) -> str | None:
    """'ok', numba-cuda's error, or None where NumPy has no loop for ``ins``."""
    uf = getattr(np, name)
    try:
        loop = uf.resolve_dtypes(tuple(np.dtype(d) for d in ins) + (None,))
    except (TypeError, ValueError):
        return None
    out = loop[-1]
    sig = (numba.from_dtype(out)[:],) + tuple(numba.from_dtype(np.dtype(d))[:] for d in ins)
    try:
        cuda.compile_ptx(kernel(name, uf.nin, form), sig, cc=(9, 0))
        return "ok"
    except Exception as e:  # what numba-cuda raises is the result
        first = _ANSI.sub("", str(e)).strip().splitlines()
        return f"{type(e).__name__}: {first[0][:200] if first else ''}"


def replacement(text: str, dtype: str) -> str:
    """Compile ``out[0] = <text>`` with x (or a, b) one element of an input array of ``dtype``."""
    import math

    namespace = {"np": np, "math": math, "cuda": cuda}
    exec(f"def k(out, xs, ys):\n    x = a = xs[0]\n    b = ys[0]\n    out[0] = {text}\n", namespace)
    ty = numba.from_dtype(np.dtype(dtype))[:]
    try:
        cuda.compile_ptx(namespace["k"], (numba.float64[:], ty, ty), cc=(9, 0))
        return "ok"
    except Exception as e:  # what numba-cuda raises is the result
        first = _ANSI.sub("", str(e)).strip().splitlines()
        return f"{type(e).__name__}: {first[0][:200] if first else ''}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "tests/gpusim/data/numba_cuda_ufuncs.json")
    opts = ap.parse_args()
    t0 = time.perf_counter()
    results: dict[str, dict[str, dict[str, str]]] = {}
    for name in sorted(UFUNCS):
        uf = getattr(np, name)
        if uf.nout != 1:
            continue
        combos = [(d,) * uf.nin for d in DTYPES] + (MIXED if uf.nin == 2 else [])
        for form in ("numbers", "array"):
            for ins in combos:
                got = compile_one(name, ins, form)
                if got is not None:
                    results.setdefault(name, {}).setdefault(form, {})[",".join(ins)] = got
        lowered = sum(v == "ok" for f in results.get(name, {}).values() for v in f.values())
        total = sum(len(f) for f in results.get(name, {}).values())
        print(f"{name:14} {lowered:3}/{total:3} compiled", flush=True)
    replacements = {name: {"text": text, **{d: replacement(text, d) for d in ("float32", "float64", "int64")}}
                    for name, text in sorted(NOT_LOWERED.items())}
    data = {"made_by": "benchmarks/gpu/numba_cuda_ufuncs.py", "numba_cuda": numba_cuda.__version__,
            "numba": numba.__version__, "numpy": np.__version__, "cc": "9.0", "results": results,
            "replacements": replacements}
    opts.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{opts.out} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
