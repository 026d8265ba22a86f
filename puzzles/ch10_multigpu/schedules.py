"""Pipeline schedules as tables, and what they cost: ticks, bubble, activations in flight.

A schedule for ``stages`` stages and ``micro`` micro-batches is an int32 table ``(stages, ticks)``: entry
``m + 1`` is the forward of micro-batch ``m``, ``-(m + 1)`` its backward, 0 an idle tick. The timing model
(the one the puzzle's synchronised rounds enforce): every forward and every backward takes one tick; stage
``p`` may run the forward of ``m`` in a tick after stage ``p - 1`` ran it, the backward of ``m`` in a tick
after stage ``p + 1`` ran its backward (the last stage: after its own forward).
"""

from __future__ import annotations

import numpy as np


def one_f_one_b(stages: int, micro: int, ticks: int | None = None) -> np.ndarray:
    """1F1B (PipeDream-Flush): ``stages - 1 - p`` warm-up forwards, then one forward, one backward."""
    table = np.zeros((stages, ticks or 2 * (micro + stages - 1)), np.int32)
    for p in range(stages):
        for m in range(micro):
            forward = p + m if m < stages - p else 2 * m + p
            table[p, forward] = m + 1
            table[p, 2 * stages - 1 - p + 2 * m] = -(m + 1)
    return table


def gpipe(stages: int, micro: int, ticks: int | None = None) -> np.ndarray:
    """GPipe: every forward first, then every backward (in micro-batch order)."""
    table = np.zeros((stages, ticks or 2 * (micro + stages - 1)), np.int32)
    for p in range(stages):
        for m in range(micro):
            table[p, p + m] = m + 1
            table[p, micro + 2 * stages - 2 - p + m] = -(m + 1)
    return table


def sequential(stages: int, micro: int) -> np.ndarray:
    """No pipelining: one micro-batch at a time through every stage and back."""
    table = np.zeros((stages, 2 * stages * micro), np.int32)
    for m in range(micro):
        base = 2 * stages * m
        for p in range(stages):
            table[p, base + p] = m + 1
            table[p, base + 2 * stages - 1 - p] = -(m + 1)
    return table


def problems(table: np.ndarray, micro: int) -> list[str]:
    """Why ``table`` is not a valid schedule (empty when it is): each op once, dependencies in order."""
    stages = table.shape[0]
    out = []
    when: dict[tuple[int, int], int] = {}
    for p in range(stages):
        for t, op in enumerate(table[p]):
            if op:
                key = (p, int(op))
                if key in when:
                    out.append(f"stage {p} runs op {int(op)} twice")
                when[key] = t
    for p in range(stages):
        for m in range(1, micro + 1):
            f, b = when.get((p, m)), when.get((p, -m))
            if f is None or b is None:
                out.append(f"stage {p} misses the forward or backward of micro-batch {m - 1}")
                continue
            if p > 0 and (p - 1, m) in when and f <= when[(p - 1, m)]:
                out.append(f"stage {p} runs forward {m - 1} before stage {p - 1} finished it")
            after = when.get((p + 1, -m)) if p < stages - 1 else f
            if after is not None and b <= after:
                out.append(f"stage {p} runs backward {m - 1} too early")
    return out


def makespan(table: np.ndarray) -> int:
    """Ticks from the first busy tick to the last, over all stages."""
    busy = np.flatnonzero(table.any(axis=0))
    return int(busy[-1] - busy[0] + 1) if busy.size else 0


def bubble(table: np.ndarray) -> float:
    """Idle stage-ticks over all stage-ticks of the makespan."""
    span = makespan(table)
    return 1.0 - np.count_nonzero(table) / (table.shape[0] * span) if span else 0.0


def in_flight(table: np.ndarray) -> list[int]:
    """Per stage, the most micro-batches whose forward ran and backward did not (activations kept)."""
    out = []
    for row in table:
        now = peak = 0
        for op in row:
            now += 1 if op > 0 else -1 if op < 0 else 0
            peak = max(peak, now)
        out.append(peak)
    return out


def render(table: np.ndarray) -> str:
    """The table as text: ``F0 F1 .  B0 ...`` per stage."""
    head = "tick     " + " ".join(f"{t:<2d}" for t in range(table.shape[1]))
    rows = [head]
    for p, row in enumerate(table):
        cells = ["F" + str(op - 1) if op > 0 else "B" + str(-op - 1) if op < 0 else ". " for op in row]
        rows.append(f"stage {p}  " + " ".join(f"{c:<2s}" for c in cells))
    return "\n".join(rows)
