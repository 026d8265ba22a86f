"""Tests for puzzles/registry.py: discovery, ordering, lookups, loud errors — and the real puzzle modules."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from puzzle_fixtures import TINY, puzzle_id, real_puzzles, write

from puzzles import multidevice, registry, workspace
from puzzles.model import Puzzle, Sync
from puzzles.registry import RegistryError, UnknownPuzzle, discover

_package_ids = itertools.count()

MODULE = """
    from puzzles.model import Puzzle
    PUZZLE = Puzzle(slug={slug!r}, number={number}, title="T", chapter={chapter}, difficulty=1,
                    description="", kernels=("k",), spec=lambda **b: {{}}, make_cases=lambda: (),
                    outputs=("out",))
"""


@pytest.fixture
def package(tmp_path, monkeypatch):
    """An empty, importable package with a unique name; returns (its folder, its name)."""
    name = f"fake_puzzles_{next(_package_ids)}"
    folder = tmp_path / name
    write(folder, "__init__.py", "")
    monkeypatch.syspath_prepend(str(tmp_path))
    return folder, name


def _add(folder, chapter_dir, file, slug, number, chapter=1):
    write(folder / chapter_dir, file, MODULE.format(slug=slug, number=number, chapter=chapter))


def test_discovers_and_sorts_by_number(package):
    folder, name = package
    _add(folder, "ch02_shared", "p10_ten.py", "ten", 10, chapter=2)
    _add(folder, "ch01_threads", "p02_two.py", "two", 2)
    _add(folder, "ch01_threads", "p01_one.py", "one", 1)
    write(folder / "ch01_threads", "helpers.py", "X = 1\n")       # not a puzzle module: ignored
    write(folder / "starters", "p01_like.py", "raise RuntimeError\n")  # not a chapter folder: ignored
    puzzles, problems = discover(folder, name)
    assert problems == []
    assert [p.slug for p in puzzles] == ["one", "two", "ten"]


def test_duplicates_are_reported_with_both_files(package):
    folder, name = package
    _add(folder, "ch01_a", "p01_one.py", "same", 1)
    _add(folder, "ch01_a", "p02_two.py", "same", 2)
    _add(folder, "ch01_b", "p02_again.py", "other", 2)
    _, problems = discover(folder, name)
    assert any("slug 'same'" in p and "p01_one.py" in p and "p02_two.py" in p for p in problems)
    assert any("number 2" in p and "p02_again.py" in p for p in problems)


def test_broken_or_inconsistent_modules_are_reported_and_the_rest_still_load(package):
    folder, name = package
    _add(folder, "ch01_a", "p01_one.py", "one", 1)
    write(folder / "ch01_a", "p02_broken.py", "import nothing_called_this\n")
    write(folder / "ch01_a", "p03_empty.py", "X = 1\n")
    _add(folder, "ch01_a", "p04_wrong_number.py", "four", 5)
    _add(folder, "ch01_a", "p06_wrong_chapter.py", "six", 6, chapter=2)
    puzzles, problems = discover(folder, name)
    assert [p.slug for p in puzzles] == ["one", "four", "six"]
    text = "\n".join(problems)
    assert "p02_broken.py: importing it failed: ModuleNotFoundError" in text
    assert "p03_empty.py: defines no `PUZZLE" in text
    assert "p04_wrong_number.py: the file says puzzle 4 but PUZZLE.number is 5" in text
    assert "p06_wrong_chapter.py: the folder says chapter 1 but PUZZLE.chapter is 2" in text


def test_all_puzzles_raises_on_problems(package, monkeypatch):
    folder, name = package
    write(folder / "ch01_a", "p01_broken.py", "1/0\n")
    try:
        with monkeypatch.context() as patch:
            patch.setattr(registry, "discover", lambda: discover(folder, name))
            registry.refresh()
            with pytest.raises(RegistryError, match="ZeroDivisionError"):
                registry.all_puzzles()
    finally:
        registry.refresh()


@pytest.fixture
def three(monkeypatch):
    import dataclasses

    puzzles = [dataclasses.replace(TINY, slug=s, number=n) for s, n in
               (("map", 1), ("tiled-matmul", 17), ("map-2d", 4))]
    monkeypatch.setattr(registry, "all_puzzles", lambda: sorted(puzzles, key=lambda p: p.number))
    return puzzles


@pytest.mark.parametrize("key, slug", [(1, "map"), ("1", "map"), ("01", "map"), ("p4", "map-2d"),
                                       ("P17", "tiled-matmul"), ("tiled-matmul", "tiled-matmul"),
                                       ("tiled_matmul", "tiled-matmul"), (" Map ", "map")])
def test_get_by_number_or_slug(three, key, slug):
    assert registry.get(key).slug == slug


def test_unknown_slug_suggests_near_matches(three):
    with pytest.raises(UnknownPuzzle, match=r"did you mean 'tiled-matmul'\?"):
        registry.get("tiled-matmull")
    with pytest.raises(UnknownPuzzle) as info:
        registry.get("mp")
    assert "'map'" in str(info.value) and "gpu-puzzles list" in str(info.value)


def test_unknown_number_says_the_range(three):
    with pytest.raises(UnknownPuzzle, match="there is no puzzle 99; they are numbered 1-17"):
        registry.get(99)
    assert isinstance(UnknownPuzzle("x"), LookupError)


# --- the real puzzle modules -----------------------------------------------------------------------------

CHAPTER_NUMBERS = {1: range(1, 8), 2: range(8, 15), 3: range(15, 21), 4: range(21, 25), 5: range(25, 28),
                   6: range(28, 33), 7: range(33, 48), 8: range(48, 56), 9: range(56, 64), 10: range(64, 72),
                   11: range(72, 81)}


def test_the_real_puzzles_load_without_problems():
    registry.refresh()
    puzzles, problems = discover()
    assert problems == []
    assert registry.all_puzzles() == puzzles


@pytest.mark.parametrize("puzzle", real_puzzles(), ids=puzzle_id)
def test_real_puzzle_is_consistent(puzzle: Puzzle):
    """Each puzzle's data agrees with itself and with the contract, so the checker can run it."""
    assert puzzle.slug == puzzle.slug.lower() and " " not in puzzle.slug and "_" not in puzzle.slug
    assert puzzle.number in CHAPTER_NUMBERS[puzzle.chapter]
    assert 1 <= puzzle.difficulty <= 5 and puzzle.title and puzzle.description.strip()
    assert puzzle.kernels and puzzle.outputs
    assert sorted(s.stars for s in puzzle.stars) == list(range(2, 2 + len(puzzle.stars)))
    assert workspace.starter_path(puzzle).is_file(), f"no starter {workspace.starter_path(puzzle)}"
    assert workspace.reference_path(puzzle).is_file(), f"no reference {workspace.reference_path(puzzle)}"
    cases = puzzle.make_cases()
    assert cases and len({c.name for c in cases}) == len(cases), "cases need distinct names"
    for case in cases:
        assert case.steps, case.name
        # a multi-device case (chapter 10) has an output x as x@0, x@1, ... and Sync steps between launches
        outputs = multidevice.output_names(puzzle, case.buffers) if case.devices else puzzle.outputs
        for name in outputs:
            assert isinstance(case.buffers.get(name), np.ndarray), f"{case.name}: output {name} is no array"
        for step in case.steps:
            if isinstance(step, Sync):
                assert case.devices, f"{case.name}: a Sync in a single-device case"
                continue
            assert step.kernel in puzzle.kernels, f"{case.name}: launches unknown kernel {step.kernel}"
            missing = [a for a in step.args if not (case.devices and isinstance(a, int)) and a not in case.buffers]
            assert not missing, f"{case.name}: unknown buffers {missing}"


def test_every_puzzle_chapter_has_a_title():
    from puzzles.registry import all_puzzles, chapters

    titles = chapters()
    assert titles[1] == "Threads and blocks" and titles[7] == "ML kernels"
    assert {p.chapter for p in all_puzzles()} <= set(titles)
