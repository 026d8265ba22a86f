"""The runtime the generated lane code calls: memory accesses, barriers, warp intrinsics, faults.

One ``Runtime`` serves a whole launch; ``start_chunk`` points it at the next chunk of blocks. Every memory
access goes through ``ld``/``st``/``atomic``: bounds-checked per dimension on active lanes only, recorded in
the race shadow, and reported to the observers.
"""

from __future__ import annotations

import numpy as np

from . import intrinsics as ix
from . import races
from .faults import (
    BarrierDivergence,
    DataRace,
    KernelError,
    KernelFault,
    KernelTimeout,
    OutOfBounds,
    UninitializedRead,
)
from .memory import ArrayHandle, apply_atomic, const_handle, local_handle, shared_handle
from .observers import AccessEvent, ArrayInfo, LaunchInfo

FULL_MASK = 0xFFFFFFFF
_OPS = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "//": np.floor_divide,
        "%": np.remainder, "**": np.power, "<<": np.left_shift, ">>": np.right_shift, "|": np.bitwise_or,
        "^": np.bitwise_xor, "&": np.bitwise_and}
_FLOP_NAMES = {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "special"}


def _arith_type(a: np.dtype, b: np.dtype) -> np.dtype:
    """numba's result type of an arithmetic operation on two scalar types."""
    if a.kind in "iub" and b.kind in "iub":
        return np.dtype(np.uint64 if a.kind == "u" and b.kind == "u" else np.int64)
    return np.result_type(a, b)


def _py_dtype(v) -> np.dtype:
    if isinstance(v, bool):
        return np.dtype(np.bool_)
    if isinstance(v, int):
        return np.dtype(np.int64)
    if isinstance(v, float):
        return np.dtype(np.float64)
    return np.asarray(v).dtype


def _widen_int(x):
    """numba's unary ``-``/``~`` on integers: at least 64 bits (uint64 if unsigned); ``-True`` is int64."""
    dt = getattr(x, "dtype", None)
    if dt is None or dt.kind not in "iub" or (dt.kind != "b" and dt.itemsize == 8):
        return x
    if dt.kind == "b" and not isinstance(x, np.ndarray):
        return np.int64(x)
    t = np.uint64 if dt.kind == "u" else np.int64
    return x.astype(t) if isinstance(x, np.ndarray) else t(x)


class Abort(Exception):
    """Stops a launch after a fatal fault (a timeout); the fault is already recorded."""


