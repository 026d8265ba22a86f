"""The runtime the generated lane code calls: chunk geometry, the operations that need it, loops, faults.

One ``Runtime`` serves a whole launch; ``start_chunk`` points it at the next chunk of blocks. Memory accesses
live in ``access.py`` (``MemoryAccess``), barriers and warp intrinsics in ``sync.py`` (``Synchronisation``),
``print`` in ``output.py`` (``Output``); ``Runtime`` is them together, the one object generated code calls as
``rt``. Arithmetic the IR has typed is plain NumPy in the generated code; what is here needs the lanes, the
mask or a fault: integer division, integer powers, fused multiply-adds, conversions of floats to integers.
"""

from __future__ import annotations

import numpy as np

from ..device import WARP_SIZE
from ..faults import KernelError, KernelFault, KernelRaised, KernelTimeout, OutOfBounds
from ..ir.values import convert
from ..observe.events import ArrayInfo, LaunchInfo, UnrolledLoop
from .access import MemoryAccess
from .libdevice.rounding import to_odd, two_sum
from .memory import ArrayHandle
from .output import Output
from .sync import Synchronisation
from .views import Slicing, View

#: (block shape, blocks in the chunk) -> the chunk's read-only lane geometry (thread indices, lane ids, masks),
#: kept across launches: a benchmark or a judge launches one shape again and again
_GEOMETRY: dict[tuple, dict[str, np.ndarray]] = {}
_GEOMETRY_KEPT = 4   # a full chunk's geometry is about 3.5 MB

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


def fma_narrow(a, b, c, dtype: np.dtype):
    """``a*b + c`` for float16/float32 with one rounding. The float64 product of two narrower floats is exact,
    and one rounding of the float64 sum to ``dtype`` is the fused result unless that sum, itself rounded, landed
    on a midpoint of ``dtype`` and rounds a second time. Such a sum has at least 28 trailing zero bits (as an
    exact ``dtype`` value has), so only those lanes are looked at: where the sum was inexact (TwoSum's error),
    it is rounded to *odd* instead, and the one rounding that follows is then exact (53 bits > 24 + 1)."""
    f64 = np.float64
    with np.errstate(all="ignore"):
        p = f64(a) * f64(b)
        s = p + f64(c)
        if not isinstance(s, np.ndarray):
            return dtype.type(_to_odd_sum(s, p, f64(c)))
        suspect = np.flatnonzero((s.view(np.int64) & 0x0FFFFFFF) == 0)
        if len(suspect):
            pp = np.broadcast_to(p, s.shape)[suspect]
            cc = np.broadcast_to(f64(c), s.shape)[suspect]
            s = s.copy() if not s.flags.writeable else s
            s[suspect] = _to_odd_sum(s[suspect], pp, cc)
        return s.astype(dtype)


def _to_odd_sum(s, p, c):
    """``s = fl(p + c)`` rounded to odd instead: its neighbour with an odd last bit where the sum was inexact."""
    s, e = two_sum(p, c)                                # s + e == p + c exactly; the same s
    return to_odd(s, e)


def _squaring(a, e, t, vec: bool):
    """``a ** e`` for ``e >= 0`` by repeated squaring, every product rounded (or wrapped) in the type ``t``."""
    r = np.ones(np.broadcast(a, e).shape, t) if vec else t(1)
    while np.any(e != 0):
        r = np.where(e & 1, r * a, r) if vec else (r * a if e & 1 else r)
        e = e >> 1
        a = a * a
    return r


def timeout(max_steps: int) -> KernelTimeout:
    """The fault of a launch stopped by its step budget."""
    f = KernelTimeout(f"The kernel did more than {max_steps:,} steps of work and was stopped: it probably never "
                      "ends (a loop whose condition some thread never makes false?).", max_steps=max_steps)
    f.details.append("a step is one thread doing one simple operation; the budget stops an endless kernel "
                     "within seconds at any launch size")
    return f


class Abort(Exception):
    """Stops a launch after a fatal fault (a timeout); the fault is already recorded."""


def _lanes_of(m, a, b):
    """Per lane, ``a`` where ``m`` holds, else ``b``: a tuple's item (an array in a tuple, as a record reference
    holds its array, must be one array on both sides)."""
    if a is b:
        return a
    if isinstance(a, tuple):
        return tuple(_lanes_of(m, x, y) for x, y in zip(a, b))
    if isinstance(a, (ArrayHandle, View)) or isinstance(b, (ArrayHandle, View)):
        raise TypeError("a tuple or record holds a different array per thread: gpusim cannot hold that "
                        "(numba-cuda can); index one array instead")
    return np.where(m, a, b)


