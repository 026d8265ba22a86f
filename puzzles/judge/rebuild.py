"""Rebuilding a file's kernels in the judge's process, from the file's source and the sandbox's values.

The sandbox (``sandbox.py``) ran the file and described the values its module ended with. Here each kernel
the puzzle asks for, and every function it calls, is compiled again from its ``def`` in the file's source,
with its decorators, annotations and defaults left out (nothing of the file is evaluated: a ``def`` only makes
a function object), into a fresh namespace that holds only those values: numbers, tuples, numeric arrays,
dtypes, the real ``numba``/``numba.cuda``/``math``/``numpy`` modules and objects of them. gpusim reads a
kernel from its source (``inspect`` + ``linecache``), so the rebuilt functions run as the file wrote them.

The same place checks that the file would run on a GPU as numba-cuda sees it: a kernel is a ``@cuda.jit``
dispatcher, not a device function (``device=True``), not a CPU ``@numba.jit`` and not a plain function; a
function a kernel calls is ``@cuda.jit`` too; a kernel is defined in the file, not imported (from the
reference solution, least of all).
"""

from __future__ import annotations

import ast
import builtins
import copy
import importlib
import keyword
import os
import types
from dataclasses import dataclass, field
from typing import Any

from gpusim.faults import KernelCompileError

from . import wire
from .sandbox import REFERENCE_MODULES

OWN_MODULE_PREFIX = "_gpu_puzzles_solution_"   # the name the file's module has in the sandbox (loader.py)


class SolutionError(KernelCompileError):
    """A solution file cannot be used: unreadable, fails while its module-level code runs, lacks a kernel,
    or defines one that a GPU could not run.

    (A ``KernelCompileError`` so that callers handle every way a file is unusable in one ``except``.)
    """


@dataclass
class Function:
    """One rebuilt function and how the file decorated it."""

    name: str
    func: Any                      # the rebuilt plain function (gpusim launches it)
    node: ast.FunctionDef          # its def in the file, decorators included
    device: bool                   # @cuda.jit(device=True)
    signatures: list[dict] = field(default_factory=list)   # eager signatures: {"text", "args": [...]}
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class Rebuilt:
    """The kernels the puzzle asked for, the device functions they call, and the namespace they live in."""

    kernels: dict[str, Function]
    device_functions: dict[str, Function]
    namespace: dict[str, Any]
    reference_use: list[str] = field(default_factory=list)   # how the file reached the reference, if it did

    def numba_kernels(self) -> dict[str, Any]:
        """The kernels as numba-cuda compiles them (``cuda.compile_ptx``, or ``cuda.jit`` on a GPU): the same
        functions; the device functions they call are already real, lazy numba-cuda dispatchers."""
        return {name: f.func for name, f in self.kernels.items()}


def rebuild(tree: ast.Module, values: dict[str, Any], arrays: list[bytes], kernel_names: tuple[str, ...],
            filename: str, module_name: str, solutions_dir: str = "") -> Rebuilt:
    """Rebuild the kernels named ``kernel_names``; raise ``SolutionError`` with a message for the player."""
    decoded = _decode(values, arrays, filename)
    defs = _top_level_defs(tree)
    reference_use: list[str] = []
    kernels: dict[str, Function] = {}
    for name in kernel_names:
        kind, value = decoded.get(name, (None, None))
        if kind is None:
            defined = sorted(n for n, (k, _) in decoded.items() if k == "function" and not n.startswith("_"))
            found = ", ".join(defined) if defined else "no functions"
            raise SolutionError(f"your file has no kernel named `{name}` (it defines {found})", filename=filename)
        if kind != "function":
            raise SolutionError(f"`{name}` in your file is a {_type_name(kind, value)}, not a kernel function",
                                filename=filename)
        node = _def_for(name, value, defs, filename, solutions_dir, reference_use)
        _check_kernel_decorator(name, value, node, filename)
        kernels[name] = _function(name, value, node)
    device_functions = _called_functions(kernels, decoded, defs, filename, solutions_dir, reference_use)
    for function in list(kernels.values()) + list(device_functions.values()):
        _check_bare_stubs(function.node, decoded, filename)
    namespace = _namespace(decoded, module_name, filename)
    made = _exec_defs([f.node for f in list(device_functions.values()) + list(kernels.values())], namespace,
                      module_name, filename)
    for table in (device_functions, kernels):
        for name, function in table.items():
            function.func = made[function.node.name]
            namespace[name] = function.func
    for name, function in device_functions.items():
        namespace[name] = _device_dispatcher(function.func)
    return Rebuilt(kernels, device_functions, namespace, reference_use)


