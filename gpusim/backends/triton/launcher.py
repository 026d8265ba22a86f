"""Running a ``Program``: loading its module, passing a CUDA launch's arguments, compiling ahead of time.

Needs torch and triton (the optional ``[gpu]`` extra); nothing else in gpusim imports this module.

* ``load(program, interpret)`` writes the module to a file (``@triton.jit`` reads its function's source) and
  imports it; ``interpret=True`` runs it through Triton's interpreter (``TRITON_INTERPRET=1``: on the CPU over
  NumPy, program after program). Triton chooses its mode once per process, when it is first imported
  (``use_mode``), so interpreted and compiled programs run in different processes. The interpreter has no
  libdevice: there, the module's ``libdevice`` is replaced by the same functions computed with NumPy in the
  argument's type (``InterpreterLibdevice``).
* ``bind(program, values, grid, device)`` turns the CUDA arguments (torch tensors for arrays, numbers)
  into the kernel's argument list, with the constant arrays and a scratch region of the right size.
* ``run(program, grid, args, interpret=...)`` runs a launch on NumPy arrays (writing results back into them).
* ``check_binding(program, bound)`` passes a launch's arguments through Triton's own argument binder
  (no GPU needed), which is where a parameter name Triton uses itself fails.
* ``compile_aot(program, target)`` compiles the module for a GPU that need not be present
  (``triton.compile`` with a ``GPUTarget``, sm_90 by default): code the interpreter accepts and the
  compiler rejects fails here.

Programs are compiled with ``enable_fp_fusion=False``: the IR has already fused the multiply-adds numba-cuda
fuses (``tl.fma``), and Triton must fuse no others, so the results have numba-cuda's bits.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ...device import WARP_SIZE
from .program import Program

_lock = threading.Lock()
_loaded: dict[tuple[str, bool], Any] = {}


def cache_dir() -> Path:
    d = Path(os.environ.get("GPUSIM_TRITON_CACHE") or Path(tempfile.gettempdir()) / f"gpusim-triton-{os.getuid()}")
    d.mkdir(parents=True, exist_ok=True)
    return d


class ModeConflict(RuntimeError):
    """Triton was imported in the other mode: its interpreter is chosen once per process."""


def use_mode(interpret: bool) -> None:
    """Import triton for the interpreter (``TRITON_INTERPRET=1``) or the compiler. Triton decides when
    ``triton.language`` is imported, once per process: asking for the other mode later is ``ModeConflict``."""
    if "triton" not in sys.modules:
        # the programs pass enable_fp_fusion=False themselves; this only quiets triton 3.9's notice
        os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "0")
        if interpret:
            os.environ["TRITON_INTERPRET"] = "1"
        else:
            os.environ.pop("TRITON_INTERPRET", None)
    import triton

    knobs = getattr(triton, "knobs", None)          # triton >= 3.4; before it, the variable itself
    on = bool(knobs.runtime.interpret) if knobs is not None else os.environ.get("TRITON_INTERPRET") == "1"
    if on != interpret:
        raise ModeConflict(f"triton was imported {'with' if on else 'without'} its interpreter in this process; "
                           f"{'interpreted' if interpret else 'compiled'} programs need a process of their own")
    if interpret:
        _comparisons_give_bools()


def _comparisons_give_bools() -> None:
    """Triton's interpreter (3.9) gives a comparison's result its operands' type (float32 data 1.0 for a float
    comparison that holds), so broadcasting it and ``&`` with a mask then fail in NumPy; on the GPU a
    comparison is an i1. Make the interpreter's comparisons give i1 bools, as their Triton type says."""
    import triton.language as tl
    from triton.runtime import interpreter as interp

    cls = interp.InterpreterBuilder
    if getattr(cls, "_gpusim_bool_comparisons", False):
        return
    for name in [n for n in vars(cls) if n.startswith(("create_icmp", "create_fcmp"))]:
        old = getattr(cls, name)

        def compare(self, lhs, rhs, _old=old):
            h = _old(self, lhs, rhs)
            return interp.TensorHandle(np.asarray(h.data).astype(np.bool_), tl.int1)

        setattr(cls, name, compare)
    cls._gpusim_bool_comparisons = True


