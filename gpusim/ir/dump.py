"""``Module.dump()``: the IR as a readable listing, one statement per line, with types and uniformity.

    kernel scale(a: array(float32, 1d, C, global), out: array(float32, 1d, C, global), s: float32)
      5: i = (int64(blockIdx.x) * int64(blockDim.x)) + int64(threadIdx.x)  # int64, lane
      6: if i < out.shape[0]:  # lane
      7:     out[i] = a[i] * s

Each line starts with its source line. Assignments end with the local's type and level, ``if``/``while``
with the condition's level, loops with the loop variable's type and level, the loop's level and its trip
count when known; ``break``/``continue``/``return`` with theirs. Conversions appear as calls of the type
(``int64(x)``); constants of a type other than int64, float64 or bool likewise (``float32(0.5)``).
"""

from __future__ import annotations

from . import nodes as N
from .types import BOOL, FLOAT64, INT64

_GROUPED = (N.Binary, N.Compare, N.Logical, N.Select, N.Let)


def _const(e: N.Const) -> str:
    if e.type in (INT64, FLOAT64, BOOL):
        return repr(e.value)
    return f"{e.type}({e.value!r})"


def expr(e: N.Expr) -> str:
    """One expression as text."""
    def sub(x: N.Expr) -> str:
        text = expr(x)
        return f"({text})" if isinstance(x, _GROUPED) or (isinstance(x, N.Unary) and x.op == "not") else text

    def args(xs) -> str:
        return ", ".join(expr(x) for x in xs)

    if isinstance(e, N.Const):
        return _const(e)
    if isinstance(e, N.Var):
        return e.name
    if isinstance(e, N.Special):
        return f"{e.name}()" if e.name == "lanemask_lt" else e.name
    if isinstance(e, N.Cast):
        return f"{e.type}({expr(e.value)})"
    if isinstance(e, N.Unary):
        return f"{N.SYMBOLS[e.op]}{sub(e.operand)}"
    if isinstance(e, (N.Binary, N.Compare)):
        return f"{sub(e.left)} {N.SYMBOLS[e.op]} {sub(e.right)}"
    if isinstance(e, N.Logical):
        return f"{sub(e.left)} {e.op} {sub(e.right)}"
    if isinstance(e, N.Select):
        return f"{sub(e.then)} if {sub(e.cond)} else {sub(e.orelse)}"
    if isinstance(e, N.Let):
        return f"let {e.name} = {expr(e.value)} in {sub(e.body)}"
    if isinstance(e, N.MakeTuple):
        return f"({expr(e.items[0])},)" if len(e.items) == 1 else f"({args(e.items)})"
    if isinstance(e, N.TupleItem):
        return f"{sub(e.value)}[{e.index}]"
    if isinstance(e, N.TupleIndex):
        return f"{sub(e.value)}[{expr(e.index)}]"
    if isinstance(e, N.Trap):
        return f"trap({e.message!r})"
    if isinstance(e, N.ConstArray):
        return e.name
    if isinstance(e, N.Load):
        return f"{expr(e.array)}[{args(e.index)}]"
    if isinstance(e, N.ArrayView):
        items, k = [], 0
        for kind in e.kinds:
            if kind == "i":
                items.append(expr(e.parts[k]))
                k += 1
                continue
            bounds = []
            for given in kind[1:]:
                bounds.append(expr(e.parts[k]) if given == "1" else "")
                k += int(given)
            items.append(":".join(bounds if bounds[2] else bounds[:2]))
        return f"{sub(e.array)}[{', '.join(items)}]"
    if isinstance(e, N.Reinterpret):
        return f"{sub(e.array)}.view({e.type.dtype})"
    if isinstance(e, N.Reshape):
        return f"{sub(e.array)}.reshape({args(e.shape)})"
    if isinstance(e, N.FieldView):
        return f"{sub(e.array)}.{e.field}"
    if isinstance(e, N.ArrayShape):
        return f"{expr(e.array)}.shape[{e.dim}]"
    if isinstance(e, N.ArraySize):
        return f"{expr(e.array)}.size"
    if isinstance(e, N.Intrinsic):
        return f"{e.name}({args(e.args)})"
    if isinstance(e, N.Fma):
        return f"fma({expr(e.a)}, {expr(e.b)}, {expr(e.c)})"
    if isinstance(e, N.Call):
        return f"{e.function}({args(e.args)})"
    if isinstance(e, N.Atomic):
        extra = f", {expr(e.compare)}" if e.compare is not None else ""
        return f"atomic.{e.op}({expr(e.array)}[{args(e.index)}]{extra}, {expr(e.value)})"
    if isinstance(e, N.Shuffle):
        name = "shfl_sync" if e.kind == "idx" else f"shfl_{e.kind}_sync"
        return f"{name}({expr(e.mask)}, {expr(e.value)}, {expr(e.lane)})"
    if isinstance(e, N.Vote):
        return f"{e.kind}_sync({expr(e.mask)}, {expr(e.predicate)})"
    if isinstance(e, N.Match):
        return f"match_{e.kind}_sync({expr(e.mask)}, {expr(e.value)})"
    if isinstance(e, N.ActiveMask):
        return "activemask()"
    if isinstance(e, N.BarrierReduce):
        return f"syncthreads_{e.op}({expr(e.predicate)})"
    raise TypeError(f"no text for {type(e).__name__}")  # pragma: no cover