def _device_dispatcher(func: Any) -> Any:
    """``numba.cuda.jit(device=True)(func)`` where numba-cuda is installed (lazy: nothing is compiled here), so
    the rebuilt kernels compile with numba-cuda as they are; gpusim reads a dispatcher's ``py_func``. Without
    numba-cuda, the plain function."""
    try:
        from numba import cuda

        return cuda.jit(device=True)(func)
    except Exception:
        return func


#: numba.cuda objects numba-cuda types only as attributes of ``cuda`` (``cuda.threadIdx.x``): imported by
#: themselves (``from numba.cuda import threadIdx``) they are "Untyped global name" errors on a GPU, while the
#: functions (``grid``, ``syncthreads``, ``shfl_down_sync``, ...) may be imported by name
BARE_STUBS = ("threadIdx", "blockIdx", "blockDim", "gridDim", "laneid", "warpsize", "shared", "local", "const",
              "atomic")


def _check_bare_stubs(node: ast.FunctionDef, decoded: dict[str, tuple[str, Any]], filename: str) -> None:
    """A kernel or device function naming one of ``BARE_STUBS`` imported by itself does not compile."""
    own = {a.arg for a in node.args.args} | {n.id for n in ast.walk(node)
                                             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    uses = [n for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            and n.id not in own]
    for use in sorted(uses, key=lambda n: (n.lineno, n.col_offset)):
        kind, value = decoded.get(use.id, (None, None))
        if kind == "ref" and value.get("module") == "numba.cuda" and value.get("attr") in BARE_STUBS:
            attr = value["attr"]
            raise SolutionError(f"`{use.id}` is numba.cuda's `{attr}` imported by itself, which numba-cuda cannot "
                                f"compile (\"Untyped global name '{use.id}'\"): write `cuda.{attr}` after "
                                f"`from numba import cuda`", filename=filename, lineno=use.lineno)


# ------------------------------------------------------------------------------------------- the values


def _decode(values: dict[str, Any], arrays: list[bytes], filename: str) -> dict[str, tuple[str, Any]]:
    out = {}
    try:
        for name, doc in values.items():
            if isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name) \
                    and not name.startswith("__"):
                out[name] = wire.decode_value(doc, arrays)
    except wire.WireError as e:
        raise SolutionError(f"the values your file defines could not be read back ({e})",
                            filename=filename) from None
    return out


def _type_name(kind: str, value: Any) -> str:
    if kind in ("number", "tuple", "array"):
        return type(value).__name__
    if kind == "dtype":
        return "dtype"
    if kind == "module":
        return f"module ({value.get('name', '?')})"
    if kind == "other":
        return str(value.get("type", "value")) if isinstance(value, dict) else str(value)
    return kind


def _namespace(decoded: dict[str, tuple[str, Any]], module_name: str, filename: str) -> dict[str, Any]:
    """Only data and the modules kernels name: nothing the file made can run here."""
    namespace: dict[str, Any] = {"__name__": module_name, "__file__": filename, "__builtins__": builtins}
    for name, (kind, value) in decoded.items():
        if kind == "other" or kind == "module" and value.get("name") not in REFERENCE_MODULES:
            namespace[name] = _stand_in(kind, value)   # so that a kernel using it hears what it is
        elif kind in ("number", "tuple", "array"):
            namespace[name] = value
        elif kind == "dtype":
            namespace[name] = value.type
        elif kind == "module" and value.get("name") in REFERENCE_MODULES:
            module = _module(value["name"])
            if module is not None:
                namespace[name] = module
        elif kind == "ref" and value.get("module") in REFERENCE_MODULES and isinstance(value.get("attr"), str):
            module = _module(value["module"])
            attr = value["attr"]
            if module is not None and not attr.startswith("_") and hasattr(module, attr):
                namespace[name] = getattr(module, attr)
    return namespace


def _stand_in(kind: str, value: Any) -> Any:
    if kind == "module":
        return types.ModuleType(str(value.get("name", "?")))
    what = str(value.get("type", "value")).rsplit(".", 1)[-1] if isinstance(value, dict) else "value"
    return type(what if what.isidentifier() else "value", (), {})()


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except Exception:
        return None


# ---------------------------------------------------------------------------------------------- the defs


def _top_level_defs(tree: ast.Module) -> dict[int, ast.FunctionDef]:
    """Top-level ``def``s by the line Python gives the function (its first decorator's, if it has one)."""
    defs = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            line = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            defs[line] = node
    return defs


