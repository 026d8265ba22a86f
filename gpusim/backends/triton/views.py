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
where the loops around the read store nothing into the array, before the outermost of them
(``ProgramGen.view``). ``K`` must be a multiple of the window's size along each axis (``Kc`` of ``by``,
``Kr`` of ``bx``): the transposed tile is then ``W`` windows of ``[by, bx]``, whose index is made the last
axes of the transpose and split off with ``tl.split`` (which needs those axes within a thread: Triton moves
the tile between threads once, there, through its shared memory, as the CUDA kernel does with its tile); a
read picks its window with ``tl.where`` on the uniform index, in registers. Compiled for sm_90, puzzle
17's program is then the CUDA kernel's instructions: four global loads, four shared stores, a barrier, four
shared loads, four global stores.

A read of each thread's own column in a row that a loop variable moves, ``tile[ty + k * ROWS, tx]``, is the
thread's element of the plane ``k`` names: a ``tl.where`` over the planes, no lane moves.

Anything else (another element function, a window that straddles blocks, elements no plane covers, more than
``MAX_WINDOWS`` windows, a block of padding lanes or of three dimensions) is left to ``memory.py``'s
gathers.
"""

from __future__ import annotations

from .tiles import pow2
from .values import ArrayRef, Val, tl_type

#: the most windows a transposed tile is split into (each one register per thread while it is live; there are
#: as many as planes, rounded up to a power of two, and a written-out store loop gives at most 16 planes)
MAX_WINDOWS = 16


def _stacked(g, ref: ArrayRef):
    """``(c0, S, n)`` when the planes are rows ``c0 + S*(k*by + ty) + tx`` of the array, k = 0 .. n-1."""
    bx, by, bz = g.block_shape
    if bz != 1 or by < 2 or bx * by != g.P or not ref.planes:
        return None
    maps = sorted((f for f, _ in ref.planes), key=lambda f: f.c)
    s, c0 = maps[0].y, maps[0].c
    for k, f in enumerate(maps):
        if not (f.fixed and f.x == 1 and f.z == 0 and f.y == s and f.c == c0 + k * by * s):
            return None
    if s < bx:
        return None
    return c0, s, len(maps)


def _multiple(coef: int, values: range, d: int) -> bool:
    """``coef * v`` is a multiple of ``d`` for every ``v`` of ``values`` (an arithmetic progression)."""
    return (coef * values.start) % d == 0 and (coef * values.step) % d == 0


def _split(g, f, c0: int, s: int):
    """The uniform offset of ``f`` (``K``) split along the axes of ``T``: ``(kr, rows, lo_r, hi_r)`` (the rows:
    a constant and the loop-variable terms whose every value is a multiple of ``S``) and ``(kc, cols, lo_c,
    hi_c)`` (the columns: the rest), each part's terms as {variable: coefficient in elements} and its range
    (in rows, in elements) over the variables' values. None if a variable's values are unknown."""
    rows, cols = {}, {}
    kr, kc = divmod(f.c - c0, s)
    lo_r = hi_r = kr
    lo_c = hi_c = kc
    for name, coef in f.u:
        values = g.sym_ranges.get(name)
        if values is None:
            return None
        a, b = coef * values[0], coef * values[-1]
        if _multiple(coef, values, s):
            rows[name] = coef
            lo_r, hi_r = lo_r + min(a, b) // s, hi_r + max(a, b) // s
        else:
            cols[name] = coef
            lo_c, hi_c = lo_c + min(a, b), hi_c + max(a, b)
    return (kr, rows, lo_r, hi_r), (kc, cols, lo_c, hi_c)


def _index_code(g, const: int, terms: dict[str, int], scale: int, unit: int) -> str | None:
    """The block index ``(const + sum(coef * v) / scale) / unit`` as code (exact: every value of each part a
    multiple), or None."""
    d = scale * unit
    if const % unit or not all(_multiple(c, g.sym_ranges[v], d) for v, c in terms.items()):
        return None
    parts = [str(const // unit)] if const else []
    for v, c in sorted(terms.items()):
        if c % d == 0:
            parts.append(v if c == d else f"{v} * {c // d}")
        else:                                      # e.g. j in range(0, 32, 8), 8 rows a block: (j * 1) // 8
            parts.append(f"({v} // {d})" if c == 1 else f"(({v} * {c}) // {d})")
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
    if f.x == 1 and f.y == s and f.z == 0 and not f.fixed:
        return _own_row(g, ref, f, c0, s, n)
    if not (f.x == s and f.y == 1 and f.z == 0):
        return None
    split = _split(g, f, c0, s)
    if split is None:
        return None
    (kr, rows, lo_r, hi_r), (kc, cols, lo_c, hi_c) = split
    if lo_c < 0 or hi_c + by > bx or lo_r < 0 or hi_r + bx > n * by:
        return None                                # some element read lies outside what the planes hold
    npad = pow2(n)
    if bx % by or (npad * by) % bx:
        return None
    cb, rb = bx // by, npad * by // bx             # windows along the transposed tile's two axes
    if cb * rb > MAX_WINDOWS:
        return None
    jc = _index_code(g, kc, cols, 1, by) if cb > 1 else "0"      # (cb == 1: Kc is 0, by the range check)
    jr = _index_code(g, kr, rows, s, bx) if rb > 1 else "0"
    if jc is None or jr is None:
        return None
    windows = g.view(ref, ("windows",), lambda: _windows(g, ref, n, npad, cb, rb))
    row = f"({jr})" if " " in jr else jr
    index = jc if jr == "0" else (f"{row} * {cb}" if jc == "0" else f"{row} * {cb} + {jc}")
    if index.isdigit():
        code = windows[int(index)]
    else:
        if not index.isidentifier():
            w = g.tmp("_w")
            g.emit(f"{w} = {index}")
            index = w
        code = windows[-1]
        for w in range(len(windows) - 2, -1, -1):
            code = f"tl.where({index} == {w}, {windows[w]}, {code})"
    name = g.tmp("_sv")
    g.emit(f"{name} = tl.reshape({code}, [{g.P}])")
    t = ref.dtype
    return Val(f"({name} != 0)" if t.is_bool else name, t, vec=True, pure=False)


def _own_row(g, ref: ArrayRef, f, c0: int, s: int, n: int) -> Val | None:
    """``tile[ty + K, tx]`` with ``K`` a multiple of ``by`` that a loop variable moves: each thread's own
    element of the plane the uniform index ``K / by`` names, picked with ``tl.where`` (no lane moves)."""
    _, by, _ = g.block_shape
    split = _split(g, f, c0, s)
    if split is None:
        return None
    (kr, rows, lo_r, hi_r), (kc, cols, _, _) = split
    index = _index_code(g, kr, rows, s, by)
    if cols or kc or index is None or lo_r < 0 or hi_r + by > n * by:
        return None
    if not index.isidentifier():
        w = g.tmp("_w")
        g.emit(f"{w} = {index}")
        index = w
    planes = [tensor for _, tensor in sorted(ref.planes, key=lambda p: p[0].c)]
    code = planes[-1]
    for k in range(n - 2, -1, -1):
        code = f"tl.where({index} == {k}, {planes[k]}, {code})"
    name = g.tmp("_sv")
    g.emit(f"{name} = {code}")
    t = ref.dtype
    return Val(f"({name} != 0)" if t.is_bool else name, t, vec=True, pure=False)


def _stack(g, ref: ArrayRef, n: int, npad: int) -> tuple[str, int]:
    """The planes joined: ``[P, 2, .., 2]`` with ``m`` axes of 2, plane ``b0 + 2*b1 + ...``; its name and ``m``."""
    planes = [tensor for _, tensor in sorted(ref.planes, key=lambda p: p[0].c)]
    store = "tl.int8" if ref.dtype.is_bool else tl_type(ref.dtype)
    planes += [f"tl.zeros([{g.P}], {store})"] * (npad - n)
    m = 0
    while len(planes) > 1:       # plane k = b0 + 2*b1 + 4*b2 ..., the new axes b0, b1, ... last
        planes = [f"tl.join({planes[k]}, {planes[k + 1]})" for k in range(0, len(planes), 2)]
        m += 1
    if not m:
        return planes[0], 0
    name = g.tmp("_stack")
    g.emit(f"{name} = {planes[0]}")
    return name, m


def _windows(g, ref: ArrayRef, n: int, npad: int, cb: int, rb: int) -> list[str]:
    """Emit the ``rb * cb`` windows of the transposed tile as ``[by, bx]`` tensors; their names, window
    ``q * cb + j`` holding rows ``j*by ..`` and columns ``q*bx ..`` of the transpose (columns and rows of the
    array)."""
    bx, by, _ = g.block_shape
    stacked, m = _stack(g, ref, n, npad)
    qc = cb.bit_length() - 1     # the plane index's low qc bits step through a window's columns, the rest is q
    # the stack as [ty, j, ty', b0 .. b(m-1)] (the store's tx = j*by + ty'; the array's row (b..)*by + ty)
    src = [by] + ([cb] if cb > 1 else []) + [by] + [2] * m
    first = 2 if cb > 1 else 1
    bit = [first + 1 + k for k in range(m)]
    # -> [ty', b(qc-1) .. b0, ty, b(m-1) .. b(qc), j]: a window's row, its column, then the window (q, j)
    dims = [first] + bit[:qc][::-1] + [0] + bit[qc:][::-1] + ([1] if cb > 1 else [])
    bits = (cb * rb).bit_length() - 1
    name = g.tmp("_tileT")
    g.emit(f"{name} = tl.reshape(tl.trans(tl.reshape({stacked}, [{', '.join(map(str, src))}]), "
           f"({', '.join(map(str, dims))})), [{by}, {bx}{', 2' * bits}])")
    out = [name]
    for _ in range(bits):        # split the window index's lowest bit off, one bit at a time
        nxt = [""] * (2 * len(out))
        for r, x in enumerate(out):
            lo, hi = g.tmp("_win"), g.tmp("_win")
            g.emit(f"{lo}, {hi} = tl.split({x})")
            nxt[r], nxt[r + len(out)] = lo, hi
        out = nxt
    return out


__all__ = ["MAX_WINDOWS", "transposed_load"]