class _Printer:
    def __init__(self, fn: N.Function, lines: bool):
        self.fn = fn
        self.lines = lines
        self.out: list[str] = []

    def emit(self, line: int, depth: int, text: str) -> None:
        prefix = f"{line:>4}: " if self.lines else ""
        self.out.append(f"{prefix}{'    ' * depth}{text}")

    def level(self, name: str) -> str:
        lvl = self.fn.var_uni.get(name)
        return "" if lvl is None else f", {lvl}"

    def block(self, stmts: list[N.Stmt], depth: int) -> None:
        for s in stmts:
            self.stmt(s, depth)

    def stmt(self, s: N.Stmt, depth: int) -> None:
        line = s.line
        if isinstance(s, N.Assign):
            self.emit(line, depth, f"{s.target} = {expr(s.value)}  # {s.value.type}{self.level(s.target)}")
        elif isinstance(s, N.Store):
            self.emit(line, depth, f"{expr(s.array)}[{', '.join(expr(i) for i in s.index)}] = {expr(s.value)}")
        elif isinstance(s, N.ExprStmt):
            self.emit(line, depth, expr(s.value))
        elif isinstance(s, N.SharedDecl):
            shape = s.shape[0] if len(s.shape) == 1 else s.shape
            note = "  # dynamic" if s.dynamic else ""
            self.emit(line, depth, f"{s.target} = shared.array({shape}, {s.dtype}){note}")
        elif isinstance(s, N.LocalDecl):
            shape = s.shape[0] if len(s.shape) == 1 else s.shape
            self.emit(line, depth, f"{s.target} = local.array({shape}, {s.dtype})")
        elif isinstance(s, N.If):
            self.emit(line, depth, f"if {expr(s.cond)}:  # {s.uni}")
            self.block(s.body, depth + 1)
            if s.orelse:
                self.emit(line, depth, "else:")
                self.block(s.orelse, depth + 1)
        elif isinstance(s, N.ForRange):
            trip = f"; trip {s.trip}" if s.trip is not None else ""
            var_type = s.start.type
            self.emit(line, depth, f"for {s.var} in range({expr(s.start)}, {expr(s.stop)}, {expr(s.step)}):  "
                                   f"# {s.var}: {var_type}{self.level(s.var)}; loop {s.uni}{trip}")
            self.block(s.body, depth + 1)
        elif isinstance(s, N.While):
            self.emit(line, depth, f"while {expr(s.cond)}:  # {s.uni}")
            self.block(s.body, depth + 1)
        elif isinstance(s, (N.Break, N.Continue)):
            self.emit(line, depth, f"{type(s).__name__.lower()}  # {s.uni}")
        elif isinstance(s, N.Return):
            value = f" {expr(s.value)}" if s.value is not None else ""
            self.emit(line, depth, f"return{value}  # {s.uni}")
        elif isinstance(s, N.Barrier):
            self.emit(line, depth, "syncthreads()")
        elif isinstance(s, N.SyncWarp):
            self.emit(line, depth, f"syncwarp({expr(s.mask)})")
        elif isinstance(s, N.Fence):
            self.emit(line, depth, "threadfence()" if s.scope == "device" else f"threadfence_{s.scope}()")
        elif isinstance(s, N.Print):
            items = ", ".join(repr(i) if isinstance(i, str) else expr(i) for i in s.items)
            self.emit(line, depth, f"print({items})")
        else:  # pragma: no cover
            raise TypeError(f"no text for {type(s).__name__}")

    def function(self) -> list[str]:
        fn = self.fn
        params = ", ".join(f"{p.name}: {p.type}, {p.uni}" for p in fn.params)
        if fn.is_kernel:
            head = f"kernel {fn.name}({params})"
        else:
            head = f"device {fn.name}({params}) -> {fn.return_type}, {fn.return_uni}"
        self.out.append(head)
        self.block(fn.body, 1 if not self.lines else 0)
        return self.out


def dump(module: N.Module, lines: bool = True) -> str:
    """The module's functions, the kernel first."""
    order = [module.kernel] + [name for name in module.functions if name != module.kernel]
    parts = ["\n".join(_Printer(module.functions[name], lines).function()) for name in order]
    return "\n\n".join(parts) + "\n"
