"""Fresh cases every check (issue 11, item 2): ``make_cases(rng)`` for every puzzle, under many seeds.

Fixed seeds throughout, so the suite is deterministic. The fast tests run every puzzle's cases and spec (no
simulator); the slow one checks every reference solution under several seeds.
"""

from __future__ import annotations

import numpy as np
import pytest
from puzzle_fixtures import puzzle_id, real_puzzles

from puzzles import workspace
from puzzles.checker import case_generator, check_file
from puzzles.model import LaunchStep
from puzzles.multidevice import case_outputs

PUZZLES = real_puzzles()
SEEDS = tuple(range(1000, 1012))


def _fingerprint(cases) -> list:
    return [(c.name, {k: (np.asarray(v).shape, np.asarray(v).tobytes()) for k, v in c.buffers.items()})
            for c in cases]


@pytest.mark.parametrize("puzzle", PUZZLES, ids=puzzle_id)
def test_cases_are_valid_under_many_seeds(puzzle):
    for seed in SEEDS:
        cases = puzzle.make_cases(case_generator(seed))
        assert cases and len({c.name for c in cases}) == len(cases), f"seed {seed}: case names repeat"
        for case in cases:
            expected = puzzle.spec(**{k: np.copy(v) if isinstance(v, np.ndarray) else v
                                      for k, v in case.buffers.items()})
            for name in case_outputs(puzzle, case):
                want = np.asarray(expected[name])
                assert want.shape == np.asarray(case.buffers[name]).shape, f"seed {seed} {case.name}: {name}"
                if want.dtype.kind == "f":
                    assert np.isfinite(want).all(), f"seed {seed} {case.name}: the spec gives non-finite {name}"
            for step in case.steps:
                if isinstance(step, LaunchStep):   # a multi-device case also has Sync steps; ints are ranks
                    assert step.kernel in puzzle.kernels
                    assert all(isinstance(a, int) or a in case.buffers for a in step.args)


@pytest.mark.parametrize("puzzle", PUZZLES, ids=puzzle_id)
def test_none_is_the_fixed_seed_and_a_seed_replays(puzzle):
    assert _fingerprint(puzzle.make_cases()) == _fingerprint(puzzle.make_cases(None))
    assert _fingerprint(puzzle.make_cases(case_generator(5))) == _fingerprint(puzzle.make_cases(case_generator(5)))


@pytest.mark.parametrize("puzzle", PUZZLES, ids=puzzle_id)
def test_random_data_changes_and_worked_examples_do_not(puzzle):
    draws = [{c.name: c for c in puzzle.make_cases(case_generator(seed))} for seed in SEEDS[:4]]
    fixed = [n for n in draws[0] if n.startswith("worked example")]
    for name in fixed:
        assert all(name in d for d in draws), f"the worked example {name!r} must be in every draw"
        assert len({_fingerprint([d[name]])[0][1].__repr__() for d in draws}) == 1, f"{name!r} changed"
    data = {repr(sorted((n, _fingerprint([c])[0][1].__repr__()) for n, c in d.items() if n not in fixed))
            for d in draws}
    assert len(data) == len(draws), "the random cases must differ from seed to seed"


def test_sizes_vary_from_seed_to_seed():
    varying = []
    for puzzle in PUZZLES:
        shapes = {tuple(sorted((c.name.split(" ")[0], np.asarray(v).shape) for c in puzzle.make_cases(
            case_generator(seed)) for v in c.buffers.values())) for seed in SEEDS}
        if len(shapes) > 1:
            varying.append(puzzle.slug)
    print(f"{len(varying)} of {len(PUZZLES)} puzzles vary their sizes: {', '.join(varying)}")
    assert len(varying) >= 45, "most puzzles draw some sizes fresh each check"


@pytest.mark.slow
@pytest.mark.parametrize("puzzle", PUZZLES, ids=puzzle_id)
def test_every_reference_passes_under_many_seeds(puzzle):
    path = workspace.reference_path(puzzle)
    for seed in (11, 12, 13, 2026, 4294967295):
        result = check_file(puzzle, path, seed=seed)
        problems = [f"[{f.kind}] {f.case}: {f.message}" for f in result.failures]
        assert result.passed and result.stars == result.max_stars, f"seed {seed}:\n" + "\n".join(problems) + \
            f"\nnext: {result.next_star}"
