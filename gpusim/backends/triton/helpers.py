"""Small ``@triton.jit`` functions the generated programs call, written into each program that uses them, so
that a printed program is complete and runs on its own."""

from __future__ import annotations

from ...device import WARP_SIZE

HELPERS = {
    "floordiv": '''
@triton.jit
def _floordiv(a, b):
    """Python's ``a // b`` on signed integers (Triton's ``//`` truncates toward zero, Python's floors)."""
    q = a // b
    return tl.where(((a % b) != 0) & ((a < 0) != (b < 0)), q - 1, q)
''',
    "mod": '''
@triton.jit
def _mod(a, b):
    """Python's ``a % b`` on signed integers: the result has the divisor's sign."""
    r = a % b
    return tl.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)
''',
    "floordiv_float": '''
@triton.jit
def _floordiv_float(a, b):
    """Python's ``a // b`` on floats, computed as CPython (and numba) compute it."""
    mod = a % b
    if a.dtype == tl.float32:
        div = tl.div_rn(a - mod, b)
        zero = tl.div_rn(a, b) * 0.0
    else:
        div = (a - mod) / b
        zero = (a / b) * 0.0
    div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1.0, div)
    fl = tl.floor(div)
    fl = tl.where(div - fl > 0.5, fl + 1.0, fl)
    return tl.where(div != 0, fl, zero)
''',
    "mod_float": '''
@triton.jit
def _mod_float(a, b):
    """Python's ``a % b`` on floats: the result has the divisor's sign."""
    mod = a % b
    mod = tl.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)
    return tl.where(mod != 0, mod, tl.where(b < 0, -0.0, 0.0).to(a.dtype))
''',
    "ballot": '''
@triton.jit
def _ballot(pred, P: tl.constexpr):
    """Per lane, the bits of the lanes of its warp (_WARP_ consecutive lanes) where ``pred`` holds."""
    lane = tl.arange(0, P)
    bits = tl.where(pred, tl.full([P], 1, tl.int64) << (lane % _WARP_).to(tl.int64), 0)
    warp = tl.sum(tl.reshape(bits, (P // _WARP_, _WARP_)), 1)
    return tl.reshape(tl.broadcast_to(warp[:, None], (P // _WARP_, _WARP_)), (P,))
''',
    "match_any": '''
@triton.jit
def _match_any(v, part, P: tl.constexpr):
    """Per lane, the bits of the lanes of its warp taking part (``part``) that hold the lane's value."""
    v2 = tl.reshape(v, (P // _WARP_, _WARP_))
    p2 = tl.reshape(part, (P // _WARP_, _WARP_))
    same = (v2[:, :, None] == v2[:, None, :]) & p2[:, None, :]
    col = tl.arange(0, _WARP_).to(tl.int64)
    bits = tl.sum(tl.where(same, tl.full([_WARP_], 1, tl.int64)[None, None, :] << col[None, None, :], 0), 2)
    return tl.reshape(bits, (P,))
''',
}


# the warp's width, written into the helpers' text (a Triton function reads no Python global)
HELPERS = {name: text.replace("_WARP_", str(WARP_SIZE)) for name, text in HELPERS.items()}


def helper_source(names: list[str]) -> str:
    return "".join(HELPERS[n] + "\n" for n in names)
