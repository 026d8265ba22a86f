"""Helpers the chapter's case builders share: per-device buffer names, links, chunks of a vector."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def at(name: str, device: int) -> str:
    """The buffer ``name`` placed on ``device``: ``at("x", 2) == "x@2"``."""
    return f"{name}@{device}"


def link(src: int, dst: int) -> str:
    """A directed link as ``RunStats`` keys it: ``link(0, 1) == "0->1"``."""
    return f"{src}->{dst}"


def chunk_size(n: int, ranks: int, align: int = 8) -> int:
    """Elements per chunk when n elements are cut into ``ranks`` chunks: ceil(n / ranks), rounded up to a
    multiple of ``align`` (8 float32 = one 32-byte sector, so every chunk starts on a sector)."""
    per = -(-n // ranks)
    return max(align, -(-per // align) * align)


def chunk_bounds(c: int, n: int, size: int) -> tuple[int, int]:
    """Elements [start, end) of chunk ``c`` (the last chunks may be short or empty)."""
    return min(n, c * size), min(n, (c + 1) * size)


def chunk_len(c: int, n: int, size: int) -> int:
    start, end = chunk_bounds(c, n, size)
    return end - start


def budget(counts: Iterable[tuple[int, int, int]]) -> dict[str, int]:
    """``{link: bytes}`` from ``(src, dst, bytes)`` triples, summed (links with 0 bytes left out)."""
    out: dict[str, int] = {}
    for src, dst, nbytes in counts:
        if nbytes:
            out[link(src, dst)] = out.get(link(src, dst), 0) + int(nbytes)
    return out


def spread(rng: np.random.Generator, shape, low: int = -3, high: int = 4) -> np.ndarray:
    """float32 values of very different magnitudes (10^low .. 10^high) and both signs: sums of them depend
    on the order of the additions, so a different order cannot pass a bit-exact check by luck."""
    mags = 10.0 ** rng.integers(low, high, size=shape)
    return (rng.normal(0, 1, shape) * mags).astype(np.float32)
