"""DRAM traffic estimate: the distinct 64-byte segments a launch touches, per direction.

An *estimate*, not a measurement. On an H200 the memory controller moves 64-byte segments, so a kernel whose
data fits in L2 reads each segment it touches once; that is what ``dram__bytes_read.sum`` shows for such a
kernel, plus a few KiB ncu also counts (instruction and constant fetches: about 2.8-3 KiB for the small
kernels of tests/gpusim/ncu_cases.py). Writes are counted the same way, but ncu's
``dram__bytes_write.sum`` usually reads 0 for a short kernel whose output stays in the 60 MB L2 and is written
back later. Data larger than L2, re-read after eviction, is undercounted.

Segments are kept as one boolean map per array, so repeated touches cost nothing extra.
"""

from __future__ import annotations

import numpy as np

SEGMENT = 64


class SegmentMap:
    """The 64-byte segments of one array touched for reading and for writing."""

    def __init__(self, base_address: int, nbytes: int):
        self.first = base_address // SEGMENT
        count = (base_address + max(nbytes, 1) - 1) // SEGMENT - self.first + 1
        self.read = np.zeros(count, dtype=bool)
        self.write = np.zeros(count, dtype=bool)

    def touch(self, addr: np.ndarray, read: bool, write: bool, monotone: bool = False) -> None:
        """Mark the segments of byte addresses ``addr``; ``monotone`` lets it skip repeats cheaply."""
        seg = addr // SEGMENT - self.first
        if monotone and len(seg) > 1:
            keep = np.empty(len(seg), dtype=bool)
            keep[0] = True
            np.not_equal(seg[1:], seg[:-1], out=keep[1:])
            seg = seg[keep]
        if read:
            self.read[seg] = True
        if write:
            self.write[seg] = True

    def bytes(self) -> tuple[int, int]:
        """(bytes read, bytes written) estimate."""
        return int(np.count_nonzero(self.read)) * SEGMENT, int(np.count_nonzero(self.write)) * SEGMENT
