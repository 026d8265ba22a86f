"""Triton back end, warp and block operations: CUDA's warps are groups of 32 consecutive lanes.

* A shuffle reads another lane's value: a ``tl.gather`` over the lanes with the source lane computed as CUDA
  computes it (within the lane's warp; a source outside the warp or past the block gives the lane's own
  value). A shuffle of a block-uniform value is that value.
* Votes, ``activemask`` and ``match_*`` reshape the lanes to ``(warps, 32)``, reduce each row and broadcast
  the row's result back to its 32 lanes (the helpers ``_ballot`` and ``_match_any``).
* ``syncthreads_count/and/or`` reduce over every lane of the program: one scalar for the block.

Only the lanes executing the operation (the mask) and named in its member mask take part, as on the GPU.
"""

from __future__ import annotations

from ...device import WARP_SIZE
from ...ir import nodes as N
from ...ir.types import BOOL, INT32, UINT32, Tuple
from .expressions import literal, typed
from .values import Val, tl_type

FULL = 0xFFFFFFFF


class Warps:
    def participants(self, g, mask: Val, ctx) -> str:
        """The lanes taking part: active here and in the member mask."""
        active = ctx.m if not ctx.full else "_live"
        if mask.lit and (int(mask.value) & FULL) == FULL:
            return active
        g.uses.add("laneid")
        return f"({active} & (((({typed(mask)}).to(tl.int64) >> _laneid.to(tl.int64)) & 1) != 0))"

    def shuffle(self, g, e: N.Shuffle, ctx) -> Val:
        v = g.value(e.value, ctx)
        if not v.vec:
            return v
        a = g.value(e.lane, ctx)
        g.uses.add("laneid")
        k = literal(int(a.value) & (WARP_SIZE - 1), INT32) if a.lit else \
            Val(f"({a.code}.to(tl.int32) & {WARP_SIZE - 1})", INT32, vec=a.vec)
        base = "(_lane - _laneid)"
        src = {"idx": f"{base} + {k.code}",
               "up": f"tl.where(_laneid >= {k.code}, _lane - {k.code}, _lane)",
               "down": f"tl.where(_laneid + {k.code} < {WARP_SIZE}, _lane + {k.code}, _lane)",
               "xor": f"{base} + (_laneid ^ {k.code})"}[e.kind]
        if g.threads < g.P:
            src = f"tl.where(({src}) < {g.threads}, {src}, _lane)"
        idx = g.tmp("_src")
        g.emit(f"{idx} = {src}")
        x = g.vector(typed(v), v.vec)
        if v.scalar_type.is_bool:
            return Val(f"(tl.gather({x}.to(tl.int8), {idx}, 0) != 0)", v.type, vec=True, pure=False)
        name = g.tmp("_shfl")
        g.emit(f"{name} = tl.gather({x}, {idx}, 0)")
        return Val(name, v.type, vec=True, pure=False)

    def ballot_of(self, g, pred: str) -> str:
        fn = g.helper("ballot")
        name = g.tmp("_bal")
        g.emit(f"{name} = {fn}({pred}, {g.P})")
        return name

    def vote(self, g, e: N.Vote, ctx) -> Val:
        mask = g.value(e.mask, ctx)
        p = g.value(e.predicate, ctx)
        part = g.tmp("_part")
        g.emit(f"{part} = {self.participants(g, mask, ctx)}")
        pred = g.vector(f"({typed(p)} != 0)" if p.type != BOOL else typed(p), p.vec)
        yes = self.ballot_of(g, f"{part} & {pred}")
        if e.kind == "ballot":
            return Val(f"{yes}.to({tl_type(e.type)})", e.type, vec=True, pure=False)
        if e.kind == "any":
            return Val(f"({yes} != 0)", BOOL, vec=True, pure=False)
        every = self.ballot_of(g, part)
        if e.kind == "all":
            return Val(f"({yes} == {every})", BOOL, vec=True, pure=False)
        return Val(f"(({yes} == {every}) | ({yes} == 0))", BOOL, vec=True, pure=False)

    def active_mask(self, g, e: N.ActiveMask, ctx) -> Val:
        bits = self.ballot_of(g, ctx.m if not ctx.full else "_live")
        return Val(f"{bits}.to(tl.uint32)", UINT32, vec=True, pure=False)

    def match(self, g, e: N.Match, ctx) -> Val:
        mask = g.value(e.mask, ctx)
        v = g.value(e.value, ctx)
        part = g.tmp("_part")
        g.emit(f"{part} = {self.participants(g, mask, ctx)}")
        fn = g.helper("match_any")
        same = g.tmp("_same")
        g.emit(f"{same} = {fn}({g.vector(typed(v), v.vec)}, {part}, {g.P})")
        if e.kind == "any":
            return Val(f"{same}.to({tl_type(e.type)})", e.type, vec=True, pure=False)
        every = self.ballot_of(g, part)
        ok = g.tmp("_all")
        g.emit(f"{ok} = {same} == {every}")
        t: Tuple = e.type
        bits = Val(f"tl.where({ok}, {every}, 0).to({tl_type(t.items[0])})", t.items[0], vec=True, pure=False)
        return Val("", t, vec=True, items=[bits, Val(ok, BOOL, vec=True, pure=False)])

    def barrier_reduce(self, g, e: N.BarrierReduce, ctx) -> Val:
        p = g.value(e.predicate, ctx)
        active = ctx.m if not ctx.full else "_live"
        g.fenced = False
        g.memory.fence(g)
        count = g.tmp("_count")
        g.emit(f"{count} = tl.sum(({g.vector(f'({typed(p)} != 0)', p.vec)} & {active}).to(tl.int32), 0)")
        if e.op == "count":
            return Val(count, INT32)
        if e.op == "or":
            return Val(f"({count} > 0).to(tl.int32)", INT32)
        return Val(f"({count} == tl.sum({active}.to(tl.int32), 0)).to(tl.int32)", INT32)
