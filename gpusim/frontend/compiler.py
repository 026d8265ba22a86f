"""The front end's entry: a kernel function and its argument types -> a checked, typed, analysed ``Module``.

``compile_module`` reads the source (``source.py``), lowers the kernel and every device function it reaches
to typed IR (``lower.py``), then runs the IR passes every back end relies on: fused multiply-add contraction
(``gpusim.ir.fma``) and the uniformity analysis (``gpusim.ir.uniformity``). Nothing after it decides a type
or rejects a construct.

Device functions are typed per argument types, as numba specialises them. Lowering a caller that reaches a
device function not typed yet stops, the callee is lowered, and the caller is lowered again: an explicit
stack instead of recursion, so a chain of hundreds of device functions compiles. Each compilation has its own
``Builder``: two threads compiling at once share nothing.

Recursion (a function reached again while it is being lowered, directly or through others) is typed as numba
types it, by the returns that do not need the recursive call: those lowered before it (``if n < 2: return
n``), or, where none are, those a probe lowering finds when every path that reaches the call is cut off
(``if n > 0: return f(n - 1) + 1`` / ``return 0``); with none at all it is numba's "runaway recursion". Once
the function is lowered, its return type must be the one assumed; if not, it is lowered again with the new
one (and so is every function lowered while it was on the stack), up to ``MAX_RECURSION_ROUNDS`` times ("does
not converge" after that).
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
from ..ir.types import NONE, Type
from ..ir.uniformity import analyse
from . import typing as ty
from .constants import fold_literals
from .lower import FunctionLowering, UnknownReturn
from .source import Source, func_globals, read_source

#: a kernel function with this attribute set is compiled as numba-cuda's ``debug=True`` compiles it (the drop-in
#: marks a copy of the function of a ``cuda.jit(debug=True)`` kernel)
DEBUG_MARK = "__gpusim_debug__"
#: a kernel function with this attribute set is compiled with numba's simulator's semantics where they are wider
#: than numba-cuda's: it may call plain Python functions (the drop-in marks its kernels; ``gpusim.launch`` and
#: the puzzles keep to what compiles on a GPU)
SIMULATOR_MARK = "__gpusim_simulator__"
#: device functions one kernel may reach through nested calls
MAX_CALL_DEPTH = 10_000
#: Python bytecode of one kernel or device function, and of a kernel with everything it calls, at most: about
#: 4,000 and 16,000 simple statements, which gpusim compiles in a few seconds (a bigger kernel is refused
#: before its source is read, in well under a second)
MAX_FUNCTION_BYTECODE = 64 * 1024
MAX_MODULE_BYTECODE = 256 * 1024
#: times a recursive function is lowered again because its return type differed from the one its recursive
#: calls assumed
MAX_RECURSION_ROUNDS = 8


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


class _Recursive:
    """What a recursive call sees of a function still being lowered: its name and its assumed return type."""

    def __init__(self, name: str, return_type: Type):
        self.name = name
        self.return_type = return_type


class Builder:
    """Lowers one kernel and everything it calls; one per compilation."""

    def __init__(self, debug: bool = False, simulator: bool = False) -> None:
        #: numba-cuda's ``debug=True``: a division by zero raises (``frontend.exceptions.KernelZeroDivision``)
        self.debug = debug
        #: numba's simulator's semantics (``SIMULATOR_MARK``): plain Python functions may be called
        self.simulator = simulator
        #: the plain Python functions called as device functions (simulator semantics only): numba's simulator
        #: runs them as Python, so an ``isinstance`` in one decides its branch without typing the other
        self.plain_functions: set[Any] = set()
        self.done: dict[tuple, N.Function] = {}
        self.names: dict[str, int] = {}
        self.sources: dict[Any, Source] = {}
        self.globals: dict[Any, dict[str, Any]] = {}
        self.caches: dict[Any, dict[str, Any]] = {}
        self.arrays: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        #: the functions being lowered, the kernel first (the work list of ``build``)
        self.in_progress: list[tuple] = []
        #: recursion: the return type a recursive call assumed, per function key
        self.assumed: dict[tuple, Type] = {}
        #: the return types lowered before the call at which a function's lowering last stopped
        self.partial_returns: dict[tuple, list[Type]] = {}
        #: each lowered function's name (kept when it is lowered again)
        self.key_names: dict[tuple, str] = {}
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
        if key != getattr(caller, "build_key", key) and any(k[0] is func for k in self.in_progress):
            self.refuse_indirect_recursion(key, node, caller)
        if key in self.in_progress:
            return self.recursive_call(key, node, caller)
        raise _NeedCallee(key, node, caller)

    def refuse_indirect_recursion(self, key: tuple, node: ast.AST, caller: FunctionLowering) -> None:
        """A call of a function still being lowered, other than the caller calling itself with its own
        argument types: a recursion through another device function, or through the same one with other
        argument types. numba-cuda 0.30 cannot
        compile either (its CUDA code generator lacks ``insert_unresolved_ref``: an AttributeError, measured on
        the H200); only a function calling itself with the same argument types compiles."""
        func, name = key[0], key[0].__name__
        pending = next(k for k in self.in_progress if k[0] is func)
        if key in self.in_progress and func is not caller.func:
            chain = [k[0].__name__ for k in self.in_progress[self.in_progress.index(key):]] + [name]
            what = f"mutual recursion: device functions call each other ({' -> '.join(chain)})"
        else:
            types = ", ".join(map(str, key[1])) or "no arguments"
            what = (f"device function {name!r} is called again, before it is compiled, with other argument "
                    f"types ({types}; first {', '.join(map(str, pending[1])) or 'no arguments'})")
        raise UnsupportedConstruct(
            f"{what}; numba-cuda compiles a device function that calls itself with the same argument types, not "
            "a recursion through other functions or other types: merge the functions into one that calls itself "
            "(pass what tells them apart as an argument), or turn the recursion into a loop",
            filename=caller.src.filename, lineno=node.lineno, source_line=caller.src.line(node.lineno))

    def recursive_call(self, key: tuple, node: ast.AST, caller: FunctionLowering) -> _Recursive:
        """A call of a function that is being lowered: typed by the return statements before it (numba's
        rule), or by the type assumed already."""
        ret = self.assumed.get(key)
        if ret is None:
            if getattr(caller, "build_key", None) == key:
                seen = [r.value.type if r.value is not None else NONE for r in caller.returns]
            else:
                seen = self.partial_returns.get(key, [])
            for t in seen:
                ret = t if ret is None else (ty.unify(ret, t) or ret)
            if ret is None and getattr(caller, "build_key", None) == key:
                raise UnknownReturn()  # lowered again in probe mode (``lower_one``)
            if ret is None:
                raise UnsupportedConstruct(
                    f"cannot type infer runaway recursion: device function {key[0].__name__!r} calls itself "
                    "(directly or through other functions) before any of its return statements gives a type",
                    filename=caller.src.filename, lineno=node.lineno,
                    source_line=caller.src.line(node.lineno))
            self.assumed[key] = ret
        return _Recursive(self.name_of(key), ret)

    def name_of(self, key: tuple) -> str:
        """The name of the function ``key`` lowers to (``base``, ``base#2``, ... per Python function name),
        given once."""
        name = self.key_names.get(key)
        if name is None:
            base = key[0].__name__
            n = self.names.get(base, 0)
            name = self.key_names[key] = base if n == 0 else f"{base}#{n + 1}"
            self.names[base] = n + 1
        return name

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
        name = self.key_names.get(key)
        n = self.names.get(base, 0)
        if name is None:
            name = base if n == 0 else f"{base}#{n + 1}"
        low = FunctionLowering(self, func, src, name, arg_types, is_kernel, self.globals[func], statics)
        low.build_key = key
        try:
            with np.errstate(all="ignore"):
                fn = low.lower()
        except UnknownReturn:  # find the types of the returns that do not need the recursive call, then again
            probe = FunctionLowering(self, func, src, name, arg_types, is_kernel, self.globals[func], statics)
            probe.build_key, probe.probe = key, True
            try:
                with np.errstate(all="ignore"):
                    probe.lower()
            except KernelCompileError:
                pass  # the returns it saw are enough
            found = [r.value.type for r in probe.returns if r.value is not None] or \
                [NONE for r in probe.returns]
            ret = None
            for t in found:
                ret = t if ret is None else (ty.unify(ret, t) or ret)
            if ret is None:
                raise UnsupportedConstruct(
                    f"cannot type infer runaway recursion: every return of device function {base!r} needs its "
                    "own result (give one return that does not call it, e.g. a base case)",
                    filename=src.filename, lineno=low.line, source_line=src.line(low.line)) from None
            self.assumed[key] = ret
            return self.lower_one(key)
        except RecursionError:
            raise UnsupportedConstruct(
                f"{base!r} is nested too deeply to compile (an expression or block of hundreds of levels)",
                filename=src.filename, lineno=low.line, source_line=src.line(low.line)) from None
        except _NeedCallee:
            self.partial_returns[key] = [r.value.type if r.value is not None else NONE for r in low.returns]
            raise
        if key not in self.key_names:
            self.key_names[key] = name
            self.names[base] = n + 1
        return fn

    def build(self, func: Any, arg_types: tuple[Type, ...]) -> N.Module:
        entry = (func, arg_types, True, ())
        stack = self.in_progress
        stack.append(entry)
        #: per function on the stack: how many functions were done when it was pushed (those done since depend
        #: on what its recursive calls assumed)
        pushed: dict[tuple, int] = {entry: 0}
        rounds: dict[tuple, int] = {}
        while stack:
            key = stack[-1]
            try:
                fn = self.lower_one(key)
            except _NeedCallee as need:
                if len(stack) >= MAX_CALL_DEPTH:
                    low = need.caller
                    raise UnsupportedConstruct(
                        f"more than {MAX_CALL_DEPTH} nested device-function calls", filename=low.src.filename,
                        lineno=need.node.lineno, source_line=low.src.line(need.node.lineno)) from None
                stack.append(need.key)
                pushed[need.key] = len(self.done)
                continue
            assumed = self.assumed.get(key)
            if assumed is not None and assumed != fn.return_type:  # recursive calls typed wrong: lower again
                rounds[key] = rounds.get(key, 0) + 1
                if rounds[key] > MAX_RECURSION_ROUNDS:
                    raise UnsupportedConstruct(
                        f"the return type of recursive function {key[0].__name__!r} does not converge (last "
                        f"{assumed}, then {fn.return_type})", filename=fn.filename, lineno=fn.line)
                self.assumed[key] = fn.return_type
                for stale in list(self.done)[pushed[key]:]:
                    del self.done[stale]
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
    with the values their names are bound to)."""
    func = getattr(func, "py_func", func)
    if len(arg_types) != func.__code__.co_argcount:
        raise KernelCompileError(f"kernel {func.__name__!r} takes {func.__code__.co_argcount} arguments, "
                                 f"{len(arg_types)} types given")
    builder = Builder(debug=bool(getattr(func, DEBUG_MARK, False)),
                      simulator=bool(getattr(func, SIMULATOR_MARK, False)))
    module = builder.build(func, tuple(arg_types))
    if lowered is not None:
        lowered.extend(builder.sources)
    return analyse(contract(module, in_place=True), in_place=True)  # the module is this call's own: no copy
