"""Triton back end, tile views: a register shared array read across its threads as one 2-D tensor.

A shared array held in registers is one ``[lanes]`` tensor per store pattern (``memory.py``). Where the
patterns tile the array by rows, as a CUDA kernel fills a tile with a 2-D block::

    tile[ty + k * ROWS, tx] = v          # k = 0 .. n-1: n planes, plane k at element c0 + k*by*S + S*ty + tx

(``S`` the array's row stride, padding column or not; ``by x bx`` the block, ``bx <= S``), the planes
stacked are the array's rows ``0 .. n*by`` and columns ``0 .. bx``: a ``[n*by, bx]`` tensor ``T``. A read
of the tile by columns, ``tile[tx, ty + K]`` (its element ``S*tx + ty + K``, ``K`` uniform: a constant or
the variable of an enclosing loop of constant bounds) is then ``R[ty, tx] = T[tx + Kr, ty + Kc]``: a window
of ``tl.trans(T)``, where lane by lane it was one ``tl.gather`` per plane (each a round trip through the
GPU's shared memory) plus the arithmetic that inverts each plane's pattern, on every read. The transposed
tensor is built once (``tl.join`` stacks the planes, ``tl.trans`` puts the array's columns first) and,
where the loop around the read stores nothing into the array, before that loop (``ProgramGen.view``); a
window is picked per read with a select over the uniform block index (``K`` a multiple of the window's
size along each axis). Triton moves the data once, as CUDA does with its shared-memory tile.

Anything else (another element function, a window that straddles blocks, elements no plane covers, a block
of padding lanes or of three dimensions) is left to ``memory.py``'s gathers.
"""

from __future__ import annotations

from ...ir.types import INT8
from .values import ArrayRef, Val, tl_type


def _pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def _stacked(g, ref: ArrayRef):
    """``(c0, S, n)`` when the planes are rows ``c0 + S*(k*by + ty) + tx`` of the array, k = 0 .. n-1."""
    bx, by, bz = g.block_shape
    if bz != 1 or by < 2 or bx * by != g.P or not ref.planes:
        return None
    maps = sorted((f.c, f) for f, _ in ref.planes)
    s = maps[0][1].y
    c0 = maps[0][0]
    for k, (c, f) in enumerate(maps):
        if not (f.fixed and f.x == 1 and f.z == 0 and f.y == s and c == c0 + k * by * s):
            return None
    if s < bx:
        return None
    return c0, s, len(maps)


def _split(g, f, c0: int, s: int):
    """The uniform offset of ``f`` (``K``) as (constant, {var: coef}) per axis of ``T``: rows (multiples of
    ``S``), columns (the rest); with each part's range over the loop variables' values. None if a range is
    unknown."""
    rows, cols = {}, {}
    kr, kc = divmod(f.c - c0, s)
    lo_r = hi_r = kr
    lo_c = hi_c = kc
    for name, coef in f.u:
        rng = g.sym_ranges.get(name)
        if rng is None:
            return None
        lo, hi = rng
        if coef % s == 0:
            rows[name] = coef // s
            a, b = rows[name] * lo, rows[name] * hi
            lo_r, hi_r = lo_r + min(a, b), hi_r + max(a, b)
        else:
            cols[name] = coef
            a, b = coef * lo, coef * hi
            lo_c, hi_c = lo_c + min(a, b), hi_c + max(a, b)
    return (kr, rows, lo_r, hi_r), (kc, cols, lo_c, hi_c)


