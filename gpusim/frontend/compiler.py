"""The front end's entry: a kernel function and its argument types -> a checked, typed, analysed ``Module``.

``compile_module`` reads the source (``source.py``), lowers the kernel and every device function it reaches
to typed IR (``lower.py``), then runs the IR passes every back end relies on: fused multiply-add contraction
(``gpusim.ir.fma``) and the uniformity analysis (``gpusim.ir.uniformity``). Nothing after it decides a type
or rejects a construct.

Device functions are typed per argument types, as numba specialises them. Lowering a caller that reaches a
device function not typed yet stops, the callee is lowered, and the caller is lowered again: an explicit
stack instead of recursion, so a chain of hundreds of device functions compiles, and recursion (a function
reached again while it is being lowered) is found and named. Each compilation has its own ``Builder``: two
threads compiling at once share nothing.
"""

from __future__ import annotations

import ast
import types
import weakref
from typing import Any

import numpy as np

from ..faults import KernelCompileError, UnsupportedConstruct
from ..ir import nodes as N
from ..ir.fma import contract
from ..ir.types import Type
from ..ir.uniformity import analyse
from .constants import fold_literals
from .lower import FunctionLowering
from .source import Source, func_globals, read_source

#: a kernel function with this attribute set is compiled as numba-cuda's ``debug=True`` compiles it (the drop-in
#: marks a copy of the function of a ``cuda.jit(debug=True)`` kernel)
DEBUG_MARK = "__gpusim_debug__"
#: device functions one kernel may reach through nested calls
MAX_CALL_DEPTH = 10_000
#: Python bytecode of one kernel or device function, and of a kernel with everything it calls, at most: about
#: 4,000 and 16,000 simple statements, which gpusim compiles in a few seconds (a bigger kernel is refused
#: before its source is read, in well under a second)
MAX_FUNCTION_BYTECODE = 64 * 1024
MAX_MODULE_BYTECODE = 256 * 1024


#: code object -> {file: its parsed, folded source}: a tree the lowering only reads, so one parse serves every
#: specialisation and every function object made from the code (a suite compiles one kernel for many dtypes)
_PARSED: weakref.WeakKeyDictionary[types.CodeType, dict[str, Source]] = weakref.WeakKeyDictionary()


def parsed_source(func: Any) -> Source:
    """``read_source`` with the literals folded, once per code object and file."""
    code = func.__code__
    per_file = _PARSED.get(code)
    src = per_file.get(code.co_filename) if per_file is not None else None
    if src is None:
        src = read_source(func)
        fold_literals(src.tree)
        _PARSED.setdefault(code, {})[code.co_filename] = src
    return src


class _NeedCallee(Exception):
    def __init__(self, key: tuple, node: ast.AST, caller: FunctionLowering):
        self.key = key
        self.node = node
        self.caller = caller


