"""The runtime the generated lane code calls: chunk geometry, values, arithmetic, loops, fault records.

One ``Runtime`` serves a whole launch; ``start_chunk`` points it at the next chunk of blocks. Memory accesses
live in ``access.py`` (``MemoryAccess``), barriers and warp intrinsics in ``sync.py`` (``Synchronisation``);
``Runtime`` is the three together, the one object generated code calls as ``rt``.
"""

from __future__ import annotations

import numpy as np

from ..faults import KernelError, KernelFault, KernelTimeout
from ..observe.events import ArrayInfo, LaunchInfo
from . import intrinsics as ix
from .access import MemoryAccess
from .memory import ArrayHandle
from .sync import Synchronisation

_OPS = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "//": np.floor_divide,
        "%": np.remainder, "**": np.power, "<<": np.left_shift, ">>": np.right_shift, "|": np.bitwise_or,
        "^": np.bitwise_xor, "&": np.bitwise_and}
_FLOP_NAMES = {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "special"}


def _arith_type(a: np.dtype, b: np.dtype) -> np.dtype:
    """numba's result type of an arithmetic operation on two scalar types."""
    if a.kind in "iub" and b.kind in "iub":
        return np.dtype(np.uint64 if a.kind == "u" and b.kind == "u" else np.int64)
    return np.result_type(a, b)


_SPLIT = 134217729.0  # 2**27 + 1: Dekker's split of a float64 into two 26-bit halves


def fma64(a, b, c):
    """``a*b + c`` on float64 with one rounding (almost always; at worst off by one ulp), by error-free
    transformations: the product's rounding error (Dekker) and the sum's (Knuth) are added back once."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl   # p + e == a*b exactly
    s = p + c
    z = s - p
    err = (p - (s - z)) + (c - z)                      # s + err == p + c exactly
    r = s + (err + e)
    plain = p + c
    return np.where(np.isfinite(r), r, plain) if isinstance(r, np.ndarray) else (r if np.isfinite(r) else plain)


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


class Runtime(MemoryAccess, Synchronisation):
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
        """``psign*x*y + csign*c`` rounded once, as the GPU's fused multiply-add does: numba-cuda lets the
        compiler contract ``a*b + c`` for float16/32/64 (seen on an H200) — but only where the product and
        the sum have one type. A float32 product added to a float64 (``acc = 0.0; acc += a[i] * b[i]``) is
        rounded to float32 first: the conversion between them stops LLVM's contraction (an H200 gave
        different bits for puzzle 14 when gpusim fused it). Integer operands: plain ops."""
        dx = x.dtype if hasattr(x, "dtype") else _py_dtype(x)
        dy = y.dtype if hasattr(y, "dtype") else _py_dtype(y)
        dc = c.dtype if hasattr(c, "dtype") else _py_dtype(c)
        prod = _arith_type(dx, dy)
        out = _arith_type(prod, dc)
        if prod.kind == "f" and prod == out:
            f64 = np.float64
            xx = x.astype(f64) if isinstance(x, np.ndarray) else f64(x)
            yy = y.astype(f64) if isinstance(y, np.ndarray) else f64(y)
            cc = c.astype(f64) if isinstance(c, np.ndarray) else f64(c)
            if psign < 0:
                xx = -xx
            if csign < 0:
                cc = -cc
            if out.itemsize <= 4:  # the float64 product of two float32s is exact: one rounding at the end
                r = xx * yy + cc
            else:
                r = fma64(xx, yy, cc)
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