def _index_code(const: int, terms: dict[str, int], unit: int) -> str | None:
    """The block index ``(const + sum(coef * v)) / unit`` as code, or None if some part is not a multiple."""
    if const % unit or any(c % unit for c in terms.values()):
        return None
    parts = [str(const // unit)] if const else []
    parts += [v if c == unit else f"{v} * {c // unit}" for v, c in sorted(terms.items())]
    return " + ".join(parts) if parts else "0"


def transposed_load(g, ref: ArrayRef, off: Val) -> Val | None:
    """``ref[off]`` as a window of the transposed tile when it reads the tile by columns (module docstring),
    else None."""
    f = g.norm(off.affine)
    got = _stacked(g, ref)
    if f is None or got is None or not off.vec:
        return None
    c0, s, n = got
    bx, by, _ = g.block_shape
    if not (f.x == s and f.y == 1 and f.z == 0):
        return None
    split = _split(g, f, c0, s)
    if split is None:
        return None
    (kr, rows, lo_r, hi_r), (kc, cols, lo_c, hi_c) = split
    nr = n * by                                    # rows of the array the planes cover
    if lo_c < 0 or hi_c + by > bx or lo_r < 0 or hi_r + bx > nr:
        return None                                # some element read lies outside what the planes hold
    npad = _pow2(n)
    if bx % by or (npad * by) % bx:
        return None
    cb, rb = bx // by, npad * by // bx             # windows along the transposed tile's axes
    jc = _index_code(kc, cols, by) if cb > 1 else ("0" if hi_c == 0 else None)
    jr = _index_code(kr, rows, bx) if rb > 1 else ("0" if hi_r == 0 else None)
    if jc is None or jr is None:
        return None
    shape = ([cb] if cb > 1 else []) + [by] + ([rb] if rb > 1 else []) + [bx]
    view = g.view(ref, ("trans", tuple(shape)), lambda: _build(g, ref, n, npad, shape))
    t = ref.dtype
    store_t = INT8 if t.is_bool else t
    code, axes = view, len(shape)
    if rb > 1:                                     # the window's block of the array's rows
        axis = axes - 2
        hit = f"(tl.arange(0, {rb}){_expand(axis, axes)} == {jr})"
        code = g.pick(code, store_t, hit, axis)
        axes -= 1
    if cb > 1:                                     # ... and of its columns
        hit = f"(tl.arange(0, {cb}){_expand(0, axes)} == {jc})"
        code = g.pick(code, store_t, hit, 0)
    name = g.tmp("_sv")
    g.emit(f"{name} = tl.reshape({code}, [{g.P}])")
    return Val(f"({name} != 0)" if t.is_bool else name, t, vec=True, pure=False)


def _expand(axis: int, ndim: int) -> str:
    """The indexing that makes a ``[m]`` range lie along ``axis`` of an ``ndim``-dimensional tensor."""
    return "[" + ", ".join(":" if k == axis else "None" for k in range(ndim)) + "]"


def _build(g, ref: ArrayRef, n: int, npad: int, shape: list[int]) -> str:
    """Emit the transposed tile, ``[columns, rows]`` of the array reshaped to ``shape``; its name."""
    bx, by, _ = g.block_shape
    planes = [tensor for _, tensor in sorted(ref.planes, key=lambda p: p[0].c)]
    store = "tl.int8" if ref.dtype.is_bool else tl_type(ref.dtype)
    planes += [f"tl.zeros([{g.P}], {store})"] * (npad - n)
    m = 0
    while len(planes) > 1:       # stack: plane k = b0 + 2*b1 + 4*b2 ..., the new axes b0, b1, ... last
        planes = [f"tl.join({planes[k]}, {planes[k + 1]})" for k in range(0, len(planes), 2)]
        m += 1
    stacked = planes[0]
    if m:
        j = g.tmp("_stack")
        g.emit(f"{j} = {stacked}")
        stacked = j
    # [ty, tx, b0 .. b(m-1)] -> [tx, b(m-1) .. b0, ty]: the array's column, then its row (k*by + ty)
    dims = ", ".join(str(d) for d in [1] + [2 + k for k in reversed(range(m))] + [0])
    name = g.tmp("_tileT")
    g.emit(f"{name} = tl.reshape(tl.trans(tl.reshape({stacked}, [{by}, {bx}{', 2' * m}]), ({dims})), "
           f"[{', '.join(str(d) for d in shape)}])")
    return name


__all__ = ["transposed_load"]
