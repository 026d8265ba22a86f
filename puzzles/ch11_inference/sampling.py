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


def uniform_for(rng: np.random.Generator, weights: np.ndarray) -> np.float32:
    """A float32 uniform that draws a random index (each as likely as its weight, among those whose interval
    is wide enough), at least ``MARGIN`` of the total inside its interval: ``uniforms_for`` for one row."""
    return uniforms_for(rng, np.asarray(weights, dtype=np.float64)[None, :])[0]


def uniforms_for(rng: np.random.Generator, weights: np.ndarray) -> np.ndarray:
    """For every row of ``weights`` (rows, n), a float32 uniform at least ``MARGIN`` of the row's total inside
    the interval of one index, picked at random with probability proportional to its weight among the indices
    whose interval is wider than 4 ``MARGIN`` (narrower ones are never picked; zero weights never are).

    Why ``MARGIN`` is enough: a kernel's running sums of n float32 weights, in any order, are within about
    n x 2^-24 of the total of the exact ones (6e-5 for n = 1024), and ``u * total`` rounds by 2^-24 more;
    0.1% of the total is more than 15 times that."""
    w = np.asarray(weights, dtype=np.float64)
    assert w.ndim == 2 and (w >= 0).all()
    total = w.sum(axis=1, keepdims=True)
    cum = np.cumsum(w, axis=1) / total
    lo = np.concatenate([np.zeros((w.shape[0], 1)), cum[:, :-1]], axis=1)
    width = cum - lo
    wide = width > 4 * MARGIN
    assert wide.any(axis=1).all(), "a row has no index with enough weight to be drawn safely"
    with np.errstate(divide="ignore"):
        keys = np.where(wide, np.log(width) + rng.gumbel(size=w.shape), -np.inf)   # Gumbel-max: ~ width
    pick = keys.argmax(axis=1)
    rows = np.arange(w.shape[0])
    u = rng.uniform(lo[rows, pick] + 2 * MARGIN, cum[rows, pick] - 2 * MARGIN).astype(np.float32)
    assert (np.argmax(cum > u[:, None].astype(np.float64), axis=1) == pick).all()
    return u
