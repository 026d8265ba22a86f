"""Triton back end, tile products: a shared-memory inner-product loop -> one ``tl.dot`` on the block's tile.

The loop of a tiled matrix product, between the two barriers of a k-step::

    for j in range(J):                       # constant bounds, the same for the whole block
        acc = fma(sa[ty, j], sb[j, tx], acc) # (or acc = acc + sa[..] * sb[..], acc a float64 of float32s)

gives thread ``(ty, tx)`` the sum over ``j`` of row ``ty`` of one shared tile times column ``tx`` of the
other. Written lane by lane, every iteration is a gather across the program's lanes for each operand (a
register plane) or a per-lane load of the scratch region: 2·J of them per step, each a round trip through
the GPU's shared memory. Seen as the block's ``[by, bx]`` grid of accumulators, the loop is one matrix
product: ``A[r, j] = sa[row element of r and j]``, ``B[j, c] = sb[column element of j and c]``, and
``acc[ty, tx] += (A @ B)[ty, tx]``: one ``tl.dot``, whose operands Triton stages through shared memory once.

Recognised here, from the IR, in general terms: a uniform ``range`` loop of constant bounds whose body is one
accumulation into a per-thread local of the product of two loads from shared arrays, where one load's element
is an affine function of ``(ty, j)`` only and the other's of ``(tx, j)`` only (the element each thread reads
in iteration ``j``, as the generator already tracks thread-affine indices), in a block of ``by x bx`` threads
(both at least 16, ``tl.dot``'s smallest tile, no padding lanes). Anything else is left to the lane-by-lane
translation.

Results: ``input_precision="ieee"`` (Triton's default for float32 is TF32 on the GPU, 10 bits of mantissa);
on sm_90 a float32 ``ieee`` dot is a chain of FMAs per output in ``j`` order starting from the accumulator,
what the CUDA loop of ``fma`` computes. An ``acc + x * y`` that the front end did not fuse is fused here.
A float64 accumulator of float32 products (``acc = 0.0`` in numba) is not a dot (triton 3.6 has no float64
``tl.dot``, and a float32 one would round the sum): the ``[J, by, bx]`` products, each rounded to float32 as
CUDA rounds it, are summed over ``J`` in float64 by ``tl.sum`` (another order of float64 additions than
CUDA's: far below the float32 result's rounding). ``J`` first: the program's threads (at most
``by x bx``) fill a layout's fastest dimensions first, so Triton's default layout gives each thread all ``J``
products of its own outputs (the slowest dimension lies within a thread) and the sum is a thread's additions
in registers, as in CUDA;
with ``J`` in the middle it spanned threads and warps (shuffles and shared memory per k-step: puzzle 14
took 17x numba's time on the H200). ``K`` (``J``) is padded with zeros to a power of two of at
least 16 (``fma(0, 0, acc) == acc``).
"""

from __future__ import annotations

from ...ir import nodes as N
from ...ir.types import INT64, Scalar
from .expressions import literal
from .values import Val, tl_type

#: ``tl.dot``'s smallest M, N and K on NVIDIA GPUs
MIN_DOT = 16


def pow2(n: int) -> int:
    """The smallest power of two at least ``n``."""
    p = 1
    while p < n:
        p *= 2
    return p


def _product(value: N.Expr, acc: str) -> tuple[N.Load, N.Load, bool] | None:
    """``(x, y, widened)`` when ``value`` is ``fma(x, y, acc)`` or ``acc + x * y`` (the product possibly widened
    by a cast: ``widened``), x and y loads."""
    if isinstance(value, N.Fma) and isinstance(value.c, N.Var) and value.c.name == acc:
        x, y, widened = value.a, value.b, False
    elif isinstance(value, N.Binary) and value.op == "add":
        if isinstance(value.left, N.Var) and value.left.name == acc:
            term = value.right
        elif isinstance(value.right, N.Var) and value.right.name == acc:
            term = value.left
        else:
            return None
        widened = isinstance(term, N.Cast)
        if widened:
            term = term.value
        if not (isinstance(term, N.Binary) and term.op == "mul"):
            return None
        x, y = term.left, term.right
    else:
        return None
    if not (isinstance(x, N.Load) and isinstance(y, N.Load)):
        return None
    return x, y, widened


