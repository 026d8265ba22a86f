"""Triton back end, memory: loads, stores and atomics on the three ways the program holds an array.

* **Pointer** arrays (``ArrayRef.kind == "ptr"``): global memory, module-level constant arrays, and shared
  arrays placed in the per-program *scratch* region of global memory. A load or store touches the active
  lanes only; at a block-uniform address it is one scalar access. Triton orders nothing between the lanes
  of a program, and the hardware thread that stores an element need not be the one that loads it later, so
  every scratch store and atomic is fenced with ``tl.debug_barrier()`` before (when an access since the
  last fence could conflict) and after: what CUDA orders within a thread, the fences order across the
  program (docs/triton.md; /work/shared/GPU_FACTS.md records the failure without them).
* **Register** shared arrays (``"reg"``): one element per thread, every store at the thread's own element
  (``s[threadIdx.x] = ...``, ``tile[ty, tx] = ...``): the array is a ``[lanes]`` tensor, a store is
  ``tl.where``, a load of another thread's element a ``tl.gather``. Values flow through registers, so no
  fence is needed. A store elsewhere, or an atomic, sends the array to scratch (``Respill``).
* **Local** arrays (``"local"``): a ``[lanes, L]`` table per thread, written and read with a one-hot mask.

In the interpreter (``guard``), pointer accesses are also masked to the array's extent, so a wrong index on
the CPU reads nothing outside it (the GPU, like CUDA, does not check).
"""

from __future__ import annotations

from ...ir import nodes as N
from ...ir.types import Scalar
from .expressions import operand, typed
from .values import ArrayRef, Val, tl_type


class Respill(Exception):
    """A shared array cannot stay in registers (a store at another thread's element, or an atomic)."""

    def __init__(self, decl: int, why: str):
        super().__init__(why)
        self.decl, self.why = decl, why


_ATOMICS = {"add": "tl.atomic_add", "sub": "tl.atomic_add", "max": "tl.atomic_max", "min": "tl.atomic_min",
            "exch": "tl.atomic_xchg", "and": "tl.atomic_and", "or": "tl.atomic_or", "xor": "tl.atomic_xor"}


