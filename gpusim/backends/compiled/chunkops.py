"""Chunk operations: what needs whole lane vectors — barriers and their reductions, warp intrinsics, NumPy math
over the lanes (so its bits are NumPy's, as in the lanes back end), traps, checks of unassigned locals, and
inlined device-function calls — and the assembly of the generated module.
"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as N
from ...ir.nodes import Uni
from ...ir.types import BOOL, Scalar, Tuple
from ..lanes.work import straight_line
from .analysis import lanes_scalar, maybe_unassigned
from .external import desc_index
from .flatten import ArrayRef, Op
from .layout import (
    FK_NONE,
    FK_TRAP,
    FK_UNBOUND,
    FLOP_DTYPES,
    FLOP_OPS,
    G_B0,
    G_B1,
    G_BDX,
    G_BDY,
    G_BDZ,
    G_GDX,
    G_GDY,
    G_GDZ,
    G_MAX_STEPS,
    G_NTHREADS,
    G_NW,
    G_T,
    G_TMAX_BLOCKS,
    G_TMAX_ROWS,
    I_ABORT,
    I_BBLK,
    I_BLOG,
    SHUFFLE_KINDS,
    WHAT,
)
from .naming import clean as _clean
from .rt_math import DTYPES, NAMES
from .values import CTOR, NotCompiled, ctor, zero

COMMON_ARGS = ("G", "I", "RS", "EV", "EL", "FL", "FLT", "SHB", "REG", "ALOG", "tx_", "ty_", "tz_", "ln_", "lml_",
               "lb_", "ALL_", "gw_", "present_", "DESC")
GROWN = ("TR", "BLOG", "BBLK")
RET = "return TR, BLOG, BBLK"
#: straight-line device functions inlined as expressions (off: see ``ChunkOps.straight``)
INLINE_EXPRESSIONS = False


class ChunkOps:
    def chunk_op(self, what: str, line: int, g: str | None, **kw) -> None:
        guard = self.materialize(g, BOOL, line) if g is not None else None
        self.emit_op(Op("chunk", line, args={"what": what, "guard": guard, **kw}))

    def guard_array(self, op: Op, mask: str) -> str:
        g = op.args.get("guard")
        if g is None:
            return mask
        return self.render(g, local=False).replace("[l]", "")

    def arr(self, v: str) -> str:
        """The lane array holding temporary ``v``."""
        return self.render(v, local=False).replace("[l]", "")

    def abort(self) -> None:
        self.line(f"I[{I_ABORT}] = 1")
        self.line(RET)

    # -- dispatch ---------------------------------------------------------------------------------------------
    def chunk_code(self, op: Op, mask: str) -> None:
        L = self.line
        if op.kind == "check":
            key = self.fault_key("KernelError", op.line, None, ())
            if "state" in op.args:
                L(f"if {op.args['state']} == 0:")
                self.indent += 1
                L(f"X.fault(DESC.ctypes, {key}, 1, {FK_NONE}, -1, 0, 0)")
            else:
                flag = op.args["assigned"]
                self.grid_vars[flag] = Scalar("bool")
                if op.args["name"] not in self.var_names:
                    self.var_names.append(op.args["name"])
                L(f"if not {flag}:")
                self.indent += 1
                L(f"X.fault(DESC.ctypes, {key}, 1, {FK_UNBOUND}, -1, {self.var_names.index(op.args['name'])}, 0)")
            self.abort()
            self.indent -= 1
            return
        what = op.args["what"]
        gm = self.guard_array(op, mask)
        if what == "trap":
            key = self.fault_key("KernelError", op.line, None, ())
            if op.args["message"] not in self.messages:
                self.messages.append(op.args["message"])
            L(f"fl_ = X.first_lane({gm}.ctypes, N)")
            L("if fl_ >= 0:")
            self.indent += 1
            L(f"X.fault(DESC.ctypes, {key}, 1, {FK_TRAP}, gt0 + fl_, {self.messages.index(op.args['message'])}, 0)")
            self.abort()
            self.indent -= 1
        elif what == "math":
            self.math_code(op, gm)
        elif what == "call":
            self.call_code(op, gm)
        elif what in ("shuffle", "vote", "match", "activemask", "syncwarp"):
            self.warp_code(op, gm, what)
        elif what == "barrierreduce":
            e = op.args["node"]
            self.barrier(gm, op.line)
            pred = self.arr(op.args["ins"]["predicate"][0])
            out = op.args["outs"][0]
            op_id = ("count", "and", "or").index(e.op)
            L(f"X.block_reduce({op_id}, {gm}.ctypes, {pred}.ctypes, nb, T, {out}_a.ctypes)")
        else:  # pragma: no cover
            raise NotCompiled(f"chunk operation {what}")

    # -- barriers ---------------------------------------------------------------------------------------------
    def barrier(self, mask: str, line: int) -> None:
        key = self.fault_key("BarrierDivergence", line, None, ())
        if self.trace:
            self.line(f"if I[{I_BLOG}] + 1 > BLOG.shape[0] or I[{I_BBLK}] + nb > BBLK.shape[0]:")
            self.line(f"    BLOG, BBLK = R.grow_trace_barriers(BLOG, BBLK, I, nb, DESC, {desc_index('BLOG')}, "
                      f"{desc_index('BBLK')})")
        self.line(f"X.barrier(DESC.ctypes, {mask}.ctypes, dn0.ctypes, nb, b0, {key}, {line}, {1 if self.trace else 0})")

    # -- NumPy math -----------------------------------------------------------------------------------------
    def math_code(self, op: Op, gm: str) -> None:
        L = self.line
        a = op.args
        t = a["type"]
        res_t = t.items[0] if isinstance(t, Tuple) else t

        ins = [self.arr(v) for v in a["ins"]]
        scal = [1 if sc else 0 for sc in a["scalars"]]
        if len(ins) == 1:
            ins.append(ins[0])
            scal.append(scal[0])
        outs = [f"{o}_a" for o in a["outs"]]
        if len(outs) == 1:
            outs.append(outs[0])
        dtn = (a["arg_types"][0] if isinstance(t, Tuple) else t).name
        L(f"R_M.math_call({NAMES.index(a['name'])}, N, {ins[0]}, {scal[0]}, {ins[1]}, {scal[1]}, {outs[0]}, "
          f"{outs[1]}, {DTYPES.index(dtn)})")
        if a["flop"]:
            fo, fd = FLOP_OPS.index(a["flop"]), FLOP_DTYPES.index(res_t.name)
            L(f"FL[{fo}, {fd}] += X.count_lanes({gm}.ctypes, N)")
            L(f"FLT[{fo}, {fd}] = True")

    def dtype_const(self, t: Scalar) -> str:
        name = f"_DT_{t.name}"
        self.dtypes.add(t.name)
        return name

    # -- warps ------------------------------------------------------------------------------------------------
    def warp_code(self, op: Op, gm: str, what: str) -> None:
        L = self.line
        a = op.args
        e = a.get("node")
        ins = {k: self.arr(v[0]) for k, v in a["ins"].items()}
        line = op.line
        key_out = self.fault_key("BarrierDivergence", line, None, ("mask",))
        key_miss = self.fault_key("BarrierDivergence", line, None, ())
        if what == "activemask":
            L(f"X.warp_bits({gm}.ctypes, N, T, {a['outs'][0]}_a.ctypes)")
            return
        if what == "syncwarp":
            wid = WHAT.index("syncwarp()")
        elif what == "shuffle":
            wid = 1 + SHUFFLE_KINDS.index(e.kind)
        elif what == "vote":
            wid = WHAT.index(f"{e.kind}_sync()")
        else:
            wid = WHAT.index(f"match_{e.kind}_sync()")
        L(f"new_ = X.warp_mask(DESC.ctypes, {gm}.ctypes, {ins['mask']}.ctypes, dn0.ctypes, N, {wid}, {key_out}, "
          f"{key_miss}, b0, wact_.ctypes, wlive_.ctypes)")
        if what == "syncwarp":
            L(f"X.syncwarp(DESC.ctypes, {gm}.ctypes, N, b0)")
            return
        out = a["outs"][0]
        if what == "shuffle":
            # a value the lanes back end holds as a NumPy scalar comes back unchanged, unchecked
            rs = lanes_scalar(e.value, self.state_of)
            if rs is True:
                L(f"{out}_a[:N] = {ins['value']}[:N]")
                return
            kid = SHUFFLE_KINDS.index(e.kind)
            key_src = self.fault_key("BarrierDivergence", line, None, ("source",))
            if rs is not False:
                L(f"if {rs}:")
                L(f"    {out}_a[:N] = {ins['value']}[:N]")
                L("else:")
                self.indent += 1
            L(f"X.shuffle_src({kid}, {ins['lane']}.ctypes, N, T, wsrc_.ctypes)")
            L("if not new_:")
            L(f"    X.shuffle_check(DESC.ctypes, {gm}.ctypes, dn0.ctypes, wsrc_.ctypes, N, {kid}, {key_src}, b0)")
            L("for l in range(N):")
            L(f"    {out}_a[l] = {ins['value']}[wsrc_[l]]")
            if rs is not False:
                self.indent -= 1
            return
        L(f"X.in_mask({gm}.ctypes, {ins['mask']}.ctypes, N, T, wpart_.ctypes)")
        if what == "vote":
            kind = ("ballot", "any", "all", "eq").index(e.kind)
            if kind == 0:
                L(f"X.vote(0, wpart_.ctypes, {ins['predicate']}.ctypes, N, T, {out}_a.ctypes, wlive_.ctypes)")
            else:
                L(f"X.vote({kind}, wpart_.ctypes, {ins['predicate']}.ctypes, N, T, wi32_.ctypes, {out}_a.ctypes)")
        else:
            self.match_code(e, ins["value"], out, a["outs"][1] if len(a["outs"]) > 1 else None)

    def param_bindings(self) -> list[str]:
        """The kernel's scalar arguments, bound at the start of every chunk (as the lanes back end calls the
        kernel function anew): a GRID local, or a lane local holding the same value in every lane."""
        out = []
        fn = self.module.entry
        for i, name in self.scalar_params:
            p = fn.params[i]
            key = f"{_clean(p.name)}__{p.type}"
            if fn.var_uni.get(p.name, Uni.GRID) == Uni.GRID:
                self.grid_vars[f"g_{key}"] = p.type
                out.append(f"g_{key} = {name}")
                out.append(f"A_{_clean(p.name)}__x = True")
                self.grid_vars[f"A_{_clean(p.name)}__x"] = Scalar("bool")
            else:
                self.lane_arrays[f"v_{key}"] = p.type
                out.append(f"v_{key}[:N] = {name}")
                out.append(f"S_{_clean(p.name)} = 1")
                self.states.add(f"S_{_clean(p.name)}")
        return out

    def match_code(self, e, value: str, out: str, ok: str | None) -> None:
        """``match_any_sync``/``match_all_sync`` over the participating lanes (``wpart_``) of each warp."""
        L = self.line
        L("l0_ = 0")
        L("while l0_ < N:")
        self.indent += 1
        L("w0_ = l0_ - (l0_ % T) % 32")
        L("ws_ = min(32, T - ((l0_ % T) // 32) * 32)")
        L("pb_ = np.uint32(0)")
        L("for q_ in range(ws_):")
        L("    if wpart_[w0_ + q_]:")
        L("        pb_ |= np.uint32(1) << np.uint32(q_)")
        L("for q_ in range(ws_):")
        L("    bt_ = np.uint32(0)")
        L("    for r_ in range(ws_):")
        L(f"        if wpart_[w0_ + r_] and {value}[w0_ + r_] == {value}[w0_ + q_]:")
        L("            bt_ |= np.uint32(1) << np.uint32(r_)")
        if e.kind == "any":
            L(f"    {out}_a[w0_ + q_] = np.int32(np.int64(bt_) - 4294967296 if bt_ >= 2147483648 else bt_)")
        else:
            L("    ok_ = bt_ == pb_")
            L("    rr_ = pb_ if ok_ else np.uint32(0)")
            L(f"    {out}_a[w0_ + q_] = np.int32(np.int64(rr_) - 4294967296 if rr_ >= 2147483648 else rr_)")
            if ok:
                L(f"    {ok}_a[w0_ + q_] = ok_")
        L("l0_ = w0_ + ws_")
        self.indent -= 1

    # -- calls ------------------------------------------------------------------------------------------------
    @staticmethod
    def straight(fn: N.Function) -> bool:
        """A device function that is assignments and one final unconditional ``return``: inlined as
        expressions (its locals are values of the caller's lane loop), not as a call. Off: the lanes back
        end charges the step budget at each call's entry, in order with the caller's statements, which an
        expression inside a lane loop cannot (``call_code`` does)."""
        if INLINE_EXPRESSIONS is False:
            return False
        body = fn.body
        if not body or not isinstance(body[-1], N.Return) or body[-1].uni > Uni.GRID:
            return False
        return all(isinstance(s, N.Assign) for s in body[:-1]) and not maybe_unassigned(fn)

    def inline_call(self, fn: N.Function, values: list, g: str | None):
        from .codegen import Inst

        caller = self.inst
        self.n_inst += 1
        env = {}
        arrays = {}
        for p, v in zip(fn.params, values):
            if isinstance(v, ArrayRef):
                arrays[p.name] = v.slot
            else:
                env[p.name] = v
        self.inst = Inst(fn, f"f{self.n_inst}_", False, arrays, caller.done, False, set(), env=env)
        try:
            for s in fn.body[:-1]:
                v = self.expr(s.value, g)
                if isinstance(v, ArrayRef):
                    arrays[s.target] = v.slot
                else:
                    env[s.target] = v
            ret = fn.body[-1].value
            return self.expr(ret, g) if ret is not None else zero(Scalar("int64"))
        finally:
            self.inst = caller

    def call(self, e: N.Call, g: str | None):
        fn = self.module.functions[e.function]
        if self.straight(fn):
            return self.inline_call(fn, [self.expr(a, g) for a in e.args], g)
        if isinstance(fn.return_type, Tuple):
            raise NotCompiled(f"device function {fn.py_name!r} returns a tuple, which is not compiled yet")
        args = []
        for a, p in zip(e.args, fn.params):
            v = self.expr(a, g)
            if isinstance(p.type, Scalar):
                v = self.materialize(v, p.type, e.line)
            elif isinstance(p.type, Tuple):
                v = tuple(self.materialize(x, it, e.line) for x, it in zip(v, p.type.items))
            args.append((v, a))
        self.n_inst += 1
        prefix = f"f{self.n_inst}_"
        self.chunk_op("call", e.line, g, fn=fn, call_args=args, prefix=prefix, outs=[])
        return self.rv_code(fn, prefix, fn.return_uni == Uni.GRID)

    def rv_code(self, fn: N.Function, prefix: str, rv_grid: bool):
        t = fn.return_type
        if isinstance(t, Scalar) or isinstance(t, Tuple):
            return self.rv_value(f"{prefix}rv", t, rv_grid)
        return zero(Scalar("int64"))

    def rv_value(self, name: str, t, grid: bool):
        if isinstance(t, Tuple):
            return tuple(self.rv_value(f"{name}_{k}", it, grid) for k, it in enumerate(t.items))
        ctor(t)
        if grid:
            self.grid_vars[f"g_{name}"] = t
            return f"g_{name}"
        self.lane_arrays[f"v_{name}"] = t
        return f"v_{name}[l]"

    def call_code(self, op: Op, gm: str) -> None:
        from .codegen import Ctx, Inst

        L = self.line
        a = op.args
        fn: N.Function = a["fn"]
        prefix = a["prefix"]
        caller = self.inst
        arrays = {}
        for (v, _node), p in zip(a["call_args"], fn.params):
            if not isinstance(p.type, (Scalar, Tuple)):
                arrays[p.name] = v.slot
        masked = any(isinstance(s, N.Return) and s.uni > Uni.GRID for s in _walk(fn.body))
        done = self.mask_array()
        inst = Inst(fn, prefix, False, arrays, done, masked, maybe_unassigned(fn),
                    exit_flag=f"ex_{prefix}", rv=f"{prefix}rv", rv_grid=fn.return_uni == Uni.GRID)
        self.grid_vars[inst.exit_flag] = Scalar("bool")
        # bind the parameters: GRID ones as scalars, the rest as lane locals of the callee
        self.inst = inst
        for (v, node), p in zip(a["call_args"], fn.params):
            if isinstance(p.type, (Scalar, Tuple)):
                self.bind_param(p, v, node)
        L("for l in range(N):")
        L(f"    {done}[l] = False")
        for name, lvl in fn.var_uni.items():
            if lvl > Uni.GRID and name not in {p.name for p in fn.params}:
                L(f"{self.state_name(name)} = 0")
        L(f"{inst.exit_flag} = False")
        if not inst.rv_grid and isinstance(fn.return_type, (Scalar, Tuple)):
            L(f"S_{prefix}rv = 0")
            self.states.add(f"S_{prefix}rv")
        self.tick(fn.line, gm, straight_line(fn.body))
        L("for once_ in range(1):")
        self.indent += 1
        saved_pending, saved_mask, saved_arrays = self.pending, self.pending_mask, self.arrays_now
        self.pending, self.pending_mask = [], None
        self.block(fn.body, Ctx(gm, False, None))
        self.flush()
        self.line("pass")
        self.indent -= 1
        self.pending, self.pending_mask, self.arrays_now = saved_pending, saved_mask, saved_arrays
        self.inst = caller

    def bind_param(self, p, v, node) -> None:
        L = self.line
        if isinstance(p.type, Tuple):
            raise NotCompiled("tuple parameters of device functions are not compiled")
        if p.uni == Uni.GRID:
            k = f"g_{self.key(p.name, p.type)}"
            self.grid_vars[k] = p.type
            L(f"{k} = {self.arr(v)}[0]")
            return
        k = f"v_{self.key(p.name, p.type)}"
        self.lane_arrays[k] = p.type
        L(f"{k}[:N] = {self.arr(v)}[:N]")
        rs = lanes_scalar(node, self.state_of_caller)
        st = self.state_name(p.name)
        L(f"{st} = {1 if rs is True else 2 if rs is False else f'(1 if {rs} else 2)'}")

    def state_of_caller(self, name: str):
        return False

    def return_value(self, v, node: N.Expr, ctx, masked: bool) -> None:
        inst = self.inst
        t = node.type
        if inst.rv_grid:
            self.flush()
            val = self.scalar(node, ctx)
            self.grid_vars[f"g_{inst.rv}"] = t
            self.line(f"g_{inst.rv} = {val}")
            return
        rs = lanes_scalar(node, self.state_of)
        st = f"S_{inst.rv}"
        temp = not inst.masked_return
        self.emit_op(Op("assign", node.line, None, t, "", None, args={
            "name": None, "rv": inst.rv, "t": t, "value": v, "temp": temp, "state": st, "rs": rs}))

    # -- the module ---------------------------------------------------------------------------------------
    def module_text(self) -> str:
        body = self.lines[self.body_start:]
        bindings = self.param_bindings()
        launch: list[str] = []
        A = launch.append
        A(f"    T = G[{G_T}]")
        A(f"    NW = G[{G_NW}]")
        A("    NMAX = min(G[9], G[8]) * T")
        A(f"    NTH = G[{G_NTHREADS}]")
        A(f"    TMB = G[{G_TMAX_BLOCKS}]")
        A(f"    TMR = G[{G_TMAX_ROWS}]")
        A(f"    MAXSTEPS = G[{G_MAX_STEPS}]")
        A(f"    NLINES = {self.nlines}")
        for name, g in (("bdx_", G_BDX), ("bdy_", G_BDY), ("bdz_", G_BDZ), ("gdx_", G_GDX), ("gdy_", G_GDY),
                        ("gdz_", G_GDZ)):
            A(f"    {name} = np.int32(G[{g}])")
        A("    bx_ = np.empty(NMAX, np.int32)")
        A("    by_ = np.empty(NMAX, np.int32)")
        A("    bz_ = np.empty(NMAX, np.int32)")
        A("    wact_ = np.empty(NMAX, np.uint32)")
        A("    wi32_ = np.empty(NMAX, np.int32)")
        A("    wlive_ = np.empty(NMAX, np.bool_)")
        A("    wsrc_ = np.empty(NMAX, np.int64)")
        A("    wpart_ = np.empty(NMAX, np.bool_)")
        for name, t in sorted(self.lane_arrays.items()):
            A(f"    {name} = np.empty(NMAX, {CTOR[t.name]})")
        A(f"    b0 = G[{G_B0}]")
        A(f"    while b0 < G[{G_B1}]:")
        chunk: list[str] = []
        C = chunk.append
        C(f"        nb = min(G[9], G[{G_B1}] - b0)")
        C("        N = nb * T")
        C("        gt0 = b0 * T")
        # the block index and global warp of every lane, with the divisions done once per block (a division
        # per lane costs more than a map's own work)
        C("        for lb_i in range(nb):")
        C("            blk_ = b0 + lb_i")
        C("            bxv_ = np.int32(blk_ % G[4])")
        C("            byv_ = np.int32((blk_ // G[4]) % G[5])")
        C("            bzv_ = np.int32(blk_ // (G[4] * G[5]))")
        C("            l0_ = lb_i * T")
        C("            for t_ in range(T):")
        C("                l = l0_ + t_")
        C("                bx_[l] = bxv_")
        C("                by_[l] = byv_")
        C("                bz_[l] = bzv_")
        C("                gw_[l] = blk_ * NW + (t_ >> 5)")
        C("                dn0[l] = False")
        for st in sorted(self.states):
            C(f"        {st} = 0")
        for name, t in sorted(self.grid_vars.items()):
            C(f"        {name} = {zero(t)}")
        for m in sorted(self.mk):
            C(f"        {m} = False")
        for line in bindings:
            C("        " + line)
        C("        for once_ in range(1):")
        args = list(COMMON_ARGS)
        for slot in self.slots:
            args.append(slot.data)
            if slot.kind == "shared":
                args += [slot.arr("w"), slot.arr("a"), slot.arr("r")]
            if slot.kind == "local":
                args.append(slot.arr("lw"))
        args += [name for _, name in self.scalar_params]
        self.abi = args
        sig = ", ".join(args + list(GROWN))
        out = ["import numpy as np", "from numba import njit, objmode", "",
               "from gpusim.backends.compiled import external as X", "from gpusim.backends.compiled import rtlib as R",
               "from gpusim.backends.compiled import rt_math as R_M",
               "from gpusim.runtime import intrinsics as ix", ""]
        for name in sorted(self.dtypes):
            out.append(f"_DT_{name} = np.dtype({name!r})")
        out += ["", "", "@njit(cache=True, nogil=True, error_model='numpy')", f"def run({sig}):"]
        out += launch + chunk + body
        out += ["        b0 += nb", "    return TR, BLOG, BBLK", ""]
        return "\n".join(out)


def _walk(body):
    from ...ir.walk import walk_stmts
    return walk_stmts(body)


_ = (np, CTOR)
