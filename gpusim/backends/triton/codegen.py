"""Triton back end, statements: one kernel's IR -> the body of one ``@triton.jit`` program per CUDA block.

The mapping (docs/triton.md tells it with an example):

* **Block -> program, thread -> lane.** The block's ``T`` threads are the lanes of ``_lane = tl.arange(0, P)``
  (``P``: ``T`` rounded up to a power of two, at least a warp), numbered x-fastest as CUDA numbers them;
  ``_live`` masks the padding. ``blockIdx`` is ``tl.program_id`` per grid dimension.
* **Scalars and vectors.** A value the IR marks GRID or BLOCK (``gpusim.ir.uniformity``) is one scalar of the
  program; a WARP or LANE value is a ``[P]`` tensor.
* **Masks.** The lanes executing a statement are a boolean tensor. A block-uniform ``if`` is a Python ``if``
  (``scf.if``); a per-lane ``if`` runs both branches under ``mask & cond`` / ``mask & ~cond``, assignments
  merging with ``tl.where``. A per-lane loop runs while any lane is left in its mask (a ``tl.max``);
  ``break``/``continue``/``return`` taken by some lanes remove them from the masks. Taken by the whole block
  they set a scalar flag, and what follows them runs under ``if ~flag:``.
* **Variables.** Triton needs a variable defined before the control flow that assigns it, with one type and
  shape throughout: locals assigned inside control flow are defined first as zeros of their IR type, and a
  local that changes type is one program variable per type (``x_f64``).
* **Device functions** are inlined at each call, their locals prefixed.
* Memory: ``memory.py``; warps and block reductions: ``warps.py``; expressions: ``expressions.py``.
"""

from __future__ import annotations

import keyword
import linecache
from dataclasses import dataclass, field

from ...device import WARP_SIZE
from ...faults import UnsupportedConstruct
from ...ir import nodes as N
from ...ir.nodes import Uni
from ...ir.types import BOOL, INT64, Array, NoneType, Scalar, Tuple, Type
from ...ir.walk import walk_exprs, walk_stmts
from .expressions import ExpressionGen, literal, typed
from .memory import Memory
from .tiles import tile_product
from .values import BITS_OF, Affine, ArrayRef, Frame, Val, tl_type
from .warps import Warps

#: iterations up to which a loop whose start is a function of the thread is written out (``unrolled``)
UNROLL = 8
#: a loop of constant bounds that indexes a per-thread array is written out (``written_out``) up to this many
#: iterations, and loops nested in one another up to this many copies of the innermost body in all
STATIC_UNROLL = 16
UNROLL_BUDGET = 1024
_RESERVED = {"tl", "triton", "libdevice", "range", "min", "max", "int", "float", "bool", "print", "len", "abs",
             "True", "False", "None"}
#: names a kernel parameter must not have: Triton binds a launch's arguments in a function it writes
#: (``create_function_from_signature``) whose locals and globals are these, and whose ``**options`` get the
#: launch options; a parameter named ``params`` reached specialisation as that function's dict ("failed to
#: specialize argument of type: dict", puzzle 63 on the H200), ``num_warps`` or ``debug`` would be given twice
_TRITON_BINDER = {"params", "specialization", "options", "backend", "specialize_impl", "JITCallable", "grid",
                  "warmup", "debug", "num_warps", "num_stages", "num_ctas", "enable_fp_fusion", "maxnreg",
                  "launch_cooperative_grid", "launch_pdl"}
_RESERVED |= _TRITON_BINDER


class NotTranslatable(UnsupportedConstruct):
    """A construct of the kernel that the Triton back end cannot express (the message names it and the line)."""


def any_lane(mask: str) -> str:
    """A scalar: some lane of ``mask`` is set (written out: a helper call costs the interpreter dearly)."""
    return f"(tl.max({mask}.to(tl.int32), 0) > 0)"


def _constant(v: Val) -> int | None:
    """``v``'s value where the generator knows it: a literal, or a local assigned once a constant."""
    if v.lit:
        return int(v.value)
    f = v.affine
    if f is not None and not v.vec and f.fixed and f.x == f.y == f.z == 0:
        return f.c
    return None


def walk_exprs_of(st: N.Stmt):
    from ...ir.walk import children
    for e in children(st):
        yield from walk_exprs(e)


def _has_return(body: list[N.Stmt]) -> bool:
    return any(isinstance(s, N.Return) for s in walk_stmts(body))


@dataclass
class Exits:
    """The exits inside a statement that leave it: vector (some lanes) or scalar (the whole block)."""

    vret: bool = False
    sret: bool = False
    vbrk: bool = False
    sbrk: bool = False
    vcnt: bool = False
    scnt: bool = False

    @property
    def vector(self) -> bool:
        return self.vret or self.vbrk or self.vcnt

    @property
    def scalar(self) -> bool:
        return self.sret or self.sbrk or self.scnt


def exits(s: N.Stmt, in_loop: bool = False) -> Exits:
    ex = Exits()

    def walk(stmts: list[N.Stmt], nested_loop: bool) -> None:
        for x in stmts:
            vec = getattr(x, "uni", Uni.GRID) > Uni.BLOCK
            if isinstance(x, N.Return):
                ex.vret |= vec
                ex.sret |= not vec
            elif isinstance(x, N.Break) and not nested_loop:
                ex.vbrk |= vec
                ex.sbrk |= not vec
            elif isinstance(x, N.Continue) and not nested_loop:
                ex.vcnt |= vec
                ex.scnt |= not vec
            elif isinstance(x, N.If):
                walk(x.body, nested_loop)
                walk(x.orelse, nested_loop)
            elif isinstance(x, (N.ForRange, N.While)):
                walk(x.body, True)

    if isinstance(s, (N.ForRange, N.While)):
        walk(s.body, in_loop)
    elif isinstance(s, N.If):
        walk(s.body, False)
        walk(s.orelse, False)
    elif isinstance(s, (N.Return, N.Break, N.Continue)):
        walk([s], False)
    return ex


@dataclass
class Hoist:
    """A ``for`` loop being written, where tensors its body needs from register arrays may be computed
    before it: ``lines`` go in at ``pos`` (a placeholder in the output) when the loop is done. ``stored``: the
    register arrays its body stores into (None: unknown, nothing is hoisted); ``versions``: each array's
    version at the loop's start."""

    pos: int
    indent: int
    scope: int
    stored: set[int] | None
    versions: dict[int, int]
    lines: list = field(default_factory=list)


@dataclass
class Loop:
    vbrk: str = ""
    sbrk: str = ""
    vcnt: str = ""
    scnt: str = ""