class Memory:
    def __init__(self, guard: bool):
        self.guard = guard

    # -- helpers -------------------------------------------------------------------------------------------
    def bounds(self, ref: ArrayRef, off: Val) -> str:
        return f"({off.code} >= 0) & ({off.code} < {ref.numel})"

    def fence(self, g) -> None:
        if not g.fenced:
            g.emit("tl.debug_barrier()")
            g.fenced = True

    def own_lane(self, g, off: Val) -> bool:
        return off.affine is not None and off.affine == g.lane_affine

    # -- loads ---------------------------------------------------------------------------------------------
    def load(self, g, ref: ArrayRef, off: Val, ctx, e: N.Load) -> Val:
        t: Scalar = ref.dtype
        if ref.kind == "reg":
            return self.load_register(g, ref, off, ctx)
        if ref.kind == "local":
            return self.load_local(g, ref, off)
        addr = f"{ref.base} + {off.code}" if not (off.lit and off.value == 0) else ref.base
        name = g.tmp("_ld")
        if not off.vec:
            conds = [] if ctx.full else [ctx.any(g)]
            if self.guard:
                conds.append(self.bounds(ref, off))
            mask = f", mask={' & '.join(conds)}, other=0" if conds else ""
            g.emit(f"{name} = tl.load({addr}{mask})")
        else:
            mask = ctx.m
            if self.guard:
                mask = f"{mask} & {self.bounds(ref, off)}"
            g.emit(f"{name} = tl.load({addr}, mask={mask})")
        if ref.scratch:
            g.fenced = False
        code = name if not t.is_bool else f"({name} != 0)"
        return Val(code, t, vec=off.vec, pure=False)

    def load_register(self, g, ref: ArrayRef, off: Val, ctx) -> Val:
        t = ref.dtype
        if self.own_lane(g, off):
            code = ref.base
        elif off.vec:
            idx = f"{off.code}.to(tl.int32)"
            code = f"tl.gather({ref.base}, tl.where(({idx} >= 0) & ({idx} < {g.P}), {idx}, 0), 0)"
        else:
            return Val(g.pick(ref.base, t, f"(_lane == {off.code})", 0), t, pure=False)
        if t.is_bool:
            code = f"({code} != 0)"
        return Val(code, t, vec=True, pure=False)

    def load_local(self, g, ref: ArrayRef, off: Val) -> Val:
        hit = self.local_hit(ref, off)
        return Val(g.pick(ref.base, ref.dtype, hit, 1), ref.dtype, vec=True, pure=False)

    @staticmethod
    def local_hit(ref: ArrayRef, off: Val) -> str:
        cols = f"tl.arange(0, {ref.width})"
        if off.vec:
            return f"({cols}[None, :] == {off.code}[:, None])"
        return f"({cols} == {off.code})[None, :]"

    # -- stores --------------------------------------------------------------------------------------------
    def store(self, g, ref: ArrayRef, off: Val, val: Val, ctx, line: int) -> None:
        t: Scalar = ref.dtype
        if ref.kind == "reg":
            if not self.own_lane(g, off):
                raise Respill(ref.decl, "a store at another thread's element")
            v = g.vector(f"{typed(val)}.to(tl.int8)" if t.is_bool else typed(val), val.vec)
            g.emit(f"{ref.base} = {v}" if ctx.full else f"{ref.base} = tl.where({ctx.m}, {v}, {ref.base})")
            return
        if ref.kind == "local":
            hit = self.local_hit(ref, off)
            if not ctx.full:
                hit = f"{hit} & {ctx.m}[:, None]"
            v = typed(val)
            if t.is_bool:
                v = f"{v}.to(tl.int8)"
            if val.vec:
                v = f"{v}[:, None]"
            g.emit(f"{ref.base} = tl.where({hit}, {v}, {ref.base})")
            return
        addr = f"{ref.base} + {off.code}" if not (off.lit and off.value == 0) else ref.base
        v = typed(val)
        if ref.scratch:
            self.fence(g)
        if not off.vec and not val.vec:
            conds = [] if ctx.full else [ctx.any(g)]
            if self.guard:
                conds.append(self.bounds(ref, off))
            mask = f", mask={' & '.join(conds)}" if conds else ""
            g.emit(f"tl.store({addr}, {v}{mask})")
        else:
            mask = ctx.m
            if self.guard:
                mask = f"{mask} & {self.bounds(ref, off)}"
            g.emit(f"tl.store({g.vector(addr, off.vec)}, {v}, mask={mask})")
        if ref.scratch:
            g.fenced = False
            self.fence(g)

    # -- atomics -------------------------------------------------------------------------------------------
    def atomic(self, g, ref: ArrayRef, off: Val, val: Val, cmp: Val | None, ctx, e: N.Atomic) -> Val:
        if ref.kind == "reg":
            raise Respill(ref.decl, "an atomic")
        if ref.kind == "local":
            raise g.fail(e.line, "an atomic on a local array has no Triton translation")
        t: Scalar = ref.dtype
        if e.op not in _ATOMICS and e.op != "cas":
            raise g.fail(e.line, f"cuda.atomic.{e.op} has no Triton translation (Triton has no atomic "
                                 f"{'wrapping increment' if e.op in ('inc', 'dec') else e.op})")
        addr = g.vector(f"{ref.base} + {off.code}", off.vec)
        mask = ctx.m
        if self.guard:
            mask = f"{mask} & {self.bounds(ref, off)}"
        value = typed(val)
        if e.op == "sub":
            value = f"(-{value})" if t.signed else f"(0 - {value})"
        if ref.scratch:
            self.fence(g)
        name = g.tmp("_old")
        if e.op == "cas":
            dummy = g.cas_dummy(t)
            g.emit(f"{name} = tl.atomic_cas(tl.where({mask}, {addr}, {dummy}), {g.vector(typed(cmp), cmp.vec)}, "
                   f"{g.vector(value, val.vec)})")
        else:
            g.emit(f"{name} = {_ATOMICS[e.op]}({addr}, {g.vector(value, val.vec)}, mask={mask})")
        if ref.scratch:
            g.fenced = False
            self.fence(g)
        return Val(name, e.type, vec=True, pure=False)


def dtype_code(t: Scalar) -> str:
    return tl_type(t)


__all__ = ["Memory", "Respill", "operand"]
