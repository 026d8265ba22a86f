"""Which devices of a ``System`` are linked: a set of directed links ``(src, dst)``.

Real multi-GPU machines come in a few shapes; two of them are enough for the collectives the puzzles teach:

* ``Topology.switch(n)`` — every device linked to every other (NVLink through NVSwitch, as in an 8-GPU HGX
  node): any device may read or write any other's memory directly.
* ``Topology.ring(n)`` — device ``d`` linked to ``d - 1`` and ``d + 1`` (mod n) only, in both directions:
  the ring that ring all-reduce, ring attention and a pipeline of stages use. A device can reach only its
  two neighbours; anything further must be forwarded hop by hop.

A link is *directed*: NVLink is full duplex, so ``(0, 1)`` and ``(1, 0)`` are two links, each with its own
traffic count.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topology:
    """``size`` devices and the directed links between them (each link in both directions, for the shapes
    built here)."""

    size: int
    links: frozenset[tuple[int, int]]
    name: str = "custom"

    def __post_init__(self) -> None:
        if not isinstance(self.size, int) or self.size < 1:
            raise ValueError(f"a topology has at least one device, not {self.size!r}")
        for src, dst in self.links:
            if not (0 <= src < self.size and 0 <= dst < self.size) or src == dst:
                raise ValueError(f"link {(src, dst)} does not join two different devices of {self.size}")

    @classmethod
    def switch(cls, size: int) -> Topology:
        """Every device linked to every other, both ways (NVSwitch)."""
        pairs = frozenset((a, b) for a in range(size) for b in range(size) if a != b)
        return cls(size, pairs, "switch")

    @classmethod
    def ring(cls, size: int) -> Topology:
        """Device d linked to d - 1 and d + 1 (mod size), both ways. Two devices: one link each way."""
        pairs = set()
        for d in range(size):
            for other in ((d + 1) % size, (d - 1) % size):
                if other != d:
                    pairs.add((d, other))
        return cls(size, frozenset(pairs), "ring")

    def linked(self, src: int, dst: int) -> bool:
        """Is there a direct link from ``src`` to ``dst``? (A device always reaches its own memory.)"""
        return src == dst or (src, dst) in self.links

    def incoming(self, device: int) -> list[int]:
        """The devices with a link into ``device``, in ascending order."""
        return sorted(src for src, dst in self.links if dst == device)
