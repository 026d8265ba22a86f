"""Lanes back end, expressions: ``ExpressionGen`` turns kernel expressions into Python over lane vectors.

Each method returns the text of a Python expression and may first emit statements (temporaries for memory
reads, masks for short-circuit ``and``/``or`` and conditional expressions, so that an operand on the untaken
side is never evaluated for a lane). ``FunctionGen`` (lanes.py) mixes it in with the statement generator.
"""

from __future__ import annotations

import ast

import numpy as np

from ...frontend.analysis import const_eval, qualified
from ...frontend.names import MATH_CONSTS, ConstArrayRef, CudaRef, DeviceFnRef, DTypeRef

BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
          ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^",
          ast.BitAnd: "&"}
CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
CUDA_VALUES = {"threadIdx.x": "_tx", "threadIdx.y": "_ty", "threadIdx.z": "_tz", "blockIdx.x": "_bx",
               "blockIdx.y": "_by", "blockIdx.z": "_bz", "blockDim.x": "_bdx", "blockDim.y": "_bdy",
               "blockDim.z": "_bdz", "gridDim.x": "_gdx", "gridDim.y": "_gdy", "gridDim.z": "_gdz",
               "laneid": "_lane", "warpsize": "_ws"}
ATOMICS = {"atomic.add": "add", "atomic.sub": "sub", "atomic.max": "max", "atomic.min": "min",
           "atomic.exch": "exch", "atomic.inc": "inc", "atomic.dec": "dec", "atomic.and_": "and",
           "atomic.or_": "or", "atomic.xor": "xor", "atomic.nanmax": "max", "atomic.nanmin": "min"}
SHUFFLES = {"shfl_sync": "idx", "shfl_up_sync": "up", "shfl_down_sync": "down", "shfl_xor_sync": "xor"}


def _is_mult(node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)


class Ctx:
    """Where code is being generated: the current mask, whether assignments must merge, enclosing loop."""

    def __init__(self, mask: str, partial: bool, loop: dict | None):
        self.mask = mask
        self.partial = partial
        self.loop = loop


