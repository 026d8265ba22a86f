"""A launch too big to simulate whole, estimated from runs of its blocks: ``sampled_workload``.

The timing model (``gpusim.timing_model``) reads a launch's geometry and a few counts (``Workload``): sums
over blocks (sectors, requests, wavefronts, FLOPs, latency rounds, barriers, DRAM segments) and maxima over
blocks (the slowest block's rounds). A sample keeps the launch's real grid and block, runs only some of its
blocks (``launch(..., blocks=runs)``: the others do not run, touch no memory and count nothing) and scales
the sums to the whole grid; maxima stay the sample's maxima.

What a sample distorts, and how this one is drawn so that it does not:

* **First touch.** gpusim counts a DRAM segment, and a DRAM latency round, where a block touches memory no
  earlier block of the launch touched; later blocks find it in L2. The blocks of one row of a matmul share
  their rows of A, and every row of blocks reads all of B: a row of blocks sampled alone would pay DRAM for
  all of B again. So the sample is made of **runs of consecutive blocks** (a run is one of gpusim's chunks,
  or a whole number of grid rows: blocks that share data run together, as a wave does on the GPU), and the
  first run of the grid is a **warm-up**: it runs twice, alone (launch B) and in front of the other runs
  (launch A). A − B is what the other runs count *after* the first run touched its data, as those blocks
  do in the whole launch; B is the first run's own counts, exact. The whole grid is
  ``B + (A - B) × (blocks after the first run) / (blocks sampled after it)``. For a matmul that is all of
  B once plus, per row of blocks, its rows of A and C: the whole launch's DRAM bytes.
* **Edges.** The runs sit at the ends of equal strata of the grid after the first run, so the last run
  ends at the grid's last block (a partial last row of blocks is in the sample); runs of whole grid rows
  hold each row's last-column block.
* **Dependences between blocks.** Blocks that wait for each other (a grid sync) cannot run in part:
  ``launch`` refuses. Blocks that combine results through global atomics make the busiest address's count
  grow with the blocks, which a sample does not show: ``SamplingRefused``.
* **Several launches.** Each launch of a case is sampled on its own; the blocks that did not run leave
  their outputs as they were, so a later launch reads those (counts rarely depend on the values read).

The sample size comes from a budget of *steps* (``launch``'s deterministic measure of work, about a
nanosecond of simulation each): probe launches of one and two blocks say what a run costs, and the runs are as
many and as long as the budget pays for. The same budget, kernel and inputs give the same sample on any
machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .faults import LaunchError
from .launch import launch
from .workload import Workload

#: a sample needs at least the probe, the warm-up run twice and this many runs after it
MIN_RUNS = 4
#: a run of whole grid rows may cost this many times its share of the budget (see ``run_length``)
ROW_STRETCH = 3
#: counts that are maxima over blocks or addresses: the sample's stay (the others are sums, and scale)
MAX_KEYS = ("_max", "gpusim__atomic_max_per_address")
ATOMIC_KEYS = ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum")
DRAM_KEYS = ("dram__bytes_read.sum", "dram__bytes_write.sum")


class SamplingRefused(LaunchError):
    """The launch's blocks depend on each other in a way a sample of them cannot show."""


@dataclass
class Sampled:
    """What ``sampled_workload`` made of a launch: its ``Workload`` (for the whole grid) and how."""

    workload: Workload
    num_blocks: int
    blocks_run: int                    # distinct blocks simulated (the warm-up run counted once)
    runs: tuple[tuple[int, int], ...]  # (first block, count) of each run; () for a whole launch
    steps: int                         # steps of work simulated, all launches together
    faults: list = field(default_factory=list)
    report: Any = None                 # the whole launch's report (None for a sample)

    @property
    def sampled(self) -> bool:
        return self.blocks_run < self.num_blocks

    @property
    def fraction(self) -> float:
        return self.blocks_run / self.num_blocks if self.num_blocks else 1.0


