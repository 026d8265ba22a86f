"""Front end: a kernel function -> ``KernelIR``.

Reads the source with ``inspect`` + ``ast``, resolves every global name once (module constants, closure cells,
the ``numba.cuda`` namespace however it was imported, device functions, ``math``, numba and NumPy types,
NumPy arrays used as constants), rejects what is outside the subset with file:line, and decides which values
are *uniform* (the same in every lane of a chunk, kept as plain scalars) and which are *varying* (one value
per lane, kept as NumPy vectors). The IR is the checked ``ast.FunctionDef`` plus these tables; ``lanes.py``
turns it into Python over lane vectors.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .faults import KernelCompileError, KernelSyntaxError, UnsupportedConstruct

# ---------------------------------------------------------------------------------------------- names

#: cuda.<name> values that differ per lane
VARYING_CUDA = {
    "threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z", "laneid",
}
#: cuda.<name> values that are the same in every lane
UNIFORM_CUDA = {
    "blockDim.x", "blockDim.y", "blockDim.z", "gridDim.x", "gridDim.y", "gridDim.z", "warpsize",
}
#: callables under cuda.<name>; the value says whether the result varies per lane
CUDA_CALLS = {
    "grid": True, "gridsize": False,
    "syncthreads": True, "syncthreads_count": True, "syncthreads_and": True, "syncthreads_or": True,
    "syncwarp": True, "threadfence": True, "threadfence_block": True, "threadfence_system": True,
    "shfl_sync": True, "shfl_up_sync": True, "shfl_down_sync": True, "shfl_xor_sync": True,
    "ballot_sync": True, "any_sync": True, "all_sync": True, "eq_sync": True, "activemask": True,
    "lanemask_lt": True, "popc": None, "brev": None, "clz": None, "ffs": None, "fma": None,
    "shared.array": True, "local.array": True, "const.array_like": False,
    "atomic.add": True, "atomic.sub": True, "atomic.max": True, "atomic.min": True, "atomic.exch": True,
    "atomic.cas": True, "atomic.compare_and_swap": True, "atomic.inc": True, "atomic.dec": True,
    "atomic.and_": True, "atomic.or_": True, "atomic.xor": True, "atomic.nanmax": True, "atomic.nanmin": True,
}
# None above: varying exactly when an argument varies

BUILTINS = {"range", "abs", "min", "max", "round", "int", "float", "bool", "len", "divmod"}

MATH_FUNCS = {
    "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "pow", "fabs", "floor", "ceil",
    "trunc", "erf", "erfc", "gamma", "lgamma", "hypot", "copysign", "fmod", "isnan", "isinf", "isfinite",
    "radians", "degrees", "ldexp", "frexp", "modf", "remainder",
}
MATH_CONSTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan, "tau": math.tau}


@dataclass(frozen=True)
class CudaRef:
    """A name in the numba.cuda namespace, e.g. ``CudaRef("threadIdx.x")``."""

    path: str


@dataclass(frozen=True)
class ModuleRef:
    kind: str  # "cuda" | "math" | "numpy" | "numba"


@dataclass(frozen=True)
class DTypeRef:
    """A scalar type usable as a cast or a dtype: numba.float32, np.int32, ..."""

    dtype: np.dtype


@dataclass(frozen=True)
class DeviceFnRef:
    func: Any  # the Python function


@dataclass(frozen=True)
class ConstArrayRef:
    array: np.ndarray
    name: str


def _dtype_of(obj: Any) -> np.dtype | None:
    """numba scalar types and NumPy scalar types -> np.dtype; else None."""
    if isinstance(obj, type) and issubclass(obj, np.generic):
        return np.dtype(obj)
    if isinstance(obj, np.dtype):
        return obj
    mod = type(obj).__module__ or ""
    if mod.startswith("numba.core.types") or mod.startswith("numba.types"):
        name = getattr(obj, "name", str(obj))
        alias = {"float16": "float16", "float32": "float32", "float64": "float64", "boolean": "bool",
                 "bool_": "bool", "intp": "int64", "uintp": "uint64", "bool": "bool"}
        name = alias.get(name, name)
        try:
            return np.dtype(name)
        except TypeError:
            return None
    if obj is float:
        return np.dtype(np.float64)
    if obj is int:
        return np.dtype(np.int64)
    if obj is bool:
        return np.dtype(np.bool_)
    return None


def classify_global(name: str, obj: Any) -> Any:
    """Turn a global (or closure) value into what a kernel may use it as, or raise ``LookupError``."""
    if isinstance(obj, types.ModuleType):
        mname = obj.__name__
        if mname == "numba.cuda" or mname.startswith("numba.cuda."):
            return ModuleRef("cuda")
        if mname == "math":
            return ModuleRef("math")
        if mname == "numpy":
            return ModuleRef("numpy")
        if mname == "numba" or mname.startswith("numba.core.types") or mname == "numba.types":
            return ModuleRef("numba")
        raise LookupError(f"module {mname!r}")
    if hasattr(obj, "py_func") and callable(getattr(obj, "py_func", None)):
        return DeviceFnRef(obj.py_func)
    mod = getattr(obj, "__module__", None) or ""
    if mod.startswith("numba.cuda") and not isinstance(obj, (int, float)):
        qual = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or name
        return CudaRef(str(qual))
    dt = _dtype_of(obj)
    if dt is not None and obj not in (float, int, bool):
        return DTypeRef(dt)
    if isinstance(obj, (bool, int, float, np.integer, np.floating, np.bool_)):
        return obj
    if isinstance(obj, tuple) and all(isinstance(v, (bool, int, float, np.integer, np.floating)) for v in obj):
        return obj
    if isinstance(obj, np.ndarray):
        return ConstArrayRef(obj, name)
    if isinstance(obj, types.FunctionType):
        return DeviceFnRef(obj)
    raise LookupError(type(obj).__name__)


# ---------------------------------------------------------------------------------------------- source


@dataclass
class Source:
    tree: ast.FunctionDef
    filename: str
    first_line: int  # line number in the file of the tree's line 1
    lines: list[str]  # the whole file's lines (for messages)

    def line(self, lineno: int) -> str:
        if 1 <= lineno <= len(self.lines):
            return self.lines[lineno - 1].rstrip("\n")
        return ""


def read_source(func: Any) -> Source:
    filename = inspect.getsourcefile(func) or func.__code__.co_filename
    try:
        src_lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as e:
        raise KernelCompileError(
            f"cannot read the source of kernel {func.__name__!r}: {e}", filename=filename or "<unknown>"
        ) from None
    try:
        import linecache

        all_lines = linecache.getlines(filename) or src_lines
    except Exception:  # pragma: no cover - linecache is best effort
        all_lines = src_lines
    text = textwrap.dedent("".join(src_lines))
    try:
        mod = ast.parse(text)
    except SyntaxError as e:
        lineno = (e.lineno or 1) + first - 1
        raise KernelSyntaxError(f"syntax error: {e.msg}", filename=filename, lineno=lineno,
                                source_line=all_lines[lineno - 1] if lineno <= len(all_lines) else "") from None
    fn = next((n for n in mod.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None or isinstance(fn, ast.AsyncFunctionDef):
        raise UnsupportedConstruct(f"{func.__name__!r} is not a plain function", filename=filename, lineno=first)
    ast.increment_lineno(mod, first - 1)
    fn.decorator_list = []  # @cuda.jit(...), @gpusim.jit: how the function is launched, not kernel code
    return Source(fn, filename, first, list(all_lines))


# ---------------------------------------------------------------------------------------------- the IR


@dataclass
class FunctionIR:
    """One kernel or device function, checked and annotated."""

    name: str
    func: Any
    tree: ast.FunctionDef
    source: Source
    params: list[str]
    is_kernel: bool
    globals: dict[str, Any]                 # resolved global names used by the function
    param_varying: tuple[bool | str, ...]   # for device functions: which parameters vary per lane (an
                                            # array parameter holds its kind instead, e.g. "shared")
    varying: set[str] = field(default_factory=set)      # local variables that vary per lane
    arrays: dict[str, str] = field(default_factory=dict)  # local name -> "global"|"shared"|"local"|"const"|"param"
    divergent: set[int] = field(default_factory=set)    # id() of If/For/While nodes that diverge
    masked_exits: set[int] = field(default_factory=set)  # id() of Return/Break/Continue taken per lane
    returns_varying: bool = False
    has_masked_return: bool = False
    callees: dict[int, FunctionIR] = field(default_factory=dict)  # id(Call node) -> device function IR
    locals: set[str] = field(default_factory=set)

    def error(self, node: ast.AST, message: str, cls: type = UnsupportedConstruct) -> KernelCompileError:
        lineno = getattr(node, "lineno", 0)
        return cls(message, filename=self.source.filename, lineno=lineno, source_line=self.source.line(lineno))

    def dump(self) -> str:
        """A readable form of the IR: the source with divergence marks."""
        out = [f"{'kernel' if self.is_kernel else 'device function'} {self.name}"
               f"  varying={sorted(self.varying)} arrays={self.arrays}"]
        for node in ast.walk(self.tree):
            if id(node) in self.divergent:
                out.append(f"  line {node.lineno}: divergent {type(node).__name__}")
            if id(node) in self.masked_exits:
                out.append(f"  line {node.lineno}: per-lane {type(node).__name__.lower()}")
        return "\n".join(out)


def _func_globals(func: Any) -> dict[str, Any]:
    env = dict(func.__globals__)
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                env[name] = cell.cell_contents
            except ValueError:
                pass
    return env


def _assigned_names(tree: ast.FunctionDef) -> set[str]:
    names: set[str] = {a.arg for a in tree.args.args}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


ALLOWED_STMTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.For, ast.While, ast.Break, ast.Continue,
                 ast.Return, ast.Expr, ast.Pass)
ALLOWED_EXPRS = (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Call, ast.Name, ast.Constant,
                 ast.Attribute, ast.Subscript, ast.Tuple, ast.Slice)
CONSTRUCT_NAMES = {
    ast.List: "a list", ast.Dict: "a dict", ast.Set: "a set", ast.ListComp: "a list comprehension",
    ast.DictComp: "a dict comprehension", ast.SetComp: "a set comprehension", ast.GeneratorExp: "a generator",
    ast.Lambda: "a lambda", ast.JoinedStr: "an f-string", ast.Try: "try/except", ast.With: "a with block",
    ast.Raise: "raise", ast.ClassDef: "a class", ast.FunctionDef: "a nested function", ast.Global: "global",
    ast.Nonlocal: "nonlocal", ast.Delete: "del", ast.Import: "import", ast.ImportFrom: "import",
    ast.Assert: "assert", ast.Yield: "yield", ast.Await: "await", ast.Starred: "*-unpacking",
    ast.NamedExpr: "the := operator",
}


class FrontEnd:
    """Builds and caches ``FunctionIR`` for kernels and their device functions."""

    def __init__(self) -> None:
        self._cache: dict[tuple[Any, tuple[bool, ...], bool], FunctionIR] = {}
        self._stack: list[Any] = []

    def build(self, func: Any, *, is_kernel: bool, param_varying: tuple[bool, ...] = ()) -> FunctionIR:
        func = getattr(func, "py_func", func)
        key = (func, param_varying, is_kernel)
        if key in self._cache:
            return self._cache[key]
        if func in self._stack:
            src = read_source(func)
            raise UnsupportedConstruct(
                f"device function {func.__name__!r} calls itself: recursion is not supported on the GPU",
                filename=src.filename, lineno=src.tree.lineno, source_line=src.line(src.tree.lineno))
        self._stack.append(func)
        try:
            ir = self._build(func, is_kernel, param_varying)
        finally:
            self._stack.pop()
        self._cache[key] = ir
        return ir

    def _build(self, func: Any, is_kernel: bool, param_varying: tuple[bool, ...]) -> FunctionIR:
        src = read_source(func)
        tree = src.tree
        strip_docstring(tree)
        unroll_constant_loops(tree, _func_globals(func))
        params = [a.arg for a in tree.args.args]
        ir = FunctionIR(func.__name__, func, tree, src, params, is_kernel, {}, param_varying)
        a = tree.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
            raise ir.error(tree, "kernel parameters must be plain names (no *args, **kwargs or defaults)")
        ir.locals = _assigned_names(tree)
        self._check_subset(ir)
        self._resolve_globals(ir)
        Analysis(self, ir).run()
        return ir

    # -- subset ------------------------------------------------------------------------------------
    def _check_subset(self, ir: FunctionIR) -> None:
        # the one place numba-cuda takes a string: the dtype of cuda.shared/local.array(shape, "float32")
        dtype_strings = {id(d) for n in ast.walk(ir.tree)
                         if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "array"
                         for d in n.args[1:2] + [k.value for k in n.keywords if k.arg == "dtype"]}
        for node in ast.walk(ir.tree):
            if node is ir.tree:
                continue
            if type(node) in CONSTRUCT_NAMES:
                raise ir.error(node, f"{CONSTRUCT_NAMES[type(node)]} cannot be used in a kernel")
            if isinstance(node, ast.stmt) and not isinstance(node, ALLOWED_STMTS):
                raise ir.error(node, f"the statement {type(node).__name__} is not supported in a kernel")
            if isinstance(node, ast.For):
                if not (isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name)
                        and node.iter.func.id == "range" and not node.iter.keywords
                        and 1 <= len(node.iter.args) <= 3):
                    raise ir.error(node, "only `for ... in range(...)` loops are supported in a kernel")
                if node.orelse:
                    raise ir.error(node, "for/else is not supported in a kernel")
                if not isinstance(node.target, ast.Name):
                    raise ir.error(node, "a range loop variable must be a plain name")
            if isinstance(node, ast.While) and node.orelse:
                raise ir.error(node, "while/else is not supported in a kernel")
            if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) \
                    and id(node) not in dtype_strings:
                raise ir.error(node, "strings cannot be used in a kernel")
            if isinstance(node, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn, ast.Is, ast.IsNot))
                                                     for o in node.ops):
                raise ir.error(node, "`in` and `is` comparisons are not supported in a kernel")
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                raise ir.error(node, "the @ operator is not supported in a kernel")

    def _resolve_globals(self, ir: FunctionIR) -> None:
        env = _func_globals(ir.func)
        for node in ast.walk(ir.tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in ir.locals:
                name = node.id
                if name in ir.globals:
                    continue
                if name in env:
                    try:
                        ir.globals[name] = classify_global(name, env[name])
                    except LookupError as e:
                        raise ir.error(node, f"the name {name!r} refers to a {e.args[0]}, "
                                             "which a kernel cannot use") from None
                elif name in BUILTINS:
                    ir.globals[name] = getattr(builtins, name)
                elif name in ("True", "False", "None"):
                    continue
                elif hasattr(builtins, name):
                    extra = " (write values to an output array instead)" if name == "print" else ""
                    raise ir.error(node, f"the builtin {name}() is not supported in a kernel{extra}")
                else:
                    raise ir.error(node, f"the name {name!r} is not defined", KernelCompileError)


def unroll_constant_loops(tree: ast.FunctionDef, env: dict[str, Any]) -> None:
    """``for d in (16, 8, 4)`` (a literal tuple or a module-level tuple of numbers) becomes a range loop over
    the positions, ``d`` taking ``(16, 8, 4)[k]``: numba-cuda iterates such tuples, and this keeps one loop
    form for the back ends."""
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.For) or not isinstance(node.target, ast.Name):
            continue
        it = node.iter
        values = None
        if isinstance(it, ast.Tuple) and it.elts and all(isinstance(e, ast.Constant) for e in it.elts):
            values = it
        elif isinstance(it, ast.Name) and isinstance(env.get(it.id), tuple) and env[it.id] and all(
                isinstance(v, (int, float)) for v in env[it.id]):
            values = ast.Tuple([ast.Constant(v) for v in env[it.id]], ast.Load())
        if values is None:
            continue
        count += 1
        pos = f"_gpusim_k{count}"
        loc = {"lineno": node.lineno, "col_offset": node.col_offset}
        node.iter = ast.Call(ast.Name("range", ast.Load(), **loc), [ast.Constant(len(values.elts), **loc)], [],
                             **loc)
        pick = ast.Assign([ast.Name(node.target.id, ast.Store(), **loc)],
                          ast.Subscript(values, ast.Name(pos, ast.Load(), **loc), ast.Load(), **loc), **loc)
        node.target = ast.Name(pos, ast.Store(), **loc)
        node.body.insert(0, pick)
        ast.fix_missing_locations(node)


def strip_docstring(tree: ast.FunctionDef) -> None:
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        tree.body = body[1:] or [ast.Pass(lineno=body[0].lineno, col_offset=0)]


# ---------------------------------------------------------------------------------------------- analysis


def qualified(ir: FunctionIR, node: ast.AST) -> Any:
    """Resolve ``cuda.threadIdx.x``-like chains and global names to what they refer to (or None if local)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id in ir.locals:
        return None
    base = ir.globals.get(node.id)
    if base is None:
        return None
    parts.reverse()
    if not parts:
        return base
    if isinstance(base, ModuleRef):
        if base.kind == "cuda":
            return CudaRef(".".join(parts))
        if base.kind == "math":
            return ("math", ".".join(parts))
        if base.kind == "numba" and parts[0] == "cuda" and len(parts) > 1:  # numba.cuda.grid(1)
            return CudaRef(".".join(parts[1:]))
        if base.kind in ("numpy", "numba"):
            attr = ".".join(parts)
            mod = np if base.kind == "numpy" else __import__("numba")
            obj: Any = mod
            try:
                for p in parts:
                    obj = getattr(obj, p)
            except AttributeError:
                return (base.kind, attr)
            dt = _dtype_of(obj)
            if dt is not None:
                return DTypeRef(dt)
            return (base.kind, attr)
    if isinstance(base, CudaRef):
        return CudaRef(base.path + "." + ".".join(parts))
    return ("attr", base, parts)