class ExpressionGen:
    """Expression generation; needs ``emit``, ``tmp``, ``var``, ``const``, ``ir``, ``mod`` from ``FunctionGen``."""

    # -- arrays ---------------------------------------------------------------------------------------
    def array_ref(self, node: ast.AST, ctx: Ctx) -> str:
        if isinstance(node, ast.Name):
            if node.id in self.ir.locals:
                return self.var(node.id)
            g = self.ir.globals.get(node.id)
            if isinstance(g, ConstArrayRef):
                return self.mod.const_array(g.array, g.name)
        raise self.ir.error(node, f"{ast.unparse(node)} is not an array")

    def array_decl(self, value: ast.AST, name: str, ctx: Ctx) -> str:
        ir = self.ir
        if isinstance(value, ast.Name):
            return self.array_ref(value, ctx)
        q = qualified(ir, value.func) if isinstance(value, ast.Call) else None
        if not isinstance(q, CudaRef):
            raise ir.error(value, "arrays can only come from cuda.shared.array, cuda.local.array, "
                                  "cuda.const.array_like or a kernel argument")
        kw = {k.arg: k.value for k in value.keywords}
        if q.path == "const.array_like":
            src = value.args[0] if value.args else kw.get("arr") or kw.get("ary")
            g = ir.globals.get(src.id) if isinstance(src, ast.Name) else None
            if not isinstance(g, ConstArrayRef):
                raise ir.error(value, "cuda.const.array_like needs a module-level NumPy array")
            return self.mod.const_array(g.array, name)
        shape_node = value.args[0] if value.args else kw.get("shape")
        dtype_node = value.args[1] if len(value.args) > 1 else kw.get("dtype")
        if shape_node is None or dtype_node is None:
            raise ir.error(value, f"cuda.{q.path} needs a shape and a dtype")
        parts = shape_node.elts if isinstance(shape_node, ast.Tuple) else [shape_node]
        for part in parts:
            if not isinstance(part, (ast.Constant, ast.Name, ast.Attribute)):
                raise ir.error(part, f"the shape of cuda.{q.path} must be a literal or a module-level constant, "
                                     f"not the expression {ast.unparse(part)!r} (numba-cuda rejects it: give it a "
                                     "name at module level, e.g. TILE_LEN = TPB + 2)")
        shape = const_eval(ir, shape_node)
        dtype = const_eval(ir, dtype_node)
        if not isinstance(dtype, np.dtype):
            raise ir.error(dtype_node, f"{ast.unparse(dtype_node)} is not a dtype")
        shape = (shape,) if not isinstance(shape, tuple) else shape
        if not all(isinstance(d, (int, np.integer)) and d >= 0 for d in shape):
            raise ir.error(shape_node, f"the shape {shape} must be non-negative integers")
        shape = tuple(int(d) for d in shape)
        decl = self.mod.decl_id(ir, value)
        space = "shared" if q.path == "shared.array" else "local"
        return (f"rt.{space}_array({decl}, {name!r}, {shape!r}, {self.mod.const(dtype)}, "
                f"{ctx.mask}, {value.lineno})")

    # -- expressions ----------------------------------------------------------------------------------
    def binop_code(self, left: str, op: str, right: str, opnode: ast.operator, ctx: Ctx,
                   right_node: ast.AST | None) -> str:
        """Every binary operation goes through ``rt.binop``: numba's integer widening, integer division
        by zero as a fault, and FLOP counting live in one place."""
        return f"rt.binop({op!r}, {left}, {right}, {ctx.mask}, {self.cur_line})"

    def expr(self, node: ast.AST, ctx: Ctx, used: bool = True) -> str:
        ir = self.ir
        if isinstance(node, ast.Constant):
            return self.const(node.value)
        if isinstance(node, ast.Name):
            if node.id in ir.locals:
                return self.var(node.id)
            if node.id in ("True", "False", "None"):
                return node.id
            g = ir.globals.get(node.id)
            if isinstance(g, (bool, int, float, np.integer, np.floating, tuple)):
                return self.const(g)
            if isinstance(g, ConstArrayRef):
                return self.mod.const_array(g.array, g.name)
            raise ir.error(node, f"{node.id!r} cannot be used as a value here")
        if isinstance(node, ast.Attribute):
            if node.attr in ("shape", "size", "ndim") and not isinstance(qualified(ir, node), CudaRef):
                return f"{self.array_ref(node.value, ctx)}.{node.attr}"
            q = qualified(ir, node)
            if isinstance(q, CudaRef) and q.path in CUDA_VALUES:
                return CUDA_VALUES[q.path]
            if isinstance(q, tuple) and q[0] == "math" and q[1] in MATH_CONSTS:
                return self.const(float(MATH_CONSTS[q[1]]))
            raise ir.error(node, f"{ast.unparse(node)} cannot be used as a value here")
        if isinstance(node, ast.Subscript):
            base = node.value
            if isinstance(base, ast.Attribute) and base.attr == "shape":
                return f"{self.expr(base, ctx)}[{self.expr(node.slice, ctx)}]"
            if isinstance(base, ast.Name) and base.id in ir.locals and base.id not in ir.arrays:
                return f"rt.tuple_item({self.var(base.id)}, {self.expr(node.slice, ctx)})"
            if isinstance(base, ast.Tuple):
                return f"rt.tuple_item({self.expr(base, ctx)}, {self.expr(node.slice, ctx)})"
            arr, idx = self.subscript_parts(node, ctx)
            t = self.tmp()
            self.emit(f"{t} = rt.ld({arr}, {ctx.mask}, {idx}, {node.lineno})")
            return t
        if isinstance(node, ast.Tuple):
            return "(" + "".join(self.expr(e, ctx) + ", " for e in node.elts) + ")"
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, (ast.Add, ast.Sub)) and _is_mult(node.left):
                self.last_product = (self.expr(node.left.left, ctx), self.expr(node.left.right, ctx))
                return self.mad_code("", node.op, node.right, ctx, product_left=True)
            left = self.expr(node.left, ctx)
            if isinstance(node.op, (ast.Add, ast.Sub)) and _is_mult(node.right):
                return self.mad_code(left, node.op, node.right, ctx, product_left=False)
            right = self.expr(node.right, ctx)
            return self.binop_code(left, BINOPS[type(node.op)], right, node.op, ctx, node.right)
        if isinstance(node, ast.UnaryOp):
            v = self.expr(node.operand, ctx)
            if isinstance(node.op, ast.Not):
                return f"rt.logical_not({v})"
            if isinstance(node.op, ast.USub):
                return f"(-{v})" if isinstance(node.operand, ast.Constant) else f"rt.neg({v})"
            if isinstance(node.op, ast.UAdd):
                return f"(+{v})"
            return f"rt.invert({v})"
        if isinstance(node, ast.Compare):
            return self.compare(node, ctx)
        if isinstance(node, ast.BoolOp):
            return self.boolop(node, ctx)
        if isinstance(node, ast.IfExp):
            return self.ifexp(node, ctx)
        if isinstance(node, ast.Call):
            return self.call(node, ctx, used)
        raise ir.error(node, f"{type(node).__name__} is not supported in a kernel")

    def compare(self, node: ast.Compare, ctx: Ctx) -> str:
        if len(node.ops) > 1 and any(self.has_side_effects(c) for c in node.comparators[1:]):
            return self.compare_chain(node, ctx)
        left = self.expr(node.left, ctx)
        parts = []
        for op, comp in zip(node.ops, node.comparators):
            right = self.expr(comp, ctx)
            if len(node.ops) > 1:
                t = self.tmp()
                self.emit(f"{t} = {right}")
                right = t
            parts.append(f"({left} {CMPOPS[type(op)]} {right})")
            left = right
        if len(parts) == 1:
            return parts[0]
        return "rt.all_of(" + ", ".join(parts) + ")"

    def compare_chain(self, node: ast.Compare, ctx: Ctx) -> str:
        """``a < b < c[k]``: like ``a < b and b < c[k]`` with ``b`` evaluated once, so ``c[k]`` is read only
        where ``a < b`` holds (Python's and numba's short-circuit)."""
        res = self.tmp()
        left = self.expr(node.left, ctx)
        uniform = not self.varies(node)
        for n, (op, comp) in enumerate(zip(node.ops, node.comparators)):
            if n and uniform:
                self.emit(f"if {res}:")
                self.indent += 1
            sub = ctx if n == 0 or uniform else Ctx(self.tmp("_m"), ctx.partial, ctx.loop)
            if sub is not ctx:
                self.emit(f"{sub.mask} = {ctx.mask} & {res}")
            right = self.tmp()
            self.emit(f"{right} = {self.expr(comp, sub)}")
            test = f"rt.truth({left} {CMPOPS[type(op)]} {right})"
            self.emit(f"{res} = {test}" if n == 0 or uniform else f"{res} = {res} & {test}")
            if n and uniform:
                self.indent -= 1
            left = right
        return res

    def varies(self, node: ast.AST) -> bool:
        from ...frontend.analysis import Analysis

        return Analysis(self.mod.fe, self.ir).varies(node)

    def has_side_effects(self, node: ast.AST) -> bool:
        return any(isinstance(n, (ast.Subscript, ast.Call)) for n in ast.walk(node))

    @staticmethod
    def boolish(node: ast.AST) -> bool:
        """Is ``node`` a bool by construction (a comparison, ``not``, a bool literal, and/or of those)?"""
        if isinstance(node, ast.Compare) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
            return True
        if isinstance(node, ast.Constant):
            return isinstance(node.value, bool)
        if isinstance(node, ast.BoolOp):
            return all(ExpressionGen.boolish(v) for v in node.values)
        return False

    def boolop_value(self, node: ast.BoolOp, ctx: Ctx, is_and: bool) -> str:
        """``a or b`` / ``a and b`` on non-bool values: the result is one of the operands, as in Python and
        numba (``x = a[i] or 7.5``); later operands are evaluated only on the lanes that need them."""
        res = self.tmp()
        self.emit(f"{res} = {self.expr(node.values[0], ctx)}")
        if not any(self.varies(v) for v in node.values):
            for v in node.values[1:]:
                self.emit(f"if {'' if is_and else 'not '}rt.truth({res}):")
                self.indent += 1
                self.emit(f"{res} = {self.expr(v, ctx)}")
                self.indent -= 1
            return res
        for v in node.values[1:]:
            c, m = self.tmp("_c"), self.tmp("_m")
            self.emit(f"{c} = rt.truth({res})")
            self.emit(f"{m} = {ctx.mask} & {'' if is_and else '~'}{c}")
            val = self.expr(v, Ctx(m, ctx.partial, ctx.loop))
            taken, kept = (val, res) if is_and else (res, val)
            self.emit(f"{res} = rt.select({c}, {taken}, {kept})")
        return res

    def boolop(self, node: ast.BoolOp, ctx: Ctx) -> str:
        is_and = isinstance(node.op, ast.And)
        if not all(self.boolish(v) for v in node.values):
            return self.boolop_value(node, ctx, is_and)
        if not any(self.varies(v) for v in node.values):
            if not any(self.has_side_effects(v) for v in node.values[1:]):
                vals = [self.expr(v, ctx) for v in node.values]
                return "(" + (" and " if is_and else " or ").join(f"rt.truth({v})" for v in vals) + ")"
            # uniform, but later operands read memory: evaluate them only when needed
            res = self.tmp()
            self.emit(f"{res} = rt.truth({self.expr(node.values[0], ctx)})")
            for v in node.values[1:]:
                self.emit(f"if {'' if is_and else 'not '}{res}:")
                self.indent += 1
                self.emit(f"{res} = rt.truth({self.expr(v, ctx)})")
                self.indent -= 1
            return res
        res = self.tmp()
        self.emit(f"{res} = rt.truth({self.expr(node.values[0], ctx)})")
        for v in node.values[1:]:
            m = self.tmp("_m")
            self.emit(f"{m} = {ctx.mask} & {'' if is_and else '~'}{res}")
            val = self.expr(v, Ctx(m, ctx.partial, ctx.loop))
            op = "&" if is_and else "|"
            self.emit(f"{res} = {res} {op} rt.truth({val})")
        return res

    def ifexp(self, node: ast.IfExp, ctx: Ctx) -> str:
        cond = self.expr(node.test, ctx)
        res = self.tmp()
        if not self.varies(node.test):
            self.emit(f"if {cond}:")
            self.indent += 1
            self.emit(f"{res} = {self.expr(node.body, ctx)}")
            self.indent -= 1
            self.emit("else:")
            self.indent += 1
            self.emit(f"{res} = {self.expr(node.orelse, ctx)}")
            self.indent -= 1
            return res
        c = self.tmp("_c")
        self.emit(f"{c} = rt.truth({cond})")
        mt, mf = self.tmp("_m"), self.tmp("_m")
        self.emit(f"{mt} = {ctx.mask} & {c}")
        self.emit(f"{mf} = {ctx.mask} & ~{c}")
        a = self.expr(node.body, Ctx(mt, ctx.partial, ctx.loop))
        b = self.expr(node.orelse, Ctx(mf, ctx.partial, ctx.loop))
        self.emit(f"{res} = rt.select({c}, {a}, {b})")
        return res

    def call(self, node: ast.Call, ctx: Ctx, used: bool) -> str:
        ir = self.ir
        q = qualified(ir, node.func)
        m = ctx.mask
        line = node.lineno
        if isinstance(q, DeviceFnRef):
            callee = ir.callees[id(node)]
            fname = self.mod.function(callee)
            args = [self.expr(a, ctx) for a in node.args]
            t = self.tmp()
            self.emit(f"{t} = {fname}(rt, {m}{''.join(', ' + a for a in args)})")
            return t
        kw = {k.arg: k.value for k in node.keywords}
        if isinstance(q, CudaRef):
            return self.cuda_call(q.path, node, kw, ctx, used)
        args = [self.expr(a, ctx) for a in node.args]
        if isinstance(q, DTypeRef):
            return f"rt.cast({args[0]}, {self.const(q.dtype)})"
        if isinstance(q, tuple) and q[0] == "math":
            fn = q[1]
            code = f"rt.math({fn!r}, {', '.join(args)})"
            if self.instrument and fn not in ("fabs", "floor", "ceil", "trunc", "isnan", "isinf", "isfinite",
                                                "copysign"):
                return f"rt.flop('special', {code}, {m})"
            return code
        name = getattr(q, "__name__", None)
        if name == "abs":
            return f"rt.abs_({args[0]})"
        if name in ("min", "max"):
            if len(args) == 1:
                raise ir.error(node, f"{name}() of one value (a sequence) is not supported in a kernel")
            code = args[0]
            for a in args[1:]:
                code = f"rt.{name}_({code}, {a})"
            return code
        if name == "round":
            return f"rt.round_({', '.join(args)})"
        if name == "int":
            return f"rt.cast({args[0]}, {self.const(np.dtype(np.int64))})"
        if name == "float":
            return f"rt.to_float({args[0]})"
        if name == "bool":
            return f"rt.truth({args[0]})"
        if name == "len":
            return f"{self.array_ref(node.args[0], ctx)}.shape[0]"
        if name == "divmod":
            return f"rt.divmod_({args[0]}, {args[1]}, {m}, {line})"
        if name == "range":
            raise ir.error(node, "range() can only be used in a for loop")
        raise ir.error(node, f"{ast.unparse(node.func)}() is not supported in a kernel")

    def cuda_call(self, path: str, node: ast.Call, kw: dict, ctx: Ctx, used: bool) -> str:
        ir = self.ir
        m = ctx.mask
        line = node.lineno

        def arg(i: int, name: str, default: str | None = None) -> str:
            if len(node.args) > i:
                return self.expr(node.args[i], ctx)
            if name in kw:
                return self.expr(kw[name], ctx)
            if default is not None:
                return default
            raise ir.error(node, f"cuda.{path} is missing its argument {name!r}")

        if path in ("grid", "gridsize"):
            ndim = const_eval(ir, node.args[0]) if node.args else 1
            if ndim not in (1, 2, 3):
                raise ir.error(node, f"cuda.{path} takes 1, 2 or 3")
            return f"rt.{path}({int(ndim)})"
        if path == "syncthreads":
            self.emit(f"rt.syncthreads({m}, {line})")
            return "None"
        if path in ("syncthreads_count", "syncthreads_and", "syncthreads_or"):
            pred = node.args[0] if node.args else kw.get("predicate")
            if isinstance(pred, (ast.Compare, ast.BoolOp)) or (
                    isinstance(pred, ast.UnaryOp) and isinstance(pred.op, ast.Not)):
                raise ir.error(node, f"cuda.{path} needs an integer predicate: numba-cuda rejects a bool "
                                     f"(write cuda.{path}(int(...)))")
            return f"rt.syncthreads_reduce({path[12:]!r}, {m}, {arg(0, 'predicate')}, {line})"
        if path == "syncwarp":
            self.emit(f"rt.syncwarp({m}, {arg(0, 'mask', self.const(0xFFFFFFFF))}, {line})")
            return "None"
        if path.startswith("threadfence"):
            return "None"
        if path in ATOMICS:
            arr = self.array_ref(node.args[0], ctx)
            idx = self.expr(node.args[1], ctx)
            val = self.expr(node.args[2], ctx)
            t = self.tmp()
            self.emit(f"{t} = rt.atomic({ATOMICS[path]!r}, {arr}, {m}, {idx}, {val}, None, {used}, {line})")
            return t
        if path in ("atomic.cas", "atomic.compare_and_swap"):
            arr = self.array_ref(node.args[0], ctx)
            if path == "atomic.cas":
                idx, old, val = (self.expr(a, ctx) for a in node.args[1:4])
            else:
                idx = self.const(0)
                old, val = (self.expr(a, ctx) for a in node.args[1:3])
            t = self.tmp()
            self.emit(f"{t} = rt.atomic('cas', {arr}, {m}, {idx}, {val}, {old}, {used}, {line})")
            return t
        if path in SHUFFLES:
            mask = arg(0, "mask")
            val = arg(1, "value")
            third_name = "src_lane" if path == "shfl_sync" else ("delta" if path != "shfl_xor_sync"
                                                                  else "lane_mask")
            if len(node.args) > 3 or "width" in kw:
                raise ir.error(node, f"numba-cuda's cuda.{path}(mask, value, {third_name}) has no width "
                                     "argument (a kernel using one does not compile for the GPU)")
            third = arg(2, third_name)
            width = self.const(32)
            t = self.tmp()
            self.emit(f"{t} = rt.shuffle({SHUFFLES[path]!r}, {m}, {mask}, {val}, {third}, {width}, {line})")
            return t
        if path in ("ballot_sync", "any_sync", "all_sync", "eq_sync"):
            t = self.tmp()
            self.emit(f"{t} = rt.vote({path[:-5]!r}, {m}, {arg(0, 'mask')}, {arg(1, 'predicate')}, {line})")
            return t
        if path == "activemask":
            return f"rt.activemask({m})"
        if path == "lanemask_lt":
            return "rt.lanemask_lt"
        if path in ("popc", "brev", "clz", "ffs"):
            return f"rt.bits({path!r}, {arg(0, 'x')})"
        if path == "fma":
            a, b, c = (self.expr(x, ctx) for x in node.args[:3])
            code = f"rt.fma({a}, {b}, {c})"
            return f"rt.flop('fma', {code}, {m})" if self.instrument else code
        if path in ("shared.array", "local.array", "const.array_like"):
            raise ir.error(node, f"assign cuda.{path}(...) to a variable before using it")
        raise ir.error(node, f"cuda.{path} is not supported by gpusim")
