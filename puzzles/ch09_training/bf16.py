"""bf16 and float32 bit patterns in plain NumPy: the reference the chapter's specs use.

bf16 is stored as uint16 bit patterns (NumPy has no bfloat16 dtype). A bf16 value is the top 16 bits of a
float32: sign, the same 8 exponent bits, 7 mantissa bits. Widening is exact (append 16 zero bits);
narrowing drops 16 bits and rounds. Every NaN narrows to the one quiet NaN 0x7FC0, as PyTorch's scalar
conversion does (its vectorised CPU path gives 0xFFFF, CUDA's __float2bfloat16_rn 0x7FFF: NaNs all).

These functions are written to be read, not to be fast, and deliberately differently from the kernels:
they compare the dropped half with the halfway point instead of adding a rounding bias.
"""

from __future__ import annotations

import numpy as np

QUIET_NAN = 0x7FC0         # the bf16 every NaN becomes
HALF = 0x8000              # the dropped 16 bits at exactly halfway between two bf16 values


def float_bits(x) -> np.ndarray:
    """The uint32 bit patterns of float32 values."""
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)


def bits_float(u) -> np.ndarray:
    """float32 values from uint32 bit patterns."""
    return np.ascontiguousarray(u, dtype=np.uint32).view(np.float32)


def bf16_to_float(b) -> np.ndarray:
    """Widen bf16 bit patterns to float32 values (exact)."""
    return bits_float(np.asarray(b, dtype=np.uint32) << np.uint32(16))


def round_nearest_even(x) -> np.ndarray:
    """float32 -> bf16 bits, round to nearest, ties to even; NaN -> 0x7FC0.

    Keep the top half; look at the dropped half: above halfway round the kept half up, below keep it,
    exactly halfway round up only if the kept half is odd. Rounding up may carry into the exponent: the
    largest finite values round to infinity, and the smallest normals come from rounded subnormals.
    """
    u = float_bits(x).astype(np.int64)
    kept, dropped = u >> 16, u & 0xFFFF
    up = (dropped > HALF) | ((dropped == HALF) & (kept % 2 == 1))
    out = kept + up
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, QUIET_NAN, out).astype(np.uint16)


def round_stochastic(x, random16) -> np.ndarray:
    """float32 -> bf16 bits, rounded up with probability (dropped half) / 2^16; NaN -> 0x7FC0.

    ``random16`` holds one uniformly random 16-bit number per value. The kept half goes up exactly when the
    dropped half is larger than 0xFFFF - random16, which for a uniform random16 happens with probability
    dropped / 2^16: the expected result is the float32 value itself.
    """
    u = float_bits(x).astype(np.int64)
    kept, dropped = u >> 16, u & 0xFFFF
    r = np.asarray(random16, dtype=np.int64)
    assert ((r >= 0) & (r <= 0xFFFF)).all()
    up = dropped > 0xFFFF - r
    out = kept + up
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, QUIET_NAN, out).astype(np.uint16)


def rounding_margin(x) -> np.ndarray:
    """How many float32 steps each value is from the nearest bf16 rounding boundary (halfway point)."""
    dropped = float_bits(x).astype(np.int64) & 0xFFFF
    return np.abs(dropped - HALF)


def boundary_distance(x) -> np.ndarray:
    """The distance from each float32 value to the nearest bf16 rounding boundary, as a float64 number."""
    x = np.asarray(x, dtype=np.float32)
    return rounding_margin(x) * np.spacing(np.abs(x)).astype(np.float64)


# A float32 computation of a value from operands of magnitude at most M is off by a few times 2^-24 M;
# the puzzles that compare bf16 results bit for bit keep every exact result at least MARGIN * 2^-24 M from
# a bf16 rounding boundary, so every float32-accurate kernel rounds it the same way.
MARGIN = 256


def off_boundaries(exact, magnitude) -> np.ndarray:
    """True where float32(exact) is safely far from a bf16 rounding boundary, given the operands' size."""
    exact = np.asarray(exact, dtype=np.float64)
    return boundary_distance(exact.astype(np.float32)) >= MARGIN * 2.0**-24 * np.asarray(magnitude)
