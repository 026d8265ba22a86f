"""``print()`` in kernels: every active lane's line, formatted as numba-cuda's printf formats it on the GPU.

numba-cuda turns ``print(a, b, ...)`` into one ``printf`` with a format per argument: ``%lld`` for signed
and ``%llu`` for unsigned integers (widened to 64 bits), ``%f`` for floats (widened to float64), ``True`` or
``False`` for bools, ``%s`` for string literals, a tuple as ``(a, b)`` (``(a,)`` for one item), the items
separated by spaces. With more than 32 items it prints the format string itself instead (numba-cuda warns).

Lines are kept in block order, then thread order, then the order each thread printed, at most
``max_output_lines`` of them; the rest are only counted. ``Output`` is a part of ``Runtime``: it buffers a
chunk's prints as lane vectors and formats only the lines it keeps.
"""

from __future__ import annotations

import numpy as np

from ..ir.types import Tuple
from ..report import PrintRecord

MAX_PRINT_ITEMS = 32


def _format(t, v) -> str:
    if isinstance(t, Tuple):
        inner = ", ".join(_format(it, x) for it, x in zip(t.items, v))
        return f"({inner},)" if len(t.items) == 1 else f"({inner})"
    if t.is_bool:
        return "True" if v else "False"
    if t.is_int:
        return str(int(v))
    return format(float(v), "f")  # C's %f: six decimals


def _spec(t) -> str:
    if isinstance(t, Tuple):
        inner = ", ".join(_spec(it) for it in t.items)
        return f"({inner},)" if len(t.items) == 1 else f"({inner})"
    if t is None:
        return "%s"
    if t.is_bool:
        return "%s"
    if t.is_int:
        return "%llu" if t.kind == "u" else "%lld"
    return "%f"


def _pick(v, lanes: np.ndarray):
    if isinstance(v, tuple):
        return tuple(_pick(x, lanes) for x in v)
    if isinstance(v, np.ndarray) and v.ndim:
        return v[lanes]
    return v


def _item(v, k: int):
    if isinstance(v, tuple):
        return tuple(_item(x, k) for x in v)
    if isinstance(v, np.ndarray) and v.ndim:
        return v[k]
    return v


class Output:
    def init_output(self, max_lines: int) -> None:
        self.max_output_lines = max(0, int(max_lines))
        self.output: list[PrintRecord] = []
        self.output_dropped = 0
        self._prints: list[tuple] = []
        self._print_seq = 0

    def print_(self, m, line, items, types) -> None:
        lanes = self.active(m)
        if lanes.size == 0:
            return
        room = self.max_output_lines - len(self.output)
        if room <= 0:
            self.output_dropped += int(lanes.size)
            return
        self._print_seq += 1
        self._prints.append((lanes.copy(), self._print_seq, int(line), [_pick(v, lanes) for v in items], types))
        if sum(p[0].size for p in self._prints) > 2 * room + 1024:
            self._prune(room)

    def _order(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lanes = np.concatenate([p[0] for p in self._prints])
        seq = np.concatenate([np.full(p[0].size, p[1], np.int64) for p in self._prints])
        which = np.concatenate([np.full(p[0].size, k, np.int64) for k, p in enumerate(self._prints)])
        pos = np.concatenate([np.arange(p[0].size) for p in self._prints])
        order = np.lexsort((seq, lanes))
        return which[order], pos[order], lanes[order]

    def _prune(self, room: int) -> None:
        """Drop the buffered lines that cannot be among the first ``room`` (those of the latest lanes)."""
        _, _, lanes = self._order()
        cutoff = lanes[room - 1] if room <= lanes.size else lanes[-1]
        kept = []
        for lanes_k, seq, line, values, types in self._prints:
            keep = lanes_k <= cutoff
            self.output_dropped += int((~keep).sum())
            if keep.any():
                idx = np.flatnonzero(keep)
                kept.append((lanes_k[idx], seq, line, [_pick(v, idx) for v in values], types))
        self._prints = kept

    def flush_output(self) -> None:
        if not self._prints:
            return
        which, pos, lanes = self._order()
        room = self.max_output_lines - len(self.output)
        take = max(0, min(room, which.size))
        self.output_dropped += int(which.size - take)
        for k, p, lane in zip(which[:take].tolist(), pos[:take].tolist(), lanes[:take].tolist()):
            _, _, line, values, types = self._prints[k]
            if len(types) > MAX_PRINT_ITEMS:
                text = " ".join(_spec(t) for t in types)
            else:
                text = " ".join(v if t is None else _format(t, _item(v, p)) for v, t in zip(values, types))
            block, thread = self.where(lane)
            self.output.append(PrintRecord(block, thread, line, text))
        self._prints = []