def _def_for(name: str, value: dict[str, Any], defs: dict[int, ast.FunctionDef], filename: str,
             solutions_dir: str, reference_use: list[str]) -> ast.FunctionDef:
    where = value.get("file", "")
    module = value.get("module", "")
    if where != filename and not module.startswith(OWN_MODULE_PREFIX):
        if _is_reference(where, module, solutions_dir):
            reference_use.append(f"`{name}` comes from {module or where}")
            raise SolutionError(f"`{name}` is imported from the reference solution ({module or where}), not "
                                f"written in your file: that counts as having seen the solution",
                                filename=filename)
        raise SolutionError(f"`{name}` is defined in {module or where}, not in your file: write your kernels "
                            f"and the functions they call in the file you check", filename=filename)
    node = defs.get(value.get("line"))
    if node is None or node.name != value.get("name"):
        raise SolutionError(f"`{name}` is not a function defined at the top level of your file (a kernel is a "
                            f"plain `def` with `@cuda.jit`)", filename=filename)
    return node


def _is_reference(where: str, module: str, solutions_dir: str) -> bool:
    if module == "solutions" or module.startswith("solutions."):
        return True
    if solutions_dir and where:
        try:
            return os.path.realpath(where).startswith(os.path.realpath(solutions_dir) + os.sep)
        except (OSError, ValueError):
            return False
    return False


def _check_kernel_decorator(name: str, value: dict[str, Any], node: ast.FunctionDef, filename: str) -> None:
    wrapper = value.get("wrapper", "")
    options = value.get("options") or {}
    line = node.lineno
    if wrapper == "cuda.jit":
        if options.get("device"):
            raise SolutionError(f"`{name}` is a device function (`@cuda.jit(device=True)`): a kernel calls it, "
                                f"but it cannot be launched itself; remove `device=True`",
                                filename=filename, lineno=line)
        return
    if wrapper:
        raise SolutionError(f"`{name}` is compiled by `{wrapper}`, not by `numba.cuda.jit`: for the GPU, "
                            f"decorate it with `@cuda.jit` (`from numba import cuda`)", filename=filename,
                            lineno=line)
    raise SolutionError(f"`{name}` has no `@cuda.jit` decorator: a GPU cannot launch a plain Python function; "
                        f"put `@cuda.jit` on the line above `def {node.name}`", filename=filename, lineno=line)


def _called_functions(kernels: dict[str, Function], decoded: dict[str, tuple[str, Any]],
                      defs: dict[int, ast.FunctionDef], filename: str, solutions_dir: str,
                      reference_use: list[str]) -> dict[str, Function]:
    """Every module-level function the kernels reach by name, checked as numba-cuda would."""
    found: dict[str, Function] = {}
    todo = [f.node for f in kernels.values()]
    while todo:
        node = todo.pop()
        for used in sorted(_global_names(node)):
            if used in kernels or used in found:
                continue
            kind, value = decoded.get(used, (None, None))
            if kind != "function":
                continue
            callee = _def_for(used, value, defs, filename, solutions_dir, reference_use)
            if value.get("wrapper") != "cuda.jit":
                what = f"is compiled by `{value['wrapper']}`" if value.get("wrapper") else "is a plain Python function"
                raise SolutionError(f"your kernel calls `{used}`, which {what}: on a GPU a kernel can call only "
                                    f"device functions; decorate it with `@cuda.jit(device=True)`",
                                    filename=filename, lineno=callee.lineno)
            found[used] = _function(used, value, callee)
            todo.append(callee)
    return found


def _global_names(node: ast.FunctionDef) -> set[str]:
    local = {a.arg for a in node.args.args}
    loads = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            if isinstance(sub.ctx, ast.Store):
                local.add(sub.id)
            else:
                loads.add(sub.id)
    return loads - local


def _function(name: str, value: dict[str, Any], node: ast.FunctionDef) -> Function:
    options = value.get("options") if isinstance(value.get("options"), dict) else {}
    signatures = [s for s in value.get("signatures") or [] if isinstance(s, dict)
                  and isinstance(s.get("text"), str) and isinstance(s.get("args"), list)]
    return Function(name=name, func=None, node=node, device=bool(options.get("device")), signatures=signatures,
                    options=options)


def _exec_defs(nodes: list[ast.FunctionDef], namespace: dict[str, Any], module_name: str,
               filename: str) -> dict[str, Any]:
    """Compile and run just these ``def`` statements, stripped of everything a ``def`` would evaluate."""
    body = []
    for node in nodes:
        clean = copy.deepcopy(node)
        clean.decorator_list = []
        clean.returns = None
        args = clean.args
        for arg in args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]:
            arg.annotation = None
        if any(not isinstance(d, ast.Constant) for d in args.defaults + [d for d in args.kw_defaults if d]):
            raise SolutionError(f"`{node.name}`: a parameter's default value must be a plain constant",
                                filename=filename, lineno=node.lineno)
        body.append(clean)
    module = ast.Module(body=body, type_ignores=[])
    try:
        code = compile(module, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        raise SolutionError(f"your kernels could not be compiled again: {e}", filename=filename) from None
    exec(code, namespace)   # only `def` statements: this makes function objects and runs none of their code
    return {node.name: namespace[node.name] for node in nodes}
