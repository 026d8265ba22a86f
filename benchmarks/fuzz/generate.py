"""The fuzzer's stream of cases: ``generate(seed)`` is one case, the same for the same seed everywhere.

Kernel families and their shares of the stream (see ``kernels`` and ``launches``); solution files come from
``solutions.solution_case`` and the resource-limit cases are a fixed list (``launches.resource_cases``).
"""

from __future__ import annotations

import random

from .cases import Case
from .kernels import kernel_case
from .launches import args_case, launch_case, resource_case
from .solutions import solution_case

WEIGHTS = {"valid": 36, "arity": 12, "const": 12, "nesting": 8, "devchain": 6, "invalid": 14, "launch": 6,
           "args": 6}


def generate(seed: int, family: str | None = None) -> Case:
    """The kernel case of ``seed`` (its family drawn by ``WEIGHTS`` unless given)."""
    rng = random.Random(seed)
    if family is None:
        family = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
    if family == "launch":
        return launch_case(rng, seed)
    if family == "args":
        return args_case(rng, seed)
    if family == "resource":
        return resource_case(rng, seed)
    return kernel_case(rng, family, seed)


def generate_file(seed: int) -> Case:
    """The solution-file case of ``seed``."""
    return solution_case(random.Random(seed), seed)


def kernels(count: int, first_seed: int = 0) -> list[Case]:
    return [generate(seed) for seed in range(first_seed, first_seed + count)]


def files(count: int, first_seed: int = 0) -> list[Case]:
    return [generate_file(seed) for seed in range(first_seed, first_seed + count)]


__all__ = ["Case", "files", "generate", "generate_file", "kernels"]