class Runtime:
    def __init__(self, info: LaunchInfo, source_lines, kernel_name: str, observers, max_steps: int,
                 shared_mem: int, next_array_id: int):
        self.info = info
        self.kernel = kernel_name
        self.src = source_lines  # callable lineno -> text
        self.observers = observers
        self.max_steps = max_steps
        self.T = info.threads_per_block
        self.NW = info.warps_per_block
        self.bdx, self.bdy, self.bdz = (np.int32(v) for v in info.block)
        self.gdx, self.gdy, self.gdz = (np.int32(v) for v in info.grid)
        self.warpsize = np.int32(32)
        self.bar_time = np.full(info.num_blocks, -1, np.int64)
        self.wbar_time = np.full(info.num_blocks * self.NW, -1, np.int64)
        self.phase_all = np.zeros(info.num_blocks, np.int64)
        self.now = 0
        self.faults: dict[tuple, KernelFault] = {}
        self.shared_mem = shared_mem
        self.arrays: dict[tuple, ArrayInfo] = {}
        self.next_id = next_array_id
        self.const_handles: dict[int, ArrayHandle] = {}
        self.shared_static_bytes: dict[int, int] = {}
        self.flops: dict[tuple[str, str], int] = {}
        self.steps = 0
        self._mask_cache: tuple[object, np.ndarray] | None = None
        self.count_flops = True

    # -- chunks ---------------------------------------------------------------------------------------
    def start_chunk(self, b0: int, nb: int) -> None:
        T = self.T
        N = nb * T
        self.b0, self.nb, self.N = b0, nb, N
        lane = np.arange(N, dtype=np.int64)
        t = lane % T
        blk = b0 + lane // T
        bx, by, _ = self.info.block
        gx, gy, _ = self.info.grid
        # numba types threadIdx/blockIdx/blockDim/gridDim/laneid/warpsize as int32 (checked on the GPU)
        i32 = np.int32
        self.tx, self.ty, self.tz = ((t % bx).astype(i32), ((t // bx) % by).astype(i32),
                                     (t // (bx * by)).astype(i32))
        self.bx, self.by, self.bz = ((blk % gx).astype(i32), ((blk // gx) % gy).astype(i32),
                                     (blk // (gx * gy)).astype(i32))
        self.laneid = (t % 32).astype(i32)
        self.lane_block = lane // T
        self.lane_warp_in_block = t // 32
        self.lanemask_lt = ((np.uint64(1) << self.laneid.astype(np.uint64)) - np.uint64(1)).astype(np.uint32)
        self.all_lanes = np.ones(N, bool)
        self.no_lanes = np.zeros(N, bool)
        self.exited = self.no_lanes
        self.shared: dict[int, ArrayHandle] = {}
        self.dyn_buffer = None
        self.steps = 0
        self._grid_cache: dict[int, object] = {}
        self._full_ids = None
        self._mask_cache = None
        # warp geometry for votes/shuffles: lane -> index of its warp's first lane
        self.warp_base = lane - self.laneid
        self.warp_size_of = np.minimum(32, T - self.lane_warp_in_block * 32)

    # -- helpers used by generated code ---------------------------------------------------------------
    def active(self, m) -> np.ndarray:
        c = self._mask_cache
        if c is not None and c[0] is m:
            return c[1]
        lanes = np.flatnonzero(m) if isinstance(m, np.ndarray) else (np.arange(self.N) if m else
                                                                      np.zeros(0, np.int64))
        self._mask_cache = (m, lanes)
        return lanes

    @staticmethod
    def truth(x):
        if isinstance(x, np.ndarray):
            return x if x.dtype == np.bool_ else x != 0
        return bool(x)

    @staticmethod
    def logical_not(x):
        if isinstance(x, np.ndarray):
            return ~x if x.dtype == np.bool_ else x == 0
        return not x

    @staticmethod
    def invert(x):
        if isinstance(x, bool):
            return not x
        if getattr(x, "dtype", None) == np.bool_:  # ~ of a bool is a bool in numba
            return np.logical_not(x)
        return np.invert(_widen_int(x))

    @staticmethod
    def neg(x):
        return -_widen_int(x)

    def merge(self, m, new, old):
        if old is None:
            return new
        if isinstance(new, tuple):
            return tuple(self.merge(m, a, b) for a, b in zip(new, old))
        return np.where(m, new, old)

    @staticmethod
    def lanes(x):
        return x

    @staticmethod
    def select(c, a, b):
        return np.where(c, a, b)

    @staticmethod
    def all_of(*parts):
        r = parts[0]
        for p in parts[1:]:
            r = r & p
        return r

    abs_ = staticmethod(np.abs)
    min_ = staticmethod(np.minimum)
    max_ = staticmethod(np.maximum)
    cast = staticmethod(ix.cast)
    to_float = staticmethod(ix.to_float)
    round_ = staticmethod(ix.round_)
    bits = staticmethod(ix.bits)

    @staticmethod
    def math(name, *args):
        return ix.math_fn(name, *args)

    @staticmethod
    def fma(a, b, c):
        dt = np.result_type(a, b, c)
        if dt.kind == "f" and dt.itemsize < 8:
            return (np.float64(a) * b + c).astype(dt) if isinstance(a * b, np.ndarray) else dt.type(
                np.float64(a) * np.float64(b) + np.float64(c))
        return a * b + c

    @staticmethod
    def tuple_item(t, i):
        return t[int(i)]

    @staticmethod
    def irange(a, b, s):
        return map(np.int64, range(int(a), int(b), int(s)))

    def check_step(self, step, m, line):
        if isinstance(step, np.ndarray):
            bad = m & (step == 0)
            if bad.any():
                self.error(KernelError, "a range() step is zero", int(np.flatnonzero(bad)[0]), line)
                raise Abort
        elif step == 0:
            self.error(KernelError, "a range() step is zero", int(self.active(m)[0]) if np.any(m) else 0, line)
            raise Abort

    @staticmethod
    def range_cond(iv, stop, step):
        if isinstance(step, np.ndarray):
            return np.where(step > 0, iv < stop, iv > stop)
        return (iv < stop) if step > 0 else (iv > stop)

    def tick(self, line, m=True):
        self.steps += 1
        if self.steps > self.max_steps:
            lanes = self.active(m)  # the thread described: the first one still in the loop
            self.record(KernelTimeout(
                f"A loop ran more than {self.max_steps:,} iterations: the kernel probably never ends "
                f"(raise max_steps if it is meant to run this long)."), line,
                int(lanes[0]) if lanes.size else None, None, None)
            raise Abort

    def unpack_error(self, want, got):
        raise TypeError(f"cannot unpack {got} values into {want} names")

    def intdiv(self, a, b, op, m, line):
        bt = np.asarray(b)
        if bt.dtype.kind in "iub" and np.asarray(a).dtype.kind in "iub":
            zero = (bt == 0)
            if isinstance(zero, np.ndarray) and zero.ndim:
                bad = zero & m if isinstance(m, np.ndarray) else zero
                if bad.any():
                    self.error(KernelError, "integer division by zero", int(np.flatnonzero(bad)[0]), line)
                    b = np.where(zero, 1, b)
            elif zero and np.any(m):
                self.error(KernelError, "integer division by zero", int(self.active(m)[0]), line)
                b = 1
        return a // b if op == "//" else a % b

    def binop(self, op, a, b, m, line):
        """``a op b`` with numba's typing: integer arithmetic is at least 64-bit (signed if either side is),
        a float raised to an integer power keeps its type, integer ``//``/``%`` by zero is a fault."""
        da = a.dtype if hasattr(a, "dtype") else _py_dtype(a)
        db = b.dtype if hasattr(b, "dtype") else _py_dtype(b)
        ka, kb = da.kind, db.kind
        if ka in "iub" and kb in "iub":
            if ka == "b" and kb == "b" and op in ("&", "|", "^"):
                return _OPS[op](a, b)
            if da.itemsize < 8 or db.itemsize < 8 or ka != kb:
                t = np.uint64 if (ka == "u" and kb == "u") else np.int64
                a = a.astype(t) if isinstance(a, np.ndarray) else t(a)
                b = b.astype(t) if isinstance(b, np.ndarray) else t(b)
            if op in ("//", "%"):
                return self.intdiv(a, b, op, m, line)
            if op == "/":
                a = a.astype(np.float64) if isinstance(a, np.ndarray) else np.float64(a)
            return _OPS[op](a, b)
        if op == "**" and ka == "f" and kb in "iu":
            r = _OPS[op](a, b)
            r = r.astype(da) if isinstance(r, np.ndarray) else da.type(r)
        else:
            r = _OPS[op](a, b)
        if self.count_flops and op in _FLOP_NAMES:
            self.flop(_FLOP_NAMES[op], r, m)
        return r

    def mad(self, x, y, c, psign, csign, m, line):
        """``psign*x*y + csign*c`` rounded once when the result is a float of 32 bits or less, as the GPU's
        fused multiply-add does (numba-cuda lets the compiler contract ``a*b + c``); otherwise plain ops."""
        dx = x.dtype if hasattr(x, "dtype") else _py_dtype(x)
        dy = y.dtype if hasattr(y, "dtype") else _py_dtype(y)
        dc = c.dtype if hasattr(c, "dtype") else _py_dtype(c)
        prod = _arith_type(dx, dy)
        out = _arith_type(prod, dc)
        if prod.kind == "f" and out.kind == "f" and out.itemsize <= 4:
            f64 = np.float64
            xx = x.astype(f64) if isinstance(x, np.ndarray) else f64(x)
            r = xx * y + c if psign > 0 and csign > 0 else psign * xx * y + csign * (
                c.astype(f64) if isinstance(c, np.ndarray) else f64(c))
            r = r.astype(out) if isinstance(r, np.ndarray) else out.type(r)
            if self.count_flops:
                self.flop("fma", r, m)
            return r
        p = self.binop("*", x, y, m, line)
        return self.binop("+" if psign * csign > 0 else "-", c, p, m, line) if psign < 0 else \
            self.binop("+" if csign > 0 else "-", p, c, m, line)

    def divmod_(self, a, b, m, line):
        return (self.intdiv(a, b, "//", m, line), self.intdiv(a, b, "%", m, line))

    def flop(self, op, value, m):
        dt = getattr(value, "dtype", None)
        if dt is None:
            dt = np.dtype(np.float64) if isinstance(value, float) else None
        if dt is not None and dt.kind == "f":
            n = int(np.count_nonzero(m)) if isinstance(m, np.ndarray) else self.N
            key = (op, dt.name)
            self.flops[key] = self.flops.get(key, 0) + n
            if self.observers:
                for o in self.observers:
                    o.on_flops(op, dt, n)
        return value

    # -- thread geometry ------------------------------------------------------------------------------
    def grid(self, n):
        g = self._grid_cache.get(n)
        if g is None:
            i64 = np.int64
            x = self.bx.astype(i64) * i64(self.bdx) + self.tx
            if n == 1:
                g = x
            else:
                y = self.by.astype(i64) * i64(self.bdy) + self.ty
                g = (x, y) if n == 2 else (x, y, self.bz.astype(i64) * i64(self.bdz) + self.tz)
            self._grid_cache[n] = g
        return g

    def gridsize(self, n):
        i64 = np.int64
        x = i64(self.bdx) * i64(self.gdx)
        if n == 1:
            return x
        y = i64(self.bdy) * i64(self.gdy)
        return (x, y) if n == 2 else (x, y, i64(self.bdz) * i64(self.gdz))

    # -- faults ---------------------------------------------------------------------------------------
    def where(self, lane):
        gtid = self.b0 * self.T + int(lane)
        return self.info.split_gtid(gtid)

    def record(self, fault: KernelFault, line, lane, array, index, key_extra=()):
        key = (type(fault), line, array, key_extra)
        if key in self.faults:
            self.faults[key].count += 1
            return
        fault.kernel = self.kernel
        fault.filename = self.info.filename
        fault.lineno = int(line)
        fault.source_line = self.src(int(line))
        if lane is not None:
            fault.block, fault.thread = self.where(lane)
        fault.array = array
        fault.index = index
        self.faults[key] = fault

    def error(self, cls, summary, lane, line):
        self.record(cls(summary[0].upper() + summary[1:] + "."), line, lane, None, None)

    # -- arrays ---------------------------------------------------------------------------------------
    def _register(self, key, info: ArrayInfo) -> None:
        if key not in self.arrays:
            self.arrays[key] = info
            for o in self.observers:
                o.on_array(info)

    def shared_array(self, decl, name, shape, dtype, m, line):
        h = self.shared.get(decl)
        if h is not None:
            return h
        size = int(np.prod(shape, dtype=np.int64))
        if size == 0:  # dynamic shared memory: every such array starts at the same address
            key = ("dyn", dtype.str)
            if self.dyn_buffer is None:
                self.dyn_buffer = np.zeros((self.nb, max(self.shared_mem, 8)), np.uint8)
            n = self.shared_mem // dtype.itemsize
            prev = self.arrays.get(key)
            aid = prev.id if prev else self._new_id()
            h = self.shared.get(key)
            if h is None:
                h = shared_handle(aid, name, (n,), dtype, self.nb, 0, self.dyn_buffer)
                for k2, h2 in self.shared.items():  # an alias with the same element size: one shadow
                    if k2[0] == "dyn" and h2.dtype.itemsize == dtype.itemsize and h.shadow is not None:
                        h.shadow = h2.shadow
                        break
                self.shared[key] = h
            self._register(key, h.info)
            self.shared[decl] = h
            return h
        key = ("shared", decl)
        prev = self.arrays.get(key)
        offset = sum(self.shared_static_bytes.values())
        if prev is None:
            offset = (offset + 15) // 16 * 16
            self.shared_static_bytes[decl] = size * dtype.itemsize + (offset - sum(self.shared_static_bytes.values()))
        aid = prev.id if prev else self._new_id()
        h = shared_handle(aid, name, shape, dtype, self.nb, prev.base_address if prev else offset)
        self._register(key, h.info)
        self.shared[decl] = h
        return h

    def local_array(self, decl, name, shape, dtype, m, line):
        key = ("local", decl)
        prev = self.arrays.get(key)
        aid = prev.id if prev else self._new_id()
        h = local_handle(aid, name, shape, dtype, self.N)
        self._register(key, h.info)
        return h

    def const_array(self, spec):
        _, array, name = spec
        h = self.const_handles.get(id(array))
        if h is None:
            aid = self._new_id()
            h = const_handle(aid, name, array, 0)
            self.const_handles[id(array)] = h
            self._register(("const", id(array)), h.info)
        return h

    def _new_id(self):
        self.next_id += 1
        return self.next_id

    # -- memory access --------------------------------------------------------------------------------
    def _locate(self, A: ArrayHandle, m, idx, line, access):
        """Active lanes, per-dimension bounds check, element ids. Returns (lanes, flat, uniform_index)."""
        if not isinstance(A, ArrayHandle):
            raise TypeError(f"{type(A).__name__} is not an array")
        if len(idx) != len(A.shape_i):
            raise IndexError(f"array {A.name!r} has {len(A.shape_i)} dimensions but is indexed with {len(idx)}")
        lanes = self.active(m)
        if lanes.size == 0:
            return lanes, None, False
        uniform = True
        sel = []
        for v in idx:
            if isinstance(v, np.ndarray):
                uniform = False
                if v.dtype.kind not in "iub":
                    raise TypeError(f"array index must be an integer, not {v.dtype}")
                sel.append(v if lanes.size == self.N else v[lanes])
            else:
                if isinstance(v, (float, np.floating)):
                    raise TypeError(f"array index must be an integer, not {type(v).__name__}")
                sel.append(int(v))
        bad = None
        for d, v in enumerate(sel):
            n = A.shape_i[d]
            if isinstance(v, np.ndarray):
                b = (v < 0) | (v >= n)
                if b.any():
                    bad = b if bad is None else (bad | b)
            elif v < 0 or v >= n:
                bad = np.ones(lanes.size, bool)
                break
        if bad is not None:
            k = int(np.flatnonzero(bad)[0])
            index = tuple(int(v[k]) if isinstance(v, np.ndarray) else int(v) for v in sel)
            dims = [d for d in range(len(index)) if not 0 <= index[d] < A.shape_i[d]]
            d = dims[0]
            what = "Negative index" if index[d] < 0 else "Index"
            summary = (f"{what} {index[d]} is out of bounds for dimension {d} of {A.space} array {A.name!r} "
                       f"(size {A.shape_i[d]}) on {access}.")
            f = OutOfBounds(summary, shape=A.shape_i, access=access)
            f.details.append(f"the array's shape is {A.shape_i}")
            self.record(f, line, int(lanes[k]), A.name, index, (access,))
            self.faults[(OutOfBounds, line, A.name, (access,))].count += int(bad.sum()) - 1
            keep = ~bad
            lanes = lanes[keep]
            sel = [v[keep] if isinstance(v, np.ndarray) else v for v in sel]
            if lanes.size == 0:
                return lanes, None, False
        flat = 0
        for v, s in zip(sel, A.cstrides):
            flat = flat + (v * s if s != 1 else v)
        if not isinstance(flat, np.ndarray):
            flat = np.full(lanes.size, flat, np.int64)
        else:
            flat = flat.astype(np.int64, copy=False)
        return lanes, flat, uniform

    def _elems(self, A: ArrayHandle, lanes, flat):
        if A.space == "shared":
            return self.lane_block[lanes] * int(A.size) + flat
        if A.space == "local":
            return lanes * int(A.size) + flat
        return flat

    def _track(self, A, elems, lanes, line, kind, access):
        now = self.now
        self.now += 1
        sh = A.shadow
        if sh is None:
            if A.space == "local":
                if kind == races.READ:
                    unw = ~A.written[elems]
                    if unw.any():
                        k = int(np.flatnonzero(unw)[0])
                        self._uninit(A, lanes[k], elems[k], line, int(unw.sum()))
                else:
                    A.written[elems] = True
            return
        gt = self.b0 * self.T + lanes
        res = races.record(sh, elems, gt, self.T, self.NW, now, int(line), kind, A.space == "shared",
                           self.bar_time, self.wbar_time)
        if res[races.R_UNINITS]:
            k = int(res[races.R_UNINIT_POS])
            self._uninit(A, lanes[k], elems[k], line, int(res[races.R_UNINITS]))
        if res[races.R_RACES]:
            k = int(res[races.R_RACE_POS])
            self._race(A, lanes[k], elems[k], line, res, access)

    def _index_of(self, A, elem):
        flat = int(elem) % int(A.size) if A.space in ("shared", "local") else int(elem)
        return tuple(int(i) for i in np.unravel_index(flat, A.shape_i)) if A.shape_i else ()

    def _uninit(self, A, lane, elem, line, count):
        index = self._index_of(A, elem)
        f = UninitializedRead(f"Read of {A.space} array {A.name!r} at {list(index)} before any thread wrote it.")
        self.record(f, line, int(lane), A.name, index)
        self.faults[(UninitializedRead, line, A.name, ())].count += count - 1

    def _race(self, A, lane, elem, line, res, access):
        index = self._index_of(A, elem)
        hazard = races.HAZARDS[int(res[races.R_HAZARD])]
        other = int(res[races.R_OTHER_TID])
        oline = int(res[races.R_OTHER_LINE])
        if other >= 0:
            ob, ot = self.info.split_gtid(other)
            who = f"thread {ot} of block {ob}"
        else:
            ob = ot = None
            who = "several other threads"
        f = DataRace(
            f"Data race on {A.space} array {A.name!r} at {list(index)}: {hazard} between threads with no "
            f"barrier between them.",
            other_block=ob, other_thread=ot, other_lineno=oline, other_source_line=self.src(oline),
            hazard=hazard)
        f.details.append(f"the other access: {who} at line {oline}: {self.src(oline).strip()}")
        if ob is not None and self.where(lane)[0] != ob:
            f.details.append("the threads are in different blocks, and blocks are never ordered within a launch")
        self.record(f, line, int(lane), A.name, index, (oline,))
        self.faults[(DataRace, line, A.name, (oline,))].count += int(res[races.R_RACES]) - 1

    def _observe(self, A, kind, line, lanes, flat, uniform=False, op=""):
        if lanes.size == self.N:  # every lane: the identities are the chunk's, computed once
            ids = self._full_ids
            if ids is None:
                gt = self.b0 * self.T + lanes
                blk = gt // self.T
                ids = self._full_ids = (gt, blk, blk * self.NW + (gt % self.T) // 32)
            gt, blk, warp = ids
        else:
            gt = self.b0 * self.T + lanes
            blk = gt // self.T
            warp = blk * self.NW + (gt % self.T) // 32
        ev = AccessEvent(A.info, kind, int(line), gt, blk, warp, flat, self.phase_all[blk], uniform, op)
        for o in self.observers:
            o.on_access(ev)

    def ld(self, A: ArrayHandle, m, idx, line):
        if len(idx) == 1 and type(idx[0]) is tuple:  # a[t] with t a tuple variable
            idx = idx[0]
        lanes, flat, uniform = self._locate(A, m, idx, line, "read")
        if flat is None:
            if uniform and A.space in ("global", "const") and lanes.size == 0 and not any(
                    isinstance(v, np.ndarray) for v in idx):
                return A.dtype.type(0)
            return np.zeros(self.N, A.dtype)
        elems = self._elems(A, lanes, flat)
        self._track(A, elems, lanes, line, races.READ, "read")
        if self.observers:
            self._observe(A, "ld", line, lanes, flat, uniform)
        if A.flat is not None:
            src = A.flat
            vals = src[elems] if not (uniform and A.space in ("global", "const")) else src[elems[0]]
        else:
            index = np.unravel_index(flat, A.shape_i)
            vals = A.data[index]
            if uniform and A.space in ("global", "const"):
                vals = vals[0]
        if uniform and A.space in ("global", "const"):
            return vals
        if lanes.size == self.N:
            return vals
        out = np.zeros(self.N, A.dtype)
        out[lanes] = vals
        return out

    def st(self, A: ArrayHandle, m, idx, value, line):
        if not A.writable:
            raise TypeError(f"{A.space} array {A.name!r} is read-only")
        if len(idx) == 1 and type(idx[0]) is tuple:  # a[t] = v with t a tuple variable
            idx = idx[0]
        lanes, flat, uniform = self._locate(A, m, idx, line, "write")
        if flat is None:
            return
        elems = self._elems(A, lanes, flat)
        self._track(A, elems, lanes, line, races.WRITE, "write")
        if self.observers:
            self._observe(A, "st", line, lanes, flat, uniform)
        if isinstance(value, np.ndarray) and value.ndim:
            v = value if lanes.size == self.N else value[lanes]
        else:
            v = value
        if isinstance(v, tuple):
            raise TypeError("cannot store a tuple into an array element")
        if A.flat is not None:
            A.flat[elems] = v
        else:
            A.data[np.unravel_index(flat, A.shape_i)] = v

    def atomic(self, op, A: ArrayHandle, m, idx, value, cmp, used, line):
        if not A.writable:
            raise TypeError(f"{A.space} array {A.name!r} is read-only")
        if not isinstance(idx, tuple):
            idx = (idx,)
        lanes, flat, uniform = self._locate(A, m, idx, line, "atomic")
        if flat is None:
            return np.zeros(self.N, A.dtype)
        elems = self._elems(A, lanes, flat)
        self._track(A, elems, lanes, line, races.ATOMIC, "atomic")
        if self.observers:
            self._observe(A, "atom" if used else "red", line, lanes, flat, uniform, op)

        def pick(v):
            if isinstance(v, np.ndarray) and v.ndim:
                return v if lanes.size == self.N else v[lanes]
            return v

        if A.flat is None:
            raise TypeError(f"atomics need a contiguous array; {A.name!r} is not")
        olds = apply_atomic(op, A.flat, elems, pick(value), None if cmp is None else pick(cmp))
        if lanes.size == self.N:
            return olds
        out = np.zeros(self.N, A.dtype)
        out[lanes] = olds
        return out

    # -- barriers -------------------------------------------------------------------------------------
    def _block_view(self, v):
        return v.reshape(self.nb, self.T)

    def syncthreads(self, m, line):
        T = self.T
        if not isinstance(m, np.ndarray):
            m = self.all_lanes if m else self.no_lanes
        m2 = self._block_view(m)
        present = m2.any(axis=1)
        live_ok = (m2 | self._block_view(self.exited)).all(axis=1)
        bad = present & ~live_ok
        if bad.any():
            b = int(np.flatnonzero(bad)[0])
            row = m2[b] | self._block_view(self.exited)[b]
            missing = int(np.flatnonzero(~row)[0])
            arrived = int(m2[b].sum())
            live = int((~self._block_view(self.exited)[b]).sum())
            f = BarrierDivergence(
                f"syncthreads() reached by only {arrived} of the block's {live} live threads: a barrier must "
                "be reached by every thread of the block that has not returned.")
                # the thread that did not arrive is the one described
            _, mt = self.info.split_gtid((self.b0 + b) * T + missing)
            f.details.append(f"thread {mt} of this block did not reach it (it is in a different branch)")
            self.record(f, line, b * T + int(np.flatnonzero(m2[b])[0]), None, None)
            self.faults[(BarrierDivergence, line, None, ())].count += int(bad.sum()) - 1
        blocks = np.flatnonzero(present)
        gblocks = self.b0 + blocks
        self.now += 1
        self.bar_time[gblocks] = self.now
        w = (gblocks[:, None] * self.NW + np.arange(self.NW)[None, :]).reshape(-1)
        self.wbar_time[w] = self.now
        self.phase_all[gblocks] += 1
        self.now += 1
        for o in self.observers:
            o.on_barrier(gblocks, int(line))

    def syncthreads_reduce(self, kind, m, pred, line):
        self.syncthreads(m, line)
        p = self.truth(pred)
        if not isinstance(p, np.ndarray):
            p = np.full(self.N, p)
        if not isinstance(m, np.ndarray):
            m = self.all_lanes
        pm = self._block_view(p & m)
        if kind == "count":
            r = pm.sum(axis=1).astype(np.int32)
        elif kind == "and":
            r = (pm | ~self._block_view(m)).all(axis=1).astype(np.int32)
        else:
            r = pm.any(axis=1).astype(np.int32)
        return np.repeat(r, self.T)

    # -- warps ----------------------------------------------------------------------------------------
    def _warp_bits(self, b):
        """Per lane: the OR over its warp of (b[lane] << laneid), as uint32."""
        bits = b.astype(np.uint64) << self.laneid.astype(np.uint64)
        T = self.T
        if T % 32 == 0:
            w = bits.reshape(-1, 32).sum(axis=1)
            return np.repeat(w, 32).astype(np.uint32)
        starts = np.flatnonzero(self.laneid == 0)
        w = np.add.reduceat(bits, starts)
        counts = np.diff(np.append(starts, self.N))
        return np.repeat(w, counts).astype(np.uint32)

    def _check_warp_mask(self, m, mask, line, what):
        if not isinstance(m, np.ndarray):
            m = self.all_lanes
        act = self._warp_bits(m)
        exist = np.where(self.warp_size_of >= 32, np.uint64(FULL_MASK),
                         (np.uint64(1) << self.warp_size_of.astype(np.uint64)) - np.uint64(1)).astype(np.uint32)
        live = self._warp_bits(~self.exited)
        maskv = np.asarray(mask).astype(np.uint32) if not isinstance(mask, np.ndarray) else mask.astype(np.uint32)
        need = maskv & exist & live
        bad = m & ((need & ~act) != 0)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            needk = int(need if np.ndim(need) == 0 else need[k])
            actk = int(act[k])
            missing = [i for i in range(32) if (needk >> i) & 1 and not (actk >> i) & 1]
            f = BarrierDivergence(
                f"{what} names lanes {missing[:8]}{'...' if len(missing) > 8 else ''} of the warp in its mask "
                f"(0x{needk:08x}) but they are not executing it: every lane named in the mask must take part.")
            self.record(f, line, k, None, None)
        return act

    def syncwarp(self, m, mask, line):
        self._check_warp_mask(m, mask, line, "syncwarp()")
        lanes = self.active(m)
        if lanes.size:
            gw = np.unique((self.b0 + lanes // self.T) * self.NW + (lanes % self.T) // 32)
            self.now += 1
            self.wbar_time[gw] = self.now
            self.now += 1

    def shuffle(self, kind, m, mask, value, arg, width, line):
        before = len(self.faults)
        self._check_warp_mask(m, mask, line, f"shfl_{kind}_sync()" if kind != "idx" else "shfl_sync()")
        mask_ok = len(self.faults) == before
        if not isinstance(value, np.ndarray):
            return value
        w = np.int64(width)
        lid = self.laneid
        base = lid & ~(w - 1)
        a = np.asarray(arg).astype(np.int64) & 31  # the hardware reads the low 5 bits (checked on an H200)
        if kind == "idx":
            src = base + (a % w)
        elif kind == "up":
            src = lid - a
            src = np.where(src < base, lid, src)
        elif kind == "down":
            src = lid + a
            src = np.where(src >= base + w, lid, src)
        else:
            src = lid ^ a
            src = np.where((src < base) | (src >= base + w), lid, src)
        src = np.where(src < self.warp_size_of, src, lid)
        gsrc = self.warp_base + src
        mm = m if isinstance(m, np.ndarray) else self.all_lanes
        bad = mm & ~mm[gsrc]  # reading a lane that is not taking part (another branch, or returned)
        if mask_ok and bad.any():
            k = int(np.flatnonzero(bad)[0])
            other = int(src[k])
            why = "has returned" if self.exited[gsrc[k]] else "is not executing this shuffle (another branch)"
            self.record(BarrierDivergence(
                f"shfl_{kind}_sync() in lane {int(lid[k])} reads lane {other}, which {why}: the value it gets "
                "is undefined."), line, k, None, None, ("source",))
        return value[gsrc]

    def vote(self, kind, m, mask, pred, line):
        self._check_warp_mask(m, mask, line, f"{kind}_sync()")
        if not isinstance(m, np.ndarray):
            m = self.all_lanes
        maskv = np.uint32(mask) if not isinstance(mask, np.ndarray) else mask.astype(np.uint32)
        inmask = ((maskv >> self.laneid.astype(np.uint32)) & np.uint32(1)).astype(bool)
        if kind == "eq":
            v = pred if isinstance(pred, np.ndarray) else np.full(self.N, pred)
            part = m & inmask
            first = self._warp_first(v, part)
            return self._warp_bits(part & (v != first)) == 0
        p = self.truth(pred)
        if not isinstance(p, np.ndarray):
            p = np.full(self.N, p)
        ballot = self._warp_bits(p & m & inmask)
        if kind == "ballot":
            return ballot.view(np.int32)  # numba-cuda types ballot_sync as int32
        if kind == "any":
            return ballot != 0
        part = self._warp_bits(m & inmask)
        return ballot == part

    def _warp_first(self, v, part):
        """Per lane: the value of the lowest participating lane of its warp."""
        idx = np.where(part, np.arange(self.N), self.N)
        if self.T % 32 == 0:
            first = idx.reshape(-1, 32).min(axis=1).repeat(32)
        else:
            starts = np.flatnonzero(self.laneid == 0)
            mins = np.minimum.reduceat(idx, starts)
            first = np.repeat(mins, np.diff(np.append(starts, self.N)))
        first = np.minimum(first, self.N - 1)
        return v[first]

    def activemask(self, m):
        if not isinstance(m, np.ndarray):
            m = self.all_lanes
        return self._warp_bits(m)
