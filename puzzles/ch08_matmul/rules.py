"""Rules only the matmul chapter needs: float32 arithmetic, exact sectors per request, FLOPs per byte loaded,
shared-memory loads per multiply-add, the shared memory of a double buffer and its barriers per k-slice.

Each reads ``RunStats`` only (the counts gpusim makes as Nsight Compute would) and says, in one sentence,
what the kernel did instead. Ratios are judged on launches of at least ``MIN_FLOPS`` floating-point
operations: a 2 x 3 matrix has nothing to reuse, so its ratios say nothing about the kernel.
"""

from __future__ import annotations

from puzzles.model import Rule, RunStats

MIN_FLOPS = 1 << 20                 # ratios are judged on cases of at least a million FLOPs
FLOAT64 = "gpusim__flops_float64"
SHARED_LD = "smsp__sass_inst_executed_op_shared_ld.sum"
BARRIERS_SUM = "gpusim__barriers_sum"      # per block, its busiest warp's syncthreads, summed over blocks
BARRIERS_MAX = "gpusim__barriers_max"      # the same, the largest block
WARP = 32


def _sectors_to_bytes(sectors: int) -> int:
    return 32 * sectors


def float32_only() -> Rule:
    """No float64 arithmetic: in numba ``acc = 0.0`` is a float64, and every ``acc += x * y`` then is too."""

    def check(s: RunStats) -> str | None:
        n = int(s.metrics.get(FLOAT64, 0))
        if n:
            return (f"{n} FLOPs ran in float64: `acc = 0.0` makes a float64 accumulator in numba; start from "
                    f"`numba.float32(0.0)` so every multiply-add stays float32")
        return None

    return Rule("float32 arithmetic only (no float64 accumulator)", check)


def sectors_per_request(load: float, store: float | None = None) -> Rule:
    """Exactly ``load`` sectors per global load request (and ``store`` per store request), on average."""

    def check(s: RunStats) -> str | None:
        for kind, want, sectors, requests in (("loads", load, s.global_load_sectors, s.global_load_requests),
                                              ("stores", store, s.global_store_sectors, s.global_store_requests)):
            if want is not None and sectors != want * requests:
                return (f"global {kind} move {sectors} sectors in {requests} requests "
                        f"({sectors / max(requests, 1):.2f} per request, where {want:g} is the count for "
                        f"this puzzle's coalesced warp)")
        return None

    what = f"exactly {load:g} sectors per load request" + (f" and {store:g} per store request" if store else "")
    return Rule(what, check)


def load_intensity(flop_per_byte: float) -> Rule:
    """At least ``flop_per_byte`` FLOPs per byte of global loads (sectors x 32), on launches of MIN_FLOPS+."""

    def check(s: RunStats) -> str | None:
        loaded = _sectors_to_bytes(s.global_load_sectors)
        if s.flops < MIN_FLOPS or not loaded:
            return None
        got = s.flops / loaded
        if got < flop_per_byte:
            return (f"{s.flops} FLOPs for {loaded} bytes loaded is {got:.2f} FLOPs per byte; the tiles of this "
                    f"puzzle reach {flop_per_byte:g} when every loaded value is reused across the whole tile")
        return None

    return Rule(f"at least {flop_per_byte:g} FLOPs per byte loaded from global memory", check)


def shared_loads_per_fma(limit: float) -> Rule:
    """At most ``limit`` warp-level shared loads per warp-level multiply-add (FLOPs / 2 / 32), on MIN_FLOPS+."""

    def check(s: RunStats) -> str | None:
        if SHARED_LD not in s.metrics:
            return "the simulator reported no shared-memory instruction counts, so this cannot be judged"
        if s.flops < MIN_FLOPS:
            return None
        loads = s.metrics[SHARED_LD]
        fmas = s.flops / 2 / WARP
        if loads > limit * fmas:
            return (f"{loads:.0f} shared-memory load instructions for {fmas:.0f} warp multiply-adds "
                    f"({loads / fmas:.3f} each, the limit is {limit:g}): keep a value in a register for as "
                    f"long as it is used")
        return None

    return Rule(f"at most {limit:g} shared-memory loads per multiply-add", check)


def shared_memory_exactly(nbytes: int, what: str) -> Rule:
    def check(s: RunStats) -> str | None:
        if s.shared_bytes_per_block != nbytes:
            return (f"a block declares {s.shared_bytes_per_block} bytes of shared memory; {what} take exactly "
                    f"{nbytes}")
        return None

    return Rule(f"exactly {nbytes} bytes of shared memory per block ({what})", check)


def barriers_per_slice(flops_per_slice: int, extra: int = 1) -> Rule:
    """At most one ``syncthreads`` per k-slice a block multiplies, plus ``extra`` (the prologue's), on MIN_FLOPS+.

    A block's slices are its FLOPs over ``flops_per_slice`` (2 x tile rows x tile columns x slice depth: every
    thread multiplies its whole register tile, padding included, as the puzzle's kernels do); its barriers
    are gpusim's per-block count (``gpusim__barriers_max``; blocks = sum / max, as every block of these
    kernels runs the same k-loop).
    """

    def check(s: RunStats) -> str | None:
        if BARRIERS_MAX not in s.metrics:
            return "the simulator reported no barrier counts, so this cannot be judged"
        per_block, total = int(s.metrics[BARRIERS_MAX]), int(s.metrics.get(BARRIERS_SUM, 0))
        if s.flops < MIN_FLOPS or not per_block:
            return None
        blocks = max(total // per_block, 1)
        slices = s.flops // (blocks * flops_per_slice)
        if per_block > slices + extra:
            return (f"a block waits at {per_block} barriers for {slices} slices of k; one barrier per slice "
                    f"({slices + extra} with the one after the first load) is enough when the next slice goes "
                    f"into the other buffer")
        return None

    return Rule(f"at most one barrier per k-slice (+{extra})", check)