class _Operand:
    """One load of the loop as a tile: its array, and its element ``c + lane_coef * u + j_coef * j`` where ``u`` is
    ``ty`` (a row operand) or ``tx`` (a column operand)."""

    def __init__(self, ref, c: int, lane_coef: int, j_coef: int, along: str):
        self.ref, self.c, self.lane_coef, self.j_coef, self.along = ref, c, lane_coef, j_coef, along


def tile_product(g, s: N.ForRange, ctx, start: Val, stop: Val, step: Val) -> bool:
    """Write ``s`` as one ``tl.dot`` if it is a tile product (module docstring). True if done."""
    if not (start.lit and stop.lit and step.lit and int(step.value) == 1) or len(s.body) != 1:
        return False
    j0, trip = int(start.value), int(stop.value) - int(start.value)
    bx, by, bz = g.block_shape
    if trip < 1 or bz != 1 or bx * by != g.P or bx < MIN_DOT or by < MIN_DOT:
        return False
    body = s.body[0]
    if not isinstance(body, N.Assign) or body.target == s.var or not g.is_vec_local(body.target):
        return False
    acc_t = body.value.type
    got = _product(body.value, body.target)
    if got is None or not isinstance(acc_t, Scalar):
        return False
    x, y, widened = got
    src_t = x.type
    if not (src_t == y.type and isinstance(src_t, Scalar) and src_t.name == "float32"):
        return False
    if acc_t.name != ("float64" if widened else "float32"):
        return False
    ops = [_operand(g, e, s, j0, ctx) for e in (x, y)]
    if any(o is None for o in ops):
        return False
    rows = [o for o in ops if o.along == "y"]
    cols = [o for o in ops if o.along == "x"]
    if len(rows) != 1 or len(cols) != 1:
        return False
    row, col = rows[0], cols[0]
    if not (_inside(row, by, trip) and _inside(col, bx, trip)):
        return False
    kp = max(MIN_DOT, pow2(trip))
    g.cur_line = body.line
    a = _tile(g, row, by, trip, kp, rows_first=True)
    b = _tile(g, col, bx, trip, kp, rows_first=False)
    acc = g.local(body.target, acc_t, body.line)
    d = g.tmp("_dot")
    if widened:      # each product rounded to float32 as CUDA rounds it, their sum in float64, j slowest
        g.emit(f"{d} = tl.reshape({acc.code}, [{by}, {bx}]) + tl.sum((tl.trans({a})[:, :, None] * {b}[:, None, :])"
               f".to(tl.float64), 0)")
    else:
        g.emit(f"{d} = tl.dot({a}, {b}, tl.reshape({acc.code}, [{by}, {bx}]), input_precision=\"ieee\")")
    g.assign_local(body.target, acc_t, Val(f"tl.reshape({d}, [{g.P}])", acc_t, vec=True), ctx, body.line)
    g.cur_line = s.line                  # the loop variable keeps its last value, as after the loop
    g.assign_local(s.var, s.start.type, literal(j0 + trip - 1, s.start.type), ctx, s.line)
    return True


def _operand(g, e: N.Load, s: N.ForRange, j0: int, ctx) -> _Operand | None:
    """``e``'s element as a function of the thread and the loop variable, from two iterations' indices."""
    ref = g.array_of(e.array, ctx) if isinstance(e.array, N.Var) else None
    if ref is None or not (ref.kind == "reg" or (ref.kind == "ptr" and ref.scratch)):
        return None
    if ref.kind == "ptr" and not all(d.isdigit() for d in ref.shape):
        return None
    affs = []
    for j in (j0, j0 + 1):
        saved, g.out = g.out, []
        g.frame.consts[s.var] = literal(j, s.start.type)
        try:
            off = g.flat_index(ref, e.index, ctx)
        finally:
            g.frame.consts.pop(s.var, None)
            g.out = saved
        f = g.norm(off.affine)
        if f is None or not f.fixed or not off.pure or f.z:
            return None
        affs.append(f)
    f0, f1 = affs
    if (f0.x, f0.y) != (f1.x, f1.y):
        return None
    dj = f1.c - f0.c
    if f0.x == 0 and f0.y != 0:
        return _Operand(ref, f0.c - dj * j0, f0.y, dj, "y")
    if f0.y == 0 and f0.x != 0:
        return _Operand(ref, f0.c - dj * j0, f0.x, dj, "x")
    return None


