"""The seed sweep's bookkeeping (benchmarks/seed_sweep.py): which files it checks, and its table. The sweep itself
runs the judge hundreds of times and is not part of the suite."""

from __future__ import annotations

from pathlib import Path

from benchmarks.seed_sweep import Run, format_table, parse_puzzles, right_files, rows_of


def _runs() -> list[Run]:
    return [
        Run(74, "flash-decoding", "reference", 9, True),
        Run(74, "flash-decoding", "reference", 1032785527, False, "large logits", "mismatch", "`out` differs"),
        Run(74, "flash-decoding", "reference", 3, False, "rising scores", "mismatch", "`out` | differs"),
        Run(1, "map", "reference", 5, True),
        Run(76, "top-k-sampling", "top_k__other.py", 5, True),
        Run(76, "top-k-sampling", "reference", 5, True),
    ]


def test_rows_are_per_file_in_puzzle_order_reference_first_failures_by_seed():
    rows = rows_of(_runs())
    assert [(r.number, r.file, r.seeds, len(r.failures)) for r in rows] == [
        (1, "reference", 1, 0), (74, "reference", 3, 2), (76, "reference", 1, 0), (76, "top_k__other.py", 1, 0)]
    assert [f.seed for f in rows[1].failures] == [3, 1032785527]


def test_the_table_names_each_failing_seed_with_its_case_and_the_totals():
    text = format_table(rows_of(_runs()))
    row74 = next(line for line in text if "flash-decoding" in line)
    assert "seed 3: mismatch in 'rising scores'" in row74 and "seed 1032785527: mismatch in 'large logits'" in row74
    assert text[-1].split()[1:6] == ["4", "files", "6", "2", "1"]
    markdown = format_table(rows_of(_runs()), markdown=True)
    assert markdown[-1].startswith("| | **all** | 4 files | 6 | 2 | 1 file(s) failed")
    assert all(line.count("|") == 7 for line in markdown), "a '|' in a message must not split a cell"


def test_puzzle_ranges_and_right_files(tmp_path: Path):
    assert parse_puzzles("1-3, 74,76-77") == {1, 2, 3, 74, 76, 77}
    (tmp_path / "adamw__torch_order.py").write_text("# RIGHT: adamw\n")
    (tmp_path / "notes.py").write_text("# something else\n")
    (tmp_path / "empty.py").write_text("")
    assert right_files(tmp_path) == {"adamw": [tmp_path / "adamw__torch_order.py"]}