def load(program: Program, interpret: bool):
    """The program's ``@triton.jit`` function (interpreted or compiled), its module imported once."""
    digest = hashlib.sha1(program.source.encode()).hexdigest()[:16]
    key = (digest, interpret)
    with _lock:
        hit = _loaded.get(key)
        if hit is not None:
            return hit
        mod_name = f"gpusim_triton_{program.name}_{digest}_{'i' if interpret else 'c'}"
        path = cache_dir() / f"{mod_name}.py"
        if not path.exists() or path.read_text() != program.source:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(program.source)
            os.replace(tmp, path)
        use_mode(interpret)
        spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        spec.loader.exec_module(module)
        if interpret and hasattr(module, "libdevice"):
            module.libdevice = InterpreterLibdevice()
        fn = getattr(module, program.name)
        _loaded[key] = fn
        return fn


def torch_dtype(dt: np.dtype):
    import torch

    return torch.from_numpy(np.zeros(0, dt)).dtype


class Bound:
    """A launch's argument list, and what was made for it (the scratch region, constant arrays)."""

    def __init__(self, args: list, grid: tuple[int, int, int]):
        self.args, self.grid = args, grid


def bind(program: Program, values: dict[str, Any], grid, device: Any) -> Bound:
    """The kernel's arguments for a launch: ``values`` maps each kernel parameter to a torch tensor on
    ``device`` (arrays) or a number."""
    import torch

    grid = tuple(int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,))) + (1,) * 3
    grid = grid[:3]
    programs = grid[0] * grid[1] * grid[2]
    args: list = []
    for p in program.params:
        kind = p[0]
        if kind == "array":
            args.append(values[p[1]])
        elif kind == "shape":
            args.append(int(values[p[1]].shape[p[2]]))
        elif kind == "stride":
            args.append(int(values[p[1]].stride(p[2])))
        elif kind == "scalar":
            args.append(scalar_arg(values[p[1]], p[3]))
        elif kind == "const":
            args.append(torch.from_numpy(np.ascontiguousarray(p[2]).copy()).to(device))
        elif kind == "scratch":
            args.append(torch.zeros(max(1, programs * program.smem_bytes), dtype=torch.uint8, device=device))
        else:  # pragma: no cover
            raise ValueError(f"unknown parameter kind {kind}")
    return Bound(args, grid)


def scalar_arg(value: Any, dtype: str):
    """A scalar as the kernel takes it: float64 as the int64 of its bits, other numbers as Python numbers
    (the kernel converts them to their IR type)."""
    if dtype == "float64":
        return int(np.asarray(value, np.float64).view(np.int64))
    if dtype in ("float32", "float16"):
        return float(np.asarray(value, dtype))
    if dtype == "bool":
        return int(bool(value))
    return int(value)


def launch(program: Program, kernel, bound: Bound) -> None:
    """Enqueue one launch on torch's current stream."""
    kernel[bound.grid](*bound.args, num_warps=program.num_warps, enable_fp_fusion=False)


def run(program: Program, grid, args: dict[str, Any], *, interpret: bool = True, device: str | None = None) -> None:
    """Run one launch on NumPy arrays: ``args`` maps each kernel parameter to its value; arrays are written
    back in place. With ``interpret`` the program runs on the CPU; else on ``device`` (default "cuda")."""
    import torch

    dev = "cpu" if interpret else (device or "cuda")
    values, back = {}, []
    for name, v in args.items():
        if isinstance(v, np.ndarray):
            t = torch.from_numpy(v) if interpret else torch.from_numpy(np.ascontiguousarray(v)).to(dev)
            values[name] = t
            if not interpret:
                back.append((v, t))
        else:
            values[name] = v
    kernel = load(program, interpret)
    bound = bind(program, values, grid, dev)
    with np.errstate(all="ignore"):       # the interpreter computes masked-off lanes too (e.g. a // 0)
        launch(program, kernel, bound)
    if not interpret:
        torch.cuda.synchronize()
        for host, t in back:
            host[...] = t.cpu().numpy()