class Builder:
    """Lowers one kernel and everything it calls; one per compilation."""

    def __init__(self, debug: bool = False) -> None:
        #: numba-cuda's ``debug=True``: a division by zero raises (``frontend.exceptions.KernelZeroDivision``)
        self.debug = debug
        self.done: dict[tuple, N.Function] = {}
        self.names: dict[str, int] = {}
        self.sources: dict[Any, Source] = {}
        self.globals: dict[Any, dict[str, Any]] = {}
        self.caches: dict[Any, dict[str, Any]] = {}
        self.arrays: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.in_progress: list[tuple] = []
        self.decls = 0
        self.bytecode = 0

    # -- services for the lowering ----------------------------------------------------------------------------
    def global_cache(self, func: Any) -> dict[str, Any]:
        return self.caches.setdefault(func, {})

    def frozen_array(self, array: np.ndarray) -> np.ndarray:
        """A read-only copy of a module-level array, made once per compilation (numba freezes it too)."""
        hit = self.arrays.get(id(array))
        if hit is None or hit[0] is not array:
            data = np.ascontiguousarray(array).copy()
            data.setflags(write=False)
            hit = (array, data)
            self.arrays[id(array)] = hit
        return hit[1]

    def new_decl(self) -> int:
        self.decls += 1
        return self.decls

    def callee(self, func: Any, arg_types: tuple[Type, ...], node: ast.AST, caller: FunctionLowering,
               statics: tuple = ()) -> N.Function:
        """The device function ``func`` typed for ``arg_types``, with the compile-time arguments ``statics``
        (``(parameter, what it refers to)`` pairs) bound as constants."""
        key = (func, arg_types, False, statics)
        fn = self.done.get(key)
        if fn is not None:
            return fn
        raise _NeedCallee(key, node, caller)

    # -- the work list ------------------------------------------------------------------------------------------
    def source(self, func: Any) -> Source:
        src = self.sources.get(func)
        if src is None:
            self.check_size(func)
            src = parsed_source(func)
            self.sources[func] = src
            self.globals[func] = func_globals(func)
        return src

    def check_size(self, func: Any) -> None:
        code = func.__code__
        size = len(code.co_code)
        self.bytecode += size
        if size > MAX_FUNCTION_BYTECODE or self.bytecode > MAX_MODULE_BYTECODE:
            what = f"{func.__name__!r} is" if size > MAX_FUNCTION_BYTECODE else \
                f"the kernel with the device functions it calls is, with {func.__name__!r},"
            most = MAX_FUNCTION_BYTECODE if size > MAX_FUNCTION_BYTECODE else MAX_MODULE_BYTECODE
            raise UnsupportedConstruct(
                f"{what} too large for gpusim to compile ({max(size, self.bytecode):,} bytes of Python bytecode, "
                f"at most {most:,}: about {most // 16:,} simple statements); a kernel this long is generated "
                "code: loop over the work instead", filename=code.co_filename, lineno=code.co_firstlineno)

    def lower_one(self, key: tuple) -> N.Function:
        func, arg_types, is_kernel, statics = key
        src = self.source(func)
        base = func.__name__
        n = self.names.get(base, 0)
        name = base if n == 0 else f"{base}#{n + 1}"
        low = FunctionLowering(self, func, src, name, arg_types, is_kernel, self.globals[func], statics)
        try:
            with np.errstate(all="ignore"):
                fn = low.lower()
        except RecursionError:
            raise UnsupportedConstruct(
                f"{base!r} is nested too deeply to compile (an expression or block of hundreds of levels)",
                filename=src.filename, lineno=low.line, source_line=src.line(low.line)) from None
        self.names[base] = n + 1
        return fn

    def build(self, func: Any, arg_types: tuple[Type, ...]) -> N.Module:
        entry = (func, arg_types, True, ())
        stack = [entry]
        while stack:
            key = stack[-1]
            try:
                fn = self.lower_one(key)
            except _NeedCallee as need:
                if need.key in stack:
                    callee = need.key[0]
                    low = need.caller
                    raise UnsupportedConstruct(
                        f"device function {callee.__name__!r} calls itself (directly or through other functions): "
                        "recursion is not supported on the GPU", filename=low.src.filename,
                        lineno=need.node.lineno, source_line=low.src.line(need.node.lineno)) from None
                if len(stack) >= MAX_CALL_DEPTH:
                    low = need.caller
                    raise UnsupportedConstruct(
                        f"more than {MAX_CALL_DEPTH} nested device-function calls", filename=low.src.filename,
                        lineno=need.node.lineno, source_line=low.src.line(need.node.lineno)) from None
                stack.append(need.key)
                continue
            self.done[key] = fn
            stack.pop()
        functions: dict[str, N.Function] = {}
        for fn in self.done.values():
            functions[fn.name] = fn
        kernel = self.done[entry]
        src = self.sources[func]
        module = N.Module(kernel.name, functions, src.filename, tuple(src.lines), self.decls)
        return module


def compile_module(func: Any, arg_types: tuple[Type, ...], *, lowered: list | None = None) -> N.Module:
    """Front end and IR passes: the module every back end reads (raises ``KernelCompileError``). ``lowered``,
    if given, gets every Python function whose source was read, the kernel first (what the module depends on,
    with the values their names are bound to: ``gpusim.kernel_cache``)."""
    func = getattr(func, "py_func", func)
    if len(arg_types) != func.__code__.co_argcount:
        raise KernelCompileError(f"kernel {func.__name__!r} takes {func.__code__.co_argcount} arguments, "
                                 f"{len(arg_types)} types given")
    builder = Builder(debug=bool(getattr(func, DEBUG_MARK, False)))
    module = builder.build(func, tuple(arg_types))
    if lowered is not None:
        lowered.extend(builder.sources)
    return analyse(contract(module, in_place=True))  # the module is this call's own: no copy