def _inside(o: _Operand, n: int, trip: int) -> bool:
    """Every element the tile reads lies in its array (a scratch tile is read whole, not lane by lane)."""
    numel = 1
    for d in o.ref.shape:
        numel *= int(d)
    lo = hi = o.c
    for coef, size in ((o.lane_coef, n), (o.j_coef, trip)):
        lo += min(0, coef * (size - 1))
        hi += max(0, coef * (size - 1))
    return 0 <= lo and hi < numel


def _tile(g, o: _Operand, n: int, trip: int, kp: int, rows_first: bool) -> str:
    """A ``[n, kp]`` (row operand) or ``[kp, n]`` (column operand) tensor of ``o``'s elements, zero past ``trip``."""
    bx, by, _ = g.block_shape
    plane = _whole_plane(o, bx, by, trip, kp)
    if plane is not None:
        return f"tl.reshape({plane}, [{by}, {bx}])"
    lanes = f"tl.arange(0, {n})"
    ks = f"tl.arange(0, {kp})"
    u, j = (f"{lanes}[:, None]", f"{ks}[None, :]") if rows_first else (f"{lanes}[None, :]", f"{ks}[:, None]")
    shape = f"[{n}, {kp}]" if rows_first else f"[{kp}, {n}]"
    e = g.tmp("_te")
    terms = [str(o.c)] if o.c else []
    terms += [x if k == 1 else f"{x} * {k}" for x, k in ((u, o.lane_coef), (j, o.j_coef)) if k]
    g.emit(f"{e} = {' + '.join(terms)}")
    used = f"({j} < {trip})" if trip < kp else ""
    t = o.ref.dtype
    name = g.tmp("_tile")
    if o.ref.kind == "ptr":
        g.scratch_dot = True             # the enclosing loop must not prefetch it (codegen's loop)
        if used:
            g.emit(f"{name} = tl.load({o.ref.base} + tl.where({used}, {e}, 0), mask={used}, other=0)")
        else:
            g.emit(f"{name} = tl.load({o.ref.base} + {e})")
        g.fenced = False
        return name
    code = f"tl.zeros({shape}, {tl_type(t)})"
    for f, tensor in o.ref.planes:
        src, ok = g.memory.source_lane(g, f, Val(e, INT64, vec=True))
        ok = f"{used} & {ok}" if used else ok
        flat = f"tl.reshape(tl.where({ok}, {src}, 0), [{n * kp}])"
        got = f"tl.reshape(tl.gather({tensor}, {flat}, 0), {shape})"
        nxt = g.tmp("_tile")
        g.emit(f"{nxt} = tl.where({ok}, {got}, {code})")
        code = nxt
    return code


def _whole_plane(o: _Operand, bx: int, by: int, trip: int, kp: int) -> str | None:
    """The register plane that, reshaped to ``[by, bx]``, is the tile itself: thread ``(ty, tx)`` stored exactly
    the element the tile holds at ``[ty, tx]`` (``sa[ty, tx] = ...`` read back as ``sa[ty, j]`` and
    ``sb[j, tx]``)."""
    if o.ref.kind != "reg" or len(o.ref.planes) != 1 or trip != kp:
        return None
    (f, tensor), = o.ref.planes
    if f.x != 1 or f.c != o.c:
        return None
    if o.along == "y":       # A[r, j] = element c + lane_coef * r + j: needs j the plane's tx, r its ty
        ok = o.j_coef == 1 and o.lane_coef == f.y and trip == bx
    else:                    # B[j, c] = element c + j_coef * j + c: j the plane's ty, c its tx
        ok = o.lane_coef == 1 and o.j_coef == f.y and trip == by
    return tensor if ok else None


__all__ = ["pow2", "tile_product"]
