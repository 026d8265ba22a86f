"""Regions: runs of per-lane operations compiled into one loop over the chunk's lanes.

The lanes back end executes an operation for every lane of the chunk before the next operation. A region
executes a run of operations lane by lane instead, which gives the same result as long as no two lanes can
see each other's effects in between: so a region holds at most one access site per array that has race
records (a second one starts a new region), no chunk operation (warp intrinsics, calls, barriers, NumPy
math: they need whole vectors), and what its sites find is recorded per site and replayed after the loop in
the order the lanes back end would have found it (faults, trace steps, the race clock).

Inside the loop ``l`` is the lane, ``act`` whether it executes the statement (the region's mask); an
operation's *guard* narrows ``act`` where an expression evaluates a part only for some lanes.
"""

from __future__ import annotations

from .flatten import MARK, Op
from .layout import (
    FK_DIVZERO,
    FK_TUPLE,
    FLOP_DTYPES,
    FLOP_OPS,
    I_NOW,
    S_Z,
    S_Z_LANE,
    S_Z_VAL,
    W_AGG,
    W_ATOMIC,
    W_GLOBAL,
    W_NONE,
    W_SHARED,
)
from .values import NotCompiled, ctor, int_divide, zero

ACCESS = {"ld": 0, "st": 1, "atom": 2, "red": 2}
TRACE_KIND = {"ld": 0, "st": 1, "atom": 2, "red": 3}


def is_chunk(op: Op) -> bool:
    return op.kind in ("chunk", "check")


