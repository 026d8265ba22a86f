"""Inverse-CDF sampling with a given uniform, for the specs and cases of the sampling puzzles (76, 77, 79).

A sampler turns a uniform number ``u`` in [0, 1) into a token: walk the candidates in a fixed order and
take the first whose running sum of weights exceeds ``u * total``. The puzzles give ``u`` as an input, so
the answer is exact; the cases choose ``u`` well inside one candidate's interval (``MARGIN`` of the total
away from both ends), so a kernel summing in float32 and in another order cannot land on a neighbour.
"""

from __future__ import annotations

import numpy as np

MARGIN = 1e-3            # the uniform stays this fraction of the total away from every interval's ends


def draw(weights: np.ndarray, u: float) -> int:
    """The first index whose inclusive running sum of ``weights`` exceeds ``u * sum(weights)``."""
    cum = np.cumsum(np.asarray(weights, dtype=np.float64))
    return int(np.argmax(cum > u * cum[-1]))


def uniform_for(rng: np.random.Generator, weights: np.ndarray, pick: int | None = None) -> np.float32:
    """A float32 uniform that draws index ``pick`` (or a random index, each as likely as its weight), at
    least ``MARGIN`` of the total inside its interval. Indices whose interval is too narrow are never chosen."""
    w = np.asarray(weights, dtype=np.float64)
    cum = np.cumsum(w) / w.sum()
    lo = np.concatenate([[0.0], cum[:-1]])
    wide = np.flatnonzero(cum - lo > 4 * MARGIN)
    if pick is None:
        p = w[wide] / w[wide].sum()
        pick = int(rng.choice(wide, p=p))
    assert pick in wide, f"index {pick} has too little weight to be drawn safely"
    u = np.float32(rng.uniform(lo[pick] + 2 * MARGIN, cum[pick] - 2 * MARGIN))
    assert draw(w, float(u)) == pick
    return u