class Ctx:
    """Where code is generated: the mask of executing lanes (a name), whether it is every live lane, the loop,
    the inlined function. ``narrowed`` makes a mask that is defined only if something uses it."""

    def __init__(self, mask: str, full: bool, loop: Loop | None, frame: Frame):
        self.mask, self.full, self.loop, self.frame = mask, full, loop, frame
        self.pending: str | None = None
        self.used = False
        self.any_name: str | None = None

    @property
    def m(self) -> str:
        self.used = True
        return self.mask

    def narrowed(self, cond: str, g) -> Ctx:
        name = g.tmp("_m")
        c = Ctx(name, False, self.loop, self.frame)
        c.pending = f"{name} = {self.m} & {cond}"
        return c

    def emit_mask(self, g, stmts: list) -> None:
        """Put the narrowed mask's definition before ``stmts`` (generated under it) if they use it."""
        if self.pending is not None and self.used:
            stmts.insert(0, (g.indent, self.pending, g.cur_line))
            self.pending = None

    def child(self, loop: Loop | None = None) -> Ctx:
        c = Ctx(self.mask, self.full, loop if loop is not None else self.loop, self.frame)
        c.any_name = self.any_name
        return c

    def any(self, g) -> str:
        """A scalar: some lane of the mask is active."""
        if self.any_name is None:
            self.any_name = g.tmp("_some")
            g.emit(f"{self.any_name} = {any_lane(self.m)}")
        return self.any_name


@dataclass
class Layout:
    """Where shared arrays live: register tensors, or byte offsets in the per-program scratch region."""

    register: set[int] = field(default_factory=set)
    offsets: dict[int, int] = field(default_factory=dict)
    static_bytes: int = 0
    dynamic_bytes: int = 0
    cas_offset: int | None = None

    @property
    def bytes_per_program(self) -> int:
        return self.static_bytes + self.dynamic_bytes + (16 if self.cas_offset is not None else 0)


def _sanitize(name: str) -> str:
    if name.startswith("$"):
        return "_v" + "".join(c if c.isalnum() else "_" for c in name[1:])
    if name in _RESERVED or keyword.iskeyword(name) or name.startswith("_"):
        return "v" + name if name.startswith("_") else "v_" + name
    return name


def _short(t: Type) -> str:
    if isinstance(t, Scalar):
        return {"bool": "b", "float16": "f16", "float32": "f32", "float64": "f64"}.get(t.name, t.name.replace(
            "uint", "u").replace("int", "i"))
    return "t"


