"""What a graduate run keeps as it goes, and what a later ``--resume`` run takes from it.

A run with ``--out DIR`` rewrites ``graduate.json``, ``graduate.txt`` and ``graduate.md`` there after every
row the GPU worker finishes (and after each spec check and the ncu step), each file replaced atomically
(written beside, then renamed), so a run stopped by a time limit or a kill keeps every finished row and the
files are never half written. Each row of ``graduate.json`` carries what it was measured from
(``"measured"``): the worker's result, the benchmark outputs' spec check, the device's peaks of that run,
and the row's *key* — the solution file's SHA-256, the puzzle module's, the back end, the benchmark size,
whether it ran under the interpreter and, for the Triton back end, gpusim's sources (the translator).

``--resume`` reads ``DIR/graduate.json`` and skips every (puzzle, back end) whose stored row has the same
key and is finished: a result from the worker, and its benchmark outputs checked (a row whose check did not
finish is run again, since its outputs died with the run). The skipped rows are rebuilt from what they
stored, with the simulator's estimates of now (the estimate cache in ``DIR/estimates.json`` grows from
call to call), each against the peaks of the run that measured it. ncu's launches are kept the same way,
per puzzle, by the solution's key and the ncu size; only the puzzles without them are profiled again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..model import Puzzle

SCHEMA = 1


def _sha(path: Path) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def row_key(puzzle: Puzzle, path: Path, backend: str, size: int, interpret: bool) -> dict:
    """What a row's measurement depends on (a stored row is reused only under the same key)."""
    from .estimates import _module_file, gpusim_fingerprint

    key = {"schema": SCHEMA, "puzzle": puzzle.slug, "solution_sha256": _sha(path),
           "puzzle_module_sha256": _sha(_module_file(puzzle)), "backend": backend,
           "size": size if puzzle.bench is not None else "max", "interpret": bool(interpret)}
    if backend == "triton":
        key["gpusim"] = gpusim_fingerprint()
    return key


def ncu_key(puzzle: Puzzle, path: Path, ncu_size: int) -> dict:
    from .estimates import _module_file

    return {"schema": SCHEMA, "puzzle": puzzle.slug, "solution_sha256": _sha(path),
            "puzzle_module_sha256": _sha(_module_file(puzzle)), "ncu_size": ncu_size}


@dataclass
class Previous:
    """What ``--resume`` found in ``graduate.json``."""

    records: dict[tuple[str, str], dict] = field(default_factory=dict)    # (slug, backend) -> "measured"
    ncu_items: dict[str, list[dict]] = field(default_factory=dict)        # slug -> its ncu launches
    problem: str = ""                                                     # why nothing was taken, if so


def finished(record: dict) -> bool:
    """A stored row that need not run again: the worker's result is there and, where the benchmark wrote
    outputs, their spec check finished."""
    result = record.get("result")
    if not isinstance(result, dict):
        return False
    bench = result.get("bench") or {}
    return not bench.get("outputs_file") or record.get("verify") is not None


def load(doc_path: Path, items: list[tuple[Puzzle, Path]], backends: list[str], size: int, interpret: bool,
         ncu_size: int | None) -> Previous:
    """The stored rows (and ncu launches) of ``doc_path`` that this run can keep."""
    if not doc_path.is_file():
        return Previous(problem=f"nothing to resume in {doc_path.parent} (no graduate.json yet): starting afresh")
    try:
        doc = json.loads(doc_path.read_text(encoding="utf-8"))
        rows = list(doc.get("rows") or [])
        ncu_doc = doc.get("ncu") or {}
    except (OSError, ValueError, AttributeError, TypeError) as e:
        return Previous(problem=f"{doc_path} could not be read ({e}); starting afresh")
    stored = {}
    for row in rows:
        measured = row.get("measured") if isinstance(row, dict) else None
        if isinstance(measured, dict) and isinstance(measured.get("key"), dict):
            stored[(measured["key"].get("puzzle"), measured["key"].get("backend"))] = measured
    out = Previous()
    for puzzle, path in items:
        for backend in backends:
            record = stored.get((puzzle.slug, backend))
            if record is not None and record["key"] == row_key(puzzle, path, backend, size, interpret) \
                    and finished(record):
                out.records[(puzzle.slug, backend)] = record
        if ncu_size is not None and isinstance(ncu_doc, dict):
            want = ncu_key(puzzle, path, ncu_size)
            launches = [x for x in ncu_doc.get("launches") or [] if isinstance(x, dict)
                        and x.get("slug") == puzzle.slug and x.get("key") == want]
            if launches and all(x.get("ncu_metrics") is not None for x in launches):   # ncu measured each
                out.ncu_items[puzzle.slug] = launches
    return out


def write_atomic(path: Path, text: str) -> None:
    """``text`` into ``path`` so that a reader (or a kill) never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
