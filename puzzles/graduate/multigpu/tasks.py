"""What a multi-GPU run does, as a list of tasks, and where each logical rank of a case runs.

A *task* is one case of one puzzle: either one of the puzzle's own cases (``make_cases()``, checked
against the spec, not timed) or its benchmark case at one size (``bench(n, ranks)`` or ``bench_max(ranks)``:
checked, timed, and for the collectives compared with the back end's own collective). Cases are rebuilt
from the task wherever they are needed — the planner, every rank process, the launcher's checks — since
``make_cases()`` and ``bench`` are deterministic (fixed seeds); no arrays travel between processes except
the outputs.

**Placement.** A case has ``R`` logical ranks (its ``Devices.count``); the run has ``D`` rank processes.
Rank ``r`` runs in process ``r * D // R`` when ``R >= D`` (blocks of consecutive ranks share a process, so
ring neighbours mostly stay local), and in process ``r`` when ``R < D`` (the other processes idle). A
benchmark case has ``R = D`` ranks (two when ``D = 1``), so each process is one rank there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from ...model import Case, Puzzle

#: sizes of the collectives' benchmark cases, in bytes per rank (nccl-tests' S): 2^20 .. 2^28
DEFAULT_SIZES = tuple(1 << k for k in range(20, 29, 1))
DRY_RUN_SIZES = (1 << 12, 1 << 14, 1 << 16)
#: elements of work of the other puzzles' benchmark cases (bench(n)); single-block ones use bench_max
DEFAULT_BENCH_ELEMENTS = 1 << 20
DRY_RUN_BENCH_ELEMENTS = 1 << 12


@dataclass(frozen=True)
class Task:
    id: str                    # unique in the run, used in file names: "64.case3", "64.bench.1048576"
    slug: str
    path: str                  # the solution file
    kind: str                  # "case" or "bench"
    index: int = 0             # kind "case": the index in make_cases()
    n: int | None = None       # kind "bench": bench(n, ranks); None: bench_max(ranks)
    ranks: int = 0             # kind "bench": logical ranks
    nbytes: int = 0            # kind "bench", collectives: the size asked for (bytes per rank)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Task:
        return cls(**d)


def build_case(puzzle: Puzzle, task: Task) -> Case:
    """The case a task names (deterministic: the same arrays in every process)."""
    if task.kind == "case":
        return tuple(puzzle.make_cases())[task.index]
    if task.n is None:
        return puzzle.bench_max(task.ranks)
    return puzzle.bench(task.n, task.ranks)


def placement(ranks: int, processes: int) -> list[int]:
    """The process of each logical rank (module docstring)."""
    if ranks < processes:
        return list(range(ranks))
    return [r * processes // ranks for r in range(ranks)]


def bench_ranks(processes: int) -> int:
    return max(2, processes)


def make_tasks(items: list[tuple[Puzzle, Path]], processes: int, sizes: list[int], bench_elements: int,
               cases: bool = True) -> list[Task]:
    """Every puzzle's own cases first (cheap to plan, and they find a broken file early), then the
    benchmark cases, smallest first (the planner finishes those first)."""
    from .collectives import collective_for

    own, benches = [], []
    ranks = bench_ranks(processes)
    for puzzle, path in items:
        if cases:
            for i, _ in enumerate(puzzle.make_cases()):
                own.append(Task(f"{puzzle.number}.case{i}", puzzle.slug, str(path), "case", index=i))
        coll = collective_for(puzzle.slug)
        if coll is not None and puzzle.bench is not None:
            for size in sizes:
                benches.append((size, Task(f"{puzzle.number}.bench.{size}", puzzle.slug, str(path), "bench",
                                           n=coll.elements(size), ranks=ranks, nbytes=size)))
        elif puzzle.bench is not None:
            benches.append((bench_elements, Task(f"{puzzle.number}.bench.{bench_elements}", puzzle.slug,
                                                 str(path), "bench", n=bench_elements, ranks=ranks)))
        elif puzzle.bench_max is not None:
            benches.append((0, Task(f"{puzzle.number}.bench.max", puzzle.slug, str(path), "bench", n=None,
                                    ranks=ranks)))
    benches.sort(key=lambda x: x[0])
    return own + [t for _, t in benches]


def parse_sizes(text: str) -> list[int]:
    """``"2^20..2^28"`` (every power of two between), ``"1MiB,4MiB"``, ``"1048576"``, ``"2^20,2^24"``."""
    out: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if ".." in part:
            lo_text, hi_text = part.split("..", 1)
            lo, hi = parse_size(lo_text), parse_size(hi_text)
            if lo > hi:
                raise ValueError(f"{part!r}: the range goes down")
            size = lo
            while size <= hi:
                out.append(size)
                size *= 2
        else:
            out.append(parse_size(part))
    if not out:
        raise ValueError("no sizes given")
    return sorted(set(out))


_UNITS = {"k": 1 << 10, "kib": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "mb": 1 << 20,
          "g": 1 << 30, "gib": 1 << 30, "gb": 1 << 30, "b": 1, "": 1}


def parse_size(text: str) -> int:
    t = text.strip().lower().replace("_", "")
    try:
        if "^" in t:
            base, exp = t.split("^", 1)
            value = int(base) ** int(exp)
        else:
            digits = t.rstrip("kmgib")
            value = int(digits) * _UNITS[t[len(digits):]]
    except (ValueError, KeyError):
        raise ValueError(f"not a size: {text!r} (write 2^20, 1048576 or 1MiB)") from None
    if value < 4:
        raise ValueError(f"size {text!r} is less than one float32")
    return value


def size_label(nbytes: int) -> str:
    """``1 MiB`` for whole units, else ``1.50 MiB`` / ``15.9 KiB`` / ``100 B``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    if nbytes >= 1 << 20:
        return f"{nbytes / (1 << 20):.2f} MiB"
    if nbytes >= 1 << 10:
        return f"{nbytes / 1024:.1f} KiB"
    return f"{nbytes} B"