class ProgramGen(ExpressionGen):
    def __init__(self, module: N.Module, block: tuple[int, int, int], dynamic_bytes: int, register: set[int],
                 guard: bool, planes: dict[int, list[Affine]] | None = None, tabled: set[int] | None = None):
        self.module = module
        self.block_shape = block
        self.threads = block[0] * block[1] * block[2]
        p = WARP_SIZE
        while p < self.threads:
            p *= 2
        self.P = p
        self.planes = planes if planes is not None else {}     # register arrays' store maps (kept over retries)
        self.tabled = tabled if tabled is not None else set()  # per-thread arrays held as [lanes, L] tables
        self.unroll_copies = 1                                 # copies of the body being written out now
        self.scratch_dot = False                               # a tl.dot reads scratch in the current loop
        self.guard = guard
        self.memory = Memory(guard)
        self.warps = Warps()
        self.out: list[tuple[int, str, int]] = []
        self._scopes: list[int] = []                           # one id per open Python block (``indent``)
        self._scope_ids = 0
        self.indent = 1
        self.versions: dict[int, int] = {}                     # register array -> stores so far
        self.views: dict[tuple, tuple[str, int]] = {}          # (decl, version, kind) -> (name, scope)
        self.hoists: list[Hoist] = []                          # the loops being written, outermost first
        self.sym_ranges: dict[str, range] = {}                 # loop variable (program name) -> its values
        self.cur_line = module.entry.line
        self.n = 0
        self.uses: set[str] = set()
        self.helpers: list[str] = []
        self.fenced = True
        self.frames: list[Frame] = []
        self.calls = 0
        self.layout = Layout(register=set(register), dynamic_bytes=dynamic_bytes)
        self.shared: dict[int, ArrayRef] = {}
        self.const_arrays: dict[int, tuple[str, N.ConstArray]] = {}
        self.params: list[tuple] = []      # what the kernel takes: see Program.params
        self.signature: list[str] = []

    # -- output ----------------------------------------------------------------------------------------------
    @property
    def indent(self) -> int:
        return len(self._scopes)

    @indent.setter
    def indent(self, depth: int) -> None:
        """The depth of the Python block being written; each block opened gets a new scope id."""
        del self._scopes[depth:]
        while len(self._scopes) < depth:
            self._scope_ids += 1
            self._scopes.append(self._scope_ids)

    def view(self, ref: ArrayRef, kind: tuple, build) -> str:
        """A tensor computed from a register array's planes (``build()`` emits it and returns its name), once
        per state of the array: where it is needed inside loops that store nothing into the array, before the
        outermost of them (the planes do not change there), else here. Reused while the array is not stored
        into and the block it was written in is open."""
        key = (ref.decl, self.versions.get(ref.decl, 0), kind)
        got = self.views.get(key)
        if got is not None and got[1] in self._scopes:
            return got[0]
        target = next((h for h in self.hoists if h.stored is not None and ref.decl not in h.stored and
                       h.versions.get(ref.decl, 0) == key[1]), None)
        if target is None:
            name = build()
            self.views[key] = (name, self._scopes[-1])
            return name
        saved, saved_scopes, self.out = self.out, self._scopes, []
        self._scopes = saved_scopes[:target.indent]       # the blocks outside the loop (their ids unchanged)
        try:
            name = build()
            target.lines += self.out
        finally:
            self.out = saved
            self._scopes = saved_scopes
        self.views[key] = (name, target.scope)
        return name

    def emit(self, code: str) -> None:
        self.out.append((self.indent, code, self.cur_line))

    def splice(self, stmts: list) -> None:
        self.out.extend(stmts)

    def tmp(self, prefix: str = "_t") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def sub(self, ctx: Ctx, e: N.Expr) -> tuple[list, Val]:
        saved, self.out = self.out, []
        try:
            v = self.expr(e, ctx)
            return self.out, v
        finally:
            self.out = saved

    def helper(self, name: str) -> str:
        if name not in self.helpers:
            self.helpers.append(name)
        return "_" + name

    def fail(self, line: int, message: str) -> NotTranslatable:
        fn = self.frames[-1].fn if self.frames else self.module.entry
        return NotTranslatable(f"the Triton back end cannot translate this: {message}", filename=fn.filename,
                               lineno=line, source_line=linecache.getline(fn.filename, line).rstrip("\n"))

    def norm(self, f: Affine | None) -> Affine | None:
        """``f`` without the coefficients of block dimensions of size 1 (their index is always 0)."""
        if f is None:
            return None
        _, by, bz = self.block_shape
        return Affine(f.x, f.y if by > 1 else 0, f.z if bz > 1 else 0, f.c, f.u)

    def vector(self, code: str, is_vec: bool) -> str:
        return code if is_vec else f"tl.broadcast_to({code}, ({self.P},))"

    def pick(self, base: str, t: Scalar, hit: str, axis: int) -> str:
        """The one element of ``base`` where ``hit`` holds, along ``axis``, bit for bit (a float is summed as
        the integer of its bits: every other term is 0, so even -0.0 and NaN come through)."""
        bits = BITS_OF.get(t.name)
        x = f"{base}.to({bits}, bitcast=True)" if bits else base
        code = f"tl.sum(tl.where({hit}, {x}, 0), {axis})"
        if bits:
            return f"{code}.to({bits}).to({tl_type(t)}, bitcast=True)"
        if t.is_bool:
            return f"({code} != 0)"
        return f"{code}.to({tl_type(t)})"

    def cas_dummy(self, t: Scalar) -> str:
        if self.layout.cas_offset is None:
            self.layout.cas_offset = -1                       # placed after the shared arrays
        self.uses.add("pid")
        return f"(_smem + _pid * SMEM_BYTES + CAS_OFFSET).to(tl.pointer_type({tl_type(t)}))"

    # -- locals ----------------------------------------------------------------------------------------------
    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def is_vec_local(self, name: str) -> bool:
        return self.frame.fn.var_uni.get(name.split("#")[0], Uni.GRID) > Uni.BLOCK

    def name_of(self, name: str, t: Type) -> str:
        key = (name, t)
        got = self.frame.names.get(key)
        if got is None:
            got = self.frame.prefix + _sanitize(name)
            if any(k[0] == name for k in self.frame.names):
                got += "_" + _short(t)
            self.frame.names[key] = got
        return got

    def local(self, name: str, t: Type, line: int) -> Val:
        if isinstance(t, Array):
            ref = self.frame.arrays.get(name)
            if ref is None:
                raise self.fail(line, f"the array {name!r} is not known here")
            return Val(name, t, array=ref)
        if isinstance(t, Tuple):
            items = [self.local(f"{name}#{k}", it, line) for k, it in enumerate(t.items)]
            return Val("", t, items=items, vec=any(i.vec for i in items))
        known = self.frame.consts.get(name)
        if known is not None and known.type == t:
            return known
        return Val(self.name_of(name, t), t, vec=self.is_vec_local(name), affine=self.frame.affine.get(name))

    def assign_local(self, name: str, t: Type, v: Val, ctx: Ctx, line: int, top: bool = False,
                     fresh: bool = False) -> None:
        """``name = v`` under ``ctx``'s mask (a per-lane local merges with ``tl.where`` where lanes are off;
        ``fresh``: a new variable, no merge: a parameter, a temporary)."""
        if isinstance(t, Array):
            old = self.frame.arrays.get(name)
            if old is not None and old is not v.array:
                raise self.fail(line, f"the array variable {name!r} refers to different arrays at different "
                                      "points; give each array its own name")
            self.frame.arrays[name] = v.array
            return
        if isinstance(t, Tuple):
            for k, (it, item) in enumerate(zip(t.items, v.items)):
                self.assign_local(f"{name}#{k}", it, item, ctx, line, top, fresh)
            return
        if isinstance(t, NoneType):
            return
        target = self.name_of(name, t)
        if self.is_vec_local(name):
            if ctx.full or fresh or name.startswith("$"):
                self.emit(f"{target} = {self.vector(typed(v), v.vec)}")
            else:
                self.emit(f"{target} = tl.where({ctx.m}, {typed(v)}, {target})")
        else:
            if v.vec:
                raise self.fail(line, f"{name!r} is the same in every thread of the block, but its value here is "
                                      "per thread")
            self.emit(f"{target} = {typed(v)}")
        self.frame.consts.pop(name, None)
        base = name.split("#")[0]
        # assigned once: wherever a correct kernel reads it, it holds this value (a read before the
        # assignment is a fault the simulator reports), so a fixed function of the thread index stays known
        if base in self.frame.single and v.affine is not None:
            self.frame.affine[name] = v.affine
        else:
            self.frame.affine.pop(name, None)

    def predeclare(self, fn: N.Function) -> None:
        """Define (as zeros) every local that control flow assigns, before any control flow."""
        nested: dict[str, set[Type]] = {}
        counts: dict[str, int] = {p.name: 1 for p in fn.params}
        anywhere = _has_return(fn.body[:-1]) or any(isinstance(s, (N.If, N.ForRange, N.While)) and
                                                     exits(s).scalar for s in fn.body)

        def record(name: str, t: Type, deep: bool) -> None:
            counts[name] = counts.get(name, 0) + 1
            if isinstance(t, Tuple):
                for k, it in enumerate(t.items):
                    record(f"{name}#{k}", it, deep)
                return
            if isinstance(t, Scalar) and (deep or anywhere):
                nested.setdefault(name, set()).add(t)

        def lets(e: N.Expr, deep: bool) -> None:
            from ...ir.walk import walk_exprs
            for x in walk_exprs(e):
                if isinstance(x, N.Let):
                    record(x.name, x.value.type, deep)

        def walk(stmts: list[N.Stmt], deep: bool) -> None:
            from ...ir.walk import children
            for s in stmts:
                for e in children(s):
                    lets(e, deep)
                if isinstance(s, N.Assign):
                    record(s.target, s.value.type, deep)
                elif isinstance(s, N.ForRange):
                    record(s.var, s.start.type, True)
                    counts[s.var] = counts.get(s.var, 0) + 1
                if isinstance(s, (N.If, N.ForRange, N.While)):
                    walk(s.body, True)
                    walk(getattr(s, "orelse", []), True)

        walk(fn.body, False)
        self.frame.single = {n for n, c in counts.items() if c == 1}
        for name in sorted(nested):
            for t in sorted(nested[name], key=str):
                target = self.name_of(name, t)
                zero = "0" if not t.is_bool else "0"
                if self.is_vec_local(name):
                    self.emit(f"{target} = tl.zeros([{self.P}], {tl_type(t)})")
                else:
                    self.emit(f"{target} = tl.full((), {zero}, {tl_type(t)})")

    # -- arrays ----------------------------------------------------------------------------------------------
    def array_of(self, e: N.Expr, ctx: Ctx) -> ArrayRef:
        v = self.expr(e, ctx)
        if v.array is None:
            raise self.fail(e.line, "this array expression has no Triton translation")
        return v.array

    def const_array(self, e: N.ConstArray) -> ArrayRef:
        key = id(e.data)
        if key not in self.const_arrays:
            name = f"_c{len(self.const_arrays)}"
            self.const_arrays[key] = (name, e)
        name = self.const_arrays[key][0]
        shape = [str(s) for s in e.data.shape]
        strides = [str(s // e.data.itemsize) for s in e.data.strides]
        return ArrayRef("ptr", name, e.type, shape, strides, e.name)

    def shared_ref(self, s: N.SharedDecl) -> ArrayRef:
        ref = self.shared.get(s.decl)
        if ref is not None:
            return ref
        t = Array(s.dtype, len(s.shape), "C", "shared")
        shape = list(s.shape)
        if s.dynamic:
            size = self.layout.dynamic_bytes // s.dtype.dtype.itemsize
            shape = [size]
        strides = []
        acc = 1
        for d in reversed(shape):
            strides.append(str(acc))
            acc *= d
        strides.reverse()
        numel = acc
        base = f"_sh{s.decl}_{_sanitize(s.name)}"
        if s.decl in self.layout.register and not s.dynamic:
            maps = self.planes.get(s.decl, [])
            names = [base] if len(maps) == 1 else [f"{base}_{k}" for k in range(len(maps))]
            ref = ArrayRef("reg", base, t, [str(d) for d in shape], strides, s.name, decl=s.decl,
                           planes=list(zip(maps, names)))
        else:
            if s.dynamic:
                off = -1
            else:
                off = self.layout.static_bytes
                self.layout.static_bytes += -(-numel * s.dtype.dtype.itemsize // 16) * 16
            self.layout.offsets[s.decl] = off
            self.uses.add("pid")
            ref = ArrayRef("ptr", base, t, [str(d) for d in shape], strides, s.name, decl=s.decl, scratch=True)
        self.shared[s.decl] = ref
        return ref

    def local_ref(self, s: N.LocalDecl) -> ArrayRef:
        numel = 1
        for d in s.shape:
            numel *= d
        width = 1
        while width < numel:
            width *= 2
        strides, acc = [], 1
        for d in reversed(s.shape):
            strides.append(str(acc))
            acc *= d
        strides.reverse()
        base = self.frame.prefix + f"_loc{s.decl}_{_sanitize(s.name)}"
        t = Array(s.dtype, len(s.shape), "C", "local")
        store = "tl.int8" if s.dtype.is_bool else tl_type(s.dtype)
        split = s.decl not in self.tabled and numel <= UNROLL_BUDGET
        if split:           # first try: every index a constant, each element a register of its own
            for k in range(numel):
                self.emit(f"{base}_{k} = tl.zeros([{self.P}], {store})")
        else:
            self.emit(f"{base} = tl.zeros([{self.P}, {width}], {store})")
        return ArrayRef("local", base, t, [str(d) for d in s.shape], strides, s.name, decl=s.decl, width=width,
                        split=split)

    # -- statements ------------------------------------------------------------------------------------------
    def block(self, body: list[N.Stmt], ctx: Ctx, top: bool = False) -> None:
        for k, s in enumerate(body):
            self.cur_line = s.line
            last = k == len(body) - 1
            if self.stmt(s, ctx, top, last):
                return
            ex = exits(s)
            if ex.vector:
                ctx = self.refreshed(ctx, ex)
            if ex.scalar and not last:
                flags = self.flags(ctx, ex)
                self.emit(f"if ~({flags}):")
                self.indent += 1
                mark = len(self.out)
                self.block(body[k + 1:], ctx.child(), False)
                if len(self.out) == mark:
                    self.emit("pass")
                self.indent -= 1
                return

    def refreshed(self, ctx: Ctx, ex: Exits) -> Ctx:
        terms = [ctx.m]
        if ex.vret:
            terms.append(f"~{self.done_mask()}")
        if ex.vbrk and ctx.loop is not None:
            terms.append(f"~{ctx.loop.vbrk}")
        if ex.vcnt and ctx.loop is not None:
            terms.append(f"~{ctx.loop.vcnt}")
        name = self.tmp("_m")
        self.emit(f"{name} = {' & '.join(terms)}")
        return Ctx(name, False, ctx.loop, ctx.frame)

    def flags(self, ctx: Ctx, ex: Exits) -> str:
        names = []
        if ex.sret:
            names.append(self.ret_flag())
        if ex.sbrk and ctx.loop is not None:
            names.append(ctx.loop.sbrk)
        if ex.scnt and ctx.loop is not None:
            names.append(ctx.loop.scnt)
        return " | ".join(names)

    def done_mask(self) -> str:
        return self.frame.done or "_done"

    def ret_flag(self) -> str:
        return (self.frame.prefix or "_") + "ret"

    def stmt(self, s: N.Stmt, ctx: Ctx, top: bool, last: bool) -> bool:
        """Generate one statement; True when the rest of the block is dead."""
        if isinstance(s, N.Assign):
            v = self.expr(s.value, ctx)
            # at a function's top level the lanes outside the mask have returned (or, in a device function,
            # are not calling it): none reads the local again, so there is nothing to merge with
            self.assign_local(s.target, s.value.type, v, ctx, s.line, top, fresh=top)
        elif isinstance(s, N.Store):
            ref = self.array_of(s.array, ctx)
            # a per-thread register takes the expression itself; anything else a temporary (computed once)
            val = self.expr(s.value, ctx) if ref.kind == "local" and ref.split else self.value(s.value, ctx)
            off = self.flat_index(ref, s.index, ctx)
            self.memory.store(self, ref, off, val, ctx, s.line)
        elif isinstance(s, N.ExprStmt):
            self.expr(s.value, ctx)
        elif isinstance(s, N.SharedDecl):
            self.frame.arrays[s.target] = self.shared_ref(s)
        elif isinstance(s, N.LocalDecl):
            self.frame.arrays[s.target] = self.local_ref(s)
        elif isinstance(s, N.If):
            self.if_stmt(s, ctx)
        elif isinstance(s, (N.ForRange, N.While)):
            self.loop(s, ctx)
        elif isinstance(s, N.Break):
            self.jump(s, ctx, "brk")
            return True
        elif isinstance(s, N.Continue):
            self.jump(s, ctx, "cnt")
            return True
        elif isinstance(s, N.Return):
            self.return_stmt(s, ctx, top and last)
            return True
        elif isinstance(s, (N.Barrier, N.SyncWarp, N.Fence)):
            if isinstance(s, N.Barrier) and s.grid:
                raise self.fail(s.line, "a grid group's sync() (Triton programs cannot wait for one another)")
            if isinstance(s, N.SyncWarp):
                self.expr(s.mask, ctx)
            self.emit("tl.debug_barrier()")
            self.fenced = True
        elif isinstance(s, N.Print):
            raise self.fail(s.line, "print() in a kernel (Triton prints every lane, not only those that execute it)")
        else:  # pragma: no cover - every statement of the IR is handled above
            raise self.fail(s.line, f"the statement {type(s).__name__}")
        return False

    def jump(self, s: N.Stmt, ctx: Ctx, kind: str) -> None:
        loop = ctx.loop
        if loop is None:  # pragma: no cover - the front end rejects a jump outside a loop
            raise self.fail(s.line, f"{kind} outside a loop")
        if s.uni > Uni.BLOCK:
            name = loop.vbrk if kind == "brk" else loop.vcnt
            self.emit(f"{name} = {name} | {ctx.m}")
        else:
            name = loop.sbrk if kind == "brk" else loop.scnt
            self.emit(f"{name} = {name} | True")

    def return_stmt(self, s: N.Return, ctx: Ctx, final: bool) -> None:
        fr = self.frame
        if s.value is not None and fr.result:
            v = self.expr(s.value, ctx)
            self.set_result(fr.fn.return_type, fr.result, v, ctx, fr.fn.return_uni > Uni.BLOCK, final)
        if final:
            return
        if s.uni > Uni.BLOCK:
            d = self.done_mask()
            self.emit(f"{d} = {d} | {ctx.m}")
        else:
            f = self.ret_flag()
            self.emit(f"{f} = {f} | True")

    def set_result(self, t: Type, target: str, v: Val, ctx: Ctx, vec: bool, final: bool) -> None:
        if isinstance(t, Tuple):
            for k, (it, item) in enumerate(zip(t.items, v.items)):
                self.set_result(it, f"{target}_{k}", item, ctx, vec, final)
            return
        if vec:
            if ctx.full or (final and not self.frame.done and not _has_return(self.frame.fn.body[:-1])):
                self.emit(f"{target} = {self.vector(typed(v), v.vec)}")
            else:
                self.emit(f"{target} = tl.where({ctx.m}, {typed(v)}, {target})")
        else:
            self.emit(f"{target} = {typed(v)}")

    def if_stmt(self, s: N.If, ctx: Ctx) -> None:
        c = self.value(s.cond, ctx)
        if c.lit:
            self.block(s.body if c.value else s.orelse, ctx.child())
            return
        if not c.vec:
            self.emit(f"if {c.code}:")
            self.branch(s.body, ctx.child())
            if s.orelse:
                self.emit("else:")
                self.branch(s.orelse, ctx.child())
            return
        fenced = self.fenced
        mt = self.tmp("_m")
        self.emit(f"{mt} = {ctx.m} & {c.code}")
        self.block(s.body, Ctx(mt, False, ctx.loop, ctx.frame))
        if s.orelse:
            self.fenced = self.fenced and fenced
            self.cur_line = s.line
            mf = self.tmp("_m")
            self.emit(f"{mf} = {ctx.m} & ~{c.code}")
            self.block(s.orelse, Ctx(mf, False, ctx.loop, ctx.frame))

    def branch(self, body: list[N.Stmt], ctx: Ctx) -> None:
        self.indent += 1
        mark = len(self.out)
        fenced = self.fenced
        self.block(body, ctx)
        if len(self.out) == mark:
            self.emit("pass")
        self.fenced = self.fenced and fenced
        self.indent -= 1

    # -- loops -----------------------------------------------------------------------------------------------
    def loop(self, s: N.ForRange | N.While, ctx: Ctx) -> None:
        inner = exits(s)
        vector = s.uni > Uni.BLOCK
        plain = not (inner.vector or inner.scalar or vector)
        if isinstance(s, N.ForRange):
            start, stop, step = (self.value(x, ctx) for x in (s.start, s.stop, s.step))
            if not (inner.vector or inner.scalar) and self.unrolled(s, ctx, start, stop, step):
                return
            if plain and tile_product(self, s, ctx, start, stop, step):
                return
            if plain and self.written_out(s, ctx, start, stop, step):
                return
            if plain and step.lit and step.value != 0:
                k = self.tmp("_k")
                hoist = Hoist(len(self.out), self.indent, self._scopes[-1], self.stored_in(s.body),
                              dict(self.versions))
                self.out.append((self.indent, None, s.line))     # the placeholder for what is hoisted
                self.hoists.append(hoist)
                head = len(self.out)
                self.emit(f"for {k} in range({typed(start)}, {typed(stop)}, {step.code}):")
                self.indent += 1
                self.fenced = False
                outer, self.scratch_dot = self.scratch_dot, False
                body_ctx = ctx.child(Loop())
                self.assign_local(s.var, s.start.type, Val(f"tl.cast({k}, {tl_type(s.start.type)})", s.start.type),
                                  body_ctx, s.line)
                sym = self.loop_symbol(s, start, stop, step)
                self.block(s.body, body_ctx)
                if sym is not None:          # the variable's value is known only inside the loop
                    self.sym_ranges.pop(sym, None)
                    for name, f in list(self.frame.affine.items()):
                        if any(v == sym for v, _ in f.u):
                            del self.frame.affine[name]
                self.hoists.pop()
                if self.scratch_dot:
                    # Triton may software-pipeline the loads that feed a tl.dot in a loop, loading the next
                    # step's scratch tile before this step's stores to it (only the program's barriers order
                    # them, and the pipeliner does not read those as a dependence): one stage. (triton 3.6 and
                    # 3.9 do not pipeline puzzle 49's tile loads either way: no async copy in its TTGIR.)
                    ind, code, line = self.out[head]
                    self.out[head] = (ind, f"for {k} in tl.range({typed(start)}, {typed(stop)}, {step.code}, "
                                           "num_stages=1):", line)
                self.scratch_dot = outer
                self.out[hoist.pos:hoist.pos + 1] = hoist.lines
                self.indent -= 1
                self.fenced = False
                return
            if step.lit and step.value == 0:
                raise self.fail(s.line, "range() with a step of 0")
            self.counted_loop(s, ctx, start, stop, step, inner, vector)
            return
        self.while_loop(s, ctx, inner, vector, plain)

    def loop_symbol(self, s: N.ForRange, start: Val, stop: Val, step: Val) -> str | None:
        """Inside a loop of constant bounds that nothing else assigns its variable, the variable is a known
        uniform term of the indices computed from it (``Affine.u``): its program name, with its range."""
        first, end = _constant(start), _constant(stop)
        values = range(first, end, int(step.value)) if first is not None and end is not None else range(0)
        if not values or s.uni > Uni.BLOCK or not isinstance(s.start.type, Scalar) or \
                any(isinstance(x, N.Assign) and x.target == s.var for x in walk_stmts(s.body)):
            return None
        sym = self.name_of(s.var, s.start.type)
        self.sym_ranges[sym] = values
        self.frame.affine[s.var] = Affine(u=((sym, 1),))
        return sym

    def stored_in(self, body: list[N.Stmt]) -> set[int] | None:
        """The register arrays that ``body`` stores into, or None where it cannot be told (a store through an
        array expression that is not a known variable, or a device function call)."""
        out: set[int] = set()
        for st in walk_stmts(body):
            exprs = list(walk_exprs_of(st))
            if any(isinstance(x, (N.Call, N.Atomic)) for x in exprs):
                return None
            if isinstance(st, N.Store):
                ref = self.frame.arrays.get(st.array.name) if isinstance(st.array, N.Var) else None
                if ref is None and not isinstance(st.array, N.Var):
                    return None
                if ref is not None and ref.decl is not None:
                    out.add(ref.decl)
                elif ref is None:
                    return None
        return out

    def unrolled(self, s: N.ForRange, ctx: Ctx, start: Val, stop: Val, step: Val) -> bool:
        """``for v in range(f(thread), STOP, STEP)`` with a start that is a fixed function of the thread and a
        few iterations: written out iteration by iteration, ``v`` a known function of the thread in each
        (so that ``tile[v, tx] = ...`` is a store pattern a register array can hold). True if done."""
        f = start.affine
        if not (start.vec and f is not None and f.fixed and stop.lit and step.lit and int(step.value) != 0):
            return False
        bx, by, bz = self.block_shape
        lo = hi = f.c
        for coef, size in ((f.x, bx), (f.y, by), (f.z, bz)):
            lo += min(0, coef * (size - 1))
            hi += max(0, coef * (size - 1))
        st, end = int(step.value), int(stop.value)

        def trips(v: int) -> int:
            return max(0, -(-(end - v) // st)) if st > 0 else max(0, -(-(v - end) // -st))

        most, least = max(trips(lo), trips(hi)), min(trips(lo), trips(hi))
        if not 1 <= most <= UNROLL:
            return False
        t = s.start.type
        for k in range(most):
            code = f"({start.code} + {k * st})" if k else start.code
            v = Val(code, t, vec=True, affine=f + Affine(c=k * st))
            if k < least:
                body = ctx.child(Loop())
            else:
                m = self.tmp("_m")
                self.emit(f"{m} = {ctx.m} & ({code} {'<' if st > 0 else '>'} {end})")
                body = Ctx(m, False, Loop(), ctx.frame)
            self.assign_local(s.var, t, v, body, s.line, fresh=True)
            self.frame.affine[s.var] = v.affine
            self.block(s.body, body)
            self.frame.affine.pop(s.var, None)
        return True

    def written_out(self, s: N.ForRange, ctx: Ctx, start: Val, stop: Val, step: Val) -> bool:
        """``for v in range(A, B, C)`` with constant bounds and a few iterations, whose body indexes a
        per-thread array held as one register per element: written out iteration by iteration with ``v`` a
        constant in each, so that every index is known and names its register, as a CUDA compiler unrolls
        such a loop (a ``[lanes, L]`` table would cost L operations per access). True if done."""
        if not (start.lit and stop.lit and step.lit and int(step.value) != 0):
            return False
        values = range(int(start.value), int(stop.value), int(step.value))
        if not 1 <= len(values) <= STATIC_UNROLL or self.unroll_copies * len(values) > UNROLL_BUDGET:
            return False
        if not self.indexes_split_local(s.body, s.var) or any(isinstance(x, N.Assign) and x.target == s.var
                                                       for x in walk_stmts(s.body)):
            return False
        t = s.start.type
        self.unroll_copies *= len(values)
        for value in values:       # each read of the variable is the constant: nothing assigns it inside
            body = ctx.child(Loop())
            self.frame.consts[s.var] = literal(value, t)
            self.block(s.body, body)
            self.frame.consts.pop(s.var, None)
        self.unroll_copies //= len(values)
        self.cur_line = s.line     # after the loop it holds its last value
        self.assign_local(s.var, t, literal(values[-1], t), ctx, s.line)
        return True

    def indexes_split_local(self, body: list[N.Stmt], var: str) -> bool:
        """Some load or store in ``body`` indexes a per-thread array of this frame held as registers, or some
        store a shared array held as register planes (``tile[ty + k * ROWS, tx] = ...``: each iteration's a
        store pattern of its own), with an index that depends on ``var`` (directly or through locals computed
        from it). A loop whose variable reaches no such index stays a loop: its body's own loops are written
        out where they index (puzzle 51's ``for q in range(BK)`` around its 8 x 8 register tile was 8 copies of
        80 statements)."""
        from ...ir.walk import children

        def names(e: N.Expr) -> set[str]:
            return {x.name for x in walk_exprs(e) if isinstance(x, N.Var)}

        tainted = {var}
        grew = True
        while grew:
            grew = False
            for st in walk_stmts(body):
                if isinstance(st, N.Assign) and st.target not in tainted and names(st.value) & tainted:
                    tainted.add(st.target)
                    grew = True
                elif isinstance(st, N.ForRange) and st.var not in tainted and \
                        (names(st.start) | names(st.stop) | names(st.step)) & tainted:
                    tainted.add(st.var)
                    grew = True

        def split(e: N.Expr) -> bool:
            ref = self.frame.arrays.get(e.name) if isinstance(e, N.Var) else None
            return ref is not None and ref.kind == "local" and ref.split

        def reaches(index: list[N.Expr]) -> bool:
            return any(names(i) & tainted for i in index)

        def register(e: N.Expr) -> bool:
            ref = self.frame.arrays.get(e.name) if isinstance(e, N.Var) else None
            return ref is not None and ref.kind == "reg"

        for st in walk_stmts(body):
            if isinstance(st, N.Store) and (split(st.array) or register(st.array)) and reaches(st.index):
                return True
            for e in children(st):
                if any(isinstance(x, N.Load) and split(x.array) and reaches(x.index) for x in walk_exprs(e)):
                    return True
        return False

    def loop_flags(self, inner: Exits) -> Loop:
        info = Loop()
        if inner.vbrk:
            info.vbrk = self.tmp("_brk")
            self.emit(f"{info.vbrk} = tl.zeros([{self.P}], tl.int1)")
        if inner.sbrk:
            info.sbrk = self.tmp("_sbrk")
            self.emit(f"{info.sbrk} = tl.full((), 0, tl.int1)")
        if inner.vcnt:
            info.vcnt = self.tmp("_cnt")
        if inner.scnt:
            info.scnt = self.tmp("_scnt")
        return info

    def stops(self, info: Loop, inner: Exits) -> list[str]:
        """Scalar flags that end the loop."""
        out = []
        if info.sbrk:
            out.append(f"~{info.sbrk}")
        if inner.sret:
            out.append(f"~{self.ret_flag()}")
        return out

    def body_start(self, info: Loop, inner: Exits) -> None:
        if info.vcnt:
            self.emit(f"{info.vcnt} = tl.zeros([{self.P}], tl.int1)")
        if info.scnt:
            self.emit(f"{info.scnt} = tl.full((), 0, tl.int1)")

    def lane_update(self, lm: str, info: Loop, inner: Exits) -> str:
        terms = [lm]
        if info.vbrk:
            terms.append(f"~{info.vbrk}")
        if inner.vret:
            terms.append(f"~{self.done_mask()}")
        return " & ".join(terms)

    def counted_loop(self, s: N.ForRange, ctx: Ctx, start: Val, stop: Val, step: Val, inner: Exits,
                     vector: bool) -> None:
        t = s.start.type
        iv = self.tmp("_iv")
        self.emit(f"{iv} = {self.vector(typed(start), start.vec) if vector else typed(start)}")
        if step.lit:
            cmp = "<" if step.value > 0 else ">"

            def cond(x: str) -> str:
                return f"({x} {cmp} {typed(stop)})"
        else:
            def cond(x: str) -> str:
                return (f"((({step.code} > 0) & ({x} < {typed(stop)})) | "
                        f"(({step.code} < 0) & ({x} > {typed(stop)})))")
        info = self.loop_flags(inner)
        stops = self.stops(info, inner)
        if vector:
            lm = self.tmp("_lm")
            self.emit(f"{lm} = {ctx.m} & {cond(iv)}")
            head = " & ".join([any_lane(lm)] + stops)
        else:
            lm = None
            head = " & ".join([cond(iv)] + stops)
        self.emit(f"while {head}:")
        self.indent += 1
        self.fenced = False
        body_ctx = self.body_ctx(ctx, lm, info, inner)
        self.body_start(info, inner)
        self.assign_local(s.var, t, Val(iv, t, vec=vector), body_ctx, s.line)
        self.block(s.body, body_ctx)
        self.emit(f"{iv} = {iv} + {typed(step)}")
        if vector:
            self.emit(f"{lm} = {self.lane_update(lm, info, inner)} & {cond(iv)}")
        self.indent -= 1
        self.fenced = False

    def body_ctx(self, ctx: Ctx, lm: str | None, info: Loop, inner: Exits) -> Ctx:
        if lm is not None:
            return Ctx(lm, False, info, ctx.frame)
        if inner.vret:       # lanes that returned in an earlier iteration stay out
            m = self.tmp("_m")
            self.emit(f"{m} = {ctx.m} & ~{self.done_mask()}")
            return Ctx(m, False, info, ctx.frame)
        return ctx.child(info)

    def while_loop(self, s: N.While, ctx: Ctx, inner: Exits, vector: bool, plain: bool) -> None:
        info = self.loop_flags(inner)
        stops = self.stops(info, inner)
        if not vector:
            stmts, c = self.sub(ctx, s.cond)
            if plain and not stmts and not c.vec:
                self.emit(f"while {c.code}:")
                self.fenced = False
                self.branch(s.body, ctx.child(info))
                self.fenced = False
                return
            go = self.tmp("_go")
            self.splice(stmts)
            self.emit(f"{go} = {typed(c)}")
            self.emit(f"while {' & '.join([go] + stops)}:")
            self.indent += 1
            self.fenced = False
            body_ctx = self.body_ctx(ctx, None, info, inner)
            self.body_start(info, inner)
            self.block(s.body, body_ctx)
            if stops:
                self.emit(f"if {' & '.join(stops)}:")
                self.indent += 1
            stmts, c = self.sub(ctx.child(), s.cond)
            self.splice([(ind + 0, code, line) for ind, code, line in stmts])
            self.emit(f"{go} = {typed(c)}")
            if stops:
                self.indent -= 1
            self.indent -= 1
            self.fenced = False
            return
        lm = self.tmp("_lm")
        self.emit(f"{lm} = {ctx.m}")
        cond_ctx = Ctx(lm, False, info, ctx.frame)
        c = self.value(s.cond, cond_ctx)
        self.emit(f"{lm} = {lm} & {self.vector(typed(c), c.vec)}")
        self.emit(f"while {' & '.join([any_lane(lm)] + stops)}:")
        self.indent += 1
        self.fenced = False
        body_ctx = Ctx(lm, False, info, ctx.frame)
        self.body_start(info, inner)
        self.block(s.body, body_ctx)
        if self.lane_update(lm, info, inner) != lm:
            self.emit(f"{lm} = {self.lane_update(lm, info, inner)}")
        cond_ctx = Ctx(lm, False, info, ctx.frame)
        c = self.value(s.cond, cond_ctx)
        self.emit(f"{lm} = {lm} & {self.vector(typed(c), c.vec)}")
        self.indent -= 1
        self.fenced = False

    # -- device functions --------------------------------------------------------------------------------------
    def inline(self, e: N.Call, ctx: Ctx) -> Val:
        fn = self.module.functions[e.function]
        if any(f.fn is fn for f in self.frames):  # device functions are inlined: a recursive one has no end
            raise self.fail(e.line, f"a recursive call of the device function {fn.py_name!r}")
        args = [self.value(a, ctx) for a in e.args]
        self.calls += 1
        prefix = f"_{_sanitize(fn.py_name).lstrip('_')}{self.calls}_"
        frame = Frame(fn, prefix)
        vec_result = fn.return_uni > Uni.BLOCK
        rt = fn.return_type
        if not isinstance(rt, NoneType):
            frame.result = prefix + "rv"
            self.declare_result(rt, frame.result, vec_result)
        if any(isinstance(s, N.Return) and s.uni > Uni.BLOCK for s in walk_stmts(fn.body)):
            frame.done = prefix + "done"
            self.emit(f"{frame.done} = tl.zeros([{self.P}], tl.int1)")
        if any(isinstance(s, N.Return) and s.uni <= Uni.BLOCK for s in walk_stmts(fn.body[:-1])) or \
                any(isinstance(s, (N.If, N.ForRange, N.While)) and exits(s).sret for s in fn.body):
            self.emit(f"{prefix}ret = tl.full((), 0, tl.int1)")
        self.frames.append(frame)
        try:
            inner = Ctx(ctx.m if not ctx.full else ctx.mask, ctx.full, None, frame)
            self.predeclare(fn)
            for p, a in zip(fn.params, args):
                self.assign_local(p.name, p.type, a, inner, e.line, top=True, fresh=True)
            self.block(fn.body, inner, top=True)
        finally:
            self.frames.pop()
        if isinstance(rt, NoneType):
            return Val("None", rt)
        return self.result_val(rt, frame.result, vec_result)

    def declare_result(self, t: Type, name: str, vec: bool) -> None:
        if isinstance(t, Tuple):
            for k, it in enumerate(t.items):
                self.declare_result(it, f"{name}_{k}", vec)
            return
        if not isinstance(t, Scalar):
            raise self.fail(self.cur_line, f"a device function returning {t}")
        if vec:
            self.emit(f"{name} = tl.zeros([{self.P}], {tl_type(t)})")
        else:
            self.emit(f"{name} = tl.full((), 0, {tl_type(t)})")

    def result_val(self, t: Type, name: str, vec: bool) -> Val:
        if isinstance(t, Tuple):
            items = [self.result_val(it, f"{name}_{k}", vec) for k, it in enumerate(t.items)]
            return Val("", t, items=items, vec=vec)
        return Val(name, t, vec=vec, pure=False)

    # -- the kernel ----------------------------------------------------------------------------------------------
    def kernel(self) -> list[tuple[int, str, int]]:
        fn = self.module.entry
        frame = Frame(fn, "")
        self.frames.append(frame)
        body_start = len(self.out)
        if any(isinstance(s, N.Return) and s.uni > Uni.BLOCK for s in walk_stmts(fn.body)):
            self.emit(f"_done = tl.zeros([{self.P}], tl.int1)")
        if any(isinstance(s, N.Return) and s.uni <= Uni.BLOCK for s in walk_stmts(fn.body[:-1])) or \
                any(isinstance(s, (N.If, N.ForRange, N.While)) and exits(s).sret for s in fn.body):
            self.emit("_ret = tl.full((), 0, tl.int1)")
        self.predeclare(fn)
        self.params_prologue(fn)
        ctx = Ctx("_live", True, None, frame)
        self.block(fn.body, ctx, top=True)
        body = self.out[body_start:]
        self.out = self.out[:body_start]
        self.geometry_prologue()
        self.frames.pop()
        return self.out + body

    def params_prologue(self, fn: N.Function) -> None:
        for p in fn.params:
            t = p.type
            if isinstance(t, Array):
                name = _sanitize(p.name)
                shape = [f"{name}_n{d}" for d in range(t.ndim)]
                self.params += [("array", p.name, name)] + [("shape", p.name, d, s) for d, s in enumerate(shape)]
                self.signature += ["*" + _sig(t.dtype)] + ["i64"] * t.ndim
                if t.layout == "C":
                    strides, acc = [], []
                    for d in range(t.ndim - 1, -1, -1):
                        strides.append(" * ".join(acc) if acc else "1")
                        acc.insert(0, shape[d])
                    strides.reverse()
                else:
                    strides = [f"{name}_s{d}" for d in range(t.ndim)]
                    self.params += [("stride", p.name, d, s) for d, s in enumerate(strides)]
                    self.signature += ["i64"] * t.ndim
                for s in shape + (strides if t.layout != "C" else []):
                    self.emit(f"{s} = tl.cast({s}, tl.int64)")
                self.frame.arrays[p.name] = ArrayRef("ptr", name, t, shape,
                                                     [s if "*" not in s else f"({s})" for s in strides], p.name)
                continue
            if not isinstance(t, Scalar):
                raise self.fail(fn.line, f"a kernel parameter of type {t}")
            raw = _sanitize(p.name) + ("_bits" if t.name == "float64" else "")
            self.params.append(("scalar", p.name, raw, t.name))
            self.signature.append("i64" if t.name == "float64" or t.is_int or t.is_bool else "fp32")
            if t.name == "float64":
                v = f"tl.cast({raw}, tl.int64).to(tl.float64, bitcast=True)"
            elif t.is_bool:
                v = f"(tl.cast({raw}, tl.int64) != 0)"
            else:
                v = f"tl.cast({raw}, {tl_type(t)})"
            self.assign_local(p.name, t, Val(v, t), Ctx("_live", True, None, self.frame), fn.line, top=True)

    def geometry_prologue(self) -> None:
        bx, by, bz = self.block_shape
        P, T = self.P, self.threads
        self.cur_line = self.module.entry.line
        for axis, reg in enumerate("xyz"):
            self.emit(f"_b{reg} = tl.program_id({axis})")
        for axis, reg in enumerate("xyz"):
            self.emit(f"_gd{reg} = tl.num_programs({axis})")
        self.emit(f"_lane = tl.arange(0, {P})")
        self.emit(f"_live = _lane < {T}" if T < P else f"_live = tl.full([{P}], 1, tl.int1)")
        self.emit("_tx = _lane" if by == bz == 1 else f"_tx = _lane % {bx}")
        self.emit(f"_ty = (_lane // {bx}) % {by}" if by > 1 else f"_ty = tl.zeros([{P}], tl.int32)")
        self.emit(f"_tz = _lane // {bx * by}" if bz > 1 else f"_tz = tl.zeros([{P}], tl.int32)")
        if "laneid" in self.uses:
            self.emit("_laneid = _lane & 31")
        if "pid" in self.uses:
            self.emit("_pid = (_bx + _gdx * (_by + _gdy * _bz)).to(tl.int64)")
        for decl, ref in sorted(self.shared.items()):
            if ref.kind == "reg":
                store = "tl.int8" if ref.dtype.is_bool else tl_type(ref.dtype)
                for _, tensor in ref.planes:
                    self.emit(f"{tensor} = tl.zeros([{P}], {store})")
            else:
                off = self.layout.offsets[decl]
                where = "SMEM_DYNAMIC" if off < 0 else str(off)
                self.emit(f"{ref.base} = (_smem + _pid * SMEM_BYTES + {where}).to("
                          f"tl.pointer_type({tl_type(ref.dtype)}))")


def _sig(t: Scalar) -> str:
    from .values import SIG_TYPES

    return SIG_TYPES[t.name]


__all__ = ["BOOL", "INT64", "NotTranslatable", "ProgramGen"]
