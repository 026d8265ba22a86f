"""Triton back end, memory: loads, stores and atomics on the three ways the program holds an array.

* **Pointer** arrays (``ArrayRef.kind == "ptr"``): global memory, module-level constant arrays, and shared
  arrays placed in the per-program *scratch* region of global memory. A load or store touches the active
  lanes only; at a block-uniform address it is one scalar access. Triton orders nothing between the lanes
  of a program, and the hardware thread that stores an element need not be the one that loads it later, so
  every scratch store and atomic is fenced with ``tl.debug_barrier()`` before (when an access since the
  last fence could conflict) and after: what CUDA orders within a thread, the fences order across the
  program (docs/triton.md; /work/shared/GPU_FACTS.md records the failure without them).
* **Register** shared arrays (``"reg"``): where every store puts a thread's value at an element that is a
  fixed one-to-one function of the thread index (``s[t] = ...``, ``tile[ty, tx] = ...``, ``s[t + 16] = ...``),
  the array is one ``[lanes]`` tensor per such function (a *plane*: what each thread stored there): a store
  is a ``tl.where``, a load inverts the functions to find the thread that stored the element and
  ``tl.gather``s it. Values flow through registers, so no fence is needed. Any other store, stores whose
  elements may overlap, or an atomic send the array to scratch (``Respill``).
* **Local** arrays (``"local"``): a ``[lanes, L]`` table per thread, written and read with a one-hot mask.

In the interpreter (``guard``), pointer accesses are also masked to the array's extent, so a wrong index on
the CPU reads nothing outside it (the GPU, like CUDA, does not check).
"""

from __future__ import annotations

from ...ir import nodes as N
from ...ir.types import INT8, Scalar
from .expressions import operand, typed
from .values import ArrayRef, Val, tl_type
from .views import transposed_load


class Respill(Exception):
    """A shared array cannot stay in registers (a store that is not at a fixed element of its thread, stores
    that may overlap, or an atomic): it goes to the scratch region."""

    def __init__(self, decl: int, why: str):
        super().__init__(why)
        self.decl, self.why = decl, why


class Retable(Exception):
    """A per-thread array held as one register per element is indexed with a value known only at run time:
    translate again with it as a ``[lanes, L]`` table."""

    def __init__(self, decl: int):
        super().__init__(decl)
        self.decl = decl


class NewPlane(Exception):
    """A register shared array has a store pattern not seen before: generate again, knowing it."""


_ATOMICS = {"add": "tl.atomic_add", "sub": "tl.atomic_add", "max": "tl.atomic_max", "min": "tl.atomic_min",
            "exch": "tl.atomic_xchg", "and": "tl.atomic_and", "or": "tl.atomic_or", "xor": "tl.atomic_xor"}