def sampled_workload(kernel: Any, grid: Any, block: Any, args: tuple, shared_mem: int = 0, *,
                     budget_steps: float | None = None, max_steps: int | None = None) -> Sampled:
    """The launch's ``Workload``: from the whole launch where its predicted steps fit ``budget_steps`` (or no
    budget is given), else from a sample of its blocks (see the module docstring). Arrays in ``args`` are
    updated as a launch of the sampled blocks leaves them."""
    def run(blocks=None):
        return launch(kernel, grid, block, args, shared_mem, trace=False, max_steps=max_steps, blocks=blocks)

    def whole(steps_before: int = 0) -> Sampled:
        report = run()
        return Sampled(Workload.of(report), report.launch.num_blocks, report.launch.num_blocks, (),
                       steps_before + report.steps, list(report.faults), report)

    if budget_steps is None:
        return whole()
    saved = _snapshot(args)
    one = run([(0, 1)])              # one block, then two: what a run costs, fixed part and per block
    _restore(saved)
    nblocks, chunk = one.launch.num_blocks, one.extra["chunk_blocks"]
    two = run([(0, min(2, nblocks))]) if nblocks > 1 else one
    _restore(saved)
    spent = one.steps + (two.steps if two is not one else 0)
    per_block = max(two.steps - one.steps, 0)
    cost = RunCost(max(one.steps - per_block, 0), per_block)
    length = run_length(tuple(one.launch.grid), chunk, cost, budget_steps - spent)
    if length is None:
        return whole(spent)
    first = (0, length)
    alone = run([first])
    _restore(saved)
    _refuse_atomics(alone)
    spent += alone.steps
    per_run = max(alone.steps, 1)     # what a run costs, now measured on a whole run
    if nblocks / length * per_run <= budget_steps - spent:
        return whole(spent)
    rest = later_runs(nblocks, length, int((budget_steps - spent) // per_run) - 1)
    if rest is None:
        return whole(spent)
    together = run([first, *rest])
    try:
        _refuse_atomics(together)
    except SamplingRefused:
        _restore(saved)
        raise
    after = sum(c for _, c in rest)
    factor = (nblocks - length) / after
    work = combine(Workload.of(alone), Workload.of(together), factor, _footprint(together))
    return Sampled(work, nblocks, length + after, (first, *rest), spent + together.steps,
                   list(together.faults) or list(alone.faults))


def _refuse_atomics(report) -> None:
    if any(report.metrics.get(k) for k in ATOMIC_KEYS):
        raise SamplingRefused(f"kernel {report.launch.kernel!r} combines its blocks' results with global atomics: "
                              "the busiest address's count grows with the blocks, which a sample of them does not "
                              "show")


@dataclass(frozen=True)
class RunCost:
    """Steps a run of blocks costs: a fixed part (work charged per chunk of blocks, whatever its size) and a
    part per block."""

    fixed: float
    per_block: float

    def of(self, blocks: int) -> float:
        return self.fixed + self.per_block * blocks


def run_length(grid: tuple[int, int, int], chunk: int, cost: RunCost, budget_steps: float) -> int | None:
    """Blocks per run of a sample within ``budget_steps``, or None where the whole launch fits the budget or a
    sample would cost about as much as it.

    A run is ``chunk`` blocks (what gpusim runs at once: a run's blocks run together, touch memory first
    together, as in the whole launch) where the budget pays for the warm-up twice and ``MIN_RUNS`` runs;
    else as long as it pays for — a chunk after all where the fixed part is most of a shorter run's cost (it
    would save little) and a chunk costs at most ``ROW_STRETCH`` times a run's share. In a grid of several
    rows a run is whole rows — a row of a matmul's blocks shares its rows of A, and the first row reads all
    of B — even where a row costs up to ``ROW_STRETCH`` times the run's share of the budget."""
    nblocks = math.prod(grid)
    gx, rows = grid[0], grid[1] * grid[2] > 1
    chunks = -(-nblocks // chunk)
    runs = 2 + MIN_RUNS
    if chunks * cost.of(chunk) <= budget_steps or chunks < runs:
        return None
    if runs * cost.of(chunk) <= budget_steps:
        length = chunk
    else:
        length = max(1, min(chunk, int(max(budget_steps / runs - cost.fixed, 0) // max(cost.per_block, 1))))
        if cost.fixed >= cost.per_block * length and runs * cost.of(chunk) <= ROW_STRETCH * budget_steps:
            length = chunk
    if rows and gx <= length:
        length -= length % gx
    elif rows and runs * cost.of(gx) <= ROW_STRETCH * budget_steps:
        length = gx
    if nblocks < runs * length:
        return None
    return length


def later_runs(nblocks: int, length: int, count: int) -> list[tuple[int, int]] | None:
    """``count`` runs (at least ``MIN_RUNS``) of ``length`` blocks after the warm-up run ``(0, length)``, each
    at the end of one of equal strata of the rest of the grid (the last ends at the grid's last block), each
    starting at a multiple of ``length`` where it can (where the whole launch's chunks start); None where
    they would be nearly all of the grid."""
    slots = (nblocks - length) // length
    m = max(MIN_RUNS, min(count, slots))
    if m >= slots - 1:
        return None
    rest, end = [], length
    for j in range(1, m + 1):
        stop = length + (nblocks - length) * j // m      # the end of stratum j
        start = max(end, (stop - length) // length * length)
        if j == m:
            start = max(end, nblocks - length)
        size = min(length, nblocks - start)
        if size > 0:
            rest.append((start, size))
            end = start + size
    return rest


def combine(alone: Workload, together: Workload, factor: float, cap: tuple[int, int]) -> Workload:
    """The whole grid's counts from the warm-up run's (``alone``) and the sample's (``together``: the warm-up
    run and the runs after it): sums ``alone + (together - alone) × factor``, maxima ``together``'s, DRAM
    bytes at most the bytes of the launch's arrays (``cap``: read, written)."""
    metrics = {}
    for key, value in together.metrics.items():
        if key.endswith(MAX_KEYS):
            metrics[key] = value
            continue
        base = alone.metrics.get(key, 0) or 0
        metrics[key] = base + (value - base) * factor
    for key, most in zip(DRAM_KEYS, cap):
        if key in metrics:
            metrics[key] = min(metrics[key], most)
    flops = {}
    for dt, ops in together.flops.items():
        base = alone.flops.get(dt, {})
        flops[dt] = {op: round(base.get(op, 0) + (n - base.get(op, 0)) * factor) for op, n in ops.items()}
    return Workload(together.grid, together.block, together.shared_bytes_per_block, metrics, flops,
                    together.geometry)


def _footprint(report) -> tuple[int, int]:
    """Bytes of the launch's global arrays in whole 64-byte segments: the most DRAM bytes it can read, and write."""
    from .observe.dram import SEGMENT

    total = sum(math.ceil(a.nbytes / SEGMENT) * SEGMENT + SEGMENT for a in report.arrays
                if a.space in ("global", "const") and a.parent is None)
    return total, total


def _snapshot(args: tuple) -> list[tuple[np.ndarray, np.ndarray]]:
    out, seen = [], set()

    def walk(v):
        if isinstance(v, np.ndarray):
            if id(v) not in seen:
                seen.add(id(v))
                out.append((v, v.copy()))
        elif isinstance(v, tuple):
            for item in v:
                walk(item)
    for a in args:
        walk(a)
    return out


def _restore(saved: list[tuple[np.ndarray, np.ndarray]]) -> None:
    for arr, copy in saved:
        np.copyto(arr, copy)
