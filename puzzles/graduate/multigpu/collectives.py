"""Puzzles 64-66 beside the communication library's own collective, and bus bandwidth as nccl-tests has it.

=====================  ============================  =====================  ======================
puzzle                 torch.distributed call        S (bytes, per rank)    bus factor (n ranks)
=====================  ============================  =====================  ======================
64 ring all-reduce     ``all_reduce`` (SUM)          the vector ``x@r``     2(n - 1) / n
65 reduce-scatter      ``reduce_scatter_tensor``     the input ``grads@r``  (n - 1) / n
66 all-gather          ``all_gather_into_tensor``    the output ``out@r``   (n - 1) / n
=====================  ============================  =====================  ======================

``S`` is the size nccl-tests reports for the operation (for reduce-scatter and all-gather, the whole
array: recvcount x n x the type's size); algbw = S / time, busbw = algbw x the bus factor — the number to
hold against the links' bandwidth, whatever the number of ranks.

**Checks.** All-gather copies values, so the puzzle's result must equal the library's bit for bit. All-reduce
and reduce-scatter add the ranks' values in an order of the library's choosing, so they are compared
element by element within the rounding error two summation orders can differ by: ``2 n u sum_i |x_i|``
(``u = 2^-24``; recursive summation of n terms errs by at most ``(n - 1) u / (1 - (n - 1) u)`` times that
sum each, one more ``u`` for the mean's division), scaled by ``1/n`` for the mean. With two ranks, float32
addition is commutative, so a correct ring gives the library's bits exactly and the table says so.
Reduce-scatter's mean is the library's SUM divided by ``n`` in float32 (what the puzzle's spec does), not
``ReduceOp.AVG`` (which gloo lacks and NCCL may compute as a pre-multiplied sum).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...ch10_multigpu.layout import at

UNIT_ROUNDOFF = 2.0 ** -24


@dataclass(frozen=True)
class Collective:
    slug: str
    name: str                  # "all-reduce", "reduce-scatter", "all-gather"
    call: str                  # the torch.distributed function
    input: str                 # the buffer (base name) holding a rank's input
    output: str                # the buffer (base name) holding a rank's result

    def bus_factor(self, n: int) -> float:
        if n < 2:
            return 0.0
        return 2 * (n - 1) / n if self.name == "all-reduce" else (n - 1) / n

    def elements(self, nbytes: int) -> int:
        """The bench(n) argument for S = ``nbytes`` (float32 everywhere in this chapter)."""
        return max(1, nbytes // 4)

    def size_bytes(self, buffers: dict[str, Any]) -> int:
        """nccl-tests' S for a case: the per-rank array the collective is about."""
        name = self.output if self.name == "all-gather" else self.input
        return int(buffers[at(name, 0)].nbytes)

    def local_input(self, buffers: dict[str, Any], rank: int) -> np.ndarray:
        """What rank ``rank`` hands the library's collective (a host array of the case)."""
        if self.name == "all-gather":
            return np.ascontiguousarray(buffers[at(self.output, rank)][rank])
        return np.ascontiguousarray(buffers[at(self.input, rank)])

    # -- on the ranks (torch tensors)
    def prepare(self, torch, inp, world: int):
        """(work tensors, reset, run, finish) for timing and checking the library's collective on ``inp``."""
        import torch.distributed as dist

        if self.name == "all-reduce":
            work = inp.clone()

            def reset():
                work.copy_(inp)

            def run():
                dist.all_reduce(work)

            def finish():
                return work
        elif self.name == "reduce-scatter":
            work = torch.empty(inp.numel() // world, dtype=inp.dtype, device=inp.device)

            def reset():
                pass

            def run():
                dist.reduce_scatter_tensor(work, inp)

            def finish():
                return work / world           # float32 division, as the spec's mean
        else:
            work = torch.empty(inp.numel() * world, dtype=inp.dtype, device=inp.device)

            def reset():
                pass

            def run():
                dist.all_gather_into_tensor(work, inp)

            def finish():
                return work.view(world, -1)
        return reset, run, finish

    # -- in the launcher (NumPy)
    def compare(self, ours: np.ndarray, theirs: np.ndarray, inputs: list[np.ndarray], rank: int) -> dict:
        """Rank ``rank``'s result beside the library's: bit-exact, or within the summation bound."""
        ours = np.asarray(ours, np.float32)
        theirs = np.asarray(theirs, np.float32).reshape(ours.shape)
        same = np.array_equal(ours.view(np.uint32), theirs.view(np.uint32))
        diff = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
        finite = np.isfinite(ours) & np.isfinite(theirs)
        out = {"bit_exact": bool(same), "max_abs_diff": float(diff[finite].max()) if finite.any() else 0.0,
               "elements": int(ours.size), "differing": int(np.count_nonzero(ours.view(np.uint32) !=
                                                                            theirs.view(np.uint32)))}
        if self.name == "all-gather":
            out["ok"] = bool(same)
            out["rule"] = "bit for bit (a copy)"
            return out
        n = len(inputs)
        abs_sum = self._abs_sum(inputs, rank, ours.size)
        scale = 1.0 / n if self.name == "reduce-scatter" else 1.0
        bound = 2 * n * UNIT_ROUNDOFF * abs_sum * scale
        ok = bool(np.all(finite) and np.all(diff <= bound))
        out.update(ok=ok or same, rule=f"|ours - theirs| <= 2 n u sum|x| (n = {n})",
                   worst_ratio=float(np.max(diff / np.maximum(bound, np.finfo(np.float64).tiny)))
                   if diff.size else 0.0)
        return out

    def _abs_sum(self, inputs: list[np.ndarray], rank: int, size: int) -> np.ndarray:
        if self.name == "all-reduce":
            return sum(np.abs(x.astype(np.float64)) for x in inputs)
        shard = size
        part = slice(rank * shard, (rank + 1) * shard)
        return sum(np.abs(x[part].astype(np.float64)) for x in inputs)

    def inputs(self, buffers: dict[str, Any], ranks: int) -> list[np.ndarray]:
        """Every rank's input array (what the summation bound is taken over)."""
        return [np.asarray(buffers[at(self.input, r)]) for r in range(ranks)]


COLLECTIVES = {
    "ring-all-reduce": Collective("ring-all-reduce", "all-reduce", "all_reduce", "x", "x"),
    "reduce-scatter": Collective("reduce-scatter", "reduce-scatter", "reduce_scatter_tensor", "grads", "out"),
    "all-gather": Collective("all-gather", "all-gather", "all_gather_into_tensor", "out", "out"),
}


def collective_for(slug: str) -> Collective | None:
    return COLLECTIVES.get(slug)


def bandwidths(nbytes: int, seconds: float | None, factor: float) -> tuple[float | None, float | None]:
    """(algbw, busbw) in bytes per second, as nccl-tests computes them."""
    if not seconds or seconds <= 0:
        return None, None
    alg = nbytes / seconds
    return alg, alg * factor
