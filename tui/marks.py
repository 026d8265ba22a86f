"""Where a launch's faults fall in the drawing of an array: the raced element, the out-of-bounds index.

A fault names an array and the index a thread used (``KernelFault.array``, ``.index``, ``.block``). For a
shared array the index is inside one block's copy. ``fault_marks`` turns the report's faults into marks on
one array: inside the array (a race, an uninitialised read) or outside it (out of bounds), with a sentence
that says what happened there. Nothing here imports Textual.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mark:
    index: tuple[int, ...]      # the index the fault names, in the array's own dimensions
    inside: bool                # a valid element of the array
    kind: str                   # the fault's class name: "DataRace", "OutOfBounds", ...
    text: str                   # one sentence for the player
    fault: object


def _xyz(v) -> str:
    return "(" + ", ".join(str(int(x)) for x in v) + ")" if v is not None else "?"


def _index(index) -> str:
    return "[" + ", ".join(str(int(i)) for i in index) + "]"


def fault_marks(report, array: str, shape: tuple[int, ...], block_xyz: tuple[int, int, int] | None = None
                ) -> list[Mark]:
    """The marks of ``report``'s faults on ``array`` (of ``shape``); for a shared array, only the faults of
    the block ``block_xyz``."""
    marks = []
    for fault in getattr(report, "faults", None) or []:
        if getattr(fault, "array", None) != array or fault.index is None:
            continue
        if block_xyz is not None and fault.block is not None and tuple(fault.block) != tuple(block_xyz):
            continue
        index = tuple(int(i) for i in fault.index)
        inside = len(index) == len(shape) and all(0 <= i < n for i, n in zip(index, shape))
        kind = type(fault).__name__
        who = f"block {_xyz(fault.block)} thread {_xyz(fault.thread)}"
        if kind == "DataRace":
            other = getattr(fault, "other_thread", None)
            text = (f"{kind} on {array}{_index(index)} (marked): {who} at line {fault.lineno}"
                    + (f" and thread {_xyz(other)} of block {_xyz(getattr(fault, 'other_block', None))} at line "
                       f"{getattr(fault, 'other_lineno', 0)}" if other is not None else "")
                    + (f", {fault.hazard}" if getattr(fault, "hazard", "") else "")
                    + ", with no barrier between them.")
        elif inside:
            text = f"{kind} at {array}{_index(index)} (marked): {who}, line {fault.lineno}."
        else:
            dims = " × ".join(str(n) for n in shape)
            text = (f"{kind}: {who} used {array}{_index(index)} at line {fault.lineno}, outside the array "
                    f"({dims}; marked ✗ past its edge where it fits in the drawing).")
        marks.append(Mark(index, inside, kind, text, fault))
    return marks


def drawing_cell(index: tuple[int, ...], shape: tuple[int, ...], wrap: int) -> tuple[int, int] | None:
    """Where ``index`` falls in ``heat.as_rows``' drawing of an array of ``shape``: (row, column), even past the
    array's edge; None when it has no place (a negative index, more dimensions, or far away)."""
    if any(i < 0 for i in index):
        return None
    if len(shape) == 1 and len(index) == 1:
        w = max(1, min(wrap, shape[0]))
        return divmod(index[0], w)
    if len(shape) == 2 and len(index) == 2:
        return index[0], index[1]
    return None