class RegionEmitter:
    """Mixin of the code generator: ``line(text)`` emits chunk-level code at the current indentation."""

    def split_regions(self, ops: list[Op]) -> list[list[Op] | Op]:
        """Runs of lane operations between chunk operations, cut where a tracked array is accessed twice."""
        out: list[list[Op] | Op] = []
        cur: list[Op] = []
        used: set[int] = set()
        for op in ops:
            if is_chunk(op):
                if cur:
                    out.append(cur)
                cur, used = [], set()
                out.append(op)
                continue
            site = op.site
            if site is not None and site.slot is not None and site.slot.tracked:
                if site.slot.id in used:
                    out.append(cur)
                    cur, used = [], set()
                used.add(site.slot.id)
            cur.append(op)
        if cur:
            out.append(cur)
        return out

    def emit_ops(self, ops: list[Op], mask: str, keep: tuple[str, ...] = ()) -> None:
        """Emit a batch of operations executed under chunk mask ``mask``."""
        if not ops:
            return
        parts = self.split_regions(ops)
        where: dict[str, int] = {}
        for k, part in enumerate(parts):
            for op in ([part] if isinstance(part, Op) else part):
                if op.dst:
                    where[op.dst] = k
                for o in op.args.get("outs", []):
                    where[o] = k
        arrays: set[str] = set(keep)
        for k, part in enumerate(parts):
            for op in ([part] if isinstance(part, Op) else part):
                for t in op.reads():
                    if isinstance(part, Op) or where.get(t, k) != k:
                        arrays.add(t)
                if isinstance(part, Op):
                    arrays.update(op.args.get("outs", []))
        for t in arrays:
            self.lane_array(f"{t}_a", self.temp_types[t])
        self.arrays_now = arrays
        for part in parts:
            if isinstance(part, Op):
                self.chunk_code(part, mask)
            else:
                self.region(part, mask)

    # -- rendering ------------------------------------------------------------------------------------------
    def render(self, text: str, local: bool = True) -> str:
        """Temporaries in ``text``: locals of the lane loop, or lane arrays."""
        arrays = self.arrays_now

        def sub(m):
            t = m.group(1)
            return f"{t}_a[l]" if (t in arrays or not local) else t
        return MARK.sub(sub, text)

    def guard_code(self, g: str | None) -> str:
        return "act" if g is None else self.render(g)

    # -- a region -------------------------------------------------------------------------------------------
    def region(self, ops: list[Op], mask: str, hoist: bool = True) -> None:
        sites = [op.site for op in ops if op.site is not None]
        idx = {id(s): j for j, s in enumerate(sites)}
        self.region_sites = idx
        L = self.line
        L(f"# region: lines {sorted({op.line for op in ops})}")
        if sites:
            L(f"t0_ = I[{I_NOW}]")
            for j in range(len(sites)):
                L(f"RS[{j}, :] = 0")
        flops = [op for op in ops if op.flop]
        for k, _ in enumerate(flops):
            L(f"fl{k}_ = 0")
        self.max_region_sites = max(self.max_region_sites, len(sites))
        counters = [j for j, s in enumerate(sites) if s.kind in ACCESS]
        for j in counters:
            L(f"n{j}_ = 0")
        # chunk-level prologue: states of the locals assigned here, uniform values read once
        pre = []
        for op in ops:
            if op.kind == "assign":
                pre.append(op)
        for op in pre:
            self.assign_prologue(op)
        grid_loads = []
        for op in ops:
            op.args.pop("hoist", None)
            if hoist and op.kind == "load" and op.site.grid_value and all(
                    "\x01" not in i and "[l]" not in i for i in op.args["idx"]):
                op.args["hoist"] = True
                grid_loads.append(op)
        for op in ops:
            if op.kind == "atomic":
                j = idx[id(op.site)]
                if self.request_kind(op.site, op.site.slot) == W_AGG:
                    u = op.site.uniform
                    L(f"wk{j}_ = {W_AGG} if ({u}) else {W_ATOMIC}")
        if grid_loads:
            L(f"anyact_ = X.first_lane({mask}.ctypes, N) >= 0")
            for op in grid_loads:
                self.grid_load_prologue(op)
        tracing = self.trace and any(s.kind in ACCESS for s in sites)
        if sites:
            L("tsn_ = 0")
        L("for l in range(N):")
        self.indent += 1
        L(f"act = {mask}[l]")
        L("g_ = gt0 + l")
        fl = 0
        for op in ops:
            self.lane_op(op, idx.get(id(op.site)) if op.site is not None else None)
            if op.flop:
                dt = FLOP_DTYPES.index(op.type.name)
                L(f"if {self.guard_code(op.guard)}:")
                L(f"    fl{fl}_ += 1")
                op.args["flop_slot"] = (fl, FLOP_OPS.index(op.flop), dt)
                fl += 1
        self.indent -= 1
        # epilogue: what the sites found, in the order the lanes back end finds it
        for op in flops:
            k, o, dt = op.args["flop_slot"]
            L(f"FL[{o}, {dt}] += fl{k}_")
            L(f"FLT[{o}, {dt}] = True")
        for j, s in enumerate(sites):
            self.site_epilogue(s, j)
        if tracing:
            L(f"X.trace_commit(DESC.ctypes, tsn_, {len(sites)})")
        if sites:
            L(f"I[{I_NOW}] = t0_ + {len(sites)}")

    def lane_op(self, op: Op, j: int | None) -> None:
        L = self.line
        g = self.guard_code(op.guard)
        dst = self.render(f"\x01{op.dst}\x02") if op.dst else None
        if op.kind == "val":
            L(f"{dst} = {self.render(op.code)}")
        elif op.kind == "assign":
            self.assign_lane(op)
        elif op.kind == "raw":
            L(self.render(op.code))
        elif op.kind == "mask":
            L(f"{op.args['dst']}[l] = {self.render(op.code)}")
            if op.args.get("any"):
                L(f"if {op.args['dst']}[l]:")
                L(f"    {op.args['any']} = True")
        elif op.kind == "div":
            a, b = self.render(op.args["a"]), self.render(op.args["b"])
            t = op.type
            L(f"if {b} == 0:")
            L(f"    if {g}:")
            L(f"        if RS[{j}, {S_Z}] == 0:")
            L(f"            RS[{j}, {S_Z_LANE}] = l")
            L(f"        RS[{j}, {S_Z}] += 1")
            L(f"    {dst} = {zero(t)}")
            L("else:")
            L(f"    {dst} = {int_divide(op.args['op'], a, b, t)}")
        elif op.kind == "tidx":
            items = [self.render(i) for i in op.args["items"]]
            k = self.render(op.args["k"])
            n = len(items)
            c = ctor(op.type)
            L(f"k_ = np.int64({k})")
            L("kk_ = k_")
            L(f"if k_ < 0 or k_ >= {n}:")
            L(f"    if {g}:")
            L(f"        if RS[{j}, {S_Z}] == 0:")
            L(f"            RS[{j}, {S_Z_LANE}] = l")
            L(f"            RS[{j}, {S_Z_VAL}] = k_")
            L(f"        RS[{j}, {S_Z}] += 1")
            L(f"    kk_ = 0 if k_ < 0 else {n - 1}")
            for q, it in enumerate(items):
                L(f"{'if' if q == 0 else 'elif'} kk_ == {q}:")
                L(f"    {dst} = {c}({it})")
            if op.args["grid"]:  # a uniform index outside the tuple: the lanes back end's items[0] * 0
                L("if k_ != kk_:")
                L(f"    {dst} = {c}({items[0]} * 0)")
        elif op.kind in ("load", "store", "atomic"):
            self.access(op, j, g, dst)
        else:  # pragma: no cover
            raise NotCompiled(f"operation {op.kind}")

    # -- accesses -------------------------------------------------------------------------------------------
    def access(self, op: Op, j: int, g: str, dst: str | None) -> None:
        """Bounds check, the element, the data; what the access means for observers is replayed after the
        loop (``rtlib.site_events``) from the elements and lanes recorded here."""
        L = self.line
        site = op.site
        slot = site.slot
        idx = [self.render(i) for i in op.args["idx"]]
        nd = len(idx)
        if nd > 4:
            raise NotCompiled("arrays of more than 4 dimensions are not compiled")
        hoisted = op.kind == "load" and site.grid_value and op.args.get("hoist")
        if dst is not None:
            L(f"{dst} = {f'gv{site.id}_' if hoisted else zero(op.type)}")
        if op.kind == "store":
            L(f"vs{site.id}_ = {self.render(op.args['value'])}")
        L(f"if {g}:")
        self.indent += 1
        for d, i in enumerate(idx):
            L(f"i{d}_ = {i}")
        inames = [f"i{d}_" for d in range(nd)]
        L(f"if {slot.bounds_code(inames)}:")
        self.indent += 1
        L(f"e_ = {slot.flat_code(inames)}")
        if slot.space == "local" or slot.tracked or self.instrument or self.trace:
            # staged for the replay (rt_access.site_events); an access nothing observes is only counted
            L(f"EV[{j}, n{j}_] = e_")
            L(f"EL[{j}, n{j}_] = l")
        L(f"n{j}_ += 1")
        data = self.data_index(slot, inames)
        if op.kind == "load":
            if not hoisted:
                L(f"{dst} = {data}")
        elif op.kind == "store":
            L(f"{data} = vs{site.id}_")
        else:
            self.atomic_apply(op, data, dst)
        self.indent -= 1
        L("else:")
        pairs = []
        for d in range(4):
            pairs += [inames[d], slot.shape_code(d)] if d < nd else ["0", "1"]
        L(f"    R.oob(RS[{j}], l, {', '.join(pairs)})")
        self.indent -= 1

    def data_index(self, slot, inames: list[str]) -> str:
        if slot.kind == "param":
            return f"{slot.data}[{', '.join(inames)}]"
        if slot.kind == "shared":
            return f"{slot.data}[lb_[l] * {slot.static_size} + e_]"
        if slot.kind == "local":
            return f"{slot.data}[l * {slot.static_size} + e_]"
        return f"{slot.data}[e_]"

    def site_params(self, site) -> list[int]:
        """The row of ``SP`` describing an access site to ``rtlib.site_events``/``site_faults``."""
        from .layout import P_COLS, SPACE_CODES
        slot = site.slot
        k = site.kind
        row = [0] * P_COLS
        row[0] = {"ld": 0, "st": 1, "atom": 2, "red": 2}[k]
        row[1] = site.line
        row[2] = 1 if slot.space == "shared" else 0
        row[3] = SPACE_CODES[slot.space]
        row[4] = slot.itemsize
        row[5] = slot.id
        row[6] = TRACE_KIND[k]
        row[7] = slot.static_size if slot.space in ("shared", "local") else 0
        row[8] = 1 if k in ("ld", "atom", "red") else 0
        row[9] = 1 if k in ("st", "atom", "red") else 0
        row[10] = 1 if self.instrument else 0
        row[11] = 1 if self.trace else 0
        row[12] = site.id
        row[13] = site.keys["oob"]
        row[14] = site.keys.get("uninit", -1)
        row[15] = site.keys.get("race", -1)
        row[16] = ACCESS[k]
        row[17] = slot.ndim
        row[18] = self.round_sites.setdefault((slot.id, site.line), len(self.round_sites))
        return row

    def request_kind(self, site, slot) -> int:
        space = slot.space
        k = site.kind
        if space == "shared":
            return W_SHARED if k in ("ld", "st") else W_NONE
        if space != "global":
            return W_NONE
        if k in ("ld", "st"):
            return W_GLOBAL
        if slot.dtype.is_int and site.uniform is not False:
            return W_AGG
        return W_ATOMIC

    def atomic_apply(self, op: Op, data: str, dst: str) -> None:
        L = self.line
        t = op.type
        c = ctor(t)
        v = self.render(op.args["value"])
        n = op.site.id
        L(f"old{n}_ = {data}")
        L(f"{dst} = old{n}_")
        L(f"av{n}_ = {c}({v})")
        name = op.args["op"]
        old, av = f"old{n}_", f"av{n}_"
        if name == "add":
            L(f"{data} = {c}({old} + {av})")
        elif name == "sub":
            L(f"{data} = {c}({old} - {av})")
        elif name in ("max", "min"):
            L(f"if {av} {'>' if name == 'max' else '<'} {old}:")
            L(f"    {data} = {av}")
        elif name in ("nanmax", "nanmin"):
            sym = ">" if name == "nanmax" else "<"
            if t.is_float:
                L(f"if {av} {sym} {old} or ({old} != {old} and {av} == {av}):")
            else:
                L(f"if {av} {sym} {old}:")
            L(f"    {data} = {av}")
        elif name == "exch":
            L(f"{data} = {av}")
        elif name == "inc":
            L(f"{data} = {c}(0) if {old} >= {av} else {c}({old} + 1)")
        elif name == "dec":
            L(f"{data} = {av} if ({old} == 0 or {old} > {av}) else {c}({old} - 1)")
        elif name in ("and", "or", "xor"):
            sym = {"and": "&", "or": "|", "xor": "^"}[name]
            L(f"{data} = {c}({old} {sym} {av})")
        elif name == "cas":
            L(f"if {old} == {c}({self.render(op.args['cmp'])}):")
            L(f"    {data} = {av}")
        else:
            raise NotCompiled(f"atomic {name}")

    # -- after the loop -------------------------------------------------------------------------------------
    def site_epilogue(self, s, j: int) -> None:
        L = self.line
        if s.kind in ("div", "tidx"):
            key = s.keys["zero"] if s.kind == "div" else s.keys["oob"]
            kind = FK_DIVZERO if s.kind == "div" else FK_TUPLE
            extra = f", RS[{j}, {S_Z_VAL}], {s.keys['n']}" if s.kind == "tidx" else ""
            L(f"if RS[{j}, {S_Z}]:")
            L(f"    X.fault(DESC.ctypes, {key}, 1, {kind}, gt0 + RS[{j}, {S_Z_LANE}]{extra or ', 0, 0'})")
            return
        slot = s.slot
        self.site_rows[s.id] = self.site_params(s)
        wk = self.request_kind(s, slot)
        wkc = f"wk{j}_" if wk == W_AGG else str(wk)
        L(f"tsn_ = X.site_end(DESC.ctypes, {s.id}, {j}, n{j}_, gt0, b0, t0_ + {j}, tsn_, {wkc})")

    # -- GRID loads -----------------------------------------------------------------------------------------
    def grid_load_prologue(self, op: Op) -> None:
        """A load at an index the same for every lane: its value, read once (0 if no lane reads it)."""
        L = self.line
        slot = op.site.slot
        idx = [self.render(i, local=False) for i in op.args["idx"]]
        names = [f"q{d}_" for d in range(len(idx))]
        for n, i in zip(names, idx):
            L(f"{n} = {i}")
        s = op.site.id
        self.grid_vars[f"gv{s}_"] = op.type
        L(f"gv{s}_ = {zero(op.type)}")
        L(f"if anyact_ and {slot.bounds_code(names)}:")
        if slot.kind == "param":
            L(f"    gv{s}_ = {slot.data}[{', '.join(names)}]")
        else:
            L(f"    gv{s}_ = {slot.data}[{slot.flat_code(names)}]")
