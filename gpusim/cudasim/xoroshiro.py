"""numba-cuda's host-side set-up of ``cuda.random``'s generators, in NumPy: the same states, bit for bit.

``create_xoroshiro128p_states(n, seed)`` fills ``n`` xoroshiro128+ states, each the one before it advanced by
2^64 steps (``xoroshiro128p_jump``). numba-cuda does it in a loop of ``n`` jumps of 128 steps each; under its
simulator that loop runs in object mode, some 20 ms a state, so a million states take hours. A step of
xoroshiro128+ is linear over GF(2) on the 128-bit state, and so is a jump: a 128x128 bit matrix ``J``. State
``i`` is ``J^i`` times state 0, so the array fills by doubling: states ``[k, 2k)`` are ``J^k`` times states
``[0, k)``, one vectorised matrix product per doubling (``J^(2^j)`` by squaring). The drop-in puts
``init_states`` in place of ``numba.cuda.random.init_xoroshiro128p_states_cpu``.
"""

from __future__ import annotations

import numpy as np

_ONE = np.uint64(1)
#: xoroshiro128+'s jump polynomial (numba-cuda's ``xoroshiro128p_jump``, from the generator's authors)
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)


def _rotl(x: np.ndarray, k: int) -> np.ndarray:
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


def _step(s0: np.ndarray, s1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One step of xoroshiro128+ on arrays of states (``xoroshiro128p_next``, less its output)."""
    s1 = s1 ^ s0
    return _rotl(s0, 55) ^ s1 ^ (s1 << np.uint64(14)), _rotl(s1, 36)


def _jump(s0: np.ndarray, s1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each state advanced by 2^64 steps, as ``xoroshiro128p_jump`` does it."""
    a0, a1 = np.zeros_like(s0), np.zeros_like(s1)
    for word in _JUMP:
        for b in range(64):
            if (word >> b) & 1:
                a0 ^= s0
                a1 ^= s1
            s0, s1 = _step(s0, s1)
    return a0, a1


def _apply(cols: tuple[np.ndarray, np.ndarray], s0: np.ndarray, s1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A linear map (the images of the 128 unit states) applied to arrays of states: by bytes, through a table
    of the images of the 256 values of each of the state's 16 bytes (16 lookups a state, not 128 masks)."""
    c0, c1 = cols
    o0, o1 = np.zeros_like(s0), np.zeros_like(s1)
    for j in range(16):
        t0, t1 = np.zeros(256, np.uint64), np.zeros(256, np.uint64)
        for k in range(8):                     # the values with bit k highest: those below it, plus bit k's image
            t0[1 << k:2 << k] = t0[:1 << k] ^ c0[8 * j + k]
            t1[1 << k:2 << k] = t1[:1 << k] ^ c1[8 * j + k]
        word = s0 if j < 8 else s1
        byte = ((word >> np.uint64(8 * (j % 8))) & np.uint64(0xFF)).astype(np.intp)
        o0 ^= t0[byte]
        o1 ^= t1[byte]
    return o0, o1


def _unit_states() -> tuple[np.ndarray, np.ndarray]:
    bits = np.arange(128)
    s0 = np.where(bits < 64, _ONE << (bits % 64).astype(np.uint64), np.uint64(0))
    s1 = np.where(bits >= 64, _ONE << (bits % 64).astype(np.uint64), np.uint64(0))
    return s0.astype(np.uint64), s1.astype(np.uint64)


def _seeded(seed: int) -> np.uint64:
    """``init_xoroshiro128p_state``: splitmix64 of the seed, the same value in both words."""
    mask = (1 << 64) - 1
    z = (int(seed) + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return np.uint64(z ^ (z >> 31))


def init_states(states: np.ndarray, seed: int, subsequence_start: int = 0) -> None:
    """Fill ``states`` (a 1-D array of ``xoroshiro128p_dtype``) as ``init_xoroshiro128p_states_cpu`` does."""
    n = states.shape[0]
    if n < 1:
        return
    seed, start = int(seed) % (1 << 64), int(subsequence_start) % (1 << 64)
    s0 = np.empty(n, np.uint64)
    s1 = np.empty(n, np.uint64)
    s0[0] = s1[0] = _seeded(seed)
    power = _jump(*_unit_states())           # J, then J^2, J^4, ...: as the images of the unit states
    while start:                              # state 0 advanced by ``subsequence_start`` jumps
        if start & 1:
            s0[:1], s1[:1] = _apply(power, s0[:1], s1[:1])
        start >>= 1
        power = _apply(power, *power)
    power = _jump(*_unit_states())
    filled = 1
    while filled < n:
        m = min(filled, n - filled)
        s0[filled:filled + m], s1[filled:filled + m] = _apply(power, s0[:m], s1[:m])
        filled += m
        if filled < n:
            power = _apply(power, *power)
    states["s0"] = s0
    states["s1"] = s1