class Memory:
    def __init__(self, guard: bool):
        self.guard = guard

    # -- helpers -------------------------------------------------------------------------------------------
    def bounds(self, ref: ArrayRef, off: Val) -> str:
        return f"({off.code} >= 0) & ({off.code} < {ref.numel})"

    @staticmethod
    def address(ref: ArrayRef, off: Val) -> str:
        return ref.base if off.lit and off.value == 0 else f"{ref.base} + {off.code}"

    def mask(self, g, ref: ArrayRef, off: Val, ctx, scalar: bool) -> str:
        """The mask of a pointer access: the active lanes (for a scalar access, "some lane is active", or
        nothing when every lane is), and with ``guard`` the array's extent."""
        conds = ([] if ctx.full else [ctx.any(g)]) if scalar else [ctx.m]
        if self.guard:
            conds.append(self.bounds(ref, off))
        return " & ".join(conds)

    def fence(self, g) -> None:
        if not g.fenced:
            g.emit("tl.debug_barrier()")
            g.fenced = True

    @staticmethod
    def plane_span(g, f) -> int:
        bx, by, bz = g.block_shape
        return (bx - 1) + f.y * (by - 1) + f.z * (bz - 1)

    def check_plane(self, g, ref: ArrayRef, f) -> None:
        """A new store map of a register array: one-to-one, and its elements apart from every other plane's."""
        bx, by, bz = g.block_shape
        ok = f is not None and f.fixed and f.x == 1 and f.c >= 0 and (by == 1 or f.y >= bx) and \
            (bz == 1 or f.z >= f.y * (by - 1) + bx)
        if not ok:
            raise Respill(ref.decl, "a store at an element that is not a one-to-one function of the thread index")
        lo, hi = f.c, f.c + self.plane_span(g, f)
        for other, _ in ref.planes:
            olo, ohi = other.c, other.c + self.plane_span(g, other)
            if lo <= ohi and olo <= hi:
                raise Respill(ref.decl, "stores whose elements may overlap")

    def source_lane(self, g, f, off: Val) -> tuple[str, str]:
        """For the element ``off``: the lane that stores it through the map ``f``, and whether one does."""
        bx, by, bz = g.block_shape
        if off.lit:                      # a constant element: its thread is known now
            r = int(off.value) - f.c
            tz, rest = (r // f.z, r % f.z) if bz > 1 else (0, r)
            ty, tx = (rest // f.y, rest % f.y) if by > 1 else (0, rest)
            ok = 0 <= r <= self.plane_span(g, f) and tx < bx and ty < by and tz < bz
            return str(tx + bx * (ty + by * tz)), "True" if ok else "False"
        r = g.tmp("_e")
        g.emit(f"{r} = {off.code} - {f.c}" if f.c else f"{r} = {off.code}")
        ok = f"({r} >= 0) & ({r} <= {self.plane_span(g, f)})"
        if by == 1 and bz == 1:
            return f"{r}.to(tl.int32)", ok
        rest, tz = r, "0"
        if bz > 1:
            tz = g.tmp("_sz")
            g.emit(f"{tz} = {r} // {f.z}")
            rest = f"({r} - {tz} * {f.z})"
        ty = g.tmp("_sy")
        g.emit(f"{ty} = {rest} // {f.y}")
        tx = g.tmp("_sx")
        g.emit(f"{tx} = {rest} - {ty} * {f.y}")
        ok += f" & ({tx} < {bx}) & ({ty} < {by})"
        lane = f"{tx} + {bx} * {ty}" if bz == 1 else f"{tx} + {bx} * ({ty} + {by} * {tz})"
        return f"({lane}).to(tl.int32)", ok

    # -- loads ---------------------------------------------------------------------------------------------
    def load(self, g, ref: ArrayRef, off: Val, ctx, e: N.Load) -> Val:
        t: Scalar = ref.dtype
        if ref.kind == "reg":
            return self.load_register(g, ref, off, ctx)
        if ref.kind == "local":
            return self.load_local(g, ref, off)
        addr = self.address(ref, off)
        name = g.tmp("_ld")
        if not off.vec:
            mask = self.mask(g, ref, off, ctx, scalar=True)
            g.emit(f"{name} = tl.load({addr}{f', mask={mask}, other=0' if mask else ''})")
        else:
            g.emit(f"{name} = tl.load({addr}, mask={self.mask(g, ref, off, ctx, scalar=False)})")
        if ref.scratch:
            g.fenced = False
        code = name if not t.is_bool else f"({name} != 0)"
        return Val(code, t, vec=off.vec, pure=False)

    def load_register(self, g, ref: ArrayRef, off: Val, ctx) -> Val:
        t = ref.dtype
        f = g.norm(off.affine)
        for plane, tensor in ref.planes:
            if plane == f:                  # the thread's own element of this plane
                return Val(f"({tensor} != 0)" if t.is_bool else tensor, t, vec=True, pure=False)
        view = transposed_load(g, ref, off)
        if view is not None:                # the tile read by columns: a window of its transpose (views.py)
            return view
        store_t = "tl.int8" if t.is_bool else tl_type(t)
        code = f"tl.zeros([{g.P}], {store_t})" if off.vec else f"tl.full((), 0, {store_t})"
        for plane, tensor in ref.planes:
            src, ok = self.source_lane(g, plane, off)
            if ok == "False":            # a constant element no thread stores through this plane
                continue
            if off.vec:
                got = f"tl.gather({tensor}, tl.where({ok}, {src}, 0), 0)"
            else:
                got = g.pick(tensor, t if not t.is_bool else _INT8, f"(_lane == {src})", 0)
            name = g.tmp("_sv")
            g.emit(f"{name} = {got}" if ok == "True" else f"{name} = tl.where({ok}, {got}, {code})")
            code = name
        if t.is_bool:
            code = f"({code} != 0)"
        return Val(code, t, vec=off.vec, pure=False)

    def load_local(self, g, ref: ArrayRef, off: Val) -> Val:
        if ref.split:
            name = self.local_element(ref, off)
            t = ref.dtype
            return Val(f"({name} != 0)" if t.is_bool else name, t, vec=True, pure=False)
        hit = self.local_hit(ref, off)
        return Val(g.pick(ref.base, ref.dtype, hit, 1), ref.dtype, vec=True, pure=False)

    @staticmethod
    def local_element(ref: ArrayRef, off: Val) -> str:
        """The register of element ``off`` of a split per-thread array (``Retable`` unless ``off`` is a
        constant inside it: the simulator reports an index outside it as a fault)."""
        numel = 1
        for d in ref.shape:
            numel *= int(d)
        if not (off.lit and 0 <= int(off.value) < numel):
            raise Retable(ref.decl)
        return f"{ref.base}_{int(off.value)}"

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
            f = g.norm(off.affine)
            tensor = next((name for plane, name in ref.planes if plane == f), None)
            if tensor is None:
                self.check_plane(g, ref, f)
                g.planes.setdefault(ref.decl, []).append(f)
                raise NewPlane()
            v = g.vector(f"{typed(val)}.to(tl.int8)" if t.is_bool else typed(val), val.vec)
            g.emit(f"{tensor} = {v}" if ctx.full else f"{tensor} = tl.where({ctx.m}, {v}, {tensor})")
            g.versions[ref.decl] = g.versions.get(ref.decl, 0) + 1     # tensors made from the planes are stale
            return
        if ref.kind == "local" and ref.split:
            name = self.local_element(ref, off)
            v = g.vector(f"{typed(val)}.to(tl.int8)" if t.is_bool else typed(val), val.vec)
            g.emit(f"{name} = {v}" if ctx.full else f"{name} = tl.where({ctx.m}, {v}, {name})")
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
        addr = self.address(ref, off)
        v = typed(val)
        if ref.scratch:
            self.fence(g)
        if not off.vec and not val.vec:
            mask = self.mask(g, ref, off, ctx, scalar=True)
            g.emit(f"tl.store({addr}, {v}{f', mask={mask}' if mask else ''})")
        else:
            g.emit(f"tl.store({g.vector(addr, off.vec)}, {v}, mask={self.mask(g, ref, off, ctx, scalar=False)})")
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
        mask = self.mask(g, ref, off, ctx, scalar=False)
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


_INT8 = INT8


def dtype_code(t: Scalar) -> str:
    return tl_type(t)


__all__ = ["Memory", "Respill", "operand"]