class Analysis:
    """Decides which locals vary per lane and which control flow diverges (to a fixed point)."""

    def __init__(self, fe: FrontEnd, ir: FunctionIR) -> None:
        self.fe = fe
        self.ir = ir
        self.changed = False
        self.scalar_params: set[str] = set()  # kernel parameters (or aliases) that are given scalar values

    def demote_param(self, name: str) -> bool:
        """A kernel parameter assigned a non-array value holds a scalar (``n = n * 2``): not an array."""
        if self.ir.arrays.get(name) != "param":
            return False
        del self.ir.arrays[name]
        self.scalar_params.add(name)
        self.changed = True
        return True

    def run(self) -> None:
        ir = self.ir
        if ir.is_kernel and not ir.param_varying:  # compiled without arguments: assume every one is an array
            for p in ir.params:
                ir.arrays[p] = "param"
        elif ir.is_kernel:  # specialised on the launch's arguments: "param" for arrays, False for scalars
            for p, v in zip(ir.params, ir.param_varying):
                if isinstance(v, str):
                    ir.arrays[p] = v
                else:
                    self.scalar_params.add(p)
        else:
            for p, v in zip(ir.params, ir.param_varying):
                if isinstance(v, str):  # an array argument: its kind ("param", "shared", ...)
                    ir.arrays[p] = v
                elif v:
                    ir.varying.add(p)
        for _ in range(50):
            self.changed = False
            self.block(ir.tree.body, partial=False, in_div=False, loop=None)
            if not self.changed:
                break

    def mark(self, name: str) -> None:
        if name not in self.ir.varying:
            self.ir.varying.add(name)
            self.changed = True

    def set_div(self, node: ast.AST) -> None:
        if id(node) not in self.ir.divergent:
            self.ir.divergent.add(id(node))
            self.changed = True

    def set_masked(self, node: ast.AST) -> None:
        if id(node) not in self.ir.masked_exits:
            self.ir.masked_exits.add(id(node))
            self.changed = True

    # statements ------------------------------------------------------------------------------------
    def block(self, body: list[ast.stmt], partial: bool, in_div: bool, loop: ast.AST | None) -> None:
        for s in body:
            self.stmt(s, partial, in_div, loop)

    def targets(self, target: ast.AST, varying: bool, partial: bool, value: ast.AST | None) -> None:
        if isinstance(target, ast.Name):
            kind = self.array_kind(value) if value is not None else None
            if kind == "param" and target.id in self.scalar_params:
                kind = None
            if kind is None:
                self.demote_param(target.id)
            if kind is not None:
                prev = self.ir.arrays.get(target.id)
                if prev is not None and prev != kind:
                    raise self.ir.error(target, f"{target.id!r} holds arrays of different kinds")
                if partial and not isinstance(value, ast.Call):
                    raise self.ir.error(target, f"the array variable {target.id!r} is assigned inside "
                                                "divergent code: an array cannot differ between threads")
                self.ir.arrays[target.id] = kind
                return
            if varying or partial:
                self.mark(target.id)
        elif isinstance(target, ast.Tuple):
            vals = value.elts if isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts) else None
            for i, t in enumerate(target.elts):
                v = vals[i] if vals else None
                self.targets(t, self.varies(v) if v is not None else varying, partial, v)
        elif isinstance(target, ast.Subscript):
            self.expr_check(target)
        else:
            raise self.ir.error(target, "this assignment target is not supported in a kernel")

    def stmt(self, s: ast.stmt, partial: bool, in_div: bool, loop: ast.AST | None) -> None:
        ir = self.ir
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise ir.error(s, "chained assignment (a = b = c) is not supported in a kernel")
            self.expr_check(s.value)
            self.targets(s.targets[0], self.varies(s.value), partial, s.value)
        elif isinstance(s, ast.AnnAssign):
            if s.value is None:
                return
            self.expr_check(s.value)
            self.targets(s.target, self.varies(s.value), partial, s.value)
        elif isinstance(s, ast.AugAssign):
            self.expr_check(s.value)
            if isinstance(s.target, ast.Name):
                if s.target.id in ir.arrays and not self.demote_param(s.target.id):
                    raise ir.error(s, "augmented assignment to an array variable")
                if self.varies(s.value) or partial or s.target.id in ir.varying:
                    self.mark(s.target.id)
            elif isinstance(s.target, ast.Subscript):
                self.expr_check(s.target)
            else:
                raise ir.error(s, "this assignment target is not supported in a kernel")
        elif isinstance(s, ast.If):
            self.expr_check(s.test)
            div = self.varies(s.test)
            if div:
                self.set_div(s)
            self.block(s.body, partial or div, in_div or div, loop)
            self.block(s.orelse, partial or div, in_div or div, loop)
        elif isinstance(s, ast.For):
            for a in s.iter.args:
                self.expr_check(a)
            div = any(self.varies(a) for a in s.iter.args) or self.has_masked_jump(s)
            if div:
                self.set_div(s)
            if div or partial:
                self.mark(s.target.id)
            self.block(s.body, partial or div, in_div or div, s)
        elif isinstance(s, ast.While):
            self.expr_check(s.test)
            div = self.varies(s.test) or self.has_masked_jump(s)
            if div:
                self.set_div(s)
            self.block(s.body, partial or div, in_div or div, s)
        elif isinstance(s, (ast.Break, ast.Continue)):
            if loop is None:
                raise ir.error(s, f"{type(s).__name__.lower()} outside a loop")
            # taken per lane when a divergent `if` lies between it and its loop, or the loop itself diverges
            # (then lanes that already left or skipped this iteration must not be cut off with it)
            if self.div_between(loop, s) or id(loop) in ir.divergent:
                self.set_masked(s)
        elif isinstance(s, ast.Return):
            if s.value is not None:
                if ir.is_kernel:
                    raise ir.error(s, "a kernel cannot return a value (write results to an array)")
                self.expr_check(s.value)
                if self.varies(s.value) or partial:
                    if not ir.returns_varying:
                        ir.returns_varying = True
                        self.changed = True
            if in_div:
                self.set_masked(s)
                if not ir.has_masked_return:
                    ir.has_masked_return = True
                    self.changed = True
                if s.value is not None and not ir.returns_varying:
                    ir.returns_varying = True
                    self.changed = True
        elif isinstance(s, ast.Expr):
            self.expr_check(s.value)
        elif isinstance(s, ast.Pass):
            pass

    def div_between(self, loop: ast.AST, target: ast.AST) -> bool:
        """Is there a divergent If between ``loop`` and ``target`` (not crossing an inner loop)?"""

        def search(body: list[ast.stmt], div: bool) -> bool | None:
            for st in body:
                if st is target:
                    return div
                if isinstance(st, ast.If):
                    d = div or id(st) in self.ir.divergent
                    r = search(st.body, d)
                    if r is None:
                        r = search(st.orelse, d)
                    if r is not None:
                        return r
            return None

        return bool(search(loop.body, False))

    def has_masked_jump(self, loop: ast.AST) -> bool:
        def walk(body: list[ast.stmt]) -> bool:
            for st in body:
                if isinstance(st, (ast.Break, ast.Continue)) and id(st) in self.ir.masked_exits:
                    return True
                if isinstance(st, ast.If) and (walk(st.body) or walk(st.orelse)):
                    return True
            return False

        return walk(loop.body)

    # expressions -----------------------------------------------------------------------------------
    def array_kind(self, node: ast.AST | None) -> str | None:
        if node is None:
            return None
        if isinstance(node, ast.Name) and node.id in self.ir.arrays:
            return self.ir.arrays[node.id]
        if isinstance(node, ast.Name) and isinstance(self.ir.globals.get(node.id), ConstArrayRef):
            return "const"
        if isinstance(node, ast.Call):
            q = qualified(self.ir, node.func)
            if isinstance(q, CudaRef):
                if q.path == "shared.array":
                    return "shared"
                if q.path == "local.array":
                    return "local"
                if q.path == "const.array_like":
                    return "const"
        return None

    def expr_check(self, node: ast.AST) -> None:
        for sub in ast.walk(node):
            if not isinstance(sub, (ast.expr, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop,
                                    ast.boolop, ast.keyword)):
                continue
            if type(sub) in CONSTRUCT_NAMES:
                raise self.ir.error(sub, f"{CONSTRUCT_NAMES[type(sub)]} cannot be used in a kernel")
            if isinstance(sub, ast.Call):
                self.check_call(sub)

    def check_call(self, node: ast.Call) -> None:
        ir = self.ir
        q = qualified(ir, node.func)
        if isinstance(q, DeviceFnRef):
            pv = tuple(self.array_kind(a) or self.varies(a) for a in node.args)
            if node.keywords:
                raise ir.error(node, "keyword arguments to device functions are not supported")
            callee = self.fe.build(q.func, is_kernel=False, param_varying=pv)
            if len(node.args) != len(callee.params):
                raise ir.error(node, f"{callee.name}() takes {len(callee.params)} arguments, "
                                     f"{len(node.args)} given", KernelCompileError)
            if ir.callees.get(id(node)) is not callee:
                ir.callees[id(node)] = callee
                self.changed = True
            return
        if isinstance(q, CudaRef):
            if q.path not in CUDA_CALLS:
                raise ir.error(node, f"cuda.{q.path} is not supported by gpusim")
            return
        if isinstance(q, tuple) and q[0] == "math":
            if q[1] not in MATH_FUNCS:
                raise ir.error(node, f"math.{q[1]} is not supported in a kernel")
            return
        if isinstance(q, DTypeRef) or (isinstance(q, type) and q in (int, float, bool)):
            return
        if callable(q) and getattr(q, "__name__", None) in BUILTINS:
            return
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            raise ir.error(node, f"{ast.unparse(node.func)}() is not supported in a kernel")
        raise ir.error(node, f"{ast.unparse(node.func)}() is not a device function or supported intrinsic")

    def varies(self, node: ast.AST) -> bool:
        ir = self.ir
        if isinstance(node, ast.Constant):
            return False
        if isinstance(node, ast.Name):
            if node.id in ir.locals:
                return node.id in ir.varying
            return False
        if isinstance(node, ast.Attribute):
            if node.attr in ("shape", "size", "ndim", "dtype"):
                return False
            q = qualified(ir, node)
            if isinstance(q, CudaRef):
                if q.path in VARYING_CUDA:
                    return True
                if q.path in UNIFORM_CUDA:
                    return False
                raise ir.error(node, f"cuda.{q.path} is not supported by gpusim")
            if isinstance(q, tuple) and q[0] == "math":
                if q[1] in MATH_CONSTS:
                    return False
                raise ir.error(node, f"math.{q[1]} is not supported in a kernel")
            if q is None:
                raise ir.error(node, f"the attribute .{node.attr} is not supported in a kernel")
            return False
        if isinstance(node, ast.Subscript):
            base = node.value
            idx_var = self.varies(node.slice)
            if isinstance(base, ast.Tuple):
                return idx_var or self.varies(base)
            if isinstance(base, ast.Name) and base.id in ir.locals and base.id not in ir.arrays:
                return base.id in ir.varying or idx_var  # tuple variable
            kind = self.array_kind(base)
            if isinstance(base, ast.Attribute) and base.attr == "shape":
                return idx_var
            if kind in ("shared", "local") or (not ir.is_kernel and kind in (None, "param")):
                return True
            return idx_var
        if isinstance(node, ast.Tuple):
            return any(self.varies(e) for e in node.elts)
        if isinstance(node, ast.Slice):
            raise ir.error(node, "slicing arrays is not supported in a kernel")
        if isinstance(node, (ast.BinOp,)):
            return self.varies(node.left) or self.varies(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.varies(node.operand)
        if isinstance(node, ast.BoolOp):
            return any(self.varies(v) for v in node.values)
        if isinstance(node, ast.Compare):
            return self.varies(node.left) or any(self.varies(c) for c in node.comparators)
        if isinstance(node, ast.IfExp):
            return self.varies(node.test) or self.varies(node.body) or self.varies(node.orelse)
        if isinstance(node, ast.Call):
            q = qualified(ir, node.func)
            args_vary = any(self.varies(a) for a in node.args) or any(self.varies(k.value)
                                                                      for k in node.keywords)
            if isinstance(q, CudaRef):
                v = CUDA_CALLS.get(q.path)
                return args_vary if v is None else v
            if isinstance(q, DeviceFnRef):
                callee = ir.callees.get(id(node))
                return args_vary or (callee.returns_varying if callee else True)
            return args_vary
        raise ir.error(node, f"{type(node).__name__} expressions are not supported in a kernel")


def const_eval(ir: FunctionIR, node: ast.AST) -> Any:
    """Evaluate a compile-time constant expression (shapes, dtypes) or raise UnsupportedConstruct."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):  # a dtype given as a string, as numba-cuda allows
            try:
                return np.dtype(node.value)
            except TypeError:
                raise ir.error(node, f"{node.value!r} is not a NumPy dtype") from None
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(const_eval(ir, e) for e in node.elts)
    if isinstance(node, (ast.Name, ast.Attribute)):
        q = qualified(ir, node)
        if isinstance(q, DTypeRef):
            return q.dtype
        if isinstance(q, (bool, int, float, np.integer, np.floating, tuple)):
            return q
        if isinstance(q, tuple) and q and q[0] == "math" and q[1] in MATH_CONSTS:
            return MATH_CONSTS[q[1]]
        if isinstance(node, ast.Name) and node.id in ir.globals and isinstance(ir.globals[node.id], type):
            return _dtype_of(ir.globals[node.id])
    if isinstance(node, ast.BinOp):
        left, right = const_eval(ir, node.left), const_eval(ir, node.right)
        ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
               ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.Pow: lambda a, b: a ** b,
               ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
               ast.Div: lambda a, b: a / b}
        if type(node.op) in ops:
            return ops[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -const_eval(ir, node.operand)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "len"):
        return int(const_eval(ir, node.args[0]))
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return np.dtype(node.value)
    raise ir.error(node, f"{ast.unparse(node)} must be a compile-time constant "
                         "(a literal or a module-level constant)")