def compile_aot(program: Program, target=None, signature: dict[str, str] | None = None):
    """Compile the program for ``target`` (default sm_90) without a GPU; returns triton's compiled kernel."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = load(program, interpret=False)
    sig = dict(program.signature)
    if signature:
        sig.update(signature)
    target = target or GPUTarget("cuda", 90, WARP_SIZE)
    src = ASTSource(fn, sig, {})
    return triton.compile(src, target=target, options={"num_warps": program.num_warps, "enable_fp_fusion": False})


def check_binding(program: Program, bound: Bound) -> None:
    """Pass a launch's arguments through the function Triton binds them with before it launches
    (``create_function_from_signature``: names, launch options, the specialisation of every value) without
    a GPU: CPU tensors are enough. ``compile_aot`` never calls it, and a launch fails there first (a kernel
    parameter named ``params`` was the binder's own dict). Raises what Triton raises."""
    from triton.backends.compiler import BaseBackend
    from triton.runtime.jit import create_function_from_signature

    fn = load(program, interpret=False)
    binder = create_function_from_signature(fn.signature, fn.params, BaseBackend)
    binder(*bound.args, num_warps=program.num_warps, enable_fp_fusion=False, debug=False)


# ------------------------------------------------------------------------------------------ interpreter

class InterpreterLibdevice:
    """libdevice's functions for Triton's interpreter, computed with NumPy in the argument's type."""

    def __getattr__(self, name: str):
        fn = _NP.get(name)
        if fn is None:
            raise AttributeError(f"libdevice.{name} has no interpreter version")

        def call(*xs):
            from triton.language import core
            from triton.runtime.interpreter import TensorHandle

            datas = [x.handle.data if hasattr(x, "handle") else np.asarray(x) for x in xs]
            first = next(x for x in xs if hasattr(x, "handle"))
            with np.errstate(all="ignore"):
                out = np.asarray(fn(*datas))
            dtype = _RESULT.get(name)
            if dtype is not None:
                t = core.dtype(dtype)
                out = out.astype(dtype)
            else:
                t = first.dtype.scalar if hasattr(first.dtype, "scalar") else first.dtype
                out = out.astype(datas[0].dtype)
            block = first.type
            ty = core.block_type(t, block.shape) if getattr(block, "shape", None) and block.is_block() else t
            return core.tensor(TensorHandle(out, t), ty)

        return call


def _vec(f):
    def g(*xs):
        dt = np.result_type(*xs)
        return np.vectorize(lambda *a: f(*(float(v) for v in a)), otypes=[dt])(*xs)
    return g


def _bits(kind: str):
    from ...runtime.intrinsics import bits

    def f(x):
        return bits(kind, np.asarray(x))
    return f


_NP = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "pow": np.power, "hypot": np.hypot, "copysign": np.copysign,
    "fmod": np.fmod, "cbrt": np.cbrt, "trunc": np.trunc, "nextafter": np.nextafter, "rint": np.rint,
    "erf": _vec(math.erf), "erfc": _vec(math.erfc), "lgamma": _vec(math.lgamma), "tgamma": _vec(math.gamma),
    "remainder": _vec(math.remainder),
    "popc": _bits("popc"), "clz": _bits("clz"), "ffs": _bits("ffs"), "brev": _bits("brev"),
}
_RESULT = {"popc": "int32", "clz": "int32", "ffs": "int32"}   # libdevice's result types (brev keeps its argument's)