#: nested calls of recursive device functions a launch allows (each is a few Python frames deep)
MAX_RECURSION_DEPTH = 200


class Runtime(MemoryAccess, Slicing, Synchronisation, Output):
    def __init__(self, info: LaunchInfo, source_lines, kernel_name: str, observers, max_steps: int,
                 shared_mem: int, next_array_id: int, max_output_lines: int = 1000):
        self.info = info
        self.kernel = kernel_name
        self.src = source_lines  # callable lineno -> text
        self.observers = observers
        self.max_steps = max_steps
        self.T = info.threads_per_block
        self.NW = info.warps_per_block
        self.bdx, self.bdy, self.bdz = (np.int32(v) for v in info.block)
        self.gdx, self.gdy, self.gdz = (np.int32(v) for v in info.grid)
        self.warpsize = np.int32(WARP_SIZE)
        self.now = 0
        self.faults: dict[tuple, KernelFault] = {}
        self.shared_mem = shared_mem
        self.arrays: dict[tuple, ArrayInfo] = {}
        self.next_id = next_array_id
        self.const_handles: dict[int, ArrayHandle] = {}
        #: the launch's global arrays, whose access records a grid sync clears (``Synchronisation.grid_sync``)
        self.globals_tracked: list[ArrayHandle] = []
        #: calls of recursive device functions now running, nested (``recurse``)
        self.depth = 0
        self.field_handles: dict[tuple, ArrayHandle] = {}
        self.shared_static_bytes: dict[int, int] = {}
        self.flops: dict[tuple[str, str], int] = {}
        self.steps = 0
        self.loop: UnrolledLoop | None = None    # the unrolled loop running now, its iteration, and a counter
        self.loop_iteration = 0
        self.loop_ids = 0
        self._mask_cache: tuple[object, np.ndarray] | None = None
        self.init_output(max_output_lines)

    # -- chunks ---------------------------------------------------------------------------------------
    def start_chunk(self, b0: int, nb: int) -> None:
        self.flush_output()  # the previous chunk's prints, while its geometry still names their threads
        T = self.T
        N = nb * T
        self.b0, self.nb, self.N = b0, nb, N
        key = (self.info.block, nb)
        geom = _GEOMETRY.get(key)
        if geom is None:  # what depends only on the block's shape and the chunk's size: the same for every chunk
            lane = np.arange(N, dtype=np.int64)
            t = lane % T
            bx, by, _ = self.info.block
            # numba types threadIdx/blockIdx/blockDim/gridDim/laneid/warpsize as int32 (checked on the GPU)
            i32 = np.int32
            laneid = (t % WARP_SIZE).astype(i32)
            warp_in_block = t // WARP_SIZE
            geom = {
                "tx": (t % bx).astype(i32), "ty": ((t // bx) % by).astype(i32), "tz": (t // (bx * by)).astype(i32),
                "laneid": laneid, "lane_block": lane // T, "lane_warp_in_block": warp_in_block,
                "lanemask_lt": ((np.uint64(1) << laneid.astype(np.uint64)) - np.uint64(1)).astype(np.uint32),
                "all_lanes": np.ones(N, bool), "no_lanes": np.zeros(N, bool), "warp_base": lane - laneid,
                "warp_size_of": np.minimum(WARP_SIZE, T - warp_in_block * WARP_SIZE),
            }
            for v in geom.values():
                v.flags.writeable = False  # shared by every chunk of this size: nothing may change them
            try:
                while len(_GEOMETRY) >= _GEOMETRY_KEPT:   # the oldest goes
                    _GEOMETRY.pop(next(iter(_GEOMETRY)), None)
            except (RuntimeError, StopIteration):       # another thread's launch changed it meanwhile
                pass
            _GEOMETRY[key] = geom
        self.__dict__.update(geom)
        gx, gy, gz = self.info.grid
        blk = b0 + self.lane_block
        i32 = np.int32
        # blockIdx per lane; a grid of one row (or one plane) needs no division for it
        zero = geom.get("block_index_zero")
        if zero is None and (gy == 1 or gz == 1):
            zero = geom["block_index_zero"] = np.zeros(N, i32)
            zero.flags.writeable = False
        self.bx = blk.astype(i32) if gy == 1 and gz == 1 else (blk % gx).astype(i32)
        self.by = zero if gy == 1 else (blk // gx).astype(i32) if gz == 1 else ((blk // gx) % gy).astype(i32)
        self.bz = zero if gz == 1 else (blk // (gx * gy)).astype(i32)
        self.exited = self.no_lanes
        # barrier epochs and phases of the chunk's blocks (a block never spans chunks): indexed by block in
        # the chunk, so a launch's bookkeeping is the size of one chunk whatever its grid
        self.bar_time = np.full(nb, -1, np.int64)
        self.wbar_time = np.full(nb * self.NW, -1, np.int64)
        self.phase = np.zeros(nb, np.int64)
        self.shared: dict[int, ArrayHandle] = {}
        self.dyn_buffer = None
        self._mask_cache = None
        self._full_ids = None
        self._full_phase = None
        self.loop = None

    # -- helpers used by generated code ---------------------------------------------------------------
    def active(self, m) -> np.ndarray:
        c = self._mask_cache
        if c is not None and c[0] is m:
            return c[1]
        lanes = np.flatnonzero(m) if isinstance(m, np.ndarray) else (np.arange(self.N) if m else
                                                                      np.zeros(0, np.int64))
        self._mask_cache = (m, lanes)
        return lanes

    def first_lane(self, m) -> int | None:
        lanes = self.active(m)
        return int(lanes[0]) if lanes.size else None

    @staticmethod
    def merge(m, new, old):
        if old is None:
            return new
        if isinstance(new, tuple):
            return tuple(_lanes_of(m, a, b) for a, b in zip(new, old))
        return np.where(m, new, old)

    @staticmethod
    def select(c, a, b):
        if isinstance(a, tuple):
            return tuple(_lanes_of(c, x, y) for x, y in zip(a, b))
        return np.where(c, a, b)

    convert = staticmethod(convert)
    fma64 = staticmethod(fma64)
    fma_narrow = staticmethod(fma_narrow)

    def intdiv(self, a, b, is_mod: bool, m, line):
        """Integer ``a // b`` or ``a % b`` (Python's floor semantics). A zero divisor on an active lane is a
        ``KernelError`` fault; such a lane gets 0, as on the GPU."""
        if isinstance(b, np.ndarray):
            zero = b == 0
            if not zero.any():
                return a % b if is_mod else a // b
            bad = zero & m
            if bad.any():
                self.error(KernelError, "integer division by zero", int(np.flatnonzero(bad)[0]), line)
            safe = np.where(zero, np.ones((), b.dtype), b)
            r = a % safe if is_mod else a // safe
            return np.where(zero, np.zeros((), b.dtype), r)
        if b == 0:
            lane = self.first_lane(m)
            if lane is not None:
                self.error(KernelError, "integer division by zero", lane, line)
            return a * b
        return a % b if is_mod else a // b

    @staticmethod
    def ipow(a, b, m=None, line=0):
        """Integer ``a ** b`` as numba computes it: repeated squaring in the type (wrapping); a negative
        exponent gives 0, except for a base of 1 or -1 (and 0, which gives the type's minimum)."""
        t = np.asarray(a).dtype.type
        vec = isinstance(a, np.ndarray) or isinstance(b, np.ndarray)
        neg = b < 0
        r = _squaring(np.asarray(a) if vec else a, np.where(neg, -b, b) if vec else (-b if neg else b), t, vec)
        if np.any(neg):
            special = np.where(a == 1, t(1), np.where(a == -1, r, np.where(a == 0, np.iinfo(t).min, t(0))))
            r = np.where(neg, special, r) if vec else t(special)
        return r

    @staticmethod
    def fpow(a, n):
        """``a ** n`` for a float ``a`` and an integer ``n``, as numba computes it: repeated squaring in the
        float's type, and ``1 / result`` for a negative exponent."""
        t = np.asarray(a).dtype.type
        vec = isinstance(a, np.ndarray) or isinstance(n, np.ndarray)
        neg = n < 0
        e = np.where(neg, -np.asarray(n, np.int64), n) if vec else (-int(n) if neg else int(n))
        if not vec and e > 0x10000:  # numba's cutoff: the generic power function
            r = t(np.power(np.float64(a), np.float64(e)))
        else:
            r = _squaring(a, e, t, vec)
        if np.any(neg):
            r = np.where(neg, t(1) / r, r) if vec else t(1) / r
        return r

    def tuple_index(self, items, k, m, line):
        """``t[k]`` for an index known per lane: an index outside the tuple is an ``OutOfBounds`` fault."""
        n = len(items)
        if not isinstance(k, np.ndarray):
            if 0 <= k < n:
                return items[int(k)]
            lane = self.first_lane(m)
            if lane is not None:
                self.record(OutOfBounds(f"tuple index out of range: index {int(k)} for a tuple of {n} items."),
                            line, lane, None, (int(k),))
            return items[0] * 0
        bad = (k < 0) | (k >= n)
        if isinstance(m, np.ndarray):
            bad = bad & m
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            self.record(OutOfBounds(f"tuple index out of range: index {int(k[lane])} for a tuple of {n} items."), line,
                        lane, None, (int(k[lane]),))
        table = np.stack([np.broadcast_to(v, (self.N,)) for v in items])
        return table[np.clip(k, 0, n - 1), np.arange(self.N)]

    def trap(self, message: str, m, line) -> None:
        lane = self.first_lane(m)
        if lane is not None:
            self.error(KernelError, message, lane, line)
            raise Abort

    def raise_(self, message: str, exception, m, line) -> None:
        """The kernel's ``raise``: a ``KernelRaised`` fault on the first active lane, and the launch ends."""
        lane = self.first_lane(m)
        if lane is not None:
            self.record(KernelRaised(message, exception=exception), line, lane, None, None)
            raise Abort

    def irange(self, start, stop, step, dtype, m, line):
        if step == 0:
            lane = self.first_lane(m)
            self.error(KernelError, "a range() step is zero", lane if lane is not None else 0, line)
            raise Abort
        t = dtype.type
        return map(t, range(int(start), int(stop), int(step)))

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

    # -- loops the compiler unrolls (gpusim.ir.unroll): told to the observers, which count their requests --
    def loop_enter(self, start, stop, step, m, count, epilog, line):
        """A per-lane ``range`` loop the compiler unrolls by ``count`` starts for the lanes of ``m``."""
        if not self.observers:
            return
        start, stop, step = (np.asarray(v, np.int64) for v in (start, stop, step))
        span = np.where(step > 0, stop - start, start - stop)
        mag = np.where(step > 0, step, -step)
        mag = np.where(mag == 0, 1, mag)
        trips = np.where(span > 0, (span + mag - 1) // mag, 0)
        trips = np.where(m, np.broadcast_to(trips, (self.N,)), 0).astype(np.int64)
        trips.flags.writeable = False
        self.loop_ids += 1
        self.loop = UnrolledLoop(self.loop_ids, int(line), int(count), bool(epilog), self.b0 * self.T, trips)
        self.loop_iteration = -1

    def loop_iter(self):
        if self.loop is not None:
            self.loop_iteration += 1

    def loop_exit(self):
        loop, self.loop = self.loop, None
        if loop is not None:
            for o in self.observers:
                o.on_loop_exit(loop)

    def recurse(self, line, m, name):
        """Enter a recursive device function: past ``MAX_RECURSION_DEPTH`` nested calls a fault ends the launch
        (a runaway recursion; on a GPU it overflows the thread's stack). The generated code leaves by
        ``self.depth -= 1``."""
        self.depth += 1
        if self.depth > MAX_RECURSION_DEPTH:
            lanes_in = self.active(m)
            self.error(KernelError, f"device function {name!r} recursed more than {MAX_RECURSION_DEPTH} calls deep: "
                       "gpusim ends the launch here (a runaway recursion? on a GPU the thread's stack would "
                       "overflow)", int(lanes_in[0]) if lanes_in.size else None, line)
            raise Abort

    def tick(self, line, m, fixed, per_lane):
        """Charge the work of a function's entry or a loop's iteration: ``fixed`` steps and ``per_lane`` steps
        for each lane of the chunk (``gpusim.backends.lanes.work``)."""
        self.steps += fixed + per_lane * self.N
        if self.steps > self.max_steps:
            lanes_in = self.active(m)  # the thread described: the first one still running
            self.record(timeout(self.max_steps), line, int(lanes_in[0]) if lanes_in.size else None, None, None)
            raise Abort

    def flop(self, op, value, m):
        dt = getattr(value, "dtype", None)
        if dt is not None and dt.kind == "f":
            n = int(np.count_nonzero(m)) if isinstance(m, np.ndarray) else self.N
            key = (op, dt.name)
            self.flops[key] = self.flops.get(key, 0) + n
            if self.observers:
                for o in self.observers:
                    o.on_flops(op, dt, n)
        return value

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
