"""Slots: every array a compiled kernel can touch, known when it is compiled — a global argument (or several
arguments that are one array), a shared declaration (dynamic ones share one slot per element size), a local
declaration, a module-level constant array — and the names of the arrays that hold its data, its race
shadow and its counters in the generated code.

An access site names its slot, so which shadow records a slot needs is decided from its sites: write records
if anything stores to it, atomic records if anything updates it atomically, read summaries if it is read
*and* written (reads alone never race). A global array that is only read needs no shadow at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...ir.types import Scalar
from . import values as V


@dataclass
class Slot:
    id: int
    kind: str                     # "param" | "shared" | "local" | "const"
    name: str                     # the name reports use
    dtype: Scalar
    ndim: int
    space: str                    # "global" | "shared" | "local" | "const"
    layout: str = "C"
    shape: tuple[int, ...] | None = None   # known at compile time (shared, local, const)
    params: list[int] = field(default_factory=list)   # argument positions (param slots)
    decl: int | None = None       # SharedDecl/LocalDecl id
    dynamic: bool = False
    const_data: np.ndarray | None = None
    kinds: set[str] = field(default_factory=set)      # "ld", "st", "atom", "red" of its sites

    # -- names in the generated code ----------------------------------------------------------------------
    @property
    def data(self) -> str:
        return f"d{self.id}"

    def arr(self, what: str) -> str:
        return f"{what}{self.id}"

    @property
    def itemsize(self) -> int:
        return self.dtype.dtype.itemsize

    @property
    def static_size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape is not None else -1

    # -- which records ------------------------------------------------------------------------------------
    @property
    def writes(self) -> bool:
        return "st" in self.kinds

    @property
    def atomics(self) -> bool:
        return bool(self.kinds & {"atom", "red"})

    @property
    def tracked(self) -> bool:
        """Has race records: shared arrays always (reads of them are checked for initialisation), global
        arrays that something writes."""
        if self.space == "shared":
            return True
        return self.space == "global" and (self.writes or self.atomics)

    @property
    def need_w(self) -> bool:
        return self.tracked and self.writes

    @property
    def need_a(self) -> bool:
        return self.tracked and self.atomics

    @property
    def need_r(self) -> bool:
        return self.tracked and "ld" in self.kinds and (self.writes or self.atomics)

    # -- code -------------------------------------------------------------------------------------------------
    def shape_code(self, dim: int) -> str:
        if self.shape is not None:
            return V.const(self.shape[dim], Scalar("int64"))
        return f"np.int64({self.data}.shape[{dim}])"

    def size_code(self) -> str:
        if self.shape is not None:
            return V.const(self.static_size, Scalar("int64"))
        return f"np.int64({self.data}.size)"

    def flat_code(self, idx: list[str]) -> str:
        """The row-major element number of an index (the identity observers and shadows use)."""
        code = idx[0]
        for d in range(1, len(idx)):
            code = f"({code} * {self.shape_code(d)} + {idx[d]})"
        return code

    def bounds_code(self, idx: list[str]) -> str:
        return " and ".join(f"(0 <= {i} and {i} < {self.shape_code(d)})" for d, i in enumerate(idx)) or "True"
